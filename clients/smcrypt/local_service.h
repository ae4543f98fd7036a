// local_service.h — the CLI's --local mode: smcryptd's CryptoService, run inside the
// smcrypt process and reached through an in-process gRPC channel.
//
// Every command keeps one code path (the generated client of crypto.proto) for both
// modes: remote, the channel goes to --target; local, it goes to this in-process server,
// which is the server's own CryptoServiceImpl over a CryptoEngine with an empty keyring.
// So a local command has exactly smcryptd's semantics (parameter checks, key parsing,
// output bytes, error statuses and their details), minus everything that needs the
// server: keyring keys (--key-id), access policy, audit log, metrics. The in-process
// transport hands messages over in memory: no socket is opened, no port is listened
// on, and key material (keygen's private keys, --key files) stays in this process.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOCAL_SERVICE_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOCAL_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace smcrypt::server {
class CryptoEngine;
class CryptoServiceImpl;
class SelfTests;
}  // namespace smcrypt::server

namespace smcrypt::cli {

// LocalService owns the engine, the service and the port-less gRPC server that serves
// it. Destroying it shuts the server down; channels made from it must be gone first.
class LocalService {
 public:
  static absl::StatusOr<std::unique_ptr<LocalService>> Start();
  ~LocalService();

  // Channel is an in-process channel to the service.
  std::shared_ptr<grpc::Channel> Channel(const grpc::ChannelArguments& args);

 private:
  LocalService();
  std::unique_ptr<server::SelfTests> self_tests_;
  std::unique_ptr<server::CryptoEngine> engine_;
  std::atomic<int64_t> inflight_{0};
  std::unique_ptr<server::CryptoServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOCAL_SERVICE_H_
