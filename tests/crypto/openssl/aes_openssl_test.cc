// AES through OpenSSL: NIST SP 800-38A Appendix F (ECB, CBC, CTR), the GCM spec's test
// cases (McGrew & Viega, "The Galois/Counter Mode of Operation", Appendix B; also
// NIST's gcmEncryptExtIV vectors), PKCS#7 padding, tamper and bad-input tables, and a
// differential check against Botan 2 when it is present.
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "crypto/openssl/aes_cipher_openssl.h"
#include "crypto/openssl/aes_gcm_openssl.h"
#include "crypto/openssl/openssl_primitives.h"
#include "gtest/gtest.h"
#include "tests/crypto/aead_contract_test.h"
#include "tests/crypto/openssl/openssl_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

#ifdef SMCRYPT_HAVE_BOTAN
#include <botan/aead.h>
#include <botan/cipher_mode.h>
#endif

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::IsOkAndHolds;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

size_t SymmetricKeySizeForTest(Algorithm alg) {
  switch (alg) {
    case Algorithm::kAes256Ecb:
    case Algorithm::kAes256Cbc:
    case Algorithm::kAes256Ctr:
    case Algorithm::kAes256Gcm:
      return 32;
    default:
      return 16;
  }
}

// SP 800-38A F.1–F.5: the four plaintext blocks shared by every example.
const char kSp80038aPlain[] =
    "6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51"
    "30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710";
const char kKey128[] = "2b7e151628aed2a6abf7158809cf4f3c";
const char kKey256[] = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";

struct Sp80038aVector {
  const char* name;
  Algorithm alg;
  const char* key;
  const char* iv;
  const char* ciphertext;
};

TEST(AesCipherOpenSslTest, Sp80038aAppendixF) {
  const Sp80038aVector vectors[] = {
      {"F.1.1 ECB-AES128", Algorithm::kAes128Ecb, kKey128, "",
       "3ad77bb40d7a3660a89ecaf32466ef97 f5d3d58503b9699de785895a96fdbaaf"
       "43b1cd7f598ece23881b00e3ed030688 7b0c785e27e8ad3f8223207104725dd4"},
      {"F.1.5 ECB-AES256", Algorithm::kAes256Ecb, kKey256, "",
       "f3eed1bdb5d2a03c064b5a7e3db181f8 591ccb10d410ed26dc5ba74a31362870"
       "b6ed21b99ca6f4f9f153e7b1beafed1d 23304b7a39f9f3ff067d8d8f9e24ecc7"},
      {"F.2.1 CBC-AES128", Algorithm::kAes128Cbc, kKey128, "000102030405060708090a0b0c0d0e0f",
       "7649abac8119b246cee98e9b12e9197d 5086cb9b507219ee95db113a917678b2"
       "73bed6b8e3c1743b7116e69e22229516 3ff1caa1681fac09120eca307586e1a7"},
      {"F.2.5 CBC-AES256", Algorithm::kAes256Cbc, kKey256, "000102030405060708090a0b0c0d0e0f",
       "f58c4c04d6e5f1ba779eabfb5f7bfbd6 9cfc4e967edb808d679f777bc6702c7d"
       "39f23369a9d9bacfa530e26304231461 b2eb05e2c39be9fcda6c19078c6a9d1b"},
      {"F.5.1 CTR-AES128", Algorithm::kAes128Ctr, kKey128, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
       "874d6191b620e3261bef6864990db6ce 9806f66b7970fdff8617187bb9fffdff"
       "5ae4df3edbd5d35e5b4f09020db03eab 1e031dda2fbe03d1792170a0f3009cee"},
      {"F.5.5 CTR-AES256", Algorithm::kAes256Ctr, kKey256, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
       "601ec313775789a5b7a7f504bbf3d228 f443e3ca4d62b59aca84e990cacaf5c5"
       "2b0930daa23de94ce87017ba2d84988d dfc9c58db67aada613c2dd08457941a6"},
  };
  const std::string plain = HexToBytes(kSp80038aPlain);
  for (const Sp80038aVector& v : vectors) {
    SCOPED_TRACE(v.name);
    ASSERT_OK_AND_ASSIGN(auto cipher,
                         AesCipherOpenSsl::New(v.alg, HexToBytes(v.key), Padding::kNone));
    const std::string iv = HexToBytes(v.iv);
    EXPECT_EQ(cipher->iv_size(), iv.size());
    ASSERT_OK_AND_ASSIGN(std::string ct, cipher->Encrypt(iv, plain));
    EXPECT_EQ(BytesToHex(ct), BytesToHex(HexToBytes(v.ciphertext)));
    ASSERT_OK_AND_ASSIGN(std::string pt, cipher->Decrypt(iv, ct));
    EXPECT_EQ(pt, plain);
  }
}

