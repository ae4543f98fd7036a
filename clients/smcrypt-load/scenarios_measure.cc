// scenarios_measure.cc — Measurer: one measured step of a scenario, a workload run by the
// runner (Cell) or one stream timed end to end (Stream).
#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/smcrypt-load/scenarios_internal.h"
#include "clients/smcrypt/algorithm_names.h"
#include "clients/smcrypt/bidi_stream.h"

namespace smcrypt::load::scenario {
namespace {

using cli::AlgorithmName;

constexpr size_t kStreamChunk = kMiB;

grpc::Status ToGrpc(const absl::Status& st) {
  return st.ok() ? grpc::Status::OK
                 : grpc::Status(static_cast<grpc::StatusCode>(st.code()), std::string(st.message()));
}

// Replay sends `requests` (a decrypting stream's, made by Seal) on `stream` as they are,
// and checks the plaintext that comes back against `chunk` repeated to `total` bytes.
template <typename Req, typename Resp>
grpc::Status Replay(grpc::ClientContext& cctx, grpc::ClientReaderWriter<Req, Resp>& stream,
                    std::vector<Req>& requests, PayloadCheck& check) {
  size_t next = 0;
  absl::Status st = cli::PumpBidiStream<Req, Resp>(
      cctx, stream,
      [&]() -> absl::StatusOr<std::optional<Req>> {
        if (next >= requests.size()) return std::nullopt;
        return std::move(requests[next++]);
      },
      [&](const Resp& resp) {
        check.Add(resp.plaintext());
        return absl::OkStatus();
      });
  return ToGrpc(st.ok() ? check.Finish() : st);
}

// HashAll sends `total` bytes (`chunk` repeated) through HashStream.
grpc::Status HashAll(Stub& stub, grpc::ClientContext& cctx, v1::Algorithm alg, size_t total,
                     const std::string& chunk) {
  v1::HashStreamResponse resp;
  auto writer = stub.HashStream(&cctx, &resp);
  size_t sent = 0;
  bool first = true;
  while (sent < total || first) {
    v1::HashStreamRequest req;
    if (first) req.set_algorithm(alg);
    const size_t n = std::min(chunk.size(), total - sent);
    req.set_data(chunk.data(), n);
    sent += n;
    first = false;
    if (!writer->Write(req)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

// RecordStream fills `r` with one stream of `total` bytes that took `seconds`.
void RecordStream(RunResult& r, const grpc::Status& status, size_t total, double seconds,
                  double cpu_seconds) {
  r.rpcs = 1;
  r.max_inflight = 1;
  r.seconds = seconds;
  r.client_cpu_seconds = cpu_seconds;
  if (status.ok()) {
    r.ops_ok = 1;
    r.payload_bytes = static_cast<double>(total);
    r.latency.Record(static_cast<uint64_t>(r.seconds * 1e9));
    r.service = r.latency;
  } else {
    r.ops_failed = 1;
    r.errors_by_code[CodeName(status.error_code())] = 1;
    r.first_error = absl::StrCat(CodeName(status.error_code()), ": ", status.error_message());
  }
}

}  // namespace

absl::Status Measurer::SymmetricSeal(grpc::ClientContext& cctx, v1::Algorithm alg, size_t total,
                                     const std::string& chunk,
                                     std::vector<v1::DecryptStreamRequest>* out) {
  const size_t key_size = alg == v1::AES_256_GCM || alg == v1::AES_256_ECB ||
                                  alg == v1::AES_256_CBC || alg == v1::AES_256_CTR
                              ? 32 : 16;
  v1::KeyRef key;
  ctx.preparer->SymmetricRef(alg, ctx.preparer->Payload(key_size + 1).substr(1), &key);
  const v1::Padding padding = cli::UsesPadding(alg)
                                  ? (total % 16 == 0 ? v1::PADDING_NONE : v1::PADDING_PKCS7)
                                  : v1::PADDING_UNSPECIFIED;
  if (out != nullptr) {
    out->clear();
    auto* p = out->emplace_back().mutable_params();
    p->set_algorithm(alg);
    *p->mutable_key() = key;
    p->set_padding(padding);
  }
  auto stream = ctx.stubs.front()->EncryptStream(&cctx);
  size_t sent = 0;
  bool first = true;
  return cli::PumpBidiStream<v1::EncryptStreamRequest, v1::EncryptStreamResponse>(
      cctx, *stream,
      [&]() -> absl::StatusOr<std::optional<v1::EncryptStreamRequest>> {
        if (sent >= total && !first) return std::nullopt;
        v1::EncryptStreamRequest req;
        if (first) {
          auto* p = req.mutable_params();
          p->set_algorithm(alg);
          *p->mutable_key() = key;
          p->set_padding(padding);
        }
        const size_t n = std::min(chunk.size(), total - sent);
        req.set_plaintext(chunk.data(), n);
        sent += n;
        first = false;
        return req;
      },
      [&](const v1::EncryptStreamResponse& resp) {
        if (out == nullptr) return absl::OkStatus();
        if (!resp.nonce().empty()) (*out)[0].mutable_params()->set_nonce(resp.nonce());
        if (!resp.ciphertext().empty() || !resp.tag().empty()) {
          v1::DecryptStreamRequest& req = out->emplace_back();
          req.set_ciphertext(resp.ciphertext());
          req.set_tag(resp.tag());
        }
        return absl::OkStatus();
      });
}

absl::Status Measurer::HybridSeal(grpc::ClientContext& cctx, v1::Algorithm alg, size_t total,
                                  const std::string& chunk,
                                  std::vector<v1::HybridDecryptStreamRequest>* out) {
  v1::KeyRef key;
  if (absl::Status k = ctx.preparer->KeyRefFor(alg, /*private_key=*/false, &key); !k.ok()) {
    return k;
  }
  if (out != nullptr) {
    out->clear();
    auto* p = out->emplace_back().mutable_params();
    p->set_algorithm(alg);
    if (absl::Status k = ctx.preparer->KeyRefFor(alg, /*private_key=*/true, p->mutable_key());
        !k.ok()) {
      return k;
    }
    p->set_info("smcrypt-load");
  }
  auto stream = ctx.stubs.front()->HybridEncryptStream(&cctx);
  size_t sent = 0;
  bool first = true;
  return cli::PumpBidiStream<v1::HybridEncryptStreamRequest, v1::HybridEncryptStreamResponse>(
      cctx, *stream,
      [&]() -> absl::StatusOr<std::optional<v1::HybridEncryptStreamRequest>> {
        if (sent >= total && !first) return std::nullopt;
        v1::HybridEncryptStreamRequest req;
        if (first) {
          auto* p = req.mutable_params();
          p->set_algorithm(alg);
          *p->mutable_key() = key;
          p->set_info("smcrypt-load");
        }
        const size_t n = std::min(chunk.size(), total - sent);
        req.set_plaintext(chunk.data(), n);
        sent += n;
        first = false;
        return req;
      },
      [&](const v1::HybridEncryptStreamResponse& resp) {
        if (out != nullptr && !resp.ciphertext().empty()) {
          out->emplace_back().set_ciphertext(resp.ciphertext());
        }
        return absl::OkStatus();
      });
}

absl::StatusOr<Step> Measurer::Cell(const WorkloadSpec& spec, RunOptions opts,
                                    std::string scheme) {
  absl::StatusOr<Workload> w = ctx.preparer->Make(spec);
  if (!w.ok()) return w.status();
  Step s;
  s.algorithm = AlgorithmName(spec.algorithm);
  s.scheme = scheme.empty() ? s.algorithm : scheme;
  s.rpc = spec.rpc;
  s.op = OpName(spec.rpc);
  s.size = spec.size;
  s.concurrency = opts.concurrency;
  s.rate = opts.rate;
  s.blocks = w->blocks * w->op.rpcs_per_call;
  if (spec.rpc == "KeyExchange") {
    s.size = 16;  // K
    s.note = "KeyExchange: an operation is one SM2 key exchange with confirmation and a "
             "16-byte K: two streams on one channel, the server as initiator and as "
             "responder for the same key, each side's messages relayed to the other";
  } else if (w->blocks > 1) {
    s.note = absl::StrCat(s.algorithm, ": payloads above ", w->block_size,
                          " B go as consecutive maximum-size OAEP blocks, one RPC each; "
                          "\"(n blk)\" is the RPCs per operation");
  }
  opts.timeout = config.timeout;
  opts.warmup = config.warmup;
  opts.metadata = config.metadata;
  opts.metrics_url = ctx.metrics_url;
  opts.progress = config.progress;
  opts.label = absl::StrCat(s.scheme, " ", s.op, " ", SizeName(s.size), " x", opts.concurrency);
  s.result = Run(ctx.stubs, w->op, opts);
  return s;
}

absl::Status Measurer::Seal(const std::string& rpc, v1::Algorithm alg, size_t total,
                            const std::string& chunk, Sealed& sealed) {
  grpc::ClientContext pctx;
  pctx.set_deadline(
      absl::ToChronoTime(absl::Now() + std::max(config.timeout, absl::Minutes(30))));
  for (const auto& [key, value] : config.metadata) pctx.AddMetadata(key, value);
  ctx.preparer->Count(1);
  absl::Status st = rpc == "DecryptStream"
                        ? SymmetricSeal(pctx, alg, total, chunk, &sealed.symmetric)
                        : HybridSeal(pctx, alg, total, chunk, &sealed.hybrid);
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrCat("preparing ", rpc, " (encrypting ",
                                                SizeName(total), " once): ", st.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<grpc::Status> Measurer::SendStream(grpc::ClientContext& cctx,
                                                  const std::string& rpc, v1::Algorithm alg,
                                                  size_t total, const std::string& chunk,
                                                  Sealed& sealed) {
  Stub& stub = *ctx.stubs.front();
  if (rpc == "HashStream") return HashAll(stub, cctx, alg, total, chunk);
  if (rpc == "EncryptStream") return ToGrpc(SymmetricSeal(cctx, alg, total, chunk, nullptr));
  if (rpc == "HybridEncryptStream") return ToGrpc(HybridSeal(cctx, alg, total, chunk, nullptr));
  if (rpc == "DecryptStream") {
    PayloadCheck check(chunk, total);
    auto stream = stub.DecryptStream(&cctx);
    return Replay(cctx, *stream, sealed.symmetric, check);
  }
  if (rpc == "HybridDecryptStream") {
    PayloadCheck check(chunk, total);
    auto stream = stub.HybridDecryptStream(&cctx);
    return Replay(cctx, *stream, sealed.hybrid, check);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown stream RPC ", rpc));
}

absl::StatusOr<Step> Measurer::Stream(const std::string& rpc, v1::Algorithm alg, size_t total) {
  Step s;
  s.algorithm = AlgorithmName(alg);
  s.scheme = s.algorithm;
  s.rpc = rpc;
  s.op = OpName(rpc);
  s.size = total;
  s.note = "streams: one RPC carrying the payload in 1 MiB messages";
  const std::string chunk = ctx.preparer->Payload(std::min(total, kStreamChunk));
  // The decrypting streams: the ciphertext of one encrypting stream of the same key and
  // messages, made here, before the measurement (a setup RPC), and sent as it came.
  Sealed sealed;
  if (rpc == "DecryptStream" || rpc == "HybridDecryptStream") {
    s.note = absl::StrCat("streams: one RPC carrying the ciphertext of one ",
                          rpc == "DecryptStream" ? "EncryptStream" : "HybridEncryptStream",
                          " (made before the measurement) in the messages it came in; "
                          "the plaintext is compared with what was encrypted");
    if (absl::Status st = Seal(rpc, alg, total, chunk, sealed); !st.ok()) return st;
  }
  if (rpc == "HybridEncryptStream") {
    // An inline key pair is drawn (GenerateKeyPair, a setup request) before the server's
    // counters are read, so the step's delta is the measured stream alone.
    v1::KeyRef key;
    if (absl::Status k = ctx.preparer->KeyRefFor(alg, /*private_key=*/false, &key); !k.ok()) {
      return k;
    }
  }
  RunResult& r = s.result;
  std::optional<ServerSample> before;
  if (!ctx.metrics_url.empty()) {
    absl::StatusOr<ServerSample> b = ScrapeServer(ctx.metrics_url);
    if (b.ok()) before = *b;
    else r.server_error = std::string(b.status().message());
  }
  grpc::ClientContext cctx;
  cctx.set_deadline(absl::ToChronoTime(absl::Now() + std::max(config.timeout, absl::Minutes(30))));
  for (const auto& [key, value] : config.metadata) cctx.AddMetadata(key, value);
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = ProcessCpuSeconds();
  absl::StatusOr<grpc::Status> status = SendStream(cctx, rpc, alg, total, chunk, sealed);
  if (!status.ok()) return status.status();
  const auto t1 = std::chrono::steady_clock::now();
  RecordStream(r, *status, total, std::chrono::duration<double>(t1 - t0).count(),
               ProcessCpuSeconds() - cpu0);
  if (before) {
    absl::StatusOr<ServerSample> after = ScrapeServer(ctx.metrics_url);
    if (after.ok()) {
      r.have_server = true;
      r.server_before = *before;
      r.server_after = *after;
      r.server_rss_peak = std::max(before->resident_bytes, after->resident_bytes);
    }
  }
  return s;
}

}  // namespace smcrypt::load::scenario
