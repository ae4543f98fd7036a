// admission.h — the service's in-flight accounting: --max_inflight, --max_inflight_bytes
// and its shares per stream and per connection (--max_stream_inflight_bytes,
// --max_connection_inflight_bytes; crypto_service_impl.h, "Memory").
//
// Admission admits calls and holds the bytes charged to the calls in flight, each call's
// in its CallCharge, per client connection in a ConnectionLedger; the functions below say
// what a unary call is charged, from its MethodSpec row (method_spec.h). Thread-safe:
// every member of Admission and ConnectionLedger may be called from any thread.
#ifndef SMCRYPT_SERVER_SERVICE_ADMISSION_H_
#define SMCRYPT_SERVER_SERVICE_ADMISSION_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "google/protobuf/message.h"
#include "server/engine/crypto_engine.h"
#include "server/service/method_spec.h"

namespace smcrypt::server {

// kCallAdmissionBytes is charged to every unary call on top of its messages: its
// reactor, queued task and parsed-request overhead (gRPC's own per-call state is under
// --grpc_memory_quota).
inline constexpr uint64_t kCallAdmissionBytes = 2048;

// Batch requests hold many small items whose parsed form, results and per-item state
// take far more memory than their serialized bytes (65,536 empty HybridEncryptBatch items:
// 0.7 MB on the wire, ~75 MB in the server). Admission charges each batch item this much
// on top of the request's size, so --max_inflight_bytes bounds batches too.
inline constexpr uint64_t kBatchItemAdmissionBytes = 1024;

// OverloadLimit names the limit that refused a call or a stream message (the `limit`
// metadata of OVERLOADED and the label of smcrypt_overload_refusals_total).
enum class OverloadLimit {
  kInflight,         // --max_inflight
  kInflightBytes,    // --max_inflight_bytes
  kStreamBytes,      // --max_stream_inflight_bytes
  kConnectionBytes,  // --max_connection_inflight_bytes
};
inline constexpr int kNumOverloadLimits = 4;
// OverloadLimitName: the flag's name without dashes ("max_inflight", ...).
absl::string_view OverloadLimitName(OverloadLimit limit);

// AdmissionObserver is told of every refusal and of every connection that starts or stops
// holding calls (the connection limit on). Implementations must be thread-safe and cheap.
class AdmissionObserver {
 public:
  virtual ~AdmissionObserver() = default;
  virtual void OnOverload(OverloadLimit limit) = 0;
  // OnConnections: `delta` (+1 or -1) connections with calls in flight.
  virtual void OnConnections(int delta) = 0;
};

// AdmissionLimits are the limits Admission enforces; a byte limit of 0 is no limit.
struct AdmissionLimits {
  int64_t max_inflight = 0;
  uint64_t max_inflight_bytes = 0;
  // Bytes one stream may hold (its messages, queued responses and pending input).
  uint64_t max_stream_inflight_bytes = 0;
  // Bytes the calls of one client connection (unary and streams) may hold together.
  uint64_t max_connection_inflight_bytes = 0;
};

// FairShares are the defaults of --max_stream_inflight_bytes and
// --max_connection_inflight_bytes for a --max_inflight_bytes `budget` (0: none, and both
// shares 0) and --max_message_bytes `max_message`:
//   stream     = min(budget, max(budget / 8, 5 × max_message))
//   connection = min(budget, max(budget / 4, stream))
// 5 × max_message is what a stream of maximal messages holds at most while it keeps
// reading its responses: the input its cipher keeps (a pending GCM segment, charged twice)
// and the next message while it is handled (charged three times).
struct FairShares {
  uint64_t stream = 0;
  uint64_t connection = 0;
};
FairShares DefaultFairShares(uint64_t budget, uint64_t max_message);

// ConnectionLedger holds the bytes charged to each client connection that has calls in
// flight, keyed by the peer address gRPC reports (ServerContext::peer(): unique per TCP
// connection). An entry lives from the first call of its connection to the end of its last
// one, so the ledger holds only connections with calls in flight. Sharded by the peer's
// hash: a call locks one of kShards mutexes when it starts and when it ends, never a
// global one. Thread-safe.
class ConnectionLedger {
 public:
  // Entry is one connection; valid from Join to the matching Leave.
  struct Entry {
    std::atomic<uint64_t> bytes{0};
    int64_t calls = 0;  // guarded by its shard's mutex
    std::string peer;
    size_t hash = 0;  // of `peer`: picks the shard and finds the entry in it
  };

