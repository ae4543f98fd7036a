// rewrap and datakey: Rewrap and GenerateDataKey / GenerateDataKeyWithoutPlaintext.
//
// rewrap reads and writes the files of encrypt (nonce || ciphertext || tag; the output
// always carries its fresh nonce first), pkencrypt (the ciphertext) and seal (the HPKE
// one-shot wire format), each encoded per --format. datakey writes the wrapped key in the
// format of the command that would have made it (encrypt for SM4-GCM / AES-*-GCM,
// pkencrypt for SM2 / RSA-*-OAEP, seal for HPKE-*), so decrypt, pkdecrypt or open
// unwraps it; the plaintext key goes to --key-out (mode 0600) as keygen writes keys.
#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/session.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::cli {
namespace {

// WithAlgHint: a WRONG_KEY_FAMILY answer to a command run without --alg (which defaults to
// SM4-GCM) says to pass --alg.
absl::Status WithAlgHint(const Args& args, absl::Status s) {
  if (args.Has("alg") || ErrorReason(s) != "WRONG_KEY_FAMILY") return s;
  absl::Status hinted(s.code(), absl::StrCat(s.message(),
                                             " (--alg defaults to SM4-GCM: pass --alg for this "
                                             "key's family, e.g. AES-256-GCM, SM2 or "
                                             "HPKE-SM2-SM3-SM4GCM)"));
  s.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    hinted.SetPayload(url, payload);
  });
  return hinted;
}

namespace v1 = ::smcrypt::v1;

bool Rewrappable(v1::Algorithm alg) {
  return InFamily(alg, AlgorithmFamily::kSymmetric) ||
         InFamily(alg, AlgorithmFamily::kPublicKeyEncrypt) ||
         InFamily(alg, AlgorithmFamily::kHybrid);
}

absl::StatusOr<v1::Sm2CiphertextFormat> Sm2FormatFlag(const Args& args, v1::Algorithm alg) {
  std::optional<std::string> name = args.Get("sm2-format");
  if (!name.has_value()) return v1::SM2_CIPHERTEXT_FORMAT_UNSPECIFIED;
  if (alg != v1::SM2) return UsageError("--sm2-format is for SM2 only");
  const std::string lower = absl::AsciiStrToLower(*name);
  if (lower == "c1c3c2") return v1::SM2_CIPHERTEXT_FORMAT_C1C3C2;
  if (lower == "c1c2c3") return v1::SM2_CIPHERTEXT_FORMAT_C1C2C3;
  if (lower == "der") return v1::SM2_CIPHERTEXT_FORMAT_DER;
  return UsageError(absl::StrCat("--sm2-format ", *name, ": expected c1c3c2, c1c2c3 or der"));
}

// CheckFlagsFor refuses the flags `alg` does not take, so none is silently ignored.
absl::Status CheckFlagsFor(const Args& args, v1::Algorithm alg) {
  const std::string name = AlgorithmName(alg);
  const bool symmetric = InFamily(alg, AlgorithmFamily::kSymmetric);
  for (const char* flag : {"aad", "aad-hex", "tag-length"}) {
    if (args.Has(flag) && !IsAead(alg)) {
      return UsageError(absl::StrCat("--", flag, " applies to GCM and CCM, not ", name));
    }
  }
  if (args.Has("padding") && !UsesPadding(alg)) {
    return UsageError(absl::StrCat("--padding applies to ECB and CBC, not ", name));
  }
  for (const char* flag : {"nonce", "nonce-length"}) {
    if (args.Has(flag) && !symmetric) {
      return UsageError(absl::StrCat("--", flag, " applies to SM4 and AES, not ", name));
    }
  }
  for (const char* flag : {"info", "info-hex"}) {
    if (args.Has(flag) && !InFamily(alg, AlgorithmFamily::kHybrid)) {
      return UsageError(absl::StrCat("--", flag, " applies to HPKE, not ", name));
    }
  }
  return absl::OkStatus();
}

