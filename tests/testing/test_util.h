// test_util.h — hex helpers, seeded random bytes, test data files and an OpenSSL HMAC
// oracle for tests.
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

// SweepMaxLength returns the last length of an every-length sweep whose full range ends
// at `full`: `full`, or SMCRYPT_TEST_SWEEP_MAX if that is set and smaller (the arm64
// suites under qemu sweep to 1,024 with the unit label and in full with the slow label).
size_t SweepMaxLength(size_t full);

// RandomBytes returns `n` bytes from `rng`.
std::string RandomBytes(std::mt19937_64& rng, size_t n);

// ReadTestData returns the contents of tests/testdata/<name>; aborts if missing.
std::string ReadTestData(absl::string_view name);

// OpenSslHmac returns the HMAC (RFC 2104) of `data` under `key` computed by OpenSSL 3's
// EVP_MAC "HMAC" with the digest `digest` ("SM3", "SHA2-256"), for keys of any length
// including zero. Records a test failure and returns "" when OpenSSL refuses.
std::string OpenSslHmac(const char* digest, absl::string_view key, absl::string_view data);

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_TESTING_TEST_UTIL_H_
