// sm4_gcm_test.cc — SM4-GCM (RFC 8998 §3.1, NIST SP 800-38D) and its GHASH back ends.
//
// Oracles: RFC 8998 Appendix A.1; the GCM specification's GHASH values (McGrew and
// Viega, test cases 2 and 3, as reproduced in SP 800-38D's validation material); a
// bit-by-bit GF(2^128) multiply (SP 800-38D §6.3, Algorithm 1); OpenSSL 3's AES-128-GCM
// for GHASH on random inputs; and Botan 2's SM4/GCM on random keys, nonces and sizes.
#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "crypto/sm4/ghash.h"
#include "crypto/sm4/sm4_internal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm4.h"
#include "tests/crypto/aead_contract_test.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

#if defined(SMCRYPT_HAVE_BOTAN)
#include <botan/aead.h>
#include <botan/exceptn.h>
#endif

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::ReadTestData;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::TestSeed;

// ParseVector reads "name = hex" lines; indented lines without '=' continue the value.
std::map<std::string, std::string> ParseVector(absl::string_view text) {
  std::map<std::string, std::string> hex;
  std::string last;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::string_view s = absl::StripAsciiWhitespace(line);
    if (s.empty() || s[0] == '#') continue;
    const size_t eq = s.find('=');
    if (eq == absl::string_view::npos) {
      hex[last] += std::string(s);
      continue;
    }
    last = std::string(absl::StripAsciiWhitespace(s.substr(0, eq)));
    hex[last] = std::string(absl::StripAsciiWhitespace(s.substr(eq + 1)));
  }
  std::map<std::string, std::string> bytes;
  for (const auto& [k, v] : hex) bytes[k] = HexToBytes(v);
  return bytes;
}

// ---------------------------------------------------------------------------------
// GHASH

// RefMul is SP 800-38D §6.3 Algorithm 1, one bit at a time (test reference only).
std::string RefMul(absl::string_view x, absl::string_view y) {
  uint8_t z[16] = {};
  uint8_t v[16];
  std::memcpy(v, y.data(), 16);
  for (int i = 0; i < 128; ++i) {
    const int bit = (static_cast<uint8_t>(x[i / 8]) >> (7 - i % 8)) & 1;
    if (bit) {
      for (int j = 0; j < 16; ++j) z[j] ^= v[j];
    }
    const int lsb = v[15] & 1;
    for (int j = 15; j > 0; --j) v[j] = static_cast<uint8_t>((v[j] >> 1) | (v[j - 1] << 7));
    v[0] >>= 1;
    if (lsb) v[0] ^= 0xe1;
  }
  return std::string(reinterpret_cast<char*>(z), 16);
}

// RefGhash is GHASH_H over whole blocks with the reference multiply.
std::string RefGhash(absl::string_view h, absl::string_view data) {
  std::string y(16, '\0');
  for (size_t off = 0; off < data.size(); off += 16) {
    for (int j = 0; j < 16; ++j) y[j] ^= data[off + j];
    y = RefMul(y, h);
  }
  return y;
}

// Pad16 zero-pads to a multiple of 16 bytes.
std::string Pad16(absl::string_view s) {
  std::string out(s);
  out.resize((s.size() + 15) / 16 * 16, '\0');
  return out;
}

// GcmHashInput is A ‖ 0^v ‖ C ‖ 0^u ‖ [len(A)]64 ‖ [len(C)]64 (SP 800-38D §7.1 step 5).
std::string GcmHashInput(absl::string_view aad, absl::string_view ct) {
  std::string out = Pad16(aad) + Pad16(ct);
  uint8_t lens[16];
  const uint64_t a_bits = uint64_t{aad.size()} * 8, c_bits = uint64_t{ct.size()} * 8;
  for (int i = 0; i < 8; ++i) {
    lens[i] = static_cast<uint8_t>(a_bits >> (56 - 8 * i));
    lens[8 + i] = static_cast<uint8_t>(c_bits >> (56 - 8 * i));
  }
  out.append(reinterpret_cast<char*>(lens), 16);
  return out;
}

std::string KernelGhash(const internal::GhashKernels& k, absl::string_view h,
                        absl::string_view data) {
  internal::GhashKey key;
  k.init(&key, reinterpret_cast<const uint8_t*>(h.data()));
  uint8_t y[16] = {};
  k.update(y, key, reinterpret_cast<const uint8_t*>(data.data()), data.size() / 16);
  return std::string(reinterpret_cast<char*>(y), 16);
}