TEST(AesCipherOpenSslTest, CtrCounterIs128BitsWide) {
  // With IV = 2^128 − 1 the second block uses counter 0: compare with ECB of both.
  const std::string key = HexToBytes(kKey128);
  ASSERT_OK_AND_ASSIGN(auto ctr, AesCipherOpenSsl::New(Algorithm::kAes128Ctr, key));
  ASSERT_OK_AND_ASSIGN(auto ecb, AesCipherOpenSsl::New(Algorithm::kAes128Ecb, key, Padding::kNone));
  const std::string iv(16, '\xff');
  const std::string zeros(32, '\0');
  ASSERT_OK_AND_ASSIGN(std::string keystream, ctr->Encrypt(iv, zeros));
  ASSERT_OK_AND_ASSIGN(std::string expected, ecb->Encrypt("", iv + std::string(16, '\0')));
  EXPECT_EQ(BytesToHex(keystream), BytesToHex(expected));
  // Counter 00..00ff → 00..0100: the carry crosses byte boundaries.
  std::string iv2(16, '\0');
  iv2[15] = '\xff';
  std::string next(16, '\0');
  next[14] = '\x01';
  ASSERT_OK_AND_ASSIGN(keystream, ctr->Encrypt(iv2, zeros));
  ASSERT_OK_AND_ASSIGN(expected, ecb->Encrypt("", iv2 + next));
  EXPECT_EQ(BytesToHex(keystream), BytesToHex(expected));
  // Any length, including partial blocks.
  ASSERT_OK_AND_ASSIGN(std::string partial, ctr->Encrypt(iv2, std::string(5, '\0')));
  EXPECT_EQ(partial, expected.substr(0, 5));
}

TEST(AesCipherOpenSslTest, Pkcs7RoundTripsEveryLength) {
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (Algorithm alg : {Algorithm::kAes128Ecb, Algorithm::kAes128Cbc, Algorithm::kAes256Ecb,
                        Algorithm::kAes256Cbc}) {
    const std::string key = ::smcrypt::testing::RandomBytes(rng, SymmetricKeySizeForTest(alg));
    ASSERT_OK_AND_ASSIGN(auto cipher, NewAesCipherOpenSsl(alg, key));
    const std::string iv = ::smcrypt::testing::RandomBytes(rng, cipher->iv_size());
    for (size_t len = 0; len <= 50; ++len) {
      const std::string pt = ::smcrypt::testing::RandomBytes(rng, len);
      ASSERT_OK_AND_ASSIGN(std::string ct, cipher->Encrypt(iv, pt));
      EXPECT_EQ(ct.size(), (len / 16 + 1) * 16);
      ASSERT_OK_AND_ASSIGN(std::string back, cipher->Decrypt(iv, ct));
      EXPECT_EQ(back, pt);
    }
  }
}

