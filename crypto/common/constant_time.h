// constant_time.h — mask arithmetic for code that must not branch on secrets.
//
// The functions return all-ones or all-zero masks (BoringSSL's constant_time_*_w
// convention). ValueBarrier stops the optimizer from turning mask arithmetic back
// into branches. Nothing here branches on, or indexes memory by, its arguments.
#ifndef SMCRYPT_CRYPTO_COMMON_CONSTANT_TIME_H_
#define SMCRYPT_CRYPTO_COMMON_CONSTANT_TIME_H_

#include <cstddef>
#include <cstdint>

namespace smcrypt {

// ValueBarrier returns `v` unchanged through an empty asm the compiler cannot see into.
template <typename T>
inline T ValueBarrier(T v) {
  __asm__("" : "+r"(v) : :);
  return v;
}

// CtIsZero64 returns ~0 if `a` == 0, else 0.
inline uint64_t CtIsZero64(uint64_t a) {
  return ValueBarrier(0 - ((~a & (a - 1)) >> 63));
}
// CtEq64 returns ~0 if `a` == `b`, else 0.
inline uint64_t CtEq64(uint64_t a, uint64_t b) { return CtIsZero64(a ^ b); }
// CtIsZero32 / CtEq32: the same on 32-bit words.
inline uint32_t CtIsZero32(uint32_t a) {
  return ValueBarrier(0u - ((~a & (a - 1)) >> 31));
}
inline uint32_t CtEq32(uint32_t a, uint32_t b) { return CtIsZero32(a ^ b); }
// CtLt64 returns ~0 if `a` < `b` (unsigned), else 0.
inline uint64_t CtLt64(uint64_t a, uint64_t b) {
  return ValueBarrier(0 - ((a ^ ((a ^ b) | ((a - b) ^ a))) >> 63));
}
// CtSelect64 returns `a` where `mask` is ~0 and `b` where it is 0.
inline uint64_t CtSelect64(uint64_t mask, uint64_t a, uint64_t b) {
  return (mask & a) | (~mask & b);
}
inline uint32_t CtSelect32(uint32_t mask, uint32_t a, uint32_t b) {
  return (mask & a) | (~mask & b);
}

// CtMemEq compares `len` bytes of `a` and `b` in time that depends only on `len`.
// Returns true when equal. Use it for tags, MACs and padding checks, never memcmp.
inline bool CtMemEq(const void* a, const void* b, size_t len) {
  const uint8_t* x = static_cast<const uint8_t*>(a);
  const uint8_t* y = static_cast<const uint8_t*>(b);
  uint8_t acc = 0;
  for (size_t i = 0; i < len; ++i) acc |= x[i] ^ y[i];
  return ValueBarrier(static_cast<uint32_t>(acc)) == 0;
}

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_COMMON_CONSTANT_TIME_H_
