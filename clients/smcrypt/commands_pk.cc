// pkencrypt, pkdecrypt (PublicKeyEncrypt / PublicKeyDecrypt) and seal, open
// (HybridEncrypt / HybridDecrypt and their streaming forms).
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "clients/smcrypt/bidi_stream.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/session.h"

namespace smcrypt::cli {
namespace {

namespace v1 = ::smcrypt::v1;

constexpr size_t kStreamChunk = 64 * 1024;

struct PkFormats {
  Encoding encoding = Encoding::kHex;
  v1::Sm2CiphertextFormat sm2 = v1::SM2_CIPHERTEXT_FORMAT_UNSPECIFIED;
};

absl::StatusOr<v1::Sm2CiphertextFormat> ParseSm2Format(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (lower == "c1c3c2") return v1::SM2_CIPHERTEXT_FORMAT_C1C3C2;
  if (lower == "c1c2c3") return v1::SM2_CIPHERTEXT_FORMAT_C1C2C3;
  if (lower == "der") return v1::SM2_CIPHERTEXT_FORMAT_DER;
  return UsageError(absl::StrCat("SM2 ciphertext format ", name,
                                 ": expected c1c3c2, c1c2c3 or der"));
}

// FormatsFromFlags: --format takes an encoding (hex, base64, raw) and/or an SM2
// ciphertext layout (c1c3c2, c1c2c3, der), so `--format der --format raw` is allowed;
// --sm2-format names the layout explicitly.
absl::StatusOr<PkFormats> FormatsFromFlags(const Args& args, v1::Algorithm alg) {
  PkFormats f;
  bool layout_given = false;
  for (const std::string& value : args.GetAll("format")) {
    if (absl::StatusOr<Encoding> e = ParseEncoding(value); e.ok()) {
      f.encoding = *e;
      continue;
    }
    absl::StatusOr<v1::Sm2CiphertextFormat> l = ParseSm2Format(value);
    if (!l.ok()) {
      return UsageError(absl::StrCat("--format ", value,
                                     ": expected hex, base64, raw, c1c3c2, c1c2c3 or der"));
    }
    f.sm2 = *l;
    layout_given = true;
  }
  if (args.Has("outform") || args.Has("inform")) {
    if (args.Has("format")) return UsageError("give only one of --format, --outform and --inform");
    absl::StatusOr<Encoding> e = FormatFlag(args, Encoding::kHex);
    if (!e.ok()) return e.status();
    f.encoding = *e;
  }
  if (std::optional<std::string> layout = args.Get("sm2-format")) {
    absl::StatusOr<v1::Sm2CiphertextFormat> l = ParseSm2Format(*layout);
    if (!l.ok()) return l.status();
    f.sm2 = *l;
    layout_given = true;
  }
  if (layout_given && alg != v1::SM2) {
    return UsageError(absl::StrCat("the ciphertext layout (c1c3c2, c1c2c3, der) is for SM2, not ",
                                   AlgorithmName(alg)));
  }
  return f;
}

absl::StatusOr<int> RunPkEncrypt(const Args& args) {
  absl::StatusOr<v1::Algorithm> alg =
      AlgorithmFlag(args, AlgorithmFamily::kPublicKeyEncrypt, v1::SM2);
  if (!alg.ok()) return alg.status();
  absl::StatusOr<PkFormats> f = FormatsFromFlags(args, *alg);
  if (!f.ok()) return f.status();
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> data = ReadInput(args);
  if (!data.ok()) return data.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  v1::PublicKeyEncryptRequest req;
  req.set_algorithm(*alg);
  *req.mutable_key() = *std::move(key);
  req.set_plaintext(*std::move(data));
  req.set_sm2_format(f->sm2);
  v1::PublicKeyEncryptResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().PublicKeyEncrypt(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("pkencrypt", resp.key_version());
  if (absl::Status w = WriteOutput(args, EncodeAll(f->encoding, resp.ciphertext())); !w.ok()) {
    return w;
  }
  return kExitOk;
}

absl::StatusOr<int> RunPkDecrypt(const Args& args) {
  absl::StatusOr<v1::Algorithm> alg =
      AlgorithmFlag(args, AlgorithmFamily::kPublicKeyEncrypt, v1::SM2);
  if (!alg.ok()) return alg.status();
  absl::StatusOr<PkFormats> f = FormatsFromFlags(args, *alg);
  if (!f.ok()) return f.status();
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/false);
  if (!paths.ok()) return paths.status();
  absl::StatusOr<std::string> ct = ReadEncodedFile(paths->front(), f->encoding, "ciphertext");
  if (!ct.ok()) return ct.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  v1::PublicKeyDecryptRequest req;
  req.set_algorithm(*alg);
  *req.mutable_key() = *std::move(key);
  req.set_ciphertext(*std::move(ct));
  req.set_sm2_format(f->sm2);
  v1::PublicKeyDecryptResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().PublicKeyDecrypt(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("pkdecrypt", resp.key_version());
  if (absl::Status w = WriteOutput(args, resp.plaintext()); !w.ok()) return w;
  return kExitOk;
}

struct HybridFlags {
  v1::HybridStreamParams params;  // algorithm, key, info
  Encoding format;
  bool stream;
};

absl::StatusOr<HybridFlags> HybridFromFlags(const Args& args) {
  HybridFlags h;
  absl::StatusOr<v1::Algorithm> alg =
      AlgorithmFlag(args, AlgorithmFamily::kHybrid, v1::HPKE_SM2_SM3_SM4GCM);
  if (!alg.ok()) return alg.status();
  h.params.set_algorithm(*alg);
  absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kHex);
  if (!format.ok()) return format.status();
  h.format = *format;
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  *h.params.mutable_key() = *std::move(key);
  absl::StatusOr<std::optional<std::string>> info = BytesFlag(args, "info", "info-hex");
  if (!info.ok()) return info.status();
  if (info->has_value()) h.params.set_info(**info);
  h.stream = args.Has("stream");
  return h;
}

absl::StatusOr<int> RunSeal(const Args& args) {
  absl::StatusOr<HybridFlags> h = HybridFromFlags(args);
  if (!h.ok()) return h.status();
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/false);
  if (!paths.ok()) return paths.status();
  absl::StatusOr<Input> in = Input::Open(paths->front());
  if (!in.ok()) return in.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  Output out(args.Get("out").value_or(""));

