// SM2 API contracts: the bad-input table with exact status codes (public points, private
// scalars, user IDs, digests, signatures, ciphertexts), tampering and truncation of
// ciphertexts, and round trips of empty and 1-byte messages in every format.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_testing.h"
#include "gtest/gtest.h"
#include "smcrypt/sm2.h"
#include "tests/crypto/sm2/sm2_openssl_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using Code = absl::StatusCode;

std::string Hex(absl::string_view h) { return HexToBytes(h); }

const std::string kP = HexToBytes(
    "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF");
const std::string kN = HexToBytes(
    "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123");
const std::string kNMinus1 = HexToBytes(
    "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54122");
const std::string kNMinus2 = HexToBytes(
    "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54121");
const std::string kOnes(32, '\xff');
const std::string kZero(32, '\0');
std::string One() { return std::string(31, '\0') + "\x01"; }

class Sm2ContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::cout << "SMCRYPT_TEST_SEED=" << TestSeed() << "\n";
    rng_.seed(TestSeed());
    auto key = Sm2PrivateKey::Generate();
    ASSERT_OK(key);
    key_.emplace(*std::move(key));
    point_ = key_->public_key().ToPoint();
  }
  std::mt19937_64 rng_;
  std::optional<Sm2PrivateKey> key_;
  std::string point_;
};

TEST_F(Sm2ContractTest, PublicKeyBadInputs) {
  const std::string x = point_.substr(1, 32), y = point_.substr(33, 32);
  std::string y_plus_1 = y;
  y_plus_1[31] = static_cast<char>(y_plus_1[31] + 1);  // y+1 (mod 256 in the last byte)
  struct Row {
    std::string name, in, message;
  };
  const std::vector<Row> rows = {
      {"empty", "", "expected 65 (uncompressed) or 33 (compressed) bytes, got 0"},
      {"infinity (single 00)", std::string(1, '\0'), "got 1"},
      {"32 bytes", x, "got 32"},
      {"64 bytes (no prefix)", x + y, "got 64"},
      {"66 bytes", point_ + std::string(1, '\0'), "got 66"},
      {"34 bytes", point_.substr(0, 34), "got 34"},
      {"all zero 65", std::string(65, '\0'), "bad prefix byte 0x00"},
      {"prefix 02 on 65", "\x02" + x + y, "bad prefix byte 0x02"},
      {"prefix 05 on 65", "\x05" + x + y, "bad prefix byte 0x05"},
      {"prefix 06 (hybrid) on 65", "\x06" + x + y, "bad prefix byte 0x06"},
      {"prefix 04 on 33", "\x04" + x, "bad prefix byte 0x04"},
      {"prefix 00 on 33", std::string(1, '\0') + x, "bad prefix byte 0x00"},
      {"04 and zero coordinates", "\x04" + kZero + kZero, "point not on the curve"},
      {"x = p", "\x04" + kP + y, "x coordinate not below p"},
      {"x = 2^256 - 1", "\x04" + kOnes + y, "x coordinate not below p"},
      {"y = p", "\x04" + x + kP, "y coordinate not below p"},
      {"y = 2^256 - 1", "\x04" + x + kOnes, "y coordinate not below p"},
      {"not on curve", "\x04" + x + y_plus_1, "point not on the curve"},
      {"compressed x = p", "\x02" + kP, "x coordinate not below p"},
      {"compressed x = 2^256 - 1", "\x03" + kOnes, "x coordinate not below p"},
  };
  for (const Row& row : rows) {
    EXPECT_THAT(Sm2PublicKey::FromPoint(row.in),
                StatusIs(Code::kInvalidArgument, HasSubstr(row.message)))
        << row.name;
  }
  // A compressed x with no square root (found with OpenSSL, which must refuse it too).
  GroupPtr group = Sm2Group();
  PointPtr pt(EC_POINT_new(group.get()));
  BnCtxPtr ctx(BN_CTX_new());
  int found = 0;
  for (uint64_t xv = 0; xv < 64 && found < 8; ++xv) {
    uint64_t limbs[4] = {xv, 0, 0, 0};
    BnPtr xb = BnFromLimbs(limbs);
    ERR_set_mark();
    const bool has_root =
        EC_POINT_set_compressed_coordinates(group.get(), pt.get(), xb.get(), 0, ctx.get()) == 1;
    ERR_pop_to_mark();
    const std::string enc = "\x02" + BnTo32(xb.get());
    if (has_root) {
      EXPECT_OK(Sm2PublicKey::FromPoint(enc)) << "x = " << xv;
    } else {
      ++found;
      EXPECT_THAT(Sm2PublicKey::FromPoint(enc),
                  StatusIs(Code::kInvalidArgument, HasSubstr("no square root")))
          << "x = " << xv;
    }
  }
  EXPECT_GT(found, 0);
}

