// public_key_encrypt.h — public-key encryption: SM2 (GB/T 32918.4) and RSA-OAEP.
#ifndef SMCRYPT_PRIMITIVES_PUBLIC_KEY_ENCRYPT_H_
#define SMCRYPT_PRIMITIVES_PUBLIC_KEY_ENCRYPT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

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

  // EncryptMany encrypts every plaintext to this key: one result per input, in order,
  // each what Encrypt returns for it (its own fresh randomness; errors per item).
  // Implementations may share work across the inputs (SM2: the ephemeral k·G and k·P_B
  // of 8 messages at a time in AVX-512 IFMA lanes, one inversion for the batch); this
  // default calls Encrypt on each.
  virtual std::vector<absl::StatusOr<std::string>> EncryptMany(
      absl::Span<const absl::string_view> plaintexts) const {
    std::vector<absl::StatusOr<std::string>> out;
    out.reserve(plaintexts.size());
    for (absl::string_view p : plaintexts) out.push_back(Encrypt(p));
    return out;
  }
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
