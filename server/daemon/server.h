// server.h — smcryptd's wiring: keyring, self-tests, metrics, gRPC server with health,
// reflection, TLS/mTLS, limits and graceful shutdown (docs/design.md "Service";
// docs/contributing.md, "House style").
#ifndef SMCRYPT_SERVER_SERVER_H_
#define SMCRYPT_SERVER_SERVER_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "server/daemon/memory_trimmer.h"
#include "server/daemon/metrics.h"
#include "server/engine/access_policy.h"
#include "server/engine/audit_log.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/key_store.h"
#include "server/engine/reload.h"
#include "server/engine/self_test.h"
#include "server/engine/sizing.h"
#include "server/engine/worker_pool.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/stream_reaper.h"

namespace smcrypt::server {

// ServerOptions mirror smcryptd's flags (main.cc documents each default).
struct ServerOptions {
  // listen: gRPC address; port 0 picks a free port (see Server::port()).
  std::string listen = "0.0.0.0:50051";
  // metrics_listen: Prometheus /metrics address; empty disables it; port 0 picks one.
  std::string metrics_listen = "0.0.0.0:9464";
  // keys_dir: the keyring directory; empty means no keyring.
  std::string keys_dir;
  bool allow_inline_private_keys = true;
  // TLS: cert and key (PEM files) enable TLS; tls_client_ca also requires and verifies
  // client certificates (mTLS).
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // max_message_bytes: largest request message; larger is RESOURCE_EXHAUSTED.
  uint64_t max_message_bytes = 4 << 20;
  // max_inflight: concurrent RPCs above this are RESOURCE_EXHAUSTED.
  int64_t max_inflight = 65536;
  // shutdown_grace: how long Shutdown waits for in-flight RPCs before cancelling them;
  // 0 to 1h.
  absl::Duration shutdown_grace = absl::Seconds(20);
  // drain_delay: on SIGTERM/SIGINT, how long smcryptd serves on with health NOT_SERVING
  // (BeginDrain) before Shutdown; 0 to 10 min. The daemon waits it out (main.cc); the
  // Server checks its bound and reports it.
  absl::Duration drain_delay = absl::Seconds(5);
  // health_listen: if set, a second, plaintext gRPC server on this address serves only
  // grpc.health.v1.Health (mirroring the main server's status), for Kubernetes gRPC
  // probes, which cannot speak TLS. Port 0 picks a free port (see health_port()).
  std::string health_listen;
  // worker_threads: threads that run unary crypto work (worker_pool.h); -1 means one per
  // online CPU, 0 runs the work inline on gRPC's callback threads.
  int worker_threads = -1;
  // cpus: the CPUs gRPC's sync-server threads are planned for (Sizing::cpus); 0: gRPC's
  // own defaults.
  uint32_t cpus = 0;
  // sizing: the container limits and sized values (sizing.h), for GetServerInfo, the
  // smcrypt_limit metric and the container gauges; the values are already in the fields
  // of these options.
  Sizing sizing;
  // flags_given: the flags given on the command line (any value, the default's too; a
  // --flagfile's and --fromenv's count); smcrypt_limit's source is "flag" for them,
  // "default" for the others.
  std::set<std::string> flags_given;
  // public_key_cache_size: entries of the LRU of parsed inline public keys
  // (primitive_cache.h); 0 disables it.
  size_t public_key_cache_size = 1024;
  // batching: dynamic batching of unary calls (dynamic_batcher.h); max_batch 1 to
  // 4096, max_delay 0 to 10 ms.
  BatchSettings batching;
  // max_inflight_bytes: bytes charged to calls in flight (crypto_service_impl.h,
  // "Memory"); beyond it new calls and stream messages are RESOURCE_EXHAUSTED. 0: no
  // byte limit; else at least max_message_bytes.
  uint64_t max_inflight_bytes = 128 << 20;
  // max_stream_inflight_bytes / max_connection_inflight_bytes: bytes one stream / the
  // calls of one client connection may hold (admission.h). nullopt: DefaultFairShares of
  // the final max_inflight_bytes; 0: no such limit; else at least max_message_bytes.
  std::optional<uint64_t> max_stream_inflight_bytes;
  std::optional<uint64_t> max_connection_inflight_bytes;
  // grpc_memory_quota: gRPC resource quota (bytes) for the transports' buffers, where
  // requests wait while they arrive; under pressure gRPC shrinks HTTP/2 flow-control
  // windows so senders wait. 0: unlimited.
  uint64_t grpc_memory_quota = 256 << 20;
  // max_concurrent_streams: HTTP/2 streams (calls) one connection may have open at once
  // (SETTINGS_MAX_CONCURRENT_STREAMS); clients queue the rest. 0: unlimited.
  uint32_t max_concurrent_streams = 256;
  // malloc_trim_after_bytes: once the --max_inflight_bytes charge has fallen this far
  // from its peak, freed heap is returned to the OS (memory_trimmer.h). 0: never.
  uint64_t malloc_trim_after_bytes = 16 << 20;
  // stream_idle_timeout: a streaming RPC with no completed read or write for this long
  // is cancelled (stream_reaper.h); 0 disables it.
  absl::Duration stream_idle_timeout = absl::Seconds(60);
  // max_connection_age: a connection open this long is sent GOAWAY, and its calls get
  // shutdown_grace to finish (gRPC's max connection age); 0: no limit. 0 or 1s to 24h.
  absl::Duration max_connection_age = absl::ZeroDuration();
  // allow_insecure_key_permissions: load keyring files any user may read or write
  // (key_store.h, "Permissions"), with a warning.
  bool allow_insecure_key_permissions = false;
  // access_policy: policy file (access_policy.h); empty: every request is allowed.
  std::string access_policy;
  // audit_log: "" stderr, "none" off, else a file appended to (audit_log.h);
  // audit_failure: closed or open; audit_queue_lines / _bytes: the queue's bounds.
  std::string audit_log;
  AuditFailure audit_failure = AuditFailure::kClosed;
  size_t audit_queue_lines = AuditLogOptions().max_queue_lines;
  size_t audit_queue_bytes = AuditLogOptions().max_queue_bytes;
  // reload_interval: how often the keyring directory and the TLS files are checked for
  // changes (reload.h); a changed keyring is reloaded, changed TLS files are re-read by
  // gRPC (in whole seconds, at least 1). 0: the keyring reloads only on ReloadKeyring
  // (SIGHUP) and the TLS files are read once at start.
  absl::Duration reload_interval = absl::Seconds(10);
};

inline constexpr char kCryptoServiceName[] = "smcrypt.v1.CryptoService";

// ShareLimit is the value in force of --max_stream_inflight_bytes or
// --max_connection_inflight_bytes: `from_flag` when given on the command line, else
// derived from --max_inflight_bytes (DefaultFairShares).
struct ShareLimit {
  const char* name;  // the flag's name without dashes
  uint64_t value;    // 0: no such limit
  bool from_flag;
};

// ResolveFairShares returns the two share limits of `o` (stream, then connection): the
// flags' values where given, else DefaultFairShares(o.max_inflight_bytes,
// o.max_message_bytes). Call once max_inflight_bytes has its final value.
std::array<ShareLimit, 2> ResolveFairShares(const ServerOptions& o);

// AddShareLimitsToSizing appends the two share limits (ResolveFairShares) to
// o->sizing.values, so that --print_sizing, the sizing log line, GetServerInfo's `sizing`
// and smcrypt_limit list them: source "flag" where given, else the source of
// --max_inflight_bytes they are a share of ("default" when that was given). smcryptd's
// main calls it once, after sizing and before printing or starting.
void AddShareLimitsToSizing(ServerOptions* o);
// CheckOptions runs the checks of the numeric flags that BuildAndStart runs (bounds of the
// limits, --reload_interval, --max_connection_age), with the same errors, and nothing else.
absl::Status CheckOptions(const ServerOptions& o);

class Server {
 public:
  Server();
  ~Server();

