#include "server/hash_coalescer.h"

#include <algorithm>
#include <utility>

#include "smcrypt/sm3.h"

namespace smcrypt::server {

HashCoalescer::HashCoalescer(absl::Duration window, size_t max_batch)
    : window_(window), max_batch_(std::clamp<size_t>(max_batch, 1, 64)) {
  thread_ = std::thread([this] { Loop(); });
}

HashCoalescer::~HashCoalescer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void HashCoalescer::Add(absl::string_view data, Done done) {
  std::vector<Pending> full;
  {
    absl::MutexLock lock(&mu_);
    if (pending_.empty()) first_at_ = absl::Now();
    pending_.push_back(Pending{data, std::move(done)});
    if (pending_.size() < max_batch_) return;
    full.swap(pending_);
    ++generation_;
  }
  // The caller that fills the batch runs it: no hand-off to the coalescer thread.
  Run(std::move(full));
}

void HashCoalescer::Loop() {
  while (true) {
    std::vector<Pending> batch;
    {
      absl::MutexLock lock(&mu_);
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !pending_.empty();
      };
      mu_.Await(absl::Condition(&has_work));
      if (pending_.empty()) return;  // stopping, nothing left
      const uint64_t generation = generation_;
      auto taken_or_stopping = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || generation_ != generation;
      };
      // Wait out the window of the oldest message, unless a full batch was taken (then
      // start over with whatever came after it) or the coalescer is stopping.
      if (!mu_.AwaitWithDeadline(absl::Condition(&taken_or_stopping), first_at_ + window_) ||
          stopping_) {
        batch.swap(pending_);
        ++generation_;
      }
    }
    if (!batch.empty()) Run(std::move(batch));
  }
}

void HashCoalescer::Run(std::vector<Pending> batch) {
  std::vector<absl::string_view> messages;
  messages.reserve(batch.size());
  for (const Pending& p : batch) messages.push_back(p.data);
  std::string out(kSm3DigestSize * batch.size(), '\0');
  Sm3Batch(messages, reinterpret_cast<uint8_t*>(out.data()));
  {
    absl::MutexLock lock(&mu_);
    ++batches_;
    messages_ += batch.size();
  }
  for (size_t i = 0; i < batch.size(); ++i) {
    batch[i].done(out.substr(i * kSm3DigestSize, kSm3DigestSize));
  }
}

uint64_t HashCoalescer::batches() const {
  absl::MutexLock lock(&mu_);
  return batches_;
}

uint64_t HashCoalescer::messages() const {
  absl::MutexLock lock(&mu_);
  return messages_;
}

}  // namespace smcrypt::server
