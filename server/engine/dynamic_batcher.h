// dynamic_batcher.h — runs concurrent unary requests of one operation together.
//
// Unary Sign and Verify (SM2), PublicKeyEncrypt (SM2), HybridEncrypt (HPKE-SM2-SM3-SM4GCM)
// and Hash (SM3, at most kMaxBatchedHashSize bytes) go through a BatchQueue of their
// operation. A request that finds no run in progress (or fewer than `max_runners`) starts
// one at once; requests that arrive while runs are queued or running wait in the queue,
// and the next run takes them together (up to `max_batch`, split evenly over the runs in
// progress) into the engine's batch call, where items that share a primitive (same
// algorithm, key and options) go through its multi-buffer path (IFMA lanes, SM3 lanes).
// So a lone request is never delayed, and under load the batch grows with the queue, as
// a dynamic batcher with no queue delay (Triton's max_queue_delay 0). With `max_delay`
// > 0 a run on an executor whose batch is not full waits up to that long from its oldest
// request for more (throughput first; it holds its worker while it waits); an inline run
// never waits.
//
// A run executes on the `submit` executor (the worker pool, or the calling thread).
// After each batch a run with requests left hands itself back to the executor, so work
// of other operations queued there is not starved. Every request added is taken by some
// run: a queue with requests always has a run queued or in progress.
//
// Thread safety: Add may be called from any thread; `run` is called concurrently from
// up to `max_runners` threads, each with its own batch.
#ifndef SMCRYPT_SERVER_DYNAMIC_BATCHER_H_
#define SMCRYPT_SERVER_DYNAMIC_BATCHER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace smcrypt::server {

// BatchedOperation: the operations with a BatchQueue (metrics label `operation`).
enum class BatchedOperation { kHash, kSign, kVerify, kPublicKeyEncrypt, kHybridEncrypt };
inline constexpr int kNumBatchedOperations = 5;
// BatchedMethod: the RPC method ("Sign"); BatchedAlgorithm: the algorithm batched
// ("SM2", docs/design.md names).
const char* BatchedMethod(BatchedOperation op);
const char* BatchedAlgorithm(BatchedOperation op);

// BatchSettings are smcryptd's --batching, --batch_max_size and --batch_max_delay.
struct BatchSettings {
  bool enabled = true;
  size_t max_batch = 64;                        // requests per engine call, 1 to 4096
  absl::Duration max_delay = absl::ZeroDuration();  // 0: never wait for company
};

// BatchObserver sees every batch: its size and how long each request waited in the
// queue (from Add until its run took it). Called from the run's thread.
class BatchObserver {
 public:
  virtual ~BatchObserver() = default;
  virtual void OnBatch(BatchedOperation op, size_t size, absl::Span<const double> queued_seconds) = 0;
};

template <typename T>
class BatchQueue {
 public:
  using Submit = std::function<void(std::function<void()>)>;
  using Run = std::function<void(absl::Span<T> batch)>;

  // `submit` schedules a run on an executor; null runs it on the thread that calls Add
  // (which then keeps running batches until the queue is empty). `run` handles one batch (every request
  // of it, each answered exactly once). `observer` may be null.
  BatchQueue(BatchedOperation op, BatchSettings settings, size_t max_runners, Submit submit,
             Run run, BatchObserver* observer)
      : op_(op),
        settings_(settings),
        max_runners_(std::max<size_t>(1, max_runners)),
        submit_(std::move(submit)),
        run_(std::move(run)),
        observer_(observer) {
    settings_.max_batch = std::clamp<size_t>(settings_.max_batch, 1, 4096);
  }
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  void Add(T item) {
    bool start = false;
    {
      absl::MutexLock lock(&mu_);
      pending_.push_back(Pending{std::move(item), absl::Now()});
      // A run per worker thread at most: while the runs keep up with the arrivals each
      // takes a call or two, once they fall behind the queue grows and so do the batches
      // (measured on 2 cores: fewer runs, for bigger batches, lost more to idle workers
      // than the batches gained).
      if (runners_ < max_runners_) {
        ++runners_;
        start = true;
      }
    }
    if (!start) return;
    if (submit_ == nullptr) {
      while (DrainOnce()) {
      }
    } else {
      submit_([this] { Drain(); });
    }
  }

  // WaitIdle returns once no run is queued or running (every request added has been
  // handed to `run`). The destructor of a queue's owner calls it while the executor still
  // runs, so that no run touches the queue after it is gone.
  void WaitIdle() const {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return runners_ == 0; };
    mu_.Await(absl::Condition(&idle));
  }

  // runs and items count the batches run and the requests they held.
  uint64_t runs() const {
    absl::MutexLock lock(&mu_);
    return runs_;
  }
  uint64_t items() const {
    absl::MutexLock lock(&mu_);
    return items_;
  }

 private:
  struct Pending {
    T item;
    absl::Time added;
  };

  // Drain runs one batch, then hands itself back to the executor while requests remain.
  void Drain() {
    if (DrainOnce()) submit_([this] { Drain(); });
  }

  // DrainOnce runs one batch; true when requests remain for this run.
  bool DrainOnce() {
    std::vector<T> batch;
    std::vector<double> queued;
    {
      absl::MutexLock lock(&mu_);
      // Only on an executor: an inline run holds the caller's thread (a gRPC transport
      // thread), which must not wait for calls it would itself have to read.
      if (submit_ != nullptr && settings_.max_delay > absl::ZeroDuration() && !pending_.empty() &&
          pending_.size() < settings_.max_batch) {
        auto full = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return pending_.size() >= settings_.max_batch;
        };
        mu_.AwaitWithDeadline(absl::Condition(&full), pending_.front().added + settings_.max_delay);
      }
      if (pending_.empty()) {
        --runners_;
        return false;
      }
      // An even share of the queue for each run in progress, so that all of them work.
      const size_t share = (pending_.size() + runners_ - 1) / runners_;
      const size_t take = std::min(settings_.max_batch, share);
      const absl::Time now = absl::Now();
      batch.reserve(take);
      queued.reserve(take);
      for (size_t i = 0; i < take; ++i) {
        queued.push_back(absl::ToDoubleSeconds(now - pending_.front().added));
        batch.push_back(std::move(pending_.front().item));
        pending_.pop_front();
      }
      ++runs_;
      items_ += take;
    }
    if (observer_ != nullptr) observer_->OnBatch(op_, batch.size(), queued);
    run_(absl::MakeSpan(batch));
    absl::MutexLock lock(&mu_);
    if (!pending_.empty()) return true;
    --runners_;
    return false;
  }

  const BatchedOperation op_;
  BatchSettings settings_;
  const size_t max_runners_;
  const Submit submit_;
  const Run run_;
  BatchObserver* const observer_;
  mutable absl::Mutex mu_;
  std::deque<Pending> pending_ ABSL_GUARDED_BY(mu_);
  size_t runners_ ABSL_GUARDED_BY(mu_) = 0;  // runs queued on the executor or running
  uint64_t runs_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t items_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_DYNAMIC_BATCHER_H_
