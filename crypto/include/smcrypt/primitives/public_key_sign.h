// public_key_sign.h — digital signatures: SM2, ECDSA (P-256, secp256k1), RSA-PSS.
#ifndef SMCRYPT_PRIMITIVES_PUBLIC_KEY_SIGN_H_
#define SMCRYPT_PRIMITIVES_PUBLIC_KEY_SIGN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

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
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_PUBLIC_KEY_SIGN_H_
