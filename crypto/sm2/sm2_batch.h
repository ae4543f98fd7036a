// sm2_batch.h — SM2 signing and verification of many items at once (multi-buffer), and
// the 8-lane AVX-512 IFMA back end `ifma_avx512` behind it.
//
// Internal header (crypto core, tests, bench). Not part of the public API.
//
// ifma_avx512: each zmm register holds one 52-bit limb of 8 independent field elements
// (8 lanes × 5 limbs, radix 2^52), multiplied with VPMADD52LUQ/VPMADD52HUQ. Field
// elements are in Montgomery form with R' = 2^260 (five 52-bit digits; −p⁻¹ mod 2^52 = 1
// for SM2's p, so the quotient digit is the low digit itself), kept normalized (every
// limb < 2^52) and almost reduced (< 2p). Conversions to and from the 4×64-bit form of
// sm2_field.h (R = 2^256) are one multiplication by 2^264 mod p or 2^256 mod p.
//
// Batches: k·G of up to 8 signatures runs as one 8-lane comb over G's 7-bit table (one
// mixed addition per window; every lane reads every row of the window with masked
// broadcasts, so no address depends on a secret digit); the affine x of all the batch's
// k·G comes from one constant-time inversion (Montgomery's trick). Verification runs
// s·G + t·P of 8 signatures in lanes over G's comb and each key's cached comb table
// (variable time: public data only). On CPUs without AVX-512 IFMA (or with `ifma` or
// `avx512` masked by SMCRYPT_CPU_DISABLE) every item takes the single-operation path;
// results are the same either way.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_BATCH_H_
#define SMCRYPT_CRYPTO_SM2_SM2_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm2.h"

// SMCRYPT_SM2_HAVE_IFMA is defined (by crypto/CMakeLists.txt, x86-64 builds only) when
// this build compiles the ifma_avx512 kernels of sm2_ifma.cc; without it sm2_ifma.cc
// defines the entry points with empty bodies only so that the tree links,
// Sm2IfmaSupported() is false and dispatch never calls them.

