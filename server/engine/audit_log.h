// audit_log.h — one JSON line per private-key operation (--audit_log).
//
// smcryptd writes an audit record for every request that uses a private or secret key
// on the server's behalf — Sign (each SignBatch item), PublicKeyDecrypt, HybridDecrypt,
// HybridDecryptStream, KeyExchange and Hmac — and for every request the access policy
// denies. A line
// looks like (one line, keys in this order):
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
// Thread-safe: each line is one write(2) on a file opened with O_APPEND (or stderr).
#ifndef SMCRYPT_SERVER_AUDIT_LOG_H_
#define SMCRYPT_SERVER_AUDIT_LOG_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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

class AuditLog {
 public:
  // Open: `path` "" writes to stderr, "none" disables auditing (enabled() is false),
  // anything else is a file opened for appending (created 0600).
  // Errors: InvalidArgument "--audit_log: cannot open <path>: <reason>".
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(const std::string& path);
  ~AuditLog();

  bool enabled() const { return fd_ >= 0; }
  void Write(const AuditRecord& record) const;
  // FormatLine returns the JSON line (with '\n') Write would write, for tests.
  static std::string FormatLine(const AuditRecord& record);

 private:
  AuditLog(int fd, bool owned) : fd_(fd), owned_(owned) {}
  int fd_;
  bool owned_;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_AUDIT_LOG_H_
