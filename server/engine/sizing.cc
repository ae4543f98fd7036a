#include "server/engine/sizing.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace smcrypt::server {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

// Add and Mul saturate at kSaturated: flags near 2^64 make a bound that is over any
// limit, never one that wraps to a small number.
uint64_t Add(uint64_t a, uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }
uint64_t Mul(uint64_t a, uint64_t b) {
  return b != 0 && a > kSaturated / b ? kSaturated : a * b;
}

uint64_t LargestCall(uint64_t max_message_bytes) {
  return Add(Add(Mul(3, max_message_bytes), 2048), kMaxBatchItemsCharge);
}

uint64_t FloorMiB(uint64_t bytes) { return bytes / kMiB * kMiB; }

// MiB formats a size in whole MiB, in bytes below 1 MiB, and a saturated one as such.
std::string MiB(uint64_t bytes) {
  if (bytes == kSaturated) return "over 2^64 bytes";
  if (bytes < kMiB) return absl::StrCat(bytes, " bytes");
  return absl::StrCat(bytes / kMiB, " MiB");
}

// WorkerThreads fills the worker count and the CPUs to plan threads for.
void SizeThreads(const ContainerLimits& limits, const SizingFlags& flags, Sizing* s) {
  const uint32_t available = std::max<uint32_t>(1, limits.cpus_available);
  s->cpus = available;
  std::string source = "host";
  if (limits.cpu_limit > 0) {
    const uint32_t quota = static_cast<uint32_t>(
        std::max(1.0, std::floor(std::min(limits.cpu_limit, 65536.0))));
    if (quota <= available) {
      s->cpus = quota;
      source = "cgroup cpu";
    }
  }
  if (flags.worker_threads.has_value() && *flags.worker_threads != -1) {
    s->worker_threads = *flags.worker_threads;
    source = "flag";
  } else {
    s->worker_threads = static_cast<int32_t>(s->cpus);
  }
  s->values.push_back({"worker_threads", static_cast<uint64_t>(s->worker_threads), source});
}

// SizeMemory fills the memory budgets: explicit flags, else shares of the limit, else
// the defaults.
void SizeMemory(const ContainerLimits& limits, const SizingFlags& flags, Sizing* s) {
  const uint64_t limit = limits.memory_limit_bytes;
  const char* derived = limit > 0 ? "cgroup memory" : "default";
  s->sizing_connections = flags.sizing_connections.value_or(kDefaultSizingConnections);
  const uint64_t connections = std::max<uint32_t>(1, s->sizing_connections);
  // A: what the budgets may use.
  const uint64_t fixed = kIdleBytes + kBurstBytes;
  const uint64_t a = limit / 4 * 3 > fixed ? limit / 4 * 3 - fixed : 0;
  const uint64_t largest = LargestCall(flags.max_message_bytes);

  if (flags.max_inflight_bytes.has_value()) {
    s->max_inflight_bytes = *flags.max_inflight_bytes;
  } else if (limit > 0) {
    s->max_inflight_bytes = std::max(std::min(FloorMiB(a / 4), kDefaultMaxInflightBytes),
                                     flags.max_message_bytes);
  }
  // rest: what is left for the quota, the open calls and the caches.
  const uint64_t inflight_term = std::max(s->max_inflight_bytes, largest);
  uint64_t rest = a > inflight_term ? a - inflight_term : 0;
  uint64_t weights = 0;
  // taken: the flags given and the bytes their terms take out of A.
  std::vector<std::string> taken;
  if (flags.max_inflight_bytes.has_value()) {
    taken.push_back(absl::StrCat("--max_inflight_bytes (", MiB(inflight_term), ")"));
  }
  auto take = [&](bool given, const char* name, uint64_t term, uint64_t weight) {
    if (given) {
      taken.push_back(absl::StrCat("--", name, " (", MiB(term), ")"));
      rest = rest > term ? rest - term : 0;
    } else {
      weights += weight;
    }
  };
  take(flags.grpc_memory_quota.has_value(), "grpc_memory_quota",
       flags.grpc_memory_quota.value_or(0), 2);
  take(flags.max_concurrent_streams.has_value(), "max_concurrent_streams",
       Mul(Mul(connections, flags.max_concurrent_streams.value_or(0)), kBytesPerOpenCall), 3);
  take(flags.public_key_cache_size.has_value(), "public_key_cache_size",
       Mul(Mul(3, flags.public_key_cache_size.value_or(0)), kBytesPerCachedKey), 1);
  const uint64_t unit = weights > 0 ? rest / weights : 0;

  if (flags.grpc_memory_quota.has_value()) {
    s->grpc_memory_quota = *flags.grpc_memory_quota;
  } else if (limit > 0) {
    s->grpc_memory_quota = std::clamp(FloorMiB(2 * unit), kMiB, kDefaultGrpcMemoryQuota);
  }
  if (flags.max_concurrent_streams.has_value()) {
    s->max_concurrent_streams = *flags.max_concurrent_streams;
  } else if (limit > 0) {
    s->max_concurrent_streams = static_cast<uint32_t>(std::clamp<uint64_t>(
        3 * unit / (connections * kBytesPerOpenCall), 1, kDefaultMaxConcurrentStreams));
  }
  if (flags.public_key_cache_size.has_value()) {
    s->public_key_cache_size = *flags.public_key_cache_size;
  } else if (limit > 0) {
    s->public_key_cache_size =
        std::min<uint64_t>(unit / (3 * kBytesPerCachedKey), kDefaultPublicKeyCacheSize);
  }
  // A value cut to its minimum gets a line naming what took its share.
  auto minimum = [&](const char* name, const std::string& value) {
    s->minimums.push_back(absl::StrCat(
        "--", name, " is sized to its minimum, ", value, ": of the memory limit of ", MiB(limit),
        taken.empty() ? std::string(" nothing is left for it; raise the memory limit")
                      : absl::StrCat(" the terms of ", absl::StrJoin(taken, ", "),
                                     " took its share; lower those flags, give --", name,
                                     " or raise the memory limit"),
        " (docs/deployment.md, \"Sizing\")"));
  };
  if (limit > 0 && !flags.grpc_memory_quota.has_value() && 2 * unit < kMiB) {
    minimum("grpc_memory_quota", MiB(kMiB));
  }
  if (limit > 0 && !flags.max_concurrent_streams.has_value() &&
      3 * unit < connections * kBytesPerOpenCall) {
    minimum("max_concurrent_streams", "1");
  }
  if (limit > 0 && !flags.public_key_cache_size.has_value() && unit < 3 * kBytesPerCachedKey) {
    minimum("public_key_cache_size", "0 (no cache)");
  }
  auto source = [&](bool given) { return given ? "flag" : derived; };
  s->values.push_back({"max_inflight_bytes", s->max_inflight_bytes,
                       source(flags.max_inflight_bytes.has_value())});
  s->values.push_back({"grpc_memory_quota", s->grpc_memory_quota,
                       source(flags.grpc_memory_quota.has_value())});
  s->values.push_back({"max_concurrent_streams", s->max_concurrent_streams,
                       source(flags.max_concurrent_streams.has_value())});
  s->values.push_back({"public_key_cache_size", s->public_key_cache_size,
                       source(flags.public_key_cache_size.has_value())});
  s->values.push_back({"sizing_connections", s->sizing_connections,
                       flags.sizing_connections.has_value() ? "flag" : "default"});
}

}  // namespace

