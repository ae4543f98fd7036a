// sm4.h — the SM4 block cipher (GB/T 32907-2016) and its modes.
#ifndef SMCRYPT_SM4_H_
#define SMCRYPT_SM4_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "smcrypt/primitives/aead.h"
#include "smcrypt/primitives/cipher.h"

namespace smcrypt {

inline constexpr size_t kSm4KeySize = 16;    // bytes
inline constexpr size_t kSm4BlockSize = 16;  // bytes
inline constexpr int kSm4Rounds = 32;

// Sm4Key is an expanded SM4 key: the 32 round keys rk (GB/T 32907-2016 §7.3) in
// encryption order and in decryption order. Destruction wipes them.
struct Sm4Key {
  uint32_t rk_enc[kSm4Rounds];
  uint32_t rk_dec[kSm4Rounds];
  Sm4Key() = default;
  Sm4Key(const Sm4Key&) = default;
  Sm4Key& operator=(const Sm4Key&) = default;
  ~Sm4Key();
};

// Sm4ExpandKey expands a 16-byte `key` into `out` (§7.3, with FK and CK).
// Errors: InvalidArgument when `key` is not 16 bytes.
absl::Status Sm4ExpandKey(absl::string_view key, Sm4Key* out);

// Sm4EncryptBlocks encrypts `num_blocks` 16-byte blocks from `in` to `out` with the
// active back end (ECB). `in == out` is allowed; partial overlap is not. Constant time.
void Sm4EncryptBlocks(const Sm4Key& key, const uint8_t* in, uint8_t* out, size_t num_blocks);
// Sm4DecryptBlocks is the inverse of Sm4EncryptBlocks.
void Sm4DecryptBlocks(const Sm4Key& key, const uint8_t* in, uint8_t* out, size_t num_blocks);

// Sm4Ctr32EncryptBlocks XORs `num_blocks` blocks of keystream into `in`, writing `out`.
// Block i is E(K, counter_block with its last 32 bits + i mod 2^32) (GCM's inc32,
// NIST SP 800-38D §6.2). Used by GCM; CTR mode proper uses a 128-bit counter.
void Sm4Ctr32EncryptBlocks(const Sm4Key& key, const uint8_t counter_block[kSm4BlockSize],
                           const uint8_t* in, uint8_t* out, size_t num_blocks);

// Factories for the modes. Each validates the key (16 bytes) and returns InvalidArgument
// with expected and actual sizes when it is wrong.
//
// Sm4Ecb/Sm4Cbc: `padding` PKCS#7 by default (GB/T 17964 modes, PKCS#7 per RFC 5652).
absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Ecb(absl::string_view key,
                                                  Padding padding = Padding::kPkcs7);
absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Cbc(absl::string_view key,
                                                  Padding padding = Padding::kPkcs7);
// Sm4Ctr: the 16-byte IV is one 128-bit big-endian counter that carries across all of
// its bytes (as OpenSSL's SM4-CTR); wraps modulo 2^128.
absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Ctr(absl::string_view key);
// Sm4Cfb: SM4-CFB-128, full-block feedback (GB/T 17964-2021's CFB; NIST SP 800-38A
// §6.3 with s = 128): C_i = P_i ⊕ E(K, C_{i−1}), C_{−1} = IV (16 bytes). Any length, no
// padding: a final partial segment of r < 16 bytes is XORed with the first r bytes of
// E(K, C_{n−1}), so the ciphertext is as long as the plaintext (as OpenSSL's
// EVP_sm4_cfb128 and Botan's "SM4/CFB"). Encryption is serial (the back end's
// single-block path, one block per call); decryption encrypts the ciphertext blocks
// C_{i−1} 64 at a time on the back end's widest path. Constant time in the key, IV and
// data; lengths are public. WARNING: an (key, IV) pair must never repeat.
absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Cfb(absl::string_view key);
// Sm4Ofb: SM4-OFB (GB/T 17964-2021's OFB; NIST SP 800-38A §6.4): O_0 = E(K, IV),
// O_i = E(K, O_{i−1}), C_i = P_i ⊕ O_i; any length (a final partial block uses the
// first bytes of its O_i), ciphertext as long as the plaintext, decryption identical
// to encryption. The keystream is serial: it runs on the back end's single-block path
// (its CBC encryption of zero blocks). Constant time in the key, IV and data.
// WARNING: an (key, IV) pair must never repeat; OFB keystream reuse reveals P ⊕ P'.
absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Ofb(absl::string_view key);

// Sm4XtsVariant selects the tweak arithmetic of SM4-XTS.
enum class Sm4XtsVariant {
  // IEEE Std 1619-2018 (XTS-AES, §5) with SM4: the 16-byte tweak is a little-endian
  // 128-bit integer (byte 0 least significant) and ·α is a left shift by one bit with
  // the carry folded back as 0x87 into byte 0 (§5.2). The data unit sequence number j
  // is given as the IV LE128(j): its 16 bytes, least significant first (§5.1).
  kIeee1619,
  // GB/T 17964-2021 XTS: the same structure with the opposite bit order, as GCM's
  // field (NIST SP 800-38D §6.3): the tweak is big-endian and bit-reflected (byte 0
  // holds x^0..x^7, most significant bit first), and ·α is a right shift by one bit
  // with the carry folded back as 0xE1 into byte 0. The IV is the 16-byte tweak value
  // i as the standard writes it, passed to E(K2, ·) byte for byte; smcrypt does not
  // derive it from a sector number (OpenSSL ≥ 3.2's "SM4-XTS" with xts_standard "GB"
  // takes the same 16 bytes).
  kGbT17964,
};

// kSm4XtsKeySize is the SM4-XTS key: K1 ‖ K2, 16 bytes each (K1 encrypts the data, K2
// the tweak).
inline constexpr size_t kSm4XtsKeySize = 32;
// kSm4XtsMaxBlocks bounds a data unit: at most 2^20 blocks of 16 bytes (IEEE Std
// 1619-2018 §5.1, NIST SP 800-38E), the last one possibly partial.
inline constexpr size_t kSm4XtsMaxBlocks = size_t{1} << 20;

// NewSm4Xts returns SM4-XTS (XEX with ciphertext stealing) in `variant`. `key` is 32
// bytes K1 ‖ K2; the IV (iv_size() = 16) is the tweak i, and T_0 = E(K2, i),
// T_j = T_{j−1}·α. One Encrypt/Decrypt call is one data unit of 16 bytes to 2^20
// blocks (2^24 bytes); the output is as long as the input. A length that is not a
// multiple of 16 uses ciphertext stealing (IEEE Std 1619-2018 §5.3.2/§5.4.2; GB/T
// 17964-2021's example, whose last block is stolen, agrees): the last full block
// borrows the tail of the partial one, and the two swap places.
// Blocks go through the back end's widest ECB path 64 at a time, each XORed with its
// tweak before and after. Errors: InvalidArgument for a key that is not 32 bytes or
// whose halves are equal (IEEE Std 1619-2018 §5.1 requires K1 ≠ K2, as FIPS 140-3 IG
// C.I does); from Encrypt/Decrypt, InvalidArgument for an IV that is not 16 bytes or
// a data unit shorter than 16 bytes or longer than 2^24 bytes. Constant time in the
// keys, tweak and data (tweak doubling by shifts and masks; the K1 = K2 check compares
// all bytes and reveals only its verdict); lengths are public. Round keys are wiped on
// destruction and the tweaks after every call. WARNING: XTS is a length-preserving
// disk-sector mode: it authenticates nothing, and equal plaintext at the same tweak
// gives equal ciphertext.
absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Xts(absl::string_view key,
                                                  Sm4XtsVariant variant);

// Sm4Gcm: NIST SP 800-38D with SM4 (RFC 8998 §3.1). Nonces of any length ≥ 1 byte (12
// recommended; others go through GHASH as §7.1 says); tag 12–16 bytes; plaintext up to
// 2^36 − 32 bytes.
absl::StatusOr<std::unique_ptr<Aead>> NewSm4Gcm(absl::string_view key, size_t tag_size = 16);
// Sm4Ccm: NIST SP 800-38C with SM4 (RFC 8998 §3.2). Nonce 7–13 bytes (RFC 8998: 12),
// tag 4–16 bytes and even (RFC 8998: 16).
absl::StatusOr<std::unique_ptr<Aead>> NewSm4Ccm(absl::string_view key, size_t tag_size = 16);

// Sm4CbcBatchItem is one message of Sm4CbcEncryptBatch. The views must outlive the call.
struct Sm4CbcBatchItem {
  absl::string_view key;        // 16 bytes
  absl::string_view iv;         // 16 bytes: C_{-1}
  absl::string_view plaintext;  // any length with PKCS#7; a multiple of 16 with kNone
  Padding padding = Padding::kPkcs7;
};

// Sm4CbcEncryptBatch encrypts independent SM4-CBC messages (GB/T 17964-2021 §6, PKCS#7
// per RFC 5652 §6.3), each with its own key and IV, and returns one result per item in
// order: the ciphertext (the padded length), exactly what NewSm4Cbc(key,
// padding)->Encrypt(iv, plaintext) returns. CBC encryption is serial within a message;
// here up to 16 messages run side by side in the SIMD lanes of the back end's
// multi-buffer path (every x86 SIMD back end; generic runs them one by one), so 16
// messages of one length cost about as much as one. Items are
// grouped longest first (lengths are public); keys, IVs and data are handled in
// constant time. Errors, per item: InvalidArgument for a key or IV that is not 16 bytes,
// or, with Padding::kNone, a plaintext that is not a multiple of 16 bytes. A bad item
// does not affect the others.
std::vector<absl::StatusOr<std::string>> Sm4CbcEncryptBatch(
    absl::Span<const Sm4CbcBatchItem> items);

}  // namespace smcrypt

#endif  // SMCRYPT_SM4_H_
