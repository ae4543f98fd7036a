#include "server/engine/logging.h"

#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace smcrypt::server {
namespace {

// AppendEscaped (text format): control characters in a message (a file name, a key id)
// are written as \xNN, so one call is always one line and cannot forge another.
void AppendEscaped(std::string* out, absl::string_view message) {
  for (const char c : message) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      *out += "\\x";
      *out += kHex[u >> 4];
      *out += kHex[u & 15];
    } else {
      *out += c;
    }
  }
}

// AppendJsonString (json format): `s` as a JSON string, as nlohmann::json writes it with
// ensure_ascii and the replace error handler (the audit log's spelling).
void AppendJsonString(std::string* out, absl::string_view s) {
  out->append(nlohmann::json(std::string(s)).dump(-1, ' ', /*ensure_ascii=*/true,
                                                  nlohmann::json::error_handler_t::replace));
}

std::atomic<int> min_severity{static_cast<int>(LogSeverity::kInfo)};
std::atomic<int> log_format{static_cast<int>(LogFormat::kText)};

}  // namespace

void SetMinLogSeverity(LogSeverity severity) {
  min_severity.store(static_cast<int>(severity), std::memory_order_relaxed);
}

void SetLogFormat(LogFormat format) {
  log_format.store(static_cast<int>(format), std::memory_order_relaxed);
}

absl::StatusOr<LogSeverity> ParseLogLevel(absl::string_view value) {
  if (value == "info") return LogSeverity::kInfo;
  if (value == "warning") return LogSeverity::kWarning;
  if (value == "error") return LogSeverity::kError;
  return absl::InvalidArgumentError(
      absl::StrCat("--log_level must be info, warning or error, got '", value, "'"));
}

absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view value) {
  if (value == "text") return LogFormat::kText;
  if (value == "json") return LogFormat::kJson;
  return absl::InvalidArgumentError(
      absl::StrCat("--log_format must be text or json, got '", value, "'"));
}

std::string FormatLogDuration(absl::Duration d) {
  return d == absl::ZeroDuration() ? std::string("0s") : absl::FormatDuration(d);
}

std::string FormatLogLine(LogFormat format, absl::Time now, LogSeverity severity,
                          absl::string_view message, std::initializer_list<LogField> fields) {
  const std::string ts = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", now, absl::UTCTimeZone());
  std::string line;
  if (format == LogFormat::kJson) {
    const char* level = severity == LogSeverity::kInfo      ? "info"
                        : severity == LogSeverity::kWarning ? "warning"
                                                            : "error";
    absl::StrAppend(&line, "{\"ts\":\"", ts, "\",\"level\":\"", level, "\",\"msg\":");
    AppendJsonString(&line, message);
    for (const LogField& f : fields) {
      line += ',';
      AppendJsonString(&line, f.key);
      line += ':';
      if (f.number) {
        line += f.value;
      } else {
        AppendJsonString(&line, f.value);
      }
    }
    line += "}\n";
    return line;
  }
  const char* level = severity == LogSeverity::kInfo      ? "I"
                      : severity == LogSeverity::kWarning ? "W"
                                                          : "E";
  absl::StrAppend(&line, ts, " ", level, " ");
  AppendEscaped(&line, message);
  for (const LogField& f : fields) {
    line += ' ';
    AppendEscaped(&line, f.key);
    line += '=';
    AppendEscaped(&line, f.value);
  }
  line += '\n';
  return line;
}

void Log(LogSeverity severity, absl::string_view message, std::initializer_list<LogField> fields) {
  if (static_cast<int>(severity) < min_severity.load(std::memory_order_relaxed)) return;
  const auto format = static_cast<LogFormat>(log_format.load(std::memory_order_relaxed));
  const std::string line = FormatLogLine(format, absl::Now(), severity, message, fields);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace smcrypt::server
