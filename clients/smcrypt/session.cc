#include "clients/smcrypt/session.h"

#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/cord.h"
#include "clients/smcrypt/io.h"
#include "error_details.h"

namespace smcrypt::cli {
namespace {

constexpr char kRpcPayloadUrl[] = "type.smcrypt.dev/cli.RpcError";
constexpr char kReasonPayloadUrl[] = "type.smcrypt.dev/cli.ErrorReason";
constexpr char kInProcessPayloadUrl[] = "type.smcrypt.dev/cli.InProcess";

// in_process: this run's command uses the in-process service (MarkInProcess, called by
// Connect); its errors are then the command's input errors, not a server's.
bool in_process = false;

// ReasonOf: the reason the service attached to `status` (google.rpc.ErrorInfo in its
// details, proto/error_details.h); for a server that predates ErrorInfo,
// DECRYPTION_FAILED for INVALID_ARGUMENT "decryption failed" (the single message of every
// authentication failure, crypto.proto "Errors").
std::string ReasonOf(const grpc::Status& status) {
  if (std::optional<rpc::ErrorInfo> info = rpc::DecodeErrorInfo(status)) return info->reason;
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
      status.error_message() == "decryption failed") {
    return kReasonDecryptionFailed;
  }
  return "";
}

absl::Status MarkRpc(absl::Status out, const std::string& reason) {
  if (out.ok()) return out;
  out.SetPayload(kRpcPayloadUrl, absl::Cord("1"));
  if (!reason.empty()) out.SetPayload(kReasonPayloadUrl, absl::Cord(reason));
  if (in_process) out.SetPayload(kInProcessPayloadUrl, absl::Cord("1"));
  return out;
}

}  // namespace

absl::StatusOr<absl::Duration> ParseTimeout(const std::string& text) {
  absl::Duration d;
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, &d)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--timeout ", text, ": expected seconds or a duration such as 500ms, 10s, 2m"));
  }
  if (d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("--timeout ", text, ": must be positive"));
  }
  return d;
}

namespace {

absl::StatusOr<std::string> ReadPemFlag(const Args& args, absl::string_view flag) {
  std::optional<std::string> path = args.Get(flag);
  if (!path.has_value()) return std::string();
  absl::StatusOr<std::string> pem = ReadFile(*path, kKeyFileLimit);
  if (!pem.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", pem.status().message()));
  }
  return pem;
}

}  // namespace

absl::StatusOr<bool> LocalMode(const Args& args) {
  const bool connection_flag = args.Has("target") || args.Has("tls") || args.Has("ca") ||
                               args.Has("cert") || args.Has("cert-key") ||
                               args.Has("server-name");
  if (args.Has("local")) {
    if (connection_flag) {
      return absl::InvalidArgumentError(
          "--local runs in process: it takes no --target, --tls, --ca, --cert, --cert-key or "
          "--server-name");
    }
    return true;
  }
  if (connection_flag) return false;
  const char* env = std::getenv("SMCRYPT_LOCAL");
  return env != nullptr && *env != '\0' && std::string(env) != "0";
}

bool IsLocal(const Args& args) {
  absl::StatusOr<bool> local = LocalMode(args);
  return local.ok() && *local;
}

absl::StatusOr<ChannelConfig> ChannelConfigFromArgs(const Args& args) {
  ChannelConfig config;
  config.target = kDefaultTarget;
  if (const char* env = std::getenv("SMCRYPT_TARGET"); env != nullptr && *env != '\0') {
    config.target = env;
  }
  if (std::optional<std::string> t = args.Get("target")) config.target = *t;
  if (config.target.empty()) return absl::InvalidArgumentError("--target must not be empty");

  if (std::optional<std::string> t = args.Get("timeout")) {
    absl::StatusOr<absl::Duration> d = ParseTimeout(*t);
    if (!d.ok()) return d.status();
    config.timeout = *d;
  }

  grpc::ChannelArguments& channel_args = config.channel_args;
  // The server enforces its own --max_message_bytes; the client accepts any reply size.
  channel_args.SetMaxReceiveMessageSize(-1);
  channel_args.SetMaxSendMessageSize(-1);
  channel_args.SetServiceConfigJSON(kServiceConfigJson);
  if (args.Has("no-retries")) channel_args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);

  bool tls = args.Has("tls") || args.Has("ca") || args.Has("cert") || args.Has("cert-key") ||
             args.Has("server-name");
  if (tls) {
    grpc::SslCredentialsOptions ssl;
    absl::StatusOr<std::string> ca = ReadPemFlag(args, "ca");
    absl::StatusOr<std::string> cert = ReadPemFlag(args, "cert");
    absl::StatusOr<std::string> key = ReadPemFlag(args, "cert-key");
    if (!ca.ok()) return ca.status();
    if (!cert.ok()) return cert.status();
    if (!key.ok()) return key.status();
    if (cert->empty() != key->empty()) {
      return absl::InvalidArgumentError(
          "--cert and --cert-key go together (client certificate and its private key)");
    }
    ssl.pem_root_certs = *ca;  // empty: the system's trust store
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
    config.credentials = grpc::SslCredentials(ssl);
    if (std::optional<std::string> name = args.Get("server-name")) {
      channel_args.SetSslTargetNameOverride(*name);
    }
  } else {
    config.credentials = grpc::InsecureChannelCredentials();
  }
  return config;
}

void Session::Prepare(grpc::ClientContext* ctx, bool streaming) const {
  if (timeout_.has_value()) {
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + *timeout_));
  } else if (!streaming) {
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + kDefaultUnaryTimeout));
  }
}

absl::Status RpcStatus(const grpc::Status& status) {
  return MarkRpc(
      absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message()),
      ReasonOf(status));
}

absl::Status ItemStatus(const smcrypt::v1::Status& status) {
  std::string reason;
  for (const google::protobuf::Any& detail : status.details()) {
    if (detail.type_url() != rpc::kErrorInfoTypeUrl) continue;
    if (std::optional<rpc::ErrorInfo> info = rpc::ParseErrorInfo(detail.value())) {
      reason = info->reason;
      break;
    }
  }
  if (reason.empty()) {
    reason = ReasonOf(grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message()));
  }
  return MarkRpc(absl::Status(static_cast<absl::StatusCode>(status.code()), status.message()),
                 reason);
}

bool IsRpcError(const absl::Status& status) {
  return status.GetPayload(kRpcPayloadUrl).has_value();
}

void MarkInProcess() { in_process = true; }

bool IsInProcessError(const absl::Status& status) {
  return status.GetPayload(kInProcessPayloadUrl).has_value();
}

std::string ErrorReason(const absl::Status& status) {
  auto reason = status.GetPayload(kReasonPayloadUrl);
  return reason.has_value() ? std::string(*reason) : std::string();
}

std::string CodeName(absl::StatusCode code) {
  std::string name = absl::StatusCodeToString(code);
  return name.empty() ? absl::StrCat("CODE_", static_cast<int>(code)) : name;
}

}  // namespace smcrypt::cli
