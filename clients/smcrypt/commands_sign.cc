// sign and verify: Sign, SignBatch, Verify and VerifyBatch.
#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/session.h"

namespace smcrypt::cli {
namespace {

namespace v1 = ::smcrypt::v1;

// A SignBatch / VerifyBatch call carries at most kBatchBytes of messages.
constexpr size_t kBatchBytes = 2 << 20;

absl::StatusOr<v1::SignatureOptions> OptionsFlags(const Args& args) {
  v1::SignatureOptions options;
  absl::StatusOr<std::optional<std::string>> id = BytesFlag(args, "id", "id-hex");
  if (!id.ok()) return id.status();
  if (id->has_value()) options.set_user_id(**id);
  if (std::optional<std::string> enc = args.Get("sig-encoding")) {
    std::string lower = absl::AsciiStrToLower(*enc);
    if (lower == "der") {
      options.set_encoding(v1::SIGNATURE_ENCODING_DER);
    } else if (lower == "raw") {
      options.set_encoding(v1::SIGNATURE_ENCODING_RAW);
    } else {
      return UsageError(absl::StrCat("--sig-encoding ", *enc, ": expected der or raw"));
    }
  }
  options.set_prehashed(args.Has("prehashed"));
  return options;
}

struct Common {
  v1::Algorithm alg;
  Encoding format;
  v1::KeyRef key;
  v1::SignatureOptions options;
};

absl::StatusOr<Common> CommonFlags(const Args& args) {
  Common c;
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kSignature, v1::SM2);
  if (!alg.ok()) return alg.status();
  c.alg = *alg;
  absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kHex);
  if (!format.ok()) return format.status();
  c.format = *format;
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  c.key = *std::move(key);
  absl::StatusOr<v1::SignatureOptions> options = OptionsFlags(args);
  if (!options.ok()) return options.status();
  c.options = *std::move(options);
  return c;
}

std::string ListingLine(Encoding format, absl::string_view value, absl::string_view path) {
  std::string line = EncodeAll(format, value);
  line.pop_back();
  return absl::StrCat(line, "  ", path, "\n");
}

absl::StatusOr<int> SignMany(const Args& args, const Session& session, const Common& c,
                             const std::vector<std::string>& paths) {
  if (c.format == Encoding::kRaw) {
    return UsageError("--format raw cannot list several signatures; use hex or base64");
  }
  std::vector<absl::Status> status(paths.size());
  std::vector<std::string> sigs(paths.size());
  v1::SignBatchRequest batch;
  std::vector<size_t> index;
  size_t bytes = 0;
  uint32_t noted_version = 0;  // a reload between two batches can change the primary version
  auto flush = [&] {
    if (batch.items_size() == 0) return;
    v1::SignBatchResponse resp;
    grpc::ClientContext ctx;
    session.Prepare(&ctx);
    grpc::Status s = session.stub().SignBatch(&ctx, batch, &resp);
    for (size_t i = 0; i < index.size(); ++i) {
      if (!s.ok()) {
        status[index[i]] = RpcStatus(s);
      } else if (static_cast<int>(i) < resp.results_size()) {
        status[index[i]] = ItemStatus(resp.results(i).status());
        if (uint32_t v = resp.results(i).key_version(); v != noted_version && v != 0) {
          noted_version = v;
          NoteKeyVersion("sign", v);
        }
        sigs[index[i]] = resp.results(i).signature();
      } else {
        status[index[i]] = RpcStatus(grpc::Status(grpc::StatusCode::INTERNAL,
                                                  "SignBatch returned fewer results than items"));
      }
    }
    batch.clear_items();
    index.clear();
    bytes = 0;
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    absl::StatusOr<std::string> data = ReadFile(paths[i], kWholeInputLimit);
    if (!data.ok()) {
      status[i] = data.status();
      continue;
    }
    if (bytes + data->size() > kBatchBytes) flush();
    bytes += data->size();
    v1::SignRequest* req = batch.add_items();
    req->set_algorithm(c.alg);
    *req->mutable_key() = c.key;
    *req->mutable_options() = c.options;
    req->set_data(*std::move(data));
    index.push_back(i);
  }
  flush();
  std::string listing;
  int rc = kExitOk;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!status[i].ok()) {
      std::fprintf(stderr, "smcrypt sign: %s: %s\n", TerminalSafe(paths[i]).c_str(),
                   DescribeError(status[i]).c_str());
      rc = std::max(rc, ExitCodeFor(status[i]));
      continue;
    }
    listing += ListingLine(c.format, sigs[i], paths[i]);
  }
  if (absl::Status s = WriteOutput(args, listing); !s.ok()) return s;
  return rc;
}

