#include "server/daemon/server.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <fstream>
#include <thread>
#include <optional>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "grpc/grpc.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "server/engine/logging.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"

#ifndef SMCRYPT_VERSION
#define SMCRYPT_VERSION "0.0.0"
#endif

namespace smcrypt::server {
namespace {

// ReadPemFile is ReadTlsFile's text as a string (gRPC's static credentials take strings;
// the caller wipes the key's).
absl::StatusOr<std::string> ReadPemFile(absl::string_view flag, const std::string& path) {
  absl::StatusOr<SecretData> text = ReadTlsFile(flag, path);
  if (!text.ok()) return text.status();
  return std::string(SecretDataAsStringView(*text));
}

// TlsRefreshSeconds is --reload_interval in the whole seconds gRPC's file watcher takes.
unsigned int TlsRefreshSeconds(absl::Duration interval) {
  return static_cast<unsigned int>(
      std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(interval, absl::Seconds(1)))));
}

// MakeCredentials: plaintext, static TLS credentials (--reload_interval=0), or with
// `tls` (not null when --reload_interval > 0) gRPC's file watcher on its memory files.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(
    const ServerOptions& o, const TlsFileCheck* tls_files) {
  if (o.tls_cert.empty() && o.tls_key.empty()) {
    if (!o.tls_client_ca.empty()) {
      return absl::InvalidArgumentError("--tls_client_ca needs --tls_cert and --tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (o.tls_cert.empty() || o.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key must be given together");
  }
  if (tls_files != nullptr) {
    // gRPC re-reads the memory files every interval; new handshakes use what it read
    // last. Only a validated set reaches them (TlsFileCheck).
    const unsigned int seconds = TlsRefreshSeconds(o.reload_interval);
    const std::string& identity = tls_files->identity_path();
    std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider =
        o.tls_client_ca.empty()
            ? std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
                  identity, identity, seconds)
            : std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
                  identity, identity, tls_files->client_ca_path(), seconds);
    grpc::experimental::TlsServerCredentialsOptions tls(provider);
    tls.watch_identity_key_cert_pairs();
    if (o.tls_client_ca.empty()) {
      tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
    } else {
      tls.watch_root_certs();
      tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    }
    return grpc::experimental::TlsServerCredentials(tls);
  }
  // The files are checked here so that a missing or bad one fails start-up
  // (TlsFileCheck::Create checked them when it made `tls_files`).
  if (absl::Status s = ValidateTlsFiles(o.tls_cert, o.tls_key, o.tls_client_ca); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> cert = ReadPemFile("--tls_cert", o.tls_cert);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPemFile("--tls_key", o.tls_key);
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({std::move(*key), *cert});
  // gRPC copies the key into its own credentials; our copy is wiped on every return.
  auto wipe_key = absl::MakeCleanup([&ssl] {
    std::string& private_key = ssl.pem_key_cert_pairs[0].private_key;
    SecureZero(private_key.data(), private_key.size());
  });
  if (!o.tls_client_ca.empty()) {
    absl::StatusOr<std::string> ca = ReadPemFile("--tls_client_ca", o.tls_client_ca);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  } else {
    ssl.client_certificate_request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  }
  return grpc::SslServerCredentials(ssl);
}

// kMaxDrainDelay bounds --drain_delay: endpoint and balancer updates take seconds, and a
// longer delay only holds the pod past its terminationGracePeriodSeconds.
constexpr absl::Duration kMaxDrainDelay = absl::Minutes(10);

// kMaxShutdownGrace bounds --shutdown_grace: the shutdown deadline is the clock plus the
// grace, which an infinite or huge grace would overflow (to a deadline in the past that
// cancels every call at once), and no pod waits an hour to be stopped.
constexpr absl::Duration kMaxShutdownGrace = absl::Hours(1);

