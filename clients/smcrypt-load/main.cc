// smcrypt-load: the load generator of smcryptd (DESIGN.md, "Clients"). Scenarios reproduce
// the studies smcrypt is measured against (baseline, load, concurrency, paper); `run`
// drives one RPC closed- or open-loop. See clients/smcrypt-load/README.md.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "clients/smcrypt-load/options.h"
#include "clients/smcrypt-load/report.h"
#include "clients/smcrypt-load/scenarios.h"
#include "clients/smcrypt/algorithm_names.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/flags.h"
#include "clients/smcrypt/session.h"

#ifndef SMCRYPT_VERSION
#define SMCRYPT_VERSION "unknown"
#endif

namespace smcrypt::load {
namespace {

const std::vector<cli::FlagSpec>& Flags() {
  static const std::vector<cli::FlagSpec> kFlags = [] {
    std::vector<cli::FlagSpec> f = {
        {"scenario", "NAME[,NAME]", "quick (default), baseline, load, concurrency, paper, run"},
        {"duration", "DURATION", "per step: seconds or 500ms, 30s, 5m (defaults: baseline 2s "
                                 "cap per cell, load 300s, concurrency 10s, paper 0.5s per cell, "
                                 "run 10s)"},
        {"requests", "N", "operations per step (baseline default 20, paper 2000; a cap "
                          "beside --duration)"},
        {"concurrency", "N", "operations in flight (load, run; open loop: the cap)"},
        {"steps", "N,N,...", "concurrency steps (default 1,10,100,1000,5000,10000,20000)"},
        {"sizes", "SIZE,...", "payload sizes, e.g. 512,1KiB,1MiB (baseline; others: the first)"},
        {"size", "SIZE", "payload size (same as --sizes with one value)"},
        {"algs", "ALG,...", "schemes (baseline, load, concurrency) or the algorithm (run)"},
        {"alg", "ALG", "the algorithm (same as --algs with one value)"},
        {"rpc", "METHOD", "run: Hash, Hmac, Sign, Verify, Encrypt, Decrypt, PublicKeyEncrypt, "
                          "PublicKeyDecrypt, HybridEncrypt, HybridDecrypt, GenerateRandom, "
                          "HashStream, EncryptStream"},
        {"rate", "OPS", "run: open loop at OPS operations/s, latency corrected for "
                        "coordinated omission"},
        {"stream-bytes", "SIZE", "paper: the streamed size (default 1GiB)"},
        {"connections", "N", "gRPC channels, each its own connection (default 8)"},
        {"metrics-url", "URL", "smcryptd's /metrics, e.g. http://127.0.0.1:9464/metrics (server "
                               "CPU, memory and request counts per step)"},
        {"json", "FILE", "write the JSON report (- for stdout)"},
        {"csv", "FILE", "write one CSV row per step (- for stdout)"},
        {"chart-dir", "DIR", "write SVG charts there"},
        {"progress", "", "live progress line on stderr (default: when stderr is a terminal)"},
        {"no-progress", "", "no progress line"},
        {"seed", "N", "payload seed (default 1)"},
        {"version", "", "print the version"},
    };
    for (const cli::FlagSpec& c : cli::GroupFlags(cli::kConnectionFlags)) f.push_back(c);
    return f;
  }();
  return kFlags;
}

std::string Help() {
  std::string out = absl::StrCat(
      "smcrypt-load ", SMCRYPT_VERSION,
      " -- load generator of smcryptd\n\n"
      "Usage: smcrypt-load [--scenario NAME[,NAME]] [flags]\n\n"
      "Scenarios:\n"
      "  quick        load for 10s and concurrency 1..10,000 at 4s per step (the default)\n"
      "  baseline     one request at a time, 512 B..1 MiB: SM2 vs HPKE (and P-256, RSA)\n"
      "  load         512 B for --duration (300s), totals and daily-capacity estimate\n"
      "  concurrency  in-flight steps 1..20,000: throughput, latency, errors, server CPU/RSS\n"
      "  paper        the studies' ratio and throughput tables beside smcryptd's\n"
      "  run          --rpc --alg --size [--concurrency] [--duration|--requests] [--rate]\n\n"
      "Flags:\n");
  for (const cli::FlagSpec& f : Flags()) {
    std::string left = absl::StrCat("  --", f.name);
    if (!f.value_name.empty()) absl::StrAppend(&left, " ", f.value_name);
    if (left.size() < 26) left.resize(26, ' ');
    else left += "\n" + std::string(26, ' ');
    absl::StrAppend(&out, left, f.help, "\n");
  }
  absl::StrAppend(&out, "\nFlag names take dashes or underscores (--chart-dir, --chart_dir).\n");
  return out;
}

absl::Status WriteOut(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return absl::OkStatus();
  }
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<Config> ConfigFrom(const cli::Args& args) {
  Config c;
  for (absl::string_view s :
       absl::StrSplit(args.Get("scenario").value_or("quick"), ',', absl::SkipWhitespace())) {
    c.scenarios.push_back(absl::AsciiStrToLower(s));
  }
  if (auto v = args.Get("duration")) {
    absl::StatusOr<absl::Duration> d = ParseDurationFlag(*v);
    if (!d.ok()) return d.status();
    c.duration = *d;
  }
  auto positive = [](const std::string& flag, const std::string& v) -> absl::StatusOr<int64_t> {
    int64_t n;
    if (!absl::SimpleAtoi(v, &n) || n <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, " ", v, ": expected a positive integer"));
    }
    return n;
  };
  if (auto v = args.Get("requests")) {
    absl::StatusOr<int64_t> n = positive("requests", *v);
    if (!n.ok()) return n.status();
    c.requests = *n;
  }
  if (auto v = args.Get("concurrency")) {
    absl::StatusOr<int64_t> n = positive("concurrency", *v);
    if (!n.ok()) return n.status();
    c.concurrency = static_cast<int>(*n);
  }
  if (auto v = args.Get("steps")) {
    absl::StatusOr<std::vector<int>> l = ParseIntList(*v);
    if (!l.ok()) return l.status();
    c.steps = *l;
  }
  for (const char* flag : {"sizes", "size"}) {
    if (auto v = args.Get(flag)) {
      c.sizes.clear();
      for (absl::string_view part : absl::StrSplit(*v, ',', absl::SkipWhitespace())) {
        absl::StatusOr<size_t> n = ParseSize(part);
        if (!n.ok()) return n.status();
        c.sizes.push_back(*n);
      }
    }
  }
  for (const char* flag : {"algs", "alg"}) {
    if (auto v = args.Get(flag)) {
      c.algs.clear();
      for (absl::string_view part : absl::StrSplit(*v, ',', absl::SkipWhitespace())) {
        absl::StatusOr<smcrypt::v1::Algorithm> a =
            cli::ParseAlgorithm(absl::StripAsciiWhitespace(part), cli::AlgorithmFamily::kAny);
        if (!a.ok()) return a.status();
        c.algs.push_back(*a);
      }
    }
  }
  c.rpc = args.Get("rpc").value_or("");
  if (auto v = args.Get("rate")) {
    if (!absl::SimpleAtod(*v, &c.rate) || c.rate <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("--rate ", *v, ": expected operations per second > 0"));
    }
  }
  if (auto v = args.Get("stream-bytes")) {
    absl::StatusOr<size_t> n = ParseSize(*v);
    if (!n.ok()) return n.status();
    c.stream_bytes = *n;
  }
  c.metrics_url = args.Get("metrics-url").value_or("");
  c.progress = args.Has("progress") || (!args.Has("no-progress") && isatty(STDERR_FILENO));
  return c;
}

