// stream_reaper.h — cancels streaming RPCs that make no progress (--stream_idle_timeout).
//
// gRPC's callback API holds no thread for a stream that waits: a client that opens a
// stream and never sends, or never reads its responses, costs only the reactor, at most
// one message and one --max_inflight slot. The reaper takes back the slot: each stream
// registers an Entry and touches it whenever a read or a write completes; a thread scans
// the entries (every idle/4, at most every second) and cancels, with TryCancel, every
// stream idle for longer than the timeout. The client sees CANCELLED; the reactor gets
// its pending read/write back with ok=false and finishes as on any cancellation.
//
// A slow sender is idle too: a read completes only when a whole message has arrived.
// Thread-safe: Register/Unregister/Touch from any thread. Unregister before the
// context dies (in the reactor's OnDone).
#ifndef SMCRYPT_SERVER_STREAM_REAPER_H_
#define SMCRYPT_SERVER_STREAM_REAPER_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace smcrypt::server {

class StreamReaper {
 public:
  // Entry is one stream: embed it in the reactor.
  class Entry {
   public:
    explicit Entry(grpc::CallbackServerContext* ctx) : ctx_(ctx) { Touch(); }
    // Touch records progress (a completed read or write).
    void Touch() {
      last_ns_.store(absl::GetCurrentTimeNanos(), std::memory_order_relaxed);
    }

   private:
    friend class StreamReaper;
    grpc::CallbackServerContext* ctx_;
    std::atomic<int64_t> last_ns_{0};
    bool cancelled_ = false;  // guarded by the reaper's mutex
  };

  // `idle` > 0 starts the scanning thread; zero makes Register a no-op.
  explicit StreamReaper(absl::Duration idle);
  StreamReaper(const StreamReaper&) = delete;
  StreamReaper& operator=(const StreamReaper&) = delete;
  ~StreamReaper();

  void Register(Entry* entry);
  void Unregister(Entry* entry);
  // cancelled_total counts the streams the reaper has cancelled.
  uint64_t cancelled_total() const { return cancelled_total_.load(); }
  absl::Duration idle() const { return idle_; }

 private:
  void Loop();

  const absl::Duration idle_;
  absl::Mutex mu_;
  absl::flat_hash_set<Entry*> entries_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  std::atomic<uint64_t> cancelled_total_{0};
  std::thread thread_;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_STREAM_REAPER_H_
