// key_files.h — password-protected private key files: encrypted PKCS#8
// (EncryptedPrivateKeyInfo, PBES2; "ENCRYPTED PRIVATE KEY" PEM or DER), as written by
// `openssl genpkey -aes256`, `openssl pkcs8 -topk8 -v2 ...` and GmSSL's
// `gmssl sm2keygen -pass`. They are opened and made on the client, in this process
// (smcrypt/pkcs8.h): neither the password nor the encrypted file ever goes to a server.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_KEY_FILES_H_
#define SMCRYPT_CLIENTS_SMCRYPT_KEY_FILES_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "clients/smcrypt/flags.h"

namespace smcrypt::cli {

// PasswordFlag reads --pass PASSWORD or --pass-file FILE (its first line, without the
// line end; "-" is stdin); nullopt when neither is given, a usage error when both are or
// the password is empty.
absl::StatusOr<std::optional<std::string>> PasswordFlag(const Args& args);

// DecryptKeyFile: when `file` (read from `path`) is an encrypted PKCS#8 private key,
// returns its PrivateKeyInfo DER, decrypted with the --pass / --pass-file password;
// nullopt when the file is not encrypted. A missing password, a wrong one and a
// malformed file are usage errors naming `path`; a password for a file that is not
// encrypted is one too.
absl::StatusOr<std::optional<std::string>> DecryptKeyFile(const Args& args,
                                                          absl::string_view path,
                                                          absl::string_view file);

// PassCipher names the PBES2 scheme keygen encrypts with: "aes-256-cbc" (the default:
// PBKDF2-HMAC-SHA256 and AES-256-CBC, what `openssl genpkey -aes256` writes) or
// "sm4-cbc" (PBKDF2-HMAC-SM3 and SM4-CBC, GmSSL's `sm2keygen -pass`).
inline constexpr absl::string_view kDefaultPassCipher = "aes-256-cbc";

// EncryptKey encrypts the PrivateKeyInfo `pki_der` under `password` with `cipher`
// (see PassCipher) and returns the EncryptedPrivateKeyInfo DER.
absl::StatusOr<std::string> EncryptKey(absl::string_view pki_der, absl::string_view password,
                                       absl::string_view cipher);

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_KEY_FILES_H_
