// sm2_ecdh.h — elliptic-curve Diffie–Hellman on sm2p256v1, as HPKE's DHKEM(SM2,
// HKDF-SM3) uses it: DH(sk, pk) = the x-coordinate of sk·pk (SEC 1 §3.3.1, with the
// curve of GB/T 32918.5; h = 1, so no cofactor step). This is not the SM2 key agreement
// protocol of GB/T 32918.3, which mixes in identities and a second key pair.
//
// Internal header (crypto/hpke and tests).
#ifndef SMCRYPT_CRYPTO_SM2_SM2_ECDH_H_
#define SMCRYPT_CRYPTO_SM2_SM2_ECDH_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

// Sm2Ecdh returns x(d·P), 32 bytes big-endian, for the private key d and the (already
// validated) public key P. The multiplication is ScalarMulPoint (constant time in d: fixed
// signed windows, masked table reads); intermediates are wiped. Errors: InvalidArgument
// "SM2 ECDH: shared point is the point at infinity" (impossible for d ∈ [1, n − 2] and a
// valid P, as n is prime; checked anyway).
absl::StatusOr<SecretData> Sm2Ecdh(const Sm2PrivateKey& private_key,
                                   const Sm2PublicKey& public_key);

// Sm2EcdhScalar is Sm2Ecdh for a private scalar given as 32 big-endian bytes, without
// building an Sm2PrivateKey (which would also compute d·G and (1 + d)⁻¹ mod n). Errors:
// InvalidArgument "SM2 private key: expected 32 bytes, got N" or "SM2 private key out of
// range [1, n-2]" (GB/T 32918.1 §6.1), and those of Sm2Ecdh.
absl::StatusOr<SecretData> Sm2EcdhScalar(absl::string_view private_scalar,
                                         const Sm2PublicKey& public_key);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_SM2_SM2_ECDH_H_
