#include "crypto/openssl/rsa_oaep_encrypt_openssl.h"

#include <openssl/rsa.h>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<const KeySpec*> RsaOaepKeySpecFor(Algorithm alg) {
  if (alg == Algorithm::kRsa2048Oaep) return &Rsa2048KeySpec();
  if (alg == Algorithm::kRsa3072Oaep) return &Rsa3072KeySpec();
  return absl::InvalidArgumentError(
      absl::StrCat(OpenSslAlgorithmName(alg), " is not an RSA-OAEP algorithm"));
}

absl::Status ConfigureRsaOaep(EVP_PKEY_CTX* ctx) {
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MD * md, FetchedSha256());
  if (EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) != 1 ||
      EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) != 1 || EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) != 1) {
    return SslInternalError("configuring RSA-OAEP");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RsaOaepEncryptOpenSsl>> RsaOaepEncryptOpenSsl::New(
    Algorithm alg, absl::string_view public_key) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, RsaOaepKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, ParsePublicKey(public_key, *spec));
  return std::unique_ptr<RsaOaepEncryptOpenSsl>(new RsaOaepEncryptOpenSsl(alg, std::move(key)));
}

absl::StatusOr<std::string> RsaOaepEncryptOpenSsl::Encrypt(absl::string_view plaintext) const {
  const size_t k = RsaModulusSize(key_.get());
  const size_t limit = k - kRsaOaepOverhead;
  if (plaintext.size() > limit) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_),
                                                   " plaintext must be at most ", limit,
                                                   " bytes, got ", plaintext.size()));
  }
  SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
  if (ctx == nullptr || EVP_PKEY_encrypt_init(ctx.get()) != 1) {
    return SslInternalError("EVP_PKEY_encrypt_init(RSA-OAEP)");
  }
  SMCRYPT_RETURN_IF_ERROR(ConfigureRsaOaep(ctx.get()));
  std::string out(k, '\0');
  size_t len = out.size();
  if (EVP_PKEY_encrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len,
                       reinterpret_cast<const unsigned char*>(plaintext.data()),
                       plaintext.size()) != 1 ||
      len != k) {
    return SslInternalError(absl::StrCat(OpenSslAlgorithmName(alg_), " encryption"));
  }
  return out;
}

}  // namespace smcrypt
