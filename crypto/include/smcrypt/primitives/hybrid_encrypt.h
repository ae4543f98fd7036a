// hybrid_encrypt.h — hybrid (KEM + AEAD) encryption, HPKE base mode (RFC 9180).
#ifndef SMCRYPT_PRIMITIVES_HYBRID_ENCRYPT_H_
#define SMCRYPT_PRIMITIVES_HYBRID_ENCRYPT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

// HybridEncrypt encrypts `plaintext` to a recipient's public key, binding
// `context_info` (HPKE `info`) into the key schedule. Secure against adaptive
// chosen-ciphertext attacks (IND-CCA2). Output layout is defined by the implementation.
// Thread safety: const methods, safe to call concurrently on one object.
class HybridEncrypt {
 public:
  virtual ~HybridEncrypt() = default;
  virtual absl::StatusOr<std::string> Encrypt(absl::string_view plaintext,
                                              absl::string_view context_info) const = 0;
};

// HybridDecrypt is the recipient side of HybridEncrypt.
// Errors: InvalidArgument "decryption failed" for any authentication failure.
class HybridDecrypt {
 public:
  virtual ~HybridDecrypt() = default;
  virtual absl::StatusOr<std::string> Decrypt(absl::string_view ciphertext,
                                              absl::string_view context_info) const = 0;
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_HYBRID_ENCRYPT_H_
