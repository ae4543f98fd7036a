// hpke_contract_test.cc — the HybridEncrypt/HybridDecrypt and HpkeContext contracts of
// smcrypt/hpke.h for both suites: round trips (0 B, 1 B, 512 B, 1 MiB), every key
// encoding, wrong-family keys, tampering (every bit of header, enc, ciphertext and tag;
// wrong info; wrong aad; truncation at every length) with the exact errors, the
// DeriveKeyPair rejection path, sequence-number overflow and export limits.
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/hpke/hpke_internal.h"
#include "crypto/sm2/sm2_batch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/hpke.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::TestSeed;
using ::testing::HasSubstr;

Algorithm AlgorithmOf(HpkeSuite suite) {
  return suite == HpkeSuite::kSm2Sm3Sm4Gcm ? Algorithm::kHpkeSm2Sm3Sm4Gcm
                                           : Algorithm::kHpkeP256Sha256Aes128Gcm;
}

class HpkeContractTest : public ::testing::TestWithParam<HpkeSuite> {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(keys_, GenerateKeyPair(AlgorithmOf(GetParam())));
    ASSERT_OK_AND_ASSIGN(enc_, NewHpkeEncrypt(GetParam(), keys_.public_key_der));
    ASSERT_OK_AND_ASSIGN(dec_, NewHpkeDecrypt(GetParam(),
                                              SecretDataAsStringView(keys_.private_key_der)));
  }
  KeyPair keys_;
  std::unique_ptr<HybridEncrypt> enc_;
  std::unique_ptr<HybridDecrypt> dec_;
};

INSTANTIATE_TEST_SUITE_P(Suites, HpkeContractTest,
                         ::testing::Values(HpkeSuite::kP256Sha256Aes128Gcm,
                                           HpkeSuite::kSm2Sm3Sm4Gcm),
                         [](const ::testing::TestParamInfo<HpkeSuite>& info) {
                           return info.param == HpkeSuite::kSm2Sm3Sm4Gcm ? "Sm2Sm3Sm4Gcm"
                                                                         : "P256Sha256Aes128Gcm";
                         });

TEST_P(HpkeContractTest, RoundTripsAndWireLayout) {
  const uint64_t seed = TestSeed();
  std::cout << "seed " << seed << " (set SMCRYPT_TEST_SEED to replay)\n";
  std::mt19937_64 rng(seed);
  const HpkeSuiteIds ids = GetHpkeSuiteIds(GetParam());
  for (size_t size : {size_t{0}, size_t{1}, size_t{512}, size_t{1} << 20}) {
    SCOPED_TRACE(absl::StrCat("size ", size));
    const std::string pt = RandomBytes(rng, size);
    const std::string info = RandomBytes(rng, size % 7 + 3);
    ASSERT_OK_AND_ASSIGN(std::string ct, enc_->Encrypt(pt, info));
    ASSERT_EQ(ct.size(), size + kHpkeWireOverhead);
    EXPECT_EQ(static_cast<uint8_t>(ct[0]), 0x01);
    EXPECT_EQ(ct.substr(1, 6), std::string({static_cast<char>(ids.kem_id >> 8),
                                            static_cast<char>(ids.kem_id),
                                            static_cast<char>(ids.kdf_id >> 8),
                                            static_cast<char>(ids.kdf_id),
                                            static_cast<char>(ids.aead_id >> 8),
                                            static_cast<char>(ids.aead_id)}));
    EXPECT_EQ(ct.substr(0, 7), HpkeWireHeader(GetParam()));
    EXPECT_EQ(ct[7], 0x04);  // enc is an uncompressed point
    ASSERT_OK_AND_ASSIGN(std::string back, dec_->Decrypt(ct, info));
    EXPECT_TRUE(back == pt);
    // A fresh ephemeral key each time: two encryptions differ.
    ASSERT_OK_AND_ASSIGN(std::string ct2, enc_->Encrypt(pt, info));
    EXPECT_NE(ct.substr(7, 65), ct2.substr(7, 65));
  }
}