std::string KernelName(const ::testing::TestParamInfo<const internal::GhashKernels*>& info) {
  return info.param->name;
}

class GhashKernelTest : public ::testing::TestWithParam<const internal::GhashKernels*> {
 protected:
  void SetUp() override {
    const uint32_t missing = GetParam()->required_features & ~GetCpuFeatures();
    if (missing != 0) {
      GTEST_SKIP() << "GHASH back end " << GetParam()->name << " needs "
                   << FormatCpuFeatureList(missing) << ", not available on this CPU";
    }
  }
};

INSTANTIATE_TEST_SUITE_P(AllKernels, GhashKernelTest,
                         ::testing::ValuesIn(internal::GhashAllKernelsForTesting().begin(),
                                             internal::GhashAllKernelsForTesting().end()),
                         KernelName);

TEST_P(GhashKernelTest, GcmSpecKnownAnswers) {
  // GCM specification test case 2: H, one ciphertext block, len(A)‖len(C) = 0‖128.
  const std::string h2 = HexToBytes("66e94bd4ef8a2c3b884cfa59ca342b2e");
  const std::string c2 = HexToBytes("0388dace60b6a392f328c2b971b2fe78");
  EXPECT_EQ(BytesToHex(KernelGhash(*GetParam(), h2, c2)), "5e2ec746917062882c85b0685353deb7");
  EXPECT_EQ(BytesToHex(KernelGhash(*GetParam(), h2, GcmHashInput("", c2))),
            "f38cbb1ad69223dcc3457ae5b6b0f885");
  // Test case 3: four ciphertext blocks.
  const std::string h3 = HexToBytes("b83b533708bf535d0aa6e52980d53b78");
  const std::string c3 = HexToBytes(
      "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
      "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985");
  EXPECT_EQ(BytesToHex(KernelGhash(*GetParam(), h3, GcmHashInput("", c3))),
            "7f1b32b81b820d02614f8895ac1d4eac");
}

TEST_P(GhashKernelTest, MatchesBitByBitReference) {
  std::mt19937_64 rng(TestSeed());
  SCOPED_TRACE(absl::StrCat("seed=", TestSeed()));
  // Edge operands first: 0, 1 (x^0), x^127, all-ones.
  std::vector<std::string> special = {
      std::string(16, '\0'), HexToBytes("80000000000000000000000000000000"),
      HexToBytes("00000000000000000000000000000001"), std::string(16, '\xff')};
  for (const std::string& h : special) {
    for (const std::string& x : special) {
      EXPECT_EQ(BytesToHex(KernelGhash(*GetParam(), h, x)), BytesToHex(RefMul(x, h)));
    }
  }
  for (int iter = 0; iter < 500; ++iter) {
    const std::string h = RandomBytes(rng, 16);
    const size_t num_blocks = rng() % 9;
    const std::string data = RandomBytes(rng, 16 * num_blocks);
    ASSERT_EQ(BytesToHex(KernelGhash(*GetParam(), h, data)), BytesToHex(RefGhash(h, data)))
        << "iter " << iter << " H=" << BytesToHex(h) << " data=" << BytesToHex(data);
  }
}

TEST_P(GhashKernelTest, IncrementalEqualsOneShot) {
  std::mt19937_64 rng(TestSeed() + 1);
  const std::string h = RandomBytes(rng, 16);
  const std::string data = RandomBytes(rng, 16 * 37);
  internal::GhashKey key;
  GetParam()->init(&key, reinterpret_cast<const uint8_t*>(h.data()));
  uint8_t y[16] = {};
  const uint8_t* p = reinterpret_cast<const uint8_t*>(data.data());
  for (size_t step : {0, 1, 3, 0, 8, 25}) {
    GetParam()->update(y, key, p, step);
    p += 16 * step;
  }
  EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(y), 16)),
            BytesToHex(KernelGhash(*GetParam(), h, data)));
}

