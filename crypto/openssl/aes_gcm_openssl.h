// aes_gcm_openssl.h — AES-128/256-GCM (NIST SP 800-38D) through OpenSSL 3 EVP, as the
// `Aead` primitive.
#ifndef SMCRYPT_CRYPTO_OPENSSL_AES_GCM_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_AES_GCM_OPENSSL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/aead.h"

namespace smcrypt {

inline constexpr size_t kGcmNonceSize = 12;       // bytes, recommended (SP 800-38D §8.2)
inline constexpr size_t kGcmMaxNonceSize = 128;   // bytes, OpenSSL's limit
inline constexpr size_t kGcmMinTagSize = 12;      // bytes
inline constexpr size_t kGcmMaxTagSize = 16;      // bytes
inline constexpr uint64_t kGcmMaxPlaintextSize = (uint64_t{1} << 36) - 32;  // §5.2.1.1

// AesGcmOpenSsl seals and opens with AES-GCM. Seal returns ciphertext ‖ tag (tag_size()
// bytes). Nonces of 1–128 bytes (12 recommended; other lengths go through GHASH, §7.1
// step 2); tags of 12–16 bytes; plaintext and AAD up to 2^36 − 32 bytes.
//
// Errors: InvalidArgument with expected and actual sizes for a wrong nonce length, an
// input over the limit, or a ciphertext shorter than the tag; InvalidArgument
// "decryption failed" when the tag does not verify (OpenSSL compares it with
// CRYPTO_memcmp); the partial plaintext is wiped before that error is returned.
//
// The key schedule and the GHASH key are computed once; each call copies the keyed
// context, so const methods are safe to call concurrently.
class AesGcmOpenSsl final : public Aead {
 public:
  // New takes `alg` kAes128Gcm (16-byte key) or kAes256Gcm (32-byte key) and a tag size
  // of 12–16 bytes (0 means 16). Errors: InvalidArgument naming expected and actual.
  static absl::StatusOr<std::unique_ptr<AesGcmOpenSsl>> New(Algorithm alg,
                                                            absl::string_view key,
                                                            size_t tag_size = kGcmMaxTagSize);

  absl::StatusOr<std::string> Seal(absl::string_view nonce, absl::string_view plaintext,
                                   absl::string_view aad) const override;
  absl::StatusOr<std::string> Open(absl::string_view nonce,
                                   absl::string_view ciphertext_and_tag,
                                   absl::string_view aad) const override;
  absl::StatusOr<std::string> OpenDetached(absl::string_view nonce, absl::string_view ciphertext,
                                           absl::string_view tag,
                                           absl::string_view aad) const override;
  size_t tag_size() const override { return tag_size_; }
  size_t nonce_size() const override { return kGcmNonceSize; }

 private:
  AesGcmOpenSsl(Algorithm alg, size_t tag_size, SslUniquePtr<EVP_CIPHER_CTX> enc,
                SslUniquePtr<EVP_CIPHER_CTX> dec)
      : alg_(alg), tag_size_(tag_size), enc_(std::move(enc)), dec_(std::move(dec)) {}

  absl::Status CheckNonce(absl::string_view nonce) const;
  // Start copies `keyed` and sets the nonce and the AAD.
  absl::StatusOr<SslUniquePtr<EVP_CIPHER_CTX>> Start(const EVP_CIPHER_CTX* keyed,
                                                     absl::string_view nonce,
                                                     absl::string_view aad) const;

  const Algorithm alg_;
  const size_t tag_size_;
  SslUniquePtr<EVP_CIPHER_CTX> enc_;  // keyed for encryption
  SslUniquePtr<EVP_CIPHER_CTX> dec_;  // keyed for decryption
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_AES_GCM_OPENSSL_H_
