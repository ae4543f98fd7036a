// scenarios.h — smcrypt-load's scenarios: baseline, load, concurrency, paper, quick and
// the generic `run` mode (see clients/smcrypt-load/README.md).
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_SCENARIOS_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_SCENARIOS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/smcrypt-load/report.h"
#include "clients/smcrypt-load/workload.h"

namespace smcrypt::load {

// kDefaultTimeout is the RPC deadline without --timeout: long enough for one call of the
// largest payloads at 20,000 in flight.
inline constexpr absl::Duration kDefaultTimeout = absl::Seconds(120);

// The defaults --help states; the help text is built from these values.
inline constexpr int kDefaultConnections = 8;
inline constexpr uint64_t kDefaultSeed = 1;
inline constexpr int kDefaultSteps[] = {1, 10, 100, 1000, 5000, 10000, 20000};
inline constexpr absl::Duration kLoadDuration = absl::Seconds(300);
inline constexpr absl::Duration kConcurrencyStepDuration = absl::Seconds(10);
inline constexpr absl::Duration kRunDuration = absl::Seconds(10);

// Config is the parsed command line; unset optionals take each scenario's defaults.
struct Config {
  std::vector<std::string> scenarios;
  std::optional<absl::Duration> duration;     // per step
  std::optional<int64_t> requests;            // operations per step
  std::optional<int> concurrency;
  std::vector<int> steps;                     // concurrency scenario
  std::vector<size_t> sizes;                  // baseline (and run: first)
  std::vector<smcrypt::v1::Algorithm> algs;   // schemes (baseline, load, concurrency; run: first)
  std::string rpc;                            // run
  double rate = 0;                            // run: open loop
  size_t batch_items = 16;                    // run: items per *Batch RPC
  double rate_end = 0;                        // run: ramp the rate to this over --duration
  absl::Duration warmup = absl::ZeroDuration();  // per step, before the measured window
  std::vector<std::pair<std::string, std::string>> metadata;  // sent with every call
  size_t stream_bytes = size_t{1} << 30;      // paper: the 1 GiB streamed case
  // Deadline of every unary RPC (--timeout); --help prints this value.
  absl::Duration timeout = kDefaultTimeout;
  std::string metrics_url;
  bool progress = false;
};

// Context is what the scenarios share.
struct Context {
  std::vector<std::shared_ptr<Stub>> stubs;
  Preparer* preparer = nullptr;
  std::string metrics_url;
};

// RunScenario runs scenario `name` ("baseline", "load", "concurrency", "paper", "quick",
// "run") and returns its report. Setup failures (keys, an unknown algorithm for an RPC)
// are errors; failed measured RPCs are counted in the report, not errors.
absl::StatusOr<std::vector<ScenarioReport>> RunScenario(const std::string& name,
                                                        const Config& config, Context& ctx);

// Scenario names, for --help and validation.
inline constexpr const char* kScenarios[] = {"quick", "baseline", "load", "concurrency",
                                             "paper", "run"};

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_SCENARIOS_H_