  // BuildAndStart loads the keyring, runs the self-tests, starts /metrics and the gRPC
  // server, and sets health to SERVING if every self-test passed (NOT_SERVING
  // otherwise; the server still runs so the failure can be inspected).
  // Errors: InvalidArgument for bad options or a bad key file (named), NotFound for a
  // missing file or directory, Unavailable when an address cannot be bound.
  absl::Status BuildAndStart(const ServerOptions& options);

  // port and metrics_port are the bound ports (after BuildAndStart).
  int port() const { return port_; }
  int metrics_port() const { return metrics_ ? metrics_->metrics_port() : 0; }
  int health_port() const { return health_port_; }
  // share_limits: --max_stream_inflight_bytes and --max_connection_inflight_bytes as in
  // force (after BuildAndStart), for listing with the other sized values.
  const std::array<ShareLimit, 2>& share_limits() const { return share_limits_; }

  // ReloadKeyring reloads --keys_dir now (SIGHUP), as KeyringReloader::Reload: on error
  // the previous keyring stays. FailedPrecondition without --keys_dir.
  absl::Status ReloadKeyring();
  // ReopenAuditLog has the audit log's file opened again (SIGHUP, after logrotate renamed
  // it; AuditLog::Reopen); nothing for stderr or none.
  void ReopenAuditLog();

