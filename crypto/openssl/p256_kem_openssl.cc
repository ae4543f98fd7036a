// p256_kem_openssl.cc — DHKEM(P-256) keys kept as EVP_PKEYs: one EVP_PKEY_keygen and one
// EVP_PKEY_derive per Encap, one point decoding and one EVP_PKEY_derive per Decap.
//
// Shared objects are only read: the recipient's EVP_PKEYs (OpenSSL 3 keys are safe to
// use from many threads at once when nobody modifies them). What is mutable is made per
// call (derive contexts, the ephemeral key, the peer key of a Decap) or per thread (the
// prepared keygen context).
#include "crypto/openssl/p256_kem_openssl.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/ecdh_p256_openssl.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/ssl_errors.h"
#include "crypto/openssl/ssl_unique_ptr.h"

namespace smcrypt {

struct P256KemPublicKey::Key {
  SslUniquePtr<EVP_PKEY> pkey;
};

namespace {

absl::Status CheckPoint(absl::string_view point) {
  if (point.size() != kEcPointSize || static_cast<uint8_t>(point[0]) != 0x04) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EC P-256 public key: expected a ", kEcPointSize,
        "-byte uncompressed point (04 || x || y), got ", point.size(), " bytes"));
  }
  return absl::OkStatus();
}

absl::Status InvalidPoint() {
  ClearSslErrors();
  return absl::InvalidArgumentError("EC P-256 public key: not a valid point on the curve");
}

// KeygenContext is this thread's EVP_PKEY_CTX prepared for P-256 key generation
// (keygen_init and the group set once, so each key costs one EVP_PKEY_keygen), or null
// when OpenSSL refused to prepare it. A keygen context is mutable, hence one per thread.
EVP_PKEY_CTX* KeygenContext() {
  thread_local const SslUniquePtr<EVP_PKEY_CTX> ctx = [] {
    SslUniquePtr<EVP_PKEY_CTX> c(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    if (c == nullptr || EVP_PKEY_keygen_init(c.get()) != 1 ||
        EVP_PKEY_CTX_set_group_name(c.get(), EcP256KeySpec().ec_group) != 1) {
      c.reset();
    }
    return c;
  }();
  return ctx.get();
}

}  // namespace

// ---- P256KemPublicKey ----------------------------------------------------------------

P256KemPublicKey::P256KemPublicKey(std::unique_ptr<Key> key, std::string point)
    : key_(std::move(key)), point_(std::move(point)) {}

P256KemPublicKey::~P256KemPublicKey() = default;

absl::StatusOr<std::unique_ptr<const P256KemPublicKey>> P256KemPublicKey::New(
    absl::string_view point) {
  SMCRYPT_RETURN_IF_ERROR(CheckPoint(point));
  // ParsePublicKey validates the point (EVP_PKEY_public_check_quick): once, here.
  auto key = std::make_unique<Key>();
  SMCRYPT_ASSIGN_OR_RETURN(key->pkey, ParsePublicKey(point, EcP256KeySpec()));
  return std::unique_ptr<const P256KemPublicKey>(
      new P256KemPublicKey(std::move(key), std::string(point)));
}

absl::Status P256KemPublicKey::EphemeralDh(std::string* enc, SecretData* dh) const {
  EVP_PKEY_CTX* const gen = KeygenContext();
  if (gen == nullptr) return SslInternalError("preparing P-256 key generation");
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_keygen(gen, &raw) != 1) return SslInternalError("generating a P-256 key");
  const SslUniquePtr<EVP_PKEY> ephemeral(raw);  // EVP_PKEY_free clears skE
  // pkE straight from the key as SEC 1 octets (uncompressed is OpenSSL's default form).
  enc->assign(kEcPointSize, '\0');
  size_t len = 0;
  if (EVP_PKEY_get_octet_string_param(ephemeral.get(), OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY,
                                      reinterpret_cast<unsigned char*>(enc->data()),
                                      enc->size(), &len) != 1 ||
      len != kEcPointSize || (*enc)[0] != 0x04) {
    return SslInternalError("encoding the ephemeral P-256 public key");
  }
  SMCRYPT_ASSIGN_OR_RETURN(*dh, EcdhP256Derive(ephemeral.get(), key_->pkey.get()));
  return absl::OkStatus();
}

// ---- P256KemPrivateKey ---------------------------------------------------------------

P256KemPrivateKey::P256KemPrivateKey(std::unique_ptr<P256KemPublicKey::Key> key,
                                     std::unique_ptr<P256KemPublicKey::Key> public_template,
                                     std::string public_point)
    : key_(std::move(key)),
      public_template_(std::move(public_template)),
      public_point_(std::move(public_point)) {}

P256KemPrivateKey::~P256KemPrivateKey() = default;

absl::StatusOr<std::unique_ptr<const P256KemPrivateKey>> P256KemPrivateKey::New(
    absl::string_view sk) {
  if (sk.size() != kEcScalarSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("P-256 private key: expected ", kEcScalarSize, " bytes, got ", sk.size()));
  }
  auto key = std::make_unique<P256KemPublicKey::Key>();
  SMCRYPT_ASSIGN_OR_RETURN(key->pkey, ParsePrivateKey(sk, EcP256KeySpec()));
  SMCRYPT_ASSIGN_OR_RETURN(std::string point, EcPublicPoint(key->pkey.get()));
  // A public-only copy of pkR: Dh duplicates it and replaces the point, which gives a
  // key of the right group without looking the group up by name per message.
  auto public_template = std::make_unique<P256KemPublicKey::Key>();
  SMCRYPT_ASSIGN_OR_RETURN(public_template->pkey, ParsePublicKey(point, EcP256KeySpec()));
  return std::unique_ptr<const P256KemPrivateKey>(
      new P256KemPrivateKey(std::move(key), std::move(public_template), std::move(point)));
}

absl::StatusOr<SecretData> P256KemPrivateKey::Dh(absl::string_view peer_point) const {
  SMCRYPT_RETURN_IF_ERROR(CheckPoint(peer_point));
  SslUniquePtr<EVP_PKEY> peer(EVP_PKEY_dup(public_template_->pkey.get()));
  if (peer == nullptr) return SslInternalError("EVP_PKEY_dup");
  // Validation (SEC 1 §3.2.2.1; P-256 has cofactor 1) is the decoding itself: the point
  // goes through EC_POINT_oct2point, which refuses coordinates ≥ p and, through
  // EC_POINT_set_affine_coordinates, a point not on the curve; 65 bytes 04 ‖ x ‖ y
  // cannot encode the point at infinity. (A separate EVP_PKEY_public_check_quick would
  // repeat the same curve equation; p256_kem_openssl_test checks the refusals.)
  if (EVP_PKEY_set1_encoded_public_key(
          peer.get(), reinterpret_cast<const unsigned char*>(peer_point.data()),
          peer_point.size()) != 1) {
    return InvalidPoint();
  }
  return EcdhP256Derive(key_->pkey.get(), peer.get());
}

}  // namespace smcrypt
