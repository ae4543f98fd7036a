#include "crypto/openssl/ssl_errors.h"

#include <cstdio>
#include <cstdlib>

#include <openssl/err.h>

#include "absl/strings/str_cat.h"

namespace smcrypt {

std::string GetSslErrors() {
  std::string out;
  unsigned long code;
  const char* file = nullptr;
  int line = 0;
  const char* data = nullptr;
  int flags = 0;
  while ((code = ERR_get_error_all(&file, &line, nullptr, &data, &flags)) != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
    if ((flags & ERR_TXT_STRING) != 0 && data != nullptr && *data != '\0') {
      absl::StrAppend(&out, " (", data, ")");
    }
  }
  if (out.empty()) out = "no OpenSSL error";
  return out;
}

void ClearSslErrors() { ERR_clear_error(); }

absl::Status SslInternalError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", GetSslErrors()));
}

void SslCheckOrDie(bool ok, const char* what) {
  if (ok) return;
  std::string errors = GetSslErrors();
  std::fprintf(stderr, "smcrypt: fatal OpenSSL failure in %s: %s\n", what, errors.c_str());
  std::abort();
}

}  // namespace smcrypt