// GHASH against OpenSSL's AES-128-GCM: with H = AES(K, 0) and J0 = IV ‖ 0^31 ‖ 1, the
// tag OpenSSL returns is AES(K, J0) ⊕ GHASH_H(A, C) (SP 800-38D §7.1).
TEST_P(GhashKernelTest, MatchesOpenSslAesGcm) {
  std::mt19937_64 rng(TestSeed() + 2);
  SCOPED_TRACE(absl::StrCat("seed=", TestSeed() + 2));
  for (int iter = 0; iter < 200; ++iter) {
    const std::string key = RandomBytes(rng, 16);
    const std::string iv = RandomBytes(rng, 12);
    const std::string aad = RandomBytes(rng, rng() % 100);
    const std::string pt = RandomBytes(rng, rng() % 300);

    std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                         EVP_CIPHER_CTX_free);
    int len = 0;
    std::string ct(pt.size() + 16, '\0');
    unsigned char tag[16];
    ASSERT_EQ(EVP_EncryptInit_ex(ctx.get(), EVP_aes_128_gcm(), nullptr,
                                 reinterpret_cast<const unsigned char*>(key.data()),
                                 reinterpret_cast<const unsigned char*>(iv.data())),
              1);
    ASSERT_EQ(EVP_EncryptUpdate(ctx.get(), nullptr, &len,
                                reinterpret_cast<const unsigned char*>(aad.data()),
                                static_cast<int>(aad.size())),
              1);
    ASSERT_EQ(EVP_EncryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(ct.data()), &len,
                                reinterpret_cast<const unsigned char*>(pt.data()),
                                static_cast<int>(pt.size())),
              1);
    int fin = 0;
    ASSERT_EQ(EVP_EncryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(ct.data()) + len,
                                  &fin),
              1);
    ct.resize(len + fin);
    ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, 16, tag), 1);

    // H and E(K, J0) with AES-128-ECB.
    std::string blocks = std::string(16, '\0') + iv + std::string("\0\0\0\1", 4);
    std::string ecb(32 + 16, '\0');
    std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ectx(EVP_CIPHER_CTX_new(),
                                                                          EVP_CIPHER_CTX_free);
    ASSERT_EQ(EVP_EncryptInit_ex(ectx.get(), EVP_aes_128_ecb(), nullptr,
                                 reinterpret_cast<const unsigned char*>(key.data()), nullptr),
              1);
    EVP_CIPHER_CTX_set_padding(ectx.get(), 0);
    ASSERT_EQ(EVP_EncryptUpdate(ectx.get(), reinterpret_cast<unsigned char*>(ecb.data()), &len,
                                reinterpret_cast<const unsigned char*>(blocks.data()), 32),
              1);
    const std::string h = ecb.substr(0, 16);
    std::string expected(16, '\0');
    for (int i = 0; i < 16; ++i) expected[i] = static_cast<char>(tag[i] ^ ecb[16 + i]);

    ASSERT_EQ(BytesToHex(KernelGhash(*GetParam(), h, GcmHashInput(aad, ct))),
              BytesToHex(expected))
        << "iter " << iter;
  }
}

TEST(GhashDispatchTest, ActiveKernelIsSupportedAndListed) {
  const internal::GhashKernels& active = internal::GhashActiveKernels();
  EXPECT_EQ(active.required_features & ~GetCpuFeatures(), 0u);
  bool listed = false;
  for (const internal::GhashKernels* k : internal::GhashAllKernelsForTesting()) {
    if (k == &active) listed = true;
  }
  EXPECT_TRUE(listed) << active.name;
  EXPECT_EQ(std::string(internal::GhashAllKernelsForTesting().back()->name), "generic");
  // It is the first capable entry of the dispatch table, and each predicate needs its
  // back end's features.
  const internal::GhashKernels* first = nullptr;
  for (const auto& c : internal::GhashDispatchTableForTesting()) {
    if (first == nullptr && c.capable(GetCpuFeatures(), GetCpuIdentity())) first = c.kernels;
    for (int bit = 0; bit < kNumCpuFeatures; ++bit) {
      const uint32_t f = 1u << bit;
      if ((c.kernels->required_features & f) == 0) continue;
      EXPECT_FALSE(c.capable(~f, GetCpuIdentity())) << c.kernels->name;
    }
  }
  EXPECT_EQ(first, &active);
}

// ---------------------------------------------------------------------------------
// SM4-GCM known answers (RFC 8998 Appendix A.1)

