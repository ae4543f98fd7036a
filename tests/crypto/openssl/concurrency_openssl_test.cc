// The const methods of the OpenSSL primitives are documented as safe to call
// concurrently on one object (each call copies the keyed context or makes its own
// EVP_PKEY_CTX). Several threads share one object and check every result.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "crypto/openssl/openssl_primitives.h"
#include "gtest/gtest.h"
#include "tests/crypto/openssl/openssl_test_util.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::View;

constexpr int kThreads = 4;
constexpr int kIterations = 200;

TEST(OpenSslConcurrencyTest, SharedObjectsGiveCorrectResults) {
  ASSERT_OK_AND_ASSIGN(auto aead, NewAesGcmOpenSsl(Algorithm::kAes256Gcm, std::string(32, 'k')));
  ASSERT_OK_AND_ASSIGN(auto cbc, NewAesCipherOpenSsl(Algorithm::kAes128Cbc, std::string(16, 'k')));
  ASSERT_OK_AND_ASSIGN(auto mac, NewHmacSha256OpenSsl("key"));
  ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPairOpenSsl(Algorithm::kEcdsaP256));
  ASSERT_OK_AND_ASSIGN(auto signer,
                       NewPublicKeySignOpenSsl(Algorithm::kEcdsaP256, View(pair.private_key_der)));
  ASSERT_OK_AND_ASSIGN(auto verifier,
                       NewPublicKeyVerifyOpenSsl(Algorithm::kEcdsaP256, pair.public_key_der));
  ASSERT_OK_AND_ASSIGN(std::string expected_mac, mac->ComputeMac("message"));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIterations; ++i) {
        const std::string nonce(12, static_cast<char>(t));
        const std::string msg = std::to_string(t) + ":" + std::to_string(i);
        auto sealed = aead->Seal(nonce, msg, "aad");
        auto opened = sealed.ok() ? aead->Open(nonce, *sealed, "aad") : sealed;
        if (!opened.ok() || *opened != msg) ++failures;
        auto ct = cbc->Encrypt(std::string(16, 'i'), msg);
        auto pt = ct.ok() ? cbc->Decrypt(std::string(16, 'i'), *ct) : ct;
        if (!pt.ok() || *pt != msg) ++failures;
        auto tag = mac->ComputeMac("message");
        if (!tag.ok() || *tag != expected_mac) ++failures;
        if (i % 20 == 0) {
          auto sig = signer->Sign(msg);
          if (!sig.ok() || !verifier->Verify(*sig, msg).ok()) ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace smcrypt
