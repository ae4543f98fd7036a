// sm4_internal.h — the SM4 back-end table and generic helpers (not part of the public API).
//
// Each back end is one Sm4Kernels entry: a name (docs/design.md "Names used everywhere"), the
// CpuFeature bits it needs, its batch width and plain function pointers (no virtual
// calls, no heap). sm4_table_<arch>.cc holds the priority-ordered table of one
// architecture and sm4_dispatch.cc the choice: the first entry whose features are all
// present is chosen once for the life of the process. The modes
// (sm4_modes.cc, GCM, CCM) are written once over these "N blocks" functions.
#ifndef SMCRYPT_CRYPTO_SM4_SM4_INTERNAL_H_
#define SMCRYPT_CRYPTO_SM4_SM4_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm4/ghash.h"
#include "smcrypt/sm4.h"

namespace smcrypt {

// Sm4MultiJob is one message of a multi-buffer call (cbc_encrypt_multi, cbc_mac_multi,
// Sm4CbcEncryptMulti): each job has its own key, chaining value, buffers and length.
// Lengths and pointers are public (they steer loop counts, masks and addresses); keys,
// chaining values and data are secret.
struct Sm4MultiJob {
  // rk is the job's 32 encryption-order round keys (GB/T 32907-2016 §7.3).
  const uint32_t* rk;
  // iv is 16 bytes: C_{−1} on entry and the last ciphertext block on return (unchanged
  // when num_blocks is 0). For the CBC-MAC it is the running value y.
  uint8_t* iv;
  // in holds 16·num_blocks bytes; out the same (CBC encryption only; in == out allowed,
  // partial overlap not). Buffers of different jobs must not overlap.
  const uint8_t* in;
  uint8_t* out;
  size_t num_blocks;
};

// kSm4MaxMultiJobs is the largest `num_jobs` a back end's multi-buffer entry accepts.
inline constexpr size_t kSm4MaxMultiJobs = 16;

struct Sm4Kernels {
  // name is the back-end name: "generic", "aesni_avx2", "gfni_avx2", ...
  const char* name;
  // required_features is the set of CpuFeature bits the back end needs.
  uint32_t required_features;
  // parallel_blocks is the widest number of blocks one internal batch processes; a
  // caller gains nothing from passing more per call than a multiple of it.
  size_t parallel_blocks;
  // encrypt_blocks runs the 32 rounds of GB/T 32907-2016 §7.1 with round keys `rk` on
  // `num_blocks` 16-byte blocks from `in` to `out` (ECB). With the decryption-order
  // round keys it decrypts (§7.2). `in == out` is allowed; partial overlap is not.
  // `num_blocks` may be 0; no alignment is required.
  void (*encrypt_blocks)(const uint32_t rk[32], const uint8_t* in, uint8_t* out,
                         size_t num_blocks);
  // ctr32_encrypt_blocks XORs E(rk, counter_block + i) into block i of `in`, writing
  // `out`, where "+ i" adds i modulo 2^32 to the last four bytes read as a big-endian
  // word (GCM's inc32). Same aliasing rules as encrypt_blocks.
  void (*ctr32_encrypt_blocks)(const uint32_t rk[32], const uint8_t counter_block[16],
                               const uint8_t* in, uint8_t* out, size_t num_blocks);
  // ctr128_encrypt_blocks is ctr32_encrypt_blocks with the whole 16-byte counter block
  // one big-endian integer: block i uses counter_block + i modulo 2^128 (SM4-CTR as
  // OpenSSL and Botan define it). The carry is computed without branches.
  void (*ctr128_encrypt_blocks)(const uint32_t rk[32], const uint8_t counter_block[16],
                                const uint8_t* in, uint8_t* out, size_t num_blocks);
  // cbc_decrypt_blocks computes P_i = D(rk_dec, C_i) ⊕ C_{i−1} with C_{−1} = `iv` over
  // `num_blocks` blocks (GB/T 17964-2021 §6), then sets `iv` to the last ciphertext
  // block (unchanged when num_blocks is 0), so a message can be fed in pieces.
  // `rk` must be the decryption-order round keys. `in == out` is allowed.
  void (*cbc_decrypt_blocks)(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                             uint8_t* out, size_t num_blocks);
  // cbc_encrypt_blocks computes C_i = E(rk, P_i ⊕ C_{i−1}) with C_{−1} = `iv`, then
  // sets `iv` to the last ciphertext block. Serial: back ends run it on their
  // lowest-latency single-block path. `in == out` is allowed.
  void (*cbc_encrypt_blocks)(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                             uint8_t* out, size_t num_blocks);
  // cbc_mac_blocks sets y ← E(rk, y ⊕ X) for each 16-byte block X of `in` in turn (the
  // CBC-MAC of SP 800-38C §6.1 / CCM). Serial, like cbc_encrypt_blocks.
  void (*cbc_mac_blocks)(const uint32_t rk[32], uint8_t y[16], const uint8_t* in,
                         size_t num_blocks);
  // cbc_encrypt_multi runs cbc_encrypt_blocks on each of `num_jobs` (1–16) independent
  // jobs at once, one message per SIMD lane, with per-lane round keys; a lane whose
  // message has ended is masked out (its chaining value frozen). The result is exactly
  // that of the single-stream entry on each job. nullptr when the back end has no
  // multi-buffer path (Sm4CbcEncryptMulti then loops over cbc_encrypt_blocks).
  void (*cbc_encrypt_multi)(const Sm4MultiJob* jobs, size_t num_jobs);
  // cbc_mac_multi is cbc_mac_blocks on each job (`iv` is y; `out` is ignored), as above.
  void (*cbc_mac_multi)(const Sm4MultiJob* jobs, size_t num_jobs);
  // gcm_crypt_fused runs GCM's GCTR (ctr32 from `counter_block`) and GHASH (state `y`,
  // GCM byte order) over the first 64·⌊num_blocks/64⌋ blocks in one pass: the GHASH of
  // one 64-block chunk is interleaved with the cipher of the next, so each block is
  // touched once while in registers or L1. It hashes the ciphertext: `out` when
  // `encrypt`, `in` (read before it is overwritten) otherwise. It advances
  // `counter_block` and `y` and returns the number of blocks done (the caller finishes
  // the rest). `hkey` must be in the layout of gcm_fused_ghash, and the fused entry is
  // used only when the GCM object's GHASH back end is exactly that one. nullptr when
  // the back end has no fused path.
  size_t (*gcm_crypt_fused)(const uint32_t rk[32], const internal::GhashKey& hkey,
                            uint8_t counter_block[16], uint8_t y[16], const uint8_t* in,
                            uint8_t* out, size_t num_blocks, bool encrypt);
  const internal::GhashKernels* gcm_fused_ghash;
};

// Sm4CbcEncryptMulti encrypts `num_jobs` independent CBC messages (whole blocks, no
// padding) with the active back end: each job as cbc_encrypt_blocks would, its `iv`
// updated to its last ciphertext block. Jobs go to the back end's multi-buffer entry 16
// at a time (lengths may differ), or one by one when it has none. Constant time with
// respect to keys, IVs and data; lengths are public. Serial CBC encryption is bound by
// one block's latency; 16 messages in one call fill the SIMD lanes instead.
void Sm4CbcEncryptMulti(const Sm4MultiJob* jobs, size_t num_jobs);
// Sm4CbcMacMulti is the CBC-MAC (cbc_mac_blocks) of each job, `iv` being y.
void Sm4CbcMacMulti(const Sm4MultiJob* jobs, size_t num_jobs);

// kSm4ModeChunkBlocks is how many blocks the CFB-decryption and XTS loops hand to
// `encrypt_blocks` per call (1 KiB on the stack: the widest back end's batch of 64).
inline constexpr size_t kSm4ModeChunkBlocks = 64;

// Sm4CfbEncrypt runs SM4-CFB-128 encryption (NIST SP 800-38A §6.3, s = 128) on back end
// `k` with encryption-order round keys `rk` over `len` bytes from `in` to `out`:
// C_i = P_i ⊕ E(C_{i−1}), C_{−1} = `iv`; a final partial segment of r bytes uses the
// first r bytes of E(C_{n−1}). Serial: one block per call of k.cbc_encrypt_blocks (the
// single-block path) on a zero block. On return `iv` holds the last whole ciphertext
// block (unchanged when len < 16), so a message can be fed in whole-block pieces.
// `in == out` is allowed; partial overlap is not. Constant time; `len` is public.
void Sm4CfbEncrypt(const Sm4Kernels& k, const uint32_t rk[32], uint8_t iv[16],
                   const uint8_t* in, uint8_t* out, size_t len);
// Sm4CfbDecrypt is the inverse: P_i = C_i ⊕ E(C_{i−1}), with the E(C_{i−1}) of up to
// kSm4ModeChunkBlocks blocks computed in one k.encrypt_blocks call. `rk` is the
// encryption-order round keys (CFB only encrypts). `iv` as for Sm4CfbEncrypt; in place
// allowed.
void Sm4CfbDecrypt(const Sm4Kernels& k, const uint32_t rk[32], uint8_t iv[16],
                   const uint8_t* in, uint8_t* out, size_t len);
// Sm4OfbCrypt XORs the SM4-OFB keystream O_i = E(O_{i−1}), O_{−1} = `iv` (SP 800-38A
// §6.4) into `len` bytes; encryption and decryption are the same. The keystream is
// k.cbc_encrypt_blocks of zero blocks (E(0 ⊕ O_{i−1})), up to kSm4ModeChunkBlocks per
// call. On return `iv` holds the last keystream block of the whole blocks processed.
// In place allowed. Constant time.
void Sm4OfbCrypt(const Sm4Kernels& k, const uint32_t rk[32], uint8_t iv[16],
                 const uint8_t* in, uint8_t* out, size_t len);
// Sm4XtsCrypt runs SM4-XTS with ciphertext stealing (IEEE Std 1619-2018 §5.3/§5.4,
// GB/T 17964-2021 with the other tweak bit order) on back end `k`: T_0 = E(rk2, iv),
// T_j = T_{j−1}·α in `variant`'s convention, and block j goes through
// E(rk1, X ⊕ T_j) ⊕ T_j, or D when `encrypt` is false (`rk1` must then be K1's
// decryption-order round keys; `rk2` is always K2's encryption-order keys). Requires
// 16 ≤ len ≤ 16·kSm4XtsMaxBlocks (callers check). `in == out` allowed. Constant time;
// the tweaks are wiped before return.
void Sm4XtsCrypt(const Sm4Kernels& k, const uint32_t rk1[32], const uint32_t rk2[32],
                 Sm4XtsVariant variant, const uint8_t iv[16], const uint8_t* in,
                 uint8_t* out, size_t len, bool encrypt);
// Sm4XtsMulAlpha sets `t` ← `t`·α, the tweak update of `variant` (IEEE 1619 §5.2, or
// GB/T 17964's bit-reflected order), by shifts and masks. For tests.
void Sm4XtsMulAlpha(Sm4XtsVariant variant, uint8_t t[16]);

// Sm4SetKernelsForTesting makes Sm4ActiveKernels() return `k` (which must outlive its
// use) until called again; nullptr restores the dispatched choice. For tests and the
// benchmark harness, to run the modes on every back end this CPU supports. Sm4Gcm and
// the other mode objects read the active back end on every call.
// Sm4ActiveKernelName() keeps reporting the dispatched choice.
void Sm4SetKernelsForTesting(const Sm4Kernels* k);

// Sm4DispatchedKernels returns the back end chosen by CPU features, ignoring any
// testing override.
const Sm4Kernels& Sm4DispatchedKernels();

// Sm4SelfTest checks back end `k`: GB/T 32907-2016 Appendix A example 1 in both
// directions (and on generic), then every wide entry (ECB both ways, CTR-32 and
// CTR-128 across counter wraps, CBC both ways, CBC-MAC, the multi-buffer entries)
// against generic over 119 blocks of a fixed pattern, covering each batch size and
// masked tail. Sm4ExpandKey runs it once on the active back end and fails closed
// (Internal) when it returns false. About a millisecond (the generic reference).
bool Sm4SelfTest(const Sm4Kernels& k);

// Sm4ActiveKernels returns the back end chosen for this process: the first entry of the
// priority-ordered table whose required_features ⊆ GetCpuFeatures(). Thread-safe; the
// choice is made once.
const Sm4Kernels& Sm4ActiveKernels();

// Sm4AllKernelsForTesting returns every compiled back end, whether or not this CPU has
// its features (tests skip those it lacks, naming the missing features). Generic is last.
std::vector<const Sm4Kernels*> Sm4AllKernelsForTesting();

// Sm4DispatchTableForTesting returns the dispatch table (the same back ends, in the same
// order, with their capability predicates; crypto/cpu/backends.h).
absl::Span<const internal::BackendChoice<Sm4Kernels>> Sm4DispatchTableForTesting();

// The generic back end (sm4_generic.cc), constant time.
void Sm4GenericEncryptBlocks(const uint32_t rk[32], const uint8_t* in, uint8_t* out,
                             size_t num_blocks);
void Sm4GenericCtr32EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                  const uint8_t* in, uint8_t* out, size_t num_blocks);
void Sm4GenericCtr128EncryptBlocks(const uint32_t rk[32], const uint8_t counter_block[16],
                                   const uint8_t* in, uint8_t* out, size_t num_blocks);