// CheckLimits checks the numeric flags, --max_message_bytes to --stream_idle_timeout.
absl::Status CheckLimits(const ServerOptions& o) {
  if (o.max_message_bytes == 0 || o.max_message_bytes > INT_MAX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_message_bytes must be 1 to ", INT_MAX, ", got ", o.max_message_bytes));
  }
  if (o.max_inflight < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_inflight must be at least 1, got ", o.max_inflight));
  }
  if (o.worker_threads < -1 || o.worker_threads > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--worker_threads must be -1 (one per CPU), 0 (inline) or 1 to 1024, got ",
        o.worker_threads));
  }
  if (o.batching.max_delay < absl::ZeroDuration() ||
      o.batching.max_delay > absl::Milliseconds(10)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--batch_max_delay must be 0 to 10ms, got ",
        FormatLogDuration(o.batching.max_delay)));
  }
  if (o.batching.max_batch < 1 || o.batching.max_batch > 4096) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--batch_max_size must be 1 to 4096, got ", o.batching.max_batch));
  }
  if (o.shutdown_grace < absl::ZeroDuration() || o.shutdown_grace > kMaxShutdownGrace) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shutdown_grace must be 0 (cancel at once) to ", absl::FormatDuration(kMaxShutdownGrace),
        ", got ", absl::FormatDuration(o.shutdown_grace)));
  }
  if (o.drain_delay < absl::ZeroDuration() || o.drain_delay > kMaxDrainDelay) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--drain_delay must be 0 (none) to ", FormatLogDuration(kMaxDrainDelay), ", got ",
        FormatLogDuration(o.drain_delay)));
  }
  if (o.max_inflight_bytes != 0 &&
      o.max_inflight_bytes < o.max_message_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_inflight_bytes must be 0 (no limit) or at least --max_message_bytes (",
        o.max_message_bytes, "), got ", o.max_inflight_bytes));
  }
  for (const auto& [name, value] :
       {std::pair<const char*, std::optional<uint64_t>>{"max_stream_inflight_bytes",
                                                        o.max_stream_inflight_bytes},
        {"max_connection_inflight_bytes", o.max_connection_inflight_bytes}}) {
    if (value.has_value() && *value != 0 && *value < o.max_message_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", name, " must be 0 (no limit) or at least --max_message_bytes (",
          o.max_message_bytes, "), got ", *value));
    }
  }
  if (o.sizing.sizing_connections < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--sizing_connections must be at least 1 (the client connections the memory sizing "
        "plans for), got ", o.sizing.sizing_connections));
  }
  if (o.stream_idle_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--stream_idle_timeout must not be negative");
  }
  return absl::OkStatus();
}

// CheckMaxConnectionAge: --max_connection_age is 0 (no limit) or from 1s to 24h.
absl::Status CheckMaxConnectionAge(const ServerOptions& o) {
  const absl::Duration age = o.max_connection_age;
  if (age != absl::ZeroDuration() && (age < absl::Seconds(1) || age > absl::Hours(24))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_connection_age must be 0 (no limit) or from 1s to 24h, got ",
        FormatLogDuration(age)));
  }
  return absl::OkStatus();
}

// CheckReloadInterval: --reload_interval is 0 (no polling) or from 100ms to 24h.
absl::Status CheckReloadInterval(const ServerOptions& o) {
  if (o.reload_interval != absl::ZeroDuration() &&
      (o.reload_interval < absl::Milliseconds(100) ||
       o.reload_interval > absl::Hours(24))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--reload_interval=", FormatLogDuration(o.reload_interval),
        ": must be 0 (no polling) or from 100ms to 24h"));
  }
  return absl::OkStatus();
}

// KeyOptions: how the keyring is loaded and reloaded.
KeyStoreOptions KeyOptions(const ServerOptions& o) {
  KeyStoreOptions key_options;
  key_options.allow_insecure_permissions = o.allow_insecure_key_permissions;
  return key_options;
}

// HostOf returns the host part of "host:port" for log lines.
std::string HostOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

