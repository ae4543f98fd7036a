#include "server/daemon/memory_trimmer.h"

#include <malloc.h>

#include <algorithm>
#include <utility>

namespace smcrypt::server {

MemoryTrimmer::MemoryTrimmer(std::function<uint64_t()> charged,
                             std::function<uint64_t()> peak_since, std::function<uint64_t()> peak,
                             uint64_t trim_after_bytes, Metrics* metrics, absl::Duration period)
    : charged_(std::move(charged)),
      peak_since_(std::move(peak_since)),
      peak_(std::move(peak)),
      trim_after_bytes_(trim_after_bytes),
      metrics_(metrics),
      period_(period),
      thread_([this] { Loop(); }) {}

MemoryTrimmer::~MemoryTrimmer() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

bool MemoryTrimmer::Tick() {
  const uint64_t now = charged_();
  high_ = std::max({high_, peak_since_(), now});
  bool trimmed = false;
  if (trim_after_bytes_ > 0 && high_ >= now + trim_after_bytes_) {
    malloc_trim(0);
    high_ = now;
    trimmed = true;
  }
  if (metrics_ != nullptr) {
    metrics_->SetInflightBytes(now, peak_());
    if (trimmed) metrics_->CountMallocTrim();
  }
  return trimmed;
}

void MemoryTrimmer::Loop() {
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stop_), period_)) {
    mu_.Unlock();
    Tick();
    mu_.Lock();
  }
}

}  // namespace smcrypt::server
