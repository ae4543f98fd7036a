// histogram.h — a log-linear latency histogram with a bounded relative error, in the
// manner of HdrHistogram (no HDR library is packaged for C++ on Debian 12).
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_HISTOGRAM_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_HISTOGRAM_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smcrypt::load {

// Histogram counts non-negative integer values (smcrypt-load records nanoseconds).
//
// Buckets: values below kSubBuckets (256) each have their own bucket (exact). Above, the
// range [2^k, 2^(k+1)) for k >= 8 is split into kSubBuckets / 2 = 128 equal buckets of
// width 2^(k-7). A bucket [lo, lo + w) therefore has w / lo <= 1/128, and every value
// reported — a percentile or the mean of a bucket — is the bucket's midpoint, within
// kMaxRelativeError = 1/256 (0.39%) of any value the bucket holds. The minimum, maximum
// and mean are exact. 7,424 buckets cover the whole uint64_t range (about 58 KiB).
//
// Not thread-safe: callers lock, or keep one per thread and Merge.
class Histogram {
 public:
  static constexpr int kSubBucketBits = 8;
  static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
  static constexpr double kMaxRelativeError = 1.0 / kSubBuckets;

  Histogram();

  // Record adds `value` once.
  void Record(uint64_t value);
  // Merge adds every count of `other`.
  void Merge(const Histogram& other);

  uint64_t count() const { return count_; }
  // min() and max() are exact; 0 when empty.
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  // Mean is exact (sum / count); 0 when empty.
  double Mean() const;
  // ValueAtPercentile returns the smallest recorded value v (as its bucket's midpoint,
  // clamped to [min, max]) such that at least `percentile`% of the values are <= v.
  // `percentile` in [0, 100]; 0 when empty.
  double ValueAtPercentile(double percentile) const;

  // BucketCount is the number of values recorded in bucket `index` (< NumBuckets()).
  uint64_t BucketCount(size_t index) const { return counts_[index]; }

  // BucketIndex and BucketLowerBound/BucketWidth expose the layout (the JSON report lists
  // the non-empty buckets by bound).
  static size_t BucketIndex(uint64_t value);
  static uint64_t BucketLowerBound(size_t index);
  static uint64_t BucketWidth(size_t index);
  static size_t NumBuckets();

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_HISTOGRAM_H_
