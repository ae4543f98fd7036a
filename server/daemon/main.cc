// smcryptd — the smcrypt gRPC service. Flags only; the wiring is in server.cc.
//
//   smcryptd --listen=0.0.0.0:50051 --metrics_listen=0.0.0.0:9464 --keys_dir=/etc/smcrypt/keys
//
// SIGHUP reloads the keyring (--keys_dir) now (a bad keyring is logged and the previous
// one kept) and reopens the --audit_log file. SIGTERM or SIGINT: health turns
// NOT_SERVING while every RPC is still served for --drain_delay (a second SIGTERM or SIGINT
// ends the delay), then the server stops accepting RPCs, drains in-flight RPCs for up to
// --shutdown_grace, the audit queue is written out (lines that cannot be written are
// dropped and their number logged), and the process exits 0. Start-up errors
// (bad flag, bad key file, unknown CPU feature name, address in use) exit 1.
#include <signal.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "google/protobuf/stubs/logging.h"
#include "grpc/support/log.h"
#include "server/daemon/server.h"
#include "server/engine/command_line.h"
#include "server/engine/logging.h"
#include "server/engine/sizing.h"
#include "smcrypt/cpu.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051",
          "gRPC listen address host:port (port 0 picks a free port and logs it)");
ABSL_FLAG(std::string, metrics_listen, "0.0.0.0:9464",
          "Prometheus /metrics listen address host:port; empty disables it");
ABSL_FLAG(std::string, health_listen, "",
          "HOST:PORT of a second, plaintext gRPC listener serving only grpc.health.v1 (for "
          "Kubernetes gRPC probes, which cannot use TLS); empty: none");
ABSL_FLAG(std::string, keys_dir, "",
          "keyring directory of <key_id>.pem files (a mounted Kubernetes Secret works); "
          "default: no keyring");
ABSL_FLAG(std::string, inline_private_keys, "allow",
          "allow|deny: whether requests may carry private keys inline (deny: "
          "PERMISSION_DENIED, and GenerateKeyPair returns only the public key)");
ABSL_FLAG(std::string, tls_cert, "", "server certificate chain (PEM); enables TLS with --tls_key");
ABSL_FLAG(std::string, tls_key, "", "server private key (PEM)");
ABSL_FLAG(std::string, tls_client_ca, "",
          "CA bundle (PEM) for client certificates; enables mTLS (clients without a "
          "certificate signed by it are refused)");
ABSL_FLAG(uint64_t, max_message_bytes, 4u << 20,
          "largest request message in bytes (default 4 MiB, gRPC's usual limit); larger "
          "is RESOURCE_EXHAUSTED. Use the *Stream RPCs for larger data");
ABSL_FLAG(int64_t, max_inflight, 65536,
          "RPCs allowed in flight at once; more are RESOURCE_EXHAUSTED");
ABSL_FLAG(std::optional<uint64_t>, max_inflight_bytes, std::nullopt,
          "bytes of requests and responses that calls in flight may hold (default: a "
          "share of the memory limit, docs/deployment.md \"Sizing\"; 128 MiB without one): "
          "a unary call is charged from admission until its response has been "
          "handed to the transport, a stream for each message until its responses are "
          "written; a call or stream message that would pass it is RESOURCE_EXHAUSTED at "
          "once. 0: no byte limit; otherwise at least --max_message_bytes");
ABSL_FLAG(std::optional<uint64_t>, max_stream_inflight_bytes, std::nullopt,
          "bytes one stream may hold (its message being handled, responses not yet written, "
          "input its cipher keeps); a stream message that would pass it is "
          "RESOURCE_EXHAUSTED unless the stream holds nothing else. Default: "
          "max(--max_inflight_bytes / 8, 5 x --max_message_bytes), at most "
          "--max_inflight_bytes. 0: no such limit; otherwise at least --max_message_bytes");
