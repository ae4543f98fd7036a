// sm3_internal.h — the SM3 back-end table (not part of the public API).
//
// Each back end is one Sm3Kernels entry: a name (docs/design.md "Names used everywhere"),
// the CpuFeature bits it needs, and plain function pointers (no virtual calls, no heap).
// sm3_dispatch.cc holds the priority-ordered table; the first entry whose features are
// all present is chosen once and kept for the life of the process.
#ifndef SMCRYPT_CRYPTO_SM3_SM3_INTERNAL_H_
#define SMCRYPT_CRYPTO_SM3_SM3_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm3.h"

namespace smcrypt {

// The initial value IV of GB/T 32905-2016 §4.1.
inline constexpr uint32_t kSm3Iv[8] = {0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
                                       0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e};

// Sm3Job is one message for a multi-buffer kernel: the kernel starts from `state` (the
// IV, or a midstate after `prefix_len` bytes, a multiple of 64, were absorbed), hashes
// the `len` bytes at `data`, pads per §5.2 with the total length prefix_len + len, and
// writes the 32-byte digest to `out`. `out` must not overlap any job's data.
struct Sm3Job {
  uint32_t state[8];
  const uint8_t* data;
  size_t len;           // bytes
  uint64_t prefix_len;  // bytes, a multiple of 64
  uint8_t* out;
};

// Sm3Kernels is one SM3 back end.
//
// There are two kinds, kept in two priority-ordered tables in sm3_dispatch.cc:
//  - single-stream back ends ("avx_bmi2", "ce", "generic"): compress_blocks only; batch and
//    hash_jobs are null and lanes is 0;
//  - multi-buffer back ends ("mb16_avx512", "mb8_avx2", "mb4_neon"): lanes > 0, hash_jobs and batch
//    set; their compress_blocks forwards to the dispatched single-stream back end
//    (Sm3DispatchedCompressBlocks), so a lone message never runs in a mostly empty
//    vector.
// Dispatch picks one entry from each table and combines them into the active back end,
// named "<single>+<multi>" (e.g. "avx_bmi2+mb16_avx512"), or just "<single>" when no
// multi-buffer back end fits this CPU. That name is what Sm3ActiveKernelName() reports.
struct Sm3Kernels {
  // name is the back-end name: "generic", "avx_bmi2", "ce", "mb4_neon", "mb8_avx2", "mb16_avx512", or the
  // combined "single+multi" name of the active back end.
  const char* name;
  // required_features is the set of CpuFeature bits the back end needs.
  uint32_t required_features;
  // compress_blocks applies the compression function CF (GB/T 32905-2016 §5.3.3) to
  // `num_blocks` consecutive 64-byte blocks at `data`, updating `state` (the eight
  // words V_i, A..H). `num_blocks` may be 0. `data` needs no alignment.
  void (*compress_blocks)(uint32_t state[8], const uint8_t* data, size_t num_blocks);
  // batch hashes `messages[i]` into `out[32*i .. 32*i+31]` for i < num_messages (a
  // multi-buffer back end). May be null: Sm3Batch then hashes one message at a time
  // with compress_blocks.
  void (*batch)(const absl::string_view* messages, size_t num_messages, uint8_t* out);
  // lanes is the number of messages a multi-buffer back end hashes side by side (0 for
  // single-stream back ends).
  size_t lanes;
  // hash_jobs completes every job of `jobs[0 .. num_jobs)`: lanes are filled from the
  // array in order, and a lane whose message ends is refilled with the next job, so
  // messages of any mix of lengths keep the lanes busy. Null for single-stream back ends.
  // Constant time with respect to message contents and states (lengths are public).
  void (*hash_jobs)(const Sm3Job* jobs, size_t num_jobs);
};

// Sm3GenericCompressBlocks is the portable CF (sm3_generic.cc); the reference every
// other back end is tested against.
void Sm3GenericCompressBlocks(uint32_t state[8], const uint8_t* data, size_t num_blocks);

// kSm3Generic is the generic back end's entry (sm3_dispatch.cc), in every build.
extern const Sm3Kernels kSm3Generic;

// The x86-64 back-end entries, defined in their own files (x86-64 builds only).
extern const Sm3Kernels kSm3AvxBmi2;     // sm3_avx_bmi2.cc
extern const Sm3Kernels kSm3Mb16Avx512;  // sm3_mb16_avx512.cc
extern const Sm3Kernels kSm3Mb8Avx2;     // sm3_mb8_avx2.cc

// The arm64 back-end entries (aarch64 builds only).
extern const Sm3Kernels kSm3Ce;        // sm3_ce.cc
extern const Sm3Kernels kSm3Mb4Neon;  // sm3_mb4_neon.cc

// Sm3SingleTable and Sm3MultiTable return this architecture's single-stream back ends
// (strongest first, generic last) and multi-buffer back ends (widest first; empty where
// there are none): sm3_table_x86_64.cc or sm3_table_aarch64.cc, whichever
// crypto/CMakeLists.txt compiles for CMAKE_SYSTEM_PROCESSOR.
absl::Span<const internal::BackendChoice<Sm3Kernels>> Sm3SingleTable();
absl::Span<const internal::BackendChoice<Sm3Kernels>> Sm3MultiTable();

// Sm3DispatchedCompressBlocks runs the compress_blocks of the single-stream back end
// that dispatch chose (ignoring any testing override). Multi-buffer entries use it.
void Sm3DispatchedCompressBlocks(uint32_t state[8], const uint8_t* data, size_t num_blocks);

// Sm3ActiveKernels returns the back end in use: the override installed by
// Sm3SetKernelsForTesting if any, else the dispatched choice (the first single-stream
// and the first multi-buffer entry whose required_features ⊆ GetCpuFeatures(),
// combined as described above). Thread-safe; the dispatched choice is made once.
const Sm3Kernels& Sm3ActiveKernels();

// Sm3SetKernelsForTesting makes Sm3ActiveKernels() (and so Sm3, Sm3Digest, Sm3Batch,
// HmacSm3, Sm3HashJobs and Sm3Kdf) use `k` until called again; nullptr restores the
// dispatched choice. `k` must outlive its use and its features must be present. For
// tests and the bench harness only; Sm3ActiveKernelName() keeps reporting the
// dispatched choice. Thread-safe (an atomic pointer), but hashing that is in flight on
// other threads may use either back end.
void Sm3SetKernelsForTesting(const Sm3Kernels* k);

// Sm3AllKernelsForTesting returns every compiled back end, whether or not this CPU has
// its features (tests skip those it lacks, naming the missing features): the
// multi-buffer table in priority order, then the single-stream table in priority
// order. Generic is last.
std::vector<const Sm3Kernels*> Sm3AllKernelsForTesting();

// Sm3DispatchTableForTesting returns both dispatch tables in the order above (multi-buffer,
// then single-stream), each back end with its capability predicate
// (crypto/cpu/backends.h). Dispatch takes the first capable entry of each table.
std::vector<internal::BackendChoice<Sm3Kernels>> Sm3DispatchTableForTesting();

// Sm3DigestWithKernel hashes `data` with the compression function of `kernels`, writing
// 32 bytes to `out` (§5.2 padding, §5.3 iteration). Used by Sm3Batch and by tests.
void Sm3DigestWithKernel(const Sm3Kernels& kernels, absl::string_view data, uint8_t out[32]);

// Sm3HashJobsSerial completes `jobs` one after another with kernels.compress_blocks.
void Sm3HashJobsSerial(const Sm3Kernels& kernels, const Sm3Job* jobs, size_t num_jobs);

// Sm3HashJobs completes `jobs` with the active back end: its multi-buffer hash_jobs
// when it has one and there are at least two jobs, else one job at a time.
void Sm3HashJobs(const Sm3Job* jobs, size_t num_jobs);

// Sm3BatchWithHashJobs implements a back end's batch function on its hash_jobs:
// messages are turned into jobs (starting from the IV) in chunks and handed over.
void Sm3BatchWithHashJobs(void (*hash_jobs)(const Sm3Job*, size_t),
                          const absl::string_view* messages, size_t num_messages, uint8_t* out);

// Sm3CompressLanesFn is the core of a multi-buffer back end: for each lane i < lanes
// it applies CF to `num_blocks` consecutive blocks at ptrs[i], with the chaining value
// of lane i held transposed in st[word * lanes + i] (word 0..7 = A..H). Every ptrs[i]
// points at readable blocks (an idle lane repeats another lane's input).
using Sm3CompressLanesFn = void (*)(uint32_t* st, const uint8_t* const* ptrs, size_t num_blocks);

// Sm3RunLanes is the lane scheduler shared by the multi-buffer back ends: it fills
// `lanes` (<= 16) lanes from `jobs` in order, runs `compress_lanes` for as many blocks
// as the lane nearest to a segment end allows (a job is its full 64-byte blocks, then
// its one or two §5.2 padding blocks, built per lane), writes the digest of a lane
// whose job ends and refills the lane with the next job. When the queue is empty and
// at most lanes/8 lanes (at least 1) remain busy, they finish on
// Sm3DispatchedCompressBlocks, so one long message does not run in a mostly empty
// vector. Branches depend only on lengths; the padding blocks are wiped.
void Sm3RunLanes(size_t lanes, Sm3CompressLanesFn compress_lanes, const Sm3Job* jobs,
                 size_t num_jobs);

// internal::HmacSm3Batch (declared in smcrypt/sm3.h, a friend of HmacSm3) computes
// HMAC-SM3 of messages[i] under *keys[i] into out[32*i .. 32*i+31] for every i: the
// inner hashes of all messages run in the lanes of the active multi-buffer back end
// (from each key's cached ipad midstate), then all outer hashes (from the opad
// midstates). Keys may repeat. `out` must not overlap the messages. Equal to
// keys[i]->ComputeMac(messages[i]). Constant time in keys and message contents.

// Sm3Kdf is the key derivation function of GB/T 32918.4-2016 §5.4.3 (the same KDF as
// GB/T 32918.3 §5.4.3): t = Hv_1 ‖ Hv_2 ‖ … truncated to `out_len` bytes, with
// Hv_i = SM3(Z ‖ ct_i) and ct_i the 32-bit big-endian counter i = 1, 2, ….
// If `in` is null, `out` receives t; otherwise out[i] = in[i] ⊕ t[i] (`in` may equal
// `out`; partial overlap is not allowed). Z is `z_len` bytes at `z` (for SM2
// encryption, x2 ‖ y2: 64 bytes). The counter blocks are independent, so they run in
// the lanes of the active multi-buffer back end (8–16 at a time), with Z's complete
// 64-byte blocks compressed once and shared. out_len must be below 2^32 × 32 (the
// counter must not wrap); callers check this (SM2 bounds its messages accordingly).
// Returns ~0 if out_len > 0 and t is all zero (§6.1 A5 / §7.1 B4: the caller must
// then reject), else 0; computed without branching on t. Intermediate values are wiped.
// Constant time in the contents of Z, `in` and t; `z_len` and `out_len` are public.
uint64_t Sm3Kdf(const uint8_t* z, size_t z_len, const uint8_t* in, uint8_t* out,
                size_t out_len);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_SM3_SM3_INTERNAL_H_
