// registry.cc — factories keyed by Algorithm (smcrypt/registry.h). SM algorithms come
// from smcrypt's own kernels; the international ones from crypto/openssl/.
#include "smcrypt/registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/common/key_errors.h"
#include "crypto/common/status_macros.h"
#include "crypto/core/key_family.h"
#include "crypto/core/sm2_primitives.h"
#include "crypto/openssl/openssl_factories.h"
#include "smcrypt/hpke.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

absl::Status WrongKind(Algorithm alg, absl::string_view wanted) {
  return absl::InvalidArgumentError(
      absl::StrCat(AlgorithmName(alg), " is not ", wanted, " algorithm"));
}

// WrongFamily turns a parse failure into FailedPrecondition when the bytes are a
// well-formed key of another family; otherwise the parse error stands.
absl::Status WrongFamilyOr(absl::string_view der, absl::Status parse_error) {
  const KeyFamily family = DetectKeyFamily(der);
  if (family != KeyFamily::kUnknown && family != KeyFamily::kSm2) {
    return absl::FailedPreconditionError(
        absl::StrCat("key is ", KeyFamilyName(family), ", algorithm needs SM2"));
  }
  return parse_error;
}

}  // namespace

absl::StatusOr<Sm2PrivateKey> ParseSm2PrivateKey(absl::string_view in) {
  SMCRYPT_ASSIGN_OR_RETURN(KeyBytes key, UnwrapKey(in));
  absl::string_view bytes = SecretDataAsStringView(key.bytes);
  if (key.pem_label.empty() && bytes.size() == kSm2ScalarSize) {
    return Sm2PrivateKey::FromScalar(bytes);
  }
  if (!key.pem_label.empty() && key.pem_label != "PRIVATE KEY") {
    return absl::InvalidArgumentError(absl::StrCat(
        "SM2 private key: expected PEM \"PRIVATE KEY\" (PKCS#8), got \"", key.pem_label, "\""));
  }
  absl::Status start = CheckKeyDerStart(bytes, KeyRole::kPrivate);
  absl::StatusOr<Sm2PrivateKey> parsed =
      start.ok() ? Sm2PrivateKeyFromPkcs8(bytes) : absl::StatusOr<Sm2PrivateKey>(start);
  if (!parsed.ok()) {
    return WrongFamilyOr(bytes, AsUnparsableKeyError(parsed.status(), "SM2", KeyRole::kPrivate,
                                                     /*raw_forms=*/true, in.size()));
  }
  return parsed;
}

absl::StatusOr<Sm2PublicKey> ParseSm2PublicKey(absl::string_view in) {
  SMCRYPT_ASSIGN_OR_RETURN(KeyBytes key, UnwrapKey(in));
  absl::string_view bytes = SecretDataAsStringView(key.bytes);
  if (key.pem_label.empty() &&
      ((bytes.size() == kSm2PointSize && bytes[0] == 0x04) ||
       (bytes.size() == kSm2CompressedPointSize && (bytes[0] == 0x02 || bytes[0] == 0x03)))) {
    return Sm2PublicKey::FromPoint(bytes);
  }
  if (!key.pem_label.empty() && key.pem_label != "PUBLIC KEY") {
    return absl::InvalidArgumentError(absl::StrCat(
        "SM2 public key: expected PEM \"PUBLIC KEY\" (SubjectPublicKeyInfo), got \"",
        key.pem_label, "\""));
  }
  auto parsed = Sm2PublicKeyFromSpki(bytes);
  if (!parsed.ok()) {
    return WrongFamilyOr(bytes, AsUnparsableKeyError(parsed.status(), "SM2", KeyRole::kPublic,
                                                     /*raw_forms=*/true, in.size()));
  }
  return parsed;
}

absl::StatusOr<std::unique_ptr<Hash>> NewHash(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSm3:
      return std::unique_ptr<Hash>(new Sm3());
    case Algorithm::kSha256:
      return NewSha256OpenSsl();
    default:
      return WrongKind(alg, "a hash");
  }
}

absl::StatusOr<std::unique_ptr<Mac>> NewMac(Algorithm alg, absl::string_view key) {
  switch (alg) {
    case Algorithm::kHmacSm3: {
      SMCRYPT_ASSIGN_OR_RETURN(auto mac, HmacSm3::New(key));
      return std::unique_ptr<Mac>(std::move(mac));
    }
    case Algorithm::kHmacSha256:
      return NewHmacSha256OpenSsl(key);
    default:
      return WrongKind(alg, "a MAC");
  }
}

