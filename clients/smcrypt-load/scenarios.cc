#include "clients/smcrypt-load/scenarios.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/paper_figures.h"
#include "clients/smcrypt/algorithm_names.h"
#include "clients/smcrypt/bidi_stream.h"

namespace smcrypt::load {
namespace {

namespace v1 = smcrypt::v1;
using cli::AlgorithmName;

constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;
constexpr size_t kStreamChunk = kMiB;

std::string F(double v, int digits = 2) {
  if (!std::isfinite(v) || v <= 0) return "-";
  return absl::StrFormat("%.*f", digits, v);
}
std::string Ratio(double num, double den, int digits = 3) {
  return num > 0 && den > 0 ? absl::StrFormat("%.*f", digits, num / den) : "-";
}

bool IsHybrid(v1::Algorithm alg) {
  return alg == v1::HPKE_SM2_SM3_SM4GCM || alg == v1::HPKE_P256_SHA256_AES128GCM;
}

absl::StatusOr<std::string> EncryptionRpc(v1::Algorithm alg, bool decrypt) {
  if (IsHybrid(alg)) return std::string(decrypt ? "HybridDecrypt" : "HybridEncrypt");
  if (alg == v1::SM2 || alg == v1::RSA_2048_OAEP || alg == v1::RSA_3072_OAEP) {
    return std::string(decrypt ? "PublicKeyDecrypt" : "PublicKeyEncrypt");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--algs: ", AlgorithmName(alg),
      " is not an encryption scheme (SM2, RSA-2048-OAEP, RSA-3072-OAEP, HPKE-*)"));
}

// The blockchain study's names for the two schemes.
std::string StudyName(v1::Algorithm alg) {
  if (IsHybrid(alg)) return "ECC+AES";
  return alg == v1::SM2 ? "ECC" : "";
}

std::string OpName(std::string rpc) {
  if (absl::EndsWith(rpc, "Batch")) rpc.resize(rpc.size() - 5);
  if (rpc == "Hash" || rpc == "HashStream") return "hash";
  if (rpc == "Hmac") return "mac";
  if (rpc == "Sign") return "sign";
  if (rpc == "Verify") return "verify";
  if (rpc == "GenerateRandom") return "random";
  if (rpc == "GenerateKeyPair") return "keygen";
  if (rpc == "GetPublicKey") return "public key";
  if (rpc == "GetServerInfo") return "info";
  if (rpc == "KeyExchange") return "key exchange";
  if (rpc.find("Decrypt") != std::string::npos) return "decrypt";
  return "encrypt";
}

grpc::Status ToGrpc(const absl::Status& st) {
  return st.ok() ? grpc::Status::OK
                 : grpc::Status(static_cast<grpc::StatusCode>(st.code()), std::string(st.message()));
}

struct Measurer {
  const Config& config;
  Context& ctx;

