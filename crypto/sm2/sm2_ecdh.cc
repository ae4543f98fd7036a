// sm2_ecdh.cc — x(d·P) on sm2p256v1 for HPKE's DHKEM(SM2, HKDF-SM3).
#include "crypto/sm2/sm2_ecdh.h"

#include "crypto/common/ct_annotations.h"

#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_point.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt {

absl::StatusOr<SecretData> Sm2Ecdh(const Sm2PrivateKey& private_key,
                                   const Sm2PublicKey& public_key) {
  const internal::Sm2Kernels& kern = internal::Sm2ActiveKernels();
  internal::Sm2Affine p;
  internal::Sm2PublicKeyToAffine(kern, public_key, &p);
  uint64_t d[4];
  internal::LimbsFromBytes(d, Sm2PrivateKeyAccess::d(private_key).data());
  internal::Sm2Jacobian j;
  internal::ScalarMulPoint(kern, &j, p, d);
  internal::Sm2Affine shared;
  const uint64_t at_infinity = internal::PointToAffine(kern, &shared, j);
  SecretData x(kSm2ScalarSize);
  internal::FeToBytes(kern, x.data(), shared.x);
  SecureZero(d, sizeof(d));
  SecureZero(&j, sizeof(j));
  SecureZero(&shared, sizeof(shared));
  // Only reachable for an invalid key; the branch reveals nothing about a valid d.
  if (CtDeclassify(at_infinity)) {
    return absl::InvalidArgumentError("SM2 ECDH: shared point is the point at infinity");
  }
  return x;
}

}  // namespace smcrypt
