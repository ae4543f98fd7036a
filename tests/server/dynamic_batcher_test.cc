// BatchQueue (server/engine/dynamic_batcher.h): a lone request runs at once; requests that
// arrive while a run is in progress are taken together by the next run; the runs in
// progress share the queue; max_batch and max_delay hold; under many threads every
// request is run exactly once (also under ThreadSanitizer, in the TSan build).
#include "server/engine/dynamic_batcher.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/engine/worker_pool.h"

namespace smcrypt::server {
namespace {

struct Recorder : BatchObserver {
  void OnBatch(BatchedOperation op, size_t size, absl::Span<const double> queued) override {
    std::lock_guard<std::mutex> lock(mu);
    sizes.push_back(size);
    for (double q : queued) queued_seconds.push_back(q);
  }
  std::mutex mu;
  std::vector<size_t> sizes;
  std::vector<double> queued_seconds;
};

BatchSettings Settings(size_t max_batch = 64, absl::Duration delay = absl::ZeroDuration()) {
  BatchSettings s;
  s.max_batch = max_batch;
  s.max_delay = delay;
  return s;
}

TEST(DynamicBatcherTest, LoneRequestRunsAtOnceOnTheCallingThread) {
  Recorder rec;
  std::vector<std::vector<int>> runs;
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  BatchQueue<int> q(BatchedOperation::kSign, Settings(), 1, nullptr,
                    [&](absl::Span<int> b) {
                      ran_on = std::this_thread::get_id();
                      runs.emplace_back(b.begin(), b.end());
                    },
                    &rec);
  q.Add(7);
  ASSERT_EQ(runs.size(), 1u);  // run before Add returned
  EXPECT_EQ(runs[0], std::vector<int>{7});
  EXPECT_EQ(ran_on, caller);
  q.Add(8);
  EXPECT_EQ(runs.size(), 2u);
  EXPECT_EQ(rec.sizes, (std::vector<size_t>{1, 1}));
  EXPECT_EQ(q.runs(), 2u);
  EXPECT_EQ(q.items(), 2u);
}

TEST(DynamicBatcherTest, RequestsArrivingDuringARunAreTakenTogether) {
  WorkerPool pool(1, 1024);
  absl::Notification first_started, release;
  std::mutex mu;
  std::vector<std::vector<int>> runs;
  std::atomic<int> done{0};
  BatchQueue<int> q(
      BatchedOperation::kVerify, Settings(), 1,
      [&](std::function<void()> f) { pool.Submit(std::move(f)); },
      [&](absl::Span<int> b) {
        if (b[0] == 0) {
          first_started.Notify();
          release.WaitForNotification();
        }
        std::lock_guard<std::mutex> lock(mu);
        runs.emplace_back(b.begin(), b.end());
        done += static_cast<int>(b.size());
      },
      nullptr);
  q.Add(0);
  first_started.WaitForNotification();
  for (int i = 1; i <= 10; ++i) q.Add(i);  // queued behind the run in progress
  release.Notify();
  while (done.load() != 11) absl::SleepFor(absl::Milliseconds(1));
  q.WaitIdle();  // no run touches q after it is destroyed
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], std::vector<int>{0});
  EXPECT_EQ(runs[1], (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));  // in order
}

TEST(DynamicBatcherTest, MaxBatchSplitsTheQueue) {
  WorkerPool pool(1, 1024);
  absl::Notification first_started, release;
  std::mutex mu;
  std::vector<size_t> sizes;
  std::atomic<int> done{0};
  BatchQueue<int> q(
      BatchedOperation::kHash, Settings(4), 1,
      [&](std::function<void()> f) { pool.Submit(std::move(f)); },
      [&](absl::Span<int> b) {
        if (b[0] == 0) {
          first_started.Notify();
          release.WaitForNotification();
        }
        std::lock_guard<std::mutex> lock(mu);
        sizes.push_back(b.size());
        done += static_cast<int>(b.size());
      },
      nullptr);
  q.Add(0);
  first_started.WaitForNotification();
  for (int i = 1; i <= 10; ++i) q.Add(i);
  release.Notify();
  while (done.load() != 11) absl::SleepFor(absl::Milliseconds(1));
  q.WaitIdle();  // no run touches q after it is destroyed
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 4, 4, 2}));
}

// Two runs in progress: the queue is shared between them, so both threads work.
TEST(DynamicBatcherTest, RunsInProgressShareTheQueue) {
  WorkerPool pool(2, 1024);
  absl::Notification release;
  std::atomic<int> started{0}, done{0};
  std::mutex mu;
  std::vector<size_t> sizes;
  BatchQueue<int> q(
      BatchedOperation::kSign, Settings(), 2,
      [&](std::function<void()> f) { pool.Submit(std::move(f)); },
      [&](absl::Span<int> b) {
        if (b[0] < 2) {
          started.fetch_add(1);
          release.WaitForNotification();
        }
        std::lock_guard<std::mutex> lock(mu);
        sizes.push_back(b.size());
        done += static_cast<int>(b.size());
      },
      nullptr);
  q.Add(0);
  q.Add(1);  // a second run starts: fewer runs than max_runners
  while (started.load() != 2) absl::SleepFor(absl::Milliseconds(1));
  for (int i = 2; i < 22; ++i) q.Add(i);
  release.Notify();
  while (done.load() != 22) absl::SleepFor(absl::Milliseconds(1));
  q.WaitIdle();  // no run touches q after it is destroyed
  std::lock_guard<std::mutex> lock(mu);
  // Each run takes its share of what is queued when it looks (half of it while both are
  // in progress), so the 20 queued go in several batches, none over half the queue.
  size_t total = 0;
  for (size_t size : sizes) total += size;
  EXPECT_EQ(total, 22u);
  ASSERT_GE(sizes.size(), 4u);
  for (size_t i = 2; i < sizes.size(); ++i) EXPECT_LE(sizes[i], 10u) << i;
}