ABSL_FLAG(std::optional<uint64_t>, max_connection_inflight_bytes, std::nullopt,
          "bytes the calls of one client connection (unary calls and streams) may hold "
          "together; a call or stream message that would pass it is RESOURCE_EXHAUSTED "
          "unless the connection's calls hold nothing else. Default: "
          "max(--max_inflight_bytes / 4, the stream limit), at most --max_inflight_bytes. "
          "0: no such limit; otherwise at least --max_message_bytes");
ABSL_FLAG(std::optional<uint64_t>, grpc_memory_quota, std::nullopt,
          "bytes gRPC may hold in its transports (requests still arriving, responses being "
          "sent); near it gRPC shrinks HTTP/2 flow-control windows so clients wait to send "
          "(default: a share of the memory limit; 256 MiB without one). 0: unlimited");
ABSL_FLAG(std::optional<uint32_t>, max_concurrent_streams, std::nullopt,
          "calls one client connection may have open at once (HTTP/2 "
          "SETTINGS_MAX_CONCURRENT_STREAMS); clients queue the rest. Bounds the per-call "
          "state gRPC holds: connections x this (default: what fits a share of the memory "
          "limit with --sizing_connections connections; 256 without one). 0: unlimited");
ABSL_FLAG(std::optional<uint32_t>, sizing_connections, std::nullopt,
          "client connections the memory sizing plans for (default 64): under a memory "
          "limit the default --max_concurrent_streams lets this many connections' open "
          "calls fit their share. smcryptd does not limit connections: cap them at the load "
          "balancer");
ABSL_FLAG(std::string, cgroup_root, "/sys/fs/cgroup",
          "where the cgroup file systems of /proc/self/mountinfo are read (mount points "
          "under /sys/fs/cgroup are read under this directory instead); empty: no cgroup "
          "is read (the host's CPUs, no memory limit)");
ABSL_FLAG(bool, print_sizing, false,
          "print the container limits found and the values sized from them (one "
          "name=value line each, the source in parentheses) and exit; flags a start "
          "refuses fail it the same way");
ABSL_FLAG(uint64_t, malloc_trim_after_bytes, 16u << 20,
          "once the --max_inflight_bytes charge has fallen this many bytes from its peak "
          "(a burst has drained), freed heap is returned to the OS with malloc_trim "
          "(default 16 MiB). 0: never");
ABSL_FLAG(absl::Duration, stream_idle_timeout, absl::Seconds(60),
          "a streaming RPC with no message received or sent for this long is cancelled "
          "(CANCELLED), freeing its --max_inflight slot; 0 disables it");
ABSL_FLAG(absl::Duration, max_connection_age, absl::ZeroDuration(),
          "a client connection open this long is sent GOAWAY (calls in flight get up to "
          "--shutdown_grace to finish), so the client reconnects and resolves the name "
          "again, reaching replicas added since; 0 (default): connections never age out");
ABSL_FLAG(bool, allow_insecure_key_permissions, false,
          "load keyring files readable or writable by any user (and a --keys_dir any "
          "user may write), with a warning; by default they fail start-up");
ABSL_FLAG(std::string, access_policy, "",
          "file of 'allow <operations> <key_ids> <identity>' rules (server/engine/access_policy.h) "
          "mapping mTLS client identities to keys and operations; requests outside it are "
          "PERMISSION_DENIED. Empty: every request is allowed");
ABSL_FLAG(std::string, audit_log, "",
          "where every use of a private or secret key (Encrypt, Decrypt, EncryptBatch "
          "items, EncryptStream, DecryptStream, Hmac, Sign and SignBatch items, "
          "PublicKeyDecrypt, HybridDecrypt and its stream, KeyExchange) and policy denials "
          "are written as JSON lines: empty for stderr, a file to append to (reopened on "
          "SIGHUP), or 'none'");
ABSL_FLAG(std::string, audit_failure, "closed",
          "when the audit log cannot be written or its queue is full: 'closed' refuses "
          "calls that need an audit line (UNAVAILABLE, reason AUDIT_UNAVAILABLE) before "
          "their key is used, until a write succeeds; 'open' serves them and drops their "
          "lines (smcrypt_audit_lines_dropped_total)");
ABSL_FLAG(uint64_t, audit_queue_lines, 65536,
          "audit lines queued in memory for the writer thread, at most");
