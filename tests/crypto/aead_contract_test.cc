// aead_contract_test.cc — the AEAD contract suite (aead_contract_test.h): the TEST_Ps,
// run for every instance the binary's own files declare.
#include "tests/crypto/aead_contract_test.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::TestSeed;

namespace {

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
constexpr char kDecryptionFailed[] = "decryption failed";

}  // namespace

std::string MissingCpuFeatures(absl::string_view what, absl::string_view name,
                               uint32_t required) {
  const uint32_t missing = required & ~GetCpuFeatures();
  if (missing == 0) return "";
  return absl::StrCat(what, " ", name, " needs CPU features ", FormatCpuFeatureList(missing),
                      " that this machine lacks (or are masked)");
}

void AeadContractTest::SetUp() {
  const AeadContractParam& p = GetParam();
  if (p.skip) {
    const std::string why = p.skip();
    if (!why.empty()) {
      GTEST_SKIP() << p.name << ": " << why;
    }
  }
  if (p.enter) p.enter();
  entered_ = true;
  key_ = HexToBytes(
             "0123456789abcdeffedcba9876543210"
             "00112233445566778899aabbccddeeff")
             .substr(0, p.key_size);
  ASSERT_EQ(key_.size(), p.key_size);
  nonce_ = HexToBytes("00001234567800000000abcd");
  ASSERT_OK_AND_ASSIGN(aead_, New(key_));
}

void AeadContractTest::TearDown() {
  aead_.reset();
  if (entered_ && GetParam().leave) GetParam().leave();
}

absl::StatusOr<std::unique_ptr<Aead>> AeadContractTest::New(absl::string_view key,
                                                            size_t tag_size) const {
  return GetParam().make(key, tag_size);
}

namespace {

// Lengths across the block size, the wide back ends' batches and a multi-pass message.
std::vector<size_t> RoundTripLengths() {
  std::vector<size_t> lengths;
  for (size_t len = 0; len <= 80; ++len) lengths.push_back(len);
  for (size_t len : {127, 128, 129, 255, 256, 257, 511, 512, 1023, 1024, 1025, 4095, 4096, 4097,
                     16 * 64 + 15, 65536 + 3}) {
    lengths.push_back(len);
  }
  return lengths;
}

TEST_P(AeadContractTest, RoundTripsAtManyLengths) {
  std::mt19937_64 rng(TestSeed() + 30);
  SCOPED_TRACE(absl::StrCat("seed=", TestSeed() + 30));
  for (size_t len : RoundTripLengths()) {
    SCOPED_TRACE(absl::StrCat("length ", len));
    const std::string pt = RandomBytes(rng, len);
    const std::string aad = RandomBytes(rng, len % 41);
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead_->Seal(nonce_, pt, aad));
    ASSERT_EQ(sealed.size(), len + 16);
    // Deterministic for the same inputs, and the plaintext does not show through.
    ASSERT_OK_AND_ASSIGN(std::string again, aead_->Seal(nonce_, pt, aad));
    EXPECT_EQ(sealed, again);
    if (len >= 8) {
      EXPECT_NE(BytesToHex(sealed.substr(0, len)), BytesToHex(pt));
    }
    ASSERT_OK_AND_ASSIGN(std::string opened, aead_->Open(nonce_, sealed, aad));
    ASSERT_EQ(BytesToHex(opened), BytesToHex(pt));
  }
}

TEST_P(AeadContractTest, FlipEveryBitOfCiphertextAndTag) {
  const std::string pt = "short message!";
  const std::string aad = "header";
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead_->Seal(nonce_, pt, aad));
  ASSERT_EQ(sealed.size(), pt.size() + 16);
  for (size_t i = 0; i < sealed.size() * 8; ++i) {
    std::string bad = sealed;
    bad[i / 8] ^= static_cast<char>(1 << (i % 8));
    EXPECT_THAT(aead_->Open(nonce_, bad, aad), StatusIs(kInvalid, kDecryptionFailed))
        << "bit " << i;
  }
  EXPECT_THAT(aead_->Open(nonce_, sealed, aad), IsOk());
}

