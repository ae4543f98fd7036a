// Session::Connect apart from the rest of session.cc: it is what links the in-process
// service (local_service.h) into a binary, and smcrypt-load, which uses the connection
// flags but never --local, does not call it.
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "clients/smcrypt/local_service.h"
#include "clients/smcrypt/session.h"

namespace smcrypt::cli {

Session::~Session() = default;

absl::StatusOr<Session> Session::Connect(const Args& args) {
  absl::StatusOr<bool> local = LocalMode(args);
  if (!local.ok()) return local.status();
  if (*local) {
    Session session;
    if (std::optional<std::string> t = args.Get("timeout")) {
      absl::StatusOr<absl::Duration> d = ParseTimeout(*t);
      if (!d.ok()) return d.status();
      session.timeout_ = *d;
    }
    absl::StatusOr<std::unique_ptr<LocalService>> service = LocalService::Start();
    if (!service.ok()) return service.status();
    session.local_ = *std::move(service);
    grpc::ChannelArguments channel_args;
    channel_args.SetMaxReceiveMessageSize(-1);
    channel_args.SetMaxSendMessageSize(-1);
    session.stub_ = smcrypt::v1::CryptoService::NewStub(session.local_->Channel(channel_args));
    MarkInProcess();
    return session;
  }
  absl::StatusOr<ChannelConfig> config = ChannelConfigFromArgs(args);
  if (!config.ok()) return config.status();
  Session session;
  session.timeout_ = config->timeout;
  session.stub_ = smcrypt::v1::CryptoService::NewStub(grpc::CreateCustomChannel(
      config->target, config->credentials, config->channel_args));
  return session;
}

}  // namespace smcrypt::cli
