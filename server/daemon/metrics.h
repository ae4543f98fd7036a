// metrics.h — Prometheus metrics of smcryptd (docs/design.md "Service": Metrics), exposed by
// prometheus-cpp on --metrics_listen at /metrics.
//
// Families and every label child are created once, at start (docs/contributing.md, "House style");
// label values come from fixed sets only (method names, status codes, algorithm and
// operation names, kernel names), never client addresses, and key ids only in
// smcrypt_key_version_info: its children are the keyring's versions (state primary,
// retained or retired), rebuilt whenever a keyring is loaded.
//
//   grpc_server_started_total{grpc_service,grpc_method,grpc_type}
//   grpc_server_handled_total{grpc_service,grpc_method,grpc_type,grpc_code}
//   grpc_server_handling_seconds{grpc_service,grpc_method,grpc_type}   10 µs … 10 s
//   grpc_server_msg_received_total{grpc_service,grpc_method,grpc_type}
//   grpc_server_msg_sent_total{grpc_service,grpc_method,grpc_type}
//   smcrypt_bytes_processed_total{algorithm,operation}
//   smcrypt_decrypt_failures_total{algorithm}                         "decryption failed"
//   smcrypt_verify_failures_total{algorithm}                          signature/MAC false
//   smcrypt_key_version_trials_total{operation,outcome}               key versions tried, beyond 1
//   smcrypt_keyring_reloads_total{result}                             success, failure
//   smcrypt_keyring_load_timestamp_seconds                            when the keyring in use loaded
//   smcrypt_key_version_info{key_id,version,state}                    1 per loaded key version
//   smcrypt_tls_certificate_reloads_total{result}                     success, failure
//   smcrypt_build_info{version,compiler,cpu}                          1
//   smcrypt_kernel_info{algorithm,kernel}                              1
//   smcrypt_selftest_ok                                               1 or 0
//   smcrypt_inflight_requests
//   smcrypt_inflight_bytes, smcrypt_inflight_bytes_peak                --max_inflight_bytes charge
//   smcrypt_overload_refusals_total{limit}                            OVERLOADED, by limit
//   smcrypt_inflight_connections                                      connections with calls
//   smcrypt_malloc_trims_total                                        memory_trimmer.h
//   smcrypt_draining                                                  1 from SIGTERM on
//   smcrypt_limit{name,source}                                        values in force
//   smcrypt_batch_size{grpc_method,algorithm}                         calls per batch, 1 … 4096
//   smcrypt_batch_queue_seconds{grpc_method,algorithm}                time a call waited, 1 µs … 1 s
//   process_cpu_seconds_total, process_resident_memory_bytes,
//   process_virtual_memory_bytes, process_start_time_seconds,
//   process_open_fds, process_max_fds                                  process_metrics.h, at scrape
//   smcrypt_tls_certificate_expiry_timestamp_seconds{certificate}     notAfter: server, client_ca
//   smcrypt_audit_lines_written_total, smcrypt_audit_lines_dropped_total,
//   smcrypt_audit_write_errors_total, smcrypt_audit_queue_lines,
//   smcrypt_audit_queue_bytes, smcrypt_audit_healthy (1 or 0)          audit_log.h, at scrape
//   smcrypt_limit{name,source}                                        each limit in force (SetLimit)
//   smcrypt_container_cpu_limit, smcrypt_container_memory_limit_bytes  cgroup limits, 0: none
//
// The grpc_server_* metrics are recorded in one place, the server interceptor made by
// NewMetricsInterceptorFactory (grpc_code: the code the client received; a call gRPC
// ended for its deadline or a cancellation is DeadlineExceeded or Canceled, whatever its
// handler answered afterwards); smcrypt_bytes_processed_total and the decrypt/verify
// failures by the engine observer.
// Thread-safe.
#ifndef SMCRYPT_SERVER_METRICS_H_
#define SMCRYPT_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/server_interceptor.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/engine/audit_log.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/dynamic_batcher.h"
#include "server/engine/reload.h"
#include "server/service/admission.h"
#include "server/service/status_util.h"
#include "smcrypt/cpu.h"

