// ssl_errors.h — turning OpenSSL's thread-local error queue into absl::Status.
//
// Internal header (crypto/openssl only). Every failure path that calls OpenSSL either
// reports the queue through SslInternalError/GetSslErrors or discards it with
// ClearSslErrors, so no stale entry leaks into a later, unrelated message.
#ifndef SMCRYPT_CRYPTO_OPENSSL_SSL_ERRORS_H_
#define SMCRYPT_CRYPTO_OPENSSL_SSL_ERRORS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

// GetSslErrors empties this thread's OpenSSL error queue and returns its entries,
// oldest first, separated by "; " (OpenSSL's one-line error strings). Returns
// "no OpenSSL error" when the queue was empty.
std::string GetSslErrors();

// ClearSslErrors empties this thread's OpenSSL error queue without reporting it. Used
// where the failure is reported with a fixed message ("decryption failed", "signature
// invalid", "not SubjectPublicKeyInfo DER") that must not carry OpenSSL's details.
void ClearSslErrors();

// SslInternalError returns Internal "<what>: <GetSslErrors()>" (house style item 9:
// OpenSSL and library faults are Internal, with the drained error queue).
absl::Status SslInternalError(absl::string_view what);

// SslCheckOrDie aborts the process with "<what>: <errors>" when `ok` is false. Only for
// calls that cannot fail on valid state and whose caller has no way to report a status
// (Hash::Update and Hash::Finish): failing closed beats returning a wrong digest.
void SslCheckOrDie(bool ok, const char* what);

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_SSL_ERRORS_H_