absl::StatusOr<std::unique_ptr<Cipher>> NewCipher(Algorithm alg, absl::string_view key,
                                                  Padding padding) {
  switch (alg) {
    case Algorithm::kSm4Ecb:
      return NewSm4Ecb(key, padding);
    case Algorithm::kSm4Cbc:
      return NewSm4Cbc(key, padding);
    case Algorithm::kSm4Ctr:
      return NewSm4Ctr(key);
    case Algorithm::kSm4Cfb:
      return NewSm4Cfb(key);
    case Algorithm::kSm4Ofb:
      return NewSm4Ofb(key);
    case Algorithm::kSm4Xts:
      return NewSm4Xts(key, Sm4XtsVariant::kIeee1619);
    case Algorithm::kSm4XtsGb:
      return NewSm4Xts(key, Sm4XtsVariant::kGbT17964);
    case Algorithm::kAes128Ecb:
    case Algorithm::kAes128Cbc:
    case Algorithm::kAes128Ctr:
    case Algorithm::kAes256Ecb:
    case Algorithm::kAes256Cbc:
    case Algorithm::kAes256Ctr:
      return NewAesCipherOpenSsl(alg, key, padding);
    default:
      return WrongKind(alg, "an unauthenticated cipher mode");
  }
}

absl::StatusOr<std::unique_ptr<Aead>> NewAead(Algorithm alg, absl::string_view key,
                                              size_t tag_size) {
  if (tag_size == 0) tag_size = 16;
  switch (alg) {
    case Algorithm::kSm4Gcm:
      return NewSm4Gcm(key, tag_size);
    case Algorithm::kSm4Ccm:
      return NewSm4Ccm(key, tag_size);
    case Algorithm::kAes128Gcm:
    case Algorithm::kAes256Gcm:
      return NewAesGcmOpenSsl(alg, key, tag_size);
    default:
      return WrongKind(alg, "an AEAD");
  }
}

absl::StatusOr<KeyPair> GenerateKeyPair(Algorithm alg) {
  switch (alg) {
    case Algorithm::kHpkeSm2Sm3Sm4Gcm:  // an SM2 key pair
    case Algorithm::kSm2: {
      SMCRYPT_ASSIGN_OR_RETURN(Sm2PrivateKey key, Sm2PrivateKey::Generate());
      KeyPair pair;
      pair.private_key_der = Sm2PrivateKeyToPkcs8(key);
      pair.public_key_der = Sm2PublicKeyToSpki(key.public_key());
      return pair;
    }
    case Algorithm::kHpkeP256Sha256Aes128Gcm:  // an EC P-256 key pair
      return GenerateKeyPairOpenSsl(Algorithm::kEcdsaP256);
    case Algorithm::kEcdsaP256:
    case Algorithm::kEcdsaSecp256k1:
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa3072Pss:
    case Algorithm::kRsa2048Oaep:
    case Algorithm::kRsa3072Oaep:
      return GenerateKeyPairOpenSsl(alg);
    default:
      return WrongKind(alg, "a public-key");
  }
}

absl::StatusOr<HpkeSuite> HpkeSuiteOf(Algorithm alg) {
  switch (alg) {
    case Algorithm::kHpkeP256Sha256Aes128Gcm:
      return HpkeSuite::kP256Sha256Aes128Gcm;
    case Algorithm::kHpkeSm2Sm3Sm4Gcm:
      return HpkeSuite::kSm2Sm3Sm4Gcm;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(AlgorithmName(alg), " is not a hybrid encryption algorithm"));
  }
}

absl::StatusOr<std::unique_ptr<HybridEncrypt>> NewHybridEncrypt(Algorithm alg,
                                                                absl::string_view public_key) {
  SMCRYPT_ASSIGN_OR_RETURN(HpkeSuite suite, HpkeSuiteOf(alg));
  return NewHpkeEncrypt(suite, public_key);
}

