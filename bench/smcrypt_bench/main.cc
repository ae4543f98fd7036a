// smcrypt-bench: in-process benchmarks of smcrypt's SM algorithms, every back end this
// CPU supports, side by side with OpenSSL 3 (always), libgcrypt and Botan 2 (when built
// with them). Google Benchmark runs the cases; afterwards a summary table per family
// gives MB/s or ops/s and the ratios to OpenSSL's same algorithm and to the
// international counterpart, computed from this run. See bench/README.md.
//
// Flags of its own (all Google Benchmark flags work too: --benchmark_filter,
// --benchmark_repetitions, --benchmark_out=FILE --benchmark_out_format=json, ...):
//   --pin_cpu=N           run on CPU N only (sched_setaffinity) before any case
//   --large               add the 1 GiB streamed hash cases (slow)
//   --paper               also print the study's ratio tables beside this run's
//   --summary_out=FILE    also write the summary tables to FILE
//   --headline_out=FILE   write the short headline table (docs/performance.md) to FILE
//   --no_summary          print Google Benchmark's output only
//   --dispatch_cases      run only the smcrypt back ends of the headline cases (the
//                         back-end comparison that bench/check_dispatch.py reads)
// Defaults, each unless the flag is given: --benchmark_min_warmup_time=0.1 (untimed
// warm-up per case), --benchmark_repetitions=5, --benchmark_min_time=0.1 (per repetition;
// Google Benchmark's 0.5 s would make five repetitions of every case take hours),
// --benchmark_enable_random_interleaving=true
// (every (case, repetition) pair in a random order, so that the machine's drift spreads
// over all cases instead of biasing the ratio of two cases that ran minutes apart), and
// --benchmark_display_aggregates_only=true, which smcrypt-bench implements itself: the
// console shows the aggregates while the summary still gets every repetition.
#include <sched.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/smcrypt_bench/bench_util.h"
#include "bench/smcrypt_bench/summary.h"
#include "smcrypt/cpu.h"

namespace {

bool TakeFlag(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return false;
  if (arg[n] == '\0') {
    *value = "";
    return true;
  }
  if (arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

// Google Benchmark's reading of a boolean flag's value (IsTruthyFlagValue: "" is true).
bool Truthy(const std::string& v) {
  if (v.size() == 1) {
    return std::isalnum(static_cast<unsigned char>(v[0])) && std::strchr("0fFnN", v[0]) == nullptr;
  }
  const std::string lower = absl::AsciiStrToLower(v);
  return lower != "false" && lower != "no" && lower != "off";
}

constexpr int kDefaultRepetitions = 5;

}  // namespace

int main(int argc, char** argv) {
  using smcrypt::bench::BenchOptions;
  BenchOptions options;
  bool paper = false, summary = true, warmup_given = false, repetitions_given = false;
  bool interleave = true, interleave_given = false, display_aggregates_only = true;
  bool dispatch_cases = false, filter_given = false, report_aggregates_only = false;
  bool min_time_given = false;
  std::string summary_out, headline_out;
  int pin_cpu = -1;

  std::vector<char*> args = {argv[0]};
  static std::string warmup_flag = "--benchmark_min_warmup_time=0.1";
  static std::string repetitions_flag =
      "--benchmark_repetitions=" + std::to_string(kDefaultRepetitions);
  static std::string interleave_flag = "--benchmark_enable_random_interleaving=true";
  static std::string min_time_flag = "--benchmark_min_time=0.1";
  static std::string filter_flag;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (TakeFlag(argv[i], "--pin_cpu", &v)) {
      if (!absl::SimpleAtoi(v, &pin_cpu) || pin_cpu < 0) {
        std::cerr << "smcrypt-bench: --pin_cpu wants a CPU number, got \"" << v << "\"\n";
        return 2;
      }
    } else if (TakeFlag(argv[i], "--large", &v)) {
      options.large = true;
    } else if (TakeFlag(argv[i], "--paper", &v)) {
      paper = true;
    } else if (TakeFlag(argv[i], "--no_summary", &v)) {
      summary = false;
    } else if (TakeFlag(argv[i], "--summary_out", &v)) {
      summary_out = v;
    } else if (TakeFlag(argv[i], "--headline_out", &v)) {
      headline_out = v;
    } else if (TakeFlag(argv[i], "--dispatch_cases", &v)) {
      dispatch_cases = true;
    } else if (TakeFlag(argv[i], "--benchmark_display_aggregates_only", &v)) {
      // Not passed on: Google Benchmark would then hide the repetitions from the summary's
      // reporter too. The reporter filters its console output instead.
      display_aggregates_only = Truthy(v);
    } else {
      if (TakeFlag(argv[i], "--benchmark_min_warmup_time", &v)) warmup_given = true;
      if (TakeFlag(argv[i], "--benchmark_repetitions", &v)) repetitions_given = true;
      if (TakeFlag(argv[i], "--benchmark_min_time", &v)) min_time_given = true;
      if (TakeFlag(argv[i], "--benchmark_filter", &v)) filter_given = true;
      if (TakeFlag(argv[i], "--benchmark_report_aggregates_only", &v)) {
        report_aggregates_only = Truthy(v);
      }
      if (TakeFlag(argv[i], "--benchmark_enable_random_interleaving", &v)) {
        interleave_given = true;
        interleave = Truthy(v);
      }
      args.push_back(argv[i]);
    }
  }
  // The defaults go first, so that a later flag of the same name (the user's) wins.
  if (!warmup_given) args.insert(args.begin() + 1, warmup_flag.data());
  if (!repetitions_given) args.insert(args.begin() + 1, repetitions_flag.data());
  if (!interleave_given) args.insert(args.begin() + 1, interleave_flag.data());
  if (!min_time_given) args.insert(args.begin() + 1, min_time_flag.data());
  if (dispatch_cases) {
    if (filter_given) {
      std::cerr << "smcrypt-bench: --dispatch_cases sets the filter; drop --benchmark_filter\n";
      return 2;
    }
    filter_flag = "--benchmark_filter=" + smcrypt::bench::HeadlineBackEndFilter();
    args.push_back(filter_flag.data());
  }

  if (pin_cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pin_cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
      std::cerr << "smcrypt-bench: cannot pin to CPU " << pin_cpu << ": " << std::strerror(errno)
                << "\n";
      return 2;
    }
  }

