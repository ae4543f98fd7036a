// logging.h — a thin logging wrapper for smcryptd (Abseil 20220623 has no absl/log).
//
// Lines go to stderr as "<RFC 3339 UTC time> <I|W|E> <message>". Thread-safe: each line
// is written with a single write(2). Never log key material or request payloads.
#ifndef SMCRYPT_SERVER_LOGGING_H_
#define SMCRYPT_SERVER_LOGGING_H_

#include "absl/strings/string_view.h"

namespace smcrypt::server {

enum class LogSeverity { kInfo, kWarning, kError };

// Log writes one line, unless `severity` is below the minimum (SetMinLogSeverity).
void Log(LogSeverity severity, absl::string_view message);
// SetMinLogSeverity drops lines below `severity` from then on (default kInfo: none
// dropped); `smcrypt --local` keeps warnings and errors only.
void SetMinLogSeverity(LogSeverity severity);

inline void LogInfo(absl::string_view message) { Log(LogSeverity::kInfo, message); }
inline void LogWarning(absl::string_view message) { Log(LogSeverity::kWarning, message); }
inline void LogError(absl::string_view message) { Log(LogSeverity::kError, message); }

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_LOGGING_H_
