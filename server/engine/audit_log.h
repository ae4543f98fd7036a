// audit_log.h — one JSON line per use of a private or secret key (--audit_log).
//
// smcryptd writes an audit record for every request that uses a private or secret key
// on the server's behalf — Encrypt, Decrypt, each EncryptBatch item, EncryptStream and
// DecryptStream (one line per stream, with its final status), Sign (each SignBatch
// item), PublicKeyDecrypt, HybridDecrypt, HybridDecryptStream, KeyExchange and Hmac,
// failures included (a tag that does not authenticate is a line with INVALID_ARGUMENT)
// — and for every request the access policy denies (the table's `audited` column,
// server/service/method_spec.h). A line looks like (one line, keys in this order):
//
//   {"time":"2026-11-30T02:00:00.123Z","type":"audit","client":"payments.example.com",
//    "authenticated":true,"peer":"ipv4:10.0.0.7:51234","method":"Sign",
//    "operation":"sign","algorithm":"SM2","key_source":"keyring","key_id":"signing",
//    "status":"OK"}
//
// A keyring key's line has "key_version":n after key_id when the request named a version
// or the key is versioned (a `<key_id>.v<n>.pem` file; crypto.proto, KeyRef "Key
// versions"): the version used. A request that failed before its version was fixed (a
// policy denial, an unknown key or version) has the version it named, if any. A key of
// one plain `<key_id>.pem` used without a version gets no key_version, as before key
// versions existed. A check that tried several versions of a key named without one
// (crypto.proto, KeyRef "Key versions") has "key_versions_tried":[3,2,1] after it, in the
// order tried, and key_version is the one that authenticated (none when none did).
//
// key_source is "keyring" (with key_id), "inline" (the key came in the request; its
// bytes are never written) or "none". status is the canonical code name
// (absl::StatusCodeToString: OK, PERMISSION_DENIED, INVALID_ARGUMENT, ...). No key
// material, payload or error message is ever written; strings from the request (key_id)
// and the certificate are cut to 256 bytes at a UTF-8 boundary and written by
// nlohmann::json as ASCII (\uXXXX escapes; bytes that are not UTF-8 become U+FFFD).
//
// Writing: the request path only formats a line and appends it to a bounded in-memory
// queue (at most `max_queue_lines` lines and `max_queue_bytes` bytes); one writer thread
// drains it: woken by a line, it waits kBatchDelay for more (unless 1,024 are queued),
// then writes every queued line with one write(2) (to a stderr that is a pipe at most
// PIPE_BUF bytes per write, whole lines, so that a line is never split by smcryptd's
// other log lines) to the file, opened with O_APPEND and created 0600, or to stderr.
// Reopen (SIGHUP) makes the writer open the path again before its next write, so that a
// file renamed by logrotate (without copytruncate) is followed by a new one. The
// destructor writes what is queued, then stops the writer; lines it cannot write (a
// failed write or open) are dropped, counted in lines_dropped, and one error line names
// their number ("audit log: 1 line dropped at shutdown (write failed: ...)").
//
// Failure (--audit_failure): the log is unhealthy from a failed write, a failed reopen or
// a line refused by a full queue until the next successful write (or open). A failed write is
// retried every kRetryInterval (a failed reopen: the open is retried). Under kClosed,
// Admit refuses (UNAVAILABLE, reason AUDIT_UNAVAILABLE) while the log is unhealthy or the
// queue has no room for one more line of kMaxLineBytes, counting the lines admitted and
// not yet queued; a line that Admit admitted is always queued, and a line whose write
// fails stays queued until a write succeeds. Under kOpen, Admit always succeeds, a line
// that finds the queue full is dropped and a failed write drops the lines it held. The
// lines of policy denials are never admitted: they are dropped when the queue is full.
//
// Thread-safe.
#ifndef SMCRYPT_SERVER_AUDIT_LOG_H_
#define SMCRYPT_SERVER_AUDIT_LOG_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/engine/access_policy.h"