  if (h->stream) {
    grpc::ClientContext ctx;
    session->Prepare(&ctx, /*streaming=*/true);
    auto stream = session->stub().HybridEncryptStream(&ctx);
    Encoder encoder(h->format);
    bool first = true;
    absl::Status s =
        PumpBidiStream<v1::HybridEncryptStreamRequest, v1::HybridEncryptStreamResponse>(
            ctx, *stream,
            [&]() -> absl::StatusOr<std::optional<v1::HybridEncryptStreamRequest>> {
              absl::StatusOr<std::string> chunk = in->Read(kStreamChunk);
              if (!chunk.ok()) return chunk.status();
              if (chunk->empty() && !first) return std::nullopt;
              v1::HybridEncryptStreamRequest req;
              if (first) *req.mutable_params() = h->params;
              first = false;
              req.set_plaintext(*std::move(chunk));
              return req;
            },
            [&](const v1::HybridEncryptStreamResponse& resp) {
              NoteKeyVersion("seal", resp.key_version());  // set in the first response only
              return out.Write(encoder.Update(resp.ciphertext()));
            });
    if (s.ok()) s = out.Write(encoder.Finish());
    if (s.ok()) s = out.Close();
    if (!s.ok()) {
      out.Discard();
      return s;
    }
    return kExitOk;
  }
  absl::StatusOr<std::string> data = in->ReadAll(kWholeInputLimit);
  if (!data.ok()) return data.status();
  v1::HybridEncryptRequest req;
  req.set_algorithm(h->params.algorithm());
  *req.mutable_key() = h->params.key();
  req.set_info(h->params.info());
  req.set_plaintext(*std::move(data));
  v1::HybridEncryptResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().HybridEncrypt(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("seal", resp.key_version());
  if (absl::Status w = out.Write(EncodeAll(h->format, resp.ciphertext())); !w.ok()) return w;
  if (absl::Status w = out.Close(); !w.ok()) return w;
  return kExitOk;
}

absl::StatusOr<int> RunOpen(const Args& args) {
  absl::StatusOr<HybridFlags> h = HybridFromFlags(args);
  if (!h.ok()) return h.status();
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/false);
  if (!paths.ok()) return paths.status();
  absl::StatusOr<Input> in = Input::Open(paths->front());
  if (!in.ok()) return in.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  Output out(args.Get("out").value_or(""));

