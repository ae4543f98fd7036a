// status_util.h — absl::Status → grpc::Status (gRPC 1.51 has no converter).
#ifndef SMCRYPT_SERVER_STATUS_UTIL_H_
#define SMCRYPT_SERVER_STATUS_UTIL_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "error_details.h"
#include "grpcpp/support/status.h"

namespace smcrypt::server {

// kMaxStatusMessageSize caps the message sent to clients (bytes), as TF Serving does.
inline constexpr size_t kMaxStatusMessageSize = 1024;

// ToGrpcStatus casts the canonical code (absl and gRPC share the numbers 0–16),
// truncates the message to kMaxStatusMessageSize bytes, without splitting a UTF-8
// sequence, and attaches ErrorInfoOf(status) as the status details (error_details.h).
grpc::Status ToGrpcStatus(const absl::Status& status);

// ErrorInfoOf: google.rpc.ErrorInfo of a non-OK status: ReasonOf's reason and metadata
// (server/engine/error_reason.h), domain rpc::kErrorDomain.
::smcrypt::rpc::ErrorInfo ErrorInfoOf(const absl::Status& status);

// TruncateMessage returns `message` cut to at most `max_size` bytes at a UTF-8 boundary.
absl::string_view TruncateMessage(absl::string_view message, size_t max_size);

// GrpcCodeName spells a code as the grpc-ecosystem exporters label it ("OK",
// "InvalidArgument", "ResourceExhausted", ...), the `grpc_code` metric label.
absl::string_view GrpcCodeName(grpc::StatusCode code);

inline constexpr int kNumGrpcCodes = 17;  // OK (0) .. UNAUTHENTICATED (16)

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_STATUS_UTIL_H_
