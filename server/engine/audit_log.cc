#include "server/engine/audit_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace smcrypt::server {

namespace {

// Client-supplied strings are cut to this many bytes (at a UTF-8 boundary) in a line.
constexpr size_t kMaxFieldSize = 256;

std::string Cut(absl::string_view s) {
  if (s.size() <= kMaxFieldSize) return std::string(s);
  size_t end = kMaxFieldSize;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return std::string(s.substr(0, end));
}

}  // namespace

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
  nlohmann::ordered_json j;
  j["time"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  j["type"] = "audit";
  j["client"] = Cut(client.Name());
  j["authenticated"] = client.authenticated;
  j["peer"] = Cut(client.peer);
  j["method"] = Cut(r.method);
  j["operation"] = std::string(AccessOperationName(r.operation));
  j["algorithm"] = Cut(r.algorithm);
  j["key_source"] = std::string(source);
  if (r.key.kind == AccessKey::Kind::kKeyId) {
    j["key_id"] = Cut(r.key.key_id);
    if (r.key_version != 0) j["key_version"] = r.key_version;
    if (r.key_versions_tried.size() > 1) {
      j["key_versions_tried"] = std::vector<uint32_t>(r.key_versions_tried.begin(),
                                                      r.key_versions_tried.end());
    }
  }
  j["status"] = absl::StatusCodeToString(r.code);
  // ASCII only: control characters and every non-ASCII character escaped (\uXXXX), bytes
  // that are not UTF-8 replaced by U+FFFD, so a line is one line and a log reader cannot
  // be fed terminal escapes.
  std::string line = j.dump(-1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
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
