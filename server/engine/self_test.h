// self_test.h — known-answer self-tests of every algorithm smcryptd serves, run at start
// and on demand on the back ends dispatch selected (as a hardware cipher machine does at
// power-on, and libgcrypt's sm4_selftest does on first use). Vectors come from the
// standards: GB/T 32905 (SM3), GB/T 32907 (SM4), GB/T 32918.5 (SM2), RFC 8998
// (SM4-GCM/CCM), FIPS 180-2, FIPS 197, NIST SP 800-38A, the GCM specification's test
// cases, RFC 4231 and RFC 6979, and OpenSSL's evpciph_sm4 test file (SM4-CFB/OFB from
// draft-ribose-cfrg-sm4, SM4-XTS from the GB/T 17964-2021 example). Algorithms without a published vector in a standard
// (ECDSA-secp256k1 signing, RSA, SM2 encryption and key exchange) get pairwise-consistency
// tests. The long SM4 tests (ECB/CBC/CTR over 119 blocks, GCM over 1909 bytes), which reach
// the wide SIMD paths the standards' one-block examples do not, check the SM3 digest of the
// output against values computed once with OpenSSL 3.0 and Botan 2.19 (commands in
// self_test.cc).
#ifndef SMCRYPT_SERVER_SELF_TEST_H_
#define SMCRYPT_SERVER_SELF_TEST_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace smcrypt::server {

struct SelfTestResult {
  std::string name;
  bool passed = false;
  std::string message;  // failure reason, empty when passed
};

// RunSelfTests runs every test and returns one result per test.
std::vector<SelfTestResult> RunSelfTests();

// SelfTests keeps the last run's results. Thread-safe.
class SelfTests {
 public:
  // `on_result` (may be empty) is called after each run with the overall outcome.
  explicit SelfTests(std::function<void(bool)> on_result = {});
  // Run runs the tests now, logs each failure, stores the results and returns whether
  // all passed.
  bool Run();
  std::vector<SelfTestResult> results() const;
  bool all_passed() const;

 private:
  std::function<void(bool)> on_result_;
  mutable absl::Mutex mu_;
  std::vector<SelfTestResult> results_ ABSL_GUARDED_BY(mu_);
  bool all_passed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SELF_TEST_H_