namespace smcrypt::server {

class Metrics final : public EngineObserver,
                      public BatchObserver,
                      public ReloadObserver,
                      public AdmissionObserver {
 public:
  // MethodMetrics are the label children of one RPC method.
  struct MethodMetrics {
    prometheus::Counter* started = nullptr;
    std::array<prometheus::Counter*, kNumGrpcCodes> handled{};
    prometheus::Histogram* seconds = nullptr;
    prometheus::Counter* msg_received = nullptr;
    prometheus::Counter* msg_sent = nullptr;
  };

  // New creates the registry and all children; no HTTP listener.
  static std::unique_ptr<Metrics> New();
  // StartExposer serves /metrics on `address` ("0.0.0.0:9464"; port 0 picks a free one).
  // Errors: Unavailable when the address cannot be bound.
  absl::Status StartExposer(const std::string& address);
  // metrics_port is the bound port (0 before StartExposer).
  int metrics_port() const { return metrics_port_; }

  // ForMethod returns the children of "/package.Service/Method", or null for a method
  // outside the fixed set.
  const MethodMetrics* ForMethod(absl::string_view full_method) const;

  void OnBytesProcessed(Algorithm alg, Operation op, uint64_t bytes) override;
  void OnDecryptFailure(Algorithm alg) override;
  void OnVerifyFailure(Algorithm alg) override;
  void OnKeyVersionTrials(Operation op, bool authenticated, uint32_t extra) override;
  // OnKeyringReload / OnTlsCertificateReload count one reload of the keyring or of the
  // TLS certificate and key, by result.
  void OnKeyringReload(bool ok) override {
    (ok ? keyring_reloads_ok_ : keyring_reloads_failed_)->Increment();
  }
  void OnTlsCertificateReload(bool ok) override {
    (ok ? tls_reloads_ok_ : tls_reloads_failed_)->Increment();
  }
  // OnTlsCertificatesInstalled sets smcrypt_tls_certificate_expiry_timestamp_seconds:
  // the child certificate="server", and certificate="client_ca" when `expiry` has one.
  void OnTlsCertificatesInstalled(const TlsCertificateExpiry& expiry) override;
  // OnKeyringLoaded replaces the children of smcrypt_key_version_info with the versions
  // of `keys` and sets smcrypt_keyring_load_timestamp_seconds.
  void OnKeyringLoaded(const KeyStore& keys) override;
  void OnBatch(BatchedOperation op, size_t size, absl::Span<const double> queued_seconds) override;
  void SetSelfTestOk(bool ok) { selftest_ok_->Set(ok ? 1 : 0); }
  void SetKernels(const std::vector<KernelChoice>& kernels);
  prometheus::Gauge& inflight_gauge() { return *inflight_; }
  // SetInflightBytes publishes the --max_inflight_bytes charge now and its peak.
  void SetInflightBytes(uint64_t now, uint64_t peak) {
    inflight_bytes_->Set(static_cast<double>(now));
    inflight_bytes_peak_->Set(static_cast<double>(peak));
  }
  void CountMallocTrim() { malloc_trims_->Increment(); }
  // SetDraining sets smcrypt_draining: 1 from the drain's start (SIGTERM) to exit.
  void SetDraining(bool draining) { draining_->Set(draining ? 1 : 0); }
  // SetLimit publishes one limit or sized value in force as smcrypt_limit{name,source}:
  // `name` is its flag's name without dashes ("max_inflight", "drain_delay_seconds"),
  // `source` where the value came from: "flag", "cgroup cpu", "cgroup memory", "host" or
  // "default". Called at start (house style 12); a later call for the same name replaces
  // its child, so each name has one series.
  void SetLimit(absl::string_view name, double value, absl::string_view source);
  // SetContainerLimits publishes the cgroup limits found at start:
  // smcrypt_container_cpu_limit (CPUs, e.g. 2.5) and smcrypt_container_memory_limit_bytes;
  // 0 for no limit.
  void SetContainerLimits(double cpus, uint64_t memory_bytes) {
    container_cpu_limit_->Set(cpus);
    container_memory_limit_->Set(static_cast<double>(memory_bytes));
  }
  // OnOverload counts a refusal by `limit`; OnConnections moves the gauge of connections
  // with calls in flight (admission.h).
  void OnOverload(OverloadLimit limit) override {
    overload_refusals_[static_cast<int>(limit)]->Increment();
  }
  void OnConnections(int delta) override { inflight_connections_->Increment(delta); }
  // SetAuditLog: the audit log whose AuditStats the smcrypt_audit_* metrics report at
  // each scrape (null: none, reported as zeros and healthy). Call before StartExposer;
  // `audit` must outlive the metrics.
  void SetAuditLog(const AuditLog* audit);

  // Inflight counts RPCs from the interceptor's creation to its destruction; the
  // service refuses work above --max_inflight with it.
  std::atomic<int64_t>& inflight() { return inflight_count_; }

  std::shared_ptr<prometheus::Registry> registry() { return registry_; }

 private:
  // New's steps: each adds its families to `r` and keeps their children.
  void AddGrpcFamilies(prometheus::Registry& r);
  void AddCryptoFamilies(prometheus::Registry& r);
  void AddReloadFamilies(prometheus::Registry& r);
  void AddBatchFamilies(prometheus::Registry& r);
  void AddGauges(prometheus::Registry& r);
  Metrics() = default;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int metrics_port_ = 0;
  absl::flat_hash_map<std::string, MethodMetrics> methods_;
  // bytes_[algorithm index][operation]: null where the pair does not exist.
  std::vector<std::array<prometheus::Counter*, kNumOperations>> bytes_;
  // decrypt_failures_ / verify_failures_[algorithm index]: null where the algorithm does
  // not decrypt / verify.
  std::vector<prometheus::Counter*> decrypt_failures_;
  std::vector<prometheus::Counter*> verify_failures_;
  // trials_[operation][authenticated]: null but for decrypt, verify and mac.
  std::array<std::array<prometheus::Counter*, 2>, kNumOperations> trials_{};
  prometheus::Counter* keyring_reloads_ok_ = nullptr;
  prometheus::Counter* keyring_reloads_failed_ = nullptr;
  prometheus::Counter* tls_reloads_ok_ = nullptr;
  prometheus::Counter* tls_reloads_failed_ = nullptr;
  prometheus::Gauge* keyring_load_timestamp_ = nullptr;
  prometheus::Family<prometheus::Gauge>* tls_expiry_family_ = nullptr;
  prometheus::Family<prometheus::Gauge>* key_version_family_ = nullptr;
  absl::Mutex key_versions_mu_;
  std::vector<prometheus::Gauge*> key_version_gauges_ ABSL_GUARDED_BY(key_versions_mu_);
  prometheus::Family<prometheus::Gauge>* kernel_family_ = nullptr;
  prometheus::Gauge* selftest_ok_ = nullptr;
  prometheus::Gauge* inflight_ = nullptr;
  prometheus::Gauge* inflight_bytes_ = nullptr;
  prometheus::Gauge* inflight_bytes_peak_ = nullptr;
  prometheus::Counter* malloc_trims_ = nullptr;
  prometheus::Gauge* draining_ = nullptr;
  prometheus::Family<prometheus::Gauge>* limit_family_ = nullptr;
  absl::Mutex limits_mu_;
  // limits_: the smcrypt_limit child of each name.
  absl::flat_hash_map<std::string, prometheus::Gauge*> limits_ ABSL_GUARDED_BY(limits_mu_);
  prometheus::Gauge* container_cpu_limit_ = nullptr;
  prometheus::Gauge* container_memory_limit_ = nullptr;
  std::array<prometheus::Counter*, kNumOverloadLimits> overload_refusals_{};
  prometheus::Gauge* inflight_connections_ = nullptr;
  std::array<prometheus::Histogram*, kNumBatchedOperations> batch_size_{};
  std::array<prometheus::Histogram*, kNumBatchedOperations> batch_queue_seconds_{};
  std::atomic<int64_t> inflight_count_{0};
  std::shared_ptr<prometheus::Collectable> process_collector_;
  std::shared_ptr<prometheus::Collectable> audit_collector_;
};

// NewMetricsInterceptorFactory records grpc_server_* and the in-flight count for every
// RPC. `metrics` must outlive the server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewMetricsInterceptorFactory(Metrics* metrics);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_METRICS_H_