TEST_F(Sm2ContractTest, PublicKeyEncodingsRoundTrip) {
  for (int i = 0; i < 50; ++i) {
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey k, Sm2PrivateKey::Generate());
    const std::string u = k.public_key().ToPoint(), c = k.public_key().ToPoint(true);
    ASSERT_EQ(u.size(), 65u);
    ASSERT_EQ(c.size(), 33u);
    EXPECT_EQ(c[0], (u[64] & 1) ? '\x03' : '\x02');
    ASSERT_OK_AND_ASSIGN(Sm2PublicKey from_u, Sm2PublicKey::FromPoint(u));
    ASSERT_OK_AND_ASSIGN(Sm2PublicKey from_c, Sm2PublicKey::FromPoint(c));
    EXPECT_TRUE(from_u == k.public_key());
    EXPECT_TRUE(from_c == k.public_key());
    EXPECT_EQ(from_c.ToPoint(), u);
    // The other parity is the negated point, a different key.
    std::string other = c;
    other[0] ^= 1;
    ASSERT_OK_AND_ASSIGN(Sm2PublicKey neg, Sm2PublicKey::FromPoint(other));
    EXPECT_FALSE(neg == k.public_key());
    EXPECT_EQ(neg.ToPoint().substr(1, 32), u.substr(1, 32));
    SecretData d = k.ToScalar();
    ASSERT_OK_AND_ASSIGN(Sm2PrivateKey again, Sm2PrivateKey::FromScalar(
                                                  std::string(d.begin(), d.end())));
    EXPECT_TRUE(again.public_key() == k.public_key());
  }
}

TEST_F(Sm2ContractTest, PrivateKeyBadInputs) {
  const std::string range = "SM2 private key out of range [1, n-2]";
  for (const std::string& d : {kZero, kNMinus1, kN, kOnes}) {
    EXPECT_THAT(Sm2PrivateKey::FromScalar(d), StatusIs(Code::kInvalidArgument, range))
        << BytesToHex(d);
  }
  for (size_t len : {0u, 1u, 31u, 33u, 64u}) {
    EXPECT_THAT(Sm2PrivateKey::FromScalar(std::string(len, '\x01')),
                StatusIs(Code::kInvalidArgument, HasSubstr("expected 32 bytes")))
        << len;
  }
  // The ends of the range are accepted and give 1·G and (n−2)·G = −2G.
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey one, Sm2PrivateKey::FromScalar(One()));
  std::string g = "\x04";
  uint8_t buf[32];
  internal::LimbsToBytes(buf, internal::kSm2Gx);
  g.append(reinterpret_cast<char*>(buf), 32);
  internal::LimbsToBytes(buf, internal::kSm2Gy);
  g.append(reinterpret_cast<char*>(buf), 32);
  EXPECT_EQ(BytesToHex(one.public_key().ToPoint()), BytesToHex(g));
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey top, Sm2PrivateKey::FromScalar(kNMinus2));
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey two, Sm2PrivateKey::FromScalar(std::string(31, '\0') + "\x02"));
  EXPECT_EQ(top.public_key().ToPoint().substr(0, 33), two.public_key().ToPoint().substr(0, 33));
  EXPECT_NE(top.public_key().ToPoint(), two.public_key().ToPoint());
  // Keys at the ends of the range sign and decrypt.
  for (const Sm2PrivateKey* k : {&one, &top}) {
    const std::string e(32, '\x5a');
    ASSERT_OK_AND_ASSIGN(std::string sig, Sm2SignDigest(*k, e));
    EXPECT_OK(Sm2VerifyDigest(k->public_key(), e, sig));
    ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(k->public_key(), "abc"));
    ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(*k, ct));
    EXPECT_EQ(pt, "abc");
  }
}

