// aead_contract_test.h — the contract every smcrypt Aead keeps, as one parameterised
// GoogleTest suite (Tink's AEAD test shapes): round trips at many lengths and every
// accepted tag and nonce size; every bit flip of the ciphertext, tag, AAD and nonce, every
// truncation and an appended byte rejected with one generic "decryption failed"; empty
// and absent AAD and plaintext alike; wrong keys and tag sizes rejected; the key, tag,
// nonce and ciphertext length rules with their exact messages. (Aead returns strings, so
// there is no output buffer to size and no in-place form to test.)
//
// The TEST_Ps are in aead_contract_test.cc, compiled into each test binary that
// instantiates them (tests/CMakeLists.txt). An instance is one AeadContractParam:
//   sm4_test:     INSTANTIATE_TEST_SUITE_P(Sm4Gcm, ...) in sm4/sm4_gcm_test.cc (dispatched,
//                 each SM4 back end, each GHASH back end), Sm4Ccm in sm4/sm4_ccm_test.cc;
//   openssl_test: AesGcm in openssl/aes_openssl_test.cc (AES-128-GCM, AES-256-GCM).
// Known answers and differential tests stay with each algorithm's own tests.
#ifndef SMCRYPT_TESTS_CRYPTO_AEAD_CONTRACT_TEST_H_
#define SMCRYPT_TESTS_CRYPTO_AEAD_CONTRACT_TEST_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "smcrypt/primitives/aead.h"

namespace smcrypt {

// AeadContractParam is one AEAD (and back end) under the contract.
struct AeadContractParam {
  // name: the instance's part of the test name (letters, digits and '_').
  std::string name;
  // make: a new object for `key` with `tag_size`-byte tags (the implementation's checks).
  std::function<absl::StatusOr<std::unique_ptr<Aead>>(absl::string_view key, size_t tag_size)>
      make;
  size_t key_size = 16;
  std::vector<size_t> bad_key_sizes;
  // tag_sizes: every accepted tag size, ascending (16, the default, last).
  std::vector<size_t> tag_sizes;
  std::vector<size_t> bad_tag_sizes;
  // nonce_sizes: accepted nonce sizes to try (12 among them); bad_nonce_sizes: refused.
  std::vector<size_t> nonce_sizes;
  std::vector<size_t> bad_nonce_sizes;
  // The exact InvalidArgument messages for a key, tag or nonce of `got` bytes, and for a
  // ciphertext of `got` bytes, shorter than the `tag_size`-byte tag.
  std::function<std::string(size_t got)> key_size_error;
  std::function<std::string(size_t got)> tag_size_error;
  std::function<std::string(size_t got)> nonce_size_error;
  std::function<std::string(size_t tag_size, size_t got)> too_short_error;
  // Back-end selection. skip: why this instance cannot run here ("" when it can). enter:
  // run before the test makes its objects; leave: after the test. Empty functions do nothing.
  std::function<std::string()> skip;
  std::function<void()> enter;
  std::function<void()> leave;
};

// PrintTo names the instance in GoogleTest's messages (instead of a byte dump).
inline void PrintTo(const AeadContractParam& p, std::ostream* os) { *os << p.name; }

// MissingCpuFeatures: "" when this CPU has every feature in `required` (the back end
// `what` `name` can run), else a skip reason naming the missing ones.
std::string MissingCpuFeatures(absl::string_view what, absl::string_view name,
                               uint32_t required);

// AeadContractName is INSTANTIATE_TEST_SUITE_P's name generator: the param's name.
inline std::string AeadContractName(const ::testing::TestParamInfo<AeadContractParam>& info) {
  return info.param.name;
}

class AeadContractTest : public ::testing::TestWithParam<AeadContractParam> {
 protected:
  void SetUp() override;
  void TearDown() override;
  // New calls the param's make (after enter, so the selected back end is in use).
  absl::StatusOr<std::unique_ptr<Aead>> New(absl::string_view key, size_t tag_size = 16) const;

  std::string key_;    // key_size bytes
  std::string nonce_;  // 12 bytes
  std::unique_ptr<Aead> aead_;  // New(key_), 16-byte tags

 private:
  bool entered_ = false;
};

}  // namespace smcrypt

#endif  // SMCRYPT_TESTS_CRYPTO_AEAD_CONTRACT_TEST_H_