TEST(AesCipherOpenSslTest, BadPaddingIsOneGenericError) {
  // Blocks whose last bytes are not valid PKCS#7, made by encrypting them without
  // padding and then decrypting with PKCS#7.
  const std::string key = HexToBytes(kKey128);
  const std::string iv = HexToBytes("000102030405060708090a0b0c0d0e0f");
  ASSERT_OK_AND_ASSIGN(auto raw, AesCipherOpenSsl::New(Algorithm::kAes128Cbc, key, Padding::kNone));
  ASSERT_OK_AND_ASSIGN(auto padded, AesCipherOpenSsl::New(Algorithm::kAes128Cbc, key));
  std::vector<std::string> bad_blocks;
  bad_blocks.push_back(std::string(15, 'a') + '\x00');                  // p = 0
  bad_blocks.push_back(std::string(15, 'a') + '\x11');                  // p = 17
  bad_blocks.push_back(std::string(15, 'a') + '\xff');                  // p = 255
  bad_blocks.push_back(std::string(14, 'a') + "\x03\x02");              // bytes differ
  bad_blocks.push_back(std::string(13, 'a') + "\x02\x03\x03");          // p = 3, one wrong
  bad_blocks.push_back('\x0f' + std::string(15, '\x10'));               // p = 16, first wrong
  for (const std::string& block : bad_blocks) {
    SCOPED_TRACE(BytesToHex(block));
    ASSERT_OK_AND_ASSIGN(std::string ct, raw->Encrypt(iv, std::string(16, 'x') + block));
    EXPECT_THAT(padded->Decrypt(iv, ct),
                StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  }
  // Valid extremes: p = 1 and a full block of 16.
  ASSERT_OK_AND_ASSIGN(std::string ct1, raw->Encrypt(iv, std::string(15, 'a') + '\x01'));
  EXPECT_THAT(padded->Decrypt(iv, ct1), IsOkAndHolds(std::string(15, 'a')));
  ASSERT_OK_AND_ASSIGN(std::string ct16,
                       raw->Encrypt(iv, std::string(16, 'a') + std::string(16, '\x10')));
  EXPECT_THAT(padded->Decrypt(iv, ct16), IsOkAndHolds(std::string(16, 'a')));
}

TEST(AesCipherOpenSslTest, BadInputTable) {
  const std::string k16(16, 'k'), k32(32, 'k');
  const auto code = absl::StatusCode::kInvalidArgument;
  EXPECT_THAT(AesCipherOpenSsl::New(Algorithm::kAes128Cbc, k32),
              StatusIs(code, "AES-128-CBC key must be 16 bytes, got 32"));
  EXPECT_THAT(AesCipherOpenSsl::New(Algorithm::kAes256Ctr, k16),
              StatusIs(code, "AES-256-CTR key must be 32 bytes, got 16"));
  EXPECT_THAT(AesCipherOpenSsl::New(Algorithm::kAes128Ecb, ""), StatusIs(code));
  EXPECT_THAT(AesCipherOpenSsl::New(Algorithm::kSm4Cbc, k16), StatusIs(code));
  EXPECT_THAT(AesCipherOpenSsl::New(Algorithm::kAes128Gcm, k16), StatusIs(code));

  ASSERT_OK_AND_ASSIGN(auto cbc, AesCipherOpenSsl::New(Algorithm::kAes128Cbc, k16));
  ASSERT_OK_AND_ASSIGN(auto cbc_raw,
                       AesCipherOpenSsl::New(Algorithm::kAes128Cbc, k16, Padding::kNone));
  ASSERT_OK_AND_ASSIGN(auto ecb, AesCipherOpenSsl::New(Algorithm::kAes128Ecb, k16));
  ASSERT_OK_AND_ASSIGN(auto ctr, AesCipherOpenSsl::New(Algorithm::kAes128Ctr, k16));
  const std::string iv(16, 'i');
  EXPECT_THAT(cbc->Encrypt(std::string(15, 'i'), "x"),
              StatusIs(code, "AES-128-CBC IV must be 16 bytes, got 15"));
  EXPECT_THAT(cbc->Decrypt(std::string(17, 'i'), std::string(16, 'x')),
              StatusIs(code, "AES-128-CBC IV must be 16 bytes, got 17"));
  EXPECT_THAT(ctr->Encrypt("", "x"), StatusIs(code, "AES-128-CTR IV must be 16 bytes, got 0"));
  EXPECT_THAT(ecb->Encrypt(iv, "x"), StatusIs(code, "AES-128-ECB IV must be 0 bytes, got 16"));
  EXPECT_THAT(cbc_raw->Encrypt(iv, std::string(17, 'x')),
              StatusIs(code, HasSubstr("plaintext length 17 is not a multiple of 16")));
  EXPECT_THAT(cbc->Decrypt(iv, std::string(31, 'x')),
              StatusIs(code, HasSubstr("ciphertext length 31")));
  EXPECT_THAT(cbc->Decrypt(iv, ""), StatusIs(code, HasSubstr("ciphertext length 0")));
  EXPECT_THAT(cbc_raw->Decrypt(iv, ""), IsOkAndHolds(std::string()));
  EXPECT_THAT(ecb->Decrypt("", std::string(15, 'x')), StatusIs(code));
}

// ---- GCM --------------------------------------------------------------------------

struct GcmVector {
  const char* name;
  const char* key;
  const char* iv;
  const char* plaintext;
  const char* aad;
  const char* ciphertext;
  const char* tag;
};

const char kGcmKey[] = "feffe9928665731c6d6a8f9467308308";
const char kGcmPlain60[] =
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
const char kGcmAad[] = "feedfacedeadbeeffeedfacedeadbeefabaddad2";

const GcmVector kGcmVectors[] = {
    {"test case 1", "00000000000000000000000000000000", "000000000000000000000000", "", "", "",
     "58e2fccefa7e3061367f1d57a4e7455a"},
    {"test case 2", "00000000000000000000000000000000", "000000000000000000000000",
     "00000000000000000000000000000000", "", "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"},
    {"test case 3", kGcmKey, "cafebabefacedbaddecaf888",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"},
    {"test case 4", kGcmKey, "cafebabefacedbaddecaf888", kGcmPlain60, kGcmAad,
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
    {"test case 5 (8-byte IV)", kGcmKey, "cafebabefacedbad", kGcmPlain60, kGcmAad,
     "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c7423"
     "73806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f4598",
     "3612d2e79e3b0785561be14aaca2fccb"},
    {"test case 6 (60-byte IV)", kGcmKey,
     "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728"
     "c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b",
     kGcmPlain60, kGcmAad,
     "8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca7"
     "01e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5",
     "619cc5aefffe0bfa462af43c1699d050"},
};

TEST(AesGcmOpenSslTest, GcmSpecTestCases) {
  for (const GcmVector& v : kGcmVectors) {
    SCOPED_TRACE(v.name);
    ASSERT_OK_AND_ASSIGN(auto aead, AesGcmOpenSsl::New(Algorithm::kAes128Gcm, HexToBytes(v.key)));
    const std::string iv = HexToBytes(v.iv), pt = HexToBytes(v.plaintext),
                      aad = HexToBytes(v.aad);
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(iv, pt, aad));
    EXPECT_EQ(BytesToHex(sealed),
              BytesToHex(HexToBytes(v.ciphertext)) + BytesToHex(HexToBytes(v.tag)));
    EXPECT_THAT(aead->Open(iv, sealed, aad), IsOkAndHolds(pt));
  }
}

TEST(AesGcmOpenSslTest, TruncatedTagsAreTagPrefixes) {
  const GcmVector& v = kGcmVectors[3];
  const std::string iv = HexToBytes(v.iv), pt = HexToBytes(v.plaintext), aad = HexToBytes(v.aad);
  for (size_t tag_size = 12; tag_size <= 16; ++tag_size) {
    SCOPED_TRACE(tag_size);
    ASSERT_OK_AND_ASSIGN(auto aead,
                         NewAesGcmOpenSsl(Algorithm::kAes128Gcm, HexToBytes(v.key), tag_size));
    EXPECT_EQ(aead->tag_size(), tag_size);
    EXPECT_EQ(aead->nonce_size(), 12u);
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(iv, pt, aad));
    EXPECT_EQ(BytesToHex(sealed), BytesToHex(HexToBytes(v.ciphertext)) +
                                      BytesToHex(HexToBytes(v.tag)).substr(0, 2 * tag_size));
    EXPECT_THAT(aead->Open(iv, sealed, aad), IsOkAndHolds(pt));
  }
}

// The AEAD contract (tests/crypto/aead_contract_test.h) for AES-128-GCM and AES-256-GCM.
AeadContractParam AesGcmContract(std::string name, Algorithm alg) {
  const bool aes256 = alg == Algorithm::kAes256Gcm;
  const std::string label = aes256 ? "AES-256-GCM" : "AES-128-GCM";
  AeadContractParam p;
  p.name = std::move(name);
  p.make = [alg](absl::string_view key, size_t tag_size) {
    return NewAesGcmOpenSsl(alg, key, tag_size);
  };
  p.key_size = aes256 ? 32 : 16;
  p.bad_key_sizes = aes256 ? std::vector<size_t>{0, 16, 24, 31, 33}
                           : std::vector<size_t>{0, 15, 17, 24, 32};
  p.tag_sizes = {12, 13, 14, 15, 16};
  p.bad_tag_sizes = {8, 11, 17};  // 0 means 16 (AesGcmOpenSslTest.BadInputTable)
  p.nonce_sizes = {1, 8, 11, 12, 13, 16, 17, 32, 64, 128};
  p.bad_nonce_sizes = {0, 129};
  p.key_size_error = [label, aes256](size_t got) {
    return absl::StrCat(label, " key must be ", aes256 ? 32 : 16, " bytes, got ", got);
  };
  p.tag_size_error = [label](size_t got) {
    return absl::StrCat(label, " tag must be 12 to 16 bytes, got ", got);
  };
  p.nonce_size_error = [label](size_t got) {
    return absl::StrCat(label, " nonce must be 1 to 128 bytes, got ", got);
  };
  p.too_short_error = [label](size_t tag_size, size_t got) {
    return absl::StrCat(label, " ciphertext too short: expected at least ", tag_size,
                        " bytes, got ", got);
  };
  return p;
}

INSTANTIATE_TEST_SUITE_P(AesGcm, AeadContractTest,
                         ::testing::Values(AesGcmContract("aes128", Algorithm::kAes128Gcm),
                                           AesGcmContract("aes256", Algorithm::kAes256Gcm)),
                         AeadContractName);

// What the contract does not cover: the algorithm check, tag size 0 (the default), and
// the nonce check coming before the ciphertext length on Open.
TEST(AesGcmOpenSslTest, BadInputTable) {
  const auto code = absl::StatusCode::kInvalidArgument;
  const std::string k16(16, 'k');
  EXPECT_THAT(AesGcmOpenSsl::New(Algorithm::kSm4Gcm, k16), StatusIs(code));
  EXPECT_THAT(AesGcmOpenSsl::New(Algorithm::kAes128Cbc, k16), StatusIs(code));
  ASSERT_OK_AND_ASSIGN(auto aead, AesGcmOpenSsl::New(Algorithm::kAes128Gcm, k16, 0));
  EXPECT_EQ(aead->tag_size(), 16u);
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(std::string(12, 'n'), "hello", "aad"));
  EXPECT_EQ(sealed.size(), 5u + 16u);
  EXPECT_THAT(aead->Open("", std::string(15, 'c'), ""),
              StatusIs(code, "AES-128-GCM nonce must be 1 to 128 bytes, got 0"));
}