// KeyringKeyFlag: --key-id (and --key-version); the key commands here take no inline key.
absl::StatusOr<v1::KeyRef> KeyringKeyFlag(const Args& args, v1::Algorithm alg,
                                          absl::string_view command) {
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, alg);
  if (!key.ok()) return key.status();
  if (key->ref_case() != v1::KeyRef::kKeyId) {
    return UsageError(absl::StrCat(command, " takes --key-id (a keyring key)"));
  }
  return key;
}

absl::StatusOr<std::optional<std::string>> OptionalBytes(const Args& args, const char* text,
                                                         const char* hex) {
  return BytesFlag(args, text, hex);
}

// RewrapRequestFromFlags builds the request: flags, then the input file split as the
// command that wrote it lays it out.
absl::StatusOr<v1::RewrapRequest> RewrapRequestFromFlags(const Args& args, Encoding* format) {
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kAny, v1::SM4_GCM);
  if (!alg.ok()) return alg.status();
  if (!Rewrappable(*alg)) {
    return UsageError(absl::StrCat("rewrap takes an SM4, AES, SM2, RSA-*-OAEP or HPKE "
                                   "algorithm, not ", AlgorithmName(*alg)));
  }
  if (absl::Status s = CheckFlagsFor(args, *alg); !s.ok()) return s;
  v1::RewrapRequest req;
  req.set_algorithm(*alg);
  absl::StatusOr<v1::KeyRef> key = KeyringKeyFlag(args, *alg, "rewrap");
  if (!key.ok()) return key.status();
  *req.mutable_key() = *std::move(key);
  absl::StatusOr<Encoding> enc = FormatFlag(args, Encoding::kHex);
  if (!enc.ok()) return enc.status();
  *format = *enc;
  absl::StatusOr<v1::Sm2CiphertextFormat> sm2 = Sm2FormatFlag(args, *alg);
  if (!sm2.ok()) return sm2.status();
  req.set_sm2_format(*sm2);
  absl::StatusOr<std::optional<std::string>> aad = OptionalBytes(args, "aad", "aad-hex");
  if (!aad.ok()) return aad.status();
  if (aad->has_value()) req.set_aad(**aad);
  absl::StatusOr<std::optional<std::string>> info = OptionalBytes(args, "info", "info-hex");
  if (!info.ok()) return info.status();
  if (info->has_value()) req.set_info(**info);
  if (std::optional<std::string> pad = args.Get("padding")) {
    const std::string lower = absl::AsciiStrToLower(*pad);
    if (lower != "pkcs7" && lower != "none") {
      return UsageError(absl::StrCat("--padding ", *pad, ": expected pkcs7 or none"));
    }
    req.set_padding(lower == "none" ? v1::PADDING_NONE : v1::PADDING_PKCS7);
  }
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/false);
  if (!paths.ok()) return paths.status();
  absl::StatusOr<std::string> body = ReadEncodedFile(paths->front(), *format, "ciphertext");
  if (!body.ok()) return body.status();
  if (!InFamily(*alg, AlgorithmFamily::kSymmetric)) {
    req.set_ciphertext(*std::move(body));
    return req;
  }
  // nonce || ciphertext || tag, as encrypt writes it (no nonce when --nonce is given).
  if (std::optional<std::string> hex = args.Get("nonce")) {
    absl::StatusOr<std::string> nonce = DecodeHexFlag("nonce", *hex);
    if (!nonce.ok()) return nonce.status();
    req.set_nonce(*std::move(nonce));
  } else {
    absl::StatusOr<uint64_t> n = UintFlag(args, "nonce-length", DefaultNonceSize(*alg), 0, 1024);
    if (!n.ok()) return n.status();
    if (body->size() < *n) {
      return UsageError(absl::StrCat("input too short: ", body->size(), " bytes, expected a ",
                                     *n, "-byte nonce first"));
    }
    req.set_nonce(body->substr(0, *n));
    body->erase(0, *n);
  }
  absl::StatusOr<uint64_t> tag_len = UintFlag(args, "tag-length", IsAead(*alg) ? 16 : 0, 4, 16);
  if (!tag_len.ok()) return tag_len.status();
  if (body->size() < *tag_len) {
    return UsageError(absl::StrCat("input too short: ", body->size(),
                                   " bytes after the nonce, expected at least the ", *tag_len,
                                   "-byte tag"));
  }
  req.set_tag(body->substr(body->size() - *tag_len));
  body->resize(body->size() - *tag_len);
  req.set_ciphertext(*std::move(body));
  return req;
}