  if (h->stream) {
    grpc::ClientContext ctx;
    session->Prepare(&ctx, /*streaming=*/true);
    auto stream = session->stub().HybridDecryptStream(&ctx);
    Decoder decoder(h->format);
    bool sent_params = false;
    bool eof = false;
    absl::Status s =
        PumpBidiStream<v1::HybridDecryptStreamRequest, v1::HybridDecryptStreamResponse>(
            ctx, *stream,
            [&]() -> absl::StatusOr<std::optional<v1::HybridDecryptStreamRequest>> {
              v1::HybridDecryptStreamRequest req;
              if (!sent_params) {
                sent_params = true;
                *req.mutable_params() = h->params;
                return req;
              }
              while (!eof && req.ciphertext().empty()) {
                absl::StatusOr<std::string> chunk = in->Read(kStreamChunk);
                if (!chunk.ok()) return chunk.status();
                absl::Status d;
                if (chunk->empty()) {
                  eof = true;
                  d = decoder.Finish(req.mutable_ciphertext());
                } else {
                  d = decoder.Update(*chunk, req.mutable_ciphertext());
                }
                if (!d.ok()) {
                  return UsageError(absl::StrCat(in->name(), ": ", d.message(), " (see --format)"));
                }
              }
              if (req.ciphertext().empty()) return std::nullopt;
              return req;
            },
            [&](const v1::HybridDecryptStreamResponse& resp) {
              NoteKeyVersion("open", resp.key_version());  // set in the first response only
              return out.Write(resp.plaintext());
            });
    if (s.ok()) s = out.Close();
    if (!s.ok()) {
      out.Discard();
      return s;
    }
    return kExitOk;
  }
  absl::StatusOr<std::string> text = in->ReadAll(kWholeInputLimit);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::string> ct = DecodeAll(h->format, *text);
  if (!ct.ok()) {
    return UsageError(absl::StrCat(in->name(), ": ", ct.status().message(), " (see --format)"));
  }
  v1::HybridDecryptRequest req;
  req.set_algorithm(h->params.algorithm());
  *req.mutable_key() = h->params.key();
  req.set_info(h->params.info());
  req.set_ciphertext(*std::move(ct));
  v1::HybridDecryptResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().HybridDecrypt(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("open", resp.key_version());
  if (absl::Status w = out.Write(resp.plaintext()); !w.ok()) return w;
  if (absl::Status w = out.Close(); !w.ok()) return w;
  return kExitOk;
}

const std::vector<FlagSpec> kPkFlags = {
    {"alg", "ALG", "SM2 (default), RSA-2048-OAEP or RSA-3072-OAEP"},
    {"sm2-format", "LAYOUT", "SM2 ciphertext layout: c1c3c2 (default, GB/T 32918.4-2016), "
                             "c1c2c3 (legacy) or der (GM/T 0009 SM2Cipher); --format accepts "
                             "these names too"},
};

const std::vector<FlagSpec> kHybridFlags = {
    {"alg", "ALG", "HPKE-SM2-SM3-SM4GCM (default) or HPKE-P256-SHA256-AES128GCM"},
    {"info", "TEXT", "HPKE info (context binding), must match on open"},
    {"info-hex", "HEX", "HPKE info in hex"},
    {"stream", "", "HybridEncryptStream/HybridDecryptStream: data of any size"},
};

}  // namespace

std::vector<Command> PkCommands() {
  return {
      {"pkencrypt", "public-key encryption (SM2, RSA-OAEP)",
       "smcrypt pkencrypt [--alg ALG] KEY [--sm2-format c1c3c2|c1c2c3|der] [FILE]",
       R"(Encrypts FILE (or stdin) to a public key (a keyring private key works too) and
prints the ciphertext, encoded per --format (default hex). SM2 ciphertexts are
97 + |M| bytes (C1C3C2 / C1C2C3) or DER; RSA-OAEP takes up to 190 (2048) or 318 (3072)
bytes. --alg defaults to SM2.

Examples:
  smcrypt pkencrypt --key sm2pub.pem --out secret.enc secret.txt
  smcrypt pkencrypt --key sm2pub.pem --format der --format base64 secret.txt
  smcrypt pkencrypt --alg rsa-2048-oaep --key-id rsa-recipient secret.txt)",
       kPkFlags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunPkEncrypt},
      {"pkdecrypt", "public-key decryption (SM2, RSA-OAEP)",
       "smcrypt pkdecrypt [--alg ALG] KEY [--sm2-format c1c3c2|c1c2c3|der] [FILE]",
       R"(Decrypts a pkencrypt ciphertext (decoded per --format, default hex) with the
private key and writes the plaintext as raw bytes. Use the same --sm2-format as for
encryption.

Examples:
  smcrypt pkdecrypt --key sm2.pem secret.enc
  smcrypt pkdecrypt --key sm2.pem --format der --format base64 secret.b64)",
       kPkFlags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunPkDecrypt},
      {"seal", "hybrid encryption (HPKE, RFC 9180 base mode)",
       "smcrypt seal [--alg ALG] KEY [--info TEXT] [--stream] [FILE]",
       R"(Encrypts FILE (or stdin) to the recipient's public key with HPKE and prints the
ciphertext (version || KEM, KDF, AEAD ids || enc || ciphertext), encoded per --format
(default hex). A server built without hybrid encryption answers UNIMPLEMENTED (exit 3).

Examples:
  smcrypt keygen --alg hpke-sm2-sm3-sm4gcm --out hpke.pem --pubout hpkepub.pem
  smcrypt seal --key hpkepub.pem --info app-v1 --out msg.sealed msg.txt)",
       kHybridFlags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunSeal},
      {"open", "hybrid decryption (inverse of seal)",
       "smcrypt open [--alg ALG] KEY [--info TEXT] [--stream] [FILE]",
       R"(Decrypts a seal ciphertext with the recipient's private key and writes the
plaintext as raw bytes. --alg and --info must match those used to seal.

Examples:
  smcrypt open --key hpke.pem --info app-v1 msg.sealed)",
       kHybridFlags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunOpen},
  };
}

}  // namespace smcrypt::cli