// EncryptMany: one ciphertext per message, each with its own ephemeral key (distinct enc),
// each opening with its own info only; the SM suite's batch path (IFMA lanes, comb table
// built once the key has had 8 uses) and its single-operation path alike.
TEST_P(HpkeContractTest, EncryptManyGivesOneIndependentCiphertextPerMessage) {
  std::mt19937_64 rng(TestSeed());
  for (bool lanes : {true, false}) {
    internal::Sm2SetBatchIfmaForTesting(lanes);
    // A new encrypter each time: the first batches run before the key's comb table exists.
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<HybridEncrypt> enc,
                         NewHpkeEncrypt(GetParam(), keys_.public_key_der));
    for (size_t count : {0, 1, 3, 4, 8, 9, 17, 64}) {
      SCOPED_TRACE(::testing::Message() << "lanes " << lanes << " count " << count);
      std::vector<std::string> pts, infos;
      for (size_t i = 0; i < count; ++i) {
        pts.push_back(RandomBytes(rng, (i * 37) % 300));
        infos.push_back(absl::StrCat("info ", i));
      }
      std::vector<HybridEncryptInput> in;
      for (size_t i = 0; i < count; ++i) in.push_back({pts[i], infos[i]});
      std::vector<absl::StatusOr<std::string>> out = enc->EncryptMany(in);
      ASSERT_EQ(out.size(), count);
      std::set<std::string> encs;
      for (size_t i = 0; i < count; ++i) {
        ASSERT_OK(out[i].status()) << "item " << i;
        ASSERT_EQ(out[i]->size(), kHpkeWireOverhead + pts[i].size());
        encs.insert(out[i]->substr(kHpkeWireHeaderSize, kHpkeEncSize));
        ASSERT_OK_AND_ASSIGN(std::string back, dec_->Decrypt(*out[i], infos[i]));
        EXPECT_EQ(back, pts[i]) << "item " << i;
        if (count > 1) {
          EXPECT_THAT(dec_->Decrypt(*out[i], infos[(i + 1) % count]),
                      StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
        }
      }
      EXPECT_EQ(encs.size(), count);
    }
    // Encrypt after the batches (the table now exists) still opens.
    ASSERT_OK_AND_ASSIGN(std::string ct, enc->Encrypt("after", "i"));
    ASSERT_OK_AND_ASSIGN(std::string back, dec_->Decrypt(ct, "i"));
    EXPECT_EQ(back, "after");
  }
  internal::Sm2SetBatchIfmaForTesting(true);
}