absl::StatusOr<int> RunRewrap(const Args& args) {
  Encoding format = Encoding::kHex;
  absl::StatusOr<v1::RewrapRequest> req = RewrapRequestFromFlags(args, &format);
  if (!req.ok()) return req.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  v1::RewrapResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().Rewrap(&ctx, *req, &resp);
  if (!s.ok()) return WithAlgHint(args, RpcStatus(s));
  std::fprintf(stderr, "smcrypt rewrap: key version %u -> %u\n", resp.source_key_version(),
               resp.key_version());
  const std::string bytes = absl::StrCat(resp.nonce(), resp.ciphertext(), resp.tag());
  if (absl::Status w = WriteOutput(args, EncodeAll(format, bytes)); !w.ok()) return w;
  return kExitOk;
}

// ---- datakey -------------------------------------------------------------------------

absl::StatusOr<v1::DataKeySpec> SpecFlag(const Args& args) {
  const std::string name = absl::AsciiStrToLower(args.Get("spec").value_or("sm4"));
  if (name == "sm4") return v1::DATA_KEY_SPEC_SM4_128;
  if (name == "aes128") return v1::DATA_KEY_SPEC_AES_128;
  if (name == "aes256") return v1::DATA_KEY_SPEC_AES_256;
  return UsageError(absl::StrCat("--spec ", name, ": expected sm4, aes128 or aes256"));
}

absl::StatusOr<v1::GenerateDataKeyRequest> DataKeyRequestFromFlags(const Args& args) {
  v1::GenerateDataKeyRequest req;
  absl::StatusOr<v1::DataKeySpec> spec = SpecFlag(args);
  if (!spec.ok()) return spec.status();
  req.set_key_spec(*spec);
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kAny, v1::SM4_GCM);
  if (!alg.ok()) return alg.status();
  const bool gcm = *alg == v1::SM4_GCM || *alg == v1::AES_128_GCM || *alg == v1::AES_256_GCM;
  if (!gcm && !InFamily(*alg, AlgorithmFamily::kPublicKeyEncrypt) &&
      !InFamily(*alg, AlgorithmFamily::kHybrid)) {
    return UsageError(absl::StrCat("datakey wraps with SM4-GCM, AES-128-GCM, AES-256-GCM, SM2, "
                                   "RSA-*-OAEP or HPKE-*, not ", AlgorithmName(*alg)));
  }
  if (absl::Status s = CheckFlagsFor(args, *alg); !s.ok()) return s;
  req.set_algorithm(*alg);
  absl::StatusOr<v1::KeyRef> key =
      gcm ? KeyringKeyFlag(args, *alg, "datakey with a GCM wrapping") : KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  *req.mutable_key() = *std::move(key);
  absl::StatusOr<v1::Sm2CiphertextFormat> sm2 = Sm2FormatFlag(args, *alg);
  if (!sm2.ok()) return sm2.status();
  req.set_sm2_format(*sm2);
  absl::StatusOr<std::optional<std::string>> aad = OptionalBytes(args, "aad", "aad-hex");
  if (!aad.ok()) return aad.status();
  if (aad->has_value()) req.set_aad(**aad);
  absl::StatusOr<std::optional<std::string>> info = OptionalBytes(args, "info", "info-hex");
  if (!info.ok()) return info.status();
  if (info->has_value()) req.set_info(**info);
  return req;
}

