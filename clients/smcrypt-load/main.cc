// smcrypt-load: the load generator of smcryptd (docs/design.md, "Clients"). Scenarios reproduce
// the studies smcrypt is measured against (baseline, load, concurrency, paper); `run`
// drives one RPC closed- or open-loop. See clients/smcrypt-load/README.md.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "clients/smcrypt-load/options.h"
#include "clients/smcrypt-load/report.h"
#include "clients/smcrypt-load/scenarios.h"
#include "clients/smcrypt/algorithm_names.h"
#include "clients/smcrypt/commands.h"
#include "clients/smcrypt/flags.h"
#include "clients/smcrypt/session.h"
#include "nlohmann/json.hpp"

#ifndef SMCRYPT_VERSION
#define SMCRYPT_VERSION "unknown"
#endif

namespace smcrypt::load {
namespace {

// OwnedFlag holds the text of a flag; the help of some is built from the defaults above.
struct OwnedFlag {
  std::string name, value_name, help;
};

const std::vector<OwnedFlag>& OwnedFlags() {
  static const std::vector<OwnedFlag> kFlags = [] {
    std::vector<OwnedFlag> f = {
        {"scenario", "NAME[,NAME]", "quick (default), baseline, load, concurrency, paper, run"},
        {"duration", "DURATION",
         absl::StrCat("per step: seconds or 500ms, 30s, 5m (defaults: baseline 2s cap per cell, "
                      "load ", absl::FormatDuration(kLoadDuration), ", concurrency ",
                      absl::FormatDuration(kConcurrencyStepDuration), ", paper 0.5s per cell, "
                      "run ", absl::FormatDuration(kRunDuration), ")")},
        {"requests", "N", "operations per step (baseline default 20, paper 2000; a cap "
                          "beside --duration)"},
        {"concurrency", "N", absl::StrCat("operations in flight (load, run; open loop: the cap; "
                                          "at most ", kMaxInFlight, ")")},
        {"steps", "N,N,...",
         absl::StrCat("concurrency steps, each at most ", kMaxInFlight, " (default ",
                      absl::StrJoin(kDefaultSteps, ","), ")")},
        {"sizes", "SIZE,...", "payload sizes, e.g. 512,1KiB,1MiB (baseline; others: the first)"},
        {"size", "SIZE", "payload size (same as --sizes with one value)"},
        {"algs", "ALG,...", "schemes (baseline, load, concurrency) or the algorithm (run)"},
        {"alg", "ALG", "the algorithm (same as --algs with one value)"},
        {"rpc", "METHOD", "run: Hash, Hmac, Sign, Verify, Encrypt, Decrypt, PublicKeyEncrypt, "
                          "PublicKeyDecrypt, HybridEncrypt, HybridDecrypt, GenerateRandom, "
                          "GenerateKeyPair, GetPublicKey, GetServerInfo, KeyExchange, "
                          "HashBatch, SignBatch, VerifyBatch, EncryptBatch, HybridEncryptBatch, "
                          "HashStream, EncryptStream, DecryptStream, HybridEncryptStream, "
                          "HybridDecryptStream"},
        {"batch", "N", absl::StrCat("run: items per *Batch RPC (default ",
                                    Config().batch_items, ", at most ", kMaxBatchItems, ")")},
        {"rate", "OPS", "run: open loop at OPS operations/s, latency corrected for "
                        "coordinated omission"},
        {"rate-end", "OPS", "run: ramp the open-loop rate linearly from --rate to OPS over "
                            "--duration"},
        {"warmup", "DURATION", "per step: run the load this long first, left out of every "
                               "figure (default 0s)"},
        {"keys", "ALG=ID,...", "use key <ID> of the server's keyring (--keys_dir) for ALG "
                               "instead of inline keys, e.g. SM2=sm2-sign,SM4-GCM=data "
                               "(needed when the server denies inline private keys)"},
        {"metadata", "KEY=VALUE", "request metadata sent with every call (repeatable), e.g. "
                                  "authorization=Bearer...; keys are lower-cased, values "
                                  "printable ASCII"},
        {"scenario-file", "FILE", "JSON object of flags for a repeatable run, e.g. "
                                  "{\"scenario\": \"run\", \"rpc\": \"Sign\", \"alg\": "
                                  "\"SM2\", \"keys\": {\"SM2\": \"sm2-sign\"}}; flags on the "
                                  "command line win"},
        {"stream-bytes", "SIZE", "paper: the streamed size (default 1GiB)"},
        {"connections", "N", absl::StrCat("gRPC channels, each its own connection (default ",
                                          kDefaultConnections, ", at most ", kMaxConnections,
                                          ")")},
        {"metrics-url", "URL", "smcryptd's /metrics, e.g. http://127.0.0.1:9464/metrics (server "
                               "CPU, memory and request counts per step)"},
        {"json", "FILE", "write the JSON report (- for stdout)"},
        {"csv", "FILE", "write one CSV row per step (- for stdout)"},
        {"chart-dir", "DIR", "write SVG charts there"},
        {"html", "FILE", "write a self-contained HTML report with the charts inline"},
        {"progress", "", "live progress line on stderr (default: when stderr is a terminal)"},
        {"no-progress", "", "no progress line"},
        {"seed", "N", absl::StrCat("payload seed (default ", kDefaultSeed, ")")},
        {"version", "", "print the version"},
    };
    for (const cli::FlagSpec& c : cli::GroupFlags(cli::kConnectionFlags)) {
      // The CLI's --timeout help gives the CLI's default; smcrypt-load's is its own.
      if (c.name == "timeout") {
        f.push_back({std::string(c.name), std::string(c.value_name),
                     absl::StrCat("RPC deadline: seconds or 500ms, 10s, 2m (default ",
                                  absl::FormatDuration(kDefaultTimeout), "; streams at least 30m)")});
      } else {
        f.push_back({std::string(c.name), std::string(c.value_name), std::string(c.help)});
      }
    }
    return f;
  }();
  return kFlags;
}

const std::vector<cli::FlagSpec>& Flags() {
  static const std::vector<cli::FlagSpec> kFlags = [] {
    std::vector<cli::FlagSpec> f;
    for (const OwnedFlag& o : OwnedFlags()) f.push_back({o.name, o.value_name, o.help});
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
      "  load         512 B for --duration (", absl::FormatDuration(kLoadDuration),
      "), totals and daily-capacity estimate\n"
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
    absl::StatusOr<int> n = ParseCount("concurrency", *v, kMaxInFlight);
    if (!n.ok()) return n.status();
    c.concurrency = *n;
  }
  if (auto v = args.Get("steps")) {
    absl::StatusOr<std::vector<int>> l = ParseIntList(*v, kMaxInFlight);
    if (!l.ok()) return absl::InvalidArgumentError(absl::StrCat("--steps ", l.status().message()));
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
  if (auto v = args.Get("rate-end")) {
    if (!absl::SimpleAtod(*v, &c.rate_end) || c.rate_end <= 0 || c.rate <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--rate-end ", *v, ": expected operations per second > 0, with --rate"));
    }
  }
  if (auto v = args.Get("batch")) {
    absl::StatusOr<int> n = ParseCount("batch", *v, kMaxBatchItems);
    if (!n.ok()) return n.status();
    c.batch_items = *n;
  }
  if (auto v = args.Get("warmup")) {
    absl::StatusOr<absl::Duration> d = ParseDurationFlag(*v);
    if (!d.ok()) return d.status();
    c.warmup = *d;
  }
  for (const std::string& v : args.GetAll("metadata")) {
    const size_t eq = v.find('=');
    std::string key = absl::AsciiStrToLower(v.substr(0, eq));
    if (eq == std::string::npos || key.empty() ||
        key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") != std::string::npos ||
        absl::StartsWith(key, "grpc-") || absl::EndsWith(key, "-bin")) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--metadata ", key.empty() ? v.substr(0, eq) : key,
          ": expected KEY=VALUE, KEY of a-z 0-9 - _ . (not grpc-*, not binary *-bin)"));
    }
    if (absl::Status st = CheckMetadataValue(key, absl::string_view(v).substr(eq + 1)); !st.ok()) {
      return st;
    }
    c.metadata.emplace_back(std::move(key), v.substr(eq + 1));
  }
  return c;
}

