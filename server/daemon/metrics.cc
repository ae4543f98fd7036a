#include "server/daemon/metrics.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/server_context.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "server/daemon/process_metrics.h"

#ifndef SMCRYPT_VERSION
#error "SMCRYPT_VERSION is defined by server/CMakeLists.txt"
#endif

namespace smcrypt::server {
namespace {

constexpr absl::string_view kCryptoService = "smcrypt.v1.CryptoService";

struct MethodDef {
  absl::string_view service;
  absl::string_view method;
  absl::string_view type;  // grpc-ecosystem spelling
};

// The fixed method set: CryptoService, health and reflection.
constexpr MethodDef kMethods[] = {
    {kCryptoService, "Hash", "unary"},
    {kCryptoService, "HashStream", "client_stream"},
    {kCryptoService, "HashBatch", "unary"},
    {kCryptoService, "Hmac", "unary"},
    {kCryptoService, "Sign", "unary"},
    {kCryptoService, "Verify", "unary"},
    {kCryptoService, "SignBatch", "unary"},
    {kCryptoService, "VerifyBatch", "unary"},
    {kCryptoService, "Encrypt", "unary"},
    {kCryptoService, "Decrypt", "unary"},
    {kCryptoService, "EncryptBatch", "unary"},
    {kCryptoService, "EncryptStream", "bidi_stream"},
    {kCryptoService, "DecryptStream", "bidi_stream"},
    {kCryptoService, "PublicKeyEncrypt", "unary"},
    {kCryptoService, "PublicKeyDecrypt", "unary"},
    {kCryptoService, "HybridEncrypt", "unary"},
    {kCryptoService, "HybridEncryptBatch", "unary"},
    {kCryptoService, "HybridDecrypt", "unary"},
    {kCryptoService, "HybridEncryptStream", "bidi_stream"},
    {kCryptoService, "HybridDecryptStream", "bidi_stream"},
    {kCryptoService, "KeyExchange", "bidi_stream"},
    {kCryptoService, "GenerateKeyPair", "unary"},
    {kCryptoService, "GetPublicKey", "unary"},
    {kCryptoService, "GenerateRandom", "unary"},
    {kCryptoService, "GetServerInfo", "unary"},
    {kCryptoService, "Rewrap", "unary"},
    {kCryptoService, "RewrapBatch", "unary"},
    {kCryptoService, "GenerateDataKey", "unary"},
    {kCryptoService, "GenerateDataKeyWithoutPlaintext", "unary"},
    {"grpc.health.v1.Health", "Check", "unary"},
    {"grpc.health.v1.Health", "Watch", "server_stream"},
    {"grpc.reflection.v1alpha.ServerReflection", "ServerReflectionInfo", "bidi_stream"},
};

std::vector<Operation> OperationsOf(Algorithm alg) {
  if (IsHashAlgorithm(alg)) return {Operation::kHash};
  if (IsMacAlgorithm(alg)) return {Operation::kMac};
  if (alg == Algorithm::kSm2) {
    return {Operation::kSign, Operation::kVerify, Operation::kEncrypt, Operation::kDecrypt};
  }
  if (IsSignatureAlgorithm(alg)) return {Operation::kSign, Operation::kVerify};
  return {Operation::kEncrypt, Operation::kDecrypt};
}

bool Performs(Algorithm alg, Operation op) {
  for (Operation o : OperationsOf(alg)) {
    if (o == op) return true;
  }
  return false;
}

// CompilerName is the compiler that built smcryptd, e.g. "gcc 12.2.0", "clang 14.0.6".
std::string CompilerName() {
#if defined(__clang__)
  return absl::StrCat("clang ", __clang_major__, ".", __clang_minor__, ".", __clang_patchlevel__);
#elif defined(__GNUC__)
  return absl::StrCat("gcc ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

size_t AlgorithmIndex(Algorithm alg) {
  absl::Span<const Algorithm> all = AllAlgorithms();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == alg) return i;
  }
  return all.size();
}

// AuditCollector reads the audit log's AuditStats at scrape time (audit_log.h).
class AuditCollector final : public prometheus::Collectable {
 public:
  explicit AuditCollector(const AuditLog* audit) : audit_(audit) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    const AuditStats s = audit_ != nullptr ? audit_->stats() : AuditStats();
    using prometheus::MetricType;
    return {
        One("smcrypt_audit_lines_written_total", "Audit lines written.", MetricType::Counter,
            s.lines_written),
        One("smcrypt_audit_lines_dropped_total",
            "Audit lines dropped: a full queue, or a failed write under --audit_failure=open.",
            MetricType::Counter, s.lines_dropped),
        One("smcrypt_audit_write_errors_total",
            "Failed writes and (re)opens of the audit log.", MetricType::Counter,
            s.write_errors),
        One("smcrypt_audit_queue_lines", "Audit lines queued, not yet written.",
            MetricType::Gauge, s.queue_lines),
        One("smcrypt_audit_queue_bytes", "Bytes of audit lines queued, not yet written.",
            MetricType::Gauge, s.queue_bytes),
        One("smcrypt_audit_healthy",
            "1 while audit lines are written; 0 from a failed write, a failed reopen or a "
            "full queue until the next successful write.",
            MetricType::Gauge, s.healthy ? 1 : 0),
    };
  }