TEST_P(HpkeContractTest, RegistryFactoriesInteroperate) {
  ASSERT_OK_AND_ASSIGN(auto enc, NewHybridEncrypt(AlgorithmOf(GetParam()), keys_.public_key_der));
  ASSERT_OK_AND_ASSIGN(auto dec, NewHybridDecrypt(AlgorithmOf(GetParam()),
                                                  SecretDataAsStringView(keys_.private_key_der)));
  ASSERT_OK_AND_ASSIGN(std::string ct, enc->Encrypt("registry", "ctx"));
  ASSERT_OK_AND_ASSIGN(std::string pt, dec_->Decrypt(ct, "ctx"));
  EXPECT_EQ(pt, "registry");
  ASSERT_OK_AND_ASSIGN(std::string ct2, enc_->Encrypt("direct", "ctx"));
  ASSERT_OK_AND_ASSIGN(std::string pt2, dec->Decrypt(ct2, "ctx"));
  EXPECT_EQ(pt2, "direct");
  ASSERT_OK_AND_ASSIGN(std::string spki,
                       PublicKeyFromPrivate(AlgorithmOf(GetParam()),
                                            SecretDataAsStringView(keys_.private_key_der)));
  EXPECT_EQ(BytesToHex(spki), BytesToHex(keys_.public_key_der));
  EXPECT_THAT(NewHybridEncrypt(Algorithm::kSm4Gcm, keys_.public_key_der),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is not a hybrid encryption algorithm")));
  EXPECT_THAT(NewHybridDecrypt(Algorithm::kSm2, SecretDataAsStringView(keys_.private_key_der)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

std::string Compress(absl::string_view point) {
  std::string out(1, static_cast<char>(0x02 | (static_cast<uint8_t>(point[64]) & 1)));
  out.append(point.substr(1, 32).data(), 32);
  return out;
}

TEST_P(HpkeContractTest, EveryKeyEncodingWorks) {
  // PEM forms of the generated DER keys.
  const std::string pub_pem = PemEncode("PUBLIC KEY", keys_.public_key_der);
  const std::string priv_pem =
      PemEncode("PRIVATE KEY", SecretDataAsStringView(keys_.private_key_der));
  ASSERT_OK_AND_ASSIGN(auto enc_pem, NewHpkeEncrypt(GetParam(), pub_pem));
  ASSERT_OK_AND_ASSIGN(auto dec_pem, NewHpkeDecrypt(GetParam(), priv_pem));
  ASSERT_OK_AND_ASSIGN(std::string c1, enc_pem->Encrypt("pem", ""));
  ASSERT_OK_AND_ASSIGN(std::string p1, dec_->Decrypt(c1, ""));
  EXPECT_EQ(p1, "pem");
  ASSERT_OK_AND_ASSIGN(std::string c2, enc_->Encrypt("der", ""));
  ASSERT_OK_AND_ASSIGN(std::string p2, dec_pem->Decrypt(c2, ""));
  EXPECT_EQ(p2, "der");

  // Raw keys: the 32-byte scalar, the 65-byte and the 33-byte point.
  ASSERT_OK_AND_ASSIGN(HpkeKeyPair raw, HpkeGenerateKeyPair(GetParam()));
  ASSERT_EQ(raw.private_key.size(), kHpkePrivateKeySize);
  ASSERT_EQ(raw.public_key.size(), kHpkePublicKeySize);
  ASSERT_OK_AND_ASSIGN(auto dec_raw,
                       NewHpkeDecrypt(GetParam(), SecretDataAsStringView(raw.private_key)));
  for (const std::string& pk : {raw.public_key, Compress(raw.public_key)}) {
    SCOPED_TRACE(absl::StrCat("point of ", pk.size(), " bytes"));
    ASSERT_OK_AND_ASSIGN(auto enc_raw, NewHpkeEncrypt(GetParam(), pk));
    ASSERT_OK_AND_ASSIGN(std::string c, enc_raw->Encrypt("raw", "i"));
    ASSERT_OK_AND_ASSIGN(std::string p, dec_raw->Decrypt(c, "i"));
    EXPECT_EQ(p, "raw");
    // Keys of another pair do not open it.
    EXPECT_THAT(dec_->Decrypt(c, "i"),
                StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  }

  // Malformed keys: InvalidArgument.
  EXPECT_THAT(NewHpkeEncrypt(GetParam(), "not a key"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewHpkeEncrypt(GetParam(), "\x04" + std::string(64, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewHpkeDecrypt(GetParam(), std::string(32, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewHpkeDecrypt(GetParam(), std::string(31, '\x01')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewHpkeDecrypt(GetParam(), pub_pem), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(HpkeContractTest, WrongFamilyKeysAreFailedPrecondition) {
  const HpkeSuite other = GetParam() == HpkeSuite::kSm2Sm3Sm4Gcm
                              ? HpkeSuite::kP256Sha256Aes128Gcm
                              : HpkeSuite::kSm2Sm3Sm4Gcm;
  const std::string needs = GetParam() == HpkeSuite::kSm2Sm3Sm4Gcm ? "SM2" : "EC P-256";
  const std::string is = GetParam() == HpkeSuite::kSm2Sm3Sm4Gcm ? "EC P-256" : "SM2";
  ASSERT_OK_AND_ASSIGN(KeyPair other_keys, GenerateKeyPair(AlgorithmOf(other)));
  ASSERT_OK_AND_ASSIGN(KeyPair rsa, GenerateKeyPair(Algorithm::kRsa2048Oaep));
  const std::string want_other = absl::StrCat("key is ", is, ", algorithm needs ", needs);
  const std::string want_rsa = absl::StrCat("key is RSA-2048, algorithm needs ", needs);
  EXPECT_THAT(NewHpkeEncrypt(GetParam(), other_keys.public_key_der),
              StatusIs(absl::StatusCode::kFailedPrecondition, want_other));
  EXPECT_THAT(NewHpkeDecrypt(GetParam(), SecretDataAsStringView(other_keys.private_key_der)),
              StatusIs(absl::StatusCode::kFailedPrecondition, want_other));
  EXPECT_THAT(NewHpkeEncrypt(GetParam(), PemEncode("PUBLIC KEY", other_keys.public_key_der)),
              StatusIs(absl::StatusCode::kFailedPrecondition, want_other));
  EXPECT_THAT(NewHpkeEncrypt(GetParam(), rsa.public_key_der),
              StatusIs(absl::StatusCode::kFailedPrecondition, want_rsa));
  EXPECT_THAT(NewHpkeDecrypt(GetParam(), SecretDataAsStringView(rsa.private_key_der)),
              StatusIs(absl::StatusCode::kFailedPrecondition, want_rsa));
}

TEST_P(HpkeContractTest, EveryFlippedBitIsRejectedWithTheExactError) {
  const std::string pt = "attack at dawn!";
  ASSERT_OK_AND_ASSIGN(const std::string ct, enc_->Encrypt(pt, "info"));
  const HpkeSuiteIds ids = GetHpkeSuiteIds(GetParam());
  const uint16_t want[3] = {ids.kem_id, ids.kdf_id, ids.aead_id};
  const char* names[3] = {"kem_id", "kdf_id", "aead_id"};
  for (size_t bit = 0; bit < ct.size() * 8; ++bit) {
    std::string bad = ct;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    const size_t byte = bit / 8;
    std::string msg;
    if (byte == 0) {
      msg = absl::StrFormat("HPKE ciphertext: format version: expected 0x01, got 0x%02x",
                            static_cast<uint8_t>(bad[0]));
    } else if (byte < kHpkeWireHeaderSize) {
      const int field = static_cast<int>((byte - 1) / 2);
      const uint16_t got = static_cast<uint16_t>((static_cast<uint8_t>(bad[1 + 2 * field]) << 8) |
                                                 static_cast<uint8_t>(bad[2 + 2 * field]));
      msg = absl::StrFormat("HPKE ciphertext: %s: expected 0x%04x (%s), got 0x%04x",
                            names[field], want[field], HpkeSuiteName(GetParam()), got);
    } else {
      msg = "decryption failed";  // enc, ciphertext or tag
    }
    ASSERT_THAT(dec_->Decrypt(bad, "info"), StatusIs(absl::StatusCode::kInvalidArgument, msg))
        << "bit " << bit;
  }
  ASSERT_OK_AND_ASSIGN(std::string back, dec_->Decrypt(ct, "info"));
  EXPECT_EQ(back, pt);
  // Wrong or missing info, an appended byte.
  EXPECT_THAT(dec_->Decrypt(ct, "infO"),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_THAT(dec_->Decrypt(ct, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_THAT(dec_->Decrypt(ct + "x", "info"),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
}

TEST_P(HpkeContractTest, TruncationAtEveryLengthIsRejected) {
  ASSERT_OK_AND_ASSIGN(const std::string ct, enc_->Encrypt("sixteen byte msg", "i"));
  for (size_t len = 0; len < ct.size(); ++len) {
    const std::string msg =
        len < kHpkeWireOverhead
            ? absl::StrCat("HPKE ciphertext: expected at least 88 bytes, got ", len)
            : std::string("decryption failed");
    ASSERT_THAT(dec_->Decrypt(ct.substr(0, len), "i"),
                StatusIs(absl::StatusCode::kInvalidArgument, msg))
        << "length " << len;
  }
}

TEST_P(HpkeContractTest, OtherSuiteHeaderNamesExpectedAndActual) {
  const HpkeSuite other = GetParam() == HpkeSuite::kSm2Sm3Sm4Gcm
                              ? HpkeSuite::kP256Sha256Aes128Gcm
                              : HpkeSuite::kSm2Sm3Sm4Gcm;
  ASSERT_OK_AND_ASSIGN(const std::string ct, enc_->Encrypt("x", ""));
  const std::string swapped = HpkeWireHeader(other) + ct.substr(kHpkeWireHeaderSize);
  EXPECT_THAT(dec_->Decrypt(swapped, ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       absl::StrFormat("HPKE ciphertext: kem_id: expected 0x%04x (%s), got 0x%04x",
                                       GetHpkeSuiteIds(GetParam()).kem_id,
                                       HpkeSuiteName(GetParam()),
                                       GetHpkeSuiteIds(other).kem_id)));
}

// ---- HpkeContext -----------------------------------------------------------------------

TEST_P(HpkeContractTest, ContextSealOpenExportAndWrongAad) {
  ASSERT_OK_AND_ASSIGN(HpkeKeyPair r, HpkeGenerateKeyPair(GetParam()));
  ASSERT_OK_AND_ASSIGN(HpkeContext::Sender s, HpkeContext::SetupBaseS(GetParam(), r.public_key,
                                                                      "app info"));
  ASSERT_EQ(s.enc.size(), kHpkeEncSize);
  ASSERT_OK_AND_ASSIGN(auto rc, HpkeContext::SetupBaseR(GetParam(), s.enc,
                                                        SecretDataAsStringView(r.private_key),
                                                        "app info"));
  std::vector<std::string> cts;
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string c, s.context->Seal(absl::StrCat("aad", i),
                                                        absl::StrCat("chunk ", i)));
    cts.push_back(c);
  }
  EXPECT_EQ(s.context->sequence_number(), 4u);
  // Wrong aad: rejected and the sequence number stays.
  EXPECT_THAT(rc->Open("aad1", cts[0]),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_EQ(rc->sequence_number(), 0u);
  // Out of order (a reordered stream): rejected.
  EXPECT_THAT(rc->Open("aad1", cts[1]),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  for (int i = 0; i < 4; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string p, rc->Open(absl::StrCat("aad", i), cts[i]));
    EXPECT_EQ(p, absl::StrCat("chunk ", i));
  }
  // Replaying an earlier message fails (the sequence number has moved on).
  EXPECT_THAT(rc->Open("aad0", cts[0]),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  // Too short to hold a tag.
  EXPECT_THAT(rc->Open("", std::string(15, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  // Export agrees on both sides; limits.
  ASSERT_OK_AND_ASSIGN(SecretData es, s.context->Export("ctx", 8160));
  ASSERT_OK_AND_ASSIGN(SecretData er, rc->Export("ctx", 8160));
  EXPECT_EQ(BytesToHex(SecretDataAsStringView(es)), BytesToHex(SecretDataAsStringView(er)));
  EXPECT_THAT(s.context->Export("ctx", 0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s.context->Export("ctx", 8161),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "HPKE export: length must be 1 to 8160, got 8161"));
  // A different info gives a different context.
  ASSERT_OK_AND_ASSIGN(auto wrong_info,
                       HpkeContext::SetupBaseR(GetParam(), s.enc,
                                               SecretDataAsStringView(r.private_key), "other"));
  EXPECT_THAT(wrong_info->Open("aad0", cts[0]),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
}

TEST_P(HpkeContractTest, ContextSetupRejectsBadInputs) {
  ASSERT_OK_AND_ASSIGN(HpkeKeyPair r, HpkeGenerateKeyPair(GetParam()));
  const std::string sk(SecretDataAsStringView(r.private_key));
  EXPECT_THAT(HpkeContext::SetupBaseS(GetParam(), r.public_key.substr(0, 64), ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HpkeContext::SetupBaseS(GetParam(), Compress(r.public_key), ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  std::string off_curve = r.public_key;
  off_curve[64] ^= 1;
  EXPECT_THAT(HpkeContext::SetupBaseS(GetParam(), off_curve, ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HpkeContext::SetupBaseR(GetParam(), off_curve, sk, ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HpkeContext::SetupBaseR(GetParam(), r.public_key, sk.substr(1), ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HpkeContext::SetupBaseR(GetParam(), r.public_key, std::string(32, '\0'), ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(HpkeContractTest, SequenceNumberOverflowIsAnError) {
  ASSERT_OK_AND_ASSIGN(HpkeKeyPair r, HpkeGenerateKeyPair(GetParam()));
  ASSERT_OK_AND_ASSIGN(HpkeContext::Sender s, HpkeContext::SetupBaseS(GetParam(), r.public_key, ""));
  ASSERT_OK_AND_ASSIGN(auto rc, HpkeContext::SetupBaseR(GetParam(), s.enc,
                                                        SecretDataAsStringView(r.private_key), ""));
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  HpkeContextAccess::SetSequenceNumber(*s.context, max - 1);
  HpkeContextAccess::SetSequenceNumber(*rc, max - 1);
  ASSERT_OK_AND_ASSIGN(std::string last, s.context->Seal("", "last"));
  ASSERT_OK_AND_ASSIGN(std::string p, rc->Open("", last));
  EXPECT_EQ(p, "last");
  EXPECT_THAT(s.context->Seal("", "one more"),
              StatusIs(absl::StatusCode::kResourceExhausted, "HPKE sequence number overflow"));
  EXPECT_THAT(rc->Open("", last),
              StatusIs(absl::StatusCode::kResourceExhausted, "HPKE sequence number overflow"));
  EXPECT_EQ(s.context->sequence_number(), max);
}

// ---- DeriveKeyPair --------------------------------------------------------------------

const internal::HpkeKem& KemOf(HpkeSuite suite) {
  return *internal::GetHpkeSuiteDesc(suite).kem;
}

SecretData Bytes32(absl::string_view hex) {
  return SecretDataFromStringView(testing::HexToBytes(hex));
}

TEST(HpkeDeriveKeyPairTest, RejectionPathRetriesWithTheNextCounter) {
  // The order n of P-256 and SM2's n − 1 are the first rejected values; n − 1 (P-256) and
  // n − 2 (SM2) the largest accepted ones. Zero and all-ones are rejected by both.
  struct Case {
    HpkeSuite suite;
    const char* limit;     // first rejected value
    const char* largest;   // largest accepted value
  };
  const Case cases[] = {
      {HpkeSuite::kP256Sha256Aes128Gcm,
       "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
       "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632550"},
      {HpkeSuite::kSm2Sm3Sm4Gcm,
       "fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54122",
       "fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54121"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(HpkeSuiteName(c.suite));
    const internal::HpkeKem& kem = KemOf(c.suite);
    EXPECT_EQ(kem.bitmask, 0xff);
    const std::vector<SecretData> candidates = {
        SecretData(32, 0), SecretData(32, 0xff), Bytes32(c.limit), Bytes32(c.largest)};
    std::vector<int> counters;
    int attempts = 0;
    ASSERT_OK_AND_ASSIGN(
        HpkeKeyPair pair,
        internal::DeriveKeyPairFromCandidates(
            kem,
            [&](uint8_t counter) -> absl::StatusOr<SecretData> {
              counters.push_back(counter);
              return candidates.at(counter);
            },
            &attempts));
    EXPECT_EQ(attempts, 4);
    EXPECT_EQ(counters, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(BytesToHex(SecretDataAsStringView(pair.private_key)), c.largest);
    ASSERT_OK_AND_ASSIGN(std::string pk, kem.public_key(SecretDataAsStringView(pair.private_key)));
    EXPECT_EQ(pair.public_key, pk);

    // 256 rejections: DeriveKeyPairError.
    attempts = 0;
    EXPECT_THAT(internal::DeriveKeyPairFromCandidates(
                    kem, [&](uint8_t) -> absl::StatusOr<SecretData> { return Bytes32(c.limit); },
                    &attempts),
                StatusIs(absl::StatusCode::kInternal, HasSubstr("DeriveKeyPairError")));
    EXPECT_EQ(attempts, 256);
  }
}

TEST(HpkeDeriveKeyPairTest, ScalarRangeCheckAtTheBoundaries) {
  const internal::HpkeKem& sm2 = KemOf(HpkeSuite::kSm2Sm3Sm4Gcm);
  const internal::HpkeKem& p256 = KemOf(HpkeSuite::kP256Sha256Aes128Gcm);
  SecretData one(32, 0);
  one[31] = 1;
  EXPECT_TRUE(internal::HpkeScalarInRange(sm2, one.data()));
  EXPECT_TRUE(internal::HpkeScalarInRange(p256, one.data()));
  EXPECT_FALSE(internal::HpkeScalarInRange(sm2, SecretData(32, 0).data()));
  EXPECT_FALSE(internal::HpkeScalarInRange(p256, SecretData(32, 0).data()));
  // SM2: n − 2 accepted, n − 1 and n rejected (private keys lie in [1, n − 2]).
  EXPECT_TRUE(internal::HpkeScalarInRange(
      sm2, Bytes32("fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54121").data()));
  EXPECT_FALSE(internal::HpkeScalarInRange(
      sm2, Bytes32("fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54122").data()));
  EXPECT_FALSE(internal::HpkeScalarInRange(
      sm2, Bytes32("fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54123").data()));
  // A value that differs from the limit only in a high byte.
  EXPECT_FALSE(internal::HpkeScalarInRange(
      sm2, Bytes32("ffffffffffffffffffffffffffffffff00000000000000000000000000000000").data()));
  // P-256: n − 1 accepted, n rejected.
  EXPECT_TRUE(internal::HpkeScalarInRange(
      p256, Bytes32("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632550").data()));
  EXPECT_FALSE(internal::HpkeScalarInRange(
      p256, Bytes32("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551").data()));
  // The SM2 KEM itself refuses n − 1 as a key (what the range check protects).
  EXPECT_THAT(sm2.public_key(testing::HexToBytes(
                  "fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54122")),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(HpkeDeriveKeyPairTest, ShortIkmIsInvalidArgument) {
  EXPECT_THAT(HpkeDeriveKeyPair(HpkeSuite::kSm2Sm3Sm4Gcm, std::string(31, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(HpkeKeyPair a, HpkeDeriveKeyPair(HpkeSuite::kSm2Sm3Sm4Gcm,
                                                        std::string(32, 'a')));
  ASSERT_OK_AND_ASSIGN(HpkeKeyPair b, HpkeDeriveKeyPair(HpkeSuite::kSm2Sm3Sm4Gcm,
                                                        std::string(32, 'a')));
  EXPECT_EQ(a.public_key, b.public_key);  // deterministic
}

TEST(HpkeSuiteTest, IdsAndNames) {
  const HpkeSuiteIds p = GetHpkeSuiteIds(HpkeSuite::kP256Sha256Aes128Gcm);
  EXPECT_EQ(p.kem_id, 0x0010);
  EXPECT_EQ(p.kdf_id, 0x0001);
  EXPECT_EQ(p.aead_id, 0x0001);
  const HpkeSuiteIds s = GetHpkeSuiteIds(HpkeSuite::kSm2Sm3Sm4Gcm);
  EXPECT_EQ(s.kem_id, 0xFF10);
  EXPECT_EQ(s.kdf_id, 0xFF01);
  EXPECT_EQ(s.aead_id, 0xFF01);
  EXPECT_EQ(HpkeSuiteName(HpkeSuite::kP256Sha256Aes128Gcm), "HPKE-P256-SHA256-AES128GCM");
  EXPECT_EQ(HpkeSuiteName(HpkeSuite::kSm2Sm3Sm4Gcm), "HPKE-SM2-SM3-SM4GCM");
  EXPECT_EQ(BytesToHex(HpkeWireHeader(HpkeSuite::kSm2Sm3Sm4Gcm)), "01ff10ff01ff01");
  EXPECT_EQ(BytesToHex(HpkeWireHeader(HpkeSuite::kP256Sha256Aes128Gcm)), "01001000010001");
  EXPECT_EQ(BytesToHex(internal::HpkeSuiteId(internal::GetHpkeSuiteDesc(
                HpkeSuite::kSm2Sm3Sm4Gcm))),
            BytesToHex(std::string("HPKE\xff\x10\xff\x01\xff\x01", 10)));
}

}  // namespace
}  // namespace smcrypt
