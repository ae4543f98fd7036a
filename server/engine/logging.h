// logging.h — a thin logging wrapper for smcryptd (Abseil 20220623 has no absl/log).
//
// Each call writes one line to stderr, in the format SetLogFormat chose:
//   text  "<RFC 3339 UTC time> <I|W|E> <message>[ <key>=<value>...]"; control characters
//         of the message and values are written as \xNN.
//   json  {"ts":"<RFC 3339 UTC time>","level":"info|warning|error","msg":"<message>"
//         [,"<key>":"<value>"...]}: one object per line; strings as the audit log writes
//         them (ASCII only, control and non-ASCII characters \uXXXX-escaped, bytes that are
//         not UTF-8 replaced by U+FFFD).
// Thread-safe: each line is written with a single write(2). Never log key material or
// request payloads.
#ifndef SMCRYPT_SERVER_LOGGING_H_
#define SMCRYPT_SERVER_LOGGING_H_

#include <initializer_list>
#include <string>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace smcrypt::server {

enum class LogSeverity { kInfo, kWarning, kError };
enum class LogFormat { kText, kJson };

// LogField is one structured field of a line: a fixed key ("port", "certificate") and its
// value, text or an integer (a JSON number in the json format, `"port":50051`). Keys
// "ts", "level" and "msg" are the line's own.
struct LogField {
  LogField(absl::string_view k, absl::string_view v) : key(k), value(v) {}
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                 !std::is_same_v<T, char>,
                             int> = 0>
  LogField(absl::string_view k, T n) : key(k), value(absl::StrCat(n)), number(true) {}

  absl::string_view key;
  std::string value;
  bool number = false;  // value is an integer's decimal digits
};

// Log writes one line, unless `severity` is below the minimum (SetMinLogSeverity).
void Log(LogSeverity severity, absl::string_view message,
         std::initializer_list<LogField> fields = {});
// SetMinLogSeverity drops lines below `severity` from then on (default kInfo: none
// dropped); `smcrypt --local` keeps warnings and errors only.
void SetMinLogSeverity(LogSeverity severity);
// SetLogFormat chooses the line format from then on (default kText).
void SetLogFormat(LogFormat format);

// ParseLogLevel reads --log_level: "info", "warning" or "error". ParseLogFormat reads
// --log_format: "text" or "json". Errors: InvalidArgument naming the flag, the accepted
// values and the value given.
absl::StatusOr<LogSeverity> ParseLogLevel(absl::string_view value);
absl::StatusOr<LogFormat> ParseLogFormat(absl::string_view value);

// FormatLogLine is the line Log writes (newline included) for a call at `now`.
std::string FormatLogLine(LogFormat format, absl::Time now, LogSeverity severity,
                          absl::string_view message, std::initializer_list<LogField> fields);

// FormatLogDuration is a duration as log lines show it: absl::FormatDuration ("1.5s",
// "200ms", "10m"), but "0s" for zero, which absl::FormatDuration writes as a bare "0".
std::string FormatLogDuration(absl::Duration d);

inline void LogInfo(absl::string_view message, std::initializer_list<LogField> fields = {}) {
  Log(LogSeverity::kInfo, message, fields);
}
inline void LogWarning(absl::string_view message, std::initializer_list<LogField> fields = {}) {
  Log(LogSeverity::kWarning, message, fields);
}
inline void LogError(absl::string_view message, std::initializer_list<LogField> fields = {}) {
  Log(LogSeverity::kError, message, fields);
}

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_LOGGING_H_