ABSL_FLAG(uint64_t, audit_queue_bytes, 16u << 20,
          "bytes of audit lines queued in memory for the writer thread, at most "
          "(default 16 MiB; at least 8192)");
ABSL_FLAG(absl::Duration, reload_interval, absl::Seconds(10),
          "how often --keys_dir and the TLS files are checked for changes: a changed "
          "keyring is reloaded (a bad one is logged and the previous one kept), changed "
          "TLS files are used for new handshakes (gRPC re-reads them in whole seconds, at "
          "least 1). 0: the keyring reloads only on SIGHUP, TLS files are read once");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(20),
          "on SIGTERM/SIGINT, after --drain_delay, how long in-flight RPCs may run before they "
          "are cancelled; 0 to 1h");
ABSL_FLAG(absl::Duration, drain_delay, absl::Seconds(5),
          "on SIGTERM/SIGINT, how long health is NOT_SERVING while every RPC is still served, "
          "so Kubernetes endpoints and load balancers stop sending before the listener "
          "closes; a second SIGTERM/SIGINT ends it early. 0: none; at most 10m");
ABSL_FLAG(int32_t, worker_threads, -1,
          "threads that run unary crypto work, off gRPC's transport threads; -1: the CPU "
          "quota rounded down (at least 1), else one per CPU the process may run on; 0: run "
          "it inline on gRPC's callback threads");
ABSL_FLAG(std::optional<uint64_t>, public_key_cache_size, std::nullopt,
          "entries in each of the three LRU caches of parsed inline public keys (SM2, EC, "
          "RSA, HPKE recipients), keyed by algorithm, options and key bytes (default: what "
          "fits a share of the memory limit, at most 1024; 1024 without one); 0 disables it. "
          "Inline private keys are never cached; keyring keys are parsed when the keyring "
          "is loaded");
ABSL_FLAG(bool, batching, true,
          "run concurrent unary Sign, Verify and PublicKeyEncrypt (SM2), HybridEncrypt "
          "(HPKE-SM2-SM3-SM4GCM) and Hash (SM3, up to 4 KiB) calls that arrive while others "
          "of their operation are queued or running together through the multi-buffer "
          "paths; a lone call runs at once. --batching=false runs every call on its own");
ABSL_FLAG(uint32_t, batch_max_size, 64, "calls per batch at most, 1 to 4096");
ABSL_FLAG(absl::Duration, batch_max_delay, absl::ZeroDuration(),
          "0 (default) to 10ms: how long a batch that is not full waits for more calls, "
          "holding a worker thread; > 0 trades a lone call's latency for throughput");
ABSL_FLAG(absl::Duration, coalesce_hash_window, absl::ZeroDuration(),
          "deprecated: sets --batch_max_delay when that is 0 (Hash(SM3) is batched with "
          "the other operations)");
ABSL_FLAG(std::string, cpu_disable, "",
          "comma list of CPU features to hide from dispatch (aesni, pclmul, avx, avx2, "
          "bmi2, adx, avx512, vaes, vpclmulqdq, gfni, ifma, sha; on arm64 asimd, pmull, "
          "sha2, sm3, sm4, sve), added to "
          "SMCRYPT_CPU_DISABLE");
ABSL_FLAG(std::string, log_format, "text",
          "text|json: log lines on stderr as text (\"<time> <I|W|E> <message>\") or one JSON "
          "object per line (ts, level, msg and structured fields)");
ABSL_FLAG(std::string, log_level, "info",
          "info|warning|error: the least severe log lines written (audit lines are not "
          "log lines: --audit_log)");

namespace {

// ValidHostPort accepts "host:port" and "[v6]:port" with a decimal port of 0–65535; a
// missing port would otherwise make gRPC pick 443.
bool ValidHostPort(absl::string_view address) {
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos || colon == 0) return false;
  if (address.substr(0, colon).find(':') != absl::string_view::npos &&
      !(address[0] == '[' && address[colon - 1] == ']')) {
    return false;  // an IPv6 address must be bracketed
  }
  const absl::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value <= 65535;
}

