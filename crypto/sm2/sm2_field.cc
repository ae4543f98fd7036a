// sm2_field.cc — GF(p) and Z/nZ arithmetic for sm2p256v1 shared by every back end:
// additions, conversions, Fermat inversions and the square root. See sm2_field.h.
#include "crypto/sm2/sm2_field.h"

#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/sm2/sm2_montgomery.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::internal {
namespace {

struct Limbs {
  uint64_t v[4];
};

// ComputeRR returns 2^512 mod m for m > 2^255 by doubling 2^256 mod m 256 times.
constexpr Limbs ComputeRR(const uint64_t m[4]) {
  Limbs x{};
  uint64_t borrow = 0;
  for (int j = 0; j < 4; ++j) {  // x = 2^256 − m
    const u128 acc = static_cast<u128>(0) - m[j] - borrow;
    x.v[j] = static_cast<uint64_t>(acc);
    borrow = static_cast<uint64_t>(acc >> 64) & 1;
  }
  for (int i = 0; i < 256; ++i) {
    uint64_t t[4] = {};
    const uint64_t hi = x.v[3] >> 63;
    for (int j = 3; j > 0; --j) t[j] = (x.v[j] << 1) | (x.v[j - 1] >> 63);
    t[0] = x.v[0] << 1;
    uint64_t s[4] = {};
    borrow = 0;
    for (int j = 0; j < 4; ++j) {
      const u128 acc = static_cast<u128>(t[j]) - m[j] - borrow;
      s[j] = static_cast<uint64_t>(acc);
      borrow = static_cast<uint64_t>(acc >> 64) & 1;
    }
    const bool keep = hi < borrow;
    for (int j = 0; j < 4; ++j) x.v[j] = keep ? t[j] : s[j];
  }
  return x;
}

// ComputeR returns 2^256 mod m = 2^256 − m.
constexpr Limbs ComputeR(const uint64_t m[4]) {
  Limbs x{};
  uint64_t borrow = 0;
  for (int j = 0; j < 4; ++j) {
    const u128 acc = static_cast<u128>(0) - m[j] - borrow;
    x.v[j] = static_cast<uint64_t>(acc);
    borrow = static_cast<uint64_t>(acc >> 64) & 1;
  }
  return x;
}

constexpr Limbs kRRp = ComputeRR(kSm2P);
constexpr Limbs kRp = ComputeR(kSm2P);
constexpr Limbs kRRn = ComputeRR(kSm2N);
constexpr Limbs kRn = ComputeR(kSm2N);
constexpr uint64_t kN0 = MontNegInv64(kSm2N[0]);
constexpr uint64_t kOne[4] = {1, 0, 0, 0};

static_assert(kSm2N[0] * (0 - kN0) == 1, "n0 must be -n^-1 mod 2^64");

// LtMod returns ~0 if a < m.
uint64_t LtMod(const uint64_t a[4], const uint64_t m[4]) {
  uint64_t borrow = 0;
  for (int j = 0; j < 4; ++j) {
    const u128 acc = static_cast<u128>(a[j]) - m[j] - borrow;
    borrow = static_cast<uint64_t>(acc >> 64) & 1;
  }
  return ValueBarrier(0 - borrow);
}

void FeSqrN(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4], int n) {
  k.fe_sqr(r, a);
  for (int i = 1; i < n; ++i) k.fe_sqr(r, r);
}

// FeChain computes a^(2^2 − 1), a^(2^31 − 1), a^(2^32 − 1) and a^(2^62 − 1), the
// building blocks of both p − 2 and (p + 1)/4 (runs of ones in their binary forms).
void FeChain(const Sm2Kernels& k, const uint64_t a[4], uint64_t x2[4], uint64_t x31[4],
             uint64_t x32[4], uint64_t x62[4]) {
  uint64_t x3[4], x6[4], x12[4], x15[4], x30[4];
  k.fe_sqr(x2, a);
  k.fe_mul(x2, x2, a);  // 2^2 − 1
  k.fe_sqr(x3, x2);
  k.fe_mul(x3, x3, a);  // 2^3 − 1
  FeSqrN(k, x6, x3, 3);
  k.fe_mul(x6, x6, x3);  // 2^6 − 1
  FeSqrN(k, x12, x6, 6);
  k.fe_mul(x12, x12, x6);  // 2^12 − 1
  FeSqrN(k, x15, x12, 3);
  k.fe_mul(x15, x15, x3);  // 2^15 − 1
  FeSqrN(k, x30, x15, 15);
  k.fe_mul(x30, x30, x15);  // 2^30 − 1
  k.fe_sqr(x31, x30);
  k.fe_mul(x31, x31, a);  // 2^31 − 1
  FeSqrN(k, x32, x30, 2);
  k.fe_mul(x32, x32, x2);  // 2^32 − 1
  FeSqrN(k, x62, x31, 31);
  k.fe_mul(x62, x62, x31);  // 2^62 − 1
  SecureZero(x3, sizeof(x3));
  SecureZero(x6, sizeof(x6));
  SecureZero(x12, sizeof(x12));
  SecureZero(x15, sizeof(x15));
  SecureZero(x30, sizeof(x30));
}

}  // namespace

