// sm4_modes_test.cc — SM4-ECB, SM4-CBC and SM4-CTR: differential tests against OpenSSL 3
// (EVP_sm4_ecb/cbc/ctr) on random keys, IVs and lengths in both directions, CTR counter
// carries across the 32-, 64- and 128-bit boundaries, PKCS#7 handling, and a bad-input
// table with the exact status code and message.
#include <openssl/evp.h>

#include <cstdio>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/sm4.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::TestSeed;
using ::testing::Eq;
using ::testing::HasSubstr;

enum class Mode { kEcb, kCbc, kCtr };

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kEcb: return "SM4-ECB";
    case Mode::kCbc: return "SM4-CBC";
    case Mode::kCtr: return "SM4-CTR";
  }
  return "?";
}

absl::StatusOr<std::unique_ptr<Cipher>> NewCipher(Mode m, absl::string_view key, Padding p) {
  switch (m) {
    case Mode::kEcb: return NewSm4Ecb(key, p);
    case Mode::kCbc: return NewSm4Cbc(key, p);
    case Mode::kCtr: return NewSm4Ctr(key);
  }
  return absl::InternalError("unreachable");
}

// OpenSslCrypt runs OpenSSL's SM4 in `m`; returns false if OpenSSL rejects the input.
bool OpenSslCrypt(Mode m, const std::string& key, const std::string& iv, bool pad,
                  const std::string& in, bool encrypt, std::string* out) {
  const EVP_CIPHER* c = m == Mode::kEcb ? EVP_sm4_ecb() : m == Mode::kCbc ? EVP_sm4_cbc()
                                                                          : EVP_sm4_ctr();
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  out->assign(in.size() + 32, '\0');
  int len1 = 0, len2 = 0;
  bool ok = EVP_CipherInit_ex(ctx, c, nullptr, reinterpret_cast<const uint8_t*>(key.data()),
                              iv.empty() ? nullptr : reinterpret_cast<const uint8_t*>(iv.data()),
                              encrypt ? 1 : 0) == 1;
  EVP_CIPHER_CTX_set_padding(ctx, pad ? 1 : 0);
  ok = ok && EVP_CipherUpdate(ctx, reinterpret_cast<uint8_t*>(out->data()), &len1,
                              reinterpret_cast<const uint8_t*>(in.data()),
                              static_cast<int>(in.size())) == 1;
  ok = ok && EVP_CipherFinal_ex(ctx, reinterpret_cast<uint8_t*>(out->data()) + len1, &len2) == 1;
  EVP_CIPHER_CTX_free(ctx);
  out->resize(ok ? len1 + len2 : 0);
  return ok;
}

// --- Differential tests against OpenSSL -------------------------------------------

struct DiffParam {
  Mode mode;
  Padding padding;
  const char* name;
};

class Sm4ModeDifferentialTest : public ::testing::TestWithParam<DiffParam> {};

