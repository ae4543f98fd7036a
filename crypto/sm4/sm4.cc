// sm4.cc — SM4 key schedule (GB/T 32907-2016 §7.3) and the block API over the back end
// that dispatch chose (sm4_dispatch.cc).
#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

// The system parameter FK (§7.3).
constexpr uint32_t kFk[4] = {0xa3b1bac6, 0x56aa3350, 0x677d9197, 0xb27022dc};

// CK_i (§7.3): byte j of CK_i is ck_{i,j} = (4i + j) × 7 mod 256.
constexpr uint32_t Ck(int i) {
  uint32_t w = 0;
  for (int j = 0; j < 4; ++j) w = (w << 8) | (((4 * i + j) * 7) & 0xff);
  return w;
}

// L' of the key schedule (§7.3).
inline uint32_t LPrime(uint32_t b) { return b ^ Rotl32(b, 13) ^ Rotl32(b, 23); }

void ExpandKeyUnchecked(const uint8_t key[kSm4KeySize], Sm4Key* out) {
  uint32_t k[4];
  for (int i = 0; i < 4; ++i) k[i] = LoadBe32(key + 4 * i) ^ kFk[i];
  // rk_i = K_{i+4} = K_i ⊕ T'(K_{i+1} ⊕ K_{i+2} ⊕ K_{i+3} ⊕ CK_i), T' = L'∘τ.
  for (int i = 0; i < kSm4Rounds; ++i) {
    const uint32_t t = k[(i + 1) % 4] ^ k[(i + 2) % 4] ^ k[(i + 3) % 4] ^ Ck(i);
    k[i % 4] ^= LPrime(Sm4GenericTau(t));
    out->rk_enc[i] = k[i % 4];
    out->rk_dec[kSm4Rounds - 1 - i] = k[i % 4];  // §7.2: decryption uses rk in reverse
  }
  SecureZero(k, sizeof(k));
}

// WideSelfTest checks the active back end's wide paths against the generic one, which
// the single-block known answer below anchors to the standard: ECB in both directions,
// CTR with 32- and 128-bit counters (both wrapping inside a batch), CBC decryption and
// encryption and the CBC-MAC over 119 blocks (64 + 32 + 16 + 4 + 3: every batch size
// of the widest back end, masked tails included), and the multi-buffer CBC entries on
// 16 jobs of 0–7 blocks with their own keys. The input is a fixed public pattern.
bool WideSelfTest(const Sm4Kernels& k, const Sm4Key& key) {
  constexpr size_t kBlocks = 119;
  constexpr size_t kBytes = kBlocks * kSm4BlockSize;
  uint8_t in[kBytes], want[kBytes], got[kBytes];
  for (size_t i = 0; i < kBytes; ++i) in[i] = static_cast<uint8_t>(i * 31 + 7);
  bool ok = true;
  auto check = [&](size_t len) {
    ok = ok && std::memcmp(want, got, len) == 0;
  };
  Sm4GenericEncryptBlocks(key.rk_enc, in, want, kBlocks);
  k.encrypt_blocks(key.rk_enc, in, got, kBlocks);
  check(kBytes);
  Sm4GenericEncryptBlocks(key.rk_dec, in, want, kBlocks);
  k.encrypt_blocks(key.rk_dec, in, got, kBlocks);
  check(kBytes);
  uint8_t cb[16];
  for (int i = 0; i < 16; ++i) cb[i] = i < 4 ? static_cast<uint8_t>(0x10 * i) : 0xff;
  cb[15] = 0xc3;  // the low 96 bits wrap after 61 blocks
  Sm4GenericCtr32EncryptBlocks(key.rk_enc, cb, in, want, kBlocks);
  k.ctr32_encrypt_blocks(key.rk_enc, cb, in, got, kBlocks);
  check(kBytes);
  Sm4GenericCtr128EncryptBlocks(key.rk_enc, cb, in, want, kBlocks);
  k.ctr128_encrypt_blocks(key.rk_enc, cb, in, got, kBlocks);
  check(kBytes);
  uint8_t iv_want[16], iv_got[16];
  std::memcpy(iv_want, cb, 16);
  std::memcpy(iv_got, cb, 16);
  Sm4GenericCbcDecryptBlocks(key.rk_dec, iv_want, in, want, kBlocks);
  k.cbc_decrypt_blocks(key.rk_dec, iv_got, in, got, kBlocks);
  check(kBytes);
  ok = ok && std::memcmp(iv_want, iv_got, 16) == 0;
  Sm4GenericCbcEncryptBlocks(key.rk_enc, iv_want, in, want, kBlocks);
  k.cbc_encrypt_blocks(key.rk_enc, iv_got, in, got, kBlocks);
  check(kBytes);
  ok = ok && std::memcmp(iv_want, iv_got, 16) == 0;
  Sm4GenericCbcMacBlocks(key.rk_enc, iv_want, in, kBlocks);
  k.cbc_mac_blocks(key.rk_enc, iv_got, in, kBlocks);
  ok = ok && std::memcmp(iv_want, iv_got, 16) == 0;
  // Multi-buffer: job j has key bytes in[16j…], IV in[16(j+16)…], j mod 8 blocks of
  // input at in[16·(8j mod 96)…] (jobs 0 and 8 are empty) and a 7-block output slot.
  if (k.cbc_encrypt_multi != nullptr && k.cbc_mac_multi != nullptr) {
    Sm4Key keys[kSm4MaxMultiJobs];
    uint8_t ivs_want[kSm4MaxMultiJobs][16], ivs_got[kSm4MaxMultiJobs][16];
    uint8_t macs_want[kSm4MaxMultiJobs][16], macs_got[kSm4MaxMultiJobs][16];
    Sm4MultiJob enc[kSm4MaxMultiJobs], mac[kSm4MaxMultiJobs];
    for (size_t j = 0; j < kSm4MaxMultiJobs; ++j) {
      ExpandKeyUnchecked(in + 16 * j, &keys[j]);
      std::memcpy(ivs_want[j], in + 16 * (j + 16), 16);
      std::memcpy(ivs_got[j], in + 16 * (j + 16), 16);
      std::memcpy(macs_want[j], in + 16 * (j + 32), 16);
      std::memcpy(macs_got[j], in + 16 * (j + 32), 16);
      const size_t n = j % 8;
      const uint8_t* src = in + 16 * (8 * j % 96);
      Sm4GenericCbcEncryptBlocks(keys[j].rk_enc, ivs_want[j], src, want + 16 * 7 * j, n);
      Sm4GenericCbcMacBlocks(keys[j].rk_enc, macs_want[j], src, n);
      enc[j] = {keys[j].rk_enc, ivs_got[j], src, got + 16 * 7 * j, n};
      mac[j] = {keys[j].rk_enc, macs_got[j], src, nullptr, n};
    }
    // Slots the jobs do not fill compare equal; the ones they fill start zeroed.
    std::memcpy(got, want, 16 * 7 * kSm4MaxMultiJobs);
    for (size_t j = 0; j < kSm4MaxMultiJobs; ++j) std::memset(got + 16 * 7 * j, 0, 16 * (j % 8));
    k.cbc_encrypt_multi(enc, kSm4MaxMultiJobs);
    k.cbc_mac_multi(mac, kSm4MaxMultiJobs);
    check(16 * 7 * kSm4MaxMultiJobs);
    ok = ok && std::memcmp(ivs_want, ivs_got, sizeof(ivs_want)) == 0;
    ok = ok && std::memcmp(macs_want, macs_got, sizeof(macs_want)) == 0;
    SecureZero(ivs_want, sizeof(ivs_want));
    SecureZero(ivs_got, sizeof(ivs_got));
    SecureZero(macs_want, sizeof(macs_want));
    SecureZero(macs_got, sizeof(macs_got));
  }
  SecureZero(want, sizeof(want));
  SecureZero(got, sizeof(got));
  return ok;
}

}  // namespace

