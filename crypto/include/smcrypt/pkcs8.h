// pkcs8.h — password-encrypted private keys: PKCS#8 EncryptedPrivateKeyInfo (RFC 5958
// §3, RFC 5208 §6) with PBES2 (RFC 8018 §6.2), read and written by smcrypt's own parser.
//
//   EncryptedPrivateKeyInfo ::= SEQUENCE {
//     encryptionAlgorithm  AlgorithmIdentifier { id-PBES2, PBES2-params },
//     encryptedData        OCTET STRING }                  -- CBC(PrivateKeyInfo ‖ PKCS#7 pad)
//   PBES2-params ::= SEQUENCE { keyDerivationFunc  { id-PBKDF2, PBKDF2-params },
//                               encryptionScheme   { cipher OID, IV OCTET STRING } }
//   PBKDF2-params ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER,
//                                keyLength INTEGER OPTIONAL,
//                                prf AlgorithmIdentifier DEFAULT hmacWithSHA1 }
//
// What is read (one code path for every tool's output; OpenSSL's decoder is not used):
//   PBES2 1.2.840.113549.1.5.13 with PBKDF2 1.2.840.113549.1.5.12;
//   PRF hmacWithSHA1/SHA224/SHA256/SHA384/SHA512 (1.2.840.113549.2.7/8/9/10/11, RFC 8018
//     §B.1.2; absent means hmacWithSHA1) or hmacWithSM3 (1.2.156.10197.1.401.2, as GmSSL 3
//     writes it); the PRF's parameters may be NULL or absent;
//   cipher AES-128/192/256-CBC (2.16.840.1.101.3.4.1.2/22/42, RFC 8018 §B.2.5) or SM4-CBC
//     (1.2.156.10197.1.104.2, GM/T 0006), each with a 16-byte IV.
// Writes exactly two profiles (Pbes2Scheme): what `openssl genpkey -aes256` writes (but
// with a 16-byte salt, NIST SP 800-132 §5.1) and what GmSSL 3's `gmssl sm2keygen -pass`
// writes. The key is PBKDF2 (RFC 8018 §5.2, OpenSSL's PKCS5_PBKDF2_HMAC, EVP_sm3() for
// SM3); AES-CBC runs in OpenSSL's EVP, SM4-CBC in smcrypt's own SM4 (smcrypt/sm4.h).
//
// The password is taken as the bytes given (RFC 8018 §3: an octet string; OpenSSL and
// GmSSL pass the bytes of the command-line or file text as they are, with no
// normalization), up to kMaxPkcs8PasswordSize bytes.
//
// Security: PBES2 authenticates nothing. A wrong password is detected only because the
// PKCS#7 padding and the PrivateKeyInfo framing usually come out wrong; about one
// password in 256 passes the padding, so the framing is checked too, and the caller
// still has to check the key it parses (the key loaders do: EC points, RSA consistency).
// The encryption is only as strong as the password: PBKDF2 slows guessing by the
// iteration count and no more.
//
// Constant time: the derived key, the plaintext and its padding are handled with masks
// (the padding check never branches on a plaintext byte); the padding verdict and the
// plaintext's length are then public, as is every parameter in the header (salt, IV,
// iterations, OIDs). The password's length is public. PBKDF2 and AES run in OpenSSL,
// constant time on x86-64 with AES-NI; SM4 runs in smcrypt's constant-time back ends.
// Derived keys, round keys and plaintext buffers are wiped (SecretData, SecureZero).
//
// Thread-safe: the functions keep no state.
#ifndef SMCRYPT_PKCS8_H_
#define SMCRYPT_PKCS8_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

