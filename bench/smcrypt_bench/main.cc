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
//   --headline_out=FILE   write the short headline table (README "Performance") to FILE
//   --no_summary          print Google Benchmark's output only
// Unless --benchmark_min_warmup_time is given, each case warms up for 0.1 s untimed.
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
  using smcrypt::bench::BenchOptions;
  BenchOptions options;
  bool paper = false, summary = true, warmup_given = false;
  std::string summary_out, headline_out;
  int pin_cpu = -1;

  std::vector<char*> args = {argv[0]};
  static std::string warmup_flag = "--benchmark_min_warmup_time=0.1";
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
    } else {
      if (std::strncmp(argv[i], "--benchmark_min_warmup_time", 27) == 0) warmup_given = true;
      args.push_back(argv[i]);
    }
  }
  if (!warmup_given) args.insert(args.begin() + 1, warmup_flag.data());

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
  for (const smcrypt::KernelChoice& k : smcrypt::ActiveKernels()) {
    kernels.push_back(absl::StrCat(k.algorithm, "=", k.kernel));
  }
  benchmark::AddCustomContext("smcrypt_cpu_features",
                              smcrypt::FormatCpuFeatureList(smcrypt::GetCpuFeatures()));
  benchmark::AddCustomContext("smcrypt_dispatched_kernels", absl::StrJoin(kernels, ","));
  benchmark::AddCustomContext("smcrypt_pinned_cpu", pin_cpu >= 0 ? std::to_string(pin_cpu) : "none");
  benchmark::AddCustomContext("smcrypt_peers", absl::StrJoin(smcrypt::bench::Peers(), ","));

  smcrypt::bench::RegisterSmcryptCases(options);
  smcrypt::bench::RegisterOpensslCases(options);
  smcrypt::bench::RegisterGcryptCases(options);
  smcrypt::bench::RegisterBotanCases(options);

  int bench_argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&bench_argc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bench_argc, args.data())) return 2;

  smcrypt::bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // The cases hold OpenSSL, libgcrypt and Botan objects: free them now, while those
  // libraries are still initialised, not from static destructors after their cleanup.
  benchmark::ClearRegisteredBenchmarks();
  benchmark::Shutdown();

  if (summary || paper) {
    std::ostringstream text;
    text << "\nCPU features: " << smcrypt::FormatCpuFeatureList(smcrypt::GetCpuFeatures())
         << "; dispatched: " << absl::StrJoin(kernels, ", ")
         << "; pinned CPU: " << (pin_cpu >= 0 ? std::to_string(pin_cpu) : "none")
         << "; peers: " << absl::StrJoin(smcrypt::bench::Peers(), ", ") << "\n";
    const auto impls = smcrypt::bench::SmcryptImplementations();
    if (summary) smcrypt::bench::PrintSummary(reporter.results(), impls, text);
    if (paper) smcrypt::bench::PrintPaperView(reporter.results(), impls, text);
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
    smcrypt::bench::PrintHeadline(reporter.results(), smcrypt::bench::SmcryptImplementations(),
                                  text);
    std::ofstream f(headline_out);
    f << text.str();
    if (!f) {
      std::cerr << "smcrypt-bench: cannot write " << headline_out << "\n";
      return 1;
    }
  }
  return 0;
}
