// Known answers for SHA-256 (FIPS 180-2 Appendix B / NIST CSRC examples) and
// HMAC-SHA-256 (RFC 4231 §4), plus the Hash and Mac contracts.
#include <memory>
#include <random>
#include <string>

#include "crypto/openssl/hmac_openssl.h"
#include "crypto/openssl/openssl_primitives.h"
#include "crypto/openssl/sha256_openssl.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;

std::string Sha256Hex(absl::string_view data) {
  auto h = Sha256OpenSsl::New();
  EXPECT_TRUE(h.ok());
  (*h)->Update(data);
  return BytesToHex((*h)->Finish());
}

TEST(Sha256OpenSslTest, FipsExamples) {
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256OpenSslTest, OneMillionAIncremental) {
  ASSERT_OK_AND_ASSIGN(auto h, Sha256OpenSsl::New());
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h->Update(chunk);
  EXPECT_EQ(BytesToHex(h->Finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256OpenSslTest, AnySplitGivesSameDigestAndFinishResets) {
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const std::string msg = ::smcrypt::testing::RandomBytes(rng, 300);
  const std::string whole = Sha256Hex(msg);
  ASSERT_OK_AND_ASSIGN(auto h, Sha256OpenSsl::New());
  for (size_t split = 0; split <= msg.size(); split += 7) {
    h->Update(absl::string_view(msg).substr(0, split));
    h->Update(absl::string_view(msg).substr(split));
    EXPECT_EQ(BytesToHex(h->Finish()), whole) << "split " << split;
  }
  EXPECT_EQ(h->digest_size(), 32u);
  EXPECT_EQ(h->block_size(), 64u);
}

TEST(Sha256OpenSslTest, FactoryByAlgorithm) {
  ASSERT_OK_AND_ASSIGN(auto h, NewSha256OpenSsl());
  h->Update("abc");
  EXPECT_EQ(BytesToHex(h->Finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

}

struct HmacVector {
  const char* name;
  std::string key;
  std::string data;
  const char* mac_hex;
};

TEST(HmacOpenSslTest, Rfc4231) {
  const HmacVector vectors[] = {
      {"case 1", std::string(20, '\x0b'), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"case 2", "Jefe", "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {"case 3", std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {"case 4", HexToBytes("0102030405060708090a0b0c0d0e0f10111213141516171819"),
       std::string(50, '\xcd'),
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {"case 6", std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {"case 7", std::string(131, '\xaa'),
       "This is a test using a larger than block-size key and a larger than block-size data. "
       "The key needs to be hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (const HmacVector& v : vectors) {
    SCOPED_TRACE(v.name);
    ASSERT_OK_AND_ASSIGN(auto mac, HmacOpenSsl::New(v.key));
    ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac(v.data));
    EXPECT_EQ(BytesToHex(tag), v.mac_hex);
    EXPECT_THAT(mac->VerifyMac(HexToBytes(v.mac_hex), v.data), IsOk());
    // Computing twice from the same keyed template gives the same tag.
    ASSERT_OK_AND_ASSIGN(std::string again, mac->ComputeMac(v.data));
    EXPECT_EQ(again, tag);
  }
}

TEST(HmacOpenSslTest, VerifyRejectsEveryBitFlipAndWrongLengths) {
  ASSERT_OK_AND_ASSIGN(auto mac, NewHmacSha256OpenSsl("key"));
  EXPECT_EQ(mac->mac_size(), 32u);
  ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac("message"));
  for (size_t bit = 0; bit < tag.size() * 8; ++bit) {
    std::string bad = tag;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_THAT(mac->VerifyMac(bad, "message"),
                StatusIs(absl::StatusCode::kInvalidArgument, "MAC verification failed"));
  }
  EXPECT_THAT(mac->VerifyMac(tag.substr(0, 31), "message"),
              StatusIs(absl::StatusCode::kInvalidArgument, "MAC verification failed"));
  EXPECT_THAT(mac->VerifyMac(tag + "x", "message"),
              StatusIs(absl::StatusCode::kInvalidArgument, "MAC verification failed"));
  EXPECT_THAT(mac->VerifyMac("", "message"),
              StatusIs(absl::StatusCode::kInvalidArgument, "MAC verification failed"));
  EXPECT_THAT(mac->VerifyMac(tag, "messagf"),
              StatusIs(absl::StatusCode::kInvalidArgument, "MAC verification failed"));
}

// RFC 2104 §2 sets no lower bound on the key length; Python's hmac.new(b"", b"",
// "sha256") gives the known answer below.
TEST(HmacOpenSslTest, EmptyKey) {
  ASSERT_OK_AND_ASSIGN(auto mac, HmacOpenSsl::New(""));
  ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac(""));
  EXPECT_EQ(BytesToHex(tag), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  EXPECT_THAT(mac->VerifyMac(tag, ""), IsOk());
  // A default string_view (null data) is the same empty key.
  ASSERT_OK_AND_ASSIGN(auto null_key, HmacOpenSsl::New(absl::string_view()));
  for (const std::string& msg : {std::string(), std::string("abc"), std::string(200, 'm')}) {
    ASSERT_OK_AND_ASSIGN(std::string t, null_key->ComputeMac(msg));
    EXPECT_EQ(BytesToHex(t), BytesToHex(::smcrypt::testing::OpenSslHmac("SHA2-256", "", msg)))
        << msg.size() << " bytes";
  }
}

}  // namespace
}  // namespace smcrypt
