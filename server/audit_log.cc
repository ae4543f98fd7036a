#include "server/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace smcrypt::server {

std::string JsonEscape(absl::string_view s, size_t max_size) {
  if (s.size() > max_size) s = s.substr(0, max_size);
  std::string out;
  out.reserve(s.size() + 8);
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", u);
      out.append(buf);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path) {
  if (path.empty()) return std::unique_ptr<AuditLog>(new AuditLog(STDERR_FILENO, false));
  if (path == "none") return std::unique_ptr<AuditLog>(new AuditLog(-1, false));
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--audit_log: cannot open ", path, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<AuditLog>(new AuditLog(fd, true));
}

AuditLog::~AuditLog() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

std::string AuditLog::FormatLine(const AuditRecord& r) {
  static const ClientIdentity kAnonymous;
  const ClientIdentity& client = r.client != nullptr ? *r.client : kAnonymous;
  absl::string_view source = "none";
  if (r.key.kind == AccessKey::Kind::kKeyId) source = "keyring";
  if (r.key.kind == AccessKey::Kind::kInline) source = "inline";
  std::string line = absl::StrCat(
      "{\"time\":\"",
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
      "\",\"type\":\"audit\",\"client\":\"", JsonEscape(client.Name()),
      "\",\"authenticated\":", client.authenticated ? "true" : "false", ",\"peer\":\"",
      JsonEscape(client.peer), "\",\"method\":\"", JsonEscape(r.method),
      "\",\"operation\":\"", AccessOperationName(r.operation), "\",\"algorithm\":\"",
      JsonEscape(r.algorithm), "\",\"key_source\":\"", source, "\"");
  if (r.key.kind == AccessKey::Kind::kKeyId) {
    absl::StrAppend(&line, ",\"key_id\":\"", JsonEscape(r.key.key_id), "\"");
  }
  absl::StrAppend(&line, ",\"status\":\"", absl::StatusCodeToString(r.code), "\"}\n");
  return line;
}

void AuditLog::Write(const AuditRecord& record) const {
  if (fd_ < 0) return;
  const std::string line = FormatLine(record);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace smcrypt::server
