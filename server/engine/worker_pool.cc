#include "server/engine/worker_pool.h"

#include <pthread.h>

#include <utility>

namespace smcrypt::server {

WorkerPool::WorkerPool(size_t num_threads, size_t max_queued)
    : max_queued_(max_queued == 0 ? 1 : max_queued) {
  if (num_threads == 0) num_threads = 1;
  threads_.reserve(num_threads);
  for (size_t i = 0; i < num_threads; ++i) threads_.emplace_back([this] { Loop(); });
}

WorkerPool::~WorkerPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  auto has_room = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return tasks_.size() < max_queued_;
  };
  mu_.Await(absl::Condition(&has_room));
  tasks_.push_back(std::move(task));
}

size_t WorkerPool::queued() const {
  absl::MutexLock lock(&mu_);
  return tasks_.size();
}

void WorkerPool::Loop() {
  // The name shows in top -H and /proc/PID/task/*/comm (at most 15 characters).
  pthread_setname_np(pthread_self(), "smcrypt-worker");
  while (true) {
    std::function<void()> task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !tasks_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      // Stopping drains the queue first: every queued call still gets its answer.
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

size_t DefaultWorkerThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace smcrypt::server
