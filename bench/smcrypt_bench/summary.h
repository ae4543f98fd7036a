// summary.h — the per-family tables smcrypt-bench prints after Google Benchmark's own
// output, computed from the same run's results.
#ifndef SMCRYPT_BENCH_SMCRYPT_BENCH_SUMMARY_H_
#define SMCRYPT_BENCH_SMCRYPT_BENCH_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

namespace smcrypt::bench {

// Result is one case's figures: the median over repetitions (the single run without
// repetitions), and every repetition's figure in the order the repetitions of this case
// ran (Google Benchmark's repetition_index). The per-repetition vectors are empty when
// only aggregates were reported (--benchmark_report_aggregates_only=true).
struct Result {
  double bytes_per_second = 0;  // 0 when the case counts operations only
  double items_per_second = 0;  // operations per second
  std::vector<double> bytes_reps, items_reps;
};

// SummaryReporter is Google Benchmark's console reporter that also keeps every
// repetition of every case (failed cases are left out of the results). It must receive
// the repetitions, i.e. run without --benchmark_display_aggregates_only /
// --benchmark_report_aggregates_only; with `console_repetitions` false it prints only the
// aggregates (and single runs) to the console, as --benchmark_display_aggregates_only
// would, while still keeping the repetitions for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  explicit SummaryReporter(bool console_repetitions = true)
      : console_repetitions_(console_repetitions) {}
  void ReportRuns(const std::vector<Run>& runs) override;
  // Each case's Result: medians computed from the repetitions when they were received,
  // else Google Benchmark's "median" aggregate.
  std::map<std::string, Result> results() const;
  // True when some case came with aggregates only (no per-repetition spread).
  bool aggregates_only() const;

 private:
  struct Collected {
    std::map<int64_t, std::pair<double, double>> reps;  // repetition -> (bytes/s, items/s)
    bool has_median = false;
    std::pair<double, double> median;
  };
  bool console_repetitions_;
  std::map<std::string, Collected> collected_;
};

// Dispatch is what dispatch chose on this CPU: algorithm ("SM2", "SM3", "SM4") -> back
// end name, as smcrypt::ActiveKernels() gives it (SM3's is "single+multi", e.g.
// "avx_bmi2+mb16_avx512", or the single name without a multi-buffer back end).
using Dispatch = std::map<std::string, std::string>;

// DispatchedImpl is the smcrypt implementation name ("smcrypt.avx_bmi2") whose case
// measures what a caller of `alg`/`op` gets through dispatch: SM3 single-stream cases
// (hash, HMAC-SM3 mac) the single part of SM3's name, SM3 batches and the SM3-KDF the
// multi-buffer part, SM4 modes the SM4 back end, SM2 and the SM hybrid suite the SM2 back
// end. "" for cases without such a back end (SM2 *_batch cases, peers' algorithms).
std::string DispatchedImpl(const Dispatch& dispatch, const std::string& alg,
                           const std::string& op);

// HeadlineCase is one row of the headline: an smcrypt case and its international
// counterpart, measured with OpenSSL at the same size.
struct HeadlineCase {
  const char* alg;
  const char* op;
  size_t bytes;
  const char* counterpart;
  const char* counterpart_op;
};
const std::vector<HeadlineCase>& HeadlineCases();

// HeadlineBackEndFilter is a --benchmark_filter regex that selects every smcrypt back end
// of the headline cases and nothing else (the back-end comparison, e.g. for
// bench/check_dispatch.py).
std::string HeadlineBackEndFilter();

// HeadlineDispatchContext lists "alg/op/bytes=smcrypt.<back end>" for every headline case
// with a dispatched back end, comma-separated: the JSON context's
// smcrypt_headline_dispatched, so that tools need not repeat DispatchedImpl's rules.
std::string HeadlineDispatchContext(const Dispatch& dispatch);

// PrintSummary writes one table per family (hash, block modes, AEAD, signatures,
// public-key encryption): for each SM algorithm and operation, MB/s (ops/s for
// public-key cases) of every implementation at every size with its coefficient of
// variation, then the ratio of each smcrypt back end to OpenSSL's same algorithm and to
// the international counterpart (OpenSSL), each ratio with its range over repetitions.
// Last, every back end against the dispatched one for the headline cases.
// `smcrypt_impls` lists the smcrypt implementation names to show.
void PrintSummary(const std::map<std::string, Result>& results,
                  const std::vector<std::string>& smcrypt_impls, const Dispatch& dispatch,
                  std::ostream& out);

// PrintPaperView writes the ratio tables of the SM-versus-international study (Hu et
// al., Netinfo Security 21(10), 2021, tables 2, 6, 8, 9 and the SM2 signature ratios)
// beside the same ratios computed from `results` ("smcrypt" = the dispatched back end).
void PrintPaperView(const std::map<std::string, Result>& results, const Dispatch& dispatch,
                    std::ostream& out);

// PrintHeadline writes one short table of the figures that matter most (HeadlineCases():
// SM3 at 64 B, 8 KiB and 1 MiB, the SM3 batch, HMAC-SM3, SM4 modes at 16 KiB and GCM at
// 1 KiB, SM2 sign/verify/encrypt/decrypt, HPKE with the SM suite): the back end dispatch
// chose on this CPU (what a caller gets), the ratio to OpenSSL's same algorithm and to
// the international counterpart, with spreads. For the headline of docs/performance.md.
void PrintHeadline(const std::map<std::string, Result>& results, const Dispatch& dispatch,
                   std::ostream& out);

}  // namespace smcrypt::bench

#endif  // SMCRYPT_BENCH_SMCRYPT_BENCH_SUMMARY_H_