using smcrypt::server::LogError;
using smcrypt::server::LogInfo;
using smcrypt::server::LogWarning;

// SetUsage sets --help's usage text and the files whose flags it lists.
void SetUsage() {
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "server/daemon/main.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.version_string = [] { return std::string("smcryptd " SMCRYPT_VERSION "\n"); };
  usage.normalize_filename = [](absl::string_view file) {
    const size_t at = file.rfind("server/");
    return std::string(at == absl::string_view::npos ? file : file.substr(at));
  };
  absl::SetFlagsUsageConfig(usage);
  absl::SetProgramUsageMessage(
      "smcrypt gRPC service: SM2/SM3/SM4 and international algorithms.\n"
      "Usage: smcryptd [--listen=HOST:PORT] [--keys_dir=DIR] [--tls_cert=F --tls_key=F] ...");
}

// GrpcLog writes gRPC's own log lines (as many as GRPC_VERBOSITY lets through: errors by
// default) as smcryptd's, in --log_format, with gRPC's source file and line as fields.
void GrpcLog(gpr_log_func_args* args) {
  smcrypt::server::Log(args->severity == GPR_LOG_SEVERITY_ERROR
                           ? smcrypt::server::LogSeverity::kError
                           : smcrypt::server::LogSeverity::kInfo,
                       absl::StrCat("grpc: ", args->message),
                       {{"file", args->file}, {"line", args->line}});
}

// ProtobufLog writes protobuf's log lines (a string field that is not UTF-8, ...) the same
// way.
void ProtobufLog(google::protobuf::LogLevel level, const char* file, int line,
                 const std::string& message) {
  smcrypt::server::Log(level >= google::protobuf::LOGLEVEL_ERROR
                           ? smcrypt::server::LogSeverity::kError
                       : level == google::protobuf::LOGLEVEL_WARNING
                           ? smcrypt::server::LogSeverity::kWarning
                           : smcrypt::server::LogSeverity::kInfo,
                       absl::StrCat("protobuf: ", message),
                       {{"file", file}, {"line", line}});
}

// ApplyLogFlags sets the log format and level (--log_format, --log_level); false (logged)
// when either is invalid.
bool ApplyLogFlags() {
  absl::StatusOr<smcrypt::server::LogFormat> format =
      smcrypt::server::ParseLogFormat(absl::GetFlag(FLAGS_log_format));
  if (!format.ok()) {
    LogError(format.status().message());
    return false;
  }
  smcrypt::server::SetLogFormat(*format);
  absl::StatusOr<smcrypt::server::LogSeverity> level =
      smcrypt::server::ParseLogLevel(absl::GetFlag(FLAGS_log_level));
  if (!level.ok()) {
    LogError(level.status().message());
    return false;
  }
  smcrypt::server::SetMinLogSeverity(*level);
  gpr_set_log_function(GrpcLog);
  google::protobuf::SetLogHandler(ProtobufLog);
  return true;
}

// ApplyCpuFlags fixes the CPU feature mask (SMCRYPT_CPU_DISABLE, --cpu_disable) before any
// algorithm runs; false (logged) when either is invalid.
bool ApplyCpuFlags() {
  // The CPU feature mask must be fixed before any algorithm runs.
  absl::Status s = smcrypt::CpuFeatureEnvStatus();
  if (!s.ok()) {
    LogError(absl::StrCat("SMCRYPT_CPU_DISABLE: ", s.message()));
    return false;
  }
  if (!absl::GetFlag(FLAGS_cpu_disable).empty()) {
    s = smcrypt::SetCpuDisable(absl::GetFlag(FLAGS_cpu_disable));
    if (!s.ok()) {
      LogError(absl::StrCat("--cpu_disable: ", s.message()));
      return false;
    }
  }
  return true;
}

