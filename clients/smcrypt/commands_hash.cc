// hash and hmac: Hash, HashStream, HashBatch and Hmac.
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/io.h"
#include "clients/smcrypt/session.h"

namespace smcrypt::cli {
namespace {

namespace v1 = ::smcrypt::v1;

// Inputs up to kUnaryMax bytes (regular files of known size) go in one Hash call or a
// HashBatch item; stdin, pipes and larger files stream through HashStream in
// kStreamChunk-byte messages. A HashBatch call carries at most kBatchBytes of data, well
// under the server's default 4 MiB message limit.
constexpr size_t kUnaryMax = 1 << 20;
constexpr size_t kStreamChunk = 1 << 20;
constexpr size_t kBatchBytes = 2 << 20;

absl::StatusOr<std::string> HashUnary(const Session& session, v1::Algorithm alg,
                                      std::string data) {
  v1::HashRequest req;
  req.set_algorithm(alg);
  req.set_data(std::move(data));
  v1::HashResponse resp;
  grpc::ClientContext ctx;
  session.Prepare(&ctx);
  grpc::Status s = session.stub().Hash(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  return resp.digest();
}

absl::StatusOr<std::string> HashStreamed(const Session& session, v1::Algorithm alg,
                                         Input& in) {
  grpc::ClientContext ctx;
  session.Prepare(&ctx, /*streaming=*/true);
  v1::HashStreamResponse resp;
  std::unique_ptr<grpc::ClientWriter<v1::HashStreamRequest>> writer =
      session.stub().HashStream(&ctx, &resp);
  absl::Status local;
  bool first = true;
  for (;;) {
    absl::StatusOr<std::string> chunk = in.Read(kStreamChunk);
    if (!chunk.ok()) {
      local = chunk.status();
      break;
    }
    if (chunk->empty() && !first) break;
    v1::HashStreamRequest req;
    if (first) req.set_algorithm(alg);
    bool done = chunk->empty();
    req.set_data(*std::move(chunk));
    first = false;
    if (!writer->Write(req)) break;  // the server ended the call; Finish has the status
    if (done) break;
  }
  if (!local.ok()) {
    ctx.TryCancel();
    writer->Finish();
    return local;
  }
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (!s.ok()) return RpcStatus(s);
  return resp.digest();
}

struct HashItem {
  std::string path;
  absl::Status status;
  std::string digest;
};

// HashMany hashes every path: small files in HashBatch calls, the others streamed.
std::vector<HashItem> HashMany(const Session& session, v1::Algorithm alg,
                               const std::vector<std::string>& paths, bool force_stream) {
  std::vector<HashItem> items(paths.size());
  v1::HashBatchRequest batch;
  std::vector<size_t> batch_index;
  size_t batch_bytes = 0;
  auto flush = [&] {
    if (batch.items_size() == 0) return;
    v1::HashBatchResponse resp;
    grpc::ClientContext ctx;
    session.Prepare(&ctx);
    grpc::Status s = session.stub().HashBatch(&ctx, batch, &resp);
    for (size_t i = 0; i < batch_index.size(); ++i) {
      HashItem& item = items[batch_index[i]];
      if (!s.ok()) {
        item.status = RpcStatus(s);
      } else if (static_cast<int>(i) >= resp.results_size()) {
        item.status = RpcStatus(grpc::Status(grpc::StatusCode::INTERNAL,
                                             "HashBatch returned fewer results than items"));
      } else {
        item.status = ItemStatus(resp.results(i).status());
        item.digest = resp.results(i).digest();
      }
    }
    batch.clear_items();
    batch_index.clear();
    batch_bytes = 0;
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    items[i].path = paths[i];
    absl::StatusOr<Input> in = Input::Open(paths[i]);
    if (!in.ok()) {
      items[i].status = in.status();
      continue;
    }
    if (force_stream || !in->size().has_value() || *in->size() > kUnaryMax) {
      absl::StatusOr<std::string> digest = HashStreamed(session, alg, *in);
      items[i].status = digest.status();
      if (digest.ok()) items[i].digest = *std::move(digest);
      continue;
    }
    absl::StatusOr<std::string> data = in->ReadAll(kWholeInputLimit);
    if (!data.ok()) {
      items[i].status = data.status();
      continue;
    }
    if (batch_bytes + data->size() > kBatchBytes) flush();
    batch_bytes += data->size();
    v1::HashRequest* req = batch.add_items();
    req->set_algorithm(alg);
    req->set_data(*std::move(data));
    batch_index.push_back(i);
  }
  flush();
  return items;
}

absl::StatusOr<int> RunHash(const Args& args) {
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kHash, v1::SM3);
  if (!alg.ok()) return alg.status();
  absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kHex);
  if (!format.ok()) return format.status();
  absl::StatusOr<std::vector<std::string>> paths = InputPaths(args, /*allow_many=*/true);
  if (!paths.ok()) return paths.status();
  bool force_stream = args.Has("stream");
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();

