// bytes.h — big-endian loads/stores and rotations used by the SM kernels.
// All functions are branch-free on their data and safe on unaligned pointers.
#ifndef SMCRYPT_CRYPTO_COMMON_BYTES_H_
#define SMCRYPT_CRYPTO_COMMON_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace smcrypt {

// LoadBe32 reads 4 bytes at `in` as a big-endian 32-bit word.
inline uint32_t LoadBe32(const uint8_t* in) {
  return (uint32_t{in[0]} << 24) | (uint32_t{in[1]} << 16) | (uint32_t{in[2]} << 8) |
         uint32_t{in[3]};
}

// StoreBe32 writes `v` to 4 bytes at `out`, most significant byte first.
inline void StoreBe32(uint8_t* out, uint32_t v) {
  out[0] = static_cast<uint8_t>(v >> 24);
  out[1] = static_cast<uint8_t>(v >> 16);
  out[2] = static_cast<uint8_t>(v >> 8);
  out[3] = static_cast<uint8_t>(v);
}

// LoadBe64 reads 8 bytes at `in` as a big-endian 64-bit word.
inline uint64_t LoadBe64(const uint8_t* in) {
  return (uint64_t{LoadBe32(in)} << 32) | LoadBe32(in + 4);
}

// StoreBe64 writes `v` to 8 bytes at `out`, most significant byte first.
inline void StoreBe64(uint8_t* out, uint64_t v) {
  StoreBe32(out, static_cast<uint32_t>(v >> 32));
  StoreBe32(out + 4, static_cast<uint32_t>(v));
}

// Rotl32 rotates `x` left by `n` bits, 0 <= n < 32 (n is never secret).
inline constexpr uint32_t Rotl32(uint32_t x, unsigned n) {
  return (x << (n & 31)) | (x >> ((32 - n) & 31));
}

// BytePtr views a string's storage as bytes.
inline const uint8_t* BytePtr(const char* p) { return reinterpret_cast<const uint8_t*>(p); }
inline uint8_t* BytePtr(char* p) { return reinterpret_cast<uint8_t*>(p); }

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_COMMON_BYTES_H_
