// worker_pool.h — the fixed set of threads smcryptd runs unary crypto work on.
//
// gRPC 1.51's callback API runs unary handlers on its own few threads (on Linux, two
// "nexting" threads for up to four cores), the same threads that read and write every
// HTTP/2 connection. Crypto done inline there stalls the transport for all other calls
// while it runs, and the server cannot use more cores than gRPC has threads. The service
// instead admits a call on the gRPC thread, hands the work to a WorkerPool, and finishes
// the call's reactor from the worker; the gRPC threads go back to the connections.
//
// The queue is bounded: Submit waits while it is full. smcryptd sizes it above
// --max_inflight, so it never waits there: admission (--max_inflight, and
// --max_inflight_bytes for memory) refuses excess calls with RESOURCE_EXHAUSTED before
// they reach the pool, and a gRPC thread is never parked in Submit (a parked thread
// stalls every connection it serves, health checks included).
//
// Tasks run in submission order (FIFO). Thread safety: Submit may be called from any
// thread. The destructor runs every task already submitted, then joins the threads, so
// each admitted call is finished exactly once.
#ifndef SMCRYPT_SERVER_WORKER_POOL_H_
#define SMCRYPT_SERVER_WORKER_POOL_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace smcrypt::server {

class WorkerPool {
 public:
  // Starts `num_threads` threads (at least 1); at most `max_queued` tasks (at least 1)
  // wait for a thread.
  WorkerPool(size_t num_threads, size_t max_queued);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();

  // Submit queues `task`, waiting while `max_queued` tasks are queued; one of the
  // threads runs it.
  void Submit(std::function<void()> task);

  size_t num_threads() const { return threads_.size(); }
  // queued returns the number of tasks waiting for a thread (not those running).
  size_t queued() const;

 private:
  void Loop();

  const size_t max_queued_;
  mutable absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// DefaultWorkerThreads is the number of online CPUs (at least 1).
size_t DefaultWorkerThreads();
// kQueuedPerWorker: the queue bound per worker thread smcryptd uses.
inline constexpr size_t kQueuedPerWorker = 64;

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_WORKER_POOL_H_
