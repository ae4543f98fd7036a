// aes_cipher_openssl.h — AES-128/256 (FIPS 197) in ECB, CBC and CTR (NIST SP 800-38A
// §6.1, §6.2, §6.5) through OpenSSL 3 EVP, as the `Cipher` primitive.
#ifndef SMCRYPT_CRYPTO_OPENSSL_AES_CIPHER_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_AES_CIPHER_OPENSSL_H_

#include <cstddef>
#include <memory>
#include <string>

#include <openssl/evp.h>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/cipher.h"

namespace smcrypt {

// AesCipherOpenSsl encrypts with AES-ECB, AES-CBC or AES-CTR.
//
//   ECB: `iv` empty. CBC: 16-byte IV. CTR: 16-byte IV that is one 128-bit big-endian
//   counter incremented per block and wrapping modulo 2^128 (OpenSSL's AES-CTR,
//   SP 800-38A §B.1 with m = 128); any input length, output length = input length.
//   ECB/CBC with Padding::kPkcs7 (RFC 5652 §6.3) add 1–16 bytes; with Padding::kNone
//   the input must be a multiple of 16 bytes.
//
// Errors: InvalidArgument with expected and actual sizes for a wrong IV length or a
// length that is not a multiple of 16 where one is needed; InvalidArgument "decryption
// failed" for bad PKCS#7 padding. The padding is checked with masks (no branch on the
// plaintext) and the plaintext is wiped before the error is returned.
//
// The key schedule is computed once at construction; each call copies the keyed
// context, so const methods are safe to call concurrently.
class AesCipherOpenSsl final : public Cipher {
 public:
  // New takes `alg` in {AES-128,AES-256}-{ECB,CBC,CTR} and a 16- or 32-byte key to
  // match. `padding` is ignored for CTR. Errors: InvalidArgument for another algorithm
  // or a wrong key size ("AES-128-CBC key must be 16 bytes, got 32").
  static absl::StatusOr<std::unique_ptr<AesCipherOpenSsl>> New(Algorithm alg,
                                                               absl::string_view key,
                                                               Padding padding = Padding::kPkcs7);

  absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                      absl::string_view plaintext) const override;
  absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                      absl::string_view ciphertext) const override;
  size_t iv_size() const override;

 private:
  enum class Mode { kEcb, kCbc, kCtr };
  AesCipherOpenSsl(Algorithm alg, Mode mode, Padding padding, SslUniquePtr<EVP_CIPHER_CTX> enc,
                   SslUniquePtr<EVP_CIPHER_CTX> dec)
      : alg_(alg), mode_(mode), padding_(padding), enc_(std::move(enc)), dec_(std::move(dec)) {}

  absl::Status CheckIv(absl::string_view iv) const;
  // Run copies `keyed`, sets `iv` and passes `in` through it (no OpenSSL padding).
  absl::StatusOr<std::string> Run(const EVP_CIPHER_CTX* keyed, absl::string_view iv,
                                  absl::string_view in, size_t out_capacity) const;

  const Algorithm alg_;
  const Mode mode_;
  const Padding padding_;
  SslUniquePtr<EVP_CIPHER_CTX> enc_;  // keyed for encryption (CTR: both directions)
  SslUniquePtr<EVP_CIPHER_CTX> dec_;  // keyed for decryption (ECB/CBC), null for CTR
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_AES_CIPHER_OPENSSL_H_
