#include "clients/smcrypt-load/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace smcrypt::load {
namespace {
constexpr uint64_t kHalf = Histogram::kSubBuckets / 2;
}  // namespace

size_t Histogram::NumBuckets() { return kSubBuckets + (64 - kSubBucketBits) * kHalf; }

size_t Histogram::BucketIndex(uint64_t value) {
  if (value < kSubBuckets) return static_cast<size_t>(value);
  const int msb = 63 - std::countl_zero(value);  // >= kSubBucketBits
  const int shift = msb - (kSubBucketBits - 1);   // >= 1
  const uint64_t mantissa = value >> shift;       // in [kHalf, kSubBuckets)
  return static_cast<size_t>(kSubBuckets + (shift - 1) * kHalf + (mantissa - kHalf));
}

uint64_t Histogram::BucketLowerBound(size_t index) {
  if (index < kSubBuckets) return index;
  const size_t shift = (index - kSubBuckets) / kHalf + 1;
  const uint64_t mantissa = (index - kSubBuckets) % kHalf + kHalf;
  return mantissa << shift;
}

uint64_t Histogram::BucketWidth(size_t index) {
  if (index < kSubBuckets) return 1;
  return uint64_t{1} << ((index - kSubBuckets) / kHalf + 1);
}

Histogram::Histogram() : counts_(NumBuckets(), 0) {}

void Histogram::Record(uint64_t value) {
  ++counts_[BucketIndex(value)];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += value;
}

void Histogram::Merge(const Histogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

double Histogram::Mean() const {
  return count_ == 0 ? 0 : static_cast<double>(sum_ / count_);
}

double Histogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) return 0;
  percentile = std::clamp(percentile, 0.0, 100.0);
  // The rank of the value: at least one value, at most all of them.
  uint64_t rank = static_cast<uint64_t>(std::ceil(percentile / 100.0 * count_));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const double mid = BucketWidth(i) == 1
                             ? static_cast<double>(BucketLowerBound(i))
                             : BucketLowerBound(i) + (BucketWidth(i) - 1) / 2.0;
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace smcrypt::load
