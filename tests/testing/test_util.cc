#include "tests/testing/test_util.h"

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

}  // namespace smcrypt::testing
