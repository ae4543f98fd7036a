// sm2_field.h — arithmetic in GF(p) and Z/nZ for the curve sm2p256v1 (GB/T 32918.5-2017 §2),
// and the table of SM2 field back ends.
//
// Field elements are 4 little-endian 64-bit limbs in the Montgomery domain (x·R mod p,
// R = 2^256), always fully reduced (< p). p = 2^256 − 2^224 − 2^96 + 2^64 − 1, so
// −p⁻¹ mod 2^64 = 1 and the Montgomery quotient digit is the low limb itself. Scalars mod
// n use the same layout with their own Montgomery constant.
//
// Constant time: every function here runs in time independent of its operands (masks,
// no data-dependent branches or memory indices). Inversion mod p is Bernstein–Yang
// safegcd with a fixed divstep count; exponents of the Fermat inversion mod n and of the
// square root are public constants. Nothing allocates.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_FIELD_H_
#define SMCRYPT_CRYPTO_SM2_SM2_FIELD_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "crypto/cpu/backends.h"

namespace smcrypt::internal {

using Fe = uint64_t[4];

// Points: Jacobian (X, Y, Z) stands for (X/Z², Y/Z³), Z = 0 is the point at infinity;
// affine (x, y). Coordinates in Montgomery form, fully reduced (the same representation
// on every back end, so tables built by one back end serve all of them).
struct Sm2Jacobian {
  uint64_t X[4], Y[4], Z[4];
};

struct Sm2Affine {
  uint64_t x[4], y[4];
};

// Sm2CombTable is a fixed-base comb over a point P for signed w-bit windows (Booth):
// points[i·2^(w−1) + j] = (j + 1)·2^(w·i)·P (affine), for i < windows, j < 2^(w−1),
// w·windows ≥ 257. Built by sm2_comb_table.cc; public data.
struct Sm2CombTable {
  int w;
  int windows;
  const Sm2Affine* points;
};

// Sm2Kernels is one SM2 back end. fe_mul / fe_sqr are Montgomery multiplication and
// squaring mod p (inputs and output fully reduced, output may alias inputs); the other
// entries run whole scalar multiplications inside the back end, so the field operations
// inline into the point formulas (no indirect call per field operation).
// `name` is the back-end name of docs/design.md ("generic", "mulx_adx", ...);
// `required_features` are CpuFeature bits.
//
// Constant time: fe_*, fe_inv, mul_comb and mul_point are constant time in all their
// inputs (mul_comb reads every table row with masks). mul_two_vartime is NOT constant
// time: verification only, where every input is public.
struct Sm2Kernels {
  const char* name;
  uint32_t required_features;
  void (*fe_mul)(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
  void (*fe_sqr)(uint64_t r[4], const uint64_t a[4]);
  // fe_inv sets r = a⁻¹ (0 for a = 0), Montgomery form, by constant-time safegcd.
  void (*fe_inv)(uint64_t r[4], const uint64_t a[4]);
  // mul_comb sets r = scalar·P over the comb table of P (any scalar < 2^256), one
  // mixed addition per window and no doublings.
  void (*mul_comb)(Sm2Jacobian* r, const Sm2CombTable& table, const uint64_t scalar[4]);
  // mul_point sets r = scalar·p (any scalar < 2^256): signed 5-bit fixed windows over
  // 1p … 16p, complete additions.
  void (*mul_point)(Sm2Jacobian* r, const Sm2Affine& p, const uint64_t scalar[4]);
  // mul_two_vartime sets r = s·G + t·P for PUBLIC s, t, P (< 2^256): s·G from the comb
  // table `g`, t·P from `p_table` when given, else by width-5 wNAF with doublings.
  void (*mul_two_vartime)(Sm2Jacobian* r, const Sm2CombTable& g, const uint64_t s[4],
                          const Sm2Affine& p, const Sm2CombTable* p_table,
                          const uint64_t t[4]);
};

// The portable back end (unsigned __int128 products), defined in sm2_field_generic.cc.
extern const Sm2Kernels kSm2KernelsGeneric;
// x86-64 builds only: the MULX/ADCX/ADOX back end (BMI2 + ADX), defined in
// sm2_field_mulx_adx.cc, and the same with AVX2 masked table selects (BMI2 + ADX + AVX2),
// sm2_field_mulx_adx_avx2.cc.
extern const Sm2Kernels kSm2KernelsMulxAdx;
extern const Sm2Kernels kSm2KernelsMulxAdxAvx2;

// Sm2DispatchTable returns this architecture's field back ends in priority order,
// generic last: sm2_table_x86_64.cc or sm2_table_aarch64.cc, whichever
// crypto/CMakeLists.txt compiles for CMAKE_SYSTEM_PROCESSOR.
absl::Span<const BackendChoice<Sm2Kernels>> Sm2DispatchTable();

// Sm2ActiveKernels returns the back end chosen for this CPU (first in priority order
// whose features GetCpuFeatures() has), chosen once, thread-safe; or the override set
// by Sm2SetKernelsForTesting.
const Sm2Kernels& Sm2ActiveKernels();

// Sm2SetKernelsForTesting makes Sm2ActiveKernels() return `k` (tests and benchmarks run
// every back end through the public API); nullptr restores the dispatched choice.
// Sm2ActiveKernelName() keeps reporting the dispatched choice. The caller must only
// pass a back end whose features this CPU has. Thread-safe (atomic pointer).
void Sm2SetKernelsForTesting(const Sm2Kernels* k);

// Sm2AllKernelsForTesting lists every compiled back end, supported here or not.
const Sm2Kernels* const* Sm2AllKernelsForTesting(size_t* count);

// Sm2DispatchTableForTesting returns the dispatch table: the same back ends in the same
// order, with their capability predicates (crypto/cpu/backends.h).
absl::Span<const BackendChoice<Sm2Kernels>> Sm2DispatchTableForTesting();

// ---- Constants (little-endian limbs) ---------------------------------------------
inline constexpr uint64_t kSm2P[4] = {0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFF00000000ull,
                                      0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFEFFFFFFFFull};
inline constexpr uint64_t kSm2N[4] = {0x53BBF40939D54123ull, 0x7203DF6B21C6052Bull,
                                      0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFEFFFFFFFFull};
// Curve coefficient b and generator G = (xG, yG), GB/T 32918.5-2017 §2 (plain values;
// a = p − 3).
inline constexpr uint64_t kSm2B[4] = {0xDDBCBD414D940E93ull, 0xF39789F515AB8F92ull,
                                      0x4D5A9E4BCF6509A7ull, 0x28E9FA9E9D9F5E34ull};
inline constexpr uint64_t kSm2Gx[4] = {0x715A4589334C74C7ull, 0x8FE30BBFF2660BE1ull,
                                       0x5F9904466A39C994ull, 0x32C4AE2C1F198119ull};
inline constexpr uint64_t kSm2Gy[4] = {0x02DF32E52139F0A0ull, 0xD0A9877CC62A4740ull,
                                       0x59BDCEE36B692153ull, 0xBC3736A2F4F6779Cull};

// ---- Field GF(p), Montgomery domain -------------------------------------------------
// The multiplication goes through the active back end; the rest is shared code.
void FeMul(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
void FeSqr(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]);
void FeAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
void FeSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
void FeNeg(uint64_t r[4], const uint64_t a[4]);
void FeCopy(uint64_t r[4], const uint64_t a[4]);
void FeSetZero(uint64_t r[4]);
void FeSetOne(uint64_t r[4]);  // R mod p (Montgomery 1)
// FeIsZero returns ~0 if a == 0, else 0 (a fully reduced).
uint64_t FeIsZero(const uint64_t a[4]);
// FeEqual returns ~0 if a == b, else 0.
uint64_t FeEqual(const uint64_t a[4], const uint64_t b[4]);
// FeCmov sets r = a where mask is ~0; leaves r where mask is 0.
void FeCmov(uint64_t r[4], const uint64_t a[4], uint64_t mask);
// FeInv sets r = a⁻¹ (0 for a = 0, as a^(p−2) would give), through the back end's fe_inv
// (constant-time safegcd, sm2_modinv.cc).
void FeInv(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]);
// FeSqrtCandidate sets r = a^((p+1)/4); r is a square root of a iff r² = a (p ≡ 3 mod 4).
void FeSqrtCandidate(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]);
// FeFromBytes loads 32 big-endian bytes into Montgomery form. Returns ~0 if the value
// was < p, else 0 (then r holds the value reduced mod p; callers reject it).
uint64_t FeFromBytes(const Sm2Kernels& k, uint64_t r[4], const uint8_t in[32]);
// FeToBytes writes the canonical big-endian value of Montgomery-form a.
void FeToBytes(const Sm2Kernels& k, uint8_t out[32], const uint64_t a[4]);
// FeToPlain / FeFromPlain convert between Montgomery form and plain limbs (< p).
void FeToPlain(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]);
void FeFromPlain(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]);

