// report.h — rows of smcrypt-rpc-ceiling (one RPC at one in-flight count over its rounds)
// and their markdown, JSON and one-line text forms.
#ifndef SMCRYPT_BENCH_RPC_CEILING_REPORT_H_
#define SMCRYPT_BENCH_RPC_CEILING_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bench/rpc_ceiling/closed_loop.h"

namespace smcrypt::rpc_ceiling {

// Row collects the rounds of one RPC at one in-flight count: in each round the echo server
// and then smcryptd (for "echo": the echo server twice) ran the same requests.
struct Row {
  std::string rpc;
  std::string description;
  size_t request_bytes = 0;
  int in_flight = 0;
  int channels = 0;
  std::vector<double> echo_rps, target_rps;  // per round
  std::vector<uint64_t> echo_latencies_ns, target_latencies_ns;  // all rounds
  std::map<std::string, int64_t> echo_errors, target_errors;     // all rounds, all phases

  // AddRound appends one round's pair of measurements.
  void AddRound(const Measurement& echo, const Measurement& target);
};

// Summary: medians over the rounds; `share` = target req/s / echo req/s of the same round,
// its median and range; latency percentiles (µs) over every measured call of all rounds.
struct Summary {
  double target_rps = 0, echo_rps = 0;
  double share = 0, share_min = 0, share_max = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0;
  double echo_p50_us = 0;
  int64_t target_error_count = 0, echo_error_count = 0;
};

// Summarize sorts the row's latencies and computes its Summary.
Summary Summarize(Row& row);

// RunInfo describes the run for the report headers.
struct RunInfo {
  std::string label;          // what smcryptd was measured (--label)
  std::string target, echo;   // addresses
  std::string cpu_model;
  int cpus = 0;
  int cq_threads = 0;
  double warmup_seconds = 0, duration_seconds = 0;
  int rounds = 0;
  std::string date_utc;
};

// ErrorsText is "0", or "CODE n, ..." for smcryptd then "echo: CODE n" for the echo server.
std::string ErrorsText(const Row& row);
// TextLine is one row as a line for the terminal.
std::string TextLine(Row& row);
// Markdown is the header paragraph and the table of all rows.
std::string Markdown(const RunInfo& info, std::vector<Row>& rows);
// Json is the whole run, every round's figures included.
std::string Json(const RunInfo& info, std::vector<Row>& rows);

}  // namespace smcrypt::rpc_ceiling

#endif  // SMCRYPT_BENCH_RPC_CEILING_REPORT_H_
