// hash_coalescer.h — gathers concurrent small SM3 hashes into one multi-buffer call.
//
// Sm3Batch (smcrypt/sm3.h) hashes up to 16 messages at once in the mb16_avx512 / mb8_avx2
// lanes for about the cost of one. A unary Hash(SM3) of a short message pays one lane's
// work; with --coalesce_hash_window, concurrent requests wait up to that window (or until
// `max_batch` messages are pending) and are hashed together. The digests are those of
// Sm3Digest. The wait adds up to one window of latency to a lone request, so this is off
// unless asked for.
//
// Thread safety: Add may be called from any thread. `done` runs on the thread that
// completes the batch (the coalescer's own thread, or the caller of Add that filled it).
#ifndef SMCRYPT_SERVER_HASH_COALESCER_H_
#define SMCRYPT_SERVER_HASH_COALESCER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace smcrypt::server {

class HashCoalescer {
 public:
  using Done = std::function<void(std::string digest)>;

  // `window` > 0: the longest a message waits for company; `max_batch` (1 to 64): the
  // batch size that runs at once.
  HashCoalescer(absl::Duration window, size_t max_batch);
  HashCoalescer(const HashCoalescer&) = delete;
  HashCoalescer& operator=(const HashCoalescer&) = delete;
  // The destructor hashes what is pending, then joins the thread.
  ~HashCoalescer();

  // Add queues `data` (which must stay valid until `done` runs) and calls `done` with
  // its 32-byte SM3 digest.
  void Add(absl::string_view data, Done done);

  // batches and messages count the Sm3Batch calls made and the messages they hashed.
  uint64_t batches() const;
  uint64_t messages() const;

 private:
  struct Pending {
    absl::string_view data;
    Done done;
  };

  void Loop();
  void Run(std::vector<Pending> batch);

  const absl::Duration window_;
  const size_t max_batch_;
  mutable absl::Mutex mu_;
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  absl::Time first_at_ ABSL_GUARDED_BY(mu_);  // when the oldest pending message came
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // bumped whenever pending_ is taken
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t batches_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t messages_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_HASH_COALESCER_H_