// CheckListenFlags: false (logged) unless --listen, --metrics_listen and --health_listen
// are HOST:PORT (the last two may be empty).
bool CheckListenFlags() {
  if (!ValidHostPort(absl::GetFlag(FLAGS_listen))) {
    LogError(absl::StrCat("--listen must be HOST:PORT (e.g. 0.0.0.0:50051), got '",
                          absl::GetFlag(FLAGS_listen), "'"));
    return false;
  }
  if (!absl::GetFlag(FLAGS_metrics_listen).empty() &&
      !ValidHostPort(absl::GetFlag(FLAGS_metrics_listen))) {
    LogError(absl::StrCat("--metrics_listen must be HOST:PORT or empty, got '",
                          absl::GetFlag(FLAGS_metrics_listen), "'"));
    return false;
  }

  if (!absl::GetFlag(FLAGS_health_listen).empty() &&
      !ValidHostPort(absl::GetFlag(FLAGS_health_listen))) {
    LogError(absl::StrCat("--health_listen must be HOST:PORT or empty, got '",
                          absl::GetFlag(FLAGS_health_listen), "'"));
    return false;
  }
  return true;
}

// FlagsGiven names the flags `argv` gives, whatever their value (FlagsOnCommandLine:
// every form Abseil parses, a --flagfile's flags and --fromenv's included). Called before
// absl::ParseCommandLine, once every flag is registered.
std::set<std::string> FlagsGiven(int argc, char** argv) {
  std::map<std::string, bool> known;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    known.emplace(std::string(name), flag->IsOfType<bool>());
  }
  return smcrypt::server::FlagsOnCommandLine(std::vector<std::string>(argv + 1, argv + argc),
                                             known);
}

// SizeFromFlags reads the container's limits (--cgroup_root) and sizes the worker
// threads and memory budgets the flags leave open (server/engine/sizing.h).
smcrypt::server::Sizing SizeFromFlags() {
  smcrypt::server::SizingFlags flags;
  flags.worker_threads = absl::GetFlag(FLAGS_worker_threads);
  flags.max_inflight_bytes = absl::GetFlag(FLAGS_max_inflight_bytes);
  flags.grpc_memory_quota = absl::GetFlag(FLAGS_grpc_memory_quota);
  flags.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  flags.public_key_cache_size = absl::GetFlag(FLAGS_public_key_cache_size);
  flags.sizing_connections = absl::GetFlag(FLAGS_sizing_connections);
  flags.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  return smcrypt::server::DeriveSizing(
      smcrypt::server::ReadContainerLimits(absl::GetFlag(FLAGS_cgroup_root)), flags);
}

// LogSizing logs the sizing, what could not be read, and the warning of flags whose
// worst case passes the memory limit.
void LogSizing(const smcrypt::server::Sizing& sizing) {
  for (const std::string& note : sizing.limits.notes) LogWarning(absl::StrCat("sizing: ", note));
  LogInfo(absl::StrCat("sizing: ", smcrypt::server::FormatSizing(sizing)));
  if (!sizing.warning.empty()) LogWarning(absl::StrCat("memory: ", sizing.warning));
  for (const std::string& line : sizing.minimums) LogWarning(absl::StrCat("sizing: ", line));
}

// PrintSizing writes --print_sizing's lines to stdout.
void PrintSizing(const smcrypt::server::Sizing& sizing) {
  const smcrypt::server::ContainerLimits& l = sizing.limits;
  std::string out = absl::StrCat("cgroup=", l.cgroup, "\ncpu_limit=", l.cpu_limit,
                                 "\nmemory_limit_bytes=", l.memory_limit_bytes,
                                 "\ncpus_available=", l.cpus_available, "\n");
  for (const smcrypt::server::SizedValue& v : sizing.values) {
    absl::StrAppend(&out, v.name, "=", v.value, " (", v.source, ")\n");
  }
  absl::StrAppend(&out, "memory_bound_bytes=",
                  sizing.memory_bound_bytes.has_value()
                      ? absl::StrCat(*sizing.memory_bound_bytes)
                      : std::string("unbounded"),
                  "\n");
  for (const std::string& note : l.notes) absl::StrAppend(&out, "note=", note, "\n");
  if (!sizing.warning.empty()) absl::StrAppend(&out, "warning=", sizing.warning, "\n");
  for (const std::string& line : sizing.minimums) absl::StrAppend(&out, "warning=", line, "\n");
  std::fputs(out.c_str(), stdout);
}

