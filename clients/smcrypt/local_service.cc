#include "clients/smcrypt/local_service.h"

#include <climits>
#include <utility>

#include "absl/status/status.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/key_store.h"
#include "server/engine/logging.h"
#include "server/engine/self_test.h"
#include "server/service/crypto_service_impl.h"

#ifndef SMCRYPT_VERSION
#define SMCRYPT_VERSION "unknown"
#endif

namespace smcrypt::cli {

LocalService::LocalService() = default;

LocalService::~LocalService() {
  if (server_ != nullptr) {
    server_->Shutdown();
    server_->Wait();
  }
}

absl::StatusOr<std::unique_ptr<LocalService>> LocalService::Start() {
  std::unique_ptr<LocalService> local(new LocalService());
  // The command's own output and errors speak for it; the engine's info lines
  // ("self-tests: 31 run, all passed") are smcryptd's log, not this command's.
  server::SetMinLogSeverity(server::LogSeverity::kWarning);
  // The self-tests run when `info` asks for them (it does under --local), not on every
  // command.
  local->self_tests_ = std::make_unique<server::SelfTests>();
  server::EngineOptions options;
  options.allow_inline_private_keys = true;  // the only keys there are: the user's files
  local->engine_ = std::make_unique<server::CryptoEngine>(
      std::shared_ptr<const server::KeyStore>(server::KeyStore::Empty()), options,
      /*observer=*/nullptr);
  server::ServiceInfo info;
  info.version = SMCRYPT_VERSION;
  info.max_message_bytes = INT_MAX;
  info.max_inflight = INT64_MAX;
  info.max_inflight_bytes = 0;     // no byte budget: one command, one caller
  info.batching.enabled = false;   // one call at a time: nothing to batch with
  // No worker pool: the work runs on gRPC's callback threads; no guards: no access
  // policy, audit log, stream reaper or batch metrics.
  local->service_ = std::make_unique<server::CryptoServiceImpl>(
      local->engine_.get(), local->self_tests_.get(), &local->inflight_, std::move(info));
  grpc::ServerBuilder builder;  // no listening port: in-process channels only
  builder.RegisterService(local->service_.get());
  builder.SetMaxReceiveMessageSize(INT_MAX);
  builder.SetMaxSendMessageSize(INT_MAX);
  local->server_ = builder.BuildAndStart();
  if (local->server_ == nullptr) {
    return absl::InternalError("cannot start the in-process crypto service");
  }
  return local;
}

std::shared_ptr<grpc::Channel> LocalService::Channel(const grpc::ChannelArguments& args) {
  return server_->InProcessChannel(args);
}

}  // namespace smcrypt::cli
