// sizing.h — the thread count and memory budgets smcryptd takes from its container's
// limits (docs/deployment.md, "Sizing"), and the worst-case memory bound of a set of
// budgets (docs/service.md, "Memory under overload").
//
// A flag given on the command line always wins (source "flag"). Otherwise:
//   worker_threads: the CPU quota rounded down (at least 1), at most the CPUs the
//     process may run on ("cgroup cpu"); without a quota those CPUs ("host").
//   memory budgets, under a memory limit L ("cgroup memory"): of A = 3/4 L - 64 MiB
//     (the quarter left is the margin; 64 MiB the idle size and the burst term),
//     max_inflight_bytes takes 1/4 (at most 128 MiB, at least max_message_bytes); what
//     is left after its term (at least the largest single call) goes 2:3:1 to
//     grpc_memory_quota (at most 256 MiB), the open calls of `connections` connections
//     (max_concurrent_streams = share / (connections x 80 KiB), 1 to 256) and the three
//     public-key LRUs (entries = share / (3 x 120 KB), at most 1024); explicit flags'
//     terms are taken out of that rest first. Byte budgets are whole MiB.
//   Without a limit: the built-in defaults ("default").
// Thread-safe: pure functions.
#ifndef SMCRYPT_SERVER_SIZING_H_
#define SMCRYPT_SERVER_SIZING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/engine/container_limits.h"

namespace smcrypt::server {

// The built-in defaults, used without a limit.
inline constexpr uint64_t kDefaultMaxInflightBytes = uint64_t{128} << 20;
inline constexpr uint64_t kDefaultGrpcMemoryQuota = uint64_t{256} << 20;
inline constexpr uint32_t kDefaultMaxConcurrentStreams = 256;
inline constexpr uint64_t kDefaultPublicKeyCacheSize = 1024;
inline constexpr uint32_t kDefaultSizingConnections = 64;

// Terms of the worst-case bound (docs/service.md, "Memory under overload").
inline constexpr uint64_t kBytesPerOpenCall = 80 << 10;       // stream window + state
inline constexpr uint64_t kBytesPerCachedKey = 120000;        // an SM2 key with comb tables
inline constexpr uint64_t kBurstBytes = uint64_t{32} << 20;   // stacks, allocator caches
inline constexpr uint64_t kIdleBytes = uint64_t{32} << 20;    // an idle smcryptd, rounded up
inline constexpr uint64_t kMaxBatchItemsCharge = uint64_t{64} << 20;  // 65,536 x 1 KiB

// SizingFlags: the flags sizing reads; nullopt: not given on the command line.
struct SizingFlags {
  std::optional<int32_t> worker_threads;  // -1 counts as not given
  std::optional<uint64_t> max_inflight_bytes;
  std::optional<uint64_t> grpc_memory_quota;
  std::optional<uint32_t> max_concurrent_streams;
  std::optional<uint64_t> public_key_cache_size;
  std::optional<uint32_t> sizing_connections;  // the connections the bound plans for
  uint64_t max_message_bytes = 4 << 20;
};

// SizedValue: one value in force and where it came from ("flag", "cgroup cpu",
// "cgroup memory", "host", "default").
struct SizedValue {
  std::string name;  // the flag's name
  uint64_t value = 0;
  std::string source;
};

struct Sizing {
  ContainerLimits limits;
  int32_t worker_threads = 1;  // 0: inline on gRPC's threads
  uint32_t cpus = 1;           // the CPUs to plan threads for (quota or available)
  uint64_t max_inflight_bytes = kDefaultMaxInflightBytes;
  uint64_t grpc_memory_quota = kDefaultGrpcMemoryQuota;
  uint32_t max_concurrent_streams = kDefaultMaxConcurrentStreams;
  uint64_t public_key_cache_size = kDefaultPublicKeyCacheSize;
  uint32_t sizing_connections = kDefaultSizingConnections;
  // values: the values above, in this order: worker_threads, max_inflight_bytes,
  // grpc_memory_quota, max_concurrent_streams, public_key_cache_size,
  // sizing_connections; a limit of another flag may be appended after them (GetServerInfo
  // reports and smcrypt_limit publishes every entry).
  std::vector<SizedValue> values;
  // memory_bound_bytes: kIdleBytes + MemoryGrowthBound (saturating at 2^64 - 1); nullopt:
  // unbounded (a memory flag is 0).
  std::optional<uint64_t> memory_bound_bytes;
  // warning: non-empty when the bound is not below the memory limit (or unbounded under
  // one), naming the numbers.
  std::string warning;
  // minimums: one line for each value sized under a memory limit that got only its
  // minimum (grpc_memory_quota 1 MiB, max_concurrent_streams 1, public_key_cache_size 0),
  // naming the flags whose terms took the memory and what to do.
  std::vector<std::string> minimums;
};

// DeriveSizing chooses the values from `limits` and the flags given.
Sizing DeriveSizing(const ContainerLimits& limits, const SizingFlags& flags);

// MemoryGrowthBound is the documented worst case of resident growth over the idle size:
//   max(max_inflight_bytes, largest call) + grpc_memory_quota
//     + connections x max_concurrent_streams x 80 KiB + 3 x cache x 120 KB + 32 MiB
// with the largest call 3 x max_message_bytes + 2 KiB + 64 MiB (a full batch); nullopt
// when max_inflight_bytes, grpc_memory_quota or max_concurrent_streams is 0 (unlimited).
// The arithmetic saturates: a bound past 2^64 - 1 is 2^64 - 1, over any limit.
std::optional<uint64_t> MemoryGrowthBound(uint64_t max_inflight_bytes, uint64_t grpc_memory_quota,
                                          uint32_t max_concurrent_streams,
                                          uint64_t public_key_cache_size,
                                          uint64_t max_message_bytes, uint32_t connections);

// FormatSizing: one line for the log, e.g. "cgroup v1, CPU limit 2, memory limit 1024
// MiB, 2 CPUs available: worker_threads=2 (cgroup cpu), ...; worst case 765 MiB".
std::string FormatSizing(const Sizing& s);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SIZING_H_