// KeyIdsFrom reads --keys ALG=ID,...; the values are key names, not secrets.
absl::StatusOr<std::map<smcrypt::v1::Algorithm, std::string>> KeyIdsFrom(const cli::Args& args) {
  std::map<smcrypt::v1::Algorithm, std::string> out;
  for (const std::string& flag : args.GetAll("keys")) {
    for (absl::string_view part : absl::StrSplit(flag, ',', absl::SkipWhitespace())) {
      const size_t eq = part.find('=');
      if (eq == absl::string_view::npos || eq + 1 == part.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--keys ", part, ": expected ALG=KEY_ID, e.g. SM2=sm2-sign"));
      }
      absl::StatusOr<smcrypt::v1::Algorithm> a = cli::ParseAlgorithm(
          absl::StripAsciiWhitespace(part.substr(0, eq)), cli::AlgorithmFamily::kAny);
      if (!a.ok()) return absl::InvalidArgumentError(absl::StrCat("--keys: ", a.status().message()));
      out[*a] = std::string(absl::StripAsciiWhitespace(part.substr(eq + 1)));
    }
  }
  return out;
}

// ErrorKeySax finds the key whose value stops a scenario file's parse: the keys of the
// objects open there, and whether a number was out of range (nlohmann's error 406).
struct ErrorKeySax : nlohmann::json_sax<nlohmann::json> {
  std::vector<std::string> keys;
  bool number_overflow = false;

