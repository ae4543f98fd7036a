// memory_trimmer.h — returns the heap that a burst of calls freed to the OS, and
// publishes the --max_inflight_bytes charge to /metrics.
//
// glibc keeps freed blocks in its arenas for reuse; after a burst that peaked at many
// MiB of in-flight messages, that memory stays resident. A MemoryTrimmer samples the
// charge every `period`; once it has fallen by `trim_after_bytes` or more from its
// highest value since the last trim, it calls malloc_trim(0), which hands the free
// pages of every arena back. It also sets the gauges smcrypt_inflight_bytes (sampled)
// and smcrypt_inflight_bytes_peak, and counts smcrypt_malloc_trims_total.
#ifndef SMCRYPT_SERVER_MEMORY_TRIMMER_H_
#define SMCRYPT_SERVER_MEMORY_TRIMMER_H_

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/daemon/metrics.h"

namespace smcrypt::server {

class MemoryTrimmer {
 public:
  // `charged` returns the bytes charged now; `peak_since` the highest charge since its
  // previous call (and restarts from the current charge); `peak` the highest since start.
  // trim_after_bytes 0: never trims (the gauges are still set). `metrics` may be null
  // and must outlive the trimmer.
  MemoryTrimmer(std::function<uint64_t()> charged, std::function<uint64_t()> peak_since,
                std::function<uint64_t()> peak, uint64_t trim_after_bytes, Metrics* metrics,
                absl::Duration period = absl::Milliseconds(250));
  // Stops the thread.
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  // Tick samples once and trims if due; the thread calls it every `period`. Returns
  // whether it trimmed.
  bool Tick();

 private:
  void Loop();

  std::function<uint64_t()> charged_;
  std::function<uint64_t()> peak_since_;
  std::function<uint64_t()> peak_;
  const uint64_t trim_after_bytes_;
  Metrics* metrics_;
  const absl::Duration period_;
  // high_: the highest charge seen since the last trim (Tick runs on one thread).
  uint64_t high_ = 0;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_MEMORY_TRIMMER_H_
