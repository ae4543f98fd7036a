// hpke_suites.cc — the descriptors of the two suites (smcrypt/hpke.h): DHKEM(P-256,
// HKDF-SHA256) / HKDF-SHA256 / AES-128-GCM on OpenSSL, and DHKEM(SM2, HKDF-SM3) /
// HKDF-SM3 / SM4-GCM on smcrypt's SM2, SM3 and SM4.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/hpke/hpke_internal.h"
#include "crypto/openssl/hkdf_openssl.h"
#include "crypto/openssl/openssl_factories.h"
#include "crypto/sm2/sm2_ecdh.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"

namespace smcrypt::internal {
namespace {

// ---- HKDF-SM3: RFC 5869 over HMAC-SM3 (Nh = 32) ------------------------------------

absl::StatusOr<SecretData> HkdfSm3Extract(absl::string_view salt, absl::string_view ikm) {
  // RFC 5869 §2.2: an absent salt is HashLen zero bytes (HMAC pads the key with zeros, so
  // this equals HMAC with an empty key).
  static constexpr char kZeroSalt[kSm3DigestSize] = {};
  if (salt.empty()) salt = absl::string_view(kZeroSalt, sizeof(kZeroSalt));
  SMCRYPT_ASSIGN_OR_RETURN(auto hmac, HmacSm3::New(salt));
  SMCRYPT_ASSIGN_OR_RETURN(std::string prk, hmac->ComputeMac(ikm));
  SecretData out = SecretDataFromStringView(prk);
  SecureZero(&prk[0], prk.size());
  return out;
}

absl::StatusOr<SecretData> HkdfSm3Expand(absl::string_view prk, absl::string_view info,
                                         size_t length) {
  if (length == 0 || length > 255 * kSm3DigestSize) {
    return absl::InvalidArgumentError(absl::StrCat("HKDF-SM3 expand: length must be 1 to ",
                                                   255 * kSm3DigestSize, ", got ", length));
  }
  if (prk.size() < kSm3DigestSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HKDF-SM3 expand: PRK of at least ", kSm3DigestSize, " bytes, got ", prk.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(auto hmac, HmacSm3::New(prk));
  // RFC 5869 §2.3: T(0) = empty, T(i) = HMAC(PRK, T(i−1) ‖ info ‖ i), OKM = first L bytes.
  SecretData okm;
  okm.reserve(length + kSm3DigestSize);
  SecretData block;
  for (uint8_t i = 1; okm.size() < length; ++i) {
    SecretData input(block);
    input.insert(input.end(), info.begin(), info.end());
    input.push_back(i);
    SMCRYPT_ASSIGN_OR_RETURN(std::string t, hmac->ComputeMac(SecretDataAsStringView(input)));
    block.assign(t.begin(), t.end());
    SecureZero(&t[0], t.size());
    okm.insert(okm.end(), block.begin(), block.end());
  }
  okm.resize(length);
  return okm;
}

// ---- DHKEM(SM2, HKDF-SM3) ----------------------------------------------------------

absl::StatusOr<std::string> Sm2KemPublicKey(absl::string_view sk) {
  SMCRYPT_ASSIGN_OR_RETURN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(sk));
  return key.public_key().ToPoint();
}

absl::StatusOr<SecretData> Sm2KemDh(absl::string_view sk, absl::string_view pk) {
  if (pk.size() != kSm2PointSize) {
    return absl::InvalidArgumentError(absl::StrCat("SM2 public key: expected ", kSm2PointSize,
                                                   " bytes, got ", pk.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(Sm2PublicKey peer, Sm2PublicKey::FromPoint(pk));
  // The scalar straight into the multiplication: an Sm2PrivateKey would also compute
  // d·G and (1 + d)⁻¹ mod n, which DH does not use.
  return Sm2EcdhScalar(sk, peer);
}

// n − 1 for sm2p256v1 (GB/T 32918.5 §2: n = FFFFFFFE FFFFFFFF FFFFFFFF FFFFFFFF 7203DF6B
// 21C6052B 53BBF409 39D54123): SM2 private keys are in [1, n − 2].
constexpr uint8_t kSm2SkLimit[32] = {
    0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0x72, 0x03, 0xDF, 0x6B, 0x21, 0xC6, 0x05, 0x2B, 0x53, 0xBB, 0xF4, 0x09, 0x39, 0xD5, 0x41, 0x22};

// ---- DHKEM(P-256, HKDF-SHA256) -----------------------------------------------------

// The order n of P-256 (SEC 2 §2.4.2 secp256r1).
constexpr uint8_t kP256Order[32] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51};

// ---- AEADs -------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Aead>> NewAes128GcmAead(absl::string_view key) {
  return NewAesGcmOpenSsl(Algorithm::kAes128Gcm, key, kHpkeTagSize);
}

absl::StatusOr<std::unique_ptr<Aead>> NewSm4GcmAead(absl::string_view key) {
  return NewSm4Gcm(key, kHpkeTagSize);
}

const HpkeKdf kHkdfSha256Desc = {kHpkeKdfHkdfSha256, "HKDF-SHA256", kHkdfSha256HashSize,
                                 &HkdfSha256Extract, &HkdfSha256Expand};
const HpkeAead kAes128GcmDesc = {kHpkeAeadAes128Gcm, "AES-128-GCM", 16, 12, 16,
                                 &NewAes128GcmAead};

}  // namespace

const HpkeKdf kHpkeKdfHkdfSm3Desc = {kHpkeKdfHkdfSm3, "HKDF-SM3", kSm3DigestSize,
                                     &HkdfSm3Extract, &HkdfSm3Expand};
const HpkeAead kHpkeAeadSm4GcmDesc = {kHpkeAeadSm4Gcm, "SM4-GCM", kSm4KeySize, 12, 16,
                                      &NewSm4GcmAead};
const HpkeKem kHpkeKemSm2Desc = {kHpkeKemSm2HkdfSm3, "DHKEM(SM2, HKDF-SM3)",
                                 32, 65, 65, 32, 0xFF, kSm2SkLimit, &kHpkeKdfHkdfSm3Desc,
                                 &Sm2KemPublicKey, &Sm2KemDh};
const HpkeKem kHpkeKemP256Desc = {kHpkeKemP256HkdfSha256, "DHKEM(P-256, HKDF-SHA256)",
                                  32, 65, 65, 32, 0xFF, kP256Order, &kHkdfSha256Desc,
                                  &P256PublicPointFromScalar, &P256Dh};

const HpkeSuiteDesc& GetHpkeSuiteDesc(HpkeSuite suite) {
  static const HpkeSuiteDesc kP256 = {HpkeSuite::kP256Sha256Aes128Gcm,
                                      "HPKE-P256-SHA256-AES128GCM", &kHpkeKemP256Desc,
                                      &kHkdfSha256Desc, &kAes128GcmDesc};
  static const HpkeSuiteDesc kSm = {HpkeSuite::kSm2Sm3Sm4Gcm, "HPKE-SM2-SM3-SM4GCM",
                                    &kHpkeKemSm2Desc, &kHpkeKdfHkdfSm3Desc,
                                    &kHpkeAeadSm4GcmDesc};
  return suite == HpkeSuite::kSm2Sm3Sm4Gcm ? kSm : kP256;
}

}  // namespace smcrypt::internal