TEST_P(Sm4ModeDifferentialTest, MatchesOpenSslBothDirections) {
  const DiffParam& p = GetParam();
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed ^ (static_cast<uint64_t>(p.mode) << 8) ^
                      static_cast<uint64_t>(p.padding));
  const bool pad = p.padding == Padding::kPkcs7 && p.mode != Mode::kCtr;
  for (int i = 0; i < 1000; ++i) {
    const std::string key = RandomBytes(rng, 16);
    const std::string iv = p.mode == Mode::kEcb ? "" : RandomBytes(rng, 16);
    size_t len = i < 100 ? static_cast<size_t>(i) : rng() % 4097;
    if (!pad && p.mode != Mode::kCtr) len -= len % 16;
    const std::string pt = RandomBytes(rng, len);
    ASSERT_OK_AND_ASSIGN(auto cipher, NewCipher(p.mode, key, p.padding));
    ASSERT_EQ(cipher->iv_size(), iv.size());
    std::string want_ct;
    ASSERT_TRUE(OpenSslCrypt(p.mode, key, iv, pad, pt, true, &want_ct));
    ASSERT_OK_AND_ASSIGN(std::string ct, cipher->Encrypt(iv, pt));
    ASSERT_EQ(BytesToHex(ct), BytesToHex(want_ct)) << "case " << i << " len " << len;
    // Decrypt OpenSSL's ciphertext with smcrypt and smcrypt's with OpenSSL.
    ASSERT_OK_AND_ASSIGN(std::string back, cipher->Decrypt(iv, want_ct));
    ASSERT_EQ(BytesToHex(back), BytesToHex(pt)) << "case " << i << " len " << len;
    std::string openssl_back;
    ASSERT_TRUE(OpenSslCrypt(p.mode, key, iv, pad, ct, false, &openssl_back));
    ASSERT_EQ(BytesToHex(openssl_back), BytesToHex(pt)) << "case " << i << " len " << len;
    // Random "ciphertexts" decrypt identically too (without padding every input is valid).
    if (!pad) {
      const std::string junk = RandomBytes(rng, len);
      std::string want;
      ASSERT_TRUE(OpenSslCrypt(p.mode, key, iv, false, junk, false, &want));
      ASSERT_OK_AND_ASSIGN(std::string got, cipher->Decrypt(iv, junk));
      ASSERT_EQ(BytesToHex(got), BytesToHex(want)) << "case " << i << " len " << len;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, Sm4ModeDifferentialTest,
    ::testing::Values(DiffParam{Mode::kEcb, Padding::kPkcs7, "EcbPkcs7"},
                      DiffParam{Mode::kEcb, Padding::kNone, "EcbNoPadding"},
                      DiffParam{Mode::kCbc, Padding::kPkcs7, "CbcPkcs7"},
                      DiffParam{Mode::kCbc, Padding::kNone, "CbcNoPadding"},
                      DiffParam{Mode::kCtr, Padding::kNone, "Ctr"}),
    [](const ::testing::TestParamInfo<DiffParam>& info) { return info.param.name; });

// --- CTR counter carries --------------------------------------------------------------

TEST(Sm4CtrTest, CounterCarriesAcrossEveryBoundaryLikeOpenSsl) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed + 7);
  const std::string key = RandomBytes(rng, 16);
  ASSERT_OK_AND_ASSIGN(auto ctr, NewSm4Ctr(key));
  const std::vector<std::string> ivs = {
      "0123456789abcdef00000000fffffffe",  // 32-bit boundary
      "0123456789abcdef00000000ffffffff",
      "0123456789abcdeffffffffffffffffd",  // 64-bit boundary
      "0123456789abcdefffffffffffffffff",
      "01234567ffffffffffffffffffffffff",  // carry through 12 bytes
      "fffffffffffffffffffffffffffffffe",  // 128-bit wrap
      "ffffffffffffffffffffffffffffffff",
      "000000000000000000000000000000ff",  // byte carry
      "ffffffffffffffff0000000000000000",
  };
  for (const std::string& iv_hex : ivs) {
    const std::string iv = HexToBytes(iv_hex);
    for (size_t len : {16, 17, 31, 48, 50, 80, 16 * 64 + 5, 16 * 130}) {
      const std::string pt = RandomBytes(rng, len);
      std::string want;
      ASSERT_TRUE(OpenSslCrypt(Mode::kCtr, key, iv, false, pt, true, &want));
      ASSERT_OK_AND_ASSIGN(std::string ct, ctr->Encrypt(iv, pt));
      EXPECT_EQ(BytesToHex(ct), BytesToHex(want)) << "iv " << iv_hex << " len " << len;
    }
  }
}

TEST(Sm4CtrTest, WrapModulo2To128RestartsAtZero) {
  // The keystream block after ff…ff is the one for 00…00.
  ASSERT_OK_AND_ASSIGN(auto ctr, NewSm4Ctr(std::string(16, '\x42')));
  const std::string zeros(32, '\0');
  ASSERT_OK_AND_ASSIGN(std::string wrapped, ctr->Encrypt(std::string(16, '\xff'), zeros));
  ASSERT_OK_AND_ASSIGN(std::string at_zero, ctr->Encrypt(std::string(16, '\0'), zeros));
  EXPECT_EQ(BytesToHex(wrapped.substr(16)), BytesToHex(at_zero.substr(0, 16)));
}

TEST(Sm4CtrTest, EmptyInputGivesEmptyOutput) {
  ASSERT_OK_AND_ASSIGN(auto ctr, NewSm4Ctr(std::string(16, 'k')));
  ASSERT_OK_AND_ASSIGN(std::string ct, ctr->Encrypt(std::string(16, 'i'), ""));
  EXPECT_EQ(ct, "");
}

// --- Known answers through the modes (GB/T 32907-2016 Appendix A, example 1) ---------

