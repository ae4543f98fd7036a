// keygen, pubkey, random and info: GenerateKeyPair, GetPublicKey, GenerateRandom and
// GetServerInfo.
#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/key_files.h"
#include "clients/smcrypt/session.h"
#include "google/protobuf/util/json_util.h"

namespace smcrypt::cli {
namespace {

namespace v1 = ::smcrypt::v1;

// GenerateRandom serves at most 1 MiB per call; longer requests take several calls.
constexpr uint64_t kRandomPerCall = 1 << 20;
constexpr uint64_t kRandomMax = uint64_t{1} << 32;

absl::StatusOr<std::string> Random(const Session& session, uint64_t len) {
  std::string out;
  while (out.size() < len) {
    v1::GenerateRandomRequest req;
    req.set_length(static_cast<uint32_t>(std::min(kRandomPerCall, len - out.size())));
    v1::GenerateRandomResponse resp;
    grpc::ClientContext ctx;
    session.Prepare(&ctx);
    grpc::Status s = session.stub().GenerateRandom(&ctx, req, &resp);
    if (!s.ok()) return RpcStatus(s);
    if (resp.data().size() != req.length()) {
      return RpcStatus(grpc::Status(grpc::StatusCode::INTERNAL,
                                    absl::StrCat("GenerateRandom returned ", resp.data().size(),
                                                 " bytes, asked for ", req.length())));
    }
    out += resp.data();
  }
  return out;
}

absl::Status WriteFile(const std::string& path, absl::string_view bytes, bool private_file) {
  Output out(path, private_file);
  absl::Status s = out.Write(bytes);
  if (s.ok()) s = out.Close();
  if (!s.ok()) out.Discard();
  return s;
}

// KeyForm reads keygen's and pubkey's --outform (pem or der; --der is der).
absl::StatusOr<bool> DerForm(const Args& args) {
  bool der = args.Has("der");
  if (std::optional<std::string> form = args.Get("outform")) {
    std::string lower = absl::AsciiStrToLower(*form);
    if (lower == "der" || lower == "binary") {
      der = true;
    } else if (lower != "pem") {
      return UsageError(absl::StrCat("--outform ", *form, ": keys are pem or der"));
    } else if (der) {
      return UsageError("--outform pem contradicts --der");
    }
  }
  return der;
}

absl::StatusOr<int> RunKeygen(const Args& args) {
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kKeyGen, v1::SM2);
  if (!alg.ok()) return alg.status();
  if (!args.positional().empty()) return UsageError("keygen takes no input file");
  absl::StatusOr<bool> der_form = DerForm(args);
  if (!der_form.ok()) return der_form.status();
  const bool der = *der_form;
  const std::string out_path = args.Get("out").value_or("");
  std::optional<std::string> pubout = args.Get("pubout");
  absl::StatusOr<std::optional<std::string>> password = PasswordFlag(args);
  if (!password.ok()) return password.status();
  if (args.Has("pass-cipher") && !password->has_value()) {
    return UsageError("--pass-cipher goes with --pass or --pass-file");
  }
  if (password->has_value() && args.Has("public-only")) {
    return UsageError("--public-only writes no private key: drop --pass/--pass-file");
  }
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();

  if (size_t key_size = SymmetricKeySize(*alg); key_size > 0) {
    if (pubout.has_value() || args.Has("public-only")) {
      return UsageError(absl::StrCat(AlgorithmName(*alg), " keys are secret keys: no public key"));
    }
    if (password->has_value()) {
      return UsageError(absl::StrCat("--pass encrypts PKCS#8 private keys; ", AlgorithmName(*alg),
                                     " keys are raw secret keys"));
    }
    absl::StatusOr<std::string> key = Random(*session, key_size);
    if (!key.ok()) return key.status();
    std::string file = der ? *key : ToPem(SymmetricPemType(*alg), *key);
    if (absl::Status s = WriteFile(out_path, file, /*private_file=*/true); !s.ok()) return s;
    return kExitOk;
  }