  // BeginDrain turns health NOT_SERVING on both gRPC listeners (for good: a later
  // self-test run cannot turn it back) and smcrypt_draining to 1; every RPC is still
  // accepted and served, so balancers that have not yet seen the health change lose
  // nothing. Idempotent.
  void BeginDrain();
  // Shutdown begins the drain if it has not begun, stops accepting RPCs (gRPC sends
  // GOAWAY), lets in-flight RPCs and streams finish for up to shutdown_grace and then
  // cancels what is left (logging how many calls were still in flight). Returns when
  // the server stopped.
  void Shutdown();
  // Wait blocks until the server has shut down.
  void Wait();

 private:
  // BuildAndStart's steps, in its order.
  absl::Status OpenGuards();  // --access_policy, --audit_log
  // LoadKeyring loads --keys_dir (an empty keyring without it); `*fingerprint` is the
  // directory's, taken before the load.
  absl::StatusOr<std::unique_ptr<KeyStore>> LoadKeyring(std::string* fingerprint);
  absl::Status StartMetricsAndSelfTests();  // metrics, kernels, self-tests, /metrics
  void PublishLimits();  // smcrypt_limit and the container gauges
  // Credentials: the gRPC port's credentials, with the TLS file check when reloading.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials();
  // MakeService makes the engine, keyring reloader, worker pool, reaper, service and
  // memory trimmer.
  void MakeService(std::unique_ptr<KeyStore> keys, std::string keyring_fingerprint);
  // StartGrpcServers starts the gRPC server (health, reflection, limits, interceptor)
  // and the --health_listen server.
  absl::Status StartGrpcServers(const std::shared_ptr<grpc::ServerCredentials>& creds);
  void AnnounceStarted();  // health from the self-tests, the "listening" log lines
  void StartReloadTask();  // --reload_interval polling of the keyring and TLS files
  void SetHealth(bool serving);

  ServerOptions options_;
  std::unique_ptr<Metrics> metrics_;
  // tls_check_ holds the memory files gRPC's certificate provider reads: it outlives
  // server_.
  std::unique_ptr<TlsFileCheck> tls_check_;
  std::unique_ptr<SelfTests> self_tests_;
  std::unique_ptr<CryptoEngine> engine_;
  // workers_ outlives server_: ~Server shuts the server down (every queued call is
  // finished by a worker) before the members are destroyed.
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<AccessPolicy> policy_;
  std::unique_ptr<AuditLog> audit_;
  // reaper_ outlives server_ (streams unregister in OnDone, before the server is gone).
  std::unique_ptr<StreamReaper> reaper_;
  std::unique_ptr<CryptoServiceImpl> service_;
  // trimmer_ reads service_ and metrics_; it stops before they are destroyed.
  std::unique_ptr<MemoryTrimmer> trimmer_;
  std::unique_ptr<grpc::Server> server_;
  // health_server_ serves grpc.health.v1 only, in plaintext (--health_listen).
  std::unique_ptr<grpc::Server> health_server_;
  // Reloads (reload.h): reload_task_ polls both checks; declared after them and the
  // engine, it stops before they are destroyed.
  std::unique_ptr<KeyringReloader> keyring_reloader_;
  std::unique_ptr<PeriodicTask> reload_task_;
  int port_ = 0;
  int health_port_ = 0;
  std::array<ShareLimit, 2> share_limits_{};
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SERVER_H_