// SizeOptionsFromFlags sizes `options` (SizeFromFlags), fills the byte limits the share
// limits derive from and appends those to the sizing (AddShareLimitsToSizing).
void SizeOptionsFromFlags(smcrypt::server::ServerOptions* options) {
  options->sizing = SizeFromFlags();
  options->max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options->max_inflight_bytes = options->sizing.max_inflight_bytes;
  options->max_stream_inflight_bytes = absl::GetFlag(FLAGS_max_stream_inflight_bytes);
  options->max_connection_inflight_bytes = absl::GetFlag(FLAGS_max_connection_inflight_bytes);
  smcrypt::server::AddShareLimitsToSizing(options);
}

// OptionsFromFlags fills the rest of `options` from the flags and `options->sizing`
// (SizeOptionsFromFlags ran); false (logged) for a bad value.
bool OptionsFromFlags(smcrypt::server::ServerOptions* options) {
  options->worker_threads = options->sizing.worker_threads;
  options->cpus = options->sizing.cpus;
  options->listen = absl::GetFlag(FLAGS_listen);
  options->health_listen = absl::GetFlag(FLAGS_health_listen);
  options->metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options->keys_dir = absl::GetFlag(FLAGS_keys_dir);
  const std::string inline_keys = absl::GetFlag(FLAGS_inline_private_keys);
  if (inline_keys != "allow" && inline_keys != "deny") {
    LogError(absl::StrCat("--inline_private_keys must be allow or deny, got '", inline_keys, "'"));
    return false;
  }
  options->allow_inline_private_keys = inline_keys == "allow";
  options->tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options->tls_key = absl::GetFlag(FLAGS_tls_key);
  options->tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options->max_inflight = absl::GetFlag(FLAGS_max_inflight);
  options->shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  options->drain_delay = absl::GetFlag(FLAGS_drain_delay);
  options->public_key_cache_size = options->sizing.public_key_cache_size;
  options->batching.enabled = absl::GetFlag(FLAGS_batching);
  options->batching.max_batch = absl::GetFlag(FLAGS_batch_max_size);
  options->batching.max_delay = absl::GetFlag(FLAGS_batch_max_delay);
  if (options->batching.max_delay == absl::ZeroDuration() &&
      absl::GetFlag(FLAGS_coalesce_hash_window) != absl::ZeroDuration()) {
    LogInfo("--coalesce_hash_window is deprecated: it sets --batch_max_delay");
    options->batching.max_delay = absl::GetFlag(FLAGS_coalesce_hash_window);
  }
  options->stream_idle_timeout = absl::GetFlag(FLAGS_stream_idle_timeout);
  options->max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  options->grpc_memory_quota = options->sizing.grpc_memory_quota;
  options->max_concurrent_streams = options->sizing.max_concurrent_streams;
  options->malloc_trim_after_bytes = absl::GetFlag(FLAGS_malloc_trim_after_bytes);
  options->allow_insecure_key_permissions = absl::GetFlag(FLAGS_allow_insecure_key_permissions);
  options->access_policy = absl::GetFlag(FLAGS_access_policy);
  options->audit_log = absl::GetFlag(FLAGS_audit_log);
  absl::StatusOr<smcrypt::server::AuditFailure> audit_failure =
      smcrypt::server::ParseAuditFailure(absl::GetFlag(FLAGS_audit_failure));
  if (!audit_failure.ok()) {
    LogError(std::string(audit_failure.status().message()));
    return false;
  }
  options->audit_failure = *audit_failure;
  options->audit_queue_lines = absl::GetFlag(FLAGS_audit_queue_lines);
  options->audit_queue_bytes = absl::GetFlag(FLAGS_audit_queue_bytes);
  options->reload_interval = absl::GetFlag(FLAGS_reload_interval);
  return true;
}

// SignalName names the signals of `signals` in main: SIGTERM, SIGINT, SIGHUP.
const char* SignalName(int sig) {
  return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP";
}