  v1::GenerateKeyPairRequest req;
  req.set_algorithm(*alg);
  req.set_omit_private_key(args.Has("public-only"));
  v1::GenerateKeyPairResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().GenerateKeyPair(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  if (resp.private_key_withheld()) {
    std::fprintf(stderr, "smcrypt keygen: the server withheld the private key "
                         "(--inline_private_keys=deny); writing the public key only\n");
  }
  const bool have_private = !resp.private_key_der().empty();
  std::string priv = der ? resp.private_key_der() : resp.private_key_pem();
  if (have_private && password->has_value()) {
    absl::StatusOr<std::string> encrypted =
        EncryptKey(resp.private_key_der(), **password,
                   args.Get("pass-cipher").value_or(std::string(kDefaultPassCipher)));
    if (!encrypted.ok()) return UsageError(encrypted.status().message());
    priv = der ? *encrypted : ToPem("ENCRYPTED PRIVATE KEY", *encrypted);
  }
  std::string pub = der ? resp.public_key_der() : resp.public_key_pem();
  if (!have_private) {
    if (absl::Status w = WriteFile(pubout.value_or(out_path), pub, false); !w.ok()) return w;
    return kExitOk;
  }
  if (pubout.has_value()) {
    if (absl::Status w = WriteFile(out_path, priv, true); !w.ok()) return w;
    if (absl::Status w = WriteFile(*pubout, pub, false); !w.ok()) return w;
    return kExitOk;
  }
  if (der) {
    return UsageError("--der writes two binary keys: give --pubout FILE for the public key "
                      "(or --public-only)");
  }
  // PEM: the private key first (what `openssl pkey -in FILE` reads), then the public key.
  if (absl::Status w = WriteFile(out_path, priv + pub, true); !w.ok()) return w;
  return kExitOk;
}

absl::StatusOr<int> RunPubkey(const Args& args) {
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kKeyPair, v1::SM2);
  if (!alg.ok()) return alg.status();
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  if (!args.positional().empty()) return UsageError("pubkey takes no input file; use --key");
  const bool all_versions = args.Has("versions");
  if (all_versions && !args.Has("key-id")) {
    return UsageError("--versions goes with --key-id (the versions of a keyring key)");
  }
  if (all_versions && (args.Has("der") || args.Has("format") || args.Has("outform"))) {
    return UsageError("--versions prints PEM: drop --der, --format and --outform");
  }
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  v1::GetPublicKeyRequest req;
  // A keyring key without --alg: the server takes the key's own family.
  const bool family_decides = args.Has("key-id") && !args.Has("alg");
  if (!family_decides) req.set_algorithm(*alg);
  *req.mutable_key() = *std::move(key);
  v1::GetPublicKeyResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().GetPublicKey(&ctx, req, &resp);
  if (!s.ok()) {
    absl::Status status = RpcStatus(s);
    if (!args.Has("alg") && !family_decides && ErrorReason(status) == "WRONG_KEY_FAMILY") {
      // The algorithm is this command's default, not the user's choice: say so.
      return RpcStatus(grpc::Status(
          s.error_code(),
          absl::StrCat(s.error_message(),
                       " (pubkey assumes --alg SM2; give --alg for an EC, RSA or HPKE key; "
                       "SM4, AES and HMAC keys have no public key)"),
          s.error_details()));
    }
    return status;
  }
  if (all_versions) {
    // One "# <key_id> version <n>" line before each version's PEM, oldest first; a key
    // without version files is version 1 (KeyRef "Key versions").
    std::string text;
    const std::string& id = req.key().key_id();
    if (resp.versions().empty()) {
      absl::StrAppend(&text, "# ", id, " version 1\n", resp.public_key_pem());
    }
    for (const v1::PublicKeyVersion& v : resp.versions()) {
      absl::StrAppend(&text, "# ", id, " version ", v.version(), "\n", v.public_key_pem());
    }
    if (absl::Status w = WriteOutput(args, text); !w.ok()) return w;
    return kExitOk;
  }
  bool der = args.Has("der");
  std::optional<std::string> outform = args.Get("outform");
  if (outform.has_value() && absl::AsciiStrToLower(*outform) != "pem") {
    der = true;  // der, binary, hex, base64: the DER bytes, so encoded
  }
  if (outform.has_value() && absl::AsciiStrToLower(*outform) == "pem" && args.Has("der")) {
    return UsageError("--outform pem contradicts --der");
  }
  if (der) {
    if (args.Has("format") && outform.has_value()) {
      return UsageError("give only one of --format and --outform");
    }
    absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kRaw);
    if (!format.ok()) return format.status();
    if (absl::Status w = WriteOutput(args, EncodeAll(*format, resp.public_key_der())); !w.ok()) {
      return w;
    }
    return kExitOk;
  }
  if (args.Has("format")) return UsageError("--format goes with --der (PEM is text already)");
  if (absl::Status w = WriteOutput(args, resp.public_key_pem()); !w.ok()) return w;
  return kExitOk;
}

