// hkdf_openssl.cc — HKDF-SHA256 through EVP_KDF, P-256 point and DH helpers for HPKE.
#include "crypto/openssl/hkdf_openssl.h"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/x509.h>

#include <climits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/ecdh_p256_openssl.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/ssl_errors.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/pem.h"

namespace smcrypt {
namespace {

struct KdfCtxDeleter {
  void operator()(EVP_KDF_CTX* p) const { EVP_KDF_CTX_free(p); }
};

// Hkdf runs OpenSSL's HKDF in `mode` (extract only or expand only) with SHA-256.
absl::StatusOr<SecretData> Hkdf(int mode, absl::string_view salt, absl::string_view key,
                                absl::string_view info, size_t length) {
  // Fetched once (OpenSSL 3 method fetches cost microseconds each; a fetched EVP_KDF is
  // immutable and safe to share between threads). Never freed: process lifetime.
  static EVP_KDF* const kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) return SslInternalError("EVP_KDF_fetch(HKDF)");
  std::unique_ptr<EVP_KDF_CTX, KdfCtxDeleter> ctx(EVP_KDF_CTX_new(kdf));
  if (ctx == nullptr) return SslInternalError("EVP_KDF_CTX_new");
  char digest[] = "SHA256";
  OSSL_PARAM params[6];
  size_t n = 0;
  params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  params[n++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
  params[n++] = OSSL_PARAM_construct_octet_string(
      OSSL_KDF_PARAM_KEY, const_cast<char*>(key.data()), key.size());
  if (!salt.empty()) {
    params[n++] = OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()), salt.size());
  }
  if (!info.empty()) {
    params[n++] = OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()), info.size());
  }
  params[n] = OSSL_PARAM_construct_end();
  SecretData out(length);
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    return SslInternalError("HKDF-SHA256");
  }
  return out;
}

}  // namespace

absl::StatusOr<SecretData> HkdfSha256Extract(absl::string_view salt, absl::string_view ikm) {
  if (ikm.empty()) return absl::InvalidArgumentError("HKDF-SHA256 extract: empty ikm");
  return Hkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, salt, ikm, "", kHkdfSha256HashSize);
}

absl::StatusOr<SecretData> HkdfSha256Expand(absl::string_view prk, absl::string_view info,
                                            size_t length) {
  if (length == 0 || length > 255 * kHkdfSha256HashSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HKDF-SHA256 expand: length must be 1 to ", 255 * kHkdfSha256HashSize, ", got ",
        length));
  }
  if (prk.size() < kHkdfSha256HashSize) {
    return absl::InvalidArgumentError(absl::StrCat("HKDF-SHA256 expand: PRK of at least ",
                                                   kHkdfSha256HashSize, " bytes, got ",
                                                   prk.size()));
  }
  return Hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, "", prk, info, length);
}

absl::StatusOr<std::string> P256PublicPointFromScalar(absl::string_view sk) {
  if (sk.size() != kEcScalarSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("P-256 private key: expected ", kEcScalarSize, " bytes, got ", sk.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(auto ecdh, EcdhP256OpenSsl::New(sk));
  return ecdh->public_point();
}

absl::StatusOr<SecretData> P256Dh(absl::string_view sk, absl::string_view peer_point) {
  if (sk.size() != kEcScalarSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("P-256 private key: expected ", kEcScalarSize, " bytes, got ", sk.size()));
  }
  if (peer_point.size() != kEcPointSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "P-256 public key: expected ", kEcPointSize, " bytes, got ", peer_point.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(auto ecdh, EcdhP256OpenSsl::New(sk));
  return ecdh->ComputeSharedSecret(peer_point);
}

absl::StatusOr<SecretData> P256PrivateScalarFromKey(absl::string_view key) {
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> pkey, ParsePrivateKey(key, EcP256KeySpec()));
  return EcPrivateScalar(pkey.get());
}

absl::StatusOr<std::string> P256PublicPointFromKey(absl::string_view key) {
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_PKEY> pkey, ParsePublicKey(key, EcP256KeySpec()));
  return EcPublicPoint(pkey.get());
}

std::string DescribeEncodedKey(absl::string_view key) {
  SecretData der_storage;
  absl::string_view der = key;
  if (LooksLikePem(key)) {
    absl::StatusOr<PemBlock> block = PemDecode(key);
    if (!block.ok()) return "";
    der_storage = std::move(block->der);
    der = SecretDataAsStringView(der_storage);
  }
  if (der.empty() || der.size() > LONG_MAX) return "";
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  SslUniquePtr<EVP_PKEY> pkey(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
  if (pkey == nullptr) {
    p = reinterpret_cast<const unsigned char*>(der.data());
    SslUniquePtr<PKCS8_PRIV_KEY_INFO> p8(
        d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der.size())));
    if (p8 != nullptr) pkey.reset(EVP_PKCS82PKEY(p8.get()));
  }
  ClearSslErrors();
  if (pkey == nullptr) return "";
  return DescribeKey(pkey.get());
}

}  // namespace smcrypt
