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
