// hkdf_openssl.cc — HKDF-SHA256 over OpenSSL's HMAC (EVP_MAC), P-256 point and DH
// helpers for HPKE.
#include "crypto/openssl/hkdf_openssl.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>
#include <openssl/x509.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/ecdh_p256_openssl.h"
#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/pem.h"

namespace smcrypt {
namespace {

// HmacSha256Template is an HMAC context with its digest set to SHA-256 and no key,
// made once: each HMAC duplicates it and keys the copy, so no call looks the digest up
// by name (OpenSSL 3 fetches a method for every name it is given). The template is
// never modified after it is made, so threads may duplicate it concurrently; it lives
// until the process exits.
const EVP_MAC_CTX* HmacSha256Template() {
  static const EVP_MAC_CTX* const tmpl = []() -> EVP_MAC_CTX* {
    absl::StatusOr<EVP_MAC*> mac = FetchedHmac();
    if (!mac.ok()) return nullptr;
    SslUniquePtr<EVP_MAC_CTX> ctx(EVP_MAC_CTX_new(*mac));
    char digest[] = "SHA2-256";
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    if (ctx == nullptr || EVP_MAC_CTX_set_params(ctx.get(), params) != 1) return nullptr;
    return ctx.release();
  }();
  return tmpl;
}

constexpr char kZeroSalt[kHkdfSha256HashSize] = {};

// ZeroSaltHmac is HmacSha256Template keyed with RFC 5869's default salt (HashLen zero
// bytes, public), made once: an extract without salt (most of HPKE's) starts from a copy
// of it instead of keying a context.
const EVP_MAC_CTX* ZeroSaltHmac() {
  static const EVP_MAC_CTX* const keyed = []() -> EVP_MAC_CTX* {
    const EVP_MAC_CTX* tmpl = HmacSha256Template();
    if (tmpl == nullptr) return nullptr;
    SslUniquePtr<EVP_MAC_CTX> ctx(EVP_MAC_CTX_dup(tmpl));
    if (ctx == nullptr ||
        EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(kZeroSalt),
                     sizeof(kZeroSalt), nullptr) != 1) {
      return nullptr;
    }
    return ctx.release();
  }();
  return keyed;
}

// Mac is one keyed HMAC-SHA-256 computation: Start(key) (or StartZeroSalt()), any
// number of Update, then Final into 32 bytes.
class Mac {
 public:
  absl::Status StartZeroSalt() {
    const EVP_MAC_CTX* keyed = ZeroSaltHmac();
    if (keyed == nullptr) return SslInternalError("preparing HMAC-SHA-256");
    ctx_.reset(EVP_MAC_CTX_dup(keyed));
    if (ctx_ == nullptr) return SslInternalError("EVP_MAC_CTX_dup(HMAC-SHA-256)");
    return absl::OkStatus();
  }
  absl::Status Start(absl::string_view key) {
    const EVP_MAC_CTX* tmpl = HmacSha256Template();
    if (tmpl == nullptr) return SslInternalError("preparing HMAC-SHA-256");
    ctx_.reset(EVP_MAC_CTX_dup(tmpl));
    // EVP_MAC_init reads a null key as "keep the current key": pass a valid pointer.
    static const unsigned char kNoKey[1] = {0};
    const unsigned char* k =
        key.empty() ? kNoKey : reinterpret_cast<const unsigned char*>(key.data());
    if (ctx_ == nullptr || EVP_MAC_init(ctx_.get(), k, key.size(), nullptr) != 1) {
      return SslInternalError("EVP_MAC_init(HMAC-SHA-256)");
    }
    return absl::OkStatus();
  }
  absl::Status Update(absl::string_view data) {
    if (!data.empty() &&
        EVP_MAC_update(ctx_.get(), reinterpret_cast<const unsigned char*>(data.data()),
                       data.size()) != 1) {
      return SslInternalError("EVP_MAC_update(HMAC-SHA-256)");
    }
    return absl::OkStatus();
  }
  absl::Status Final(uint8_t out[kHkdfSha256HashSize]) {
    size_t len = 0;
    if (EVP_MAC_final(ctx_.get(), out, &len, kHkdfSha256HashSize) != 1 ||
        len != kHkdfSha256HashSize) {
      return SslInternalError("EVP_MAC_final(HMAC-SHA-256)");
    }
    return absl::OkStatus();
  }

 private:
  SslUniquePtr<EVP_MAC_CTX> ctx_;  // EVP_MAC_CTX_free clears the key's pads
};

absl::string_view View(const uint8_t* p, size_t n) {
  return absl::string_view(reinterpret_cast<const char*>(p), n);
}

}  // namespace

// HKDF (RFC 5869) written over HMAC-SHA-256: Extract is one HMAC, Expand one per 32
// bytes of output.
absl::StatusOr<SecretData> HkdfSha256Extract(absl::string_view salt, absl::string_view ikm) {
  if (ikm.empty()) return absl::InvalidArgumentError("HKDF-SHA256 extract: empty ikm");
  // §2.2: no salt means HashLen zero bytes.
  Mac mac;
  SMCRYPT_RETURN_IF_ERROR(salt.empty() ? mac.StartZeroSalt() : mac.Start(salt));
  SMCRYPT_RETURN_IF_ERROR(mac.Update(ikm));
  SecretData prk(kHkdfSha256HashSize);
  SMCRYPT_RETURN_IF_ERROR(mac.Final(prk.data()));
  return prk;
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
  // §2.3: T(0) = empty, T(i) = HMAC(PRK, T(i − 1) ‖ info ‖ i), OKM = the first L bytes.
  SecretData okm(length);
  uint8_t t[kHkdfSha256HashSize];
  size_t done = 0;
  absl::Status st;
  for (uint8_t i = 1; done < length && st.ok(); ++i) {
    Mac mac;
    const char counter = static_cast<char>(i);
    st = mac.Start(prk);
    if (st.ok() && i > 1) st = mac.Update(View(t, sizeof(t)));
    if (st.ok()) st = mac.Update(info);
    if (st.ok()) st = mac.Update(absl::string_view(&counter, 1));
    if (st.ok()) st = mac.Final(t);
    if (st.ok()) {
      const size_t n = std::min(sizeof(t), length - done);
      std::memcpy(okm.data() + done, t, n);
      done += n;
    }
  }
  OPENSSL_cleanse(t, sizeof(t));
  if (!st.ok()) return st;
  return okm;
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