 private:
  static prometheus::MetricFamily One(const char* name, const char* help,
                                      prometheus::MetricType type, uint64_t value) {
    prometheus::MetricFamily f;
    f.name = name;
    f.help = help;
    f.type = type;
    prometheus::ClientMetric m;
    if (type == prometheus::MetricType::Counter) {
      m.counter.value = static_cast<double>(value);
    } else {
      m.gauge.value = static_cast<double>(value);
    }
    f.metric.push_back(m);
    return f;
  }

  const AuditLog* audit_;
};

// MetricsInterceptor records one call: grpc_server_started_total when it is created,
// grpc_server_handled_total and grpc_server_handling_seconds when its status is sent (so
// a client that has its answer finds it counted), or when gRPC reports the call closed
// without one. The outcome is the code the client receives: the status the handler sent,
// unless the call was already over (gRPC cancelled it: the client cancelled, or its
// deadline passed; ServerContextBase::IsCancelled is valid at any time for callback
// calls, the CryptoService's). Such a call is DEADLINE_EXCEEDED when its deadline had
// passed or was less than kDeadlineSlack away, else CANCELLED, whatever status the handler
// sent. For every call, a status sent after its deadline is DEADLINE_EXCEEDED. A
// cancellation that arrives after the status was sent is not seen.
class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(Metrics* metrics, const Metrics::MethodMetrics* method,
                     grpc::ServerContextBase* ctx)
      : metrics_(metrics),
        method_(method),
        callback_ctx_(dynamic_cast<grpc::CallbackServerContext*>(ctx)),
        ctx_(ctx),
        start_(std::chrono::steady_clock::now()) {
    metrics_->inflight().fetch_add(1, std::memory_order_relaxed);
    metrics_->inflight_gauge().Increment();
    if (method_ != nullptr) method_->started->Increment();
  }

