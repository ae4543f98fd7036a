// session.h — the connection to smcryptd (target, TLS, deadline) and the mapping of
// gRPC statuses to the CLI's errors.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_SESSION_H_
#define SMCRYPT_CLIENTS_SMCRYPT_SESSION_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/smcrypt/flags.h"
#include "grpcpp/grpcpp.h"
#include "smcrypt/v1/crypto.grpc.pb.h"

namespace smcrypt::cli {

// kDefaultTarget is the server address when neither --target nor $SMCRYPT_TARGET is set.
inline constexpr char kDefaultTarget[] = "localhost:50051";
// kDefaultUnaryTimeout bounds unary RPCs when --timeout is absent; streams have no
// default deadline (they may carry data of any size).
inline constexpr absl::Duration kDefaultUnaryTimeout = absl::Seconds(30);

// ChannelConfig is what the connection flags describe (--target, --tls, --ca, --cert,
// --cert-key, --server-name, --timeout, --no-retries): the target, the channel
// credentials and arguments (--no-retries: GRPC_ARG_ENABLE_RETRIES 0), and the RPC
// deadline. smcrypt-load builds its channels from it too.
// kServiceConfigJson is the default gRPC service config of smcrypt's clients (the CLI
// and smcrypt-load): round_robin over every address the target resolves to (a dns:///
// name of a headless Service, or ipv4:A:P,B:Q,...), and retries of RPCs that fail with
// UNAVAILABLE — the status of a connection that broke, or that a stopping replica refused
// after its --drain_delay — or CANCELLED, which gRPC C++ up to at least 1.64 also reports for calls
// a shutting-down or dying server had received but not started (grpc/grpc#41785; a
// call the application cancels itself is never retried), up to 5 attempts with
// exponential backoff from 50 ms to 1 s. Every
// CryptoService RPC is safe to repeat: the service is stateless (an encryption repeated
// returns another valid ciphertext; a generated key pair is not stored). gRPC retries
// only attempts whose response has not started and whose sent messages fit its retry
// buffer (256 KiB per call), so large streams fail over to the caller instead.
inline constexpr char kServiceConfigJson[] = R"json({
  "loadBalancingConfig": [{"round_robin": {}}],
  "methodConfig": [{
    "name": [{"service": "smcrypt.v1.CryptoService"}, {"service": "grpc.health.v1.Health"}],
    "retryPolicy": {
      "maxAttempts": 5,
      "initialBackoff": "0.05s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"]
    }
  }]
})json";

struct ChannelConfig {
  std::string target;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  grpc::ChannelArguments channel_args;
  std::optional<absl::Duration> timeout;
};

// ChannelConfigFromArgs reads the connection flags ($SMCRYPT_TARGET when --target is
// absent, else kDefaultTarget). Unreadable files and bad values are InvalidArgument.
absl::StatusOr<ChannelConfig> ChannelConfigFromArgs(const Args& args);

// LocalMode tells whether the command runs in process (--local, or $SMCRYPT_LOCAL set
// to anything but "" or "0" while no --target is given): see local_service.h. --local
// with --target or a TLS flag is a usage error (InvalidArgument).
absl::StatusOr<bool> LocalMode(const Args& args);
// IsLocal is LocalMode, false on a usage error (which Connect reports).
bool IsLocal(const Args& args);

class LocalService;

// Session holds the channel and stub of one command run.
class Session {
 public:
  // Connect builds the channel from the connection flags (--target, --tls, --ca, --cert,
  // --cert-key, --server-name, --timeout), or under --local starts the in-process
  // service (local_service.h) and connects to it. Unreadable files and bad values are
  // InvalidArgument; nothing is sent until the first RPC.
  static absl::StatusOr<Session> Connect(const Args& args);
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;
  ~Session();

  smcrypt::v1::CryptoService::Stub& stub() const { return *stub_; }
  // Prepare sets the deadline of `ctx` for a unary (or, with `streaming`, a streaming) call.
  void Prepare(grpc::ClientContext* ctx, bool streaming = false) const;

 private:
  Session() = default;
  // local_ (under --local) outlives the stub and its channel: declared first.
  std::shared_ptr<LocalService> local_;
  std::unique_ptr<smcrypt::v1::CryptoService::Stub> stub_;
  std::optional<absl::Duration> timeout_;
};

// ParseTimeout reads --timeout: seconds, or a duration such as 500ms, 10s, 2m.
absl::StatusOr<absl::Duration> ParseTimeout(const std::string& text);
// MarkInProcess records that this run's calls go to the in-process service (see
// IsInProcessError); Connect calls it under --local.
void MarkInProcess();

// RpcStatus converts a failed gRPC status into an absl::Status with the same code and
// message, marked as an RPC error (exit code 3).
absl::Status RpcStatus(const grpc::Status& status);
// ItemStatus converts the per-item status of a batch response in the same way.
absl::Status ItemStatus(const smcrypt::v1::Status& status);
// IsRpcError tells RPC errors (exit 3) from local usage and input errors (exit 2).
bool IsRpcError(const absl::Status& status);
// IsInProcessError: an error status of the in-process service (--local); exit 2, as
// it concerns the command's own input.
bool IsInProcessError(const absl::Status& status);
// ErrorReason is the machine-readable reason the service attached to a failed call
// (google.rpc.ErrorInfo, crypto.proto: "DECRYPTION_FAILED", "KEY_NOT_FOUND", ...);
// empty when none.
std::string ErrorReason(const absl::Status& status);
// kReasonDecryptionFailed: an authentication, tag, C3 or padding check failed (exit 1).
inline constexpr char kReasonDecryptionFailed[] = "DECRYPTION_FAILED";
// CodeName is the canonical name of a status code ("INVALID_ARGUMENT").
std::string CodeName(absl::StatusCode code);

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_SESSION_H_
