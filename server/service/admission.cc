#include "server/service/admission.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/engine/error_reason.h"
#include "server/engine/logging.h"

namespace smcrypt::server {

absl::string_view OverloadLimitName(OverloadLimit limit) {
  switch (limit) {
    case OverloadLimit::kInflight:
      return "max_inflight";
    case OverloadLimit::kInflightBytes:
      return "max_inflight_bytes";
    case OverloadLimit::kStreamBytes:
      return "max_stream_inflight_bytes";
    case OverloadLimit::kConnectionBytes:
      return "max_connection_inflight_bytes";
  }
  return "max_inflight";
}

FairShares DefaultFairShares(uint64_t budget, uint64_t max_message) {
  if (budget == 0) return {};
  FairShares f;
  f.stream = std::min(budget, std::max(budget / 8, 5 * max_message));
  f.connection = std::min(budget, std::max(budget / 4, f.stream));
  return f;
}

// ---- ConnectionLedger -------------------------------------------------------------------

ConnectionLedger::Entry* ConnectionLedger::Join(std::string peer) {
  const size_t hash = HashOf(peer);
  Shard& shard = ShardOf(hash);
  absl::MutexLock lock(&shard.mu);
  auto it = shard.entries.find(absl::string_view(peer), hash);
  if (it == shard.entries.end()) {
    auto entry = std::make_unique<Entry>();
    entry->peer = std::move(peer);
    entry->hash = hash;
    const absl::string_view key = entry->peer;
    it = shard.entries.emplace(key, std::move(entry)).first;
    connections_.fetch_add(1, std::memory_order_relaxed);
    if (observer_ != nullptr) observer_->OnConnections(1);
  }
  ++it->second->calls;
  return it->second.get();
}

void ConnectionLedger::Leave(Entry* entry) {
  Shard& shard = ShardOf(entry->hash);
  absl::MutexLock lock(&shard.mu);
  if (--entry->calls > 0) return;
  // The key is a view of the entry's peer: the erase destroys both after the lookup.
  shard.entries.erase(shard.entries.find(absl::string_view(entry->peer), entry->hash));
  connections_.fetch_sub(1, std::memory_order_relaxed);
  if (observer_ != nullptr) observer_->OnConnections(-1);
}

// ---- CallCharge -------------------------------------------------------------------------

absl::Status CallCharge::TryAdd(uint64_t bytes) {
  if (bytes == 0 || admission_ == nullptr) return absl::OkStatus();
  const AdmissionLimits& limits = admission_->limits_;
  if (stream_ && limits.max_stream_inflight_bytes != 0 && held_ != 0 &&
      held_ + bytes > limits.max_stream_inflight_bytes) {
    return admission_->Refuse(
        OverloadLimit::kStreamBytes,
        absl::StrCat("this stream holds ", held_, " bytes and its next message needs ", bytes,
                     " more, beyond the ", limits.max_stream_inflight_bytes,
                     " bytes one stream may hold (--max_stream_inflight_bytes): read the "
                     "stream's responses as they come and send smaller messages"),
        connection_ != nullptr ? absl::string_view(connection_->peer) : absl::string_view());
  }
  if (connection_ != nullptr) {
    const uint64_t limit = limits.max_connection_inflight_bytes;
    uint64_t current = connection_->bytes.load(std::memory_order_relaxed);
    do {
      if (current != 0 && current + bytes > limit) {
        return admission_->Refuse(
            OverloadLimit::kConnectionBytes,
            absl::StrCat("the calls of this connection hold ", current,
                         " bytes and this one needs ", bytes, " more, beyond the ", limit,
                         " bytes one connection may hold (--max_connection_inflight_bytes): "
                         "read responses as they come, or spread the calls over more "
                         "connections; retry later"),
            connection_->peer);
      }
    } while (!connection_->bytes.compare_exchange_weak(current, current + bytes,
                                                       std::memory_order_relaxed));
  }
  absl::Status s = admission_->TryCharge(bytes);
  if (!s.ok()) {
    if (connection_ != nullptr) connection_->bytes.fetch_sub(bytes, std::memory_order_relaxed);
    return s;
  }
  held_ += bytes;
  return absl::OkStatus();
}

void CallCharge::Set(uint64_t bytes) {
  if (admission_ == nullptr || bytes == held_) return;
  if (bytes > held_) {
    const uint64_t more = bytes - held_;
    if (connection_ != nullptr) connection_->bytes.fetch_add(more, std::memory_order_relaxed);
    admission_->Charge(more);
  } else {
    const uint64_t less = held_ - bytes;
    if (connection_ != nullptr) connection_->bytes.fetch_sub(less, std::memory_order_relaxed);
    admission_->Release(less);
  }
  held_ = bytes;
}

void CallCharge::Close() {
  if (admission_ == nullptr) return;
  Set(0);
  if (connection_ != nullptr) admission_->connections_.Leave(connection_);
  connection_ = nullptr;
  admission_ = nullptr;
}

// ---- Admission --------------------------------------------------------------------------

absl::Status Admission::Admit(std::chrono::system_clock::time_point deadline,
                              uint64_t bytes) const {
  const int64_t n = inflight_->load(std::memory_order_relaxed);
  if (n > limits_.max_inflight) {
    return Refuse(OverloadLimit::kInflight,
                  absl::StrCat("more than ", limits_.max_inflight,
                               " RPCs in flight (--max_inflight); retry later"));
  }
  if (deadline < std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError("the deadline passed before the request was handled");
  }
  return TryCharge(bytes);
}

absl::Status Admission::Admit(std::chrono::system_clock::time_point deadline,
                              absl::FunctionRef<std::string()> peer, bool stream,
                              uint64_t bytes, CallCharge* charge) const {
  absl::Status s = Admit(deadline, 0);
  if (!s.ok()) return s;
  charge->admission_ = this;
  charge->stream_ = stream;
  if (limits_.max_connection_inflight_bytes != 0) charge->connection_ = connections_.Join(peer());
  return charge->TryAdd(bytes);
}

absl::Status Admission::TryCharge(uint64_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  if (limits_.max_inflight_bytes == 0) {
    Charge(bytes);
    return absl::OkStatus();
  }
  // Charge `bytes` unless that passes the budget. A lone call always fits.
  uint64_t current = inflight_bytes_.load(std::memory_order_relaxed);
  do {
    if (current != 0 && current + bytes > limits_.max_inflight_bytes) {
      return Refuse(OverloadLimit::kInflightBytes,
                    absl::StrCat("more than ", limits_.max_inflight_bytes,
                                 " bytes of requests and responses in flight "
                                 "(--max_inflight_bytes); retry later"));
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

absl::Status Admission::Refuse(OverloadLimit limit, std::string message,
                              absl::string_view peer) const {
  const int i = static_cast<int>(limit);
  refusals_[i].fetch_add(1, std::memory_order_relaxed);
  if (observer_ != nullptr) observer_->OnOverload(limit);
  if (limit == OverloadLimit::kStreamBytes || limit == OverloadLimit::kConnectionBytes) {
    unlogged_[i].fetch_add(1, std::memory_order_relaxed);
    const int64_t now = absl::GetCurrentTimeNanos();
    int64_t next = next_log_ns_[i].load(std::memory_order_relaxed);
    if (now >= next && next_log_ns_[i].compare_exchange_strong(
                           next, now + absl::ToInt64Nanoseconds(absl::Seconds(10)),
                           std::memory_order_relaxed)) {
      const uint64_t n = unlogged_[i].exchange(0, std::memory_order_relaxed);
      LogWarning(absl::StrCat("refused ", n, " call(s) or stream message(s) over --",
                              OverloadLimitName(limit), " since the previous such line; last",
                              peer.empty() ? "" : absl::StrCat(" (peer ", peer, ")"), ": ",
                              message));
    }
  }
  return WithReason(absl::ResourceExhaustedError(std::move(message)), reason::kOverloaded,
                    {{"limit", OverloadLimitName(limit)}});
}

void Admission::NotePeak(uint64_t now) const {
  for (std::atomic<uint64_t>* peak : {&peak_inflight_bytes_, &window_peak_bytes_}) {
    uint64_t seen = peak->load(std::memory_order_relaxed);
    while (now > seen && !peak->compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
}

}  // namespace smcrypt::server