absl::StatusOr<int> RunRandom(const Args& args) {
  if (args.positional().size() > 1 || (args.Has("length") && !args.positional().empty())) {
    return UsageError("give the length once: smcrypt random N");
  }
  std::optional<std::string> len_text = args.Get("length");
  if (!args.positional().empty()) len_text = args.positional().front();
  if (!len_text.has_value()) return UsageError("the byte count is required: smcrypt random N");
  Args len_args;
  len_args.AddFlag("length", *len_text);
  absl::StatusOr<uint64_t> len = UintFlag(len_args, "length", 0, 1, kRandomMax);
  if (!len.ok()) return len.status();
  absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kHex);
  if (!format.ok()) return format.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  absl::StatusOr<std::string> bytes = Random(*session, *len);
  if (!bytes.ok()) return bytes.status();
  if (absl::Status w = WriteOutput(args, EncodeAll(*format, *bytes)); !w.ok()) return w;
  return kExitOk;
}

}  // namespace

std::string InfoText(const v1::GetServerInfoResponse& info) {
  std::string out = absl::StrCat("smcryptd ", info.version(), "\n");
  absl::StrAppend(&out, "CPU:                   ", info.cpu(), "\n");
  absl::StrAppend(&out, "CPU features detected: ", info.cpu_features_detected(), "\n");
  absl::StrAppend(&out, "CPU features active:   ", info.cpu_features_active(), "\n");
  absl::StrAppend(&out, "Kernels:\n");
  for (const v1::KernelInfo& k : info.kernels()) {
    absl::StrAppend(&out, "  ", k.algorithm(), std::string(k.algorithm().size() < 6
                                                                ? 6 - k.algorithm().size()
                                                                : 1, ' '),
                    k.kernel(), "\n");
  }
  absl::StrAppend(&out, "Limits: max_message_bytes=", info.max_message_bytes(),
                  " max_inflight=", info.max_inflight(),
                  " inline_private_keys=", info.inline_private_keys(), "\n");
  if (!info.sizing().cgroup().empty()) {
    const v1::ResourceSizing& z = info.sizing();
    absl::StrAppend(&out, "Sizing: ", z.cgroup(), ", CPU limit ",
                    z.cpu_limit() > 0 ? absl::StrCat(z.cpu_limit()) : "none", ", memory limit ",
                    z.memory_limit_bytes() > 0
                        ? absl::StrCat(z.memory_limit_bytes(), " (",
                                       HumanBytes(z.memory_limit_bytes()), ")")
                        : "none",
                    ", ", z.cpus_available(), " CPUs available\n");
    for (const v1::SizedValue& v : z.values()) {
      // Byte sizes (the *_bytes flags and grpc_memory_quota) also in KiB, MiB or GiB.
      const bool bytes = absl::EndsWith(v.name(), "_bytes") || v.name() == "grpc_memory_quota";
      absl::StrAppend(&out, "  ", v.name(), "=", v.value(),
                      bytes && v.value() > 0 ? absl::StrCat(" = ", HumanBytes(v.value())) : "",
                      " (", v.source(), ")\n");
    }
  }
  absl::StrAppend(&out, "Keyring: ", info.keyring_size(), " key(s)\n");
  absl::StrAppend(&out, "Algorithms: ", absl::StrJoin(info.algorithms(), ", "), "\n");
  int passed = 0;
  for (const v1::SelfTestResult& t : info.self_tests()) passed += t.passed();
  absl::StrAppend(&out, "Self-tests: ", passed, "/", info.self_tests_size(), " passed",
                  info.self_tests_passed() ? "" : " (FAILED: the server is NOT_SERVING)", "\n");
  for (const v1::SelfTestResult& t : info.self_tests()) {
    absl::StrAppend(&out, "  ", t.passed() ? "ok   " : "FAIL ", t.name(),
                    t.message().empty() ? "" : ": ", t.message(), "\n");
  }
  return out;
}