namespace smcrypt {

class Sm2PublicKeyCache;

namespace internal {

class Sm2PointTable;

// kSm2HaveIfma is whether this build has the ifma_avx512 kernels (SMCRYPT_SM2_HAVE_IFMA).
#if defined(SMCRYPT_SM2_HAVE_IFMA)
inline constexpr bool kSm2HaveIfma = true;
#else
inline constexpr bool kSm2HaveIfma = false;
#endif

// Number of lanes of the IFMA kernels.
inline constexpr int kSm2IfmaLanes = 8;
// A last group of fewer items than this runs on the single path (8 lanes cost about as
// much as 3–4 single operations).
inline constexpr size_t kSm2IfmaMinLanes = 4;
// Words of one affine point in the IFMA tables: x then y, 5 limbs of 52 bits each,
// Montgomery form with R' = 2^260, fully reduced.
inline constexpr int kSm2IfmaPointWords = 10;

// CPU features the IFMA kernels need: AVX-512 (F, BW, VL, DQ) and IFMA.
inline constexpr uint32_t kSm2IfmaRequiredFeatures = kCpuAvx512 | kCpuIfma;

// The IFMA choice, made in sm2_dispatch.cc with the field back end's:
//
// Sm2IfmaSupported reports whether this build has the IFMA kernels and GetCpuFeatures()
// has kSm2IfmaRequiredFeatures (so SMCRYPT_CPU_DISABLE=ifma or avx512 turns it off).
bool Sm2IfmaSupported();

// Sm2BatchUsesIfma reports whether the batch functions below take the IFMA path now:
// Sm2IfmaSupported() and not switched off by Sm2SetBatchIfmaForTesting(false).
bool Sm2BatchUsesIfma();

// Sm2SetBatchIfmaForTesting(false) makes the batch functions take the single-operation
// path on every item; true restores the default (IFMA where supported). Thread-safe.
void Sm2SetBatchIfmaForTesting(bool enabled);

// Sm2AffineToIfma writes p (4×64 Montgomery form) as kSm2IfmaPointWords words.
void Sm2AffineToIfma(const Sm2Affine& p, uint64_t out[kSm2IfmaPointWords]);

// ---- IFMA kernels (sm2_ifma.cc; call only when Sm2IfmaSupported()) ---------------------

// Sm2IfmaMulBase8 sets r[l] = k[l]·G for 8 lanes (plain scalars, each in [1, n − 1]; a
// lane with k = 0 gives the point at infinity), 4×64 Montgomery form, fully reduced.
// Constant time in k: Booth digits by masks, all 64 entries of every window read for
// every lane with masked broadcasts, infinity cases resolved by lane masks.
void Sm2IfmaMulBase8(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t k[kSm2IfmaLanes][4]);

// Sm2IfmaMulPointTable8 sets r[l] = k[l]·P for 8 lanes of secret scalars (as
// Sm2IfmaMulBase8) and ONE point P given by its comb table in IFMA words
// (Sm2PointTable::points52(): kSm2PointTableWindows windows × 16 points). Constant time
// in k, as Sm2IfmaMulBase8: the same comb over another table.
void Sm2IfmaMulPointTable8(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t k[kSm2IfmaLanes][4],
                           const uint64_t* p_table);

// Sm2IfmaMulTwo8Vt sets r[l] = s[l]·G + t[l]·P_l for 8 lanes of PUBLIC s, t (< 2^256),
// where P_l's comb table (kSm2IfmaPointWords words per point, layout of Sm2PointTable:
// 52 windows × 16 points) is p_tables[l]. VARIABLE TIME. exceptional[l] is set to 1
// when lane l met a case the incomplete mixed addition does not cover (the accumulator
// equal to ± the added point); r[l] is then meaningless and the caller must recompute
// that lane another way. Lanes with p_tables[l] == nullptr compute s·G only.
void Sm2IfmaMulTwo8Vt(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t s[kSm2IfmaLanes][4],
                      const uint64_t* const p_tables[kSm2IfmaLanes],
                      const uint64_t t[kSm2IfmaLanes][4], uint8_t exceptional[kSm2IfmaLanes]);

// Sm2IfmaMulTwo8PointsVt is Sm2IfmaMulTwo8Vt for points without comb tables: p[l] is
// lane l's public point (4×64 Montgomery form, on the curve, not infinity); t·P by
// signed 5-bit windows with doublings in the lanes. VARIABLE TIME; exceptional as above.
void Sm2IfmaMulTwo8PointsVt(Sm2Jacobian r[kSm2IfmaLanes], const uint64_t s[kSm2IfmaLanes][4],
                            const Sm2Affine p[kSm2IfmaLanes], const uint64_t t[kSm2IfmaLanes][4],
                            uint8_t exceptional[kSm2IfmaLanes]);

// Sm2IfmaFieldOpForTesting runs one 8-lane field operation on 4×64 Montgomery-form
// inputs (any values < 2^256, taken mod p): op 0 = a·b·2^−256, 1 = a²·2^−256, 2 = a + b,
// 3 = a − b (mod p), through the radix-2^52 representation; outputs fully reduced.
void Sm2IfmaFieldOpForTesting(int op, uint64_t r[kSm2IfmaLanes][4],
                              const uint64_t a[kSm2IfmaLanes][4],
                              const uint64_t b[kSm2IfmaLanes][4]);

// ---- Batches ------------------------------------------------------------------------

// Sm2SignDigestBatchCore signs digests[i] (32 bytes each, GB/T 32918.2 §6.1 A3–A7) with
// *keys[i], writing raw r ‖ s (64 bytes) or the item's error to out[i]; keys.size(),
// digests.size() and out.size() must be equal. Nonces come from next_k in item order (a
// rejected k is replaced by calling next_k again for that item). Errors per item as
// Sm2SignDigest: InvalidArgument for a digest that is not 32 bytes or a nonce out of range.
void Sm2SignDigestBatchCore(absl::Span<const Sm2PrivateKey* const> keys,
                            absl::Span<const absl::string_view> digests, Sm2NonceSource next_k,
                            absl::Span<absl::StatusOr<std::string>> out);

// Sm2SignDigestBatch is Sm2SignDigestBatchCore with fresh CSPRNG nonces.
void Sm2SignDigestBatch(absl::Span<const Sm2PrivateKey* const> keys,
                        absl::Span<const absl::string_view> digests,
                        absl::Span<absl::StatusOr<std::string>> out);

// Sm2VerifyBatchItem is one verification: the key's cache (its comb table, once built,
// serves the lanes; keys without one run t·P with doublings in the lanes),
// the 32-byte digest e and the raw 64-byte signature r ‖ s.
struct Sm2VerifyBatchItem {
  const Sm2PublicKeyCache* key;
  absl::string_view e;
  absl::string_view signature;
};

// Sm2VerifyDigestBatch verifies every item (GB/T 32918.2 §7.1), out[i] being what
// Sm2VerifyDigest returns for item i: OK, Unauthenticated("signature invalid"), or
// InvalidArgument for wrong sizes. items.size() == out.size().
void Sm2VerifyDigestBatch(absl::Span<const Sm2VerifyBatchItem> items, absl::Span<absl::Status> out);

// ---- Ephemeral Diffie–Hellman (HPKE DHKEM(SM2) Encap, SM2 encryption C1 and [k]P_B) --

// Sm2EphemeralDh is one ephemeral key agreement with a recipient's public key P: for a
// fresh k ∈ [1, n − 1], `c1` is k·G as 04 ‖ x1 ‖ y1 (65 bytes, public: HPKE's enc, SM2's
// C1) and `shared` is k·P as x2 ‖ y2 (64 bytes, big-endian, SECRET; HPKE's DH output is
// x2, SM2 encryption's KDF input is x2 ‖ y2). k itself is wiped before the call returns.
// The destructor wipes `shared`.
struct Sm2EphemeralDh {
  uint8_t c1[kSm2PointSize];
  uint8_t shared[2 * kSm2ScalarSize];
  Sm2EphemeralDh() = default;
  Sm2EphemeralDh(const Sm2EphemeralDh&) = delete;
  Sm2EphemeralDh& operator=(const Sm2EphemeralDh&) = delete;
  ~Sm2EphemeralDh();
};

// Sm2EphemeralDhBatchCore fills every out[i] with its own k from next_k (item order).
// The work of many items is shared: on the IFMA back end k·G of 8 items at a time runs
// in lanes (Sm2IfmaMulBase8) and so does k·P when the recipient's comb table exists
// (Sm2IfmaMulPointTable8; a call counts as one use of the cache, so the table appears
// after Sm2PublicKeyCache::kBuildAfterUses calls); a last group of fewer than
// kSm2IfmaMinLanes items, and every item without IFMA, uses the single-operation
// constant-time multiplications. All 2·out.size() points become affine with one
// constant-time inversion (Montgomery's trick). Constant time in every k.
// Errors: the nonce source's; InvalidArgument "SM2 nonce k out of range [1, n-1]" for a
// candidate out of range (then no item is filled).
absl::Status Sm2EphemeralDhBatchCore(const Sm2PublicKeyCache& recipient, Sm2NonceSource next_k,
                                     absl::Span<Sm2EphemeralDh> out);

// Sm2EphemeralDhCore is Sm2EphemeralDhBatchCore for a recipient given as a key and its
// comb table (nullptr: none), without counting uses. SM2 encryption uses it for one item
// (k·G and k·P made affine with a single inversion).
absl::Status Sm2EphemeralDhCore(const Sm2PublicKey& recipient, const Sm2PointTable* table,
                                Sm2NonceSource next_k, absl::Span<Sm2EphemeralDh> out);

// Sm2EphemeralDhBatch is Sm2EphemeralDhBatchCore with fresh CSPRNG scalars.
absl::Status Sm2EphemeralDhBatch(const Sm2PublicKeyCache& recipient,
                                 absl::Span<Sm2EphemeralDh> out);

}  // namespace internal
}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_SM2_SM2_BATCH_H_