absl::StatusOr<int> RunSign(const Args& args) {
  absl::StatusOr<Common> c = CommonFlags(args);
  if (!c.ok()) return c.status();
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/true);
  if (!paths.ok()) return paths.status();
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  if (paths->size() > 1) return SignMany(args, *session, *c, *paths);

  v1::SignRequest req;
  req.set_algorithm(c->alg);
  *req.mutable_key() = c->key;
  *req.mutable_options() = c->options;
  absl::StatusOr<std::string> data = ReadFile(paths->front(), kWholeInputLimit);
  if (!data.ok()) return data.status();
  req.set_data(*std::move(data));
  v1::SignResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().Sign(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("sign", resp.key_version());
  if (absl::Status w = WriteOutput(args, EncodeAll(c->format, resp.signature())); !w.ok()) {
    return w;
  }
  return kExitOk;
}

// VerifyList checks a listing "SIGNATURE  FILE" per line (as `smcrypt sign` writes for
// several files) with VerifyBatch.
absl::StatusOr<int> VerifyList(const Session& session, const Common& c,
                               const std::string& list_path) {
  if (c.format == Encoding::kRaw) {
    return UsageError("--check reads a listing; --format must be hex or base64");
  }
  absl::StatusOr<std::string> list = ReadFile(list_path, kWholeInputLimit);
  if (!list.ok()) return list.status();
  std::vector<std::string> paths;
  std::vector<absl::Status> status;
  std::vector<int> valid;  // -1 unknown
  v1::VerifyBatchRequest batch;
  std::vector<size_t> index;
  size_t bytes = 0;
  auto flush = [&] {
    if (batch.items_size() == 0) return;
    v1::VerifyBatchResponse resp;
    grpc::ClientContext ctx;
    session.Prepare(&ctx);
    grpc::Status s = session.stub().VerifyBatch(&ctx, batch, &resp);
    for (size_t i = 0; i < index.size(); ++i) {
      if (!s.ok()) {
        status[index[i]] = RpcStatus(s);
      } else if (static_cast<int>(i) < resp.results_size()) {
        status[index[i]] = ItemStatus(resp.results(i).status());
        valid[index[i]] = resp.results(i).valid() ? 1 : 0;
      } else {
        status[index[i]] = RpcStatus(grpc::Status(
            grpc::StatusCode::INTERNAL, "VerifyBatch returned fewer results than items"));
      }
    }
    batch.clear_items();
    index.clear();
    bytes = 0;
  };
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(*list, '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    size_t sep = line.find_first_of(" \t");
    if (sep == absl::string_view::npos) {
      return UsageError(absl::StrCat(list_path, ":", line_no,
                                     ": expected \"SIGNATURE  FILE\""));
    }
    std::string path(absl::StripLeadingAsciiWhitespace(line.substr(sep)));
    size_t i = paths.size();
    paths.push_back(path);
    status.emplace_back();
    valid.push_back(-1);
    absl::StatusOr<std::string> sig = DecodeAll(c.format, line.substr(0, sep));
    if (!sig.ok()) {
      status[i] = UsageError(absl::StrCat(list_path, ":", line_no, ": signature: ",
                                          sig.status().message()));
      continue;
    }
    absl::StatusOr<std::string> data = ReadFile(path, kWholeInputLimit);
    if (!data.ok()) {
      status[i] = data.status();
      continue;
    }
    if (bytes + data->size() > kBatchBytes) flush();
    bytes += data->size();
    v1::VerifyRequest* req = batch.add_items();
    req->set_algorithm(c.alg);
    *req->mutable_key() = c.key;
    *req->mutable_options() = c.options;
    req->set_data(*std::move(data));
    req->set_signature(*std::move(sig));
    index.push_back(i);
  }
  flush();
  int rc = kExitOk;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!status[i].ok()) {
      std::fprintf(stderr, "smcrypt verify: %s: %s\n", TerminalSafe(paths[i]).c_str(),
                   DescribeError(status[i]).c_str());
      rc = std::max(rc, ExitCodeFor(status[i]));
      continue;
    }
    std::printf("%s: %s\n", paths[i].c_str(), valid[i] == 1 ? "OK" : "FAILED");
    if (valid[i] != 1) rc = std::max(rc, kExitInvalid);
  }
  return rc;
}