  ~MetricsInterceptor() override {
    // A call that ended without a status or a reported close is counted as CANCELLED.
    {
      absl::MutexLock lock(&mu_);
      Record(grpc::StatusCode::CANCELLED, std::chrono::steady_clock::now());
    }
    Leave();
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    // A message received: the read succeeded (a failed read, the end of a client stream,
    // has no message). A message sent: handed to the transport.
    if (method_ != nullptr &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      method_->msg_received->Increment();
    }
    if (method_ != nullptr &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      method_->msg_sent->Increment();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      OnStatusSent(methods->GetSendStatus().error_code());
      // The call stops counting against --max_inflight before its status is sent, so a
      // client that waits for each answer never finds its previous call still counted.
      Leave();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_CLOSE)) {
      OnClosed();
    }
    methods->Proceed();
  }

 private:
  bool DeadlinePassed() const { return ctx_->deadline() <= std::chrono::system_clock::now(); }

  // The client's deadline reaches the server as a cancellation (RST_STREAM), shortly
  // before the server's own copy of the deadline, which started later by the request's
  // transit: a cancellation less than kDeadlineSlack before it is the deadline.
  static constexpr std::chrono::milliseconds kDeadlineSlack{100};
  bool DeadlineNear() const {
    return ctx_->deadline() <= std::chrono::system_clock::now() + kDeadlineSlack;
  }

  // CancelledCode: the code of a call gRPC cancelled, as its client sees it.
  grpc::StatusCode CancelledCode() const {
    return DeadlineNear() ? grpc::StatusCode::DEADLINE_EXCEEDED : grpc::StatusCode::CANCELLED;
  }
  bool Cancelled() const { return callback_ctx_ != nullptr && callback_ctx_->IsCancelled(); }

  void OnStatusSent(grpc::StatusCode code) {
    const bool cancelled = Cancelled();
    absl::MutexLock lock(&mu_);
    Record(cancelled         ? CancelledCode()
           : DeadlinePassed() ? grpc::StatusCode::DEADLINE_EXCEEDED
                              : code,
           std::chrono::steady_clock::now());
  }

  // OnClosed counts a call that ended without sending a status.
  void OnClosed() {
    const bool cancelled = Cancelled();
    absl::MutexLock lock(&mu_);
    if (cancelled) Record(CancelledCode(), std::chrono::steady_clock::now());
  }

  void Leave() {
    if (left_.exchange(true)) return;
    metrics_->inflight_gauge().Decrement();
    metrics_->inflight().fetch_sub(1, std::memory_order_relaxed);
  }

  void Record(grpc::StatusCode code, std::chrono::steady_clock::time_point end)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (recorded_) return;
    recorded_ = true;
    if (method_ == nullptr) return;
    int c = static_cast<int>(code);
    if (c < 0 || c >= kNumGrpcCodes) c = static_cast<int>(grpc::StatusCode::UNKNOWN);
    method_->handled[c]->Increment();
    method_->seconds->Observe(std::chrono::duration<double>(end - start_).count());
  }

  Metrics* const metrics_;
  const Metrics::MethodMetrics* const method_;
  grpc::CallbackServerContext* const callback_ctx_;  // null for sync calls
  grpc::ServerContextBase* const ctx_;
  const std::chrono::steady_clock::time_point start_;
  // PRE_SEND_STATUS and POST_RECV_CLOSE may run on two threads at once: the first to
  // record wins.
  absl::Mutex mu_;
  bool recorded_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> left_{false};
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(Metrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(metrics_, metrics_->ForMethod(info->method()),
                                  info->server_context());
  }

 private:
  Metrics* metrics_;
};

}  // namespace

void Metrics::OnBatch(BatchedOperation op, size_t size, absl::Span<const double> queued_seconds) {
  const int i = static_cast<int>(op);
  if (i < 0 || i >= kNumBatchedOperations) return;
  batch_size_[i]->Observe(static_cast<double>(size));
  for (double s : queued_seconds) batch_queue_seconds_[i]->Observe(s);
}

std::unique_ptr<Metrics> Metrics::New() {
  std::unique_ptr<Metrics> m(new Metrics());
  m->registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Registry& r = *m->registry_;
  // The families in the order of the exposition.
  m->AddGrpcFamilies(r);
  m->AddCryptoFamilies(r);
  m->AddReloadFamilies(r);
  m->AddBatchFamilies(r);
  m->AddGauges(r);
  m->process_collector_ = NewProcessCollector();
  m->audit_collector_ = std::make_shared<AuditCollector>(nullptr);
  return m;
}

