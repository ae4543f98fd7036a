#include "tests/testing/test_util.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace smcrypt::testing {

std::string HexToBytes(absl::string_view hex) {
  std::string clean;
  for (char c : hex) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) {
      ADD_FAILURE() << "bad hex digit '" << c << "'";
      std::abort();
    }
    clean.push_back(c);
  }
  if (clean.size() % 2 != 0) {
    ADD_FAILURE() << "odd-length hex string";
    std::abort();
  }
  return absl::HexStringToBytes(clean);
}

std::string BytesToHex(absl::string_view bytes) { return absl::BytesToHexString(bytes); }

uint64_t TestSeed() {
  const char* env = std::getenv("SMCRYPT_TEST_SEED");
  if (env != nullptr && *env != '\0') return std::strtoull(env, nullptr, 0);
  return 0x5eed5eedULL;
}

size_t SweepMaxLength(size_t full) {
  const char* env = std::getenv("SMCRYPT_TEST_SWEEP_MAX");
  if (env == nullptr || *env == '\0') return full;
  const unsigned long long cap = std::strtoull(env, nullptr, 10);
  if (cap >= full) return full;
  std::printf("every-length sweep to %llu of %zu (SMCRYPT_TEST_SWEEP_MAX)\n", cap, full);
  return static_cast<size_t>(cap);
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>(rng() & 0xff);
  return out;
}

std::string ReadTestData(absl::string_view name) {
  std::string path = absl::StrCat(SMCRYPT_TESTDATA_DIR, "/", name);
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    ADD_FAILURE() << "missing test data " << path;
    std::abort();
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string OpenSslHmac(const char* digest, absl::string_view key, absl::string_view data) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  EVP_MAC_CTX* ctx = mac != nullptr ? EVP_MAC_CTX_new(mac) : nullptr;
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>(digest), 0),
      OSSL_PARAM_construct_end(),
  };
  // EVP_MAC_init takes a null key as "keep the current key": an empty key needs a pointer.
  static const unsigned char kNoKeyBytes[1] = {0};
  const unsigned char* k =
      key.empty() ? kNoKeyBytes : reinterpret_cast<const unsigned char*>(key.data());
  unsigned char out[EVP_MAX_MD_SIZE];
  size_t len = 0;
  const bool ok =
      ctx != nullptr && EVP_MAC_init(ctx, k, key.size(), params) == 1 &&
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()), data.size()) == 1 &&
      EVP_MAC_final(ctx, out, &len, sizeof(out)) == 1;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  if (!ok) {
    ADD_FAILURE() << "OpenSSL HMAC-" << digest << " failed";
    return "";
  }
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace smcrypt::testing
