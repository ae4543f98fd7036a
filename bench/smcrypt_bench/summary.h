// summary.h — the per-family tables smcrypt-bench prints after Google Benchmark's own
// output, computed from the same run's results.
#ifndef SMCRYPT_BENCH_SMCRYPT_BENCH_SUMMARY_H_
#define SMCRYPT_BENCH_SMCRYPT_BENCH_SUMMARY_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

namespace smcrypt::bench {

// Result is one case's figure: the median over repetitions when there were several.
struct Result {
  double bytes_per_second = 0;  // 0 when the case counts operations only
  double items_per_second = 0;  // operations per second
};

// SummaryReporter is Google Benchmark's console reporter that also keeps each case's
// figures: the "median" aggregate when repetitions ran, else the single run. Failed
// cases are left out.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override;
  const std::map<std::string, Result>& results() const { return results_; }

 private:
  std::map<std::string, Result> results_;
  std::map<std::string, bool> from_median_;
};

// PrintSummary writes one table per family (hash, block modes, AEAD, signatures,
// public-key encryption): for each SM algorithm and operation, MB/s (ops/s for
// public-key cases) of every implementation at every size, then the ratio of each smcrypt
// back end to OpenSSL's same algorithm and to the international counterpart (OpenSSL).
// `smcrypt_impls` lists the smcrypt implementation names to show.
void PrintSummary(const std::map<std::string, Result>& results,
                  const std::vector<std::string>& smcrypt_impls, std::ostream& out);

// PrintPaperView writes the ratio tables of the SM-versus-international study (Hu et
// al., Netinfo Security 21(10), 2021, tables 2, 6, 8, 9 and the SM2 signature ratios)
// beside the same ratios computed from `results`.
void PrintPaperView(const std::map<std::string, Result>& results,
                    const std::vector<std::string>& smcrypt_impls, std::ostream& out);

// PrintHeadline writes one short table of the figures that matter most (SM3 at 64 B,
// 8 KiB and 1 MiB, the SM3 batch, HMAC-SM3, SM4 modes at 16 KiB and GCM at 1 KiB, SM2
// sign/verify/encrypt/decrypt, HPKE with the SM suite): the fastest smcrypt back end, the
// ratio to OpenSSL's same algorithm and to the international counterpart. For the README.
void PrintHeadline(const std::map<std::string, Result>& results,
                   const std::vector<std::string>& smcrypt_impls, std::ostream& out);

}  // namespace smcrypt::bench

#endif  // SMCRYPT_BENCH_SMCRYPT_BENCH_SUMMARY_H_
