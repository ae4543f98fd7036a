// overload_burst.h — the client side of the overload tests: a burst of concurrent large
// Encrypt calls over several connections (smcryptd_overload_test.cc,
// smcryptd_sizing_test.cc), and the small helpers they share.
#ifndef SMCRYPT_TESTS_SERVER_OVERLOAD_BURST_H_
#define SMCRYPT_TESTS_SERVER_OVERLOAD_BURST_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "gtest/gtest.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"

namespace smcrypt::testing {

namespace v1 = ::smcrypt::v1;

// Channel opens its own connection (channels with different arguments share nothing).
inline std::shared_ptr<grpc::Channel> NewConnection(const std::string& target, int index) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt("smcrypt.test.connection", index);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

// LargeEncrypt is an SM4-GCM Encrypt of `payload` bytes with an inline key.
inline v1::EncryptRequest LargeEncrypt(size_t payload) {
  v1::EncryptRequest req;
  req.set_algorithm(v1::SM4_GCM);
  req.mutable_key()->set_inline_key(std::string(16, 'k'));
  req.set_plaintext(std::string(payload, 'p'));
  return req;
}

// Serves is true when a Hash(SM3) call is answered correctly.
inline bool Serves(Smcryptd& server) {
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  auto ctx = Ctx(10);
  grpc::Status s = server.Stub()->Hash(ctx.get(), req, &resp);
  return s.ok() && resp.digest().size() == 32;
}

// BurstResult counts the answers of a Burst by status.
struct BurstResult {
  int ok = 0;
  int refused = 0;  // RESOURCE_EXHAUSTED
  int other = 0;
  std::string first_other;
  double seconds = 0;
  double slowest = 0;
};

// Burst sends `calls` concurrent Encrypt calls of `payload` bytes over `connections`
// connections and waits for every answer (at most 120 s).
inline BurstResult Burst(Smcryptd& server, int calls, int payload, int connections) {
  // One serialized request, shared by every call (a grpc::ByteBuffer copy references
  // the same slices), so the client holds one copy while 20,000 are in flight.
  grpc::ByteBuffer request;
  bool own = false;
  EXPECT_TRUE((grpc::GenericSerialize<grpc::ProtoBufferWriter, v1::EncryptRequest>(
                   LargeEncrypt(payload), &request, &own))
                  .ok());
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  static std::atomic<int> next_connection{1000};
  for (int i = 0; i < connections; ++i) {
    stubs.push_back(
        std::make_unique<grpc::GenericStub>(NewConnection(server.target(), next_connection++)));
  }
  struct Call {
    grpc::ClientContext ctx;
    grpc::ByteBuffer response;
  };
  std::vector<std::unique_ptr<Call>> pending(calls);
  absl::Mutex mu;
  BurstResult r;
  int done = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    pending[i] = std::make_unique<Call>();
    Call* call = pending[i].get();
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(90));
    stubs[i % connections]->UnaryCall(
        &call->ctx, "/smcrypt.v1.CryptoService/Encrypt", grpc::StubOptions(), &request,
        &call->response, [&, call](grpc::Status s) {
          const double seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          call->response.Clear();
          absl::MutexLock lock(&mu);
          r.slowest = std::max(r.slowest, seconds);
          if (s.ok()) {
            ++r.ok;
          } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
            ++r.refused;
          } else {
            if (r.other++ == 0) {
              r.first_other = absl::StrCat(s.error_code(), ": ", s.error_message());
            }
          }
          ++done;
        });
  }
  absl::MutexLock lock(&mu);
  auto all_done = [&] { return done == calls; };
  EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(&all_done), absl::Seconds(120)))
      << done << " of " << calls << " calls finished";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}


}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_SERVER_OVERLOAD_BURST_H_
