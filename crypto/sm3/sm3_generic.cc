// sm3_generic.cc — portable SM3 compression function CF (GB/T 32905-2016 §5.3).
//
// Instructions: plain C++ on 32-bit words (add, xor, and/or/not, rotate); no CPU
// features required. Technique: the message expansion of §5.3.2 computes W_0..W_67 and
// W'_0..W'_63 for each block, then the 64 rounds of §5.3.3 run on A..H. Batch width: one
// block at a time. Constant time: there are no tables and no data-dependent branches or
// memory indices; the only branches depend on the round number and the block count.
#include <array>
#include <cstddef>
#include <cstdint>

#include "crypto/common/bytes.h"
#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt {
namespace {

// P0 and P1 are the permutations of §4.4.
inline uint32_t P0(uint32_t x) { return x ^ Rotl32(x, 9) ^ Rotl32(x, 17); }
inline uint32_t P1(uint32_t x) { return x ^ Rotl32(x, 15) ^ Rotl32(x, 23); }

// FF_j and GG_j are the boolean functions of §4.3: XOR for rounds 0..15, majority and
// choice for rounds 16..63.
inline uint32_t FF0(uint32_t x, uint32_t y, uint32_t z) { return x ^ y ^ z; }
inline uint32_t FF1(uint32_t x, uint32_t y, uint32_t z) { return (x & y) | (x & z) | (y & z); }
inline uint32_t GG0(uint32_t x, uint32_t y, uint32_t z) { return x ^ y ^ z; }
inline uint32_t GG1(uint32_t x, uint32_t y, uint32_t z) { return (x & y) | (~x & z); }

// Tj returns T_j <<< (j mod 32), the rotated round constant of §4.2 and §5.3.3
// (T_j = 79cc4519 for 0 <= j <= 15, 7a879d8a for 16 <= j <= 63).
constexpr uint32_t Tj(int j) { return Rotl32(j < 16 ? 0x79cc4519u : 0x7a879d8au, j % 32); }
constexpr std::array<uint32_t, 64> kTj = [] {
  std::array<uint32_t, 64> t{};
  for (int j = 0; j < 64; ++j) t[j] = Tj(j);
  return t;
}();

// Round is one iteration of §5.3.3 with FF_j/GG_j given as FF and GG, written so that
// the state rotation needs no moves: afterwards the new (A, B, C, D, E, F, G, H) are
// (d, a, b, c, h, e, f, g), so four calls with the names rotated (Round4) bring the
// names back. (Shifting all eight words each round costs gcc 12 about 14 register moves
// per round on aarch64, where the round itself is about 25 instructions.)
template <uint32_t (*FF)(uint32_t, uint32_t, uint32_t),
          uint32_t (*GG)(uint32_t, uint32_t, uint32_t)>
inline void Round(uint32_t a, uint32_t& b, uint32_t c, uint32_t& d, uint32_t e, uint32_t& f,
                  uint32_t g, uint32_t& h, uint32_t tj, uint32_t wj, uint32_t wj4) {
  const uint32_t a12 = Rotl32(a, 12);
  const uint32_t ss1 = Rotl32(a12 + e + tj, 7);
  const uint32_t ss2 = ss1 ^ a12;
  const uint32_t tt1 = FF(a, b, c) + d + ss2 + (wj ^ wj4);  // W'_j = W_j ⊕ W_{j+4}
  const uint32_t tt2 = GG(e, f, g) + h + ss1 + wj;
  b = Rotl32(b, 9);
  f = Rotl32(f, 19);
  d = tt1;
  h = P0(tt2);
}

// Round4 is rounds j..j+3.
template <uint32_t (*FF)(uint32_t, uint32_t, uint32_t),
          uint32_t (*GG)(uint32_t, uint32_t, uint32_t)>
inline void Round4(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d, uint32_t& e, uint32_t& f,
                   uint32_t& g, uint32_t& h, int j, const uint32_t w[68]) {
  Round<FF, GG>(a, b, c, d, e, f, g, h, kTj[j], w[j], w[j + 4]);
  Round<FF, GG>(d, a, b, c, h, e, f, g, kTj[j + 1], w[j + 1], w[j + 5]);
  Round<FF, GG>(c, d, a, b, g, h, e, f, kTj[j + 2], w[j + 2], w[j + 6]);
  Round<FF, GG>(b, c, d, a, f, g, h, e, kTj[j + 3], w[j + 3], w[j + 7]);
}

}  // namespace

void Sm3GenericCompressBlocks(uint32_t state[8], const uint8_t* data, size_t num_blocks) {
  uint32_t w[68];
  for (size_t blk = 0; blk < num_blocks; ++blk, data += 64) {
    // §5.3.2 message expansion.
    for (int j = 0; j < 16; ++j) w[j] = LoadBe32(data + 4 * j);
    for (int j = 16; j < 68; ++j) {
      w[j] = P1(w[j - 16] ^ w[j - 9] ^ Rotl32(w[j - 3], 15)) ^ Rotl32(w[j - 13], 7) ^ w[j - 6];
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    // §5.3.3 the 64 rounds of CF.
    for (int j = 0; j < 16; j += 4) Round4<FF0, GG0>(a, b, c, d, e, f, g, h, j, w);
    for (int j = 16; j < 64; j += 4) Round4<FF1, GG1>(a, b, c, d, e, f, g, h, j, w);
    state[0] ^= a;
    state[1] ^= b;
    state[2] ^= c;
    state[3] ^= d;
    state[4] ^= e;
    state[5] ^= f;
    state[6] ^= g;
    state[7] ^= h;
  }
  // The expanded message words derive from possibly secret input (HMAC keys, KDF input).
  SecureZero(w, sizeof(w));
}

}  // namespace smcrypt