  explicit ConnectionLedger(AdmissionObserver* observer = nullptr) : observer_(observer) {}
  ConnectionLedger(const ConnectionLedger&) = delete;
  ConnectionLedger& operator=(const ConnectionLedger&) = delete;

  // Join counts one more call of connection `peer` (its entry made if it has none).
  Entry* Join(std::string peer);
  // Leave counts one call of the entry's connection less; the last call's Leave removes
  // the entry (its bytes must have been released).
  void Leave(Entry* entry);
  // connections: entries in the ledger (connections with calls in flight).
  int64_t connections() const { return connections_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kShards = 64;
  struct alignas(64) Shard {
    absl::Mutex mu;
    // Keyed by a view of the entry's own peer string (the entry is on the heap).
    absl::flat_hash_map<absl::string_view, std::unique_ptr<Entry>> entries ABSL_GUARDED_BY(mu);
  };
  static size_t HashOf(absl::string_view peer) { return absl::Hash<absl::string_view>{}(peer); }
  // The shard takes high bits: the table inside it uses the low ones.
  Shard& ShardOf(size_t hash) { return shards_[(hash >> (4 * sizeof(size_t))) % kShards]; }

  AdmissionObserver* observer_;
  std::array<Shard, kShards> shards_;
  std::atomic<int64_t> connections_{0};
};

class Admission;

// CallCharge is what one admitted call holds: bytes charged against --max_inflight_bytes
// and, when those limits are on, against its connection (--max_connection_inflight_bytes)
// and, for a stream, against --max_stream_inflight_bytes. It belongs to the call's
// reactor; its methods are called from the reactor's callbacks, which gRPC never runs at
// once for one call (not thread-safe otherwise). Close releases everything; it runs on
// every path a call ends by (the reactor's OnDone), and the destructor closes too.
class CallCharge {
 public:
  CallCharge() = default;
  CallCharge(const CallCharge&) = delete;
  CallCharge& operator=(const CallCharge&) = delete;
  ~CallCharge() { Close(); }

  // TryAdd charges `bytes` more unless that passes one of the limits (RESOURCE_EXHAUSTED,
  // OVERLOADED, `limit` naming the flag; nothing charged). A call that holds nothing
  // always fits its stream limit, a connection whose calls hold nothing always fits its
  // connection limit, and a server holding nothing always fits --max_inflight_bytes.
  absl::Status TryAdd(uint64_t bytes);
  // Set changes the charge to `bytes` whatever the limits (work already done: its result
  // exists): the difference is charged or released.
  void Set(uint64_t bytes);
  // Close releases the charge and leaves the connection; later calls do nothing.
  void Close();
  uint64_t held() const { return held_; }

 private:
  friend class Admission;
  const Admission* admission_ = nullptr;
  ConnectionLedger::Entry* connection_ = nullptr;
  bool stream_ = false;
  uint64_t held_ = 0;
};

class Admission {
 public:
  // `inflight` is the number of RPCs in flight, counted by the metrics interceptor (the
  // call being admitted included); it must outlive the Admission, as must `observer`
  // (may be null).
  Admission(const std::atomic<int64_t>* inflight, AdmissionLimits limits,
            AdmissionObserver* observer = nullptr)
      : inflight_(inflight), limits_(limits), observer_(observer), connections_(observer) {}

  // Admit admits a call into `charge` (a fresh CallCharge: `stream` says whether the
  // stream limit applies) and charges it `bytes`: OK, or RESOURCE_EXHAUSTED above
  // --max_inflight or when `bytes` do not fit (CallCharge::TryAdd), or DEADLINE_EXCEEDED
  // when `deadline` has already passed. `peer` (the connection's address) is called only
  // when the connection limit is on. Whatever the result, `charge` is closed when the
  // call ends.
  absl::Status Admit(std::chrono::system_clock::time_point deadline,
                     absl::FunctionRef<std::string()> peer, bool stream, uint64_t bytes,
                     CallCharge* charge) const;
  // Admit without a CallCharge: --max_inflight and the deadline only.
  absl::Status Admit(std::chrono::system_clock::time_point deadline, uint64_t bytes) const;
  // TryCharge charges `bytes` unless that passes --max_inflight_bytes (RESOURCE_EXHAUSTED
  // naming the flag). Nothing else in flight: it always fits.
  absl::Status TryCharge(uint64_t bytes) const;
  // Charge charges `bytes` whatever the budget (work already done: its result exists).
  void Charge(uint64_t bytes) const;
  void Release(uint64_t bytes) const;

