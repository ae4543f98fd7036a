// smcrypt-admission-bench: what the in-flight accounting costs one unary call
// (server/service/admission.h; docs/service.md, "Shares per stream and per connection"):
// Admit, the charge set to the response's size once the work is done, and Close, as
// CallReactor does them, with
//   off         no byte limit (--max_inflight_bytes=0, no share),
//   budget      --max_inflight_bytes only (the shares at 0),
//   shares      the budget and --max_connection_inflight_bytes: the connection's entry is
//               found (or made) and left again, under one of the ledger's shard mutexes.
// The shares cases run with 1 connection (every call hits the same entry and shard) and
// with 64 (one per thread and more), from 1 and 2 threads. The peer string is made for
// each call, as ServerContext::peer() makes it. No gRPC: the figures are the accounting's
// own cost per call.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"
#include "server/service/admission.h"

namespace smcrypt::server {
namespace {

std::atomic<int64_t> g_inflight{1};

const Admission& AdmissionFor(int mode) {
  static const Admission off(&g_inflight, AdmissionLimits{1 << 30, 0, 0, 0});
  static const Admission budget(&g_inflight, AdmissionLimits{1 << 30, 1ull << 40, 0, 0});
  static const Admission shares(&g_inflight,
                                AdmissionLimits{1 << 30, 1ull << 40, 1ull << 38, 1ull << 39});
  return mode == 0 ? off : mode == 1 ? budget : shares;
}

// BM_UnaryCall: args mode (0 off, 1 budget, 2 shares) and connections.
void BM_UnaryCall(benchmark::State& state) {
  const Admission& a = AdmissionFor(static_cast<int>(state.range(0)));
  const int connections = static_cast<int>(state.range(1));
  const auto deadline = std::chrono::system_clock::now() + std::chrono::hours(1);
  int i = state.thread_index();
  for (auto _ : state) {
    const int port = 40000 + i++ % connections;
    CallCharge charge;
    absl::Status s = a.Admit(
        deadline, [port] { return absl::StrCat("ipv4:127.0.0.1:", port); }, false, 6144,
        &charge);
    benchmark::DoNotOptimize(s);
    charge.Set(4096);
    charge.Close();
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_UnaryCall)
    ->ArgNames({"mode", "connections"})
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 64})
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime();

}  // namespace
}  // namespace smcrypt::server

int main(int argc, char** argv) {
  // As in smcryptd (server/daemon/main.cc): Debian's Abseil checks lock order on every
  // absl::Mutex lock unless this is off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