// Sm4SelfTest runs GB/T 32907-2016 Appendix A example 1 through back end `k` in both
// directions (fail closed, as libgcrypt's sm4_selftest does), then its wide paths
// against generic (WideSelfTest).
bool Sm4SelfTest(const Sm4Kernels& k) {
  static const uint8_t kKeyAndPlain[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                           0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
  static const uint8_t kCipher[16] = {0x68, 0x1e, 0xdf, 0x34, 0xd2, 0x06, 0x96, 0x5e,
                                      0x86, 0xb3, 0xe9, 0x4f, 0x53, 0x6e, 0x42, 0x46};
  Sm4Key key;
  ExpandKeyUnchecked(kKeyAndPlain, &key);
  uint8_t buf[16];
  k.encrypt_blocks(key.rk_enc, kKeyAndPlain, buf, 1);
  bool ok = std::memcmp(buf, kCipher, 16) == 0;
  k.encrypt_blocks(key.rk_dec, buf, buf, 1);
  ok = ok && std::memcmp(buf, kKeyAndPlain, 16) == 0;
  // The generic back end on the same example, so the wide check has a sound reference.
  Sm4GenericEncryptBlocks(key.rk_enc, kKeyAndPlain, buf, 1);
  ok = ok && std::memcmp(buf, kCipher, 16) == 0;
  return ok && WideSelfTest(k, key);
}

Sm4Key::~Sm4Key() {
  SecureZero(rk_enc, sizeof(rk_enc));
  SecureZero(rk_dec, sizeof(rk_dec));
}

absl::Status Sm4ExpandKey(absl::string_view key, Sm4Key* out) {
  if (key.size() != kSm4KeySize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SM4 key: expected %d bytes, got %d", kSm4KeySize, key.size()));
  }
  static const bool self_test_ok = Sm4SelfTest(Sm4ActiveKernels());
  if (!self_test_ok) {
    return absl::InternalError(absl::StrFormat("SM4 self-test failed on back end %s",
                                               Sm4ActiveKernels().name));
  }
  ExpandKeyUnchecked(BytePtr(key.data()), out);
  return absl::OkStatus();
}

void Sm4EncryptBlocks(const Sm4Key& key, const uint8_t* in, uint8_t* out, size_t num_blocks) {
  Sm4ActiveKernels().encrypt_blocks(key.rk_enc, in, out, num_blocks);
}

void Sm4DecryptBlocks(const Sm4Key& key, const uint8_t* in, uint8_t* out, size_t num_blocks) {
  Sm4ActiveKernels().encrypt_blocks(key.rk_dec, in, out, num_blocks);
}

void Sm4Ctr32EncryptBlocks(const Sm4Key& key, const uint8_t counter_block[kSm4BlockSize],
                           const uint8_t* in, uint8_t* out, size_t num_blocks) {
  Sm4ActiveKernels().ctr32_encrypt_blocks(key.rk_enc, counter_block, in, out, num_blocks);
}

}  // namespace smcrypt