// ShareWarnings: a line for each share limit that, as given, refuses calls the other
// limits let in: a stream limit under 5 x --max_message_bytes (what a stream of maximal
// messages holds), or above --max_inflight_bytes or the connection limit (which then
// refuse first). Not errors: an operator may want a tighter share.
std::vector<std::string> ShareWarnings(const ServerOptions& o) {
  const std::array<ShareLimit, 2> shares = ResolveFairShares(o);
  const ShareLimit& stream = shares[0];
  const ShareLimit& connection = shares[1];
  std::vector<std::string> warnings;
  if (stream.value == 0) return warnings;
  const uint64_t full_stream = 5 * o.max_message_bytes;
  if (stream.from_flag && stream.value < full_stream) {
    warnings.push_back(absl::StrCat(
        "--max_stream_inflight_bytes=", stream.value, " is below 5 x --max_message_bytes (",
        full_stream, "), what a stream of maximal messages holds while it reads its "
        "responses: such streams are refused (OVERLOADED) once they carry a second message"));
  }
  if (stream.from_flag && o.max_inflight_bytes != 0 && stream.value > o.max_inflight_bytes) {
    warnings.push_back(absl::StrCat("--max_stream_inflight_bytes=", stream.value,
                                    " is above --max_inflight_bytes (", o.max_inflight_bytes,
                                    "): the process-wide budget refuses first"));
  }
  if ((stream.from_flag || connection.from_flag) && connection.value != 0 &&
      stream.value > connection.value) {
    warnings.push_back(absl::StrCat("--max_stream_inflight_bytes (", stream.value,
                                    ") is above --max_connection_inflight_bytes (",
                                    connection.value, "): the connection limit refuses first"));
  }
  return warnings;
}

}  // namespace

absl::Status CheckOptions(const ServerOptions& o) {
  if (absl::Status s = CheckLimits(o); !s.ok()) return s;
  if (absl::Status s = CheckReloadInterval(o); !s.ok()) return s;
  return CheckMaxConnectionAge(o);
}

std::array<ShareLimit, 2> ResolveFairShares(const ServerOptions& o) {
  const FairShares shares = DefaultFairShares(o.max_inflight_bytes, o.max_message_bytes);
  return {ShareLimit{"max_stream_inflight_bytes",
                     o.max_stream_inflight_bytes.value_or(shares.stream),
                     o.max_stream_inflight_bytes.has_value()},
          ShareLimit{"max_connection_inflight_bytes",
                     o.max_connection_inflight_bytes.value_or(shares.connection),
                     o.max_connection_inflight_bytes.has_value()}};
}

void AddShareLimitsToSizing(ServerOptions* o) {
  std::string budget_source = "default";
  for (const SizedValue& v : o->sizing.values) {
    if (v.name == "max_inflight_bytes" && v.source != "flag") budget_source = v.source;
  }
  for (const ShareLimit& l : ResolveFairShares(*o)) {
    o->sizing.values.push_back(SizedValue{l.name, l.value, l.from_flag ? "flag" : budget_source});
  }
}

Server::Server() = default;

Server::~Server() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
  if (health_server_ != nullptr) {
    health_server_->Shutdown(std::chrono::system_clock::now());
    health_server_->Wait();
  }
}

void Server::SetHealth(bool serving) {
  absl::MutexLock lock(&mu_);
  if (!started_ || server_ == nullptr) return;
  if (shutting_down_) serving = false;
  for (grpc::Server* s : {server_.get(), health_server_.get()}) {
    if (s == nullptr) continue;
    grpc::HealthCheckServiceInterface* health = s->GetHealthCheckService();
    if (health == nullptr) continue;
    health->SetServingStatus("", serving);
    health->SetServingStatus(kCryptoServiceName, serving);
  }
}