  // SymmetricSeal sends `total` bytes (`chunk` repeated) through EncryptStream in messages
  // of chunk.size(). With `out`, it also returns the DecryptStream requests that decrypt
  // it: the parameters (same key, the nonce drawn, same padding), then each response's
  // ciphertext and tag as one message (GCM/CCM: one message per segment).
  absl::Status SymmetricSeal(grpc::ClientContext& cctx, v1::Algorithm alg, size_t total,
                             const std::string& chunk, std::vector<v1::DecryptStreamRequest>* out) {
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

  // HybridSeal is SymmetricSeal for HybridEncryptStream (the public key; `out` gets the
  // HybridDecryptStream requests: the private key, then each response's ciphertext).
  absl::Status HybridSeal(grpc::ClientContext& cctx, v1::Algorithm alg, size_t total,
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

  absl::StatusOr<Step> Cell(const WorkloadSpec& spec, RunOptions opts, std::string scheme = "") {
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

  // Stream sends `total` bytes through HashStream, EncryptStream or HybridEncryptStream in
  // 1 MiB messages, one stream, and times it (the payload repeats one pseudo-random 1 MiB
  // chunk); DecryptStream and HybridDecryptStream decrypt that payload's ciphertext, made
  // before the measurement, and a plaintext that differs fails the operation (DATA_LOSS).
  absl::StatusOr<Step> Stream(const std::string& rpc, v1::Algorithm alg, size_t total) {
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
    std::vector<v1::DecryptStreamRequest> sealed;
    std::vector<v1::HybridDecryptStreamRequest> hybrid_sealed;
    if (rpc == "DecryptStream" || rpc == "HybridDecryptStream") {
      s.note = absl::StrCat("streams: one RPC carrying the ciphertext of one ",
                            rpc == "DecryptStream" ? "EncryptStream" : "HybridEncryptStream",
                            " (made before the measurement) in the messages it came in; "
                            "the plaintext is compared with what was encrypted");
      grpc::ClientContext pctx;
      pctx.set_deadline(
          absl::ToChronoTime(absl::Now() + std::max(config.timeout, absl::Minutes(30))));
      for (const auto& [key, value] : config.metadata) pctx.AddMetadata(key, value);
      ctx.preparer->Count(1);
      absl::Status st = rpc == "DecryptStream"
                            ? SymmetricSeal(pctx, alg, total, chunk, &sealed)
                            : HybridSeal(pctx, alg, total, chunk, &hybrid_sealed);
      if (!st.ok()) {
        return absl::Status(st.code(), absl::StrCat("preparing ", rpc, " (encrypting ",
                                                    SizeName(total), " once): ", st.message()));
      }
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
    Stub& stub = *ctx.stubs.front();
    grpc::ClientContext cctx;
    cctx.set_deadline(absl::ToChronoTime(absl::Now() + std::max(config.timeout, absl::Minutes(30))));
    for (const auto& [key, value] : config.metadata) cctx.AddMetadata(key, value);
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = ProcessCpuSeconds();
    grpc::Status status;
    if (rpc == "HashStream") {
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
      status = writer->Finish();
    } else if (rpc == "EncryptStream") {
      status = ToGrpc(SymmetricSeal(cctx, alg, total, chunk, nullptr));
    } else if (rpc == "HybridEncryptStream") {
      status = ToGrpc(HybridSeal(cctx, alg, total, chunk, nullptr));
    } else if (rpc == "DecryptStream") {
      PayloadCheck check(chunk, total);
      auto stream = stub.DecryptStream(&cctx);
      size_t next = 0;
      absl::Status st = cli::PumpBidiStream<v1::DecryptStreamRequest, v1::DecryptStreamResponse>(
          cctx, *stream,
          [&]() -> absl::StatusOr<std::optional<v1::DecryptStreamRequest>> {
            if (next >= sealed.size()) return std::nullopt;
            return std::move(sealed[next++]);
          },
          [&](const v1::DecryptStreamResponse& resp) {
            check.Add(resp.plaintext());
            return absl::OkStatus();
          });
      status = ToGrpc(st.ok() ? check.Finish() : st);
    } else if (rpc == "HybridDecryptStream") {
      PayloadCheck check(chunk, total);
      auto stream = stub.HybridDecryptStream(&cctx);
      size_t next = 0;
      absl::Status st =
          cli::PumpBidiStream<v1::HybridDecryptStreamRequest, v1::HybridDecryptStreamResponse>(
              cctx, *stream,
              [&]() -> absl::StatusOr<std::optional<v1::HybridDecryptStreamRequest>> {
                if (next >= hybrid_sealed.size()) return std::nullopt;
                return std::move(hybrid_sealed[next++]);
              },
              [&](const v1::HybridDecryptStreamResponse& resp) {
                check.Add(resp.plaintext());
                return absl::OkStatus();
              });
      status = ToGrpc(st.ok() ? check.Finish() : st);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown stream RPC ", rpc));
    }
    const auto t1 = std::chrono::steady_clock::now();
    r.rpcs = 1;
    r.max_inflight = 1;
    r.seconds = std::chrono::duration<double>(t1 - t0).count();
    r.client_cpu_seconds = ProcessCpuSeconds() - cpu0;
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
};

RunOptions Closed(int concurrency, absl::Duration duration, int64_t max_ops) {
  RunOptions o;
  o.concurrency = concurrency;
  o.duration = duration;
  o.max_ops = max_ops;
  return o;
}

std::vector<v1::Algorithm> AlgsOr(const Config& c, std::vector<v1::Algorithm> def) {
  return c.algs.empty() ? def : c.algs;
}

// ---- baseline ---------------------------------------------------------------------

absl::StatusOr<ScenarioReport> Baseline(const Config& config, Context& ctx) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "baseline";
  rep.description =
      "one caller, one request at a time; SM2 public-key encryption (\"ECC\") vs HPKE "
      "hybrid encryption (\"ECC+AES\"), with the P-256 and RSA counterparts";
  const std::vector<size_t> sizes =
      config.sizes.empty()
          ? std::vector<size_t>{512, kKiB, 2 * kKiB, 10 * kKiB, 20 * kKiB, 30 * kKiB, 512 * kKiB, kMiB}
          : config.sizes;
  const std::vector<v1::Algorithm> algs =
      AlgsOr(config, {v1::SM2, v1::HPKE_SM2_SM3_SM4GCM, v1::HPKE_P256_SHA256_AES128GCM,
                      v1::RSA_2048_OAEP});
  const absl::Duration cap = config.duration.value_or(absl::Seconds(2));
  const int64_t max_ops = config.requests.value_or(20);
  // mean latency (ms) per (op, size, alg)
  std::map<std::pair<int, size_t>, std::map<v1::Algorithm, double>> mean;
  for (int dec = 0; dec < 2; ++dec) {
    for (size_t size : sizes) {
      for (v1::Algorithm alg : algs) {
        absl::StatusOr<std::string> rpc = EncryptionRpc(alg, dec == 1);
        if (!rpc.ok()) return rpc.status();
        absl::StatusOr<Step> s = m.Cell({*rpc, alg, size}, Closed(1, cap, max_ops));
        if (!s.ok()) return s.status();
        mean[{dec, size}][alg] = s->result.latency.Mean() / 1e6;
        rep.steps.push_back(std::move(*s));
      }
    }
  }
  Table t;
  t.id = "baseline_schemes";
  t.title = "Mean latency per operation (ms), one caller; ratio = SM2 time / HPKE-SM2-SM3-SM4GCM time "
            "(> 1: the hybrid scheme is faster)";
  t.columns = {"op", "size"};
  for (v1::Algorithm a : algs) t.columns.push_back(AlgorithmName(a));
  const bool both = std::count(algs.begin(), algs.end(), v1::SM2) &&
                    std::count(algs.begin(), algs.end(), v1::HPKE_SM2_SM3_SM4GCM);
  if (both) t.columns.push_back("SM2 / HPKE-SM");
  for (const auto& [key, by_alg] : mean) {
    std::vector<std::string> row = {key.first ? "decrypt" : "encrypt", SizeName(key.second)};
    for (v1::Algorithm a : algs) row.push_back(F(by_alg.at(a), 3));
    if (both) row.push_back(Ratio(by_alg.at(v1::SM2), by_alg.at(v1::HPKE_SM2_SM3_SM4GCM), 2));
    t.rows.push_back(row);
  }
  t.label_columns = {0, 1};
  for (size_t i = 0; i < algs.size(); ++i) t.value_columns.push_back(static_cast<int>(2 + i));
  t.y_label = "mean latency (ms)";
  t.log_y = true;
  rep.tables.push_back(t);
  return rep;
}

// ---- load -------------------------------------------------------------------------

absl::StatusOr<ScenarioReport> Load(const Config& config, Context& ctx, absl::Duration def) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "load";
  const size_t size = config.sizes.empty() ? 512 : config.sizes.front();
  const int conc = config.concurrency.value_or(1);
  const absl::Duration duration = config.duration.value_or(def);
  rep.description = absl::StrCat(SizeName(size), " encryptions for ", absl::FormatDuration(duration),
                                 " per scheme, ", conc, " caller", conc == 1 ? "" : "s",
                                 "; daily capacity = rate x 8 h x 0.2 / 0.8");
  const std::vector<v1::Algorithm> algs = AlgsOr(config, {v1::SM2, v1::HPKE_SM2_SM3_SM4GCM});
  Table t;
  t.id = "load_capacity";
  t.title = "Load: totals, mean rate and the study's daily-capacity estimate (study: Java ECC / "
            "ECC+AES on an i7-9750H, 5 min, one caller)";
  t.columns = {"scheme", "study name", "total", "seconds", "mean rate /s", "daily capacity",
               "study total (5 min)", "study daily capacity"};
  for (v1::Algorithm alg : algs) {
    absl::StatusOr<std::string> rpc = EncryptionRpc(alg, false);
    if (!rpc.ok()) return rpc.status();
    absl::StatusOr<Step> s = m.Cell({*rpc, alg, size}, Closed(conc, duration, config.requests.value_or(0)));
    if (!s.ok()) return s.status();
    const RunResult& r = s->result;
    const double daily = paper::DailyCapacity(r.OpsPerSecond());
    const std::string study = StudyName(alg);
    std::string st_total = "-", st_daily = "-";
    if (study == "ECC") {
      st_total = absl::StrFormat("%.0f", paper::kLoadTotalEcc);
      st_daily = absl::StrFormat("%.2fM", paper::kDailyCapacityEcc / 1e6);
    } else if (study == "ECC+AES") {
      st_total = absl::StrFormat("%.0f", paper::kLoadTotalEccAes);
      st_daily = absl::StrFormat("%.2fM", paper::kDailyCapacityEccAes / 1e6);
    }
    t.rows.push_back({s->scheme, study.empty() ? "-" : study, absl::StrCat(r.ops_ok),
                      F(r.seconds, 1), F(r.OpsPerSecond(), 1), absl::StrFormat("%.2fM", daily / 1e6),
                      st_total, st_daily});
    rep.summary.push_back({absl::StrCat("ops_per_second.", s->algorithm), r.OpsPerSecond()});
    rep.summary.push_back({absl::StrCat("daily_capacity.", s->algorithm), daily});
    rep.steps.push_back(std::move(*s));
  }
  rep.tables.push_back(t);
  return rep;
}

// ---- concurrency ------------------------------------------------------------------

absl::StatusOr<ScenarioReport> Concurrency(const Config& config, Context& ctx,
                                           std::vector<int> def_steps, absl::Duration def) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "concurrency";
  const size_t size = config.sizes.empty() ? 512 : config.sizes.front();
  const std::vector<int> steps = config.steps.empty() ? def_steps : config.steps;
  const absl::Duration duration = config.duration.value_or(def);
  rep.description = absl::StrCat(SizeName(size), " encryptions, closed loop, ",
                                 absl::FormatDuration(duration),
                                 " per step (then the operations in flight drain)");
  const std::vector<v1::Algorithm> algs = AlgsOr(config, {v1::SM2, v1::HPKE_SM2_SM3_SM4GCM});
  Table t;
  t.id = "concurrency_peak";
  t.title = "Concurrency: the throughput peak per scheme (study: 363.5/s ECC, 368.2/s ECC+AES, "
            "both at 20,000 concurrent)";
  t.columns = {"scheme", "study name", "peak ops/s", "at in flight", "p99 ms there",
               "errors (all steps)", "max in flight (client)", "max in flight (server)",
               "study peak /s"};
  double total_errors = 0, max_client = 0, max_server = 0;
  for (v1::Algorithm alg : algs) {
    absl::StatusOr<std::string> rpc = EncryptionRpc(alg, false);
    if (!rpc.ok()) return rpc.status();
    const Step* peak = nullptr;
    int64_t errors = 0, mc = 0;
    double ms = 0;
    const size_t first = rep.steps.size();
    for (int c : steps) {
      absl::StatusOr<Step> s =
          m.Cell({*rpc, alg, size}, Closed(c, duration, config.requests.value_or(0)));
      if (!s.ok()) return s.status();
      rep.steps.push_back(std::move(*s));
    }
    for (size_t i = first; i < rep.steps.size(); ++i) {
      const Step& s = rep.steps[i];
      if (peak == nullptr || s.result.OpsPerSecond() > peak->result.OpsPerSecond()) peak = &s;
      errors += s.result.ops_failed;
      mc = std::max(mc, s.result.max_inflight);
      ms = std::max(ms, s.result.server_inflight_peak);
    }
    const std::string study = StudyName(alg);
    const double study_peak = study == "ECC"       ? paper::kPeakRateEcc
                              : study == "ECC+AES" ? paper::kPeakRateEccAes
                                                   : 0;
    t.rows.push_back({AlgorithmName(alg), study.empty() ? "-" : study,
                      F(peak->result.OpsPerSecond(), 1), absl::StrCat(peak->concurrency),
                      F(peak->result.latency.ValueAtPercentile(99) / 1e6, 1), absl::StrCat(errors),
                      absl::StrCat(mc), ms > 0 ? absl::StrFormat("%.0f", ms) : "-",
                      study_peak > 0 ? F(study_peak, 1) : "-"});
    rep.summary.push_back({absl::StrCat("peak_ops_per_second.", AlgorithmName(alg)),
                           peak->result.OpsPerSecond()});
    rep.summary.push_back({absl::StrCat("peak_concurrency.", AlgorithmName(alg)),
                           static_cast<double>(peak->concurrency)});
    total_errors += static_cast<double>(errors);
    max_client = std::max(max_client, static_cast<double>(mc));
    max_server = std::max(max_server, ms);
  }
  t.note = "in flight (server): smcrypt_inflight_requests sampled about once a second, the calls "
           "smcryptd has started and not finished; the others wait in the HTTP/2 connections";
  rep.summary.push_back({"errors", total_errors});
  rep.summary.push_back({"max_inflight_client", max_client});
  rep.summary.push_back({"max_inflight_server", max_server});
  rep.tables.push_back(t);
  return rep;
}

// ---- paper ------------------------------------------------------------------------

absl::StatusOr<ScenarioReport> Paper(const Config& config, Context& ctx) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "paper";
  rep.description =
      "the published ratio and throughput tables beside the same figures measured through "
      "smcryptd (one caller; every figure includes the RPC round trip, which dominates "
      "small payloads)";
  const absl::Duration cap = config.duration.value_or(absl::Milliseconds(500));
  const int64_t max_ops = config.requests.value_or(2000);
  // Mean latency (ns) of one cell; 0 when it failed.
  auto cell = [&](const std::string& rpc, v1::Algorithm alg, size_t size) -> absl::StatusOr<double> {
    absl::StatusOr<Step> s = m.Cell({rpc, alg, size}, Closed(1, cap, max_ops));
    if (!s.ok()) return s.status();
    const double mean = s->result.ops_ok > 0 ? s->result.latency.Mean() : 0;
    rep.steps.push_back(std::move(*s));
    return mean;
  };
#define SMCRYPT_CELL(var, rpc, alg, size)             \
  absl::StatusOr<double> var##_or = cell(rpc, alg, size); \
  if (!var##_or.ok()) return var##_or.status();       \
  const double var = *var##_or

  {  // SM3 / SHA-256 running time.
    Table t;
    t.id = "paper_sm3_sha256";
    t.title = "SM3 / SHA-256 running-time ratio (Hu 2021 table 2; > 1: SM3 is slower)";
    t.columns = {"size", "paper vendor A", "paper OpenSSL", "smcryptd", "SM3 mean us",
                 "SHA-256 mean us"};
    for (size_t i = 0; i < 6; ++i) {
      const size_t n = paper::kHashSizes[i];
      SMCRYPT_CELL(sm3, "Hash", v1::SM3, n);
      SMCRYPT_CELL(sha, "Hash", v1::SHA_256, n);
      t.rows.push_back({SizeName(n), F(paper::kSm3OverSha256VendorA[i], 4),
                        F(paper::kSm3OverSha256OpenSsl[i], 4), Ratio(sm3, sha, 4),
                        F(sm3 / 1e3, 1), F(sha / 1e3, 1)});
    }
    t.label_columns = {0};
    t.value_columns = {1, 2, 3};
    t.y_label = "SM3 time / SHA-256 time";
    t.reference = 1;
    rep.tables.push_back(t);
  }
  {  // Signatures.
    Table t;
    t.id = "paper_signatures";
    t.title = "Signature running-time ratios over a 32-byte message (Hu 2021 table 5; > 1: the "
              "numerator is slower)";
    t.columns = {"ratio", "op", "paper", "smcryptd"};
    const char* rpcs[2] = {"Sign", "Verify"};
    double sm2[2], p256[2], k1[2];
    for (int o = 0; o < 2; ++o) {
      SMCRYPT_CELL(a, rpcs[o], v1::SM2, 32);
      SMCRYPT_CELL(b, rpcs[o], v1::ECDSA_P256, 32);
      SMCRYPT_CELL(c, rpcs[o], v1::ECDSA_SECP256K1, 32);
      sm2[o] = a;
      p256[o] = b;
      k1[o] = c;
    }
    for (int o = 0; o < 2; ++o) {
      t.rows.push_back({"ECDSA-secp256k1 / SM2", o ? "verify" : "sign",
                        F(paper::kSignEcdsaK1OverSm2[o]), Ratio(k1[o], sm2[o], 2)});
    }
    for (int o = 0; o < 2; ++o) {
      t.rows.push_back({"ECDSA-secp256k1 / ECDSA-P256", o ? "verify" : "sign",
                        F(paper::kSignEcdsaK1OverP256[o]), Ratio(k1[o], p256[o], 2)});
    }
    t.label_columns = {0, 1};
    t.value_columns = {2, 3};
    t.y_label = "running-time ratio";
    t.log_y = true;
    t.reference = 1;
    rep.tables.push_back(t);
  }
  {  // Public-key encryption.
    Table t;
    t.id = "paper_pke";
    t.title = "Public-key encryption running time X / SM2 (Hu 2021 table 7; paper: X / OpenSSL "
              "SM2; RSA beyond one OAEP block: consecutive maximum-size blocks)";
    t.columns = {"op", "size", "paper RSA-2048", "paper RSA-3072", "smcryptd RSA-2048",
                 "smcryptd RSA-3072", "SM2 mean us"};
    for (int o = 0; o < 2; ++o) {
      const std::string rpc = o ? "PublicKeyDecrypt" : "PublicKeyEncrypt";
      for (size_t i = 0; i < 7; ++i) {
        const size_t n = paper::kPkeSizes[i];
        SMCRYPT_CELL(sm2, rpc, v1::SM2, n);
        SMCRYPT_CELL(r2, rpc, v1::RSA_2048_OAEP, n);
        SMCRYPT_CELL(r3, rpc, v1::RSA_3072_OAEP, n);
        t.rows.push_back({o ? "decrypt" : "encrypt", SizeName(n), F(paper::kPkeRatio[o][1][i], 3),
                          F(paper::kPkeRatio[o][2][i], 3), Ratio(r2, sm2), Ratio(r3, sm2),
                          F(sm2 / 1e3, 1)});
      }
    }
    t.label_columns = {0, 1};
    t.value_columns = {2, 3, 4, 5};
    t.y_label = "running time / SM2 running time";
    t.log_y = true;
    t.reference = 1;
    rep.tables.push_back(t);
  }
  for (int mode = 0; mode < 2; ++mode) {  // SM4 / AES ECB and CBC.
    const std::string mname = mode ? "CBC" : "ECB";
    const v1::Algorithm sm4 = mode ? v1::SM4_CBC : v1::SM4_ECB;
    const v1::Algorithm aes = mode ? v1::AES_128_CBC : v1::AES_128_ECB;
    const auto& pub = mode ? paper::kCbcRatio : paper::kEcbRatio;
    Table t;
    t.id = absl::StrCat("paper_sm4_", mode ? "cbc" : "ecb");
    t.title = absl::StrCat("SM4-", mname, " / AES-128-", mname,
                           " throughput ratio (Hu 2021 table ", mode ? 9 : 8,
                           "; paper: OpenSSL SM4 / AES-EVP = its SM4/AES over AESEVP/AES; < 1: SM4 "
                           "is slower)");
    t.columns = {"op", "size", "paper OpenSSL SM4/AES-EVP", "smcryptd SM4/AES-128", "SM4 MB/s",
                 "AES-128 MB/s"};
    for (int o = 0; o < 2; ++o) {
      const std::string rpc = o ? "Decrypt" : "Encrypt";
      for (size_t i = 0; i < 9; ++i) {
        const size_t n = paper::kBlockSizes[i];
        SMCRYPT_CELL(s, rpc, sm4, n);
        SMCRYPT_CELL(a, rpc, aes, n);
        t.rows.push_back({o ? "decrypt" : "encrypt", SizeName(n),
                          F(pub[o][1][i] / pub[o][2][i], 4), Ratio(a, s, 4),
                          F(s > 0 ? n / (s / 1e9) / 1e6 : 0, 1), F(a > 0 ? n / (a / 1e9) / 1e6 : 0, 1)});
      }
    }
    t.label_columns = {0, 1};
    t.value_columns = {2, 3};
    t.y_label = "SM4 throughput / AES-128 throughput";
    t.log_y = true;
    t.reference = 1;
    rep.tables.push_back(t);
  }
  const size_t big = config.stream_bytes;
  {  // SM4 vs AES-GCM throughput at 1 KiB, 1 MiB and the streamed 1 GiB.
    Table t;
    t.id = "paper_gcm";
    t.title = absl::StrCat("Symmetric encryption throughput, MB/s (SM4 vs AES-GCM study: published "
                           "at 1 GiB only, OpenSSL 3.0.2); ", SizeName(big), " through EncryptStream");
    t.columns = {"algorithm", "size", "smcryptd MB/s", "published software MB/s",
                 "published hardware MB/s"};
    for (v1::Algorithm alg : {v1::SM4_GCM, v1::AES_128_GCM, v1::SM4_ECB, v1::AES_256_GCM}) {
      const std::string name = AlgorithmName(alg);
      const paper::GcmFigure* fig = nullptr;
      for (const auto& g : paper::kGcm1GiB) {
        if (name == g.algorithm) fig = &g;
      }
      for (size_t n : {kKiB, kMiB}) {
        SMCRYPT_CELL(mean, "Encrypt", alg, n);
        t.rows.push_back({name, SizeName(n), F(mean > 0 ? n / (mean / 1e9) / 1e6 : 0, 1), "-", "-"});
      }
      absl::StatusOr<Step> s = m.Stream("EncryptStream", alg, big);
      if (!s.ok()) return s.status();
      t.rows.push_back({name, SizeName(big), F(s->result.MegabytesPerSecond(), 1),
                        fig ? F(fig->software_mb_s, 0) : "-", fig ? F(fig->hardware_mb_s, 0) : "-"});
      rep.steps.push_back(std::move(*s));
    }
    t.label_columns = {0, 1};
    t.value_columns = {2, 3, 4};
    t.y_label = "MB/s";
    t.log_y = true;
    rep.tables.push_back(t);
  }
  {  // SM3 vs SHA-256 throughput.
    Table t;
    t.id = "paper_sm3_sha256_throughput";
    t.title = absl::StrCat("SM3 vs SHA-256 throughput (SM3 vs SHA-256 study, Xeon Gold 6338); ",
                           SizeName(big), " through HashStream");
    t.columns = {"algorithm", "size", "unit", "smcryptd", "published"};
    for (v1::Algorithm alg : {v1::SM3, v1::SHA_256}) {
      const bool sm3 = alg == v1::SM3;
      SMCRYPT_CELL(k, "Hash", alg, kKiB);
      t.rows.push_back({AlgorithmName(alg), "1 KiB", "ops/s", F(k > 0 ? 1e9 / k : 0, 0),
                        F(sm3 ? paper::kSm3Ops1KiB : paper::kSha256Ops1KiB, 0)});
      SMCRYPT_CELL(mb, "Hash", alg, kMiB);
      t.rows.push_back({AlgorithmName(alg), "1 MiB", "MB/s", F(mb > 0 ? kMiB / (mb / 1e9) / 1e6 : 0, 1),
                        F((sm3 ? paper::kSm3GBs1MiB : paper::kSha256GBs1MiB) * 1000, 0)});
      absl::StatusOr<Step> s = m.Stream("HashStream", alg, big);
      if (!s.ok()) return s.status();
      t.rows.push_back({AlgorithmName(alg), SizeName(big), "MB/s", F(s->result.MegabytesPerSecond(), 1),
                        big == (size_t{1} << 30)
                            ? F((sm3 ? paper::kSm3GBs1GiB : paper::kSha256GBs1GiB) * 1000, 0)
                            : "-"});
      rep.steps.push_back(std::move(*s));
    }
    t.note = "published 1 KiB figures are operations per second, the others GB/s shown as MB/s";
    t.label_columns = {0, 1, 2};
    t.value_columns = {3, 4};
    t.y_label = "ops/s (1 KiB) or MB/s";
    t.log_y = true;
    rep.tables.push_back(t);
  }
#undef SMCRYPT_CELL
  return rep;
}

// ---- run (generic) ----------------------------------------------------------------

absl::StatusOr<ScenarioReport> Generic(const Config& config, Context& ctx) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "run";
  if (config.rpc.empty()) return absl::InvalidArgumentError("--scenario run needs --rpc");
  if (config.algs.empty() && config.rpc != "GenerateRandom" && config.rpc != "GetServerInfo") {
    return absl::InvalidArgumentError("--scenario run needs --alg");
  }
  const v1::Algorithm alg = config.algs.empty() ? v1::ALGORITHM_UNSPECIFIED : config.algs.front();
  const size_t size = config.sizes.empty() ? 512 : config.sizes.front();
  if (config.rpc == "HashStream" || config.rpc == "EncryptStream" ||
      config.rpc == "HybridEncryptStream" || config.rpc == "DecryptStream" ||
      config.rpc == "HybridDecryptStream") {
    rep.description = absl::StrCat(config.rpc, " ", AlgorithmName(alg), ", one stream of ",
                                   SizeName(size));
    if (config.concurrency || config.duration || config.requests || config.rate > 0) {
      std::fprintf(stderr,
                   "smcrypt-load: --rpc %s is one stream of --size; --concurrency, --duration, "
                   "--requests and --rate do not apply to it\n",
                   config.rpc.c_str());
    }
    absl::StatusOr<Step> s = m.Stream(config.rpc, alg, size);
    if (!s.ok()) return s.status();
    rep.steps.push_back(std::move(*s));
    return rep;
  }
  RunOptions o;
  o.rate = config.rate;
  o.rate_end = config.rate_end;
  o.concurrency = config.concurrency.value_or(config.rate > 0 ? 1000 : 1);
  o.max_ops = config.requests.value_or(0);
  o.duration = config.duration.value_or(o.max_ops > 0 ? absl::ZeroDuration() : kRunDuration);
  rep.description = absl::StrCat(
      config.rpc, " ", AlgorithmName(alg), " ",
      config.rpc == "KeyExchange" ? "(16-byte K)" : SizeName(size), ", ",
      config.rate > 0 ? absl::StrCat("open loop at ", config.rate,
                                     config.rate_end > 0 ? absl::StrCat(" ramping to ", config.rate_end) : "",
                                     "/s (latency from the scheduled "
                                     "start: coordinated omission corrected), at most ",
                                     o.concurrency, " in flight")
                      : absl::StrCat("closed loop, ", o.concurrency, " in flight"));
  absl::StatusOr<Step> s = m.Cell({config.rpc, alg, size, config.batch_items}, o);
  if (s.ok() && absl::EndsWith(config.rpc, "Batch")) {
    s->note = absl::StrCat(config.rpc, ": ", config.batch_items, " items of ", SizeName(size),
                           " per RPC; an operation is one RPC, a failed item fails it");
  }
  if (!s.ok()) return s.status();
  if (config.rate > 0) {
    const Histogram& h = s->result.service;
    Table t;
    t.title = "Open loop: latency from the actual send (uncorrected, for comparison), ms";
    t.columns = {"mean", "p50", "p90", "p99", "p99.9", "max"};
    t.rows.push_back({F(h.Mean() / 1e6, 3), F(h.ValueAtPercentile(50) / 1e6, 3),
                      F(h.ValueAtPercentile(90) / 1e6, 3), F(h.ValueAtPercentile(99) / 1e6, 3),
                      F(h.ValueAtPercentile(99.9) / 1e6, 3), F(h.max() / 1e6, 3)});
    rep.tables.push_back(t);
  }
  rep.steps.push_back(std::move(*s));
  return rep;
}

}  // namespace

absl::StatusOr<std::vector<ScenarioReport>> RunScenario(const std::string& name,
                                                        const Config& config, Context& ctx) {
  std::vector<ScenarioReport> out;
  auto add = [&](absl::StatusOr<ScenarioReport> r) -> absl::Status {
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
    return absl::OkStatus();
  };
  absl::Status st;
  if (name == "baseline") {
    st = add(Baseline(config, ctx));
  } else if (name == "load") {
    st = add(Load(config, ctx, kLoadDuration));
  } else if (name == "concurrency") {
    st = add(Concurrency(config, ctx, {std::begin(kDefaultSteps), std::end(kDefaultSteps)},
                         kConcurrencyStepDuration));
  } else if (name == "paper") {
    st = add(Paper(config, ctx));
  } else if (name == "quick") {
    st = add(Load(config, ctx, absl::Seconds(10)));
    if (st.ok()) st = add(Concurrency(config, ctx, {1, 10, 100, 1000, 10000}, absl::Seconds(4)));
  } else if (name == "run") {
    st = add(Generic(config, ctx));
  } else {
    st = absl::InvalidArgumentError(absl::StrCat(
        "--scenario ", name, ": expected quick, baseline, load, concurrency, paper or run"));
  }
  if (!st.ok()) return st;
  return out;
}

}  // namespace smcrypt::load
