// cipher.h — unauthenticated block-cipher modes (ECB, CBC, CTR, CFB, OFB, XTS).
#ifndef SMCRYPT_PRIMITIVES_CIPHER_H_
#define SMCRYPT_PRIMITIVES_CIPHER_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

// Padding for ECB and CBC. PKCS#7 (RFC 5652 §6.3) is the default; kNone requires
// the input length to be a multiple of the 16-byte block.
enum class Padding { kPkcs7, kNone };

// Cipher encrypts with a raw block-cipher mode: SM4-ECB, SM4-CBC, SM4-CTR, SM4-CFB,
// SM4-OFB, SM4-XTS and the AES counterparts of the first three. These modes give
// confidentiality only; nothing is authenticated.
//
// `iv` is 16 bytes for CBC, CTR, CFB and OFB (CTR: the whole block is one 128-bit
// big-endian counter, as OpenSSL does), 16 bytes for XTS (the tweak) and empty for ECB.
// CTR, CFB, OFB and XTS output as many bytes as they are given.
//
// Errors: InvalidArgument for a wrong IV length or, without padding, an input that is
// not a multiple of 16 bytes; for XTS, a data unit shorter than 16 bytes or longer than
// 2^20 blocks; InvalidArgument "decryption failed" for bad PKCS#7 padding (one message
// whatever byte was wrong).
//
// WARNING: use an Aead unless a protocol requires one of these modes. A CTR (key, iv)
// pair must never repeat; ECB leaks equal blocks.
//
// Thread safety: const methods, safe to call concurrently on one object.
class Cipher {
 public:
  virtual ~Cipher() = default;
  virtual absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                              absl::string_view plaintext) const = 0;
  virtual absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                              absl::string_view ciphertext) const = 0;
  // iv_size is the IV length in bytes: 0 for ECB, 16 for CBC, CTR, CFB, OFB and XTS.
  virtual size_t iv_size() const = 0;
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_CIPHER_H_