TEST(DynamicBatcherTest, MaxDelayWaitsForCompanyButNotPastTheDelay) {
  WorkerPool pool(1, 1024);
  std::mutex mu;
  std::vector<size_t> sizes;
  std::atomic<int> done{0};
  Recorder rec;
  BatchQueue<int> q(
      BatchedOperation::kHybridEncrypt, Settings(8, absl::Milliseconds(300)), 1,
      [&](std::function<void()> f) { pool.Submit(std::move(f)); },
      [&](absl::Span<int> b) {
        std::lock_guard<std::mutex> lock(mu);
        sizes.push_back(b.size());
        done += static_cast<int>(b.size());
      },
      &rec);
  const absl::Time start = absl::Now();
  for (int i = 0; i < 3; ++i) q.Add(i);  // fewer than max_batch: the run waits the delay
  while (done.load() != 3) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(290));
  const absl::Time second = absl::Now();
  for (int i = 0; i < 8; ++i) q.Add(i);  // a full batch runs without waiting the delay
  while (done.load() != 11) absl::SleepFor(absl::Milliseconds(1));
  q.WaitIdle();  // no run touches q after it is destroyed
  EXPECT_LT(absl::Now() - second, absl::Milliseconds(250));
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(sizes.size(), 2u);
  EXPECT_EQ(sizes[0], 3u);
  EXPECT_EQ(sizes[1], 8u);
  ASSERT_EQ(rec.queued_seconds.size(), 11u);
  EXPECT_GE(rec.queued_seconds[0], 0.29);
}

// Many threads add; every request is run exactly once, in batches no larger than
// max_batch, and the queue drains completely.
TEST(DynamicBatcherTest, ConcurrentAddsAreEachRunOnce) {
  WorkerPool pool(2, 1 << 16);
  constexpr int kThreads = 8, kPerThread = 2000;
  std::vector<std::atomic<int>> seen(kThreads * kPerThread);
  std::atomic<int> done{0}, oversized{0};
  BatchQueue<int> q(
      BatchedOperation::kPublicKeyEncrypt, Settings(16), 2,
      [&](std::function<void()> f) { pool.Submit(std::move(f)); },
      [&](absl::Span<int> b) {
        if (b.size() > 16) oversized.fetch_add(1);
        for (int v : b) seen[v].fetch_add(1);
        done += static_cast<int>(b.size());
      },
      nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) q.Add(t * kPerThread + i);
    });
  }
  for (std::thread& th : threads) th.join();
  while (done.load() != kThreads * kPerThread) absl::SleepFor(absl::Milliseconds(1));
  q.WaitIdle();  // no run touches q after it is destroyed
  EXPECT_EQ(oversized.load(), 0);
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << i;
  EXPECT_EQ(q.items(), static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_LE(q.runs(), q.items());
}

// Inline (no executor): a request added while another thread's run is in progress is
// taken by that run, so nothing is left in the queue.
TEST(DynamicBatcherTest, InlineRunTakesWhatOthersQueued) {
  absl::Notification first_started, release;
  std::atomic<int> done{0};
  std::vector<size_t> sizes;
  BatchQueue<int> q(BatchedOperation::kHash, Settings(), 1, nullptr,
                    [&](absl::Span<int> b) {
                      if (b[0] == 0) {
                        first_started.Notify();
                        release.WaitForNotification();
                      }
                      sizes.push_back(b.size());
                      done += static_cast<int>(b.size());
                    },
                    nullptr);
  std::thread runner([&] { q.Add(0); });
  first_started.WaitForNotification();
  for (int i = 1; i <= 5; ++i) q.Add(i);  // returns at once: the runner takes them
  EXPECT_EQ(done.load(), 0);
  release.Notify();
  runner.join();
  EXPECT_EQ(done.load(), 6);
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 5}));
}

TEST(DynamicBatcherTest, OperationNames) {
  EXPECT_STREQ(BatchedMethod(BatchedOperation::kHybridEncrypt), "HybridEncrypt");
  EXPECT_STREQ(BatchedAlgorithm(BatchedOperation::kHybridEncrypt), "HPKE-SM2-SM3-SM4GCM");
  EXPECT_STREQ(BatchedAlgorithm(BatchedOperation::kHash), "SM3");
  EXPECT_STREQ(BatchedMethod(BatchedOperation::kPublicKeyEncrypt), "PublicKeyEncrypt");
}

}  // namespace
}  // namespace smcrypt::server
