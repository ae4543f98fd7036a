// ghash_generic.cc — GHASH (NIST SP 800-38D §6.4), portable constant-time back end.
//
// Instructions: plain 64-bit integer MUL, shifts and XOR; no CPU feature required.
// Technique: carry-less multiplication by integer multiplication "with holes", as in
//   BearSSL's ghash_ctmul64 (T. Pornin). To multiply x and y carry-lessly in 64 bits,
//   each is split into four masks x_k = x & (0x1111…1 << k), k = 0..3, so set bits are
//   four positions apart. An integer product x_i · y_j then adds at most 16 one-bit
//   terms per column, and only the top column of the 64-bit word can reach 16, whose
//   carry leaves the word: every other column sum is ≤ 15 and fits in the three-bit
//   gap to the next column of the same residue class, so no carry ever lands on a bit
//   we keep. Summing (XOR) the four products whose residues add up to class k and
//   masking with class k's mask gives the carry-less product's bits of that class.
//   The upper 64 bits of a 64×64 carry-less product are the bit-reverse of the lower
//   half of the product of the bit-reversed operands (shifted by one).
//   A 128×128 product is three 64×64 ones (Karatsuba) for each half, six in all.
// Bit order: a block loaded big-endian as (y1, y0) holds x^0 at bit 63 of y1, so the
//   integers are the bit-reflected polynomials and their carry-less product is the
//   reflected 255-bit product; shifting it left by one makes it a reflected 256-bit
//   value, whose low 128 bits (degrees 128…255) are folded into the high 128 with
//   x^128 = x^7 + x^2 + x + 1 (the shifts by 1, 2, 7 and 63, 62, 57 below).
// Batch width: one block at a time (Horner's rule); only H itself is precomputed.
// Constant time: yes. No table, no branch on data; multiplications by MUL are constant
//   time on every 64-bit CPU smcrypt supports (x86-64, arm64).
#include <cstddef>
#include <cstdint>

#include "crypto/common/bytes.h"
#include "crypto/sm4/ghash.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::internal {

GhashKey::~GhashKey() { SecureZero(words, sizeof(words)); }

namespace {

constexpr uint64_t kHole0 = 0x1111111111111111ULL;
constexpr uint64_t kHole1 = 0x2222222222222222ULL;
constexpr uint64_t kHole2 = 0x4444444444444444ULL;
constexpr uint64_t kHole3 = 0x8888888888888888ULL;

// ClmulLow64 returns the low 64 bits of the carry-less product of x and y.
inline uint64_t ClmulLow64(uint64_t x, uint64_t y) {
  const uint64_t x0 = x & kHole0, x1 = x & kHole1, x2 = x & kHole2, x3 = x & kHole3;
  const uint64_t y0 = y & kHole0, y1 = y & kHole1, y2 = y & kHole2, y3 = y & kHole3;
  uint64_t z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
  uint64_t z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
  uint64_t z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
  uint64_t z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
  return (z0 & kHole0) | (z1 & kHole1) | (z2 & kHole2) | (z3 & kHole3);
}

// Rev64 reverses the bit order of x.
inline uint64_t Rev64(uint64_t x) {
  x = ((x & 0x5555555555555555ULL) << 1) | ((x >> 1) & 0x5555555555555555ULL);
  x = ((x & 0x3333333333333333ULL) << 2) | ((x >> 2) & 0x3333333333333333ULL);
  x = ((x & 0x0F0F0F0F0F0F0F0FULL) << 4) | ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL);
  x = ((x & 0x00FF00FF00FF00FFULL) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFULL);
  x = ((x & 0x0000FFFF0000FFFFULL) << 16) | ((x >> 16) & 0x0000FFFF0000FFFFULL);
  return (x << 32) | (x >> 32);
}

void GhashInitGeneric(GhashKey* key, const uint8_t h[kGhashBlockSize]) {
  *key = GhashKey();
  key->words[0] = LoadBe64(h);      // h1: x^0 … x^63
  key->words[1] = LoadBe64(h + 8);  // h0: x^64 … x^127
}

void GhashUpdateGeneric(uint8_t y[kGhashBlockSize], const GhashKey& key, const uint8_t* data,
                        size_t num_blocks) {
  const uint64_t h1 = key.words[0];
  const uint64_t h0 = key.words[1];
  const uint64_t h0r = Rev64(h0);
  const uint64_t h1r = Rev64(h1);
  const uint64_t h2 = h0 ^ h1;
  const uint64_t h2r = h0r ^ h1r;

  uint64_t y1 = LoadBe64(y);
  uint64_t y0 = LoadBe64(y + 8);
  for (size_t i = 0; i < num_blocks; ++i, data += kGhashBlockSize) {
    y1 ^= LoadBe64(data);
    y0 ^= LoadBe64(data + 8);
    const uint64_t y0r = Rev64(y0);
    const uint64_t y1r = Rev64(y1);
    const uint64_t y2 = y0 ^ y1;
    const uint64_t y2r = y0r ^ y1r;

    // Karatsuba: low halves from the operands, high halves from the reversed ones.
    const uint64_t z0 = ClmulLow64(y0, h0);
    const uint64_t z1 = ClmulLow64(y1, h1);
    uint64_t z2 = ClmulLow64(y2, h2);
    uint64_t z0h = ClmulLow64(y0r, h0r);
    uint64_t z1h = ClmulLow64(y1r, h1r);
    uint64_t z2h = ClmulLow64(y2r, h2r);
    z2 ^= z0 ^ z1;
    z2h ^= z0h ^ z1h;
    z0h = Rev64(z0h) >> 1;
    z1h = Rev64(z1h) >> 1;
    z2h = Rev64(z2h) >> 1;

    // The 255-bit reflected product v3:v2:v1:v0, shifted left by one bit.
    uint64_t v0 = z0;
    uint64_t v1 = z0h ^ z2;
    uint64_t v2 = z1 ^ z2h;
    uint64_t v3 = z1h;
    v3 = (v3 << 1) | (v2 >> 63);
    v2 = (v2 << 1) | (v1 >> 63);
    v1 = (v1 << 1) | (v0 >> 63);
    v0 = v0 << 1;

    // Reduction modulo x^128 + x^7 + x^2 + x + 1 (reflected: shifts by 1, 2, 7).
    v2 ^= v0 ^ (v0 >> 1) ^ (v0 >> 2) ^ (v0 >> 7);
    v1 ^= (v0 << 63) ^ (v0 << 62) ^ (v0 << 57);
    v3 ^= v1 ^ (v1 >> 1) ^ (v1 >> 2) ^ (v1 >> 7);
    v2 ^= (v1 << 63) ^ (v1 << 62) ^ (v1 << 57);

    y0 = v2;
    y1 = v3;
  }
  StoreBe64(y, y1);
  StoreBe64(y + 8, y0);
}

}  // namespace

extern const GhashKernels kGhashGeneric = {
    "generic",
    0,
    &GhashInitGeneric,
    &GhashUpdateGeneric,
};

}  // namespace smcrypt::internal