// BuildAndStart runs its steps in this order, so each error and log line of start-up
// comes where it always has.
absl::Status Server::BuildAndStart(const ServerOptions& options) {
  options_ = options;
  if (absl::Status s = CheckLimits(options_); !s.ok()) return s;
  for (const std::string& warning : ShareWarnings(options_)) LogWarning(warning);
  if (absl::Status s = OpenGuards(); !s.ok()) return s;
  if (absl::Status s = CheckReloadInterval(options_); !s.ok()) return s;
  if (absl::Status s = CheckMaxConnectionAge(options_); !s.ok()) return s;
  // Taken before the load, so that a change while it runs is reloaded at the first check.
  std::string keyring_fingerprint;
  absl::StatusOr<std::unique_ptr<KeyStore>> keys = LoadKeyring(&keyring_fingerprint);
  if (!keys.ok()) return keys.status();
  if (absl::Status s = StartMetricsAndSelfTests(); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds = Credentials();
  if (!creds.ok()) return creds.status();
  MakeService(*std::move(keys), std::move(keyring_fingerprint));
  if (absl::Status s = StartGrpcServers(*creds); !s.ok()) return s;
  AnnounceStarted();
  StartReloadTask();
  return absl::OkStatus();
}

absl::Status Server::OpenGuards() {
  if (!options_.access_policy.empty()) {
    absl::StatusOr<std::unique_ptr<AccessPolicy>> policy =
        AccessPolicy::LoadFile(options_.access_policy);
    if (!policy.ok()) return policy.status();
    policy_ = *std::move(policy);
    LogInfo(absl::StrCat("access policy: ", policy_->num_rules(), " rules from ",
                         options_.access_policy));
  }
  {
    AuditLogOptions audit_options;
    audit_options.path = options_.audit_log;
    audit_options.failure = options_.audit_failure;
    audit_options.max_queue_lines = options_.audit_queue_lines;
    audit_options.max_queue_bytes = options_.audit_queue_bytes;
    absl::StatusOr<std::unique_ptr<AuditLog>> audit = AuditLog::Open(audit_options);
    if (!audit.ok()) return audit.status();
    audit_ = *std::move(audit);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<KeyStore>> Server::LoadKeyring(std::string* fingerprint) {
  std::unique_ptr<KeyStore> keys;
  const KeyStoreOptions key_options = KeyOptions(options_);
  if (options_.keys_dir.empty()) {
    keys = KeyStore::Empty();
  } else {
    *fingerprint = KeyringFingerprint(options_.keys_dir);
    absl::StatusOr<std::unique_ptr<KeyStore>> loaded =
        KeyStore::LoadFromDirectory(options_.keys_dir, key_options);
    if (!loaded.ok()) return loaded.status();
    keys = *std::move(loaded);
  }
  LogInfo(absl::StrCat("keyring: ", keys->size(), " keys",
                       options_.keys_dir.empty() ? "" : absl::StrCat(" from ", options_.keys_dir)));
  return keys;
}

absl::Status Server::StartMetricsAndSelfTests() {
  // Metrics, kernels, self-tests (fail closed: health stays NOT_SERVING on failure).
  metrics_ = Metrics::New();
  metrics_->SetAuditLog(audit_.get());
  PublishLimits();
  const std::vector<KernelChoice> kernels = ActiveKernels();
  metrics_->SetKernels(kernels);
  for (const KernelChoice& k : kernels) {
    LogInfo(absl::StrCat("kernel ", k.algorithm, ": ", k.kernel));
  }
  LogInfo(absl::StrCat("cpu features: detected [", FormatCpuFeatureList(DetectCpuFeatures()),
                       "], in use [", FormatCpuFeatureList(GetCpuFeatures()), "]"));
  self_tests_ = std::make_unique<SelfTests>([this](bool ok) {
    metrics_->SetSelfTestOk(ok);
    SetHealth(ok);
  });
  self_tests_->Run();

  if (!options_.metrics_listen.empty()) {
    absl::Status s = metrics_->StartExposer(options_.metrics_listen);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

void Server::PublishLimits() {
  const ContainerLimits& l = options_.sizing.limits;
  metrics_->SetContainerLimits(l.cpu_limit, l.memory_limit_bytes);
  for (const SizedValue& v : options_.sizing.values) {
    metrics_->SetLimit(v.name, static_cast<double>(v.value), v.source);
  }
  auto source = [this](const char* flag) {
    return options_.flags_given.count(flag) > 0 ? "flag" : "default";
  };
  metrics_->SetLimit("max_inflight", static_cast<double>(options_.max_inflight),
                     source("max_inflight"));
  metrics_->SetLimit("max_message_bytes", static_cast<double>(options_.max_message_bytes),
                     source("max_message_bytes"));
  metrics_->SetLimit("shutdown_grace_seconds", absl::ToDoubleSeconds(options_.shutdown_grace),
                     source("shutdown_grace"));
  metrics_->SetLimit("drain_delay_seconds", absl::ToDoubleSeconds(options_.drain_delay),
                     source("drain_delay"));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Server::Credentials() {
  // Reload results are counted by smcrypt_keyring_reloads_total and
  // smcrypt_tls_certificate_reloads_total.
  ReloadObserver* const reload_observer = metrics_.get();
  if (!options_.tls_cert.empty() && !options_.tls_key.empty() &&
      options_.reload_interval > absl::ZeroDuration()) {
    absl::StatusOr<std::unique_ptr<TlsFileCheck>> check = TlsFileCheck::Create(
        options_.tls_cert, options_.tls_key, options_.tls_client_ca, reload_observer);
    if (!check.ok()) return check.status();
    tls_check_ = *std::move(check);
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds =
      MakeCredentials(options_, tls_check_.get());
  // Static credentials (--reload_interval=0): the notAfter of the files read once.
  if (creds.ok() && tls_check_ == nullptr && !options_.tls_cert.empty()) {
    absl::StatusOr<TlsCertificateExpiry> expiry =
        CheckTlsFiles(options_.tls_cert, options_.tls_key, options_.tls_client_ca);
    if (!expiry.ok()) return expiry.status();
    LogTlsCertificateExpiry(*expiry);
    metrics_->OnTlsCertificatesInstalled(*expiry);
  }
  return creds;
}

void Server::MakeService(std::unique_ptr<KeyStore> keys, std::string keyring_fingerprint) {
  EngineOptions engine_options;
  engine_options.allow_inline_private_keys = options_.allow_inline_private_keys;
  engine_options.public_key_cache_size = options_.public_key_cache_size;
  engine_ = std::make_unique<CryptoEngine>(std::shared_ptr<const KeyStore>(std::move(keys)),
                                           engine_options, metrics_.get());
  metrics_->OnKeyringLoaded(*engine_->key_store());  // reloads report theirs
  if (!options_.keys_dir.empty()) {
    keyring_reloader_ = std::make_unique<KeyringReloader>(
        options_.keys_dir, KeyOptions(options_), engine_.get(), metrics_.get(),
        std::move(keyring_fingerprint));
  }
  ServiceInfo info;
  info.version = SMCRYPT_VERSION;
  info.max_message_bytes = options_.max_message_bytes;
  info.max_inflight = options_.max_inflight;
  info.max_inflight_bytes = options_.max_inflight_bytes;
  share_limits_ = ResolveFairShares(options_);
  info.max_stream_inflight_bytes = share_limits_[0].value;
  info.max_connection_inflight_bytes = share_limits_[1].value;
  for (const ShareLimit& l : share_limits_) {
    LogInfo(absl::StrCat("--", l.name, "=", l.value, l.value == 0 ? " (no limit)" : "",
                         l.from_flag ? "" : " (default: a share of --max_inflight_bytes)"));
  }
  info.batching = options_.batching;
  info.sizing = options_.sizing;
  if (options_.worker_threads != 0) {
    const size_t n = options_.worker_threads < 0 ? DefaultWorkerThreads()
                                                 : static_cast<size_t>(options_.worker_threads);
    // Admission (--max_inflight, --max_inflight_bytes) bounds the calls handed to the
    // pool, so its queue holds every admitted call and Submit never blocks a gRPC
    // thread: excess work is RESOURCE_EXHAUSTED at admission, not held in the transport.
    // Batched calls wait in their BatchQueue, not here; each queue adds at most one run
    // per worker, and a run hands itself back to the pool from a worker thread, so the
    // room for those runs keeps a full pool from blocking its own workers.
    const size_t queue = std::max(n * kQueuedPerWorker,
                                  static_cast<size_t>(options_.max_inflight) + 1) +
                         kNumBatchedOperations * n;
    workers_ = std::make_unique<WorkerPool>(n, queue);
  }
  reaper_ = std::make_unique<StreamReaper>(options_.stream_idle_timeout);
  ServiceGuards guards;
  guards.policy = policy_.get();
  guards.audit = audit_->enabled() ? audit_.get() : nullptr;
  guards.reaper = options_.stream_idle_timeout > absl::ZeroDuration() ? reaper_.get() : nullptr;
  guards.batches = metrics_.get();
  guards.admission = metrics_.get();
  LogInfo(workers_ == nullptr
              ? std::string("unary work runs on gRPC's callback threads (--worker_threads=0)")
              : absl::StrCat("unary work runs on ", workers_->num_threads(), " worker threads"));
  LogInfo(options_.batching.enabled
              ? absl::StrCat("dynamic batching: on, at most ", options_.batching.max_batch,
                             " calls per batch, waiting at most ",
                             FormatLogDuration(options_.batching.max_delay), " for more")
              : std::string("dynamic batching: off (--batching=false)"));
  service_ = std::make_unique<CryptoServiceImpl>(engine_.get(), self_tests_.get(),
                                                 &metrics_->inflight(), info, workers_.get(),
                                                 guards);
  {
    const CryptoServiceImpl* svc = service_.get();
    trimmer_ = std::make_unique<MemoryTrimmer>(
        [svc] { return svc->inflight_bytes(); }, [svc] { return svc->TakePeakSince(); },
        [svc] { return svc->peak_inflight_bytes(); }, options_.malloc_trim_after_bytes,
        metrics_.get());
  }
}

absl::Status Server::StartGrpcServers(const std::shared_ptr<grpc::ServerCredentials>& creds) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which lets a second smcryptd bind a port that is
  // already serving and split the connections with it; a busy port must fail start-up.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(options_.listen, creds, &port_);
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
  // Responses are bounded by the request limit (plus tags, padding, batch framing).
  builder.SetMaxSendMessageSize(INT_MAX);
  // Keepalive pings find dead peers (a client host that vanished) within about 80 s, so
  // their calls end and release their --max_inflight slots.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60 * 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20 * 1000);
  // Clients reconnect (and resolve again) when a connection ages out (server.h).
  if (options_.max_connection_age > absl::ZeroDuration()) {
    const int64_t age_ms = absl::ToInt64Milliseconds(options_.max_connection_age);
    const int64_t grace_ms = absl::ToInt64Milliseconds(options_.shutdown_grace);
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, static_cast<int>(age_ms));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                               static_cast<int>(std::min<int64_t>(grace_ms, INT_MAX)));
  }
  if (options_.max_concurrent_streams > 0) {
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONCURRENT_STREAMS,
        static_cast<int>(std::min<uint32_t>(options_.max_concurrent_streams, INT_MAX)));
  }
  if (options_.cpus > 0) {
    // gRPC's sync-server threads (the reflection service) follow the CPUs sized for;
    // the threads gRPC 1.51 sizes from the host's CPU count alone are listed in
    // docs/deployment.md, "Sizing".
    const int cpus = static_cast<int>(std::min<uint32_t>(options_.cpus, 1024));
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                                std::min(2, cpus));
  }
  // No ResourceQuota::SetMaxThreads: it caps only those sync-server threads, and each
  // reflection stream holds one for its whole life, so a cap would refuse reflection
  // clients (RESOURCE_EXHAUSTED) without saving CPU.
  if (options_.grpc_memory_quota > 0) {
    grpc::ResourceQuota quota("smcryptd");
    quota.Resize(options_.grpc_memory_quota);
    builder.SetResourceQuota(quota);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(NewMetricsInterceptorFactory(metrics_.get()));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    server_.reset();
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.listen, " (address in use or invalid?)"));
  }
  if (!options_.health_listen.empty()) {
    grpc::ServerBuilder health_builder;
    health_builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    health_builder.AddListeningPort(options_.health_listen, grpc::InsecureServerCredentials(),
                                    &health_port_);
    health_server_ = health_builder.BuildAndStart();
    if (health_server_ == nullptr || health_port_ == 0) {
      health_server_.reset();
      server_->Shutdown(std::chrono::system_clock::now());
      server_->Wait();
      server_.reset();
      return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.health_listen,
                                                 " for --health_listen (address in use or invalid?)"));
    }
  }
  return absl::OkStatus();
}