// AddGrpcFamilies: the go-grpc-prometheus families, one child per method and code.
void Metrics::AddGrpcFamilies(prometheus::Registry& r) {
  auto& started = prometheus::BuildCounter()
                      .Name("grpc_server_started_total")
                      .Help("Total number of RPCs started on the server.")
                      .Register(r);
  auto& handled = prometheus::BuildCounter()
                      .Name("grpc_server_handled_total")
                      .Help("Total number of RPCs completed on the server, regardless of "
                            "success or failure.")
                      .Register(r);
  auto& seconds = prometheus::BuildHistogram()
                      .Name("grpc_server_handling_seconds")
                      .Help("Histogram of response latency (seconds) of gRPC that had been "
                            "application-level handled by the server.")
                      .Register(r);
  auto& msg_received = prometheus::BuildCounter()
                           .Name("grpc_server_msg_received_total")
                           .Help("Total number of RPC stream messages received on the server.")
                           .Register(r);
  auto& msg_sent = prometheus::BuildCounter()
                       .Name("grpc_server_msg_sent_total")
                       .Help("Total number of gRPC stream messages sent by the server.")
                       .Register(r);
  // 10 µs to 10 s.
  const prometheus::Histogram::BucketBoundaries buckets = {
      1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3,
      1e-2, 2.5e-2, 5e-2, 0.1,  0.25,   0.5,  1,    2.5,    5,    10};
  for (const MethodDef& d : kMethods) {
    MethodMetrics mm;
    const prometheus::Labels labels = {{"grpc_service", std::string(d.service)},
                                       {"grpc_method", std::string(d.method)},
                                       {"grpc_type", std::string(d.type)}};
    mm.started = &started.Add(labels);
    mm.seconds = &seconds.Add(labels, buckets);
    mm.msg_received = &msg_received.Add(labels);
    mm.msg_sent = &msg_sent.Add(labels);
    for (int c = 0; c < kNumGrpcCodes; ++c) {
      prometheus::Labels with_code = labels;
      with_code["grpc_code"] = std::string(GrpcCodeName(static_cast<grpc::StatusCode>(c)));
      mm.handled[c] = &handled.Add(with_code);
    }
    methods_.emplace(absl::StrCat("/", d.service, "/", d.method), mm);
  }
}

// AddCryptoFamilies: bytes processed, decryption and verification failures.
void Metrics::AddCryptoFamilies(prometheus::Registry& r) {
  auto& bytes = prometheus::BuildCounter()
                    .Name("smcrypt_bytes_processed_total")
                    .Help("Input bytes processed by the crypto core, by algorithm and operation.")
                    .Register(r);
  absl::Span<const Algorithm> all = AllAlgorithms();
  bytes_.resize(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    bytes_[i].fill(nullptr);
    for (Operation op : OperationsOf(all[i])) {
      bytes_[i][static_cast<int>(op)] =
          &bytes.Add({{"algorithm", std::string(AlgorithmName(all[i]))},
                      {"operation", std::string(OperationName(op))}});
    }
  }
  auto& decrypt_failures =
      prometheus::BuildCounter()
          .Name("smcrypt_decrypt_failures_total")
          .Help("Decryptions that failed authentication (\"decryption failed\": wrong key, "
                "tampered or truncated ciphertext, bad padding), by algorithm.")
          .Register(r);
  auto& verify_failures = prometheus::BuildCounter()
                              .Name("smcrypt_verify_failures_total")
                              .Help("Signatures and MACs that did not verify, by algorithm.")
                              .Register(r);
  decrypt_failures_.assign(all.size(), nullptr);
  verify_failures_.assign(all.size(), nullptr);
  for (size_t i = 0; i < all.size(); ++i) {
    const prometheus::Labels labels = {{"algorithm", std::string(AlgorithmName(all[i]))}};
    if (Performs(all[i], Operation::kDecrypt)) {
      decrypt_failures_[i] = &decrypt_failures.Add(labels);
    }
    if (Performs(all[i], Operation::kVerify) || Performs(all[i], Operation::kMac)) {
      verify_failures_[i] = &verify_failures.Add(labels);
    }
  }
  auto& trials = prometheus::BuildCounter()
                     .Name("smcrypt_key_version_trials_total")
                     .Help("Key versions tried beyond the first by checks whose keyring key "
                           "was named without a version, by operation and outcome "
                           "(authenticated: a version opened or verified; failed: none).")
                     .Register(r);
  for (Operation op : {Operation::kDecrypt, Operation::kVerify, Operation::kMac}) {
    for (bool ok : {true, false}) {
      trials_[static_cast<int>(op)][ok ? 1 : 0] =
          &trials.Add({{"operation", std::string(OperationName(op))},
                       {"outcome", ok ? "authenticated" : "failed"}});
    }
  }
}