TEST(Sm4ModesKatTest, EcbWithoutPaddingIsTheStandardExample) {
  const std::string key = HexToBytes("0123456789abcdeffedcba9876543210");
  ASSERT_OK_AND_ASSIGN(auto ecb, NewSm4Ecb(key, Padding::kNone));
  ASSERT_OK_AND_ASSIGN(std::string ct, ecb->Encrypt("", key + key));
  EXPECT_EQ(BytesToHex(ct), "681edf34d206965e86b3e94f536e4246681edf34d206965e86b3e94f536e4246");
}

TEST(Sm4ModesKatTest, CbcWithZeroIvFirstBlockIsTheStandardExample) {
  const std::string key = HexToBytes("0123456789abcdeffedcba9876543210");
  ASSERT_OK_AND_ASSIGN(auto cbc, NewSm4Cbc(key, Padding::kNone));
  ASSERT_OK_AND_ASSIGN(std::string ct, cbc->Encrypt(std::string(16, '\0'), key));
  EXPECT_EQ(BytesToHex(ct), "681edf34d206965e86b3e94f536e4246");
}

// --- PKCS#7 ---------------------------------------------------------------------------

TEST(Sm4PaddingTest, EveryPaddingLengthRoundTripsAndAddsAFullBlockWhenAligned) {
  const std::string key(16, 'k');
  for (Mode m : {Mode::kEcb, Mode::kCbc}) {
    ASSERT_OK_AND_ASSIGN(auto cipher, NewCipher(m, key, Padding::kPkcs7));
    const std::string iv = m == Mode::kEcb ? "" : std::string(16, 'i');
    for (size_t len = 0; len <= 48; ++len) {
      const std::string pt(len, 'p');
      ASSERT_OK_AND_ASSIGN(std::string ct, cipher->Encrypt(iv, pt));
      EXPECT_EQ(ct.size(), (len / 16 + 1) * 16) << ModeName(m) << " len " << len;
      ASSERT_OK_AND_ASSIGN(std::string back, cipher->Decrypt(iv, ct));
      EXPECT_EQ(back, pt);
    }
  }
}

// --- Bad inputs -----------------------------------------------------------------------

enum class Op { kNew, kEncrypt, kDecrypt };

struct BadCase {
  std::string name;
  Mode mode;
  Padding padding;
  Op op;
  std::string key;
  std::string iv;
  std::string input;
  absl::StatusCode code;
  std::string message_substring;
  bool exact_message;  // the message must equal message_substring
};

// CiphertextWithLastBlock encrypts (without padding) 16 bytes of filler followed by
// `last_block`, so decrypting with PKCS#7 sees exactly `last_block` as the padding block.
std::string CiphertextWithLastBlock(Mode m, const std::string& key, const std::string& iv,
                                    const std::string& last_block) {
  auto cipher = NewCipher(m, key, Padding::kNone);
  EXPECT_TRUE(cipher.ok());
  auto ct = (*cipher)->Encrypt(iv, std::string(16, 'f') + last_block);
  EXPECT_TRUE(ct.ok());
  return *ct;
}