#ifdef SMCRYPT_HAVE_BOTAN
// Differential: random keys, nonce lengths, tag sizes and lengths against Botan 2.
TEST(AesGcmOpenSslTest, MatchesBotan) {
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 200; ++iter) {
    const bool aes256 = iter % 2 == 1;
    const size_t tag_size = 12 + rng() % 5;
    const std::string key = ::smcrypt::testing::RandomBytes(rng, aes256 ? 32 : 16);
    const std::string nonce = ::smcrypt::testing::RandomBytes(rng, 1 + rng() % 40);
    const std::string pt = ::smcrypt::testing::RandomBytes(rng, rng() % 100);
    const std::string aad = ::smcrypt::testing::RandomBytes(rng, rng() % 40);
    ASSERT_OK_AND_ASSIGN(
        auto aead, AesGcmOpenSsl::New(aes256 ? Algorithm::kAes256Gcm : Algorithm::kAes128Gcm,
                                      key, tag_size));
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, pt, aad));
    auto botan = Botan::AEAD_Mode::create_or_throw(
        std::string(aes256 ? "AES-256" : "AES-128") + "/GCM(" + std::to_string(tag_size) + ")",
        Botan::ENCRYPTION);
    botan->set_key(reinterpret_cast<const uint8_t*>(key.data()), key.size());
    botan->set_associated_data(reinterpret_cast<const uint8_t*>(aad.data()), aad.size());
    botan->start(reinterpret_cast<const uint8_t*>(nonce.data()), nonce.size());
    Botan::secure_vector<uint8_t> buf(pt.begin(), pt.end());
    botan->finish(buf);
    EXPECT_EQ(BytesToHex(sealed), BytesToHex(std::string(buf.begin(), buf.end())))
        << "iter " << iter;
  }
}

