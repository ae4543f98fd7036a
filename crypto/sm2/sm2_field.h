// sm2_field.h — arithmetic in GF(p) and Z/nZ for the curve sm2p256v1 (GB/T 32918.5-2017 §2),
// and the table of SM2 field back ends.
//
// Field elements are 4 little-endian 64-bit limbs in the Montgomery domain (x·R mod p,
// R = 2^256), always fully reduced (< p). p = 2^256 − 2^224 − 2^96 + 2^64 − 1, so
// −p⁻¹ mod 2^64 = 1 and the Montgomery quotient digit is the low limb itself. Scalars mod
// n use the same layout with their own Montgomery constant.
//
// Constant time: every function here runs in time independent of its operands (masks,
// no data-dependent branches or memory indices). Exponents of Fermat inversions and the
// square root are public constants. Nothing allocates.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_FIELD_H_
#define SMCRYPT_CRYPTO_SM2_SM2_FIELD_H_

#include <cstddef>
#include <cstdint>

namespace smcrypt::internal {

using Fe = uint64_t[4];

// Sm2Kernels is one SM2 field back end: Montgomery multiplication and squaring mod p,
// inputs and output fully reduced, output may alias inputs. `name` is the back-end name
// of DESIGN.md ("generic", "mulx_adx", ...); `required_features` are CpuFeature bits.
struct Sm2Kernels {
  const char* name;
  uint32_t required_features;
  void (*fe_mul)(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]);
  void (*fe_sqr)(uint64_t r[4], const uint64_t a[4]);
};

// The portable back end (unsigned __int128 products), defined in sm2_field_generic.cc.
extern const Sm2Kernels kSm2KernelsGeneric;

// Sm2ActiveKernels returns the back end chosen for this CPU (first in priority order
// whose features GetCpuFeatures() has), chosen once, thread-safe.
const Sm2Kernels& Sm2ActiveKernels();

// Sm2AllKernelsForTesting lists every compiled back end, supported here or not.
const Sm2Kernels* const* Sm2AllKernelsForTesting(size_t* count);

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
// FeInv sets r = a^(p−2) (a⁻¹, or 0 for a = 0), a fixed addition chain.
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