TEST_P(AeadContractTest, FlipEveryBitOfAadAndNonce) {
  const std::string pt = "short message!";
  const std::string aad = "associated data!!";
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead_->Seal(nonce_, pt, aad));
  for (size_t i = 0; i < aad.size() * 8; ++i) {
    std::string bad = aad;
    bad[i / 8] ^= static_cast<char>(1 << (i % 8));
    EXPECT_THAT(aead_->Open(nonce_, sealed, bad), StatusIs(kInvalid, kDecryptionFailed))
        << "aad bit " << i;
  }
  for (size_t i = 0; i < nonce_.size() * 8; ++i) {
    std::string bad = nonce_;
    bad[i / 8] ^= static_cast<char>(1 << (i % 8));
    EXPECT_THAT(aead_->Open(bad, sealed, aad), StatusIs(kInvalid, kDecryptionFailed))
        << "nonce bit " << i;
  }
  // A different nonce length (13 bytes: accepted by every instance), and extra or missing
  // AAD bytes.
  EXPECT_THAT(aead_->Open(nonce_ + '\0', sealed, aad), StatusIs(kInvalid, kDecryptionFailed));
  EXPECT_THAT(aead_->Open(nonce_, sealed, aad + '\0'), StatusIs(kInvalid, kDecryptionFailed));
  EXPECT_THAT(aead_->Open(nonce_, sealed, aad.substr(0, aad.size() - 1)),
              StatusIs(kInvalid, kDecryptionFailed));
  EXPECT_THAT(aead_->Open(nonce_, sealed, ""), StatusIs(kInvalid, kDecryptionFailed));
}

TEST_P(AeadContractTest, TruncateAtEveryLength) {
  const std::string pt = "a message of 32 bytes, exactly!";
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead_->Seal(nonce_, pt, "aad"));
  for (size_t len = 0; len < sealed.size(); ++len) {
    const std::string cut = sealed.substr(0, len);
    if (len < 16) {
      EXPECT_THAT(aead_->Open(nonce_, cut, "aad"),
                  StatusIs(kInvalid, GetParam().too_short_error(16, len)));
    } else {
      EXPECT_THAT(aead_->Open(nonce_, cut, "aad"), StatusIs(kInvalid, kDecryptionFailed))
          << "length " << len;
    }
  }
  // Appending a byte must fail too.
  EXPECT_THAT(aead_->Open(nonce_, sealed + 'x', "aad"), StatusIs(kInvalid, kDecryptionFailed));
}

TEST_P(AeadContractTest, EmptyPlaintextAndEmptyAad) {
  for (absl::string_view aad :
       {absl::string_view(), absl::string_view(""), absl::string_view("aad")}) {
    for (absl::string_view pt : {absl::string_view(), absl::string_view("")}) {
      ASSERT_OK_AND_ASSIGN(std::string sealed, aead_->Seal(nonce_, pt, aad));
      EXPECT_EQ(sealed.size(), 16u);
      ASSERT_OK_AND_ASSIGN(std::string opened, aead_->Open(nonce_, sealed, aad));
      EXPECT_TRUE(opened.empty());
    }
  }
  // Absent (null) and empty AAD authenticate the same (empty) string, and so do absent
  // and empty plaintexts.
  ASSERT_OK_AND_ASSIGN(std::string a, aead_->Seal(nonce_, "m", absl::string_view()));
  ASSERT_OK_AND_ASSIGN(std::string b, aead_->Seal(nonce_, "m", ""));
  EXPECT_EQ(a, b);
  ASSERT_OK_AND_ASSIGN(std::string e1,
                       aead_->Seal(nonce_, absl::string_view(), absl::string_view()));
  ASSERT_OK_AND_ASSIGN(std::string e2, aead_->Seal(nonce_, "", ""));
  EXPECT_EQ(e1, e2);
  ASSERT_OK_AND_ASSIGN(std::string opened, aead_->Open(nonce_, e1, absl::string_view()));
  EXPECT_EQ(opened, "");
  // An empty AAD differs from a present one (CCM: Adata = 0 against 1).
  ASSERT_OK_AND_ASSIGN(std::string aad_only, aead_->Seal(nonce_, "", "aad"));
  EXPECT_NE(e2, aad_only);
  EXPECT_THAT(aead_->Open(nonce_, aad_only, ""), StatusIs(kInvalid, kDecryptionFailed));
  EXPECT_THAT(aead_->Open(nonce_, aad_only, absl::string_view()),
              StatusIs(kInvalid, kDecryptionFailed));
}

