#include "server/service/status_util.h"

#include <string>

#include "error_details.h"
#include "server/engine/error_reason.h"

namespace smcrypt::server {

absl::string_view TruncateMessage(absl::string_view message, size_t max_size) {
  if (message.size() <= max_size) return message;
  size_t end = max_size;
  // Step back over UTF-8 continuation bytes (10xxxxxx) so no sequence is split.
  while (end > 0 && (static_cast<unsigned char>(message[end]) & 0xC0) == 0x80) --end;
  return message.substr(0, end);
}

::smcrypt::rpc::ErrorInfo ErrorInfoOf(const absl::Status& status) {
  StatusReason r = ReasonOf(status);
  ::smcrypt::rpc::ErrorInfo info;
  info.reason = std::move(r.reason);
  info.domain = std::string(::smcrypt::rpc::kErrorDomain);
  for (auto& [key, value] : r.metadata) {
    info.metadata[std::move(key)] = std::string(TruncateMessage(value, kMaxStatusMessageSize));
  }
  return info;
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  int code = static_cast<int>(status.code());
  if (code < 0 || code >= kNumGrpcCodes) code = static_cast<int>(grpc::StatusCode::UNKNOWN);
  std::string message(TruncateMessage(status.message(), kMaxStatusMessageSize));
  std::string details = ::smcrypt::rpc::SerializeStatusDetails(code, message, ErrorInfoOf(status));
  return grpc::Status(static_cast<grpc::StatusCode>(code), std::move(message), std::move(details));
}

absl::string_view GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "Canceled";
    case grpc::StatusCode::UNKNOWN: return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT: return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND: return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS: return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED: return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FailedPrecondition";
    case grpc::StatusCode::ABORTED: return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE: return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED: return "Unimplemented";
    case grpc::StatusCode::INTERNAL: return "Internal";
    case grpc::StatusCode::UNAVAILABLE: return "Unavailable";
    case grpc::StatusCode::DATA_LOSS: return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED: return "Unauthenticated";
    default: return "Unknown";
  }
}

}  // namespace smcrypt::server
