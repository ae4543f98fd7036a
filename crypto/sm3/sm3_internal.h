// sm3_internal.h — the SM3 back-end table (not part of the public API).
//
// Each back end is one Sm3Kernels entry: a name (DESIGN.md "Names used everywhere"),
// the CpuFeature bits it needs, and plain function pointers (no virtual calls, no heap).
// sm3_dispatch.cc holds the priority-ordered table; the first entry whose features are
// all present is chosen once and kept for the life of the process.
#ifndef SMCRYPT_CRYPTO_SM3_SM3_INTERNAL_H_
#define SMCRYPT_CRYPTO_SM3_SM3_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace smcrypt {

// The initial value IV of GB/T 32905-2016 §4.1.
inline constexpr uint32_t kSm3Iv[8] = {0x7380166f, 0x4914b2b9, 0x172442d7, 0xda8a0600,
                                       0xa96f30bc, 0x163138aa, 0xe38dee4d, 0xb0fb0e4e};

struct Sm3Kernels {
  // name is the back-end name: "generic", "avx_bmi2", "mb8_avx2", "mb16_avx512".
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
};

// Sm3GenericCompressBlocks is the portable CF (sm3_generic.cc); the reference every
// other back end is tested against.
void Sm3GenericCompressBlocks(uint32_t state[8], const uint8_t* data, size_t num_blocks);

// Sm3ActiveKernels returns the back end chosen for this process: the first entry of the
// priority-ordered table whose required_features ⊆ GetCpuFeatures(). Thread-safe; the
// choice is made once.
const Sm3Kernels& Sm3ActiveKernels();

// Sm3AllKernelsForTesting returns every compiled back end, whether or not this CPU has
// its features (tests skip those it lacks, naming the missing features). Generic is last.
std::vector<const Sm3Kernels*> Sm3AllKernelsForTesting();

// Sm3DigestWithKernel hashes `data` with the compression function of `kernels`, writing
// 32 bytes to `out` (§5.2 padding, §5.3 iteration). Used by Sm3Batch and by tests.
void Sm3DigestWithKernel(const Sm3Kernels& kernels, absl::string_view data, uint8_t out[32]);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_SM3_SM3_INTERNAL_H_