absl::StatusOr<int> RunVerify(const Args& args) {
  absl::StatusOr<Common> c = CommonFlags(args);
  if (!c.ok()) return c.status();
  if (std::optional<std::string> list = args.Get("check")) {
    if (args.Has("sig") || args.Has("sig-hex") || !args.positional().empty() ||
        args.Has("in")) {
      return UsageError("--check takes the files from the listing; drop --sig/--sig-hex/FILE");
    }
    absl::StatusOr<Session> session = Session::Connect(args);
    if (!session.ok()) return session.status();
    return VerifyList(*session, *c, *list);
  }
  v1::VerifyRequest req;
  req.set_algorithm(c->alg);
  *req.mutable_key() = c->key;
  *req.mutable_options() = c->options;
  if (args.Has("sig") == args.Has("sig-hex")) {
    return UsageError("give the signature as --sig FILE or --sig-hex HEX (exactly one)");
  }
  absl::StatusOr<std::string> sig =
      args.Has("sig") ? ReadEncodedFile(*args.Get("sig"), c->format, "--sig")
                      : DecodeHexFlag("sig-hex", *args.Get("sig-hex"));
  if (!sig.ok()) return sig.status();
  req.set_signature(*std::move(sig));
  absl::StatusOr<std::string> data = ReadInput(args);
  if (!data.ok()) return data.status();
  req.set_data(*std::move(data));
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();
  v1::VerifyResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().Verify(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("verify", resp.key_version());
  std::printf("%s\n", resp.valid() ? "signature valid" : "signature invalid");
  return resp.valid() ? kExitOk : kExitInvalid;
}

const std::vector<FlagSpec> kSignatureFlags = {
    {"alg", "ALG", "SM2 (default), ECDSA-P256, ECDSA-SECP256K1, RSA-2048-PSS, RSA-3072-PSS"},
    {"id", "TEXT", "SM2 signer ID hashed into Z (default 1234567812345678, GM/T 0009)"},
    {"id-hex", "HEX", "SM2 signer ID in hex"},
    {"sig-encoding", "ENC", "der (default) or raw (r||s, 64 bytes; SM2 and ECDSA)"},
    {"prehashed", "", "the input is the 32-byte digest (SM2: e = SM3(Z||M)), not the message"},
};

}  // namespace

std::vector<Command> SignCommands() {
  std::vector<FlagSpec> verify_flags = kSignatureFlags;
  verify_flags.insert(verify_flags.end(), {
      {"sig", "FILE", "the signature, encoded as --format says (default hex)"},
      {"sig-hex", "HEX", "the signature in hex"},
      {"check", "LIST", "verify every \"SIGNATURE  FILE\" line of LIST (VerifyBatch)"},
  });
  return {
      {"sign", "sign files or stdin (SM2, ECDSA, RSA-PSS)",
       "smcrypt sign [--alg ALG] KEY [--id TEXT] [--sig-encoding der|raw] [FILE...]",
       R"(Signs FILE (or stdin) with a private key and prints the signature. SM2 signs
e = SM3(Z || M) with Z from the signer ID (GB/T 32918.2). With several FILEs the
signatures come from SignBatch, one "SIGNATURE  FILE" line each (see verify --check).
--alg defaults to SM2.

Examples:
  smcrypt keygen --alg sm2 --out sm2.pem --pubout sm2pub.pem
  smcrypt sign --key sm2.pem --out msg.sig msg.txt
  smcrypt sign --alg ecdsa-p256 --key-id signer --sig-encoding raw msg.txt
  smcrypt sign --key sm2.pem *.txt > SIGNATURES)",
       kSignatureFlags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunSign},
      {"verify", "check a signature (exit 0 valid, 1 invalid)",
       "smcrypt verify [--alg ALG] KEY (--sig FILE | --sig-hex HEX) [FILE]\n"
       "       smcrypt verify [--alg ALG] KEY --check LIST",
       R"(Verifies a signature over FILE (or stdin) with a public key (a private key
works too). Prints "signature valid" and exits 0, or "signature invalid" and exits 1.
The options (--alg, --id, --sig-encoding, --prehashed) must match the signing ones.
With --check, every line "SIGNATURE  FILE" of LIST is verified in VerifyBatch calls and
reported as "FILE: OK" or "FILE: FAILED" (exit 1 if any failed).

Examples:
  smcrypt verify --key sm2pub.pem --sig msg.sig msg.txt
  smcrypt verify --alg ecdsa-p256 --key-id signer --sig-encoding raw --sig-hex 3a... msg.txt
  smcrypt verify --key sm2pub.pem --check SIGNATURES)",
       verify_flags, kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunVerify},
  };
}

}  // namespace smcrypt::cli