  const AdmissionLimits& limits() const { return limits_; }
  // inflight_bytes: bytes charged now; peak_inflight_bytes: the most since start.
  uint64_t inflight_bytes() const { return inflight_bytes_.load(std::memory_order_relaxed); }
  uint64_t peak_inflight_bytes() const {
    return peak_inflight_bytes_.load(std::memory_order_relaxed);
  }
  // TakePeakSince returns the most bytes charged at once since its previous call (since
  // start for the first) and restarts that count from the charge now.
  uint64_t TakePeakSince() const {
    return window_peak_bytes_.exchange(inflight_bytes(), std::memory_order_relaxed);
  }
  // connections: client connections with calls in flight (0 with the connection limit
  // off: none are tracked).
  int64_t connections() const { return connections_.connections(); }
  // refusals: calls and stream messages refused by `limit` since start.
  uint64_t refusals(OverloadLimit limit) const {
    return refusals_[static_cast<int>(limit)].load(std::memory_order_relaxed);
  }

 private:
  friend class CallCharge;
  // Refuse counts a refusal by `limit`, tells the observer, logs refusals by the stream
  // and connection limits (one line per limit per 10 s at most, with the count since the
  // previous one and the last one's `peer` and message) and returns the OVERLOADED status
  // with `message`.
  absl::Status Refuse(OverloadLimit limit, std::string message,
                      absl::string_view peer = {}) const;
  void NotePeak(uint64_t now) const;

  const std::atomic<int64_t>* inflight_;
  const AdmissionLimits limits_;
  AdmissionObserver* observer_;
  mutable ConnectionLedger connections_;
  mutable std::atomic<uint64_t> inflight_bytes_{0};
  mutable std::atomic<uint64_t> peak_inflight_bytes_{0};
  mutable std::atomic<uint64_t> window_peak_bytes_{0};
  mutable std::array<std::atomic<uint64_t>, kNumOverloadLimits> refusals_{};
  // Log rate limit: per limit, when the next line may be written and the refusals not
  // logged yet.
  mutable std::array<std::atomic<int64_t>, kNumOverloadLimits> next_log_ns_{};
  mutable std::array<std::atomic<uint64_t>, kNumOverloadLimits> unlogged_{};
};

// ResponseBytes bounds a response's serialized size before the work, as spec.response
// says: about the request's size (ciphertexts, plaintexts, per-item results; tags,
// nonces and framing are under kCallAdmissionBytes), or what the request asks for.
template <typename Req>
uint64_t ResponseBytes(const MethodSpec& spec, const Req& r) {
  switch (spec.response) {
    case ResponseEstimate::kRandomLength:
      if constexpr (requires { r.length(); }) {
        return std::min<uint64_t>(r.length(), CryptoEngine::kMaxRandomBytes) + 16;
      }
      break;
    case ResponseEstimate::kKeyPair:
    case ResponseEstimate::kServerInfo:
      return 16 << 10;
    case ResponseEstimate::kRequestPlus4KiB:
      return r.ByteSizeLong() + 4096;
    case ResponseEstimate::kRequestSize:
    case ResponseEstimate::kStream:
      break;
  }
  return r.ByteSizeLong();
}

// AdmissionBytes is what a unary call reserves (crypto_service_impl.h, "Memory").
template <typename Req>
uint64_t AdmissionBytes(const MethodSpec& spec, const Req& r) {
  uint64_t items = 0;
  if constexpr (requires { r.items_size(); }) {
    if (spec.charge_items) items = r.items_size();
  }
  return r.ByteSizeLong() + items * kBatchItemAdmissionBytes + 2 * ResponseBytes(spec, r) +
         kCallAdmissionBytes;
}

// HeldBytes is a unary call's charge once its work is done: the response message and its
// serialized copy, held until gRPC is done with the call.
inline uint64_t HeldBytes(const google::protobuf::Message& response) {
  return 2 * response.ByteSizeLong() + kCallAdmissionBytes;
}

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SERVICE_ADMISSION_H_