  std::string KeyPath() const { return absl::StrJoin(keys, "."); }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    if (!keys.empty()) keys.back() = k;
    return true;
  }
  bool end_object() override {
    if (!keys.empty()) keys.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    number_overflow = e.id == 406;
    return false;
  }
};

// ScenarioFileArgs turns the JSON object of --scenario-file into flags: "name": value
// becomes --name=value; an array is a comma list; "keys" and "metadata" may be objects
// (ALG: ID, KEY: VALUE). They come before the command line's flags, which win.
absl::StatusOr<std::vector<std::string>> ScenarioFileArgs(const std::string& path) {
  std::ifstream f(path);
  if (!f) return absl::InvalidArgumentError(absl::StrCat("--scenario-file ", path, ": cannot read"));
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // Parse again for where it failed: a number out of range (1e400) names its key.
    ErrorKeySax sax;
    nlohmann::json::sax_parse(text.str(), &sax);
    if (sax.number_overflow) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--scenario-file ", path, ": \"", sax.KeyPath(), "\": number out of range"));
    }
  }
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--scenario-file ", path, ": expected a JSON object of flags"));
  }
  auto scalar = [](const nlohmann::json& v, std::string* out) {
    if (v.is_string()) {
      *out = v.get<std::string>();
    } else if (v.is_number_integer()) {
      *out = std::to_string(v.get<int64_t>());
    } else if (v.is_number()) {
      *out = absl::StrCat(v.get<double>());
    } else {
      return false;
    }
    return true;
  };
  std::vector<std::string> out;
  // An empty value would become "--name=", and the flag parser would take the next
  // argument for its value.
  auto empty = [&](const std::string& name) {
    return absl::InvalidArgumentError(
        absl::StrCat("--scenario-file ", path, ": \"", name, "\": expected a non-empty value"));
  };
  for (const auto& [name, value] : doc.items()) {
    if (name == "scenario-file" || name == "scenario_file") {
      return absl::InvalidArgumentError(absl::StrCat("--scenario-file ", path, ": nested scenario-file"));
    }
    const std::string flag = absl::StrCat("--", name);
    std::string v;
    if (value.is_boolean()) {
      if (value.get<bool>()) out.push_back(flag);
    } else if (scalar(value, &v)) {
      if (v.empty()) return empty(name);
      out.push_back(absl::StrCat(flag, "=", v));
    } else if (value.is_array()) {
      if (value.empty()) return empty(name);
      std::vector<std::string> items;
      for (const auto& item : value) {
        if (!scalar(item, &v)) {
          return absl::InvalidArgumentError(
              absl::StrCat("--scenario-file ", path, ": \"", name, "\": expected strings or numbers"));
        }
        items.push_back(v);
      }
      out.push_back(absl::StrCat(flag, "=", absl::StrJoin(items, ",")));
    } else if (value.is_object() && (name == "keys" || name == "metadata")) {
      for (const auto& [k, item] : value.items()) {
        if (!scalar(item, &v)) {
          return absl::InvalidArgumentError(
              absl::StrCat("--scenario-file ", path, ": \"", name, "\".\"", k, "\": expected a string"));
        }
        out.push_back(absl::StrCat(flag, "=", k, "=", v));
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("--scenario-file ", path, ": \"", name, "\": unexpected value"));
    }
  }
  return out;
}

