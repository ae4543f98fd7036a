#include "crypto/common/key_errors.h"

#include "absl/strings/str_cat.h"
#include "crypto/common/der.h"

namespace smcrypt {

absl::Status UnparsableKeyError(absl::string_view family, KeyRole role, bool raw_forms,
                                size_t size, absl::string_view reason) {
  const bool is_public = role == KeyRole::kPublic;
  absl::string_view forms = is_public ? "SubjectPublicKeyInfo DER or PEM" : "PKCS#8 DER or PEM";
  absl::string_view raw = !raw_forms ? ""
                          : is_public ? ", or a 65-byte uncompressed / 33-byte compressed point"
                                      : ", or a 32-byte scalar";
  return absl::InvalidArgumentError(absl::StrCat(
      "expected an ", family, is_public ? " public" : " private", " key as ", forms, raw,
      "; got ", size, size == 1 ? " byte" : " bytes",
      reason.empty() ? "" : absl::StrCat(" (", reason, ")")));
}

absl::Status CheckKeyDerStart(absl::string_view der, KeyRole role) {
  if (!der.empty() && static_cast<uint8_t>(der[0]) == der::kSequence) return absl::OkStatus();
  if (role == KeyRole::kPrivate) {
    return absl::InvalidArgumentError("not DER: it does not start with a SEQUENCE");
  }
  der::Reader outer(der);
  return outer.ReadSequence().status();  // "DER: expected SEQUENCE, got ..."
}

absl::Status AsUnparsableKeyError(absl::Status parse_error, absl::string_view family,
                                  KeyRole role, bool raw_forms, size_t size) {
  if (parse_error.code() != absl::StatusCode::kInvalidArgument) return parse_error;
  return UnparsableKeyError(family, role, raw_forms, size, parse_error.message());
}

}  // namespace smcrypt
