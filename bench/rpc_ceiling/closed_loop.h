// closed_loop.h — the one client code path of smcrypt-rpc-ceiling: a fixed number of unary
// calls always in flight through grpc::GenericStub's asynchronous API, on several channels
// (each its own HTTP/2 connection) and completion-queue threads. Echo and smcryptd are
// driven by the same code; only the method path and the channels differ.
#ifndef SMCRYPT_BENCH_RPC_CEILING_CLOSED_LOOP_H_
#define SMCRYPT_BENCH_RPC_CEILING_CLOSED_LOOP_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace smcrypt::rpc_ceiling {

// CodeName is the canonical name of a gRPC status code ("RESOURCE_EXHAUSTED").
std::string CodeName(grpc::StatusCode code);

// OpenChannels opens `count` insecure channels to `target`, each with its own value of the
// channel argument "smcrypt.rpc_ceiling.channel" so that gRPC gives each its own
// subchannel and HTTP/2 connection, no message size limit, and waits up to `timeout` for
// every one to connect (UNAVAILABLE naming the target otherwise). `name` tags the channel
// argument, so channels to two servers at one address stay apart too.
absl::StatusOr<std::vector<std::unique_ptr<grpc::GenericStub>>> OpenChannels(
    const std::string& target, int count, const std::string& name, absl::Duration timeout);

// LoopOptions: `in_flight` calls are kept outstanding (a call's completion starts the next
// one) for `warmup` + `duration`; then no call starts and those outstanding finish.
// Every call has the deadline `timeout`.
struct LoopOptions {
  int in_flight = 1;
  absl::Duration warmup = absl::Seconds(2);
  absl::Duration duration = absl::Seconds(3);
  absl::Duration timeout = absl::Seconds(30);
};

// Measurement is one closed-loop run. `ok` and `latencies_ns` count the calls that
// completed with status OK within the measured window (after the warmup, for `duration`);
// `errors` counts every call that failed, in any phase, by status code name.
struct Measurement {
  int64_t ok = 0;
  double seconds = 0;                  // the measured window
  std::vector<uint64_t> latencies_ns;  // from send to completion, unsorted
  std::map<std::string, int64_t> errors;
  int64_t calls = 0;                   // every completed call, any status, any phase

  double RequestsPerSecond() const { return seconds > 0 ? ok / seconds : 0; }
  int64_t ErrorCount() const;
};

// ClosedLoop owns the completion queues and the threads polling them, one queue each; call
// k of a run uses channel k mod (number of stubs) and queue k mod `cq_threads`. Run is
// called by one thread at a time; runs reuse the threads and queues.
class ClosedLoop {
 public:
  explicit ClosedLoop(int cq_threads);
  ~ClosedLoop();
  ClosedLoop(const ClosedLoop&) = delete;
  ClosedLoop& operator=(const ClosedLoop&) = delete;

  // Run sends `request` on `method` over `stubs` as `options` say and returns when every
  // call has completed. `stubs` and `request` must outlive the call.
  Measurement Run(const std::vector<std::unique_ptr<grpc::GenericStub>>& stubs,
                  const std::string& method, const grpc::ByteBuffer& request,
                  const LoopOptions& options);

 private:
  struct RunState;
  struct Slot;
  void Poll(size_t index);

  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues_;
  std::vector<std::thread> threads_;
};

}  // namespace smcrypt::rpc_ceiling

#endif  // SMCRYPT_BENCH_RPC_CEILING_CLOSED_LOOP_H_
