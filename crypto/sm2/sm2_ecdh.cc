// sm2_ecdh.cc — x(d·P) on sm2p256v1 for HPKE's DHKEM(SM2, HKDF-SM3).
#include "crypto/sm2/sm2_ecdh.h"

#include "absl/strings/str_cat.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_point.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt {

namespace {

// x(d·P) for d in plain limbs (wiped here).
absl::StatusOr<SecretData> EcdhLimbs(uint64_t d[4], const Sm2PublicKey& public_key) {
  const internal::Sm2Kernels& kern = internal::Sm2ActiveKernels();
  internal::Sm2Affine p;
  internal::Sm2PublicKeyToAffine(kern, public_key, &p);
  internal::Sm2Jacobian j;
  internal::ScalarMulPoint(kern, &j, p, d);
  internal::Sm2Affine shared;
  const uint64_t at_infinity = internal::PointToAffine(kern, &shared, j);
  SecretData x(kSm2ScalarSize);
  internal::FeToBytes(kern, x.data(), shared.x);
  SecureZero(d, 4 * sizeof(uint64_t));
  SecureZero(&j, sizeof(j));
  SecureZero(&shared, sizeof(shared));
  // Only reachable for an invalid key; the branch reveals nothing about a valid d.
  if (CtDeclassify(at_infinity)) {
    return absl::InvalidArgumentError("SM2 ECDH: shared point is the point at infinity");
  }
  return x;
}

}  // namespace

absl::StatusOr<SecretData> Sm2Ecdh(const Sm2PrivateKey& private_key,
                                   const Sm2PublicKey& public_key) {
  uint64_t d[4];
  internal::LimbsFromBytes(d, Sm2PrivateKeyAccess::d(private_key).data());
  return EcdhLimbs(d, public_key);
}

absl::StatusOr<SecretData> Sm2EcdhScalar(absl::string_view private_scalar,
                                         const Sm2PublicKey& public_key) {
  if (private_scalar.size() != kSm2ScalarSize) {
    return absl::InvalidArgumentError(absl::StrCat("SM2 private key: expected ", kSm2ScalarSize,
                                                   " bytes, got ", private_scalar.size()));
  }
  uint64_t d[4];
  internal::LimbsFromBytes(d, reinterpret_cast<const uint8_t*>(private_scalar.data()));
  // d ∈ [1, n − 2] (GB/T 32918.1 §6.1), as Sm2PrivateKey::FromScalar; public: whether the
  // key is accepted is the result returned to the caller.
  if (!CtDeclassify(internal::Sm2InPrivateRange(d))) {
    SecureZero(d, sizeof(d));
    return absl::InvalidArgumentError("SM2 private key out of range [1, n-2]");
  }
  return EcdhLimbs(d, public_key);
}

}  // namespace smcrypt
