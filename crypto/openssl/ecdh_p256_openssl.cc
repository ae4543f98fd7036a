#include "crypto/openssl/ecdh_p256_openssl.h"

#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<std::unique_ptr<EcdhP256OpenSsl>> EcdhP256OpenSsl::FromKey(
    SslUniquePtr<EVP_PKEY> key) {
  SMCRYPT_ASSIGN_OR_RETURN(std::string point, EcPublicPoint(key.get()));
  return std::unique_ptr<EcdhP256OpenSsl>(new EcdhP256OpenSsl(std::move(key), std::move(point)));
}

absl::StatusOr<std::unique_ptr<EcdhP256OpenSsl>> EcdhP256OpenSsl::New(
    absl::string_view private_key) {
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key,
                           ParsePrivateKey(private_key, EcP256KeySpec()));
  return FromKey(std::move(key));
}

absl::StatusOr<std::unique_ptr<EcdhP256OpenSsl>> EcdhP256OpenSsl::Generate() {
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> key, GenerateKey(EcP256KeySpec()));
  return FromKey(std::move(key));
}

absl::StatusOr<SecretData> EcdhP256OpenSsl::ComputeSharedSecret(
    absl::string_view peer_public_key) const {
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> peer,
                           ParsePublicKey(peer_public_key, EcP256KeySpec()));
  // ParsePublicKey has validated the point.
  return EcdhP256Derive(key_.get(), peer.get());
}

absl::StatusOr<SecretData> EcdhP256Derive(EVP_PKEY* own, EVP_PKEY* peer) {
  SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, own, nullptr));
  if (ctx == nullptr || EVP_PKEY_derive_init(ctx.get()) != 1 ||
      EVP_PKEY_derive_set_peer_ex(ctx.get(), peer, /*validate_peer=*/0) != 1) {
    return SslInternalError("ECDH P-256 setup");
  }
  SecretData out(kEcdhP256SharedSecretSize);
  size_t len = out.size();
  if (EVP_PKEY_derive(ctx.get(), out.data(), &len) != 1 || len != kEcdhP256SharedSecretSize) {
    return SslInternalError("ECDH P-256");
  }
  return out;
}

absl::StatusOr<SecretData> EcdhP256OpenSsl::PrivateScalar() const {
  return EcPrivateScalar(key_.get());
}
absl::StatusOr<SecretData> EcdhP256OpenSsl::PrivateKeyPkcs8() const {
  return EncodePkcs8(key_.get());
}
absl::StatusOr<std::string> EcdhP256OpenSsl::PublicKeySpki() const {
  return EncodeSpki(key_.get());
}

}  // namespace smcrypt
