#include "crypto/openssl/rsa_pss_verify_openssl.h"

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/rsa_pss_sign_openssl.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<std::unique_ptr<RsaPssVerifyOpenSsl>> RsaPssVerifyOpenSsl::New(
    Algorithm alg, absl::string_view public_key, bool prehashed) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, RsaPssKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, ParsePublicKey(public_key, *spec));
  return std::unique_ptr<RsaPssVerifyOpenSsl>(
      new RsaPssVerifyOpenSsl(alg, std::move(key), prehashed));
}

absl::Status RsaPssVerifyOpenSsl::Verify(absl::string_view signature,
                                         absl::string_view data) const {
  const size_t k = RsaModulusSize(key_.get());
  if (signature.size() != k) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_), " signature must be ",
                                                   k, " bytes, got ", signature.size()));
  }
  if (prehashed_ && data.size() != kSha256DigestSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpenSslAlgorithmName(alg_), " digest must be 32 bytes (SHA-256), got ", data.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MD * md, FetchedSha256());
  const unsigned char* sig = reinterpret_cast<const unsigned char*>(signature.data());
  const unsigned char* in = reinterpret_cast<const unsigned char*>(data.data());
  int result = 0;
  if (prehashed_) {
    SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
    if (ctx == nullptr || EVP_PKEY_verify_init(ctx.get()) != 1 ||
        EVP_PKEY_CTX_set_signature_md(ctx.get(), md) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " verification setup"));
    }
    SMCRYPT_RETURN_IF_ERROR(ConfigureRsaPss(ctx.get()));
    result = EVP_PKEY_verify(ctx.get(), sig, signature.size(), in, data.size());
  } else {
    SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;  // owned by `ctx`
    if (ctx == nullptr || EVP_DigestVerifyInit_ex(ctx.get(), &pctx, EVP_MD_get0_name(md),
                                                  nullptr, nullptr, key_.get(), nullptr) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " verification setup"));
    }
    SMCRYPT_RETURN_IF_ERROR(ConfigureRsaPss(pctx));
    result = EVP_DigestVerify(ctx.get(), sig, signature.size(), in, data.size());
  }
  if (result != 1) {
    ClearSslErrors();
    return absl::UnauthenticatedError("signature invalid");
  }
  return absl::OkStatus();
}

}  // namespace smcrypt
