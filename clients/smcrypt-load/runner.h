// runner.h — drives one measured step: a fixed number of operations in flight (closed
// loop) or a fixed arrival rate (open loop) against smcryptd over several channels, on
// gRPC's callback API, with a latency histogram and the server's metrics before and after.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_RUNNER_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_RUNNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "clients/smcrypt-load/histogram.h"
#include "clients/smcrypt-load/server_metrics.h"
#include "grpcpp/grpcpp.h"
#include "smcrypt/v1/crypto.grpc.pb.h"

namespace smcrypt::load {

using Stub = smcrypt::v1::CryptoService::Stub;

// CallFn starts one unary RPC on `stub` with `ctx` (callback API) and arranges for `done`
// to run exactly once with its status. The request it sends must outlive the run.
using CallFn = std::function<void(Stub& stub, grpc::ClientContext* ctx,
                                  std::function<void(grpc::Status)> done)>;

// Operation is the unit that is timed: `calls` issued one after another on one channel
// (more than one when a payload is split into RSA-OAEP blocks). `payload_bytes` counts
// toward MB/s.
struct Operation {
  std::vector<CallFn> calls;
  size_t payload_bytes = 0;
  // rpcs_per_call: RPCs one CallFn makes (KeyExchange: 2, the two streams of one
  // exchange), so that RunResult::rpcs can be compared with the server's counters.
  int rpcs_per_call = 1;
};

// RunOptions: closed loop when `rate` is 0 — `concurrency` operations always in flight,
// each slot starting its next operation when the last one finishes; open loop when `rate`
// > 0 — operations are scheduled every 1/rate s and at most `concurrency` are in flight;
// their latency is measured from the scheduled start, so queueing behind a slow server
// counts (the coordinated-omission correction). The step ends after `duration` (no new
// operations; those in flight finish) or after `max_ops` operations, whichever is first;
// at least one of the two must be set.
//
// A `warmup` runs the same load first; operations started during it are not counted. At
// its end the load drains (no operation starts until none is in flight), the server is
// scraped, and the measured window (its figures, the server's and smcrypt-load's own CPU)
// begins; an open-loop schedule resumes shifted by the pause. With `rate_end` > 0 the open-loop rate ramps linearly from `rate` to `rate_end`
// over `duration` (the warm-up runs at `rate`).
struct RunOptions {
  int concurrency = 1;
  absl::Duration duration = absl::ZeroDuration();
  int64_t max_ops = 0;
  double rate = 0;
  double rate_end = 0;
  absl::Duration warmup = absl::ZeroDuration();
  // Request metadata (gRPC headers) sent with every call; keys lower-case.
  std::vector<std::pair<std::string, std::string>> metadata;
  absl::Duration timeout = absl::Seconds(120);  // deadline of every RPC
  std::string metrics_url;                      // empty: no server figures
  std::string label;                            // shown on the progress line
  bool progress = false;                        // live progress line on stderr
};

// RunResult is one step's outcome.
struct RunResult {
  int64_t ops_ok = 0;
  int64_t ops_failed = 0;
  int64_t rpcs = 0;                              // RPCs that completed, any status
  std::map<std::string, int64_t> errors_by_code;  // failed RPCs by gRPC code name
  std::string first_error;                        // code and message of the first failure
  Histogram latency;  // ns per successful operation (corrected in open loop)
  Histogram service;  // ns from actual send to completion (open loop; else = latency)
  double seconds = 0;                             // first start to last completion
  double warmup_seconds = 0;                      // run before the measured window
  int64_t warmup_ops = 0;                         // operations of the warm-up (not counted)
  int64_t warmup_rpcs = 0;                        // RPCs completed before the measured window
  double client_cpu_seconds = 0;                  // smcrypt-load's own CPU (getrusage)
  double payload_bytes = 0;                       // of successful operations
  int64_t max_inflight = 0;                       // peak operations in flight (client)
  // Server figures (when a metrics URL was given and the scrapes worked).
  bool have_server = false;
  ServerSample server_before, server_after;
  double server_inflight_peak = 0;                // sampled about once a second
  double server_rss_peak = 0;
  std::string server_error;                       // why server figures are missing

  double OpsPerSecond() const { return seconds > 0 ? ops_ok / seconds : 0; }
  double MegabytesPerSecond() const { return seconds > 0 ? payload_bytes / seconds / 1e6 : 0; }
  double ServerCpuSeconds() const { return server_after.cpu_seconds - server_before.cpu_seconds; }
  double ServerHandled() const { return server_after.handled_total - server_before.handled_total; }
};

// Run executes `op` as RunOptions says, spreading slots over `stubs` round-robin.
RunResult Run(const std::vector<std::shared_ptr<Stub>>& stubs, const Operation& op,
              const RunOptions& options);

// ProcessCpuSeconds is this process's user + system CPU time (getrusage), every thread
// included.
double ProcessCpuSeconds();

// CodeName is the canonical name of a gRPC status code ("RESOURCE_EXHAUSTED").
std::string CodeName(grpc::StatusCode code);

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_RUNNER_H_