TEST_F(Sm2ContractTest, UserIdAndDigestSizes) {
  const Sm2PublicKey& pub = key_->public_key();
  EXPECT_OK(Sm2ComputeZ(pub, std::string(kSm2MaxUserIdSize, 'a')));
  EXPECT_OK(Sm2ComputeZ(pub, ""));
  EXPECT_THAT(Sm2ComputeZ(pub, std::string(8192, 'a')),
              StatusIs(Code::kInvalidArgument, HasSubstr("at most 8191 bytes, got 8192")));
  EXPECT_THAT(Sm2ComputeE(pub, std::string(8192, 'a'), "m"), StatusIs(Code::kInvalidArgument));
  // Different IDs give different Z (ENTL and ID are both hashed).
  ASSERT_OK_AND_ASSIGN(auto z1, Sm2ComputeZ(pub, ""));
  ASSERT_OK_AND_ASSIGN(auto z2, Sm2ComputeZ(pub, std::string(1, '\0')));
  EXPECT_NE(z1, z2);

  const std::string sig(64, '\x01');
  for (size_t len : {0u, 31u, 33u, 64u}) {
    const std::string e(len, '\x01');
    EXPECT_THAT(Sm2SignDigest(*key_, e),
                StatusIs(Code::kInvalidArgument, HasSubstr("expected 32 bytes")))
        << len;
    EXPECT_THAT(Sm2VerifyDigest(pub, e, sig), StatusIs(Code::kInvalidArgument)) << len;
  }
  const std::string e(32, '\x01');
  for (size_t len : {0u, 63u, 65u, 70u}) {
    EXPECT_THAT(Sm2VerifyDigest(pub, e, std::string(len, '\x01')),
                StatusIs(Code::kInvalidArgument, HasSubstr("expected 64 bytes")))
        << len;
  }
}

TEST_F(Sm2ContractTest, SignatureOutOfRangeIsUnauthenticated) {
  const std::string e(32, '\x33');
  ASSERT_OK_AND_ASSIGN(std::string sig, Sm2SignDigest(*key_, e));
  EXPECT_OK(Sm2VerifyDigest(key_->public_key(), e, sig));
  const std::string r = sig.substr(0, 32), s = sig.substr(32);
  // t = (r + s) mod n = 0: s = n − r.
  BnPtr nb(BN_bin2bn(reinterpret_cast<const uint8_t*>(kN.data()), 32, nullptr));
  BnPtr rb(BN_bin2bn(reinterpret_cast<const uint8_t*>(r.data()), 32, nullptr));
  BN_sub(nb.get(), nb.get(), rb.get());
  const std::string s_t0 = BnTo32(nb.get());
  struct Row {
    std::string name, sig;
  };
  const std::vector<Row> rows = {
      {"r = 0", kZero + s},       {"s = 0", r + kZero},        {"r = n", kN + s},
      {"s = n", r + kN},          {"r = 2^256 - 1", kOnes + s}, {"s = 2^256 - 1", r + kOnes},
      {"r = s = 0", kZero + kZero}, {"t = 0", r + s_t0},         {"swapped", s + r},
      {"r + 1", r.substr(0, 31) + static_cast<char>(r[31] ^ 1) + s},
  };
  for (const Row& row : rows) {
    EXPECT_THAT(Sm2VerifyDigest(key_->public_key(), e, row.sig),
                StatusIs(Code::kUnauthenticated, "signature invalid"))
        << row.name;
  }
  // Another key, another digest.
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey other, Sm2PrivateKey::Generate());
  EXPECT_THAT(Sm2VerifyDigest(other.public_key(), e, sig),
              StatusIs(Code::kUnauthenticated, "signature invalid"));
  EXPECT_THAT(Sm2VerifyDigest(key_->public_key(), std::string(32, '\x34'), sig),
              StatusIs(Code::kUnauthenticated, "signature invalid"));
  // Signing is randomized: two signatures differ and both verify.
  ASSERT_OK_AND_ASSIGN(std::string sig2, Sm2SignDigest(*key_, e));
  EXPECT_NE(sig, sig2);
  EXPECT_OK(Sm2VerifyDigest(key_->public_key(), e, sig2));
}

