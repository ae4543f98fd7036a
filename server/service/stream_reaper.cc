#include "server/service/stream_reaper.h"

#include <pthread.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/engine/logging.h"

namespace smcrypt::server {

StreamReaper::StreamReaper(absl::Duration idle) : idle_(idle) {
  if (idle_ > absl::ZeroDuration()) thread_ = std::thread([this] { Loop(); });
}

StreamReaper::~StreamReaper() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void StreamReaper::Register(Entry* entry) {
  if (idle_ <= absl::ZeroDuration()) return;
  absl::MutexLock lock(&mu_);
  entries_.insert(entry);
}

void StreamReaper::Unregister(Entry* entry) {
  if (idle_ <= absl::ZeroDuration()) return;
  absl::MutexLock lock(&mu_);
  entries_.erase(entry);
}

void StreamReaper::Loop() {
  pthread_setname_np(pthread_self(), "smcrypt-reaper");
  const absl::Duration period =
      std::clamp(idle_ / 4, absl::Milliseconds(10), absl::Seconds(1));
  while (!stop_.WaitForNotificationWithTimeout(period)) {
    const int64_t cutoff = absl::GetCurrentTimeNanos() - absl::ToInt64Nanoseconds(idle_);
    uint64_t cancelled = 0;
    {
      absl::MutexLock lock(&mu_);
      for (Entry* e : entries_) {
        if (e->cancelled_ || e->last_ns_.load(std::memory_order_relaxed) > cutoff) continue;
        e->cancelled_ = true;
        // The entry is unregistered (under mu_) before its context dies, so the context
        // is alive here; TryCancel only schedules the cancellation.
        e->ctx_->TryCancel();
        ++cancelled;
      }
    }
    if (cancelled > 0) {
      cancelled_total_.fetch_add(cancelled);
      LogWarning(absl::StrCat("cancelled ", cancelled, " stream(s) idle for more than ",
                              FormatLogDuration(idle_), " (--stream_idle_timeout)"));
    }
  }
}

}  // namespace smcrypt::server