TEST(Sm4GcmTest, Rfc8998AppendixA1Seal) {
  auto v = ParseVector(ReadTestData("sm4_gcm_rfc8998.txt"));
  ASSERT_EQ(v["key"].size(), 16u);
  ASSERT_EQ(v["iv"].size(), 12u);
  ASSERT_EQ(v["plaintext"].size(), 64u);
  ASSERT_EQ(v["tag"].size(), 16u);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewSm4Gcm(v["key"]));
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(v["iv"], v["plaintext"], v["aad"]));
  EXPECT_EQ(BytesToHex(sealed), BytesToHex(v["ciphertext"] + v["tag"]));
}

TEST(Sm4GcmTest, Rfc8998AppendixA1Open) {
  auto v = ParseVector(ReadTestData("sm4_gcm_rfc8998.txt"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewSm4Gcm(v["key"]));
  ASSERT_OK_AND_ASSIGN(std::string opened,
                       aead->Open(v["iv"], v["ciphertext"] + v["tag"], v["aad"]));
  EXPECT_EQ(BytesToHex(opened), BytesToHex(v["plaintext"]));
}

// The same vector with the tag given apart (Aead::OpenDetached), and one tag bit flipped.
TEST(Sm4GcmTest, Rfc8998AppendixA1OpenDetached) {
  auto v = ParseVector(ReadTestData("sm4_gcm_rfc8998.txt"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewSm4Gcm(v["key"]));
  ASSERT_OK_AND_ASSIGN(std::string opened,
                       aead->OpenDetached(v["iv"], v["ciphertext"], v["tag"], v["aad"]));
  EXPECT_EQ(BytesToHex(opened), BytesToHex(v["plaintext"]));
  std::string bad_tag = v["tag"];
  bad_tag[15] ^= 0x01;
  EXPECT_THAT(aead->OpenDetached(v["iv"], v["ciphertext"], bad_tag, v["aad"]),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
}

TEST(Sm4GcmTest, ShortTagsArePrefixesOfTheFullTag) {
  auto v = ParseVector(ReadTestData("sm4_gcm_rfc8998.txt"));
  for (size_t t = 12; t <= 16; ++t) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewSm4Gcm(v["key"], t));
    EXPECT_EQ(aead->tag_size(), t);
    EXPECT_EQ(aead->nonce_size(), 12u);
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(v["iv"], v["plaintext"], v["aad"]));
    EXPECT_EQ(BytesToHex(sealed), BytesToHex(v["ciphertext"] + v["tag"].substr(0, t)));
    ASSERT_OK_AND_ASSIGN(std::string opened, aead->Open(v["iv"], sealed, v["aad"]));
    EXPECT_EQ(opened, v["plaintext"]);
  }
}

// ---------------------------------------------------------------------------------
// The AEAD contract (tests/crypto/aead_contract_test.h) for SM4-GCM: as dispatched, on
// each SM4 back end (Sm4SetKernelsForTesting, read on every call), and on each GHASH
// back end (GhashSetKernelsForTesting, kept by the object made under it). Back ends this
// CPU lacks skip; the *_mask_* reruns of sm4_test (tests/CMakeLists.txt) run the
// dispatched instance on each weaker back end.

AeadContractParam Sm4GcmContract(std::string name) {
  AeadContractParam p;
  p.name = std::move(name);
  p.make = [](absl::string_view key, size_t tag_size) { return NewSm4Gcm(key, tag_size); };
  p.key_size = 16;
  p.bad_key_sizes = {0, 15, 17, 32};
  p.tag_sizes = {12, 13, 14, 15, 16};
  p.bad_tag_sizes = {0, 8, 11, 17};
  p.nonce_sizes = {1, 8, 11, 12, 13, 16, 17, 32, 64, 200};
  p.bad_nonce_sizes = {0};
  p.key_size_error = [](size_t got) {
    return absl::StrCat("SM4-GCM key size must be 16 bytes, got ", got);
  };
  p.tag_size_error = [](size_t got) {
    return absl::StrCat("SM4-GCM tag size must be 12 to 16 bytes, got ", got);
  };
  p.nonce_size_error = [](size_t got) {
    return absl::StrCat("SM4-GCM nonce size must be 1 to 2^61 - 1 bytes (12 recommended), got ",
                        got);
  };
  p.too_short_error = [](size_t tag_size, size_t got) {
    return absl::StrCat("ciphertext too short: expected at least ", tag_size,
                        " bytes (the tag), got ", got);
  };
  return p;
}