TEST_F(Sm2ContractTest, CiphertextBadInputs) {
  ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key_->public_key(), "hello"));
  ASSERT_EQ(ct.size(), 65u + 32u + 5u);
  const std::string c1 = ct.substr(0, 65);
  std::string not_on_curve = c1;
  not_on_curve[64] ^= 1;
  struct Row {
    std::string name, in, message;
  };
  const std::vector<Row> rows = {
      {"empty", "", "empty"},
      {"96 bytes", ct.substr(0, 96), "expected at least 97 bytes, got 96"},
      {"65 bytes", c1, "expected at least 97 bytes, got 65"},
      {"1 byte", "\x04", "expected at least 97 bytes, got 1"},
      {"compressed C1, 64 bytes", "\x02" + std::string(63, 'a'), "expected at least 65"},
      {"bad C1 prefix", "\x05" + ct.substr(1), "bad C1 prefix byte 0x05"},
      {"zero prefix", std::string(1, '\0') + ct.substr(1), "bad C1 prefix byte 0x00"},
      {"C1 not on curve", not_on_curve + ct.substr(65),
       "SM2 ciphertext: C1: point not on the curve"},
      {"C1 zero coordinates", "\x04" + std::string(64, '\0') + ct.substr(65),
       "SM2 ciphertext: C1: point not on the curve"},
      {"C1 x = p", "\x04" + kP + ct.substr(33), "SM2 ciphertext: C1: x coordinate not below p"},
  };
  for (const Row& row : rows) {
    // A malformed C1 is named as C1, never as a public key.
    EXPECT_THAT(Sm2Decrypt(*key_, row.in),
                StatusIs(Code::kInvalidArgument,
                         AllOf(HasSubstr(row.message), Not(HasSubstr("public key")))))
        << row.name;
  }
  // Tampering with C3, C2 or (validly) C1 is the one generic error.
  const std::string failed = "decryption failed";
  std::string t = ct;
  t[65] ^= 0x01;
  EXPECT_THAT(Sm2Decrypt(*key_, t), StatusIs(Code::kInvalidArgument, failed)) << "C3";
  t = ct;
  t[65 + 32 + 4] ^= 0x80;
  EXPECT_THAT(Sm2Decrypt(*key_, t), StatusIs(Code::kInvalidArgument, failed)) << "C2";
  t = ct;
  t.replace(0, 65, key_->public_key().ToPoint());  // another valid point
  EXPECT_THAT(Sm2Decrypt(*key_, t), StatusIs(Code::kInvalidArgument, failed)) << "C1";
  t = ct + "x";
  EXPECT_THAT(Sm2Decrypt(*key_, t), StatusIs(Code::kInvalidArgument, failed)) << "appended";
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey other, Sm2PrivateKey::Generate());
  EXPECT_THAT(Sm2Decrypt(other, ct), StatusIs(Code::kInvalidArgument, failed)) << "wrong key";
  EXPECT_THAT(Sm2Decrypt(*key_, ct, Sm2CiphertextFormat::kC1C2C3),
              StatusIs(Code::kInvalidArgument, failed))
      << "wrong order";
  EXPECT_THAT(Sm2Decrypt(*key_, ct, Sm2CiphertextFormat::kDer),
              StatusIs(Code::kInvalidArgument))
      << "raw as DER";
}

TEST_F(Sm2ContractTest, EveryBitFlipAndTruncationFails) {
  for (const std::string& msg : {std::string(), std::string("x")}) {
    ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key_->public_key(), msg));
    for (size_t i = 0; i < ct.size() * 8; ++i) {
      std::string t = ct;
      t[i / 8] ^= static_cast<char>(1u << (i % 8));
      EXPECT_THAT(Sm2Decrypt(*key_, t), StatusIs(Code::kInvalidArgument)) << "bit " << i;
    }
    for (size_t len = 0; len < ct.size(); ++len) {
      EXPECT_THAT(Sm2Decrypt(*key_, ct.substr(0, len)), StatusIs(Code::kInvalidArgument))
          << "length " << len;
    }
  }
}

