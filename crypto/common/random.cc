#include "crypto/common/random.h"

#include <climits>

#include <openssl/err.h>
#include <openssl/rand.h>

#include "absl/strings/str_cat.h"

namespace smcrypt {

absl::Status RandomBytes(uint8_t* out, size_t len) {
  while (len > 0) {
    const int chunk = len > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(len);
    if (RAND_bytes(out, chunk) != 1) {
      const unsigned long err = ERR_get_error();
      ERR_clear_error();
      char buf[256];
      ERR_error_string_n(err, buf, sizeof(buf));
      return absl::InternalError(absl::StrCat("RAND_bytes failed: ", buf));
    }
    out += chunk;
    len -= static_cast<size_t>(chunk);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> RandomString(size_t len) {
  std::string out(len, '\0');
  if (len > 0) {
    absl::Status s = RandomBytes(reinterpret_cast<uint8_t*>(out.data()), len);
    if (!s.ok()) return s;
  }
  return out;
}

}  // namespace smcrypt
