// hpke_p256_kept_keys_test.cc — HPKE-P256-SHA256-AES128GCM's HybridEncrypt and
// HybridDecrypt keep the recipient's key as a parsed OpenSSL key object: one object used
// from several threads gives correct results, a second recipient's objects are never
// confused with the first's, and the kept-key path agrees with the HpkeContext path
// (SetupBaseS / SetupBaseR, which parse both keys per call) in both directions.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/hpke.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::StatusIs;

constexpr HpkeSuite kSuite = HpkeSuite::kP256Sha256Aes128Gcm;

struct Recipient {
  HpkeKeyPair keys;
  std::unique_ptr<HybridEncrypt> enc;
  std::unique_ptr<HybridDecrypt> dec;
};

absl::StatusOr<Recipient> NewRecipient() {
  Recipient r;
  SMCRYPT_ASSIGN_OR_RETURN(r.keys, HpkeGenerateKeyPair(kSuite));
  SMCRYPT_ASSIGN_OR_RETURN(r.enc, NewHpkeEncrypt(kSuite, r.keys.public_key));
  SMCRYPT_ASSIGN_OR_RETURN(r.dec,
                           NewHpkeDecrypt(kSuite, SecretDataAsStringView(r.keys.private_key)));
  return r;
}

TEST(HpkeP256KeptKeysTest, OneKeyObjectFromManyThreadsAndTwoRecipients) {
  ASSERT_OK_AND_ASSIGN(Recipient a, NewRecipient());
  ASSERT_OK_AND_ASSIGN(Recipient b, NewRecipient());
  constexpr int kThreads = 6;
  constexpr int kIterations = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const Recipient& to = t % 2 == 0 ? a : b;
      const Recipient& other = t % 2 == 0 ? b : a;
      for (int i = 0; i < kIterations; ++i) {
        const std::string pt = absl::StrCat("thread ", t, " message ", i);
        const std::string info = absl::StrCat("info ", i);
        absl::StatusOr<std::string> ct = to.enc->Encrypt(pt, info);
        if (!ct.ok()) {
          ++failures;
          continue;
        }
        absl::StatusOr<std::string> back = to.dec->Decrypt(*ct, info);
        absl::StatusOr<std::string> wrong = other.dec->Decrypt(*ct, info);
        if (!back.ok() || *back != pt) ++failures;
        if (wrong.ok() || wrong.status().message() != "decryption failed") ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(HpkeP256KeptKeysTest, AgreesWithTheContextPathBothWays) {
  ASSERT_OK_AND_ASSIGN(Recipient r, NewRecipient());
  const std::string header = HpkeWireHeader(kSuite);
  for (int i = 0; i < 8; ++i) {
    const std::string pt = absl::StrCat("message ", i, std::string(i * 100, 'x'));
    const std::string info = absl::StrCat("info ", i);
    // Kept-key Encrypt → SetupBaseR + Open.
    ASSERT_OK_AND_ASSIGN(std::string ct, r.enc->Encrypt(pt, info));
    ASSERT_OK_AND_ASSIGN(HpkeWireMessage m, ParseHpkeWireMessage(kSuite, ct));
    ASSERT_OK_AND_ASSIGN(auto rc, HpkeContext::SetupBaseR(
                                      kSuite, m.enc,
                                      SecretDataAsStringView(r.keys.private_key), info));
    ASSERT_OK_AND_ASSIGN(std::string opened, rc->Open(m.header, m.ciphertext));
    EXPECT_EQ(opened, pt);
    // SetupBaseS + Seal → kept-key Decrypt.
    ASSERT_OK_AND_ASSIGN(HpkeContext::Sender s,
                         HpkeContext::SetupBaseS(kSuite, r.keys.public_key, info));
    ASSERT_OK_AND_ASSIGN(std::string sealed, s.context->Seal(header, pt));
    ASSERT_OK_AND_ASSIGN(std::string back, r.dec->Decrypt(header + s.enc + sealed, info));
    EXPECT_EQ(back, pt);
  }
}

TEST(HpkeP256KeptKeysTest, EncOffTheCurveIsDecryptionFailed) {
  ASSERT_OK_AND_ASSIGN(Recipient r, NewRecipient());
  ASSERT_OK_AND_ASSIGN(std::string ct, r.enc->Encrypt("pt", ""));
  for (const std::string& enc :
       {std::string("\x04") + std::string(64, '\0'), std::string("\x04") + std::string(64, '\xff'),
        ct.substr(kHpkeWireHeaderSize, 64) + static_cast<char>(ct[kHpkeWireHeaderSize + 64] ^ 1)}) {
    std::string bad = ct;
    bad.replace(kHpkeWireHeaderSize, kHpkeEncSize, enc);
    EXPECT_THAT(r.dec->Decrypt(bad, ""),
                StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  }
}

}  // namespace
}  // namespace smcrypt