std::optional<uint64_t> MemoryGrowthBound(uint64_t max_inflight_bytes, uint64_t grpc_memory_quota,
                                          uint32_t max_concurrent_streams,
                                          uint64_t public_key_cache_size,
                                          uint64_t max_message_bytes, uint32_t connections) {
  if (max_inflight_bytes == 0 || grpc_memory_quota == 0 || max_concurrent_streams == 0) {
    return std::nullopt;
  }
  uint64_t bound = Add(std::max(max_inflight_bytes, LargestCall(max_message_bytes)),
                       grpc_memory_quota);
  bound = Add(bound, Mul(Mul(connections, max_concurrent_streams), kBytesPerOpenCall));
  bound = Add(bound, Mul(Mul(3, public_key_cache_size), kBytesPerCachedKey));
  return Add(bound, kBurstBytes);
}

Sizing DeriveSizing(const ContainerLimits& limits, const SizingFlags& flags) {
  Sizing s;
  s.limits = limits;
  SizeThreads(limits, flags, &s);
  SizeMemory(limits, flags, &s);
  const std::optional<uint64_t> growth =
      MemoryGrowthBound(s.max_inflight_bytes, s.grpc_memory_quota, s.max_concurrent_streams,
                        s.public_key_cache_size, flags.max_message_bytes, s.sizing_connections);
  if (growth.has_value()) s.memory_bound_bytes = Add(kIdleBytes, *growth);
  const uint64_t limit = limits.memory_limit_bytes;
  if (limit > 0 && !s.memory_bound_bytes.has_value()) {
    s.warning = absl::StrCat(
        "the memory limit is ", MiB(limit), " but --max_inflight_bytes, --grpc_memory_quota or "
        "--max_concurrent_streams is 0 (unlimited): smcryptd's memory is unbounded and an "
        "overload can exceed the limit");
  } else if (limit > 0 && *s.memory_bound_bytes >= limit) {
    s.warning = absl::StrCat(
        "the worst-case memory of these flags, ", MiB(*s.memory_bound_bytes), " (idle ",
        MiB(kIdleBytes), " + max(--max_inflight_bytes ", MiB(s.max_inflight_bytes),
        ", largest call ", MiB(LargestCall(flags.max_message_bytes)), ") + --grpc_memory_quota ",
        MiB(s.grpc_memory_quota), " + ", s.sizing_connections, " connections x ",
        s.max_concurrent_streams, " streams x 80 KiB + 3 x ", s.public_key_cache_size,
        " cached keys x 120 KB + ", MiB(kBurstBytes), "), is not below the memory limit of ",
        MiB(limit), ": an overload can exceed it (docs/deployment.md, \"Sizing\")");
  }
  return s;
}

std::string FormatSizing(const Sizing& s) {
  std::vector<std::string> values;
  for (const SizedValue& v : s.values) {
    values.push_back(absl::StrCat(v.name, "=", v.value, " (", v.source, ")"));
  }
  const ContainerLimits& l = s.limits;
  return absl::StrCat(
      l.cgroup, ", CPU limit ", l.cpu_limit > 0 ? absl::StrCat(l.cpu_limit) : "none",
      ", memory limit ", l.memory_limit_bytes > 0 ? MiB(l.memory_limit_bytes) : "none", ", ",
      l.cpus_available, " CPUs available: ", absl::StrJoin(values, ", "), "; worst case ",
      s.memory_bound_bytes.has_value() ? MiB(*s.memory_bound_bytes) : "unbounded");
}

}  // namespace smcrypt::server
