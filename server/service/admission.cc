#include "server/service/admission.h"

#include "absl/strings/str_cat.h"
#include "server/engine/error_reason.h"

namespace smcrypt::server {

absl::Status Admission::Admit(std::chrono::system_clock::time_point deadline,
                              uint64_t bytes) const {
  const int64_t n = inflight_->load(std::memory_order_relaxed);
  if (n > max_inflight_) {
    return WithReason(absl::ResourceExhaustedError(absl::StrCat(
                          "more than ", max_inflight_,
                          " RPCs in flight (--max_inflight); retry later")),
                      reason::kOverloaded, {{"limit", "max_inflight"}});
  }
  if (deadline < std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError("the deadline passed before the request was handled");
  }
  return TryCharge(bytes);
}

absl::Status Admission::TryCharge(uint64_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  if (max_inflight_bytes_ == 0) {
    Charge(bytes);
    return absl::OkStatus();
  }
  // Charge `bytes` unless that passes the budget. A lone call always fits.
  uint64_t current = inflight_bytes_.load(std::memory_order_relaxed);
  do {
    if (current != 0 && current + bytes > max_inflight_bytes_) {
      return WithReason(
          absl::ResourceExhaustedError(absl::StrCat(
              "more than ", max_inflight_bytes_,
              " bytes of requests and responses in flight (--max_inflight_bytes); retry later")),
          reason::kOverloaded, {{"limit", "max_inflight_bytes"}});
    }
  } while (!inflight_bytes_.compare_exchange_weak(current, current + bytes,
                                                  std::memory_order_relaxed));
  NotePeak(current + bytes);
  return absl::OkStatus();
}

void Admission::Charge(uint64_t bytes) const {
  if (bytes == 0) return;
  NotePeak(inflight_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

void Admission::Release(uint64_t bytes) const {
  if (bytes == 0) return;
  inflight_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

void Admission::NotePeak(uint64_t now) const {
  for (std::atomic<uint64_t>* peak : {&peak_inflight_bytes_, &window_peak_bytes_}) {
    uint64_t seen = peak->load(std::memory_order_relaxed);
    while (now > seen && !peak->compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
}

}  // namespace smcrypt::server
