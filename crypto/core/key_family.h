// key_family.h — which algorithm family an encoded asymmetric key belongs to, so that a
// key used with the wrong algorithm is reported as FailedPrecondition rather than as
// unparseable bytes.
#ifndef SMCRYPT_CRYPTO_CORE_KEY_FAMILY_H_
#define SMCRYPT_CRYPTO_CORE_KEY_FAMILY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

enum class KeyFamily { kUnknown, kSm2, kEcP256, kEcSecp256k1, kEcOther, kRsa, kOther };

// KeyFamilyName: "SM2", "EC P-256", "EC secp256k1", "EC (other curve)", "RSA", "unknown".
absl::string_view KeyFamilyName(KeyFamily family);

// DetectKeyFamily reads the AlgorithmIdentifier of a SubjectPublicKeyInfo (RFC 5280) or a
// PKCS#8 PrivateKeyInfo (RFC 5208) in DER. It never fails: bytes that are neither give
// kUnknown. SM2 is id-ecPublicKey with curve 1.2.156.10197.1.301, or that OID as the
// algorithm itself (older writers).
KeyFamily DetectKeyFamily(absl::string_view der);

// KeyBytes holds a key after PEM armour is removed: the DER (or raw) bytes in wiped
// storage, and the PEM label if there was one.
struct KeyBytes {
  SecretData bytes;
  std::string pem_label;  // empty when the input was not PEM
};

// UnwrapKey returns `in` as is when it does not start (after whitespace) with
// "-----BEGIN", else the decoded first PEM block. Errors: InvalidArgument from PemDecode.
absl::StatusOr<KeyBytes> UnwrapKey(absl::string_view in);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_CORE_KEY_FAMILY_H_