std::vector<AeadContractParam> Sm4GcmContractParams() {
  std::vector<AeadContractParam> params = {Sm4GcmContract("dispatched")};
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) {
    AeadContractParam p = Sm4GcmContract(absl::StrCat("sm4_", k->name));
    p.skip = [k] { return MissingCpuFeatures("SM4 back end", k->name, k->required_features); };
    p.enter = [k] { Sm4SetKernelsForTesting(k); };
    p.leave = [] { Sm4SetKernelsForTesting(nullptr); };
    params.push_back(std::move(p));
  }
  for (const internal::GhashKernels* g : internal::GhashAllKernelsForTesting()) {
    AeadContractParam p = Sm4GcmContract(absl::StrCat("ghash_", g->name));
    p.skip = [g] { return MissingCpuFeatures("GHASH back end", g->name, g->required_features); };
    p.enter = [g] { internal::GhashSetKernelsForTesting(g); };
    p.leave = [] { internal::GhashSetKernelsForTesting(nullptr); };
    params.push_back(std::move(p));
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Sm4Gcm, AeadContractTest, ::testing::ValuesIn(Sm4GcmContractParams()),
                         AeadContractName);

// ---------------------------------------------------------------------------------
// Differential: Botan 2's SM4/GCM

#if defined(SMCRYPT_HAVE_BOTAN)
std::string BotanGcm(bool encrypt, size_t tag_size, absl::string_view key, absl::string_view nonce,
                     absl::string_view in, absl::string_view aad, bool* auth_failed = nullptr) {
  auto mode = Botan::AEAD_Mode::create_or_throw(absl::StrCat("SM4/GCM(", tag_size, ")"),
                                                encrypt ? Botan::ENCRYPTION : Botan::DECRYPTION);
  mode->set_key(reinterpret_cast<const uint8_t*>(key.data()), key.size());
  mode->set_associated_data(reinterpret_cast<const uint8_t*>(aad.data()), aad.size());
  mode->start(reinterpret_cast<const uint8_t*>(nonce.data()), nonce.size());
  Botan::secure_vector<uint8_t> buf(in.begin(), in.end());
  try {
    mode->finish(buf);
  } catch (const Botan::Invalid_Authentication_Tag&) {
    if (auth_failed != nullptr) *auth_failed = true;
    return "";
  }
  return std::string(buf.begin(), buf.end());
}
#endif

TEST(Sm4GcmDifferentialTest, MatchesBotanOnRandomInputs) {
#if !defined(SMCRYPT_HAVE_BOTAN)
  GTEST_SKIP() << "Botan 2 (botan-2 pkg-config) not found; SM4-GCM differential test skipped";
#else
  const uint64_t seed = TestSeed();
  std::cout << "SM4-GCM vs Botan, seed " << seed << " (set SMCRYPT_TEST_SEED to replay)\n";
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 1000; ++iter) {
    const std::string key = RandomBytes(rng, 16);
    const size_t nonce_size = (iter % 3 == 0) ? 12 : 1 + rng() % 64;
    const size_t tag_size = 12 + rng() % 5;
    const std::string nonce = RandomBytes(rng, nonce_size);
    const std::string aad = RandomBytes(rng, rng() % 301);
    const std::string pt = RandomBytes(rng, rng() % 4097);
    SCOPED_TRACE(absl::StrCat("iter ", iter, " nonce ", nonce_size, " tag ", tag_size, " aad ",
                              aad.size(), " pt ", pt.size()));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewSm4Gcm(key, tag_size));
    ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, pt, aad));
    const std::string expected = BotanGcm(true, tag_size, key, nonce, pt, aad);
    ASSERT_EQ(BytesToHex(sealed), BytesToHex(expected));
    ASSERT_OK_AND_ASSIGN(std::string opened, aead->Open(nonce, expected, aad));
    ASSERT_EQ(opened, pt);
    // Botan rejects what we reject: flip one random bit.
    std::string bad = sealed;
    const size_t bit = rng() % (bad.size() * 8);
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    bool botan_failed = false;
    BotanGcm(false, tag_size, key, nonce, bad, aad, &botan_failed);
    EXPECT_TRUE(botan_failed);
    EXPECT_THAT(aead->Open(nonce, bad, aad),
                StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  }
#endif
}

