// error_reason.h — the machine-readable reason of an error status (crypto.proto,
// "Errors"): set where the engine makes the error, carried as an absl::Status payload,
// and sent by the service as google.rpc.ErrorInfo (proto/error_details.h).
#ifndef SMCRYPT_SERVER_ERROR_REASON_H_
#define SMCRYPT_SERVER_ERROR_REASON_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace smcrypt::server {

// The reasons smcryptd names itself; every other error's reason is its status code's
// name (INVALID_ARGUMENT, FAILED_PRECONDITION, INTERNAL, ...).
namespace reason {
inline constexpr absl::string_view kDecryptionFailed = "DECRYPTION_FAILED";
inline constexpr absl::string_view kKeyNotFound = "KEY_NOT_FOUND";
inline constexpr absl::string_view kKeyVersionNotFound = "KEY_VERSION_NOT_FOUND";
inline constexpr absl::string_view kKeyVersionRetired = "KEY_VERSION_RETIRED";
inline constexpr absl::string_view kKeyVersionRequired = "KEY_VERSION_REQUIRED";
inline constexpr absl::string_view kAuditUnavailable = "AUDIT_UNAVAILABLE";
inline constexpr absl::string_view kWrongKeyFamily = "WRONG_KEY_FAMILY";
inline constexpr absl::string_view kPrivateKeyRequired = "PRIVATE_KEY_REQUIRED";
inline constexpr absl::string_view kInvalidKey = "INVALID_KEY";
inline constexpr absl::string_view kInlinePrivateKeyDenied = "INLINE_PRIVATE_KEY_DENIED";
inline constexpr absl::string_view kAccessDenied = "ACCESS_DENIED";
inline constexpr absl::string_view kOverloaded = "OVERLOADED";
}  // namespace reason

using ReasonMetadata = std::vector<std::pair<std::string, std::string>>;

// WithReason returns `s` with `reason` and `metadata` attached (an OK status is returned
// unchanged). Metadata values must not hold secrets: they reach the client.
absl::Status WithReason(absl::Status s, absl::string_view reason,
                        std::initializer_list<std::pair<absl::string_view, absl::string_view>>
                            metadata = {});

struct StatusReason {
  std::string reason;
  ReasonMetadata metadata;
};

// ReasonOf: the reason attached with WithReason; else DECRYPTION_FAILED for
// InvalidArgument "decryption failed" (the one message of every authentication failure,
// made in the crypto core); else the code's name. Empty for OK.
StatusReason ReasonOf(const absl::Status& s);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_ERROR_REASON_H_