TEST_F(Sm2ContractTest, ShortMessagesRoundTripInEveryFormat) {
  for (const std::string& msg : {std::string(), std::string("\x00", 1), std::string("A"),
                                 RandomBytes(rng_, 31), RandomBytes(rng_, 32),
                                 RandomBytes(rng_, 33), RandomBytes(rng_, 1000)}) {
    for (auto fmt : {Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kC1C2C3,
                     Sm2CiphertextFormat::kDer}) {
      for (bool compress : {false, true}) {
        ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(key_->public_key(), msg, fmt, compress));
        if (fmt != Sm2CiphertextFormat::kDer) {
          EXPECT_EQ(ct.size(), (compress ? 33u : 65u) + 32u + msg.size());
        }
        ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(*key_, ct, fmt));
        EXPECT_EQ(BytesToHex(pt), BytesToHex(msg))
            << "size " << msg.size() << " format " << static_cast<int>(fmt);
      }
    }
  }
}

// An empty message (which OpenSSL 3.0 refuses) checked independently: with the standard's
// key and k, C1 = k·G and C3 = SM3(x2 ‖ y2) for (x2, y2) = k·P_B, computed with OpenSSL's
// EC_POINT_mul and EVP SM3.
TEST_F(Sm2ContractTest, EmptyMessageCiphertextIsC1AndHashOfSharedPoint) {
  const std::string d =
      Hex("3945208F7B2144B13F36E38AC6D39F95889393692860B51A42FB81EF4DF7C5B8");
  const std::string k =
      Hex("59276E27D506861A16680F3AD9C02DCCEF3CC1FA3CDBE4CE6D54B80DEAC1BC21");
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(d));
  ASSERT_OK_AND_ASSIGN(std::string ct, Sm2EncryptWithKForTesting(key.public_key(), "", k));
  ASSERT_EQ(ct.size(), 97u);

  GroupPtr group = Sm2Group();
  BnCtxPtr ctx(BN_CTX_new());
  BnPtr kb(BN_bin2bn(reinterpret_cast<const uint8_t*>(k.data()), 32, nullptr));
  BnPtr db(BN_bin2bn(reinterpret_cast<const uint8_t*>(d.data()), 32, nullptr));
  PointPtr c1(EC_POINT_new(group.get())), pb(EC_POINT_new(group.get())),
      shared(EC_POINT_new(group.get()));
  EC_POINT_mul(group.get(), c1.get(), kb.get(), nullptr, nullptr, ctx.get());
  EC_POINT_mul(group.get(), pb.get(), db.get(), nullptr, nullptr, ctx.get());
  EC_POINT_mul(group.get(), shared.get(), nullptr, pb.get(), kb.get(), ctx.get());
  uint8_t c1_bytes[65];
  ASSERT_EQ(EC_POINT_point2oct(group.get(), c1.get(), POINT_CONVERSION_UNCOMPRESSED, c1_bytes,
                               65, ctx.get()),
            65u);
  uint8_t s_bytes[65];
  ASSERT_EQ(EC_POINT_point2oct(group.get(), shared.get(), POINT_CONVERSION_UNCOMPRESSED,
                               s_bytes, 65, ctx.get()),
            65u);
  uint8_t c3[32];
  unsigned c3_len = 0;
  ASSERT_EQ(EVP_Digest(s_bytes + 1, 64, c3, &c3_len, EVP_sm3(), nullptr), 1);
  EXPECT_EQ(BytesToHex(ct), BytesToHex(std::string(reinterpret_cast<char*>(c1_bytes), 65) +
                                       std::string(reinterpret_cast<char*>(c3), 32)));
  ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(key, ct));
  EXPECT_EQ(pt, "");
}