TEST_P(AeadContractTest, NonceSizes) {
  std::mt19937_64 rng(TestSeed() + 3);
  const std::string pt = RandomBytes(rng, 100);
  std::vector<std::string> seen;
  for (size_t n : GetParam().nonce_sizes) {
    SCOPED_TRACE(absl::StrCat("nonce size ", n));
    const std::string nonce = RandomBytes(rng, n);
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead_->Seal(nonce, pt, "x"));
    ASSERT_OK_AND_ASSIGN(std::string opened, aead_->Open(nonce, sealed, "x"));
    EXPECT_EQ(opened, pt);
    for (const std::string& s : seen) EXPECT_NE(s, sealed);
    seen.push_back(sealed);
  }
  for (size_t n : GetParam().bad_nonce_sizes) {
    SCOPED_TRACE(absl::StrCat("bad nonce size ", n));
    const std::string nonce(n, 'n');
    EXPECT_THAT(aead_->Seal(nonce, "pt", "aad"),
                StatusIs(kInvalid, GetParam().nonce_size_error(n)));
    EXPECT_THAT(aead_->Open(nonce, std::string(32, 'c'), "aad"),
                StatusIs(kInvalid, GetParam().nonce_size_error(n)));
  }
}

TEST_P(AeadContractTest, WrongKeyAndShorterTagFail) {
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead_->Seal(nonce_, "secret", "aad"));
  for (size_t i : {size_t{0}, key_.size() - 1}) {
    std::string other_key = key_;
    other_key[i] ^= static_cast<char>(i == 0 ? 0x01 : 0x80);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> other, New(other_key));
    EXPECT_THAT(other->Open(nonce_, sealed, "aad"), StatusIs(kInvalid, kDecryptionFailed))
        << "key byte " << i;
  }
  // An object with a shorter tag does not accept a 16-byte tag (the last bytes become
  // ciphertext).
  for (size_t t : GetParam().tag_sizes) {
    if (t == 16) continue;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> short_tag, New(key_, t));
    EXPECT_THAT(short_tag->Open(nonce_, sealed, "aad"), StatusIs(kInvalid, kDecryptionFailed))
        << "tag size " << t;
  }
}

TEST_P(AeadContractTest, KeySizes) {
  for (size_t k : GetParam().bad_key_sizes) {
    EXPECT_THAT(New(std::string(k, 'k')), StatusIs(kInvalid, GetParam().key_size_error(k)))
        << "key size " << k;
  }
  EXPECT_THAT(New(std::string(GetParam().key_size, 'k')), IsOk());
}

TEST_P(AeadContractTest, TagSizes) {
  for (size_t t : GetParam().tag_sizes) {
    SCOPED_TRACE(absl::StrCat("tag size ", t));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, New(key_, t));
    EXPECT_EQ(aead->tag_size(), t);
    EXPECT_EQ(aead->nonce_size(), 12u);
    ASSERT_OK_AND_ASSIGN(std::string empty, aead->Seal(nonce_, "", ""));
    EXPECT_EQ(empty.size(), t);
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce_, "a message", "aad"));
    EXPECT_EQ(sealed.size(), 9 + t);
    ASSERT_OK_AND_ASSIGN(std::string opened, aead->Open(nonce_, sealed, "aad"));
    EXPECT_EQ(opened, "a message");
  }
  EXPECT_EQ(aead_->tag_size(), 16u);
  for (size_t t : GetParam().bad_tag_sizes) {
    EXPECT_THAT(New(key_, t), StatusIs(kInvalid, GetParam().tag_size_error(t)))
        << "tag size " << t;
  }
}

