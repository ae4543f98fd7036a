// smcrypt-rpc-ceiling: smcryptd's per-call cost against the gRPC ceiling. One role serves a
// bare gRPC echo (--serve_echo); the other drives the echo server and smcryptd alternately
// with the same closed-loop client and the same request bytes, and reports each RPC's
// rate as a share of the echo rate measured beside it. See bench/rpc_ceiling/README.md.
//
//   smcrypt-rpc-ceiling --serve_echo=127.0.0.1:50061 &
//   smcrypt-rpc-ceiling --target=127.0.0.1:50051 --echo=127.0.0.1:50061 --markdown=t.md
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/rpc_ceiling/closed_loop.h"
#include "bench/rpc_ceiling/echo_server.h"
#include "bench/rpc_ceiling/report.h"
#include "bench/rpc_ceiling/workload.h"

ABSL_FLAG(std::string, serve_echo, "",
          "HOST:PORT: serve the bare gRPC echo there (port 0 picks one and logs it) until "
          "SIGTERM/SIGINT, instead of running the client");
ABSL_FLAG(uint64_t, max_message_bytes, 4u << 20,
          "echo server: largest request message in bytes (smcryptd's default, 4 MiB)");
ABSL_FLAG(std::string, target, "127.0.0.1:50051", "smcryptd's gRPC address (plaintext)");
ABSL_FLAG(std::string, echo, "", "the echo server's address (required for the client)");
ABSL_FLAG(std::string, label, "", "what is measured, for the report header (e.g. a commit)");
ABSL_FLAG(std::vector<std::string>, rpcs, {},
          "RPCs to measure, comma-separated: echo, Hash, Encrypt, Sign, Verify, "
          "HybridEncrypt, PublicKeyEncrypt (default: all)");
ABSL_FLAG(std::vector<std::string>, in_flight, std::vector<std::string>({"1", "64"}),
          "calls in flight (N), comma-separated; every RPC is measured at each");
ABSL_FLAG(int, channels, 4, "channels per server, each its own HTTP/2 connection");
ABSL_FLAG(int, cq_threads, 2, "completion-queue threads of the client");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(2), "per measurement, not counted");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(3), "per measurement, counted");
ABSL_FLAG(int, rounds, 5, "rounds per RPC and N, each echo then smcryptd");
ABSL_FLAG(int, big_in_flight, 0,
          "the big-N case: also measure --big_rpcs with this many calls in flight over "
          "--big_channels connections (0: skip)");
ABSL_FLAG(int, big_channels, 64, "channels per server of the big-N case");
ABSL_FLAG(std::vector<std::string>, big_rpcs,
          std::vector<std::string>({"echo", "HybridEncrypt"}), "RPCs of the big-N case");
ABSL_FLAG(size_t, payload_bytes, 512,
          "data of echo, Hash, Encrypt, HybridEncrypt, PublicKeyEncrypt");
ABSL_FLAG(size_t, sign_bytes, 32, "message of Sign and Verify");
ABSL_FLAG(std::string, sm2_key_id, "signing",
          "keyring SM2 PRIVATE KEY entry (Sign, Verify, HybridEncrypt, PublicKeyEncrypt)");
ABSL_FLAG(std::string, sm4_key_id, "data", "keyring SM4 KEY entry (Encrypt)");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(30), "deadline of every call");
ABSL_FLAG(std::string, markdown, "", "write the markdown table to FILE (- for stdout)");
ABSL_FLAG(std::string, json, "", "write the JSON report to FILE (- for stdout)");

namespace smcrypt::rpc_ceiling {
namespace {

using Stubs = std::vector<std::unique_ptr<grpc::GenericStub>>;

absl::StatusOr<std::vector<int>> ParseCounts(const std::vector<std::string>& values) {
  std::vector<int> out;
  for (const std::string& v : values) {
    int n = 0;
    if (!absl::SimpleAtoi(v, &n) || n < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--in_flight: \"", v, "\" is not a count"));
    }
    out.push_back(n);
  }
  if (out.empty()) return absl::InvalidArgumentError("--in_flight: no count");
  return out;
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (absl::StartsWith(line, "model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
      }
    }
  }
  return "unknown CPU";
}