void Server::AnnounceStarted() {
  {
    absl::MutexLock lock(&mu_);
    started_ = true;
  }
  SetHealth(self_tests_->all_passed());
  const char* transport = options_.tls_cert.empty()        ? "plaintext"
                          : options_.tls_client_ca.empty() ? "TLS"
                                                           : "mTLS";
  LogInfo(absl::StrCat("smcryptd ", SMCRYPT_VERSION, " listening on ", HostOf(options_.listen),
                       ":", port_, " (", transport, ")"),
          {{"version", SMCRYPT_VERSION},
           {"port", port_},
           {"transport", transport}});
  if (!options_.metrics_listen.empty()) {
    LogInfo(absl::StrCat("metrics on ", HostOf(options_.metrics_listen), ":",
                         metrics_->metrics_port(), "/metrics"));
  }
  if (health_server_ != nullptr) {
    LogInfo(absl::StrCat("health (grpc.health.v1 only, plaintext) on ",
                         HostOf(options_.health_listen), ":", health_port_));
  }
  if (!self_tests_->all_passed()) {
    LogError("self-tests failed: health is NOT_SERVING");
  }
}

void Server::StartReloadTask() {
  if (options_.reload_interval > absl::ZeroDuration() &&
      (keyring_reloader_ != nullptr || tls_check_ != nullptr)) {
    KeyringReloader* keyring = keyring_reloader_.get();
    TlsFileCheck* tls = tls_check_.get();
    reload_task_ = std::make_unique<PeriodicTask>(options_.reload_interval, [keyring, tls] {
      if (keyring != nullptr) keyring->ReloadIfChanged();
      if (tls != nullptr) tls->CheckIfChanged();
    });
    LogInfo(absl::StrCat("reload: ", keyring != nullptr ? "keyring" : "",
                         keyring != nullptr && tls != nullptr ? " and " : "",
                         tls != nullptr ? "TLS files" : "", " checked every ",
                         FormatLogDuration(options_.reload_interval),
                         tls != nullptr
                             ? absl::StrCat(" (gRPC re-reads TLS files every ",
                                            TlsRefreshSeconds(options_.reload_interval), "s)")
                             : ""));
  }
}