absl::StatusOr<Config> FinishConfig(Config c, const cli::Args& args) {
  c.metrics_url = args.Get("metrics-url").value_or("");
  c.progress = args.Has("progress") || (!args.Has("no-progress") && isatty(STDERR_FILENO));
  return c;
}

// DashFlagName turns the underscores of a flag's name (not of its value) into dashes:
// --chart_dir is --chart-dir.
void DashFlagName(std::string& a) {
  const size_t end = std::min(a.find('='), a.size());
  for (size_t j = 2; j < end; ++j) {
    if (a[j] == '_') a[j] = '-';
  }
}

// CommandLine is argv[1..] with the flag names dashed, after the flags of the first
// --scenario-file (so the command line's override them).
absl::StatusOr<std::vector<std::string>> CommandLine(int argc, char** argv) {
  std::vector<std::string> argv_list;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) == 0) DashFlagName(a);
    argv_list.push_back(a);
  }
  for (size_t i = 0; i < argv_list.size(); ++i) {
    std::string path;
    if (argv_list[i] == "--") break;
    if (argv_list[i].rfind("--scenario-file=", 0) == 0) {
      path = argv_list[i].substr(16);
    } else if (argv_list[i] == "--scenario-file" && i + 1 < argv_list.size()) {
      path = argv_list[i + 1];
    } else {
      continue;
    }
    absl::StatusOr<std::vector<std::string>> file_args = ScenarioFileArgs(path);
    if (!file_args.ok()) return file_args.status();
    for (std::string& a : *file_args) DashFlagName(a);
    argv_list.insert(argv_list.begin(), file_args->begin(), file_args->end());
    break;
  }
  return argv_list;
}

// Setup is what the command line asks for, checked.
struct Setup {
  Config config;
  std::map<smcrypt::v1::Algorithm, std::string> key_ids;
  cli::ChannelConfig channel;
  int connections = kDefaultConnections;
  uint64_t seed = kDefaultSeed;
};

// SetupFrom checks the parsed command line; an error is a usage error (exit 2), the first
// of --connections, --seed, the scenario flags, the connection flags, --key-id.
absl::StatusOr<Setup> SetupFrom(const cli::Args& args) {
  absl::StatusOr<Config> config = ConfigFrom(args);
  if (config.ok()) config = FinishConfig(std::move(*config), args);
  absl::StatusOr<std::map<smcrypt::v1::Algorithm, std::string>> key_ids = KeyIdsFrom(args);
  absl::StatusOr<cli::ChannelConfig> channel = cli::ChannelConfigFromArgs(args);
  if (config.ok() && channel.ok() && channel->timeout) config->timeout = *channel->timeout;
  Setup setup;
  if (auto v = args.Get("connections")) {
    absl::StatusOr<int> n = ParseCount("connections", *v, kMaxConnections);
    if (!n.ok()) return n.status();
    setup.connections = *n;
  }
  if (auto v = args.Get("seed"); v && !absl::SimpleAtoi(*v, &setup.seed)) {
    return absl::InvalidArgumentError(absl::StrCat("--seed ", *v, ": expected an integer"));
  }
  for (const absl::Status& st : {config.status(), channel.status(), key_ids.status()}) {
    if (!st.ok()) return st;
  }
  setup.config = *std::move(config);
  setup.key_ids = *std::move(key_ids);
  setup.channel = *std::move(channel);
  return setup;
}