  if (paths->size() == 1) {
    absl::StatusOr<Input> in = Input::Open(paths->front());
    if (!in.ok()) return in.status();
    absl::StatusOr<std::string> digest;
    if (force_stream || !in->size().has_value() || *in->size() > kUnaryMax) {
      digest = HashStreamed(*session, *alg, *in);
    } else {
      absl::StatusOr<std::string> data = in->ReadAll(kWholeInputLimit);
      if (!data.ok()) return data.status();
      digest = HashUnary(*session, *alg, *std::move(data));
    }
    if (!digest.ok()) return digest.status();
    if (absl::Status s = WriteOutput(args, EncodeAll(*format, *digest)); !s.ok()) return s;
    return kExitOk;
  }

  if (*format == Encoding::kRaw) {
    return UsageError("--format raw cannot list several digests; use hex or base64");
  }
  std::vector<HashItem> items = HashMany(*session, *alg, *paths, force_stream);
  std::string listing;
  int rc = kExitOk;
  for (const HashItem& item : items) {
    if (!item.status.ok()) {
      std::fprintf(stderr, "smcrypt hash: %s: %s\n", TerminalSafe(item.path).c_str(),
                   DescribeError(item.status).c_str());
      rc = std::max(rc, ExitCodeFor(item.status));
      continue;
    }
    std::string line = EncodeAll(*format, item.digest);
    line.pop_back();  // the newline; the path follows
    absl::StrAppend(&listing, line, "  ", item.path, "\n");
  }
  if (absl::Status s = WriteOutput(args, listing); !s.ok()) return s;
  return rc;
}

absl::StatusOr<int> RunHmac(const Args& args) {
  absl::StatusOr<v1::Algorithm> alg = AlgorithmFlag(args, AlgorithmFamily::kMac, v1::HMAC_SM3);
  if (!alg.ok()) return alg.status();
  absl::StatusOr<Encoding> format = FormatFlag(args, Encoding::kHex);
  if (!format.ok()) return format.status();
  absl::StatusOr<v1::KeyRef> key = KeyFlag(args, *alg);
  if (!key.ok()) return key.status();
  v1::HmacRequest req;
  req.set_algorithm(*alg);
  *req.mutable_key() = *std::move(key);
  if (std::optional<std::string> expect = args.Get("expect")) {
    absl::StatusOr<std::string> mac = DecodeHexFlag("expect", *expect);
    if (!mac.ok()) return mac.status();
    req.set_expected_mac(*std::move(mac));
  }
  absl::StatusOr<std::string> data = ReadInput(args);
  if (!data.ok()) return data.status();
  req.set_data(*std::move(data));
  absl::StatusOr<Session> session = Session::Connect(args);
  if (!session.ok()) return session.status();

  v1::HmacResponse resp;
  grpc::ClientContext ctx;
  session->Prepare(&ctx);
  grpc::Status s = session->stub().Hmac(&ctx, req, &resp);
  if (!s.ok()) return RpcStatus(s);
  NoteKeyVersion("hmac", resp.key_version());
  if (req.has_expected_mac()) {
    std::printf("%s\n", resp.valid() ? "MAC valid" : "MAC invalid");
    return resp.valid() ? kExitOk : kExitInvalid;
  }
  if (absl::Status w = WriteOutput(args, EncodeAll(*format, resp.mac())); !w.ok()) return w;
  return kExitOk;
}

}  // namespace

std::vector<Command> HashCommands() {
  return {
      {"hash", "digest of files or stdin (SM3, SHA-256)",
       "smcrypt hash [--alg SM3|SHA-256] [--stream] [FILE...]",
       R"(Prints the digest of FILE (or stdin). Files up to 1 MiB go in one Hash call;
stdin, pipes and larger files stream through HashStream, so inputs of any size work.
With several FILEs the small ones go together in HashBatch calls and the output is one
"DIGEST  FILE" line per file, like sha256sum.
--alg defaults to SM3.

Examples:
  printf abc | smcrypt hash --alg sm3
  smcrypt hash --alg sha-256 --format base64 image.iso
  smcrypt hash a.txt b.txt c.txt)",
       {{"alg", "ALG", "SM3 (default) or SHA-256, case-insensitive"},
        {"stream", "", "always use HashStream (even for small files)"}},
       kConnectionFlags | kInputFlags | kOutputFlags, &RunHash},
      {"hmac", "HMAC tag, or check one (HMAC-SM3, HMAC-SHA-256)",
       "smcrypt hmac [--alg HMAC-SM3|HMAC-SHA-256] KEY [--expect HEX] [FILE]",
       R"(Prints the HMAC (RFC 2104) of FILE (or stdin) under the key. With --expect the
server compares the tag in constant time: prints "MAC valid" (exit 0) or "MAC invalid"
(exit 1). The tag is 32 bytes, or its leftmost 16 to 31 bytes (a truncated tag, RFC 2104
§5). --alg defaults to HMAC-SM3.

Examples:
  smcrypt keygen --alg hmac-sm3 --out mac.key
  smcrypt hmac --key mac.key message.txt
  smcrypt hmac --alg hmac-sha-256 --key-hex 000102030405060708090a0b0c0d0e0f \
      --expect 3d1c... message.txt)",
       {{"alg", "ALG", "HMAC-SM3 (default) or HMAC-SHA-256"},
        {"expect", "HEX", "verify this tag instead of printing one"}},
       kConnectionFlags | kKeyFlags | kInputFlags | kOutputFlags, &RunHmac},
  };
}

}  // namespace smcrypt::cli