namespace {

absl::StatusOr<int> RunInfo(const Args& args) {
  if (!args.positional().empty()) return UsageError("info takes no arguments");
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  v1::GetServerInfoRequest req;
  // Under --local the in-process service has not run its self-tests yet.
  req.set_run_self_tests(args.Has("self-test") || IsLocal(args));
  v1::GetServerInfoResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().GetServerInfo(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  std::string text;
  if (args.Has("json")) {
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.preserve_proto_field_names = true;
    if (!google::protobuf::util::MessageToJsonString(resp, &text, options).ok()) {
      return absl::InternalError("cannot render the server info as JSON");
    }
  } else {
    text = InfoText(resp);
  }
  if (absl::Status w = WriteOutput(args, text); !w.ok()) return w;
  return resp.self_tests_passed() ? kExitOk : kExitInvalid;
}

}  // namespace

std::vector<Command> KeyCommands() {
  return {
      {"keygen", "new key pair (SM2, ECDSA, RSA, HPKE) or secret key (SM4, AES, HMAC)",
       "smcrypt keygen [--alg ALG] [--out FILE] [--pubout FILE] [--public-only] [--der]",
       R"(Asymmetric algorithms: the server draws a key pair (GenerateKeyPair); with
--local this process does, and the key goes nowhere but the files. The
PKCS#8 private key goes to --out (mode 0600, an existing file set to it too;
stdout by default) and the public key
(SubjectPublicKeyInfo) to --pubout, or after the private key when --pubout is absent.
PEM by default, DER with --der. With --pass or --pass-file the private key is
written encrypted (PKCS#8 PBES2 "ENCRYPTED PRIVATE KEY", by default AES-256-CBC with
PBKDF2-HMAC-SHA256 as openssl writes it; --pass-cipher sm4-cbc for GmSSL's SM4-CBC with
PBKDF2-HMAC-SM3); the encryption is done here, never by the server. If the server
denies inline private keys it keeps the private key back and only the public key is
written.
Symmetric and HMAC algorithms: a random key from the server's CSPRNG (16 bytes; 32 for
AES-256, SM4-XTS and HMAC) in a "SM4 KEY", "AES KEY" or "HMAC KEY" PEM block -- the format of
the server's keyring, so the file works with --key here and in --keys_dir.
--alg defaults to SM2.

Examples:
  smcrypt keygen --local --alg sm2 --pass-file pw.txt --out sm2.pem --pubout sm2pub.pem
  smcrypt keygen --alg sm2 --out sm2.pem --pubout sm2pub.pem
  smcrypt keygen --alg rsa-2048-pss --out rsa.pem && openssl pkey -in rsa.pem -noout -text
  smcrypt keygen --alg sm4-gcm --out sm4.key)",
       {{"alg", "ALG", "SM2 (default), ECDSA-*, RSA-*, HPKE-*, or SM4-*, AES-*, HMAC-*"},
        {"out", "FILE", "private (or secret) key file, mode 0600 (default stdout)"},
        {"pubout", "FILE", "public key file"},
        {"public-only", "", "ask the server for the public key only"},
        {"der", "", "DER (raw key bytes for secret keys) instead of PEM"},
        {"outform", "FORM", "pem (default) or der (the same as --der)"},
        {"pass", "PASSWORD", "encrypt the private key (PKCS#8 PBES2, \"ENCRYPTED PRIVATE "
                             "KEY\") under PASSWORD; visible in ps: prefer --pass-file"},
        {"pass-file", "FILE", "read that password from the first line of FILE"},
        {"pass-cipher", "CIPHER", "aes-256-cbc (default: PBKDF2-HMAC-SHA256, as openssl "
                                  "genpkey -aes256) or sm4-cbc (PBKDF2-HMAC-SM3, as gmssl "
                                  "sm2keygen -pass)"}},
       kConnectionFlags, &RunKeygen},
      {"pubkey", "public key of a keyring entry or private key",
       "smcrypt pubkey [--alg ALG] KEY [--der [--format FMT]] [--versions] [--out FILE]",
       R"(Prints the public key (SubjectPublicKeyInfo) of a keyring entry (--key-id) or
of a private key (--key), as PEM, or as DER with --der (raw bytes, or --format hex /
base64). A keyring key needs no --alg (its family decides); for --key, --alg defaults
to SM2. With --key-version N, version N of the keyring key (else its primary);
with --versions, every usable version, oldest first, each PEM after a line
"# ID version N".

Examples:
  smcrypt pubkey --key-id signer
  smcrypt pubkey --key-id signer --key-version 1
  smcrypt pubkey --key-id signer --versions
  smcrypt pubkey --key sm2.pem --der --format hex)",
       {{"alg", "ALG", "the key's algorithm: SM2 (default for --key), ECDSA-*, RSA-*, HPKE-*"},
        {"der", "", "DER instead of PEM"},
        {"versions", "", "with --key-id: every usable version of the key, as PEM"},
        {"out", "FILE", "write the key to FILE instead of stdout"},
        {"format", "FMT", "with --der: raw (default), hex or base64"},
        {"outform", "FORM", "pem (default), der, hex or base64 (the DER in hex or base64)"}},
       kConnectionFlags | kKeyFlags, &RunPubkey},
      {"random", "random bytes from the server's CSPRNG",
       "smcrypt random N [--format hex|base64|raw] [--out FILE]",
       R"(Prints N random bytes (GenerateRandom, OpenSSL RAND_bytes on the server),
hex by default. Large N takes several 1 MiB calls.

Examples:
  smcrypt random 16
  smcrypt random 32 --format base64
  smcrypt random 1048576 --format raw --out seed.bin)",
       {{"length", "N", "byte count (same as the positional N)"}},
       kConnectionFlags | kOutputFlags, &RunRandom},
      {"info", "server version, CPU features, kernels, limits, self-tests",
       "smcrypt info [--self-test] [--json]",
       R"(Prints what GetServerInfo reports: version, CPU features detected and active,
the back end (kernel) chosen per algorithm, limits, keyring size, algorithms served and
the known-answer self-tests. Exits 1 when a self-test failed.

Examples:
  smcrypt info
  smcrypt info --self-test --json --target smcrypt.example:50051 --tls)",
       {{"self-test", "", "re-run the server's known-answer self-tests first"},
        {"json", "", "print the response as JSON"},
        {"out", "FILE", "write to FILE instead of stdout"}},
       kConnectionFlags, &RunInfo},
  };
}

}  // namespace smcrypt::cli