// Measure runs the scenarios against smcryptd into `report`. It returns 0, or the exit
// code after printing why it stopped: 3 when the server cannot be reached, 2 or 3 when a
// scenario cannot be set up (2: an invalid argument).
int Measure(const Setup& setup, bool retries, Report& report) {
  Context ctx;
  for (const auto& ch : MakeChannels(setup.channel, setup.connections, retries)) {
    ctx.stubs.push_back(smcrypt::v1::CryptoService::NewStub(ch));
  }
  ctx.metrics_url = setup.config.metrics_url;
  Preparer preparer(ctx.stubs.front(), setup.config.timeout, setup.seed);
  preparer.SetKeyIds(setup.key_ids);
  preparer.SetMetadata(setup.config.metadata);
  ctx.preparer = &preparer;

  report.version = SMCRYPT_VERSION;
  report.target = setup.channel.target;
  report.connections = setup.connections;
  report.started_at = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());
  absl::StatusOr<smcrypt::v1::GetServerInfoResponse> info = preparer.ServerInfo();
  if (!info.ok()) {
    std::fprintf(stderr, "smcrypt-load: cannot reach smcryptd at %s: %s\n",
                 setup.channel.target.c_str(), std::string(info.status().message()).c_str());
    return 3;
  }
  report.server_version = info->version();
  for (const auto& k : info->kernels()) report.server_kernels.push_back({k.algorithm(), k.kernel()});

  for (const std::string& name : setup.config.scenarios) {
    absl::StatusOr<std::vector<ScenarioReport>> r = RunScenario(name, setup.config, ctx);
    if (!r.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s: %s\n", name.c_str(),
                   std::string(r.status().message()).c_str());
      return r.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 3;
    }
    for (ScenarioReport& s : *r) report.scenarios.push_back(std::move(s));
  }
  for (const ScenarioReport& s : report.scenarios) {
    for (const Step& st : s.steps) {
      report.measured_rpcs += st.result.rpcs;
      report.warmup_rpcs += st.result.warmup_rpcs;
    }
  }
  report.setup_rpcs = preparer.rpcs();
  return 0;
}

// WriteReport prints the report's tables and writes the files the flags name. It returns
// the exit code: 2 when a file could not be written, else 1 when a measured operation
// failed (so scripts notice), else 0.
int WriteReport(const Report& report, const cli::Args& args) {
  const std::string json_path = args.Get("json").value_or("");
  const std::string csv_path = args.Get("csv").value_or("");
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
  if (auto html = args.Get("html")) {
    if (absl::Status s = WriteOut(*html, ReportHtml(report)); !s.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s\n", std::string(s.message()).c_str());
      rc = 2;
    }
  }
  if (auto dir = args.Get("chart-dir")) {
    absl::StatusOr<std::vector<std::string>> files = WriteCharts(report, *dir);
    if (!files.ok()) {
      std::fprintf(stderr, "smcrypt-load: %s\n", std::string(files.status().message()).c_str());
      rc = 2;
    } else {
      (json_path == "-" || csv_path == "-" ? std::cerr : std::cout)
          << "charts: " << files->size() << (files->size() == 1 ? " SVG file in " : " SVG files in ")
          << *dir << "\n";
    }
  }
  for (const ScenarioReport& s : report.scenarios) {
    for (const Step& st : s.steps) {
      if (st.result.ops_failed > 0 && rc == 0) rc = 1;
    }
  }
  return rc;
}

int Main(int argc, char** argv) {
  setenv("GRPC_VERBOSITY", "NONE", /*overwrite=*/0);
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex lock (gRPC's and the
  // runner's) would update the deadlock detector's lock graph: about 5 % of smcrypt-load's
  // CPU per call in a perf profile (cpu-clock) at 64 in flight. smcryptd and
  // smcrypt-rpc-ceiling turn it off the same way.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::StatusOr<std::vector<std::string>> argv_list = CommandLine(argc, argv);
  if (!argv_list.ok()) {
    std::fprintf(stderr, "smcrypt-load: %s\n", std::string(argv_list.status().message()).c_str());
    return 2;
  }
  absl::StatusOr<cli::Args> args = cli::ParseArgs(Flags(), *argv_list);
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
  absl::StatusOr<Setup> setup = SetupFrom(*args);
  if (!setup.ok()) {
    std::fprintf(stderr, "smcrypt-load: %s\n", std::string(setup.status().message()).c_str());
    return 2;
  }
  Report report;
  if (int rc = Measure(*setup, !args->Has("no-retries"), report); rc != 0) return rc;
  return WriteReport(report, *args);
}

}  // namespace
}  // namespace smcrypt::load

int main(int argc, char** argv) { return smcrypt::load::Main(argc, argv); }