// GB/T 32918.4 §6.1 A5 / §7.1 B4: a 1-byte message whose KDF output t is the zero byte
// (about 1 k in 256). Small k = 1, 2, … are tried against OpenSSL's EC_POINT_mul and
// EVP SM3 until t = 00: encryption with that k must refuse (the core would draw a new
// k), and the ciphertext built from it by hand (C2 = M ⊕ 00 = M) must fail to decrypt
// even though C3 is right. A k with t ≠ 00 encrypts to the hand-built ciphertext.
TEST_F(Sm2ContractTest, AllZeroKdfOutputRejectsKAndCiphertext) {
  const std::string d =
      Hex("3945208F7B2144B13F36E38AC6D39F95889393692860B51A42FB81EF4DF7C5B8");
  ASSERT_OK_AND_ASSIGN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(d));
  GroupPtr group = Sm2Group();
  BnCtxPtr ctx(BN_CTX_new());
  BnPtr db(BN_bin2bn(reinterpret_cast<const uint8_t*>(d.data()), 32, nullptr));
  PointPtr pb(EC_POINT_new(group.get()));
  ASSERT_EQ(EC_POINT_mul(group.get(), pb.get(), db.get(), nullptr, nullptr, ctx.get()), 1);
  const std::string m = "\x5a";
  int zero_found = 0, nonzero_checked = 0;
  for (uint32_t kv = 1; kv < 4096 && (zero_found == 0 || nonzero_checked == 0); ++kv) {
    std::string k(32, '\0');
    k[28] = static_cast<char>(kv >> 24);
    k[29] = static_cast<char>(kv >> 16);
    k[30] = static_cast<char>(kv >> 8);
    k[31] = static_cast<char>(kv);
    BnPtr kb(BN_bin2bn(reinterpret_cast<const uint8_t*>(k.data()), 32, nullptr));
    PointPtr c1(EC_POINT_new(group.get())), shared(EC_POINT_new(group.get()));
    ASSERT_EQ(EC_POINT_mul(group.get(), c1.get(), kb.get(), nullptr, nullptr, ctx.get()), 1);
    ASSERT_EQ(EC_POINT_mul(group.get(), shared.get(), nullptr, pb.get(), kb.get(), ctx.get()), 1);
    uint8_t c1_bytes[65], s_bytes[65];
    ASSERT_EQ(EC_POINT_point2oct(group.get(), c1.get(), POINT_CONVERSION_UNCOMPRESSED, c1_bytes,
                                 65, ctx.get()),
              65u);
    ASSERT_EQ(EC_POINT_point2oct(group.get(), shared.get(), POINT_CONVERSION_UNCOMPRESSED,
                                 s_bytes, 65, ctx.get()),
              65u);
    // t = SM3(x2 ‖ y2 ‖ 00000001), first byte.
    uint8_t z[68], t[32], c3[32];
    std::memcpy(z, s_bytes + 1, 64);
    z[64] = z[65] = z[66] = 0;
    z[67] = 1;
    unsigned len = 0;
    ASSERT_EQ(EVP_Digest(z, sizeof(z), t, &len, EVP_sm3(), nullptr), 1);
    // C3 = SM3(x2 ‖ M' ‖ y2) with M' = C2 ⊕ t.
    const uint8_t c2 = static_cast<uint8_t>(m[0]) ^ t[0];
    uint8_t h_in[65];
    std::memcpy(h_in, s_bytes + 1, 32);
    h_in[32] = static_cast<uint8_t>(m[0]);
    std::memcpy(h_in + 33, s_bytes + 33, 32);
    ASSERT_EQ(EVP_Digest(h_in, sizeof(h_in), c3, &len, EVP_sm3(), nullptr), 1);
    const std::string ct = std::string(reinterpret_cast<char*>(c1_bytes), 65) +
                           std::string(reinterpret_cast<char*>(c3), 32) +
                           std::string(1, static_cast<char>(c2));
    auto got = Sm2EncryptWithKForTesting(key.public_key(), m, k);
    if (t[0] == 0) {
      SCOPED_TRACE(::testing::Message() << "k = " << kv);
      EXPECT_THAT(got.status(), StatusIs(Code::kInvalidArgument));
      EXPECT_THAT(Sm2Decrypt(key, ct).status(),
                  StatusIs(Code::kInvalidArgument, HasSubstr("decryption failed")));
      ++zero_found;
    } else if (nonzero_checked == 0) {
      ASSERT_OK(got);
      EXPECT_EQ(BytesToHex(*got), BytesToHex(ct));
      ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(key, ct));
      EXPECT_EQ(pt, m);
      ++nonzero_checked;
    }
  }
  EXPECT_EQ(zero_found, 1);
  EXPECT_EQ(nonzero_checked, 1);
}

}  // namespace
}  // namespace smcrypt::testing