std::vector<BadCase> BadCases() {
  using absl::StatusCode;
  const std::string key(16, 'k');
  const std::string iv16(16, 'i');
  std::vector<BadCase> cases;
  for (Mode m : {Mode::kEcb, Mode::kCbc, Mode::kCtr}) {
    for (size_t n : {0, 15, 17, 32}) {
      cases.push_back({std::string(ModeName(m)) + " key " + std::to_string(n), m,
                       Padding::kPkcs7, Op::kNew, std::string(n, 'k'), "", "",
                       StatusCode::kInvalidArgument,
                       "expected 16 bytes, got " + std::to_string(n), false});
    }
  }
  for (Mode m : {Mode::kCbc, Mode::kCtr}) {
    for (Op op : {Op::kEncrypt, Op::kDecrypt}) {
      for (size_t n : {0, 15, 17}) {
        cases.push_back({std::string(ModeName(m)) + (op == Op::kEncrypt ? " encrypt" : " decrypt") +
                             " IV " + std::to_string(n),
                         m, Padding::kPkcs7, op, key, std::string(n, 'i'), std::string(32, 'x'),
                         StatusCode::kInvalidArgument,
                         std::string(ModeName(m)) + " IV: expected 16 bytes, got " +
                             std::to_string(n),
                         false});
      }
    }
  }
  for (Op op : {Op::kEncrypt, Op::kDecrypt}) {
    for (size_t n : {1, 16}) {
      cases.push_back({std::string("SM4-ECB non-empty IV ") + std::to_string(n) +
                           (op == Op::kEncrypt ? " encrypt" : " decrypt"),
                       Mode::kEcb, Padding::kPkcs7, op, key, std::string(n, 'i'),
                       std::string(32, 'x'), StatusCode::kInvalidArgument,
                       "SM4-ECB IV: expected 0 bytes, got " + std::to_string(n), false});
    }
  }
  for (Mode m : {Mode::kEcb, Mode::kCbc}) {
    const std::string iv = m == Mode::kEcb ? "" : iv16;
    for (size_t n : {1, 15, 17, 33}) {
      cases.push_back({std::string(ModeName(m)) + " no padding plaintext " + std::to_string(n), m,
                       Padding::kNone, Op::kEncrypt, key, iv, std::string(n, 'p'),
                       StatusCode::kInvalidArgument,
                       "expected a multiple of 16 bytes without padding, got " + std::to_string(n),
                       false});
    }
    for (Padding pad : {Padding::kPkcs7, Padding::kNone}) {
      for (size_t n : {1, 15, 17, 31}) {
        cases.push_back({std::string(ModeName(m)) + (pad == Padding::kNone ? " no-pad" : " pkcs7") +
                             " ciphertext " + std::to_string(n),
                         m, pad, Op::kDecrypt, key, iv, std::string(n, 'c'),
                         StatusCode::kInvalidArgument,
                         "ciphertext: expected a multiple of 16 bytes, got " + std::to_string(n),
                         false});
      }
    }
    cases.push_back({std::string(ModeName(m)) + " empty ciphertext with padding", m,
                     Padding::kPkcs7, Op::kDecrypt, key, iv, "", StatusCode::kInvalidArgument,
                     "expected at least 16 bytes with PKCS#7 padding, got 0", false});
    // Bad padding: every variant gives exactly the same error.
    std::vector<std::pair<std::string, std::string>> bad_blocks = {
        {"last byte 0", std::string(15, 'a') + std::string(1, '\0')},
        {"last byte 17", std::string(15, 'a') + std::string(1, '\x11')},
        {"last byte 0x80", std::string(15, 'a') + std::string(1, '\x80')},
        {"last byte 0xff", std::string(16, '\xff')},
        {"pad 16, first byte wrong", std::string(1, '\x0f') + std::string(15, '\x10')},
        {"pad 2, other byte wrong", std::string(14, 'a') + "\x03\x02"},
    };
    for (int wrong = 1; wrong < 8; ++wrong) {  // pad 8, byte `wrong` from the end differs
      std::string block = std::string(8, 'a') + std::string(8, '\x08');
      block[15 - wrong] = '\x07';
      bad_blocks.push_back({"pad 8, byte -" + std::to_string(wrong + 1) + " wrong", block});
    }
    for (const auto& [label, block] : bad_blocks) {
      cases.push_back({std::string(ModeName(m)) + " bad padding: " + label, m, Padding::kPkcs7,
                       Op::kDecrypt, key, iv, CiphertextWithLastBlock(m, key, iv, block),
                       StatusCode::kInvalidArgument, "decryption failed", true});
    }
  }
  return cases;
}

TEST(Sm4BadInputTest, Table) {
  for (const BadCase& c : BadCases()) {
    SCOPED_TRACE(c.name);
    auto cipher = NewCipher(c.mode, c.key, c.padding);
    absl::Status status;
    if (c.op == Op::kNew) {
      status = cipher.status();
    } else {
      ASSERT_THAT(cipher, IsOk());
      status = c.op == Op::kEncrypt ? (*cipher)->Encrypt(c.iv, c.input).status()
                                    : (*cipher)->Decrypt(c.iv, c.input).status();
    }
    if (c.exact_message) {
      EXPECT_THAT(status, StatusIs(c.code, Eq(c.message_substring)));
    } else {
      EXPECT_THAT(status, StatusIs(c.code, HasSubstr(c.message_substring)));
    }
  }
}

TEST(Sm4BadInputTest, OpenSslAlsoRejectsTheBadPaddings) {
  // Cross-check that the crafted blocks are really invalid PKCS#7, not a test artefact.
  const std::string key(16, 'k');
  for (const BadCase& c : BadCases()) {
    if (!c.exact_message) continue;
    SCOPED_TRACE(c.name);
    std::string out;
    EXPECT_FALSE(OpenSslCrypt(c.mode, key, c.iv, true, c.input, false, &out));
  }
}

}  // namespace
}  // namespace smcrypt