void Sm4GenericCbcDecryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                uint8_t* out, size_t num_blocks);
void Sm4GenericCbcEncryptBlocks(const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                uint8_t* out, size_t num_blocks);
void Sm4GenericCbcMacBlocks(const uint32_t rk[32], uint8_t y[16], const uint8_t* in,
                            size_t num_blocks);

// Sm4DispatchTable returns this architecture's back ends in priority order, generic
// last: sm4_table_x86_64.cc or sm4_table_aarch64.cc, whichever crypto/CMakeLists.txt
// compiles for CMAKE_SYSTEM_PROCESSOR, with the back ends it names.
absl::Span<const internal::BackendChoice<Sm4Kernels>> Sm4DispatchTable();

// kSm4Generic is the generic back end's entry (sm4_dispatch.cc), in every build.
extern const Sm4Kernels kSm4Generic;

// The x86-64 back ends (x86-64 builds only), each in its own file
// (sm4_<technique>_<width>.cc) holding only its S-box, target and table entry: the
// register operations of each width are sm4_ops_avx2.inc / sm4_ops_avx512.inc and every
// mode loop is written once in sm4_simd_impl.inc, compiled into each file, whose
// SimdKernels<W>() builds the entry.
extern const Sm4Kernels kSm4GfniAvx512;
extern const Sm4Kernels kSm4GfniAvx2;
extern const Sm4Kernels kSm4VaesAvx512;
extern const Sm4Kernels kSm4AesniAvx2;
// The arm64 back ends (aarch64 builds only): SM4E (sm4_ce.cc, FEAT_SM4) and TBL/TBX
// S-box lookups over the 256-byte table in registers (sm4_neon.cc, baseline Advanced SIMD).
extern const Sm4Kernels kSm4Ce;
extern const Sm4Kernels kSm4Neon;

// Sm4GenericTau applies the non-linear transform τ (§6.2.1: the S-box on each of the
// four bytes of `a`) in constant time. Used by the key schedule and by tests.
uint32_t Sm4GenericTau(uint32_t a);
// Sm4GenericTau16 applies τ to each of the 16 words `w[0..15]` at once, as the generic
// block function does (the 64-lane bitsliced path). For tests.
void Sm4GenericTau16(uint32_t w[16]);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_SM4_SM4_INTERNAL_H_
