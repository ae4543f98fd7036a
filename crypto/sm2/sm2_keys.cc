// sm2_keys.cc — SM2 key pairs: public-point parsing and validation (GB/T 32918.1 §4.2.10,
// §6.2.1), private scalars in [1, n − 2] (§6.1), key generation.
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/random.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_montgomery.h"
#include "crypto/sm2/sm2_point.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm2.h"

namespace smcrypt {
namespace {

using internal::Sm2Affine;
using internal::Sm2Jacobian;
using internal::Sm2Kernels;

}  // namespace

absl::StatusOr<Sm2PublicKey> Sm2PublicKey::FromPoint(absl::string_view point) {
  return internal::Sm2PointFromBytes(point, "SM2 public key");
}

absl::StatusOr<Sm2PublicKey> internal::Sm2PointFromBytes(absl::string_view point,
                                                         absl::string_view name) {
  auto point_error = [name](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", what));
  };
  if (point.size() != kSm2PointSize && point.size() != kSm2CompressedPointSize) {
    return point_error(absl::StrCat("expected ", kSm2PointSize, " (uncompressed) or ",
                                       kSm2CompressedPointSize, " (compressed) bytes, got ",
                                       point.size()));
  }
  const uint8_t* in = BytePtr(point.data());
  const Sm2Kernels& k = internal::Sm2ActiveKernels();
  Sm2Affine a;
  if (point.size() == kSm2PointSize) {
    if (in[0] != 0x04) {
      return point_error(absl::StrFormat(
          "bad prefix byte 0x%02x for a 65-byte point (expected 0x04)", in[0]));
    }
    if (!internal::FeFromBytes(k, a.x, in + 1)) return point_error("x coordinate not below p");
    if (!internal::FeFromBytes(k, a.y, in + 33)) return point_error("y coordinate not below p");
    if (!internal::AffineIsOnCurve(k, a)) return point_error("point not on the curve");
  } else {
    if (in[0] != 0x02 && in[0] != 0x03) {
      return point_error(absl::StrFormat(
          "bad prefix byte 0x%02x for a 33-byte point (expected 0x02 or 0x03)", in[0]));
    }
    if (!internal::FeFromBytes(k, a.x, in + 1)) return point_error("x coordinate not below p");
    // y² = x³ − 3x + b; p ≡ 3 (mod 4), so a root is alpha^((p+1)/4) when one exists.
    uint64_t alpha[4], t[4], beta[4], check[4];
    internal::FeSqr(k, alpha, a.x);
    internal::FeMul(k, alpha, alpha, a.x);
    internal::FeAdd(t, a.x, a.x);
    internal::FeAdd(t, t, a.x);
    internal::FeSub(alpha, alpha, t);
    internal::FeAdd(alpha, alpha, internal::Sm2CurveB());
    internal::FeSqrtCandidate(k, beta, alpha);
    internal::FeSqr(k, check, beta);
    if (!internal::FeEqual(check, alpha)) {
      return point_error("compressed x has no point on the curve (no square root)");
    }
    uint64_t plain[4];
    internal::FeToPlain(k, plain, beta);
    if ((plain[0] & 1) != (in[0] & 1)) {
      if (internal::FeIsZero(beta)) return point_error("point not on the curve");
      internal::FeNeg(beta, beta);
    }
    internal::FeCopy(a.y, beta);
  }
  Sm2PublicKey key;
  key.point_[0] = 0x04;
  internal::FeToBytes(k, key.point_ + 1, a.x);
  internal::FeToBytes(k, key.point_ + 33, a.y);
  return key;
}

std::string Sm2PublicKey::ToPoint(bool compressed) const {
  if (!compressed) return std::string(reinterpret_cast<const char*>(point_), kSm2PointSize);
  std::string out(kSm2CompressedPointSize, '\0');
  out[0] = static_cast<char>(0x02 | (point_[64] & 1));
  std::memcpy(&out[1], point_ + 1, kSm2ScalarSize);
  return out;
}

bool Sm2PublicKey::operator==(const Sm2PublicKey& o) const {
  return std::memcmp(point_, o.point_, kSm2PointSize) == 0;
}

namespace internal {

void Sm2PublicKeyToAffine(const Sm2Kernels& k, const Sm2PublicKey& key, Sm2Affine* out) {
  FeFromBytes(k, out->x, key.x());
  FeFromBytes(k, out->y, key.y());
}

absl::Status Sm2RandomNonce(uint64_t k[4]) {
  uint8_t buf[kSm2ScalarSize];
  auto wipe = absl::MakeCleanup([&buf] { SecureZero(buf, sizeof(buf)); });
  for (;;) {
    SMCRYPT_RETURN_IF_ERROR(RandomBytes(buf, sizeof(buf)));
    LimbsFromBytes(k, buf);
    // Rejection sampling: only the discarded candidates' being out of range is visible.
    // Public: see above (a rejected draw is thrown away).
    if (CtDeclassify(LtN(k) & ~ScIsZero(k))) break;
  }
  return absl::OkStatus();
}

}  // namespace internal

absl::StatusOr<Sm2PrivateKey> Sm2PrivateKey::FromScalar(absl::string_view d) {
  if (d.size() != kSm2ScalarSize) {
    return absl::InvalidArgumentError(absl::StrCat("SM2 private key: expected ", kSm2ScalarSize,
                                                   " bytes, got ", d.size()));
  }
  uint64_t dl[4];
  internal::LimbsFromBytes(dl, BytePtr(d.data()));
  // Public: whether the key is accepted is the result returned to the caller.
  const uint64_t ok = CtDeclassify(internal::Sm2InPrivateRange(dl));
  if (!ok) {
    SecureZero(dl, sizeof(dl));
    return absl::InvalidArgumentError("SM2 private key out of range [1, n-2]");
  }
  const Sm2Kernels& k = internal::Sm2ActiveKernels();
  Sm2PrivateKey key;
  key.d_ = SecretDataFromStringView(d);
  // (1 + d)⁻¹ mod n; 1 + d ∈ [2, n − 1] so it is invertible.
  // Kept in Montgomery form mod n, so that signing needs one Montgomery multiplication.
  uint64_t one[4] = {1, 0, 0, 0}, d1[4], inv[4];
  internal::ScAdd(d1, dl, one);
  internal::ScInv(inv, d1);
  internal::ScToMont(inv, inv);
  key.d1_inv_.resize(kSm2ScalarSize);
  internal::LimbsToBytes(key.d1_inv_.data(), inv);
  // P = dG.
  Sm2Jacobian p;
  Sm2Affine pa;
  internal::ScalarMulBase(k, &p, dl);
  internal::PointToAffine(k, &pa, p);
  uint8_t point[kSm2PointSize];
  point[0] = 0x04;
  internal::FeToBytes(k, point + 1, pa.x);
  internal::FeToBytes(k, point + 33, pa.y);
  // P = dG is the public key: FromPoint below validates it with ordinary branches.
  SMCRYPT_CT_DECLASSIFY(point, sizeof(point));
  SecureZero(dl, sizeof(dl));
  SecureZero(d1, sizeof(d1));
  SecureZero(inv, sizeof(inv));
  SecureZero(&p, sizeof(p));
  SMCRYPT_ASSIGN_OR_RETURN(key.public_key_,
                           Sm2PublicKey::FromPoint(absl::string_view(
                               reinterpret_cast<const char*>(point), sizeof(point))));
  return key;
}

absl::StatusOr<Sm2PrivateKey> Sm2PrivateKey::Generate() {
  uint8_t buf[kSm2ScalarSize];
  uint64_t d[4];
  auto wipe = absl::MakeCleanup([&buf, &d] {
    SecureZero(buf, sizeof(buf));
    SecureZero(d, sizeof(d));
  });
  for (;;) {
    SMCRYPT_RETURN_IF_ERROR(RandomBytes(buf, sizeof(buf)));
    internal::LimbsFromBytes(d, buf);
    // Rejection sampling, uniform on [1, n − 2]; public: a rejected draw is discarded.
    if (CtDeclassify(internal::Sm2InPrivateRange(d))) break;
  }
  return FromScalar(absl::string_view(reinterpret_cast<const char*>(buf), sizeof(buf)));
}

SecretData Sm2PrivateKey::ToScalar() const { return d_; }

namespace internal {

uint64_t Sm2InPrivateRange(const uint64_t d[4]) {
  uint64_t nm1[4];
  std::memcpy(nm1, internal::kSm2N, sizeof(nm1));
  nm1[0] -= 1;  // n is odd: no borrow
  uint64_t borrow = 0;
  for (int j = 0; j < 4; ++j) {
    const internal::u128 acc = static_cast<internal::u128>(d[j]) - nm1[j] - borrow;
    borrow = static_cast<uint64_t>(acc >> 64) & 1;
  }
  return (0 - borrow) & ~internal::ScIsZero(d);  // d < n − 1 and d ≠ 0
}

}  // namespace internal

}  // namespace smcrypt