namespace smcrypt::server {

// AuditRecord is one audited request. The views must live for the Write call.
struct AuditRecord {
  const ClientIdentity* client = nullptr;
  absl::string_view method;     // RPC name: "Sign", "HybridDecryptStream", ...
  AccessOperation operation = AccessOperation::kSign;
  absl::string_view algorithm;  // "SM2", ... (empty when the request named none)
  AccessKey key;
  uint32_t key_version = 0;  // 0: not written
  // key_versions_tried: the versions a check tried, in order, when it tried more than one
  // (written after key_version; fewer than two: not written).
  absl::Span<const uint32_t> key_versions_tried;
  absl::StatusCode code = absl::StatusCode::kOk;
};

// AuditFailure: what a call that needs an audit line gets while the log is unhealthy.
enum class AuditFailure {
  kClosed,  // refused with UNAVAILABLE, reason AUDIT_UNAVAILABLE, before the key is used
  kOpen,    // served; its line is dropped (and counted) when it cannot be queued or written
};

// ParseAuditFailure reads "closed" or "open". InvalidArgument otherwise.
absl::StatusOr<AuditFailure> ParseAuditFailure(absl::string_view s);

struct AuditLogOptions {
  // path: "" writes to stderr, "none" disables auditing, anything else is a file.
  std::string path;
  AuditFailure failure = AuditFailure::kClosed;
  // The queue's bounds (both at least 1; max_queue_bytes at least kMaxLineBytes).
  size_t max_queue_lines = 65536;
  size_t max_queue_bytes = size_t{16} << 20;
};

// AuditStats: the counters and state behind the smcrypt_audit_* metrics.
struct AuditStats {
  uint64_t lines_written = 0;
  uint64_t lines_dropped = 0;
  uint64_t write_errors = 0;  // failed writes and failed (re)opens
  uint64_t queue_lines = 0;   // queued, not yet written
  uint64_t queue_bytes = 0;
  bool healthy = true;
};

class AuditLog {
 public:
  // kMaxLineBytes bounds a line (five strings of at most 256 bytes, each byte at most a
  // 6-character escape, and the fixed fields); under kClosed, Admit holds this much room
  // in the queue for the line it admits.
  static constexpr size_t kMaxLineBytes = 8192;
  static constexpr absl::Duration kRetryInterval = absl::Seconds(1);
  // kBatchDelay: how long the writer, woken by a line, waits for more before it writes.
  static constexpr absl::Duration kBatchDelay = absl::Milliseconds(10);

  // Open opens the log and starts its writer (none for "none": enabled() is false).
  // Errors: InvalidArgument "--audit_log: cannot open <path>: <reason>", or naming the
  // queue bound that is too small.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(const AuditLogOptions& options);
  // Open(path): the default options with `path`.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(const std::string& path);
  ~AuditLog();

  bool enabled() const { return writer_ != nullptr; }
  AuditFailure failure() const { return failure_; }
  // Admit is called before a key that needs an audit line is used: OK (under kClosed,
  // with room held for one line that the next Write(…, true) takes), or UNAVAILABLE with
  // reason AUDIT_UNAVAILABLE (see "Failure" above). Every admitted line must be written.
  absl::Status Admit() const;
  // Write formats `record` and queues its line; `admitted`: Admit admitted it.
  void Write(const AuditRecord& record, bool admitted = false) const;
  // Reopen asks the writer to open the path again before its next write (SIGHUP);
  // nothing for stderr.
  void Reopen() const;
  // Flush waits until every line queued before the call was written or dropped, for at
  // most `timeout`; false when it timed out.
  bool Flush(absl::Duration timeout) const;
  AuditStats stats() const;
  // FormatLine returns the JSON line (with '\n') Write would queue, for tests.
  static std::string FormatLine(const AuditRecord& record);
  // AppendLine appends that line to `*out`.
  static void AppendLine(std::string* out, const AuditRecord& record);

  class Writer;

 private:
  AuditLog(AuditFailure failure, std::unique_ptr<Writer> writer);
  AuditFailure failure_;
  std::unique_ptr<Writer> writer_;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_AUDIT_LOG_H_
