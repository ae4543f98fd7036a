#include "clients/smcrypt/key_files.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "clients/smcrypt/io.h"
#include "smcrypt/pkcs8.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::cli {

absl::StatusOr<std::optional<std::string>> PasswordFlag(const Args& args) {
  if (args.Has("pass") && args.Has("pass-file")) {
    return absl::InvalidArgumentError("give only one of --pass and --pass-file");
  }
  std::string password;
  if (std::optional<std::string> pass = args.Get("pass")) {
    password = *std::move(pass);
  } else if (std::optional<std::string> path = args.Get("pass-file")) {
    // The first line, as openssl's -passin file: reads it; no more than that is read.
    absl::StatusOr<Input> in = Input::Open(*path);
    absl::StatusOr<std::string> line =
        in.ok() ? in->ReadFirstLine(kMaxPasswordLine) : in.status();
    if (!line.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--pass-file: ", line.status().message()));
    }
    password = *std::move(line);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    if (password.size() > kMaxPkcs8PasswordSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--pass-file: ", *path, ": the password is longer than ", kMaxPkcs8PasswordSize,
          " bytes, the limit for a password"));
    }
  } else {
    return std::optional<std::string>();
  }
  if (password.empty()) return absl::InvalidArgumentError("the password is empty");
  return std::optional<std::string>(std::move(password));
}

absl::StatusOr<std::optional<std::string>> DecryptKeyFile(const Args& args,
                                                          absl::string_view path,
                                                          absl::string_view file) {
  absl::StatusOr<std::optional<std::string>> password = PasswordFlag(args);
  if (!password.ok()) return password.status();
  if (!IsEncryptedPrivateKeyInfo(file)) {
    if (password->has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--key ", path, " is not an encrypted private key: drop --pass/--pass-file"));
    }
    return std::optional<std::string>();
  }
  if (!password->has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--key ", path, " is an encrypted private key: give its password with "
                        "--pass-file FILE (or --pass PASSWORD)"));
  }
  absl::StatusOr<SecretData> pki = DecryptPrivateKeyInfo(file, **password);
  if (!pki.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--key ", path, ": ", pki.status().message()));
  }
  return std::optional<std::string>(std::string(SecretDataAsStringView(*pki)));
}

absl::StatusOr<std::string> EncryptKey(absl::string_view pki_der, absl::string_view password,
                                       absl::string_view cipher) {
  const std::string lower = absl::AsciiStrToLower(cipher);
  Pbes2Scheme scheme;
  if (lower == "aes-256-cbc" || lower == "aes256" || lower == "aes-256") {
    scheme = Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc;
  } else if (lower == "sm4-cbc" || lower == "sm4") {
    scheme = Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--pass-cipher ", cipher, ": expected aes-256-cbc or sm4-cbc"));
  }
  return EncryptPrivateKeyInfo(pki_der, password, scheme);
}

}  // namespace smcrypt::cli