// Messages longer than one 4 KiB encrypt-then-hash pass, with 12-byte and other nonces.
TEST(Sm4GcmDifferentialTest, LongMessagesMatchBotan) {
#if !defined(SMCRYPT_HAVE_BOTAN)
  GTEST_SKIP() << "Botan 2 (botan-2 pkg-config) not found; SM4-GCM long-message test skipped";
#else
  std::mt19937_64 rng(TestSeed() + 5);
  const std::string key = RandomBytes(rng, 16);
  for (size_t pt_size : {4096 + 1, 4096 + 16, 8191, 3 * 4096 + 15, 100000}) {
    for (size_t nonce_size : {12, 20}) {
      SCOPED_TRACE(absl::StrCat("pt ", pt_size, " nonce ", nonce_size));
      const std::string nonce = RandomBytes(rng, nonce_size);
      const std::string aad = RandomBytes(rng, 33);
      const std::string pt = RandomBytes(rng, pt_size);
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewSm4Gcm(key));
      ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, pt, aad));
      ASSERT_EQ(BytesToHex(sealed), BytesToHex(BotanGcm(true, 16, key, nonce, pt, aad)));
      ASSERT_OK_AND_ASSIGN(std::string opened, aead->Open(nonce, sealed, aad));
      ASSERT_EQ(opened, pt);
    }
  }
#endif
}

// Solves for a 16-byte nonce whose J0 = GHASH(N ‖ [128]64-block) ends in 0xfffffffe, so
// the message's counter blocks wrap the low 32 bits (inc32, SP 800-38D §6.2), and
// checks the result against Botan. Uses H^-1 = H^(2^128 − 2) with the reference multiply.
TEST(Sm4GcmDifferentialTest, CounterWrapsModulo2To32) {
#if !defined(SMCRYPT_HAVE_BOTAN)
  GTEST_SKIP() << "Botan 2 (botan-2 pkg-config) not found; inc32 wrap test skipped";
#else
  const std::string key = HexToBytes("000102030405060708090a0b0c0d0e0f");
  // H = SM4(K, 0), taken from Botan's GCM itself would be circular; use our block API.
  Sm4Key k;
  ASSERT_OK(Sm4ExpandKey(key, &k));
  uint8_t hb[16] = {};
  Sm4EncryptBlocks(k, hb, hb, 1);
  const std::string h(reinterpret_cast<char*>(hb), 16);
  const std::string one = HexToBytes("80000000000000000000000000000000");  // x^0
  // Inverse by square-and-multiply over the exponent 2^128 − 2 (bits 1..127 set).
  std::string inv = one, base = h;
  for (int i = 0; i < 128; ++i) {
    if (i >= 1) inv = RefMul(inv, base);
    base = RefMul(base, base);
  }
  ASSERT_EQ(RefMul(inv, h), one);
  const std::string j0 = HexToBytes("0123456789abcdef01234567fffffffe");
  const std::string len_block = HexToBytes("00000000000000000000000000000080");
  // J0 = ((N · H) ⊕ L) · H  ⇒  N = ((J0 · H^-1) ⊕ L) · H^-1.
  std::string t = RefMul(j0, inv);
  for (int i = 0; i < 16; ++i) t[i] ^= len_block[i];
  const std::string nonce = RefMul(t, inv);
  ASSERT_EQ(RefGhash(h, nonce + len_block), j0);

  std::mt19937_64 rng(TestSeed() + 4);
  const std::string pt = RandomBytes(rng, 16 * 5 + 7);  // counters …ffffffff, 0, 1, 2, 3, 4
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Aead> aead, NewSm4Gcm(key));
  ASSERT_OK_AND_ASSIGN(std::string sealed, aead->Seal(nonce, pt, "wrap"));
  EXPECT_EQ(BytesToHex(sealed), BytesToHex(BotanGcm(true, 16, key, nonce, pt, "wrap")));
  // The second block's keystream is E(K, J0 with low word 0): check against the block API.
  uint8_t ctr[16];
  std::memcpy(ctr, j0.data(), 12);
  std::memset(ctr + 12, 0, 4);
  Sm4EncryptBlocks(k, ctr, ctr, 1);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(static_cast<uint8_t>(sealed[16 + i] ^ pt[16 + i]), ctr[i]) << i;
  }
#endif
}

}  // namespace
}  // namespace smcrypt