// AddReloadFamilies: keyring and TLS reloads, and the build info.
void Metrics::AddReloadFamilies(prometheus::Registry& r) {
  auto& keyring_reloads = prometheus::BuildCounter()
                              .Name("smcrypt_keyring_reloads_total")
                              .Help("Reloads of the keyring (--keys_dir), by result.")
                              .Register(r);
  keyring_reloads_ok_ = &keyring_reloads.Add({{"result", "success"}});
  keyring_reloads_failed_ = &keyring_reloads.Add({{"result", "failure"}});
  auto& tls_reloads = prometheus::BuildCounter()
                          .Name("smcrypt_tls_certificate_reloads_total")
                          .Help("Reloads of the TLS certificate and key, by result.")
                          .Register(r);
  tls_reloads_ok_ = &tls_reloads.Add({{"result", "success"}});
  tls_reloads_failed_ = &tls_reloads.Add({{"result", "failure"}});
  tls_expiry_family_ =
      &prometheus::BuildGauge()
           .Name("smcrypt_tls_certificate_expiry_timestamp_seconds")
           .Help("notAfter of the TLS certificates in use (Unix time): certificate=\"server\" "
                 "the first certificate of --tls_cert, \"client_ca\" the earliest of "
                 "--tls_client_ca. Set when the files are loaded or reloaded; absent without "
                 "TLS.")
           .Register(r);
  keyring_load_timestamp_ = &prometheus::BuildGauge()
                                 .Name("smcrypt_keyring_load_timestamp_seconds")
                                 .Help("When the keyring in use was loaded (Unix time; 0 "
                                       "without --keys_dir).")
                                 .Register(r)
                                 .Add({});
  key_version_family_ = &prometheus::BuildGauge()
                             .Name("smcrypt_key_version_info")
                             .Help("One per loaded key version (value 1): key_id, version, "
                                   "and state primary, retained or retired.")
                             .Register(r);
  prometheus::BuildGauge()
      .Name("smcrypt_build_info")
      .Help("The smcryptd build (value 1): version, compiler, and the CPU it runs on.")
      .Register(r)
      .Add({{"version", SMCRYPT_VERSION},
            {"compiler", CompilerName()},
            {"cpu", FormatCpuIdentity(GetCpuIdentity())}})
      .Set(1);
}

void Metrics::OnTlsCertificatesInstalled(const TlsCertificateExpiry& expiry) {
  // Family::Add returns the existing child for labels it already has.
  for (const auto& [name, t] : {std::pair<const char*, absl::Time>{"server", expiry.server},
                                {"client_ca", expiry.client_ca}}) {
    if (t == absl::InfinitePast()) continue;
    tls_expiry_family_->Add({{"certificate", name}})
        .Set(static_cast<double>(absl::ToUnixMicros(t)) / 1e6);
  }
}

void Metrics::OnKeyringLoaded(const KeyStore& keys) {
  absl::MutexLock lock(&key_versions_mu_);
  for (prometheus::Gauge* g : key_version_gauges_) key_version_family_->Remove(g);
  key_version_gauges_.clear();
  for (const std::string& id : keys.key_ids()) {
    const uint32_t primary = keys.PrimaryVersion(id);
    const uint32_t min = keys.MinVersion(id);
    for (const StoredKey* e : keys.AllVersions(id)) {
      const char* state = e->version == primary ? "primary"
                          : e->version < min    ? "retired"
                                                : "retained";
      prometheus::Gauge& g = key_version_family_->Add(
          {{"key_id", id}, {"version", absl::StrCat(e->version)}, {"state", state}});
      g.Set(1);
      key_version_gauges_.push_back(&g);
    }
  }
  const absl::Time t = keys.load_time();
  keyring_load_timestamp_->Set(
      t == absl::InfinitePast() ? 0 : static_cast<double>(absl::ToUnixMicros(t)) / 1e6);
}

