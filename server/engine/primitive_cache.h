// primitive_cache.h — a bounded, thread-safe LRU of parsed public-key primitives.
//
// Parsing a public key per request costs more than many operations on it: an SM2 point
// is decompressed and validated, and its per-key comb table (verify, encrypt) and the
// signer's Z (GB/T 32918.2 §5.5) are computed again for every call. CryptoEngine keeps
// the primitives built from inline PUBLIC keys here, keyed by the algorithm, the options
// that shape the primitive and the exact key bytes, so a client that sends the same key
// with every request pays for the parse once.
//
// Only public key material goes in. Inline private keys are never cached: they are
// secrets the client chose to send with one request, and keeping a parsed copy would let
// them outlive that request (in memory, in core dumps) for as long as the entry stays.
//
// Thread safety: every method may be called concurrently. Values are shared_ptr<const T>,
// so an entry evicted while a request still uses it stays alive until that request ends;
// T's const methods must be thread-safe (the smcrypt primitive interfaces state so).
#ifndef SMCRYPT_SERVER_PRIMITIVE_CACHE_H_
#define SMCRYPT_SERVER_PRIMITIVE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace smcrypt::server {

// CacheStats is a snapshot of a cache's counters.
struct CacheStats {
  size_t size = 0;
  size_t capacity = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
};

// LruCache maps byte-string keys to shared immutable values, holding at most `capacity`
// entries; inserting into a full cache evicts the least recently used entry. A capacity
// of 0 disables it: Find always misses and Insert keeps nothing.
template <typename T>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}
  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  // Find returns the value stored under `key` and marks it most recently used, or null.
  std::shared_ptr<const T> Find(absl::string_view key) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Insert stores `value` under `key` (replacing an entry with the same key), evicting
  // the least recently used entries beyond the capacity.
  void Insert(absl::string_view key, std::shared_ptr<const T> value) {
    if (capacity_ == 0) return;
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.emplace_front(std::string(key), std::move(value));
    // The map's key views the string held by the list node, which never moves.
    index_.emplace(absl::string_view(order_.front().first), order_.begin());
    while (order_.size() > capacity_) {
      index_.erase(absl::string_view(order_.back().first));
      order_.pop_back();
    }
  }

  CacheStats stats() const {
    absl::MutexLock lock(&mu_);
    return CacheStats{order_.size(), capacity_, hits_, misses_};
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<const T>>;

  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Entry> order_ ABSL_GUARDED_BY(mu_);  // most recently used first
  absl::flat_hash_map<absl::string_view, typename std::list<Entry>::iterator> index_
      ABSL_GUARDED_BY(mu_);
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_PRIMITIVE_CACHE_H_
