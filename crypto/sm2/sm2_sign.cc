// sm2_sign.cc — SM2 digital signatures (GB/T 32918.2-2016): Z (§5.5), e = SM3(Z ‖ M),
// signing (§6.1) and verification (§7.1).
//
// Constant-time review: signing is constant time in d and k: scalar arithmetic mod n with
// masks, k·G by the back end's constant-time comb (masked full-row selects), x1 by the
// constant-time safegcd inversion, s = (1 + d)⁻¹·(k + r) − r with (1 + d)⁻¹ cached in the key in
// Montgomery form (one multiplication mod n). The only branches are on the rejection
// conditions of §6.1 (r = 0, r + k = n, s = 0), which lead to a fresh k and reveal
// nothing about the accepted one. Verification handles public data only and is
// variable time (wNAF / comb double-scalar multiplication, projective comparison).
//
// Nonces: k is drawn fresh from the CSPRNG (RAND_bytes) for every signature, by
// rejection sampling on [1, n − 1]. No pool of precomputed secret nonces is kept:
// GmSSL-style pools keep k values in memory between requests, which a memory disclosure
// would turn into private keys.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_montgomery.h"
#include "crypto/sm2/sm2_point.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm3.h"

namespace smcrypt {
namespace {

using internal::Sm2Affine;
using internal::Sm2Jacobian;
using internal::Sm2Kernels;

absl::Status CheckDigestSize(absl::string_view e) {
  if (e.size() != kSm3DigestSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("SM2 digest e: expected ", kSm3DigestSize, " bytes, got ", e.size()));
  }
  return absl::OkStatus();
}

absl::Status SignatureInvalid() { return absl::UnauthenticatedError("signature invalid"); }

}  // namespace

absl::StatusOr<std::array<uint8_t, 32>> Sm2ComputeZ(const Sm2PublicKey& key,
                                                     absl::string_view user_id) {
  if (user_id.size() > kSm2MaxUserIdSize) {
    return absl::InvalidArgumentError(absl::StrCat("SM2 user ID: at most ", kSm2MaxUserIdSize,
                                                   " bytes, got ", user_id.size()));
  }
  uint8_t buf[32];
  Sm3 h;
  const uint32_t entl = static_cast<uint32_t>(user_id.size()) * 8;  // bits, < 2^16
  const uint8_t entl_bytes[2] = {static_cast<uint8_t>(entl >> 8), static_cast<uint8_t>(entl)};
  h.Update(entl_bytes, 2);
  h.Update(user_id);
  uint64_t a[4];
  const uint64_t three[4] = {3, 0, 0, 0};
  internal::ModSub(a, internal::kSm2P, three, internal::kSm2P);  // a = p − 3 (< p)
  internal::LimbsToBytes(buf, a);
  h.Update(buf, 32);
  internal::LimbsToBytes(buf, internal::kSm2B);
  h.Update(buf, 32);
  internal::LimbsToBytes(buf, internal::kSm2Gx);
  h.Update(buf, 32);
  internal::LimbsToBytes(buf, internal::kSm2Gy);
  h.Update(buf, 32);
  h.Update(key.x(), kSm2ScalarSize);
  h.Update(key.y(), kSm2ScalarSize);
  std::array<uint8_t, 32> z;
  h.FinishTo(z.data());
  return z;
}

absl::StatusOr<std::array<uint8_t, 32>> Sm2ComputeE(const Sm2PublicKey& key,
                                                     absl::string_view user_id,
                                                     absl::string_view message) {
  using Digest = std::array<uint8_t, 32>;
  SMCRYPT_ASSIGN_OR_RETURN(Digest z, Sm2ComputeZ(key, user_id));
  Sm3 h;
  h.Update(z.data(), z.size());
  h.Update(message);
  std::array<uint8_t, 32> e;
  h.FinishTo(e.data());
  return e;
}

