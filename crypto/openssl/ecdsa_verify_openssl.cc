#include "crypto/openssl/ecdsa_verify_openssl.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "crypto/common/der.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/ecdsa_sign_openssl.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<std::unique_ptr<EcdsaVerifyOpenSsl>> EcdsaVerifyOpenSsl::New(
    Algorithm alg, absl::string_view public_key, SignatureEncoding encoding, bool prehashed) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, EcdsaKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, ParsePublicKey(public_key, *spec));
  return std::unique_ptr<EcdsaVerifyOpenSsl>(
      new EcdsaVerifyOpenSsl(alg, std::move(key), encoding, prehashed));
}

absl::Status EcdsaVerifyOpenSsl::Verify(absl::string_view signature,
                                        absl::string_view data) const {
  if (prehashed_ && data.size() != kSha256DigestSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpenSslAlgorithmName(alg_), " digest must be 32 bytes (SHA-256), got ", data.size()));
  }
  // Both encodings are checked here, so OpenSSL only ever sees canonical DER.
  std::string der;
  if (encoding_ == SignatureEncoding::kRaw) {
    SMCRYPT_ASSIGN_OR_RETURN(der,
                             der::EcdsaSignatureRawToDer(signature, kEcdsaRawSignatureSize / 2));
  } else {
    SMCRYPT_RETURN_IF_ERROR(
        der::EcdsaSignatureDerToRaw(signature, kEcdsaRawSignatureSize / 2).status());
    der = std::string(signature);
  }
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MD * md, FetchedSha256());
  const unsigned char* sig = reinterpret_cast<const unsigned char*>(der.data());
  const unsigned char* in = reinterpret_cast<const unsigned char*>(data.data());
  int result = 0;
  if (prehashed_) {
    SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
    if (ctx == nullptr || EVP_PKEY_verify_init(ctx.get()) != 1 ||
        EVP_PKEY_CTX_set_signature_md(ctx.get(), md) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " verification setup"));
    }
    result = EVP_PKEY_verify(ctx.get(), sig, der.size(), in, data.size());
  } else {
    SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
    if (ctx == nullptr || EVP_DigestVerifyInit_ex(ctx.get(), nullptr, EVP_MD_get0_name(md),
                                                  nullptr, nullptr, key_.get(), nullptr) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " verification setup"));
    }
    result = EVP_DigestVerify(ctx.get(), sig, der.size(), in, data.size());
  }
  if (result != 1) {
    // The encoding was checked above, so any failure here is a signature that does not
    // verify (OpenSSL also rejects r, s outside [1, n-1] this way).
    ClearSslErrors();
    return absl::UnauthenticatedError("signature invalid");
  }
  return absl::OkStatus();
}

}  // namespace smcrypt
