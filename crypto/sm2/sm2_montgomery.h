// sm2_montgomery.h — 4×64-bit Montgomery multiplication for any odd 256-bit modulus
// m > 2^255, with unsigned __int128 products (CIOS, Koç–Acar–Kaliski 1996). Shared by the
// generic field back end (m = p, m0 = 1) and the scalar arithmetic mod n.
//
// Constant time: straight-line code; the final reduction is a masked select.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_MONTGOMERY_H_
#define SMCRYPT_CRYPTO_SM2_SM2_MONTGOMERY_H_

#include <cstdint>

namespace smcrypt::internal {

using u128 = unsigned __int128;

// MontFinalSub sets r = (hi·2^256 + t) − m if that is ≥ 0, else t; requires the value
// < 2m. r may alias t.
inline void MontFinalSub(uint64_t r[4], const uint64_t t[4], uint64_t hi, const uint64_t m[4]) {
  uint64_t s[4];
  u128 acc = 0;
  uint64_t borrow = 0;
  for (int j = 0; j < 4; ++j) {
    acc = static_cast<u128>(t[j]) - m[j] - borrow;
    s[j] = static_cast<uint64_t>(acc);
    borrow = static_cast<uint64_t>(acc >> 64) & 1;
  }
  acc = static_cast<u128>(hi) - borrow;
  const uint64_t keep = static_cast<uint64_t>(acc >> 64);  // ~0 when t < m
  for (int j = 0; j < 4; ++j) r[j] = (t[j] & keep) | (s[j] & ~keep);
}

// MontMul sets r = a·b·2^−256 mod m for a, b < m; m0 = −m⁻¹ mod 2^64. r may alias.
inline void MontMul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t m[4],
                    uint64_t m0) {
  uint64_t t[6] = {0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    u128 c = 0;
    for (int j = 0; j < 4; ++j) {
      c += static_cast<u128>(a[i]) * b[j] + t[j];
      t[j] = static_cast<uint64_t>(c);
      c >>= 64;
    }
    c += t[4];
    t[4] = static_cast<uint64_t>(c);
    t[5] = static_cast<uint64_t>(c >> 64);
    const uint64_t u = t[0] * m0;
    c = static_cast<u128>(u) * m[0] + t[0];
    c >>= 64;
    for (int j = 1; j < 4; ++j) {
      c += static_cast<u128>(u) * m[j] + t[j];
      t[j - 1] = static_cast<uint64_t>(c);
      c >>= 64;
    }
    c += t[4];
    t[3] = static_cast<uint64_t>(c);
    t[4] = t[5] + static_cast<uint64_t>(c >> 64);
  }
  MontFinalSub(r, t, t[4], m);
}

// ModAdd sets r = a + b mod m for a, b < m.
inline void ModAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t m[4]) {
  uint64_t t[4];
  u128 c = 0;
  for (int j = 0; j < 4; ++j) {
    c += static_cast<u128>(a[j]) + b[j];
    t[j] = static_cast<uint64_t>(c);
    c >>= 64;
  }
  MontFinalSub(r, t, static_cast<uint64_t>(c), m);
}

// ModSub sets r = a − b mod m for a, b < m.
inline void ModSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4], const uint64_t m[4]) {
  uint64_t t[4];
  u128 acc;
  uint64_t borrow = 0;
  for (int j = 0; j < 4; ++j) {
    acc = static_cast<u128>(a[j]) - b[j] - borrow;
    t[j] = static_cast<uint64_t>(acc);
    borrow = static_cast<uint64_t>(acc >> 64) & 1;
  }
  const uint64_t mask = 0 - borrow;
  u128 c = 0;
  for (int j = 0; j < 4; ++j) {
    c += static_cast<u128>(t[j]) + (m[j] & mask);
    r[j] = static_cast<uint64_t>(c);
    c >>= 64;
  }
}

// MontNegInv64 returns −m⁻¹ mod 2^64 for odd m (Newton iteration), usable in constexpr.
constexpr uint64_t MontNegInv64(uint64_t m) {
  uint64_t x = 1;
  for (int i = 0; i < 7; ++i) x *= 2 - m * x;  // x = m⁻¹ mod 2^(2^(i+1))
  return 0 - x;
}

}  // namespace smcrypt::internal

#endif  // SMCRYPT_CRYPTO_SM2_SM2_MONTGOMERY_H_