absl::Status Server::ReloadKeyring() {
  if (keyring_reloader_ == nullptr) {
    return absl::FailedPreconditionError("no --keys_dir: there is no keyring to reload");
  }
  return keyring_reloader_->Reload();
}

void Server::ReopenAuditLog() {
  if (audit_ != nullptr) audit_->Reopen();
}

void Server::BeginDrain() {
  if (server_ == nullptr) return;
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
  }
  SetHealth(false);
  metrics_->SetDraining(true);
  LogInfo(absl::StrCat("draining: health NOT_SERVING on ", HostOf(options_.listen), ":", port_,
                       health_server_ != nullptr
                           ? absl::StrCat(" and ", HostOf(options_.health_listen), ":",
                                          health_port_)
                           : std::string(),
                       "; RPCs are still served"));
}

void Server::Shutdown() {
  if (server_ == nullptr) return;
  BeginDrain();
  LogInfo(absl::StrCat("shutting down: no new RPCs (GOAWAY); in-flight RPCs and streams may "
                       "finish for up to ",
                       FormatLogDuration(options_.shutdown_grace), " (--shutdown_grace)"));
  // At the grace end the watch counts the calls still in flight and then cancels them
  // (grpc_server_cancel_all_calls, what grpc::Server::Shutdown does at its deadline), so
  // the count is of the calls it cancels. gRPC's own deadline, a second later, is a
  // backstop only. The grace runs from `begun`, notified as Shutdown is called (gRPC
  // cancels calls only of a server that is shutting down).
  absl::Notification begun, stopped;
  std::thread grace_watch([this, &begun, &stopped] {
    begun.WaitForNotification();
    if (stopped.WaitForNotificationWithTimeout(options_.shutdown_grace)) return;
    LogInfo(absl::StrCat("shutdown grace of ", FormatLogDuration(options_.shutdown_grace),
                         " over: cancelling ", metrics_->inflight().load(),
                         " RPCs still in flight"));
    grpc_server_cancel_all_calls(server_->c_server());
  });
  const auto backstop = std::chrono::system_clock::now() +
                        absl::ToChronoMilliseconds(options_.shutdown_grace + absl::Seconds(1));
  begun.Notify();
  server_->Shutdown(backstop);
  server_->Wait();
  stopped.Notify();
  grace_watch.join();
  if (health_server_ != nullptr) {
    health_server_->Shutdown(std::chrono::system_clock::now());
    health_server_->Wait();
  }
  LogInfo("shut down");
}

void Server::Wait() {
  if (server_ != nullptr) server_->Wait();
}

}  // namespace smcrypt::server
