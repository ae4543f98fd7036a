// public_key_encrypt.h — public-key encryption: SM2 (GB/T 32918.4) and RSA-OAEP.
#ifndef SMCRYPT_PRIMITIVES_PUBLIC_KEY_ENCRYPT_H_
#define SMCRYPT_PRIMITIVES_PUBLIC_KEY_ENCRYPT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

// PublicKeyEncrypt encrypts to the public key held by the object. Randomized.
// SM2 output is C1‖C3‖C2 by default (97 + len bytes with an uncompressed C1); the
// format is fixed when the object is made. RSA-OAEP output is the modulus size.
// Errors: InvalidArgument for a plaintext the scheme cannot take (RSA-OAEP longer than
// k − 2·hLen − 2 bytes).
// Thread safety: const methods, safe to call concurrently on one object.
class PublicKeyEncrypt {
 public:
  virtual ~PublicKeyEncrypt() = default;
  virtual absl::StatusOr<std::string> Encrypt(absl::string_view plaintext) const = 0;
};

// PublicKeyDecrypt decrypts with the private key held by the object.
// Errors: InvalidArgument with the reason for a malformed ciphertext (too short, bad
// C1 point, bad DER), and InvalidArgument "decryption failed" when the integrity check
// (SM2's C3, OAEP's padding) fails — one message that reveals nothing else.
// Thread safety: const methods, safe to call concurrently on one object.
class PublicKeyDecrypt {
 public:
  virtual ~PublicKeyDecrypt() = default;
  virtual absl::StatusOr<std::string> Decrypt(absl::string_view ciphertext) const = 0;
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_PUBLIC_KEY_ENCRYPT_H_
