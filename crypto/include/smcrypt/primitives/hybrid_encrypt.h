// hybrid_encrypt.h — hybrid (KEM + AEAD) encryption, HPKE base mode (RFC 9180).
#ifndef SMCRYPT_PRIMITIVES_HYBRID_ENCRYPT_H_
#define SMCRYPT_PRIMITIVES_HYBRID_ENCRYPT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace smcrypt {

// HybridEncryptInput is one message of HybridEncrypt::EncryptMany.
struct HybridEncryptInput {
  absl::string_view plaintext;
  absl::string_view context_info;
};

// HybridEncrypt encrypts `plaintext` to a recipient's public key, binding
// `context_info` (HPKE `info`) into the key schedule. Secure against adaptive
// chosen-ciphertext attacks (IND-CCA2). Output layout is defined by the implementation.
// Thread safety: const methods, safe to call concurrently on one object.
class HybridEncrypt {
 public:
  virtual ~HybridEncrypt() = default;
  virtual absl::StatusOr<std::string> Encrypt(absl::string_view plaintext,
                                              absl::string_view context_info) const = 0;

  // EncryptMany encrypts every input to this recipient, one result per input in order,
  // each exactly what Encrypt returns for it (its own fresh ephemeral key; errors per
  // item). Implementations may share work across the inputs (HPKE-SM2-SM3-SM4GCM runs
  // the ephemeral key pairs and Diffie–Hellman of up to 8 messages at once in AVX-512
  // IFMA lanes); this default calls Encrypt on each.
  virtual std::vector<absl::StatusOr<std::string>> EncryptMany(
      absl::Span<const HybridEncryptInput> inputs) const {
    std::vector<absl::StatusOr<std::string>> out;
    out.reserve(inputs.size());
    for (const HybridEncryptInput& in : inputs) out.push_back(Encrypt(in.plaintext, in.context_info));
    return out;
  }
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