// WriteKeyFile writes the plaintext data key to `path` (mode 0600): PEM as keygen writes
// keys ("SM4 KEY" / "AES KEY"), or the raw bytes with --key-format raw.
absl::Status WriteKeyFile(const Args& args, const std::string& path, v1::DataKeySpec spec,
                          const std::string& key) {
  const std::string form = absl::AsciiStrToLower(args.Get("key-format").value_or("pem"));
  if (form != "pem" && form != "raw") {
    return UsageError(absl::StrCat("--key-format ", form, ": expected pem or raw"));
  }
  std::string text =
      form == "raw" ? key : ToPem(spec == v1::DATA_KEY_SPEC_SM4_128 ? "SM4 KEY" : "AES KEY", key);
  Output out(path, /*private_file=*/true);
  absl::Status s = out.Write(text);
  if (s.ok()) s = out.Close();
  SecureZero(text.data(), text.size());
  if (!s.ok()) out.Discard();
  return s;
}

absl::StatusOr<int> RunDataKey(const Args& args) {
  const bool no_plaintext = args.Has("no-plaintext");
  const std::optional<std::string> key_out = args.Get("key-out");
  if (no_plaintext == key_out.has_value()) {
    return UsageError("give --key-out FILE (the plaintext data key) or --no-plaintext");
  }
  if (no_plaintext && args.Has("key-format")) return UsageError("--key-format goes with --key-out");
  if (key_out.has_value() && (key_out->empty() || *key_out == "-")) {
    return UsageError("--key-out takes a file: the data key is never written to stdout");
  }
  absl::StatusOr<v1::GenerateDataKeyRequest> req = DataKeyRequestFromFlags(args);
  if (!req.ok()) return req.status();
  absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kHex);
  if (!format.ok()) return format.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  v1::GenerateDataKeyResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s;
  if (no_plaintext) {
    // The same fields and field numbers, without plaintext_key.
    v1::GenerateDataKeyWithoutPlaintextRequest wreq;
    wreq.ParseFromString(req->SerializeAsString());
    v1::GenerateDataKeyWithoutPlaintextResponse wresp;
    s = session->stub().GenerateDataKeyWithoutPlaintext(&ctx, wreq, &wresp);
    resp.ParseFromString(wresp.SerializeAsString());
  } else {
    s = session->stub().GenerateDataKey(&ctx, *req, &resp);
  }
  if (!s.ok()) return WithAlgHint(args, RpcStatus(s));
  NoteKeyVersion("datakey", resp.key_version());
  std::string* key = resp.mutable_plaintext_key();
  absl::Status w;
  if (key_out.has_value()) w = WriteKeyFile(args, *key_out, req->key_spec(), *key);
  SecureZero(key->data(), key->size());
  if (!w.ok()) return w;
  const std::string wrapped = absl::StrCat(resp.nonce(), resp.ciphertext(), resp.tag());
  if (absl::Status o = WriteOutput(args, EncodeAll(*format, wrapped)); !o.ok()) return o;
  return kExitOk;
}

const std::vector<FlagSpec> kRewrapFlags = {
    {"alg", "ALG", "the input's algorithm: SM4-GCM (default), any SM4-* or AES-*, SM2, "
                   "RSA-*-OAEP or HPKE-*"},
    {"aad", "TEXT", "associated data (GCM, CCM), bound to the new ciphertext too"},
    {"aad-hex", "HEX", "associated data in hex"},
    {"tag-length", "N", "tag bytes of the input (GCM, CCM; default 16); the output's too"},
    {"padding", "PAD", "pkcs7 (default) or none (ECB, CBC)"},
    {"nonce", "HEX", "the input's nonce when encrypt was given --nonce (not in the file)"},
    {"nonce-length", "N", "bytes of nonce at the start of the input (default 12 GCM/CCM, "
                          "16 CBC/CTR, 0 ECB)"},
    {"sm2-format", "LAYOUT", "SM2 ciphertext layout: c1c3c2 (default), c1c2c3 or der; the "
                             "output keeps it"},
    {"info", "TEXT", "HPKE info, bound to the new ciphertext too"},
    {"info-hex", "HEX", "HPKE info in hex"},
};

