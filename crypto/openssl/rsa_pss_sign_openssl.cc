#include "crypto/openssl/rsa_pss_sign_openssl.h"

#include <openssl/rsa.h>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<const KeySpec*> RsaPssKeySpecFor(Algorithm alg) {
  if (alg == Algorithm::kRsa2048Pss) return &Rsa2048KeySpec();
  if (alg == Algorithm::kRsa3072Pss) return &Rsa3072KeySpec();
  return absl::InvalidArgumentError(
      absl::StrCat(OpenSslAlgorithmName(alg), " is not an RSA-PSS algorithm"));
}

absl::Status ConfigureRsaPss(EVP_PKEY_CTX* ctx) {
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MD * md, FetchedSha256());
  if (EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) != 1 ||
      EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) != 1 ||
      EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, kRsaPssSaltSize) != 1) {
    return SslInternalError("configuring RSA-PSS");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RsaPssSignOpenSsl>> RsaPssSignOpenSsl::New(
    Algorithm alg, absl::string_view private_key, bool prehashed) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, RsaPssKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, ParsePrivateKey(private_key, *spec));
  return std::unique_ptr<RsaPssSignOpenSsl>(new RsaPssSignOpenSsl(alg, std::move(key), prehashed));
}

absl::StatusOr<std::string> RsaPssSignOpenSsl::Sign(absl::string_view data) const {
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MD * md, FetchedSha256());
  const unsigned char* in = reinterpret_cast<const unsigned char*>(data.data());
  std::string sig(RsaModulusSize(key_.get()), '\0');
  unsigned char* out = reinterpret_cast<unsigned char*>(sig.data());
  size_t len = sig.size();
  if (prehashed_) {
    if (data.size() != kSha256DigestSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          OpenSslAlgorithmName(alg_), " digest must be 32 bytes (SHA-256), got ", data.size()));
    }
    SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
    if (ctx == nullptr || EVP_PKEY_sign_init(ctx.get()) != 1 ||
        EVP_PKEY_CTX_set_signature_md(ctx.get(), md) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " signing setup"));
    }
    SMCRYPT_RETURN_IF_ERROR(ConfigureRsaPss(ctx.get()));
    if (EVP_PKEY_sign(ctx.get(), out, &len, in, data.size()) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " signing"));
    }
  } else {
    SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;  // owned by `ctx`
    if (ctx == nullptr || EVP_DigestSignInit_ex(ctx.get(), &pctx, EVP_MD_get0_name(md), nullptr,
                                                nullptr, key_.get(), nullptr) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " signing setup"));
    }
    SMCRYPT_RETURN_IF_ERROR(ConfigureRsaPss(pctx));
    if (EVP_DigestSign(ctx.get(), out, &len, in, data.size()) != 1) {
      return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " signing"));
    }
  }
  if (len != sig.size()) return absl::InternalError("RSA-PSS: unexpected signature length");
  return sig;
}

}  // namespace smcrypt
