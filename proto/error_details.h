// error_details.h — google.rpc.ErrorInfo in gRPC status details: the machine-readable
// reason smcryptd attaches to every error status it makes (proto/smcrypt/v1/crypto.proto,
// "Errors"), and its decoding for C++ clients.
//
// Wire shape (googleapis google/rpc/status.proto, error_details.proto): the status's
// binary details (trailer `grpc-status-details-bin`, grpc::Status::error_details()) are a
// serialized google.rpc.Status { int32 code = 1; string message = 2; repeated
// google.protobuf.Any details = 3; } whose details hold one Any with type_url
// kErrorInfoTypeUrl and value a serialized google.rpc.ErrorInfo { string reason = 1;
// string domain = 2; map<string, string> metadata = 3; }. grpc-java's StatusProto,
// grpc-go's status.Details() and any googleapis-aware client read it as they are; the
// encoding here is written out with protobuf's coded streams so that no copy of the
// googleapis files is needed.
#ifndef SMCRYPT_PROTO_ERROR_DETAILS_H_
#define SMCRYPT_PROTO_ERROR_DETAILS_H_

#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"

namespace smcrypt::rpc {

inline constexpr absl::string_view kErrorInfoTypeUrl = "type.googleapis.com/google.rpc.ErrorInfo";
// ErrorInfo.domain of every smcryptd error.
inline constexpr absl::string_view kErrorDomain = "smcrypt.v1";

struct ErrorInfo {
  std::string reason;  // UPPER_SNAKE_CASE, at most 63 characters (crypto.proto lists them)
  std::string domain;
  std::map<std::string, std::string> metadata;

  bool operator==(const ErrorInfo& o) const {
    return reason == o.reason && domain == o.domain && metadata == o.metadata;
  }
};

// SerializeErrorInfo / ParseErrorInfo: google.rpc.ErrorInfo's binary encoding. Parsing
// fails (nullopt) on malformed wire data; unknown fields are skipped.
std::string SerializeErrorInfo(const ErrorInfo& info);
std::optional<ErrorInfo> ParseErrorInfo(absl::string_view bytes);

// SerializeStatusDetails: google.rpc.Status {code, message, details = [Any(info)]}, the
// value of grpc::Status's third constructor argument.
std::string SerializeStatusDetails(int code, absl::string_view message, const ErrorInfo& info);

// DecodeErrorInfo: the first ErrorInfo in `status`'s binary details; nullopt when the
// status has no details (OK, or a status gRPC made itself: deadline, cancellation, a
// message over the server's size limit, an unreachable server), none of them is an
// ErrorInfo, or the details are malformed.
std::optional<ErrorInfo> DecodeErrorInfo(const grpc::Status& status);
std::optional<ErrorInfo> DecodeErrorInfoFromStatusDetails(absl::string_view status_details);

}  // namespace smcrypt::rpc

#endif  // SMCRYPT_PROTO_ERROR_DETAILS_H_