// Pbes2Scheme names the PBES2 profiles EncryptPrivateKeyInfo writes.
enum class Pbes2Scheme {
  // PBKDF2 with hmacWithSHA256 (parameters NULL), no keyLength, AES-256-CBC: what
  // `openssl genpkey -aes256` and `openssl pkcs8 -topk8 -v2 aes256` write (OpenSSL 3.0).
  // Readable by OpenSSL 1.1+ and every PKCS#8 reader that supports PBES2.
  kPbkdf2HmacSha256Aes256Cbc,
  // PBKDF2 with hmacWithSM3 (1.2.156.10197.1.401.2, parameters absent), keyLength 16,
  // SM4-CBC (1.2.156.10197.1.104.2): what GmSSL 3's `gmssl sm2keygen -pass` writes
  // (src/sm2_key.c sm2_private_key_info_encrypt_to_der, src/pkcs8.c). GmSSL 3 rejects
  // the form with NULL parameters. OpenSSL 3.0's decoder cannot read it (it has no
  // hmacWithSM3).
  kPbkdf2HmacSm3Sm4Cbc,
};

// The default iteration counts, those of the tools each scheme copies: OpenSSL 3.0's
// PKCS5_DEFAULT_ITER (include/openssl/evp.h) and GmSSL 3's `int iter = 65536` in
// sm2_private_key_info_encrypt_to_der (src/sm2_key.c).
inline constexpr uint32_t kPbes2DefaultIterationsSha256Aes256 = 2048;
inline constexpr uint32_t kPbes2DefaultIterationsSm3Sm4 = 65536;
// kMaxPbkdf2Iterations bounds iterationCount when reading and writing (seconds of
// PBKDF2 on one core), so a file cannot make a key load take hours.
inline constexpr uint32_t kMaxPbkdf2Iterations = 10000000;
// Size bounds, in bytes: the salt written, the salt read (1 to this), the password, the
// encryptedData (a PrivateKeyInfo of RSA-16384 fits with room), the whole input.
inline constexpr size_t kPbes2SaltSize = 16;
inline constexpr size_t kMaxPbes2SaltSize = 256;
inline constexpr size_t kMaxPkcs8PasswordSize = 65536;
inline constexpr size_t kMaxPkcs8EncryptedDataSize = 65536;
inline constexpr size_t kMaxEncryptedPrivateKeyInfoInput = 1 << 20;

// Pbes2Params describes an EncryptedPrivateKeyInfo's parameters (GetPbes2Params).
struct Pbes2Params {
  // The profile, when the PRF and cipher are one of those EncryptPrivateKeyInfo writes
  // (hmacWithSHA256 + AES-256-CBC, hmacWithSM3 + SM4-CBC); nullopt for the other
  // combinations, which are read all the same.
  std::optional<Pbes2Scheme> scheme;
  std::string prf;     // "hmacWithSHA1", …, "hmacWithSHA512", "hmacWithSM3" (RFC 8018 names)
  std::string cipher;  // "AES-128-CBC", "AES-192-CBC", "AES-256-CBC", "SM4-CBC"
  uint32_t iterations = 0;  // 1 to kMaxPbkdf2Iterations
  size_t salt_size = 0;     // bytes, 1 to kMaxPbes2SaltSize
  size_t key_size = 0;      // bytes of derived key: 16, 24 or 32 (the cipher's)
};

// IsEncryptedPrivateKeyInfo reports whether `in` is an EncryptedPrivateKeyInfo: a PEM
// block labelled "ENCRYPTED PRIVATE KEY" (RFC 7468 §11), or DER SEQUENCE {
// SEQUENCE { OBJECT IDENTIFIER, ... }, OCTET STRING } with nothing after it — whatever
// the encryption algorithm, so that an unsupported one reaches DecryptPrivateKeyInfo's
// error naming it. A PrivateKeyInfo (which starts with an INTEGER) is not one. Inputs of
// 65 bytes or less (raw scalars and points) are answered false from their length alone,
// without reading a byte, as LooksLikePem does; longer ones are read for their
// structure only (tags and lengths, and the PEM label).
bool IsEncryptedPrivateKeyInfo(absl::string_view in);

