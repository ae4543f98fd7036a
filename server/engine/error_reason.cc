#include "server/engine/error_reason.h"

#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/str_split.h"

namespace smcrypt::server {
namespace {

// Payload: reason, then key and value of each metadata entry, NUL-separated.
constexpr absl::string_view kPayloadKey = "smcrypt.v1/error_reason";

}  // namespace

absl::Status WithReason(absl::Status s, absl::string_view reason,
                        std::initializer_list<std::pair<absl::string_view, absl::string_view>>
                            metadata) {
  if (s.ok()) return s;
  std::string value(reason);
  for (const auto& [key, val] : metadata) {
    value.push_back('\0');
    value.append(key.data(), key.size());
    value.push_back('\0');
    value.append(val.data(), val.size());
  }
  s.SetPayload(kPayloadKey, absl::Cord(value));
  return s;
}

StatusReason ReasonOf(const absl::Status& s) {
  StatusReason out;
  if (s.ok()) return out;
  if (auto payload = s.GetPayload(kPayloadKey); payload.has_value()) {
    const std::string value(*payload);
    std::vector<std::string> parts = absl::StrSplit(value, absl::ByChar('\0'));
    out.reason = parts[0];
    for (size_t i = 1; i + 1 < parts.size(); i += 2) {
      out.metadata.emplace_back(std::move(parts[i]), std::move(parts[i + 1]));
    }
    return out;
  }
  if (s.code() == absl::StatusCode::kInvalidArgument && s.message() == "decryption failed") {
    out.reason = std::string(reason::kDecryptionFailed);
    return out;
  }
  // absl::StatusCodeToString spells codes as google.rpc.Code does (INVALID_ARGUMENT, ...).
  out.reason = absl::StatusCodeToString(s.code());
  return out;
}

}  // namespace smcrypt::server
