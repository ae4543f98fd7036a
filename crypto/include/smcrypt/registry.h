// registry.h — factories keyed by Algorithm: the one entry point the service uses.
#ifndef SMCRYPT_REGISTRY_H_
#define SMCRYPT_REGISTRY_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/hpke.h"
#include "smcrypt/primitives/aead.h"
#include "smcrypt/primitives/cipher.h"
#include "smcrypt/primitives/hash.h"
#include "smcrypt/primitives/hybrid_encrypt.h"
#include "smcrypt/primitives/public_key_encrypt.h"
#include "smcrypt/primitives/public_key_sign.h"
#include "smcrypt/primitives/public_key_verify.h"
#include "smcrypt/secret_data.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

// SignatureOptions fixes what a signer or verifier takes and produces.
struct SignatureOptions {
  // SM2 only: the signer's identity, hashed into Z (GB/T 32918.2 §5.5). 0–8191 bytes.
  std::string user_id = std::string(kSm2DefaultUserId);
  // DER SEQUENCE { r, s } (default) or raw r‖s (64 bytes for SM2/ECDSA). Not for RSA.
  SignatureEncoding encoding = SignatureEncoding::kDer;
  // When true, `data` is already the digest: SM2's e (32 bytes, = SM3(Z ‖ M)), or the
  // SHA-256 digest for ECDSA and RSA-PSS. When false, `data` is the message.
  bool prehashed = false;
};

// PublicKeyEncryptionOptions: the SM2 ciphertext layout (C1‖C3‖C2 by default). RSA
// ignores it (OAEP with SHA-256 and MGF1-SHA-256, empty label).
struct PublicKeyEncryptionOptions {
  Sm2CiphertextFormat sm2_format = Sm2CiphertextFormat::kC1C3C2;
};

// KeyPair is a freshly generated key: PKCS#8 DER private key (wiped when freed) and
// SubjectPublicKeyInfo DER public key, both readable by `openssl pkey`.
struct KeyPair {
  SecretData private_key_der;
  std::string public_key_der;
};

// Each factory checks that `alg` is of the right kind (InvalidArgument otherwise) and
// that the key fits (InvalidArgument with expected and actual sizes).
absl::StatusOr<std::unique_ptr<Hash>> NewHash(Algorithm alg);
absl::StatusOr<std::unique_ptr<Mac>> NewMac(Algorithm alg, absl::string_view key);
absl::StatusOr<std::unique_ptr<Cipher>> NewCipher(Algorithm alg, absl::string_view key,
                                                  Padding padding = Padding::kPkcs7);
// tag_size 0 means the algorithm's default (16).
absl::StatusOr<std::unique_ptr<Aead>> NewAead(Algorithm alg, absl::string_view key,
                                              size_t tag_size = 0);

// ParseSm2PrivateKey / ParseSm2PublicKey read an SM2 key in the encodings the SM2
// factories below accept: PKCS#8 PrivateKeyInfo (DER or PEM "PRIVATE KEY") or the raw
// 32-byte big-endian scalar; SubjectPublicKeyInfo (DER or PEM "PUBLIC KEY") or a 65-byte
// uncompressed / 33-byte compressed point (validated: on the curve, not infinity).
// Errors: InvalidArgument describing the malformed bytes; FailedPrecondition for a
// well-formed key of another family.
absl::StatusOr<Sm2PrivateKey> ParseSm2PrivateKey(absl::string_view in);
absl::StatusOr<Sm2PublicKey> ParseSm2PublicKey(absl::string_view in);

// Keys for the asymmetric factories are DER or PEM: PKCS#8 private keys and
// SubjectPublicKeyInfo public keys. SM2 and the EC algorithms also take a raw 32-byte
// private scalar and a 65-byte (04‖x‖y) or 33-byte compressed public point. A key for
// another algorithm family is FailedPrecondition.
absl::StatusOr<KeyPair> GenerateKeyPair(Algorithm alg);
absl::StatusOr<std::unique_ptr<PublicKeySign>> NewPublicKeySign(
    Algorithm alg, absl::string_view private_key, const SignatureOptions& options = {});
absl::StatusOr<std::unique_ptr<PublicKeyVerify>> NewPublicKeyVerify(
    Algorithm alg, absl::string_view public_key, const SignatureOptions& options = {});
absl::StatusOr<std::unique_ptr<PublicKeyEncrypt>> NewPublicKeyEncrypt(
    Algorithm alg, absl::string_view public_key, const PublicKeyEncryptionOptions& options = {});
absl::StatusOr<std::unique_ptr<PublicKeyDecrypt>> NewPublicKeyDecrypt(
    Algorithm alg, absl::string_view private_key, const PublicKeyEncryptionOptions& options = {});
// Hybrid encryption (HPKE base mode, smcrypt/hpke.h): kHpkeP256Sha256Aes128Gcm takes EC
// P-256 keys, kHpkeSm2Sm3Sm4Gcm SM2 keys, in the encodings above. The ciphertext is the
// wire format of smcrypt/hpke.h (version, suite ids, enc, AEAD ciphertext).
// GenerateKeyPair for these algorithms returns a P-256 or SM2 key pair.
absl::StatusOr<std::unique_ptr<HybridEncrypt>> NewHybridEncrypt(Algorithm alg,
                                                                absl::string_view public_key);
absl::StatusOr<std::unique_ptr<HybridDecrypt>> NewHybridDecrypt(Algorithm alg,
                                                                absl::string_view private_key);
// HpkeSuiteOf is the HPKE suite of a hybrid algorithm (smcrypt/hpke.h). Errors:
// InvalidArgument "<alg> is not a hybrid encryption algorithm".
absl::StatusOr<HpkeSuite> HpkeSuiteOf(Algorithm alg);
// PublicKeyFromPrivate returns the SubjectPublicKeyInfo DER of a private key.
absl::StatusOr<std::string> PublicKeyFromPrivate(Algorithm alg, absl::string_view private_key);

// IsPublicKeyEncoding reports whether `key` is a SubjectPublicKeyInfo (RFC 5280 §4.1),
// DER or PEM "PUBLIC KEY", rather than a PKCS#8 PrivateKeyInfo (RFC 5208 §5), so that a
// public key given where a private one is needed can be named as such. True only for a
// PEM block that decodes (label "PUBLIC KEY") or DER with nothing after it whose structure
// is SEQUENCE { SEQUENCE AlgorithmIdentifier with an OID, BIT STRING ... }; the key
// material itself is not parsed. Call it only after parsing as a private key failed.
bool IsPublicKeyEncoding(absl::string_view key);

// VerifyTruncatedMac checks `expected`, the whole tag or the tag truncated to its
// leftmost t bytes (RFC 2104 §5: t from max(L/2, 10) to L = mac.mac_size()), against the
// leftmost t bytes of mac.ComputeMac(data): true when they match. The comparison is
// constant time in the tag bytes (t is public); the computed tag is wiped. Errors:
// InvalidArgument "expected_mac must be <min> to <L> bytes ..." for another length;
// ComputeMac's.
absl::StatusOr<bool> VerifyTruncatedMac(const Mac& mac, absl::string_view data,
                                        absl::string_view expected);

}  // namespace smcrypt

#endif  // SMCRYPT_REGISTRY_H_