// AddBatchFamilies: dynamic batching's batch sizes and queue times.
void Metrics::AddBatchFamilies(prometheus::Registry& r) {
  auto& batch_size = prometheus::BuildHistogram()
                         .Name("smcrypt_batch_size")
                         .Help("Unary calls run together in one batch (dynamic batching).")
                         .Register(r);
  auto& batch_queue = prometheus::BuildHistogram()
                          .Name("smcrypt_batch_queue_seconds")
                          .Help("Time a batched unary call waited in its queue before its "
                                "batch ran.")
                          .Register(r);
  const prometheus::Histogram::BucketBoundaries size_buckets = {1,  2,   4,   8,    16,  32,
                                                                64, 128, 256, 1024, 4096};
  const prometheus::Histogram::BucketBoundaries queue_buckets = {
      1e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 1e-2, 0.1, 1};
  for (int i = 0; i < kNumBatchedOperations; ++i) {
    const auto op = static_cast<BatchedOperation>(i);
    const prometheus::Labels labels = {{"grpc_method", BatchedMethod(op)},
                                       {"algorithm", BatchedAlgorithm(op)}};
    batch_size_[i] = &batch_size.Add(labels, size_buckets);
    batch_queue_seconds_[i] = &batch_queue.Add(labels, queue_buckets);
  }
}

// AddGauges: kernels, self-tests, in-flight requests, bytes and connections, malloc trims,
// overload refusals, the drain, limits.
void Metrics::AddGauges(prometheus::Registry& r) {
  kernel_family_ = &prometheus::BuildGauge()
                        .Name("smcrypt_kernel_info")
                        .Help("The back end dispatch chose per algorithm (value 1).")
                        .Register(r);
  selftest_ok_ = &prometheus::BuildGauge()
                      .Name("smcrypt_selftest_ok")
                      .Help("1 when every known-answer self-test passed in the last run.")
                      .Register(r)
                      .Add({});
  inflight_ = &prometheus::BuildGauge()
                   .Name("smcrypt_inflight_requests")
                   .Help("RPCs in flight.")
                   .Register(r)
                   .Add({});
  inflight_bytes_ = &prometheus::BuildGauge()
                         .Name("smcrypt_inflight_bytes")
                         .Help("Bytes charged against --max_inflight_bytes (sampled every "
                               "250 ms).")
                         .Register(r)
                         .Add({});
  inflight_bytes_peak_ = &prometheus::BuildGauge()
                              .Name("smcrypt_inflight_bytes_peak")
                              .Help("Most bytes charged against --max_inflight_bytes at "
                                    "once since start.")
                              .Register(r)
                              .Add({});
  malloc_trims_ = &prometheus::BuildCounter()
                       .Name("smcrypt_malloc_trims_total")
                       .Help("Times freed heap was returned to the OS after a burst "
                             "(--malloc_trim_after_bytes).")
                       .Register(r)
                       .Add({});
  draining_ = &prometheus::BuildGauge()
                   .Name("smcrypt_draining")
                   .Help("1 from SIGTERM or SIGINT to exit: health is NOT_SERVING, RPCs are "
                         "served for --drain_delay, then in-flight RPCs finish within "
                         "--shutdown_grace.")
                   .Register(r)
                   .Add({});
  auto& refusals = prometheus::BuildCounter()
                       .Name("smcrypt_overload_refusals_total")
                       .Help("Calls and stream messages refused as OVERLOADED "
                             "(RESOURCE_EXHAUSTED), by the limit that refused them (the flag's "
                             "name).")
                       .Register(r);
  for (int i = 0; i < kNumOverloadLimits; ++i) {
    overload_refusals_[i] = &refusals.Add(
        {{"limit", std::string(OverloadLimitName(static_cast<OverloadLimit>(i)))}});
  }
  inflight_connections_ = &prometheus::BuildGauge()
                               .Name("smcrypt_inflight_connections")
                               .Help("Client connections with calls in flight, as "
                                     "--max_connection_inflight_bytes accounts them (0 when "
                                     "it is 0).")
                               .Register(r)
                               .Add({});
  limit_family_ = &prometheus::BuildGauge()
                       .Name("smcrypt_limit")
                       .Help("Each limit and sized value in force, by flag name and source "
                             "(flag, cgroup cpu, cgroup memory, host, default).")
                       .Register(r);
  container_cpu_limit_ = &prometheus::BuildGauge()
                              .Name("smcrypt_container_cpu_limit")
                              .Help("The cgroup CPU quota found at start, in CPUs (0: none).")
                              .Register(r)
                              .Add({});
  container_memory_limit_ = &prometheus::BuildGauge()
                                 .Name("smcrypt_container_memory_limit_bytes")
                                 .Help("The cgroup memory limit found at start (0: none).")
                                 .Register(r)
                                 .Add({});
}