// A ciphertext shorter than the tag, for every tag size: the length error, which names
// both lengths.
TEST_P(AeadContractTest, CiphertextShorterThanTheTag) {
  for (size_t t : GetParam().tag_sizes) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, New(key_, t));
    for (size_t len : {size_t{0}, size_t{1}, t - 1}) {
      EXPECT_THAT(aead->Open(nonce_, std::string(len, 'c'), ""),
                  StatusIs(kInvalid, GetParam().too_short_error(t, len)))
          << "tag " << t << ", ciphertext " << len;
    }
    // Exactly the tag: an empty ciphertext whose tag is wrong.
    EXPECT_THAT(aead->Open(nonce_, std::string(t, 'c'), ""),
                StatusIs(kInvalid, kDecryptionFailed));
  }
}

// OpenDetached(ct, tag) answers as Open(ct ‖ tag): the plaintext at every length and tag
// size, and "decryption failed" for every flipped bit of the ciphertext and of the tag.
TEST_P(AeadContractTest, OpenDetachedAnswersAsOpen) {
  std::mt19937_64 rng(::smcrypt::testing::TestSeed() + 7);
  for (size_t tag_size : GetParam().tag_sizes) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead,
                         New(::smcrypt::testing::RandomBytes(rng, GetParam().key_size), tag_size));
    for (size_t len = 0; len <= 40; ++len) {
      SCOPED_TRACE(absl::StrCat("tag ", tag_size, " length ", len));
      const std::string nonce = ::smcrypt::testing::RandomBytes(rng, aead->nonce_size());
      const std::string aad = ::smcrypt::testing::RandomBytes(rng, len % 19);
      const std::string pt = ::smcrypt::testing::RandomBytes(rng, len);
      ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, pt, aad));
      const absl::string_view ct = absl::string_view(sealed).substr(0, len);
      const absl::string_view tag = absl::string_view(sealed).substr(len);
      ASSERT_EQ(tag.size(), tag_size);
      ASSERT_OK_AND_ASSIGN(std::string opened, aead->OpenDetached(nonce, ct, tag, aad));
      EXPECT_EQ(opened, pt);
      for (size_t bit = 0; bit < 8 * sealed.size(); ++bit) {
        std::string flipped = sealed;
        flipped[bit / 8] ^= static_cast<char>(1u << (bit % 8));
        EXPECT_THAT(aead->OpenDetached(nonce, absl::string_view(flipped).substr(0, len),
                                       absl::string_view(flipped).substr(len), aad),
                    ::smcrypt::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                 "decryption failed"))
            << "bit " << bit;
      }
    }
  }
}

// OpenDetached refuses a tag of any other length than tag_size(), naming both.
TEST_P(AeadContractTest, OpenDetachedRefusesATagOfAnotherLength) {
  std::mt19937_64 rng(::smcrypt::testing::TestSeed() + 8);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead,
                       New(::smcrypt::testing::RandomBytes(rng, GetParam().key_size)));
  const std::string nonce = ::smcrypt::testing::RandomBytes(rng, aead->nonce_size());
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, "plaintext", "aad"));
  const absl::string_view ct = absl::string_view(sealed).substr(0, 9);
  const std::string tag = sealed.substr(9) + std::string(1, '\0');
  for (size_t n : {size_t{0}, size_t{4}, size_t{12}, size_t{15}, size_t{17}}) {
    EXPECT_THAT(aead->OpenDetached(nonce, ct, absl::string_view(tag).substr(0, n), "aad"),
                ::smcrypt::testing::StatusIs(
                    absl::StatusCode::kInvalidArgument,
                    ::testing::HasSubstr(absl::StrCat("tag must be 16 bytes, got ", n))));
  }
}

}  // namespace
}  // namespace smcrypt