TEST(AesCipherOpenSslTest, CbcPkcs7MatchesBotan) {
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 100; ++iter) {
    const std::string key = ::smcrypt::testing::RandomBytes(rng, 16);
    const std::string iv = ::smcrypt::testing::RandomBytes(rng, 16);
    const std::string pt = ::smcrypt::testing::RandomBytes(rng, rng() % 70);
    ASSERT_OK_AND_ASSIGN(auto cipher, AesCipherOpenSsl::New(Algorithm::kAes128Cbc, key));
    ASSERT_OK_AND_ASSIGN(std::string ct, cipher->Encrypt(iv, pt));
    auto botan = Botan::Cipher_Mode::create_or_throw("AES-128/CBC/PKCS7", Botan::ENCRYPTION);
    botan->set_key(reinterpret_cast<const uint8_t*>(key.data()), key.size());
    botan->start(reinterpret_cast<const uint8_t*>(iv.data()), iv.size());
    Botan::secure_vector<uint8_t> buf(pt.begin(), pt.end());
    botan->finish(buf);
    EXPECT_EQ(BytesToHex(ct), BytesToHex(std::string(buf.begin(), buf.end()))) << "iter " << iter;
  }
}
#endif  // SMCRYPT_HAVE_BOTAN

}  // namespace
}  // namespace smcrypt