int Main(int argc, char** argv) {
  setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
  std::vector<std::string> argv_list;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // --chart_dir is --chart-dir: underscores in the flag name (not its value) are dashes.
    if (a.rfind("--", 0) == 0) {
      const size_t end = std::min(a.find('='), a.size());
      for (size_t j = 2; j < end; ++j) {
        if (a[j] == '_') a[j] = '-';
      }
    }
    argv_list.push_back(a);
  }
  absl::StatusOr<cli::Args> args = cli::ParseArgs(Flags(), argv_list);
  if (!args.ok()) {
    std::fprintf(stderr, "smcrypt-load: %s\nRun 'smcrypt-load --help' for usage.\n",
                 std::string(args.status().message()).c_str());
    return 2;
  }
  if (args->Has("help")) {
    std::fputs(Help().c_str(), stdout);
    return 0;
  }
  if (args->Has("version")) {
    std::printf("smcrypt-load %s\n", SMCRYPT_VERSION);
    return 0;
  }
  absl::StatusOr<Config> config = ConfigFrom(*args);
  absl::StatusOr<cli::ChannelConfig> channel = cli::ChannelConfigFromArgs(*args);
  if (config.ok() && channel.ok() && channel->timeout) config->timeout = *channel->timeout;
  int connections = 8;
  if (auto v = args->Get("connections"); v && (!absl::SimpleAtoi(*v, &connections) || connections <= 0)) {
    std::fprintf(stderr, "smcrypt-load: --connections %s: expected a positive integer\n", v->c_str());
    return 2;
  }
  uint64_t seed = 1;
  if (auto v = args->Get("seed"); v && !absl::SimpleAtoi(*v, &seed)) {
    std::fprintf(stderr, "smcrypt-load: --seed %s: expected an integer\n", v->c_str());
    return 2;
  }
  for (const absl::Status& st : {config.status(), channel.status()}) {
    if (!st.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s\n", std::string(st.message()).c_str());
      return 2;
    }
  }

  Context ctx;
  for (const auto& ch : MakeChannels(*channel, connections)) {
    ctx.stubs.push_back(smcrypt::v1::CryptoService::NewStub(ch));
  }
  ctx.metrics_url = config->metrics_url;
  Preparer preparer(ctx.stubs.front(), config->timeout, seed);
  ctx.preparer = &preparer;

  Report report;
  report.version = SMCRYPT_VERSION;
  report.target = channel->target;
  report.connections = connections;
  report.started_at = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());
  absl::StatusOr<smcrypt::v1::GetServerInfoResponse> info = preparer.ServerInfo();
  if (!info.ok()) {
    std::fprintf(stderr, "smcrypt-load: cannot reach smcryptd at %s: %s\n", channel->target.c_str(),
                 std::string(info.status().message()).c_str());
    return 3;
  }
  report.server_version = info->version();
  for (const auto& k : info->kernels()) report.server_kernels.push_back({k.algorithm(), k.kernel()});

  for (const std::string& name : config->scenarios) {
    absl::StatusOr<std::vector<ScenarioReport>> r = RunScenario(name, *config, ctx);
    if (!r.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s: %s\n", name.c_str(),
                   std::string(r.status().message()).c_str());
      return r.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 3;
    }
    for (ScenarioReport& s : *r) report.scenarios.push_back(std::move(s));
  }
  for (const ScenarioReport& s : report.scenarios) {
    for (const Step& st : s.steps) report.measured_rpcs += st.result.rpcs;
  }
  report.setup_rpcs = preparer.rpcs();

  const std::string json_path = args->Get("json").value_or("");
  const std::string csv_path = args->Get("csv").value_or("");
  // With --json - or --csv -, stdout carries that document only; the table goes to stderr.
  std::ostringstream text;
  PrintReport(report, text);
  if (json_path == "-" || csv_path == "-") {
    std::cerr << text.str();
  } else {
    std::cout << text.str();
  }
  int rc = 0;
  if (!json_path.empty()) {
    if (absl::Status s = WriteOut(json_path, ReportJson(report)); !s.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s\n", std::string(s.message()).c_str());
      rc = 2;
    }
  }
  if (!csv_path.empty()) {
    if (absl::Status s = WriteOut(csv_path, ReportCsv(report)); !s.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s\n", std::string(s.message()).c_str());
      rc = 2;
    }
  }
  if (auto dir = args->Get("chart-dir")) {
    absl::StatusOr<std::vector<std::string>> files = WriteCharts(report, *dir);
    if (!files.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s\n", std::string(files.status().message()).c_str());
      rc = 2;
    } else {
      (json_path == "-" || csv_path == "-" ? std::cerr : std::cout)
          << "charts: " << files->size() << " SVG files in " << *dir << "\n";
    }
  }
  // Exit 1 when any measured operation failed, so scripts notice.
  for (const ScenarioReport& s : report.scenarios) {
    for (const Step& st : s.steps) {
      if (st.result.ops_failed > 0 && rc == 0) rc = 1;
    }
  }
  return rc;
}

}  // namespace
}  // namespace smcrypt::load

int main(int argc, char** argv) { return smcrypt::load::Main(argc, argv); }
