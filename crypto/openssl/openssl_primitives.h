// openssl_primitives.h — the factories through which the registry reaches the
// international algorithms, all served by OpenSSL 3 EVP (docs/design.md, "Crypto core").
//
// Internal header: the registry (crypto/core) and tests include it; server code goes
// through smcrypt/registry.h. Each factory checks that `alg` is one this back end
// serves for that primitive (InvalidArgument "<alg> is not ... " otherwise) and then
// behaves as the class it builds documents:
//
//   SHA-256                         Sha256OpenSsl           (sha256_openssl.h)
//   HMAC-SHA-256                    HmacOpenSsl             (hmac_openssl.h)
//   AES-128/256-ECB/CBC/CTR         AesCipherOpenSsl        (aes_cipher_openssl.h)
//   AES-128/256-GCM                 AesGcmOpenSsl           (aes_gcm_openssl.h)
//   ECDSA-P256, ECDSA-SECP256K1     EcdsaSignOpenSsl / EcdsaVerifyOpenSsl
//   RSA-2048-PSS, RSA-3072-PSS      RsaPssSignOpenSsl / RsaPssVerifyOpenSsl
//   RSA-2048-OAEP, RSA-3072-OAEP    RsaOaepEncryptOpenSsl / RsaOaepDecryptOpenSsl
//   (HPKE's DHKEM(P-256))           EcdhP256OpenSsl         (ecdh_p256_openssl.h)
//
// Key errors are the same everywhere (openssl_keys.h): InvalidArgument "expected an <X>
// private key as PKCS#8 DER or PEM ...; got N bytes (...)" for bytes in no accepted
// encoding, "<X> public key: ..." for an invalid key, and FailedPrecondition "key is <X>,
// algorithm needs <Y>".
#ifndef SMCRYPT_CRYPTO_OPENSSL_OPENSSL_PRIMITIVES_H_
#define SMCRYPT_CRYPTO_OPENSSL_OPENSSL_PRIMITIVES_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/aead.h"
#include "smcrypt/primitives/cipher.h"
#include "smcrypt/primitives/hash.h"
#include "smcrypt/primitives/public_key_encrypt.h"
#include "smcrypt/primitives/public_key_sign.h"
#include "smcrypt/primitives/public_key_verify.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

// IsOpenSslAlgorithm is true for the algorithms listed above (the ones this back end
// serves through the registry).
bool IsOpenSslAlgorithm(Algorithm alg);

// NewSha256OpenSsl: an incremental SHA-256.
absl::StatusOr<std::unique_ptr<Hash>> NewSha256OpenSsl();
// NewHmacSha256OpenSsl: HMAC-SHA-256 with a key of any length, the empty key included.
absl::StatusOr<std::unique_ptr<Mac>> NewHmacSha256OpenSsl(absl::string_view key);
// NewAesCipherOpenSsl: AES-128/256-ECB/CBC/CTR; key 16/32 bytes; `padding` for ECB/CBC.
absl::StatusOr<std::unique_ptr<Cipher>> NewAesCipherOpenSsl(Algorithm alg,
                                                            absl::string_view key,
                                                            Padding padding = Padding::kPkcs7);
// NewAesGcmOpenSsl: AES-128/256-GCM; tag 12–16 bytes, 0 means 16.
absl::StatusOr<std::unique_ptr<Aead>> NewAesGcmOpenSsl(Algorithm alg, absl::string_view key,
                                                       size_t tag_size = 0);

// NewPublicKeySignOpenSsl / NewPublicKeyVerifyOpenSsl: ECDSA-P256, ECDSA-SECP256K1,
// RSA-2048-PSS, RSA-3072-PSS. `prehashed`: `data` is the 32-byte SHA-256 digest.
// RSA-PSS signatures have one encoding: `encoding` must be kDer (kRaw is
// InvalidArgument).
absl::StatusOr<std::unique_ptr<PublicKeySign>> NewPublicKeySignOpenSsl(
    Algorithm alg, absl::string_view private_key,
    SignatureEncoding encoding = SignatureEncoding::kDer, bool prehashed = false);
absl::StatusOr<std::unique_ptr<PublicKeyVerify>> NewPublicKeyVerifyOpenSsl(
    Algorithm alg, absl::string_view public_key,
    SignatureEncoding encoding = SignatureEncoding::kDer, bool prehashed = false);

// NewRsaOaepEncryptOpenSsl / NewRsaOaepDecryptOpenSsl: RSA-2048-OAEP, RSA-3072-OAEP.
absl::StatusOr<std::unique_ptr<PublicKeyEncrypt>> NewRsaOaepEncryptOpenSsl(
    Algorithm alg, absl::string_view public_key);
absl::StatusOr<std::unique_ptr<PublicKeyDecrypt>> NewRsaOaepDecryptOpenSsl(
    Algorithm alg, absl::string_view private_key);

// GenerateKeyPairOpenSsl makes a key for ECDSA-P256 (also good for ECDH P-256),
// ECDSA-SECP256K1, RSA-2048-* or RSA-3072-*: PKCS#8 DER private key (SecretData) and
// SubjectPublicKeyInfo DER public key.
absl::StatusOr<KeyPair> GenerateKeyPairOpenSsl(Algorithm alg);

// PublicKeyFromPrivateOpenSsl returns the SubjectPublicKeyInfo DER of `private_key`
// (any accepted encoding) after checking it fits `alg`.
absl::StatusOr<std::string> PublicKeyFromPrivateOpenSsl(Algorithm alg,
                                                        absl::string_view private_key);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_OPENSSL_PRIMITIVES_H_