void Metrics::SetLimit(absl::string_view name, double value, absl::string_view source) {
  absl::MutexLock lock(&limits_mu_);
  auto it = limits_.find(name);
  if (it != limits_.end()) limit_family_->Remove(it->second);
  prometheus::Gauge& g =
      limit_family_->Add({{"name", std::string(name)}, {"source", std::string(source)}});
  g.Set(value);
  limits_[name] = &g;
}

void Metrics::SetAuditLog(const AuditLog* audit) {
  audit_collector_ = std::make_shared<AuditCollector>(audit);
}

absl::Status Metrics::StartExposer(const std::string& address) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve metrics on ", address, ": ", e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  exposer_->RegisterCollectable(process_collector_);
  exposer_->RegisterCollectable(audit_collector_);
  std::vector<int> ports = exposer_->GetListeningPorts();
  metrics_port_ = ports.empty() ? 0 : ports[0];
  return absl::OkStatus();
}

const Metrics::MethodMetrics* Metrics::ForMethod(absl::string_view full_method) const {
  auto it = methods_.find(full_method);
  return it == methods_.end() ? nullptr : &it->second;
}

void Metrics::OnBytesProcessed(Algorithm alg, Operation op, uint64_t n) {
  const size_t i = AlgorithmIndex(alg);
  if (i >= bytes_.size()) return;
  prometheus::Counter* c = bytes_[i][static_cast<int>(op)];
  if (c != nullptr) c->Increment(static_cast<double>(n));
}

void Metrics::OnDecryptFailure(Algorithm alg) {
  const size_t i = AlgorithmIndex(alg);
  if (i < decrypt_failures_.size() && decrypt_failures_[i] != nullptr) {
    decrypt_failures_[i]->Increment();
  }
}

void Metrics::OnKeyVersionTrials(Operation op, bool authenticated, uint32_t extra) {
  prometheus::Counter* c = trials_[static_cast<int>(op)][authenticated ? 1 : 0];
  if (c != nullptr) c->Increment(extra);
}

void Metrics::OnVerifyFailure(Algorithm alg) {
  const size_t i = AlgorithmIndex(alg);
  if (i < verify_failures_.size() && verify_failures_[i] != nullptr) {
    verify_failures_[i]->Increment();
  }
}

void Metrics::SetKernels(const std::vector<KernelChoice>& kernels) {
  for (const KernelChoice& k : kernels) {
    kernel_family_->Add({{"algorithm", k.algorithm}, {"kernel", k.kernel}}).Set(1);
  }
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewMetricsInterceptorFactory(Metrics* metrics) {
  return std::make_unique<MetricsInterceptorFactory>(metrics);
}

}  // namespace smcrypt::server