void FeMul(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  k.fe_mul(r, a, b);
}
void FeSqr(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]) { k.fe_sqr(r, a); }
void FeAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { ModAdd(r, a, b, kSm2P); }
void FeSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { ModSub(r, a, b, kSm2P); }
void FeNeg(uint64_t r[4], const uint64_t a[4]) {
  const uint64_t zero[4] = {0, 0, 0, 0};
  ModSub(r, zero, a, kSm2P);
}
void FeCopy(uint64_t r[4], const uint64_t a[4]) {
  for (int j = 0; j < 4; ++j) r[j] = a[j];
}
void FeSetZero(uint64_t r[4]) {
  for (int j = 0; j < 4; ++j) r[j] = 0;
}
void FeSetOne(uint64_t r[4]) {
  for (int j = 0; j < 4; ++j) r[j] = kRp.v[j];
}
uint64_t FeIsZero(const uint64_t a[4]) { return CtIsZero64(a[0] | a[1] | a[2] | a[3]); }
uint64_t FeEqual(const uint64_t a[4], const uint64_t b[4]) {
  return CtIsZero64((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}
void FeCmov(uint64_t r[4], const uint64_t a[4], uint64_t mask) {
  for (int j = 0; j < 4; ++j) r[j] = CtSelect64(mask, a[j], r[j]);
}

void FeInv(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]) { k.fe_inv(r, a); }

void FeSqrtCandidate(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]) {
  // (p + 1)/4 = 1^31 0 1^128 0^31 1 0^62.
  uint64_t x2[4], x31[4], x32[4], x62[4], t[4];
  FeChain(k, a, x2, x31, x32, x62);
  k.fe_sqr(t, x31);
  for (int i = 0; i < 4; ++i) {
    FeSqrN(k, t, t, 32);
    k.fe_mul(t, t, x32);
  }
  FeSqrN(k, t, t, 32);
  k.fe_mul(t, t, a);
  FeSqrN(k, r, t, 62);
  SecureZero(x2, sizeof(x2));
  SecureZero(x31, sizeof(x31));
  SecureZero(x32, sizeof(x32));
  SecureZero(x62, sizeof(x62));
  SecureZero(t, sizeof(t));
}

void LimbsFromBytes(uint64_t r[4], const uint8_t in[32]) {
  for (int j = 0; j < 4; ++j) r[j] = LoadBe64(in + 8 * (3 - j));
}
void LimbsToBytes(uint8_t out[32], const uint64_t a[4]) {
  for (int j = 0; j < 4; ++j) StoreBe64(out + 8 * (3 - j), a[j]);
}

uint64_t LtP(const uint64_t a[4]) { return LtMod(a, kSm2P); }
uint64_t LtN(const uint64_t a[4]) { return LtMod(a, kSm2N); }

void FeFromPlain(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]) {
  k.fe_mul(r, a, kRRp.v);
}
void FeToPlain(const Sm2Kernels& k, uint64_t r[4], const uint64_t a[4]) {
  k.fe_mul(r, a, kOne);
}

uint64_t FeFromBytes(const Sm2Kernels& k, uint64_t r[4], const uint8_t in[32]) {
  uint64_t t[4];
  LimbsFromBytes(t, in);
  const uint64_t ok = LtP(t);
  MontFinalSub(t, t, 0, kSm2P);
  FeFromPlain(k, r, t);
  SecureZero(t, sizeof(t));
  return ok;
}

void FeToBytes(const Sm2Kernels& k, uint8_t out[32], const uint64_t a[4]) {
  uint64_t t[4];
  FeToPlain(k, t, a);
  LimbsToBytes(out, t);
  SecureZero(t, sizeof(t));
}

// ---- Scalars ---------------------------------------------------------------------

void ScAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { ModAdd(r, a, b, kSm2N); }
void ScSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { ModSub(r, a, b, kSm2N); }
void ScMul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  uint64_t t[4];
  MontMul(t, a, b, kSm2N, kN0);      // a·b·R⁻¹
  MontMul(r, t, kRRn.v, kSm2N, kN0);  // a·b
  SecureZero(t, sizeof(t));
}

void ScToMont(uint64_t r[4], const uint64_t a[4]) { MontMul(r, a, kRRn.v, kSm2N, kN0); }
void ScMontMul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  MontMul(r, a, b, kSm2N, kN0);
}

void ScInv(uint64_t r[4], const uint64_t a[4]) {
  // Fixed 4-bit windows over the public exponent n − 2; the table index is public.
  uint64_t e[4];
  const uint64_t two[4] = {2, 0, 0, 0};
  uint64_t borrow = 0;
  for (int j = 0; j < 4; ++j) {
    const u128 acc = static_cast<u128>(kSm2N[j]) - two[j] - borrow;
    e[j] = static_cast<uint64_t>(acc);
    borrow = static_cast<uint64_t>(acc >> 64) & 1;
  }
  uint64_t table[16][4];
  for (int j = 0; j < 4; ++j) table[0][j] = kRn.v[j];
  MontMul(table[1], a, kRRn.v, kSm2N, kN0);
  for (int i = 2; i < 16; ++i) MontMul(table[i], table[i - 1], table[1], kSm2N, kN0);
  uint64_t acc[4];
  for (int j = 0; j < 4; ++j) acc[j] = table[e[3] >> 60][j];
  for (int pos = 251; pos >= 0; pos -= 4) {
    for (int s = 0; s < 4; ++s) MontMul(acc, acc, acc, kSm2N, kN0);
    const unsigned nibble = static_cast<unsigned>(e[(pos - 3) / 64] >> ((pos - 3) % 64)) & 15;
    MontMul(acc, acc, table[nibble], kSm2N, kN0);
  }
  MontMul(r, acc, kOne, kSm2N, kN0);
  SecureZero(table, sizeof(table));
  SecureZero(acc, sizeof(acc));
}

void ScReduceOnce(uint64_t r[4], const uint64_t a[4]) { MontFinalSub(r, a, 0, kSm2N); }

uint64_t ScIsZero(const uint64_t a[4]) { return CtIsZero64(a[0] | a[1] | a[2] | a[3]); }

}  // namespace smcrypt::internal
