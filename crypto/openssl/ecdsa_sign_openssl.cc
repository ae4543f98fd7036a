#include "crypto/openssl/ecdsa_sign_openssl.h"

#include "absl/strings/str_cat.h"
#include "crypto/common/der.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<const KeySpec*> EcdsaKeySpecFor(Algorithm alg) {
  if (alg == Algorithm::kEcdsaP256) return &EcP256KeySpec();
  if (alg == Algorithm::kEcdsaSecp256k1) return &EcSecp256k1KeySpec();
  return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg), " is not an ECDSA algorithm"));
}

absl::StatusOr<std::unique_ptr<EcdsaSignOpenSsl>> EcdsaSignOpenSsl::New(
    Algorithm alg, absl::string_view private_key, SignatureEncoding encoding, bool prehashed) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, EcdsaKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, ParsePrivateKey(private_key, *spec));
  return std::unique_ptr<EcdsaSignOpenSsl>(
      new EcdsaSignOpenSsl(alg, std::move(key), encoding, prehashed));
}

absl::StatusOr<std::string> EcdsaSignOpenSsl::Sign(absl::string_view data) const {
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MD * md, FetchedSha256());
  const unsigned char* in = reinterpret_cast<const unsigned char*>(data.data());
  std::string der(kEcdsaMaxDerSignatureSize, '\0');
  unsigned char* out = reinterpret_cast<unsigned char*>(der.data());
  size_t len = der.size();
  if (prehashed_) {
    if (data.size() != kSha256DigestSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          OpenSslAlgorithmName(alg_), " digest must be 32 bytes (SHA-256), got ", data.size()));
    }
    SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
    if (ctx == nullptr || EVP_PKEY_sign_init(ctx.get()) != 1 ||
        EVP_PKEY_CTX_set_signature_md(ctx.get(), md) != 1 ||
        EVP_PKEY_sign(ctx.get(), out, &len, in, data.size()) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " signing"));
    }
  } else {
    SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
    if (ctx == nullptr ||
        EVP_DigestSignInit_ex(ctx.get(), nullptr, EVP_MD_get0_name(md), nullptr, nullptr,
                              key_.get(), nullptr) != 1 ||
        EVP_DigestSign(ctx.get(), out, &len, in, data.size()) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " signing"));
    }
  }
  der.resize(len);
  if (encoding_ == SignatureEncoding::kDer) return der;
  return der::EcdsaSignatureDerToRaw(der, kEcdsaRawSignatureSize / 2);
}

}  // namespace smcrypt
