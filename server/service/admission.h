// admission.h — the service's in-flight accounting: --max_inflight and
// --max_inflight_bytes (crypto_service_impl.h, "Memory").
//
// Admission admits calls and holds the bytes charged to the calls in flight; the
// functions below say what a unary call is charged, from its MethodSpec row
// (method_spec.h). Thread-safe: every member may be called from any thread.
#ifndef SMCRYPT_SERVER_SERVICE_ADMISSION_H_
#define SMCRYPT_SERVER_SERVICE_ADMISSION_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/status/status.h"
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

class Admission {
 public:
  // `inflight` is the number of RPCs in flight, counted by the metrics interceptor (the
  // call being admitted included); it must outlive the Admission. `max_inflight_bytes`
  // 0: no byte limit.
  Admission(const std::atomic<int64_t>* inflight, int64_t max_inflight,
            uint64_t max_inflight_bytes)
      : inflight_(inflight),
        max_inflight_(max_inflight),
        max_inflight_bytes_(max_inflight_bytes) {}

  // Admit returns OK, or RESOURCE_EXHAUSTED above --max_inflight (or when `bytes` more
  // would pass --max_inflight_bytes), or DEADLINE_EXCEEDED when `deadline` has already
  // passed. On OK, `bytes` are charged until Release(bytes).
  absl::Status Admit(std::chrono::system_clock::time_point deadline, uint64_t bytes) const;
  // TryCharge charges `bytes` unless that passes --max_inflight_bytes (RESOURCE_EXHAUSTED
  // naming the flag). Nothing else in flight: it always fits.
  absl::Status TryCharge(uint64_t bytes) const;
  // Charge charges `bytes` whatever the budget (work already done: its result exists).
  void Charge(uint64_t bytes) const;
  void Release(uint64_t bytes) const;

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

 private:
  void NotePeak(uint64_t now) const;

  const std::atomic<int64_t>* inflight_;
  int64_t max_inflight_;
  uint64_t max_inflight_bytes_;
  mutable std::atomic<uint64_t> inflight_bytes_{0};
  mutable std::atomic<uint64_t> peak_inflight_bytes_{0};
  mutable std::atomic<uint64_t> window_peak_bytes_{0};
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