const std::vector<FlagSpec> kDataKeyFlags = {
    {"spec", "SPEC", "the data key: sm4 (default, 16 bytes), aes128 (16) or aes256 (32)"},
    {"alg", "ALG", "the wrapping: SM4-GCM (default), AES-128-GCM, AES-256-GCM (keyring "
                   "key), SM2, RSA-2048-OAEP, RSA-3072-OAEP, HPKE-* (public key)"},
    {"aad", "TEXT", "encryption context (GCM): needed again to unwrap with decrypt"},
    {"aad-hex", "HEX", "encryption context in hex"},
    {"sm2-format", "LAYOUT", "SM2 ciphertext layout: c1c3c2 (default), c1c2c3 or der"},
    {"info", "TEXT", "HPKE info, needed again to unwrap with open"},
    {"info-hex", "HEX", "HPKE info in hex"},
    {"key-out", "FILE", "the plaintext data key, mode 0600"},
    {"key-format", "FORM", "pem (default: SM4 KEY / AES KEY, as keygen writes) or raw"},
    {"no-plaintext", "", "GenerateDataKeyWithoutPlaintext: the wrapped key only"},
};

}  // namespace

std::vector<Command> EnvelopeCommands() {
  return {
      {"rewrap", "re-encrypt a ciphertext under the primary version of its keyring key",
       "smcrypt rewrap [--alg ALG] --key-id ID [--key-version N] [--aad TEXT] [FILE]",
       R"(Reads a file written by encrypt (nonce || ciphertext || tag), pkencrypt or seal
(decoded per --format, default hex), has the server open it with the keyring key (the
version named by --key-version, else the one decrypt would use) and seal the plaintext
under the key's primary version, and writes the result in the same layout and encoding
(for encrypt's layout always with its fresh nonce first). The plaintext never leaves the
server. Prints the versions to stderr ("key version 1 -> 2"). A ciphertext that does
not authenticate is "decryption failed" (exit 1).

Examples:
  smcrypt rewrap --key-id data --key-version 1 --aad hdr --out msg.v2.enc msg.enc
  smcrypt rewrap --alg SM2 --key-id sm2 --sm2-format der --format raw --out k2.bin k.bin)",
       kRewrapFlags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunRewrap},
      {"datakey", "a fresh data key, in plaintext and wrapped (envelope encryption)",
       "smcrypt datakey [--spec SPEC] [--alg ALG] KEY (--key-out FILE | --no-plaintext) "
       "[--out FILE]",
       R"(Has the server draw a data key (--spec) and wrap it (--alg, KEY): the wrapped key
goes to --out (default stdout) in the layout of encrypt (nonce || ciphertext || tag),
pkencrypt or seal, encoded per --format (default hex), so decrypt, pkdecrypt or open
(with the same --aad or --info) unwraps it; the plaintext key goes to --key-out, mode
0600. With --no-plaintext only the wrapped key is returned.

Examples:
  smcrypt datakey --spec aes256 --alg AES-256-GCM --key-id kek --aad tenant=7 \
      --key-out dk.pem --format raw --out dk.wrapped
  smcrypt decrypt --alg AES-256-GCM --key-id kek --aad tenant=7 --format raw dk.wrapped)",
       kDataKeyFlags, kConnectionFlags | kKeyFlags | kOutputFlags, &RunDataKey},
  };
}

}  // namespace smcrypt::cli
