// public_key_sign.h — digital signatures: SM2, ECDSA (P-256, secp256k1), RSA-PSS.
#ifndef SMCRYPT_PRIMITIVES_PUBLIC_KEY_SIGN_H_
#define SMCRYPT_PRIMITIVES_PUBLIC_KEY_SIGN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace smcrypt {

// PublicKeySign signs data with a private key held by the object. What `data` is
// (a message, or a precomputed digest) and how the signature is encoded (DER or raw
// r‖s) are fixed when the object is made; see SignatureOptions in smcrypt/registry.h.
//
// Signatures are randomized: every call draws a fresh nonce from the CSPRNG
// (OpenSSL RAND_bytes), so two signatures of one message differ.
//
// Errors: InvalidArgument when `data` must be a digest and has the wrong length.
// Thread safety: const methods, safe to call concurrently on one object.
class PublicKeySign {
 public:
  virtual ~PublicKeySign() = default;
  virtual absl::StatusOr<std::string> Sign(absl::string_view data) const = 0;

  // SignMany signs every data[i] with this key: one result per input, in order, each
  // what Sign(data[i]) returns (its own fresh nonce; errors per item). Implementations
  // may share work across the inputs (SM2 on AVX-512 IFMA: k·G of 8 nonces at a time in
  // lanes, one field inversion for the batch); this default calls Sign on each.
  virtual std::vector<absl::StatusOr<std::string>> SignMany(
      absl::Span<const absl::string_view> data) const {
    std::vector<absl::StatusOr<std::string>> out;
    out.reserve(data.size());
    for (absl::string_view d : data) out.push_back(Sign(d));
    return out;
  }
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_PUBLIC_KEY_SIGN_H_
