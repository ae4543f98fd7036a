// key_errors.h — the one phrasing of "these bytes are not a key in any encoding this
// algorithm accepts", for every asymmetric key loader: SM2 (crypto/core), the EC curves
// and RSA (crypto/openssl) and the HPKE suites (crypto/hpke).
//
// Internal header (crypto/ only); not part of the public API.
#ifndef SMCRYPT_CRYPTO_COMMON_KEY_ERRORS_H_
#define SMCRYPT_CRYPTO_COMMON_KEY_ERRORS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

enum class KeyRole { kPublic, kPrivate };

// UnparsableKeyError returns InvalidArgument for `size` bytes that are in none of the
// accepted encodings of the key asked for, naming those encodings and their sizes:
//   "expected an <family> public key as SubjectPublicKeyInfo DER or PEM[, or a 65-byte
//    uncompressed / 33-byte compressed point]; got <size> byte(s)[ (<reason>)]"
//   "expected an <family> private key as PKCS#8 DER or PEM[, or a 32-byte scalar]; got ..."
// `family` names the key and takes the article "an" ("SM2", "EC P-256", "RSA-2048");
// `raw_forms` adds the raw point or scalar (SM2 and the EC curves, SEC 1 §2.3.3);
// `reason` is the parser's message ("DER: expected SEQUENCE, got tag 0x00"), or empty.
absl::Status UnparsableKeyError(absl::string_view family, KeyRole role, bool raw_forms,
                                size_t size, absl::string_view reason);

// CheckKeyDerStart returns OK when `der` starts with the identifier of a SEQUENCE (the
// outer structure of PKCS#8 and SubjectPublicKeyInfo), else InvalidArgument with the
// reason to give UnparsableKeyError: for a public key the DER reader's ("DER: expected
// SEQUENCE, got tag 0x00"); for a private key one that shows none of its bytes ("not DER:
// it does not start with a SEQUENCE"), as such bytes may be a raw scalar of the wrong size.
// Only the first byte is examined.
absl::Status CheckKeyDerStart(absl::string_view der, KeyRole role);

// AsUnparsableKeyError turns a parser's InvalidArgument `parse_error` into
// UnparsableKeyError(family, role, raw_forms, size, parse_error.message()); any other
// status (OK, a key of another family, an internal fault) is returned as it is.
absl::Status AsUnparsableKeyError(absl::Status parse_error, absl::string_view family,
                                  KeyRole role, bool raw_forms, size_t size);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_COMMON_KEY_ERRORS_H_