// ---- Scalars Z/nZ ----------------------------------------------------------------
// Plain (non-Montgomery) scalars < n unless stated. ScMul multiplies plain values.
void ScAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
void ScSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
void ScMul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
// ScToMont sets r = a·2^256 mod n (Montgomery form mod n, for a < n); ScMontMul sets
// r = a·b·2^−256 mod n (a, b < n; the Montgomery constant −n⁻¹ mod 2^64 of n). So
// ScMontMul(ScToMont(a), b) = a·b mod n in one Montgomery multiplication.
void ScToMont(uint64_t r[4], const uint64_t a[4]);
void ScMontMul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
// ScInv sets r = a^(n−2) mod n (a⁻¹ for a ≠ 0; 0 for 0), fixed 4-bit windows over the
// public exponent.
void ScInv(uint64_t r[4], const uint64_t a[4]);
// ScReduceOnce maps any 256-bit value to its residue mod n (2^256 < 2n).
void ScReduceOnce(uint64_t r[4], const uint64_t a[4]);
// ScIsZero returns ~0 if a == 0, else 0.
uint64_t ScIsZero(const uint64_t a[4]);
// LtN returns ~0 if the 256-bit value a < n, else 0.
uint64_t LtN(const uint64_t a[4]);
// LtP returns ~0 if the 256-bit value a < p, else 0.
uint64_t LtP(const uint64_t a[4]);

// Byte conversions for plain 256-bit values.
void LimbsFromBytes(uint64_t r[4], const uint8_t in[32]);
void LimbsToBytes(uint8_t out[32], const uint64_t a[4]);

}  // namespace smcrypt::internal

#endif  // SMCRYPT_CRYPTO_SM2_SM2_FIELD_H_
