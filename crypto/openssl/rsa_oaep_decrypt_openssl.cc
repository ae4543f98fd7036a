#include "crypto/openssl/rsa_oaep_decrypt_openssl.h"

#include <openssl/crypto.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/rsa_oaep_encrypt_openssl.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<std::unique_ptr<RsaOaepDecryptOpenSsl>> RsaOaepDecryptOpenSsl::New(
    Algorithm alg, absl::string_view private_key) {
  SMCRYPT_ASSIGN_OR_RETURN(const KeySpec* spec, RsaOaepKeySpecFor(alg));
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, ParsePrivateKey(private_key, *spec));
  return std::unique_ptr<RsaOaepDecryptOpenSsl>(new RsaOaepDecryptOpenSsl(alg, std::move(key)));
}

absl::StatusOr<std::string> RsaOaepDecryptOpenSsl::Decrypt(absl::string_view ciphertext) const {
  const size_t k = RsaModulusSize(key_.get());
  if (ciphertext.size() != k) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_), " ciphertext must be ",
                                                   k, " bytes, got ", ciphertext.size()));
  }
  SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_.get(), nullptr));
  if (ctx == nullptr || EVP_PKEY_decrypt_init(ctx.get()) != 1) {
    return SslInternalError("EVP_PKEY_decrypt_init(RSA-OAEP)");
  }
  SMCRYPT_RETURN_IF_ERROR(ConfigureRsaOaep(ctx.get()));
  std::string out(k, '\0');
  absl::Cleanup wipe = [&out] { OPENSSL_cleanse(out.data(), out.size()); };
  size_t len = out.size();
  if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len,
                       reinterpret_cast<const unsigned char*>(ciphertext.data()),
                       ciphertext.size()) != 1) {
    ClearSslErrors();
    return absl::InvalidArgumentError("decryption failed");
  }
  // Wipe the unused tail (OpenSSL's working copy of EM may have been written there).
  OPENSSL_cleanse(out.data() + len, out.size() - len);
  std::move(wipe).Cancel();
  out.resize(len);
  return out;
}

}  // namespace smcrypt