  const absl::Status env = smcrypt::CpuFeatureEnvStatus();
  if (!env.ok()) {
    std::cerr << "smcrypt-bench: SMCRYPT_CPU_DISABLE: " << env.message() << "\n";
    return 2;
  }
  std::vector<std::string> kernels;
  smcrypt::bench::Dispatch dispatch;
  for (const smcrypt::KernelChoice& k : smcrypt::ActiveKernels()) {
    kernels.push_back(absl::StrCat(k.algorithm, "=", k.kernel));
    dispatch[k.algorithm] = k.kernel;
  }
  benchmark::AddCustomContext("smcrypt_cpu_features",
                              smcrypt::FormatCpuFeatureList(smcrypt::GetCpuFeatures()));
  benchmark::AddCustomContext("smcrypt_dispatched_kernels", absl::StrJoin(kernels, ","));
  benchmark::AddCustomContext("smcrypt_cpu", smcrypt::FormatCpuIdentity(smcrypt::GetCpuIdentity()));
  benchmark::AddCustomContext("smcrypt_pinned_cpu", pin_cpu >= 0 ? std::to_string(pin_cpu) : "none");
  benchmark::AddCustomContext("smcrypt_peers", absl::StrJoin(smcrypt::bench::Peers(), ","));
  // What bench/check_dispatch.py compares: each headline case's dispatched back end.
  benchmark::AddCustomContext("smcrypt_headline_dispatched",
                              smcrypt::bench::HeadlineDispatchContext(dispatch));
  benchmark::AddCustomContext("smcrypt_random_interleaving", interleave ? "true" : "false");

  smcrypt::bench::RegisterSmcryptCases(options);
  smcrypt::bench::RegisterOpensslCases(options);
  smcrypt::bench::RegisterGcryptCases(options);
  smcrypt::bench::RegisterBotanCases(options);

  int bench_argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&bench_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bench_argc, args.data())) return 2;

  smcrypt::bench::SummaryReporter reporter(/*console_repetitions=*/!display_aggregates_only);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // The cases hold OpenSSL, libgcrypt and Botan objects: free them now, while those
  // libraries are still initialised, not from static destructors after their cleanup.
  benchmark::ClearRegisteredBenchmarks();
  benchmark::Shutdown();

  const std::map<std::string, smcrypt::bench::Result> results = reporter.results();
  // Nothing ran (--benchmark_list_tests, a filter that matches nothing): no tables.
  if (results.empty()) summary = paper = false;
  if (summary || paper) {
    std::ostringstream text;
    text << "\nCPU: " << smcrypt::FormatCpuIdentity(smcrypt::GetCpuIdentity())
         << "; CPU features: " << smcrypt::FormatCpuFeatureList(smcrypt::GetCpuFeatures())
         << "; dispatched: " << absl::StrJoin(kernels, ", ")
         << "; pinned CPU: " << (pin_cpu >= 0 ? std::to_string(pin_cpu) : "none")
         << "; peers: " << absl::StrJoin(smcrypt::bench::Peers(), ", ") << "\n";
    const auto impls = smcrypt::bench::SmcryptImplementations();
    if (report_aggregates_only || reporter.aggregates_only()) {
      text << "Only aggregates were reported (--benchmark_report_aggregates_only): medians "
              "without their spread, ratios without ranges.\n";
    }
    if (summary) smcrypt::bench::PrintSummary(results, impls, dispatch, text);
    if (paper) smcrypt::bench::PrintPaperView(results, dispatch, text);
    std::cout << text.str() << std::flush;
    if (!summary_out.empty()) {
      std::ofstream f(summary_out);
      f << text.str();
      if (!f) {
        std::cerr << "smcrypt-bench: cannot write " << summary_out << "\n";
        return 1;
      }
    }
  }
  if (!headline_out.empty()) {
    std::ostringstream text;
    smcrypt::bench::PrintHeadline(results, dispatch, text);
    std::ofstream f(headline_out);
    f << text.str();
    if (!f) {
      std::cerr << "smcrypt-bench: cannot write " << headline_out << "\n";
      return 1;
    }
  }
  return 0;
}
