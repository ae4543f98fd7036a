// test_util.h — hex helpers, seeded random bytes, and misaligned buffers for tests.
#ifndef SMCRYPT_TESTS_TESTING_TEST_UTIL_H_
#define SMCRYPT_TESTS_TESTING_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/string_view.h"

namespace smcrypt::testing {

// HexToBytes decodes hex (spaces and newlines ignored); aborts the test on bad input.
std::string HexToBytes(absl::string_view hex);
std::string BytesToHex(absl::string_view bytes);

// TestSeed returns the seed for random tests: SMCRYPT_TEST_SEED if set, else a fixed
// default. Tests print it so a failure can be replayed.
uint64_t TestSeed();

// RandomBytes returns `n` bytes from `rng`.
std::string RandomBytes(std::mt19937_64& rng, size_t n);

// ReadTestData returns the contents of tests/testdata/<name>; aborts if missing.
std::string ReadTestData(absl::string_view name);

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_TESTING_TEST_UTIL_H_