// GetPbes2Params parses an EncryptedPrivateKeyInfo (DER or PEM) and checks its
// parameters as DecryptPrivateKeyInfo does, without a password.
// Errors: those of DecryptPrivateKeyInfo that come before decryption.
absl::StatusOr<Pbes2Params> GetPbes2Params(absl::string_view in);

// DecryptPrivateKeyInfo decrypts an EncryptedPrivateKeyInfo, DER or PEM "ENCRYPTED
// PRIVATE KEY" (text around the PEM block is ignored, RFC 7468 §2), with `password`
// (0 to kMaxPkcs8PasswordSize bytes) and returns the PrivateKeyInfo DER (RFC 5208 §5,
// RFC 5958 §2: SEQUENCE { INTEGER version, AlgorithmIdentifier, OCTET STRING, ... }), in
// wiped storage. The DER is strict (smcrypt's reader: definite minimal lengths, no
// trailing bytes).
// Errors, all InvalidArgument:
//   - input too large, or PEM with another label or bad base64 ("PEM: ...");
//   - "EncryptedPrivateKeyInfo: DER: <defect>" for a malformed structure, naming the
//     element ("EncryptedPrivateKeyInfo: PBKDF2-params: DER: ..."), trailing bytes too;
//   - "... encryption algorithm <OID> is not supported (PBES2 1.2.840.113549.1.5.13 is)"
//     (PBES1 and PKCS#12 schemes), likewise for a key derivation function other than
//     PBKDF2, a PRF other than the six above, a cipher other than the four above;
//   - "... iteration count 0 ..." / "... iteration count N exceeds the limit of
//     10000000"; salt empty or longer than kMaxPbes2SaltSize; keyLength that is not the
//     cipher's key size; an IV that is not 16 bytes; encryptedData empty, not a multiple
//     of 16 bytes, or above kMaxPkcs8EncryptedDataSize;
//   - one message, "EncryptedPrivateKeyInfo: wrong password or corrupt key", for every
//     failure after decryption (bad padding, plaintext that is not PrivateKeyInfo DER), so
//     the result does not say which check failed.
// Internal when OpenSSL fails (PBKDF2, EVP).
absl::StatusOr<SecretData> DecryptPrivateKeyInfo(absl::string_view in,
                                                 absl::string_view password);

// EncryptPrivateKeyInfo encrypts `private_key_info_der` (PrivateKeyInfo DER, checked as
// above, at most kMaxPkcs8EncryptedDataSize − 16 bytes) under `password` (1 to
// kMaxPkcs8PasswordSize bytes) with `scheme` and returns EncryptedPrivateKeyInfo DER
// (wrap it with PemEncode("ENCRYPTED PRIVATE KEY", …) for the PEM form). Each call draws
// a fresh 16-byte salt and 16-byte IV from RandomBytes. `iterations` 0 means the
// scheme's default (kPbes2DefaultIterations*); otherwise 1 to kMaxPbkdf2Iterations.
// The result for kPbkdf2HmacSha256Aes256Cbc is read by OpenSSL's decoder
// (d2i_PKCS8PrivateKey_bio, OSSL_DECODER; tested); for kPbkdf2HmacSm3Sm4Cbc it has the
// fields GmSSL 3's reader asks for (src/pkcs8.c, sm2_private_key_info_decrypt_from_der:
// keyLength 16, prf hmacWithSM3 without parameters, SM4-CBC with a 16-byte IV; checked
// against that source, not against a GmSSL binary).
// Errors: InvalidArgument "PrivateKeyInfo: ..." for input that is not PrivateKeyInfo DER
// (without its bytes), an empty or too long password, iterations above the limit;
// Internal when the random generator or OpenSSL fails.
absl::StatusOr<std::string> EncryptPrivateKeyInfo(absl::string_view private_key_info_der,
                                                  absl::string_view password,
                                                  Pbes2Scheme scheme,
                                                  uint32_t iterations = 0);

}  // namespace smcrypt

#endif  // SMCRYPT_PKCS8_H_
