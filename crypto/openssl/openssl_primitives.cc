#include "crypto/openssl/openssl_primitives.h"

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/aes_cipher_openssl.h"
#include "crypto/openssl/aes_gcm_openssl.h"
#include "crypto/openssl/ecdsa_sign_openssl.h"
#include "crypto/openssl/ecdsa_verify_openssl.h"
#include "crypto/openssl/hmac_openssl.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/rsa_oaep_decrypt_openssl.h"
#include "crypto/openssl/rsa_oaep_encrypt_openssl.h"
#include "crypto/openssl/rsa_pss_sign_openssl.h"
#include "crypto/openssl/rsa_pss_verify_openssl.h"
#include "crypto/openssl/sha256_openssl.h"

namespace smcrypt {
namespace {

bool IsEcdsa(Algorithm alg) {
  return alg == Algorithm::kEcdsaP256 || alg == Algorithm::kEcdsaSecp256k1;
}
bool IsRsaPss(Algorithm alg) {
  return alg == Algorithm::kRsa2048Pss || alg == Algorithm::kRsa3072Pss;
}

absl::Status NotServed(Algorithm alg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(OpenSslAlgorithmName(alg), " is not ", what, " served by OpenSSL"));
}

absl::StatusOr<const KeySpec*> AsymmetricKeySpecFor(Algorithm alg) {
  switch (alg) {
    case Algorithm::kEcdsaP256:
      return &EcP256KeySpec();
    case Algorithm::kEcdsaSecp256k1:
      return &EcSecp256k1KeySpec();
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa2048Oaep:
      return &Rsa2048KeySpec();
    case Algorithm::kRsa3072Pss:
    case Algorithm::kRsa3072Oaep:
      return &Rsa3072KeySpec();
    default:
      return NotServed(alg, "an asymmetric algorithm");
  }
}

template <typename Base, typename T>
absl::StatusOr<std::unique_ptr<Base>> Upcast(absl::StatusOr<std::unique_ptr<T>> p) {
  if (!p.ok()) return p.status();
  return std::unique_ptr<Base>(*std::move(p));
}

}  // namespace

bool IsOpenSslAlgorithm(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSha256:
    case Algorithm::kHmacSha256:
    case Algorithm::kAes128Ecb:
    case Algorithm::kAes128Cbc:
    case Algorithm::kAes128Ctr:
    case Algorithm::kAes128Gcm:
    case Algorithm::kAes256Ecb:
    case Algorithm::kAes256Cbc:
    case Algorithm::kAes256Ctr:
    case Algorithm::kAes256Gcm:
    case Algorithm::kEcdsaP256:
    case Algorithm::kEcdsaSecp256k1:
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa3072Pss:
    case Algorithm::kRsa2048Oaep:
    case Algorithm::kRsa3072Oaep:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<std::unique_ptr<Hash>> NewSha256OpenSsl() {
  return Upcast<Hash>(Sha256OpenSsl::New());
}

absl::StatusOr<std::unique_ptr<Mac>> NewHmacSha256OpenSsl(absl::string_view key) {
  return Upcast<Mac>(HmacOpenSsl::New(key));
}

absl::StatusOr<std::unique_ptr<Cipher>> NewAesCipherOpenSsl(Algorithm alg,
                                                            absl::string_view key,
                                                            Padding padding) {
  return Upcast<Cipher>(AesCipherOpenSsl::New(alg, key, padding));
}

absl::StatusOr<std::unique_ptr<Aead>> NewAesGcmOpenSsl(Algorithm alg, absl::string_view key,
                                                       size_t tag_size) {
  return Upcast<Aead>(AesGcmOpenSsl::New(alg, key, tag_size));
}

absl::StatusOr<std::unique_ptr<PublicKeySign>> NewPublicKeySignOpenSsl(
    Algorithm alg, absl::string_view private_key, SignatureEncoding encoding, bool prehashed) {
  if (IsEcdsa(alg)) {
    return Upcast<PublicKeySign>(EcdsaSignOpenSsl::New(alg, private_key, encoding, prehashed));
  }
  if (IsRsaPss(alg)) {
    if (encoding != SignatureEncoding::kDer) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpenSslAlgorithmName(alg), " has no raw signature encoding"));
    }
    return Upcast<PublicKeySign>(RsaPssSignOpenSsl::New(alg, private_key, prehashed));
  }
  return NotServed(alg, "a signature algorithm");
}

absl::StatusOr<std::unique_ptr<PublicKeyVerify>> NewPublicKeyVerifyOpenSsl(
    Algorithm alg, absl::string_view public_key, SignatureEncoding encoding, bool prehashed) {
  if (IsEcdsa(alg)) {
    return Upcast<PublicKeyVerify>(EcdsaVerifyOpenSsl::New(alg, public_key, encoding, prehashed));
  }
  if (IsRsaPss(alg)) {
    if (encoding != SignatureEncoding::kDer) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpenSslAlgorithmName(alg), " has no raw signature encoding"));
    }
    return Upcast<PublicKeyVerify>(RsaPssVerifyOpenSsl::New(alg, public_key, prehashed));
  }
  return NotServed(alg, "a signature algorithm");
}

absl::StatusOr<std::unique_ptr<PublicKeyEncrypt>> NewRsaOaepEncryptOpenSsl(
    Algorithm alg, absl::string_view public_key) {
  return Upcast<PublicKeyEncrypt>(RsaOaepEncryptOpenSsl::New(alg, public_key));
}

absl::StatusOr<std::unique_ptr<PublicKeyDecrypt>> NewRsaOaepDecryptOpenSsl(
    Algorithm alg, absl::string_view private_key) {
  return Upcast<PublicKeyDecrypt>(RsaOaepDecryptOpenSsl::New(alg, private_key));
}

absl::StatusOr<KeyPair> GenerateKeyPairOpenSsl(Algorithm alg) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, AsymmetricKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, GenerateKey(*spec));
  KeyPair pair;
  SMCRYPT_ASSIGN_OR_RETURN(pair.private_key_der, EncodePkcs8(key.get()));
  SMCRYPT_ASSIGN_OR_RETURN(pair.public_key_der, EncodeSpki(key.get()));
  return pair;
}

absl::StatusOr<std::string> PublicKeyFromPrivateOpenSsl(Algorithm alg,
                                                        absl::string_view private_key) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, AsymmetricKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, ParsePrivateKey(private_key, *spec));
  return EncodeSpki(key.get());
}

}  // namespace smcrypt