absl::StatusOr<std::unique_ptr<HybridDecrypt>> NewHybridDecrypt(Algorithm alg,
                                                                absl::string_view private_key) {
  SMCRYPT_ASSIGN_OR_RETURN(HpkeSuite suite, HpkeSuiteOf(alg));
  return NewHpkeDecrypt(suite, private_key);
}

absl::StatusOr<std::unique_ptr<PublicKeySign>> NewPublicKeySign(
    Algorithm alg, absl::string_view private_key, const SignatureOptions& options) {
  switch (alg) {
    case Algorithm::kSm2: {
      SMCRYPT_ASSIGN_OR_RETURN(Sm2PrivateKey key, ParseSm2PrivateKey(private_key));
      return Sm2Sign::New(std::move(key), options);
    }
    case Algorithm::kEcdsaP256:
    case Algorithm::kEcdsaSecp256k1:
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa3072Pss:
      return NewPublicKeySignOpenSsl(alg, private_key, options.encoding, options.prehashed);
    default:
      return WrongKind(alg, "a signature");
  }
}

absl::StatusOr<std::unique_ptr<PublicKeyVerify>> NewPublicKeyVerify(
    Algorithm alg, absl::string_view public_key, const SignatureOptions& options) {
  switch (alg) {
    case Algorithm::kSm2: {
      SMCRYPT_ASSIGN_OR_RETURN(Sm2PublicKey key, ParseSm2PublicKey(public_key));
      return Sm2Verify::New(std::move(key), options);
    }
    case Algorithm::kEcdsaP256:
    case Algorithm::kEcdsaSecp256k1:
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa3072Pss:
      return NewPublicKeyVerifyOpenSsl(alg, public_key, options.encoding, options.prehashed);
    default:
      return WrongKind(alg, "a signature");
  }
}

absl::StatusOr<std::unique_ptr<PublicKeyEncrypt>> NewPublicKeyEncrypt(
    Algorithm alg, absl::string_view public_key, const PublicKeyEncryptionOptions& options) {
  switch (alg) {
    case Algorithm::kSm2: {
      SMCRYPT_ASSIGN_OR_RETURN(Sm2PublicKey key, ParseSm2PublicKey(public_key));
      return std::unique_ptr<PublicKeyEncrypt>(
          new Sm2PublicKeyEncrypt(std::move(key), options.sm2_format));
    }
    case Algorithm::kRsa2048Oaep:
    case Algorithm::kRsa3072Oaep:
      return NewRsaOaepEncryptOpenSsl(alg, public_key);
    default:
      return WrongKind(alg, "a public-key encryption");
  }
}

absl::StatusOr<std::unique_ptr<PublicKeyDecrypt>> NewPublicKeyDecrypt(
    Algorithm alg, absl::string_view private_key, const PublicKeyEncryptionOptions& options) {
  switch (alg) {
    case Algorithm::kSm2: {
      SMCRYPT_ASSIGN_OR_RETURN(Sm2PrivateKey key, ParseSm2PrivateKey(private_key));
      return std::unique_ptr<PublicKeyDecrypt>(
          new Sm2PublicKeyDecrypt(std::move(key), options.sm2_format));
    }
    case Algorithm::kRsa2048Oaep:
    case Algorithm::kRsa3072Oaep:
      return NewRsaOaepDecryptOpenSsl(alg, private_key);
    default:
      return WrongKind(alg, "a public-key encryption");
  }
}

absl::StatusOr<std::string> PublicKeyFromPrivate(Algorithm alg, absl::string_view private_key) {
  switch (alg) {
    case Algorithm::kHpkeP256Sha256Aes128Gcm:
      return PublicKeyFromPrivateOpenSsl(Algorithm::kEcdsaP256, private_key);
    case Algorithm::kHpkeSm2Sm3Sm4Gcm:
    case Algorithm::kSm2: {
      SMCRYPT_ASSIGN_OR_RETURN(Sm2PrivateKey key, ParseSm2PrivateKey(private_key));
      return Sm2PublicKeyToSpki(key.public_key());
    }
    case Algorithm::kEcdsaP256:
    case Algorithm::kEcdsaSecp256k1:
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa3072Pss:
    case Algorithm::kRsa2048Oaep:
    case Algorithm::kRsa3072Oaep:
      return PublicKeyFromPrivateOpenSsl(alg, private_key);
    default:
      return WrongKind(alg, "a public-key");
  }
}

}  // namespace smcrypt
