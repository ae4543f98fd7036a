#include "crypto/openssl/openssl_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {
namespace {

template <typename T>
absl::StatusOr<T*> OrError(T* p, const char* name) {
  if (p == nullptr) return SslInternalError(absl::StrCat("could not fetch ", name));
  return p;
}

}  // namespace

absl::string_view OpenSslAlgorithmName(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSha256: return "SHA-256";
    case Algorithm::kHmacSha256: return "HMAC-SHA-256";
    case Algorithm::kAes128Ecb: return "AES-128-ECB";
    case Algorithm::kAes128Cbc: return "AES-128-CBC";
    case Algorithm::kAes128Ctr: return "AES-128-CTR";
    case Algorithm::kAes128Gcm: return "AES-128-GCM";
    case Algorithm::kAes256Ecb: return "AES-256-ECB";
    case Algorithm::kAes256Cbc: return "AES-256-CBC";
    case Algorithm::kAes256Ctr: return "AES-256-CTR";
    case Algorithm::kAes256Gcm: return "AES-256-GCM";
    case Algorithm::kEcdsaP256: return "ECDSA-P256";
    case Algorithm::kEcdsaSecp256k1: return "ECDSA-SECP256K1";
    case Algorithm::kRsa2048Pss: return "RSA-2048-PSS";
    case Algorithm::kRsa3072Pss: return "RSA-3072-PSS";
    case Algorithm::kRsa2048Oaep: return "RSA-2048-OAEP";
    case Algorithm::kRsa3072Oaep: return "RSA-3072-OAEP";
    default: return "an algorithm not served by OpenSSL";
  }
}

absl::StatusOr<EVP_MD*> FetchedSha256() {
  static EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
  return OrError(md, "SHA2-256");
}

absl::StatusOr<EVP_MAC*> FetchedHmac() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return OrError(mac, "HMAC");
}

absl::StatusOr<EVP_CIPHER*> FetchedCipher(const char* name) {
  static const struct {
    const char* name;
    EVP_CIPHER* cipher;
  } kCiphers[] = {
      {"AES-128-ECB", EVP_CIPHER_fetch(nullptr, "AES-128-ECB", nullptr)},
      {"AES-128-CBC", EVP_CIPHER_fetch(nullptr, "AES-128-CBC", nullptr)},
      {"AES-128-CTR", EVP_CIPHER_fetch(nullptr, "AES-128-CTR", nullptr)},
      {"AES-128-GCM", EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr)},
      {"AES-256-ECB", EVP_CIPHER_fetch(nullptr, "AES-256-ECB", nullptr)},
      {"AES-256-CBC", EVP_CIPHER_fetch(nullptr, "AES-256-CBC", nullptr)},
      {"AES-256-CTR", EVP_CIPHER_fetch(nullptr, "AES-256-CTR", nullptr)},
      {"AES-256-GCM", EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr)},
  };
  for (const auto& c : kCiphers) {
    if (std::strcmp(c.name, name) == 0) return OrError(c.cipher, name);
  }
  return absl::InternalError(absl::StrCat("no OpenSSL cipher named ", name));
}

}  // namespace smcrypt