absl::Status WriteOut(const std::string& path, const std::string& text) {
  if (path.empty()) return absl::OkStatus();
  if (path == "-") {
    std::cout << text << std::flush;
    return absl::OkStatus();
  }
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Measure runs the rounds of every workload at `in_flight`, echo and smcryptd alternately.
void Measure(ClosedLoop& loop, const std::vector<Workload>& workloads, const Stubs& echo,
             const Stubs& smcryptd, int in_flight, int channels, std::vector<Row>& rows) {
  LoopOptions options;
  options.in_flight = in_flight;
  options.warmup = absl::GetFlag(FLAGS_warmup);
  options.duration = absl::GetFlag(FLAGS_duration);
  options.timeout = absl::GetFlag(FLAGS_timeout);
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  for (const Workload& w : workloads) {
    Row row;
    row.rpc = w.name;
    row.description = w.description;
    row.request_bytes = w.request_bytes;
    row.in_flight = in_flight;
    row.channels = channels;
    const bool echo_row = w.name == "echo";
    for (int r = 0; r < rounds; ++r) {
      std::fprintf(stderr, "%s N=%d round %d/%d\n", w.name.c_str(), in_flight, r + 1, rounds);
      const Measurement ceiling = loop.Run(echo, kEchoMethod, w.request, options);
      const Measurement measured =
          loop.Run(echo_row ? echo : smcryptd, w.method, w.request, options);
      row.AddRound(ceiling, measured);
    }
    std::cout << TextLine(row) << std::endl;
    rows.push_back(std::move(row));
  }
}

std::vector<Workload> Select(const std::vector<Workload>& all,
                             const std::vector<std::string>& names) {
  std::vector<Workload> out;
  for (const Workload& w : all) {
    if (std::find(names.begin(), names.end(), w.name) != names.end()) out.push_back(w);
  }
  return out;
}

absl::Status RunClient() {
  const std::string target = absl::GetFlag(FLAGS_target);
  const std::string echo_target = absl::GetFlag(FLAGS_echo);
  if (echo_target.empty()) return absl::InvalidArgumentError("--echo is required");
  absl::StatusOr<std::vector<int>> counts = ParseCounts(absl::GetFlag(FLAGS_in_flight));
  if (!counts.ok()) return counts.status();
  const int channels = std::max(1, absl::GetFlag(FLAGS_channels));
  const int big_in_flight = absl::GetFlag(FLAGS_big_in_flight);
  const int big_channels = std::max(1, absl::GetFlag(FLAGS_big_channels));
  std::vector<std::string> names = absl::GetFlag(FLAGS_rpcs);
  if (names.empty()) names = KnownWorkloads();
  std::vector<std::string> big_names = absl::GetFlag(FLAGS_big_rpcs);
  if (big_in_flight > 0) {
    for (const std::string& b : big_names) {
      if (std::find(names.begin(), names.end(), b) == names.end()) names.push_back(b);
    }
  }

  const absl::Duration connect_timeout = absl::Seconds(30);
  absl::StatusOr<Stubs> echo = OpenChannels(echo_target, channels, "echo", connect_timeout);
  if (!echo.ok()) return echo.status();
  absl::StatusOr<Stubs> smcryptd = OpenChannels(target, channels, "smcryptd", connect_timeout);
  if (!smcryptd.ok()) return smcryptd.status();

  WorkloadOptions wo;
  wo.sm2_key_id = absl::GetFlag(FLAGS_sm2_key_id);
  wo.sm4_key_id = absl::GetFlag(FLAGS_sm4_key_id);
  wo.payload_bytes = absl::GetFlag(FLAGS_payload_bytes);
  wo.sign_bytes = absl::GetFlag(FLAGS_sign_bytes);
  wo.timeout = absl::GetFlag(FLAGS_timeout);
  absl::StatusOr<std::vector<Workload>> workloads =
      BuildWorkloads(names, wo, *(*smcryptd)[0], *(*echo)[0]);
  if (!workloads.ok()) return workloads.status();
  std::fprintf(stderr, "checked %zu RPCs once each (Hash digest = EVP_sm3); measuring\n",
               workloads->size());

  RunInfo info;
  info.label = absl::GetFlag(FLAGS_label);
  info.target = target;
  info.echo = echo_target;
  info.cpu_model = CpuModel();
  info.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  info.cq_threads = std::max(1, absl::GetFlag(FLAGS_cq_threads));
  info.warmup_seconds = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_warmup));
  info.duration_seconds = absl::ToDoubleSeconds(absl::GetFlag(FLAGS_duration));
  info.rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  info.date_utc = absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone());

  std::vector<Row> rows;
  {
    ClosedLoop loop(info.cq_threads);
    const std::vector<std::string> regular =
        absl::GetFlag(FLAGS_rpcs).empty() ? KnownWorkloads() : absl::GetFlag(FLAGS_rpcs);
    const std::vector<Workload> selected = Select(*workloads, regular);
    for (int n : *counts) Measure(loop, selected, *echo, *smcryptd, n, channels, rows);
    if (big_in_flight > 0) {
      absl::StatusOr<Stubs> big_echo =
          OpenChannels(echo_target, big_channels, "echo-big", connect_timeout);
      if (!big_echo.ok()) return big_echo.status();
      absl::StatusOr<Stubs> big_smcryptd =
          OpenChannels(target, big_channels, "smcryptd-big", connect_timeout);
      if (!big_smcryptd.ok()) return big_smcryptd.status();
      Measure(loop, Select(*workloads, big_names), *big_echo, *big_smcryptd, big_in_flight,
              big_channels, rows);
    }
  }

  const std::string markdown = Markdown(info, rows);
  std::cout << "\n" << markdown << std::flush;
  if (absl::GetFlag(FLAGS_markdown) != "-") {
    if (absl::Status s = WriteOut(absl::GetFlag(FLAGS_markdown), markdown); !s.ok()) return s;
  }
  return WriteOut(absl::GetFlag(FLAGS_json), Json(info, rows));
}

}  // namespace
}  // namespace smcrypt::rpc_ceiling

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "smcryptd's per-call cost against a bare gRPC echo server.\n"
      "Usage: smcrypt-rpc-ceiling --serve_echo=HOST:PORT\n"
      "       smcrypt-rpc-ceiling --target=HOST:PORT --echo=HOST:PORT [--rpcs=Hash,Sign] "
      "[--in_flight=1,64] [--markdown=FILE] [--json=FILE]");
  absl::ParseCommandLine(argc, argv);
  // As smcryptd does (server/daemon/main.cc): no deadlock-detection bookkeeping on every
  // absl::Mutex lock (Debian's Abseil is built without NDEBUG), for the echo server and
  // the client alike, so the ceiling is gRPC's, not the detector's.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const std::string serve_echo = absl::GetFlag(FLAGS_serve_echo);
  const absl::Status status =
      serve_echo.empty()
          ? smcrypt::rpc_ceiling::RunClient()
          : smcrypt::rpc_ceiling::ServeEcho(serve_echo, absl::GetFlag(FLAGS_max_message_bytes));
  if (!status.ok()) {
    std::fprintf(stderr, "smcrypt-rpc-ceiling: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