// Reload is SIGHUP: the keyring is reloaded and the audit log reopened.
void Reload(smcrypt::server::Server* server) {
  LogInfo("received SIGHUP: reloading the keyring, reopening the audit log");
  server->ReopenAuditLog();
  // A failed reload has been logged; the server keeps serving with the previous keyring.
  absl::Status s = server->ReloadKeyring();
  if (absl::IsFailedPrecondition(s)) LogInfo(absl::StrCat("SIGHUP: ", s.message()));
}

// WaitDrainDelay serves on for `delay` (SIGHUP still reloads); a SIGTERM or SIGINT ends
// the wait early.
void WaitDrainDelay(smcrypt::server::Server* server, const sigset_t& signals,
                    absl::Duration delay) {
  const absl::Time end = absl::Now() + delay;
  for (;;) {
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) {
      LogInfo(absl::StrCat("drain delay of ", smcrypt::server::FormatLogDuration(delay), " over"));
      return;
    }
    const timespec timeout = absl::ToTimespec(left);
    const int sig = sigtimedwait(&signals, nullptr, &timeout);
    if (sig < 0) continue;  // EAGAIN (time is up) or EINTR: the loop checks the time
    if (sig == SIGHUP) {
      Reload(server);
      continue;
    }
    LogInfo(absl::StrCat("received ", SignalName(sig), " again: skipping the remaining ",
                         smcrypt::server::FormatLogDuration(absl::Trunc(end - absl::Now(),
                                                          absl::Milliseconds(1))),
                         " of the drain delay"));
    return;
  }
}

// ServeUntilSignal reloads the keyring and reopens the audit log on SIGHUP; on SIGTERM or
// SIGINT (`signals`, blocked in every thread) it drains `server`: health NOT_SERVING,
// RPCs served on for `drain_delay`, then Shutdown.
void ServeUntilSignal(smcrypt::server::Server* server, const sigset_t& signals,
                      absl::Duration drain_delay) {
  int sig = 0;
  for (;;) {
    sigwait(&signals, &sig);
    if (sig != SIGHUP) break;
    Reload(server);
  }
  LogInfo(absl::StrCat("received ", SignalName(sig)));
  server->BeginDrain();
  if (drain_delay > absl::ZeroDuration()) {
    LogInfo(absl::StrCat("drain delay: serving on for ", smcrypt::server::FormatLogDuration(drain_delay),
                         " (--drain_delay) so that endpoints and load balancers stop sending; "
                         "a second SIGTERM or SIGINT skips it"));
    WaitDrainDelay(server, signals, drain_delay);
  }
  server->Shutdown();
}

}  // namespace

int main(int argc, char** argv) {
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex lock (gRPC's own locks
  // included) runs the deadlock detector's lock-graph bookkeeping: about 5 % of a small
  // call's CPU in a perf profile of smcryptd. Lock order is not checked in production.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  SetUsage();
  smcrypt::server::ServerOptions options;
  options.flags_given = FlagsGiven(argc, argv);
  absl::ParseCommandLine(argc, argv);

  // Block the shutdown and reload signals before any thread starts, so every thread
  // inherits the mask and main() alone receives them with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (!ApplyLogFlags() || !ApplyCpuFlags() || !CheckListenFlags()) return 1;
  SizeOptionsFromFlags(&options);
  if (absl::GetFlag(FLAGS_print_sizing)) {
    // The flags a real start refuses fail here too, with the same error.
    if (!OptionsFromFlags(&options)) return 1;
    if (absl::Status s = smcrypt::server::CheckOptions(options); !s.ok()) {
      LogError(absl::StrCat("start-up failed: ", s.ToString()));
      return 1;
    }
    PrintSizing(options.sizing);
    return 0;
  }
  LogSizing(options.sizing);
  if (!OptionsFromFlags(&options)) return 1;

  smcrypt::server::Server server;
  absl::Status s = server.BuildAndStart(options);
  if (!s.ok()) {
    LogError(absl::StrCat("start-up failed: ", s.ToString()));
    return 1;
  }
  ServeUntilSignal(&server, signals, options.drain_delay);
  return 0;
}