namespace internal {

absl::StatusOr<std::string> Sm2SignDigestCore(const Sm2PrivateKey& key, absl::string_view e,
                                              Sm2NonceSource next_k) {
  SMCRYPT_RETURN_IF_ERROR(CheckDigestSize(e));
  const Sm2Kernels& kern = Sm2ActiveKernels();
  uint64_t el[4], d1_inv_mont[4], k[4], x1[4], r[4], s[4], t[4], zinv[4];
  Sm2Jacobian kg;
  LimbsFromBytes(el, BytePtr(e.data()));
  ScReduceOnce(el, el);
  LimbsFromBytes(d1_inv_mont, Sm2PrivateKeyAccess::d1_inv_mont(key).data());
  absl::Status status;
  for (;;) {
    status = next_k(k);  // A3
    if (!status.ok()) break;
    // Public: a nonce source only ever yields k in range (the CSPRNG one by rejection),
    // so this verdict is constant for every k that is used.
    if (!CtDeclassify(LtN(k) & ~ScIsZero(k))) {
      status = absl::InvalidArgumentError("SM2 nonce k out of range [1, n-1]");
      break;
    }
    ScalarMulBase(kern, &kg, k);  // A4: (x1, y1) = [k]G; only x1 = X/Z² is needed
    kern.fe_inv(zinv, kg.Z);
    kern.fe_sqr(zinv, zinv);
    kern.fe_mul(x1, kg.X, zinv);
    FeToPlain(kern, x1, x1);
    ScReduceOnce(x1, x1);
    ScAdd(r, el, x1);  // A5: r = (e + x1) mod n
    ScAdd(t, r, k);    // r + k
    const uint64_t reject_r = ScIsZero(r) | ScIsZero(t);  // r = 0 or r + k = n
    // A6: s = (1 + d)⁻¹·(k − r·d) = (1 + d)⁻¹·(k + r) − r mod n: one multiplication.
    ScMontMul(s, d1_inv_mont, t);
    ScSub(s, s, r);
    // Public: a rejected k (probability about 3·2^-256) is discarded and a fresh one is
    // drawn, so the verdict says nothing about the k that signs, nor about d.
    const uint64_t reject = CtDeclassify(ValueBarrier(reject_r | ScIsZero(s)));
    if (!reject) break;
  }
  std::string sig;
  if (status.ok()) {
    sig.resize(kSm2RawSignatureSize);
    LimbsToBytes(BytePtr(&sig[0]), r);
    LimbsToBytes(BytePtr(&sig[32]), s);
  }
  SecureZero(d1_inv_mont, sizeof(d1_inv_mont));
  SecureZero(k, sizeof(k));
  SecureZero(x1, sizeof(x1));
  SecureZero(t, sizeof(t));
  SecureZero(s, sizeof(s));
  SecureZero(zinv, sizeof(zinv));
  SecureZero(&kg, sizeof(kg));
  if (!status.ok()) return status;
  return sig;
}

absl::Status Sm2VerifyDigestCore(const Sm2PublicKey& key, absl::string_view e,
                                 absl::string_view signature, const Sm2PointTable* table) {
  // Every input here is public (key, digest, signature), so this function branches on
  // data and uses the variable-time double-scalar multiplication.
  SMCRYPT_RETURN_IF_ERROR(CheckDigestSize(e));
  if (signature.size() != kSm2RawSignatureSize) {
    return absl::InvalidArgumentError(absl::StrCat("SM2 signature: expected ",
                                                   kSm2RawSignatureSize, " bytes (r ‖ s), got ",
                                                   signature.size()));
  }
  const Sm2Kernels& kern = Sm2ActiveKernels();
  uint64_t r[4], s[4], t[4], el[4];
  LimbsFromBytes(r, BytePtr(signature.data()));
  LimbsFromBytes(s, BytePtr(signature.data() + 32));
  // B1, B2: r, s ∈ [1, n − 1].
  if (ScIsZero(r) || !LtN(r)) return SignatureInvalid();
  if (ScIsZero(s) || !LtN(s)) return SignatureInvalid();
  // B5: t = (r + s) mod n, t ≠ 0.
  ScAdd(t, r, s);
  if (ScIsZero(t)) return SignatureInvalid();
  // B6: (x1', y1') = [s]G + [t]P_A, left in Jacobian coordinates (X, Y, Z).
  Sm2Affine p;
  Sm2PublicKeyToAffine(kern, key, &p);
  Sm2Jacobian sum;
  ScalarMulTwoVartime(kern, &sum, s, p, t, table);
  // B7 (e' reduced mod n).
  LimbsFromBytes(el, BytePtr(e.data()));
  ScReduceOnce(el, el);
  return Sm2VerifyFinalCheck(kern, sum, r, el);
}

absl::Status Sm2VerifyFinalCheck(const Sm2Kernels& kern, const Sm2Jacobian& sum,
                                 const uint64_t r[4], const uint64_t e[4]) {
  if (FeIsZero(sum.Z)) return SignatureInvalid();
  // R = (e' + x1') mod n = r ⟺ x1' ≡ c = (r − e') (mod n). As 0 ≤ x1' < p < 2n,
  // x1' ∈ {c, c + n}; each candidate x is checked as X = x·Z² (mod p), no inversion.
  uint64_t c[4], z2[4], cand[4], rhs[4];
  ScSub(c, r, e);
  kern.fe_sqr(z2, sum.Z);
  FeFromPlain(kern, cand, c);  // c < n < p
  kern.fe_mul(rhs, cand, z2);
  if (FeEqual(rhs, sum.X)) return absl::OkStatus();
  uint64_t cn[4];
  u128 acc = 0;
  for (int j = 0; j < 4; ++j) {
    acc += static_cast<u128>(c[j]) + kSm2N[j];
    cn[j] = static_cast<uint64_t>(acc);
    acc >>= 64;
  }
  if (acc == 0 && LtP(cn)) {
    FeFromPlain(kern, cand, cn);
    kern.fe_mul(rhs, cand, z2);
    if (FeEqual(rhs, sum.X)) return absl::OkStatus();
  }
  return SignatureInvalid();
}

}  // namespace internal

absl::StatusOr<std::string> Sm2SignDigest(const Sm2PrivateKey& key, absl::string_view e) {
  return internal::Sm2SignDigestCore(key, e, internal::Sm2RandomNonce);
}

absl::Status Sm2VerifyDigest(const Sm2PublicKey& key, absl::string_view e,
                             absl::string_view signature) {
  return internal::Sm2VerifyDigestCore(key, e, signature, nullptr);
}

}  // namespace smcrypt
