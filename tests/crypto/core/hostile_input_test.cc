// Hostile-input tests of the core API: a seeded mutation loop (bit flips, byte
// substitutions with boundary values, insertions, deletions, truncations and random
// strings) over every parser and every "open"/"verify" path that takes bytes from a
// caller, checking each result against the header contracts: malformed input is
// InvalidArgument, an authentication failure is the one generic "decryption failed",
// a well-formed signature that does not verify is kUnauthenticated "signature invalid",
// a key of another family is FailedPrecondition, and nothing crashes (the ASan/UBSan
// build runs this file too). Whatever parses must re-encode to what it came from.
//
// The loop is bounded by iterations and by wall time (SMCRYPT_HOSTILE_MILLIS per case,
// default 100 ms); the seed is printed (SMCRYPT_TEST_SEED replays it).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "crypto/common/der.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;

// ---- The mutation engine ------------------------------------------------------------

int64_t BudgetMillis() {
  const char* env = std::getenv("SMCRYPT_HOSTILE_MILLIS");
  if (env != nullptr && *env != '\0') return std::atoll(env);
  return 100;
}

std::string Mutate(std::mt19937_64& rng, const std::vector<std::string>& seeds) {
  static constexpr uint8_t kInteresting[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                             0x1f, 0x20, 0x30, 0x7f, 0x80, 0x81, 0x82,
                                             0x83, 0x84, 0x85, 0xa0, 0xa1, 0xfe, 0xff};
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  if (pick(32) == 0) return testing::RandomBytes(rng, pick(200));
  std::string s = seeds[pick(seeds.size())];
  const size_t rounds = 1 + pick(4);
  for (size_t r = 0; r < rounds; ++r) {
    switch (pick(8)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // a boundary value
        if (!s.empty()) {
          s[pick(s.size())] = static_cast<char>(kInteresting[pick(sizeof(kInteresting))]);
        }
        break;
      case 2:  // insert bytes
        s.insert(pick(s.size() + 1), testing::RandomBytes(rng, 1 + pick(4)));
        break;
      case 3:  // delete bytes
        if (!s.empty()) {
          const size_t at = pick(s.size());
          s.erase(at, 1 + pick(std::min<size_t>(4, s.size() - at)));
        }
        break;
      case 4:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      case 5:  // append
        s += testing::RandomBytes(rng, 1 + pick(8));
        break;
      case 6:  // duplicate a slice
        if (!s.empty()) {
          const size_t at = pick(s.size());
          s.insert(pick(s.size() + 1), s.substr(at, 1 + pick(16)));
        }
        break;
      default:  // a random byte
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
        break;
    }
  }
  return s;
}

// Fuzz runs `check` on the seeds and on mutations of them until the time budget or
// `max_iters` runs out; `check` reports failures with gtest assertions.
void Fuzz(const char* name, const std::vector<std::string>& seeds,
          const std::function<void(const std::string&)>& check, int max_iters = 200000) {
  const uint64_t seed = testing::TestSeed();
  std::mt19937_64 rng(seed ^ std::hash<std::string>{}(name));
  SCOPED_TRACE(absl::StrCat(name, ", seed ", seed));
  const bool failed_before = ::testing::Test::HasFailure();
  for (const std::string& s : seeds) check(s);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(BudgetMillis());
  int iters = 0;
  for (; iters < max_iters && std::chrono::steady_clock::now() < deadline; ++iters) {
    const std::string input = Mutate(rng, seeds);
    check(input);
    if (!failed_before && ::testing::Test::HasFailure()) {
      ADD_FAILURE() << name << ": failing input (hex) " << testing::BytesToHex(input);
      return;
    }
  }
  std::printf("[ hostile ] %s: %d mutated inputs, seed %llu\n", name, iters,
              static_cast<unsigned long long>(seed));
}

// IsBadInput is true for InvalidArgument with a non-empty message.
::testing::AssertionResult IsBadInput(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kInvalidArgument && !s.message().empty()) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "expected InvalidArgument, got " << s;
}

// ---- Fixed keys and seeds ----------------------------------------------------------

// GB/T 32918.5 / GM/T 0003.5 example private key on sm2p256v1.
const std::string& Sm2D() {
  static const std::string d =
      HexToBytes("3945208F7B2144B13F36E38AC6D39F95889393692860B51A42FB81EF4DF7C5B8");
  return d;
}
const Sm2PrivateKey& Sm2Key() {
  static const Sm2PrivateKey* const key = new Sm2PrivateKey(*Sm2PrivateKey::FromScalar(Sm2D()));
  return *key;
}

// ---- DER, PEM ------------------------------------------------------------------------

// Walk reads every element recursively (constructed tags open a reader) and hands each
// INTEGER, OID, BIT STRING and NULL to every reader entry point that takes one.
void Walk(der::Reader& r, int depth) {
  while (!r.empty()) {
    if (r.PeekTag(der::kInteger)) {
      der::Reader a = r, b = r, c = r;
      auto small = a.ReadSmallUnsigned();
      uint8_t out[32];
      const absl::Status fixed = b.ReadUnsignedInteger(out, sizeof(out));
      auto magnitude = c.ReadUnsignedIntegerMagnitude();
      // The three readers agree on what a valid INTEGER is.
      EXPECT_EQ(fixed.ok(), magnitude.ok() && magnitude->size() <= 32);
      if (small.ok()) EXPECT_TRUE(magnitude.ok());
      for (const absl::Status& s : {small.status(), fixed, magnitude.status()}) {
        if (!s.ok()) EXPECT_TRUE(IsBadInput(s));
      }
    }
    if (r.PeekTag(der::kObjectIdentifier)) {
      der::Reader a = r;
      auto oid = a.ReadOid();
      // Arcs are unbounded in X.690; OidToString prints "<malformed OID>" for one that
      // does not fit 64 bits, so only its not crashing is checked here.
      if (oid.ok()) EXPECT_FALSE(der::OidToString(*oid).empty());
    }
    if (r.PeekTag(der::kBitString)) {
      der::Reader a = r;
      (void)a.ReadBitStringBytes();
    }
    if (r.PeekTag(der::kNull)) {
      der::Reader a = r;
      (void)a.ReadNull();
    }
    uint8_t tag;
    absl::string_view contents;
    const absl::Status s = r.ReadAny(&tag, &contents);
    if (!s.ok()) {
      EXPECT_TRUE(IsBadInput(s));
      return;
    }
    if ((tag & 0x20) != 0 && depth < 16) {
      der::Reader inner(contents, "constructed");
      Walk(inner, depth + 1);
    }
  }
  EXPECT_THAT(r.Done(), IsOk());
}

std::vector<std::string> KeySeeds() {
  return {Sm2PublicKeyToSpki(Sm2Key().public_key()),
          std::string(SecretDataAsStringView(Sm2PrivateKeyToPkcs8(Sm2Key()))),
          testing::ReadTestData("sm2_encoding_pub.der"),
          testing::ReadTestData("sm2_encoding_key.der"),
          testing::ReadTestData("sm2_encoding_key_traditional.der"),
          testing::ReadTestData("sm2_encoding_cipher.der")};
}

TEST(HostileInputTest, DerReader) {
  Fuzz("der::Reader", KeySeeds(), [](const std::string& in) {
    der::Reader r(in);
    Walk(r, 0);
  });
}

TEST(HostileInputTest, PemDecode) {
  std::vector<std::string> seeds;
  for (const std::string& der : KeySeeds()) seeds.push_back(PemEncode("PRIVATE KEY", der));
  seeds.push_back(testing::ReadTestData("sm2_encoding_pub.pem"));
  seeds.push_back(testing::ReadTestData("sm2_encoding_key.pem"));
  seeds.push_back(PemEncode("A", "x") + "junk\r\n" + PemEncode("B", "yz"));
  Fuzz("PemDecode", seeds, [](const std::string& in) {
    auto block = PemDecode(in);
    auto all = PemDecodeAll(in);
    if (!block.ok()) {
      EXPECT_TRUE(IsBadInput(block.status()));
      EXPECT_FALSE(all.ok());
      return;
    }
    // What decodes re-encodes to a block that decodes to the same label and bytes.
    auto again = PemDecode(PemEncode(block->label, SecretDataAsStringView(block->der)));
    ASSERT_THAT(again.status(), IsOk());
    EXPECT_EQ(again->label, block->label);
    EXPECT_TRUE(again->der == block->der);
    if (all.ok()) {
      EXPECT_EQ((*all)[0].label, block->label);
      EXPECT_TRUE((*all)[0].der == block->der);
    } else {
      EXPECT_TRUE(IsBadInput(all.status()));  // a later block is bad
    }
  });
}

// PEM bodies tolerate exactly ASCII whitespace (SP, HT, LF, VT, FF, CR), inside and
// around base64 lines; every other byte outside the alphabet is an error. (The decoder
// tests whitespace by comparisons, not by a table indexed with the key's characters.)
TEST(HostileInputTest, PemWhitespaceIsExactlyAsciiSpace) {
  const std::string der(SecretDataAsStringView(Sm2PrivateKeyToPkcs8(Sm2Key())));
  const std::string pem = PemEncode("PRIVATE KEY", der);
  const size_t body = pem.find('\n') + 1;
  for (int c = 0; c < 256; ++c) {
    const char ch = static_cast<char>(c);
    const bool base64 = absl::ascii_isalnum(ch) || ch == '+' || ch == '/' || ch == '=';
    if (base64 || ch == ':' || ch == '-') continue;
    for (size_t at : {body, body + 10, body + 64, body + 65}) {
      std::string text = pem;
      text.insert(at, 1, ch);
      auto block = PemDecode(text);
      if (absl::ascii_isspace(ch)) {
        ASSERT_THAT(block.status(), IsOk()) << "byte 0x" << std::hex << c << " at " << at;
        EXPECT_EQ(std::string(SecretDataAsStringView(block->der)), der);
      } else {
        EXPECT_TRUE(IsBadInput(block.status())) << "byte 0x" << std::hex << c << " at " << at;
      }
    }
  }
}

// ---- SM2 encodings and keys ------------------------------------------------------------

TEST(HostileInputTest, Sm2PublicKeyFromPoint) {
  const Sm2PublicKey& pub = Sm2Key().public_key();
  Fuzz("Sm2PublicKey::FromPoint", {pub.ToPoint(false), pub.ToPoint(true)},
       [](const std::string& in) {
         auto key = Sm2PublicKey::FromPoint(in);
         if (!key.ok()) {
           EXPECT_TRUE(IsBadInput(key.status()));
           return;
         }
         // A parsed point re-encodes to the input, in the input's form.
         EXPECT_EQ(key->ToPoint(in.size() == kSm2CompressedPointSize), in);
       });
}

TEST(HostileInputTest, Sm2PublicKeyFromSpki) {
  Fuzz("Sm2PublicKeyFromSpki", KeySeeds(), [](const std::string& in) {
    auto key = Sm2PublicKeyFromSpki(in);
    if (!key.ok()) {
      EXPECT_TRUE(IsBadInput(key.status()));
      return;
    }
    auto again = Sm2PublicKeyFromSpki(Sm2PublicKeyToSpki(*key));
    ASSERT_THAT(again.status(), IsOk());
    EXPECT_TRUE(*again == *key);
  });
}

TEST(HostileInputTest, Sm2PrivateKeyFromPkcs8) {
  Fuzz("Sm2PrivateKeyFromPkcs8", KeySeeds(), [](const std::string& in) {
    auto key = Sm2PrivateKeyFromPkcs8(in);
    if (!key.ok()) {
      EXPECT_TRUE(IsBadInput(key.status()));
      return;
    }
    const SecretData der = Sm2PrivateKeyToPkcs8(*key);
    auto again = Sm2PrivateKeyFromPkcs8(SecretDataAsStringView(der));
    ASSERT_THAT(again.status(), IsOk());
    EXPECT_TRUE(again->ToScalar() == key->ToScalar());
  }, /*max_iters=*/20000);  // each success computes d·G
}

TEST(HostileInputTest, Sm2SignatureFromDer) {
  const std::string e(32, '\x5a');
  std::vector<std::string> seeds;
  for (int i = 0; i < 4; ++i) {
    seeds.push_back(*Sm2SignatureToDer(*Sm2SignDigest(Sm2Key(), e)));
  }
  seeds.push_back(*Sm2SignatureToDer(std::string(64, '\0')));
  seeds.push_back(*Sm2SignatureToDer(std::string(64, '\xff')));
  Fuzz("Sm2SignatureFromDer", seeds, [](const std::string& in) {
    auto raw = Sm2SignatureFromDer(in);
    if (!raw.ok()) {
      EXPECT_TRUE(IsBadInput(raw.status()));
      return;
    }
    // Strict DER has exactly one encoding per value.
    ASSERT_EQ(raw->size(), kSm2RawSignatureSize);
    EXPECT_EQ(*Sm2SignatureToDer(*raw), in);
  });
}

constexpr Sm2CiphertextFormat kFormats[] = {Sm2CiphertextFormat::kC1C3C2,
                                            Sm2CiphertextFormat::kC1C2C3,
                                            Sm2CiphertextFormat::kDer};

std::vector<std::string> CiphertextSeeds(absl::string_view message) {
  std::vector<std::string> seeds;
  for (Sm2CiphertextFormat f : kFormats) {
    seeds.push_back(*Sm2Encrypt(Sm2Key().public_key(), message, f));
    if (f != Sm2CiphertextFormat::kDer) {
      seeds.push_back(*Sm2Encrypt(Sm2Key().public_key(), message, f, /*compress_c1=*/true));
      // Unprefixed C1 (x1 ‖ y1), as some writers send it.
      seeds.push_back(seeds[seeds.size() - 2].substr(1));
    }
  }
  return seeds;
}

TEST(HostileInputTest, Sm2CiphertextConvert) {
  Fuzz("Sm2CiphertextConvert", CiphertextSeeds("forty bytes of plaintext, give or take!!"),
       [](const std::string& in) {
         for (Sm2CiphertextFormat from : kFormats) {
           auto canonical = Sm2CiphertextConvert(in, from, Sm2CiphertextFormat::kC1C3C2);
           for (Sm2CiphertextFormat to : kFormats) {
             auto out = Sm2CiphertextConvert(in, from, to);
             if (!out.ok()) {
               EXPECT_TRUE(IsBadInput(out.status()));
               EXPECT_FALSE(canonical.ok());
               continue;
             }
             ASSERT_THAT(canonical.status(), IsOk());
             // Converting back gives the canonical form of the input.
             auto back = Sm2CiphertextConvert(*out, to, Sm2CiphertextFormat::kC1C3C2);
             ASSERT_THAT(back.status(), IsOk());
             EXPECT_EQ(*back, *canonical);
           }
         }
       }, /*max_iters=*/20000);
}

void CheckDecrypt(const std::string& in, absl::string_view message) {
  for (Sm2CiphertextFormat f : kFormats) {
    auto plain = Sm2Decrypt(Sm2Key(), in, f);
    auto canonical = Sm2CiphertextConvert(in, f, Sm2CiphertextFormat::kC1C3C2);
    if (!plain.ok()) {
      EXPECT_TRUE(IsBadInput(plain.status()));
      continue;
    }
    // Only an encryption of the message decrypts; the parsers agree on its layout.
    EXPECT_EQ(*plain, message);
    ASSERT_THAT(canonical.status(), IsOk());
    auto again = Sm2Decrypt(Sm2Key(), *canonical, Sm2CiphertextFormat::kC1C3C2);
    ASSERT_THAT(again.status(), IsOk());
    EXPECT_EQ(*again, message);
  }
}

TEST(HostileInputTest, Sm2Decrypt) {
  const std::string message = "forty bytes of plaintext, give or take!!";
  Fuzz("Sm2Decrypt", CiphertextSeeds(message),
       [&](const std::string& in) { CheckDecrypt(in, message); }, /*max_iters=*/3000);
  Fuzz("Sm2Decrypt(empty message)", CiphertextSeeds(""),
       [](const std::string& in) { CheckDecrypt(in, ""); }, /*max_iters=*/1000);
}

// A tampered C2 or C3 in a well-formed ciphertext is the one generic error.
TEST(HostileInputTest, Sm2DecryptAuthenticationFailureIsGeneric) {
  for (Sm2CiphertextFormat f : {Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kC1C2C3}) {
    const std::string ct = *Sm2Encrypt(Sm2Key().public_key(), "abc", f);
    for (size_t i = kSm2PointSize; i < ct.size(); ++i) {
      std::string bad = ct;
      bad[i] ^= 0x01;
      EXPECT_THAT(Sm2Decrypt(Sm2Key(), bad, f).status(),
                  StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"))
          << "byte " << i;
    }
  }
}

// ---- Signatures through the registry ----------------------------------------------------

struct VerifyCase {
  Algorithm alg;
  std::string private_key;
  std::string public_key;
};

std::vector<VerifyCase> VerifyCases() {
  std::vector<VerifyCase> cases;
  cases.push_back({Algorithm::kSm2, Sm2D(), Sm2Key().public_key().ToPoint()});
  cases.push_back({Algorithm::kEcdsaP256, testing::ReadTestData("sm2_encoding_p256_key.pem"),
                   testing::ReadTestData("sm2_encoding_p256_pub.pem")});
  return cases;
}

TEST(HostileInputTest, VerifyGarbageSignatures) {
  for (const VerifyCase& c : VerifyCases()) {
    for (SignatureEncoding encoding : {SignatureEncoding::kDer, SignatureEncoding::kRaw}) {
      for (bool prehashed : {false, true}) {
        SignatureOptions options;
        options.encoding = encoding;
        options.prehashed = prehashed;
        ASSERT_OK_AND_ASSIGN(auto signer, NewPublicKeySign(c.alg, c.private_key, options));
        ASSERT_OK_AND_ASSIGN(auto verifier, NewPublicKeyVerify(c.alg, c.public_key, options));
        const std::string data(32, '\x33');
        std::vector<std::string> seeds;
        for (int i = 0; i < 3; ++i) seeds.push_back(*signer->Sign(data));
        const std::string name =
            absl::StrCat("Verify ", AlgorithmName(c.alg), encoding == SignatureEncoding::kDer
                                                              ? " DER" : " raw",
                         prehashed ? " prehashed" : "");
        Fuzz(name.c_str(), seeds, [&](const std::string& sig) {
          const absl::Status s = verifier->Verify(sig, data);
          const bool well_formed = encoding == SignatureEncoding::kRaw
                                       ? sig.size() == 64
                                       : der::EcdsaSignatureDerToRaw(sig, 32).ok();
          if (std::find(seeds.begin(), seeds.end(), sig) != seeds.end()) {
            EXPECT_THAT(s, IsOk());
          } else if (well_formed) {
            EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
          } else {
            EXPECT_TRUE(IsBadInput(s));
          }
        }, /*max_iters=*/1500);
        if (prehashed) {
          for (size_t len : {0, 31, 33, 64}) {
            EXPECT_TRUE(IsBadInput(verifier->Verify(seeds[0], std::string(len, 'x'))))
                << name << " digest of " << len << " bytes";
            EXPECT_TRUE(IsBadInput(signer->Sign(std::string(len, 'x')).status()))
                << name << " digest of " << len << " bytes";
          }
        }
      }
    }
  }
}

// Garbage keys for every asymmetric factory: InvalidArgument, or FailedPrecondition for
// a well-formed key of another family, never a crash or an internal error.
TEST(HostileInputTest, RegistryFactoriesWithGarbageKeys) {
  std::vector<std::string> seeds = KeySeeds();
  seeds.push_back(Sm2D());
  seeds.push_back(Sm2Key().public_key().ToPoint(false));
  seeds.push_back(Sm2Key().public_key().ToPoint(true));
  seeds.push_back(testing::ReadTestData("sm2_encoding_p256_key.pem"));
  seeds.push_back(testing::ReadTestData("sm2_encoding_p256_pub.pem"));
  seeds.push_back(testing::ReadTestData("sm2_encoding_pub.pem"));
  seeds.push_back(testing::ReadTestData("sm2_encoding_key.pem"));
  const Algorithm kAlgs[] = {Algorithm::kSm2, Algorithm::kEcdsaP256, Algorithm::kEcdsaSecp256k1,
                             Algorithm::kRsa2048Pss, Algorithm::kRsa2048Oaep};
  auto allowed = [](const absl::Status& s) {
    return s.ok() || s.code() == absl::StatusCode::kInvalidArgument ||
           s.code() == absl::StatusCode::kFailedPrecondition;
  };
  Fuzz("registry factories", seeds, [&](const std::string& key) {
    for (Algorithm alg : kAlgs) {
      const bool encryption = KindOf(alg) == AlgorithmKind::kPublicKeyEncryption;
      if (!encryption || alg == Algorithm::kSm2) {
        auto s1 = NewPublicKeySign(alg, key);
        EXPECT_TRUE(allowed(s1.status())) << AlgorithmName(alg) << " sign: " << s1.status();
        auto s2 = NewPublicKeyVerify(alg, key);
        EXPECT_TRUE(allowed(s2.status())) << AlgorithmName(alg) << " verify: " << s2.status();
      }
      if (encryption || alg == Algorithm::kSm2) {
        auto s3 = NewPublicKeyEncrypt(alg, key);
        EXPECT_TRUE(allowed(s3.status())) << AlgorithmName(alg) << " encrypt: " << s3.status();
        auto s4 = NewPublicKeyDecrypt(alg, key);
        EXPECT_TRUE(allowed(s4.status())) << AlgorithmName(alg) << " decrypt: " << s4.status();
      }
      auto s5 = PublicKeyFromPrivate(alg, key);
      EXPECT_TRUE(allowed(s5.status())) << AlgorithmName(alg) << " public: " << s5.status();
    }
  }, /*max_iters=*/1500);
}

// ---- SM4 ----------------------------------------------------------------------------------

const std::string kSm4Key = HexToBytes("0123456789ABCDEFFEDCBA9876543210");

// CBC and ECB decryption against an independent padding check on the unpadded output.
TEST(HostileInputTest, Sm4CbcAndEcbPadding) {
  for (Algorithm alg : {Algorithm::kSm4Cbc, Algorithm::kSm4Ecb}) {
    ASSERT_OK_AND_ASSIGN(auto padded, NewCipher(alg, kSm4Key, Padding::kPkcs7));
    ASSERT_OK_AND_ASSIGN(auto raw, NewCipher(alg, kSm4Key, Padding::kNone));
    const std::string iv(padded->iv_size(), '\x11');
    std::vector<std::string> seeds;
    for (size_t len : {0, 1, 15, 16, 17, 40}) {
      seeds.push_back(*padded->Encrypt(iv, std::string(len, 'p')));
    }
    Fuzz(alg == Algorithm::kSm4Cbc ? "SM4-CBC decrypt" : "SM4-ECB decrypt", seeds,
         [&](const std::string& ct) {
           auto got = padded->Decrypt(iv, ct);
           if (ct.empty() || ct.size() % 16 != 0) {
             EXPECT_TRUE(IsBadInput(got.status()));
             EXPECT_NE(got.status().message(), "decryption failed");
             return;
           }
           ASSERT_OK_AND_ASSIGN(std::string plain, raw->Decrypt(iv, ct));
           const uint8_t pad = static_cast<uint8_t>(plain.back());
           bool good = pad >= 1 && pad <= 16;
           for (size_t i = 0; good && i < pad; ++i) {
             good = static_cast<uint8_t>(plain[plain.size() - 1 - i]) == pad;
           }
           if (good) {
             ASSERT_THAT(got.status(), IsOk());
             EXPECT_EQ(*got, plain.substr(0, plain.size() - pad));
           } else {
             EXPECT_THAT(got.status(),
                         StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
           }
         });
  }
}

TEST(HostileInputTest, AeadOpen) {
  struct Case {
    Algorithm alg;
    size_t nonce_size;
    size_t tag_size;
  };
  for (const Case& c : {Case{Algorithm::kSm4Gcm, 12, 16}, Case{Algorithm::kSm4Gcm, 1, 12},
                        Case{Algorithm::kSm4Gcm, 60, 16}, Case{Algorithm::kSm4Ccm, 7, 4},
                        Case{Algorithm::kSm4Ccm, 12, 16}, Case{Algorithm::kSm4Ccm, 13, 10},
                        Case{Algorithm::kAes128Gcm, 12, 16}}) {
    const std::string key(SymmetricKeySize(c.alg), '\x42');
    ASSERT_OK_AND_ASSIGN(auto aead, NewAead(c.alg, key, c.tag_size));
    const std::string nonce(c.nonce_size, '\x07');
    const std::string aad = "header";
    std::vector<std::string> seeds;
    for (size_t len : {0, 1, 16, 33}) seeds.push_back(*aead->Seal(nonce, std::string(len, 'm'), aad));
    const std::string name = absl::StrCat(AlgorithmName(c.alg), " Open, nonce ", c.nonce_size,
                                          ", tag ", c.tag_size);
    Fuzz(name.c_str(), seeds, [&](const std::string& ct) {
      auto got = aead->Open(nonce, ct, aad);
      if (std::find(seeds.begin(), seeds.end(), ct) != seeds.end()) {
        EXPECT_THAT(got.status(), IsOk());
      } else if (ct.size() < c.tag_size) {
        EXPECT_TRUE(IsBadInput(got.status()));
        EXPECT_NE(got.status().message(), "decryption failed");
      } else {
        EXPECT_THAT(got.status(), StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
      }
    }, /*max_iters=*/20000);
    // Hostile nonces and AAD against a fixed ciphertext.
    Fuzz((name + " nonce").c_str(), {nonce}, [&](const std::string& n) {
      auto got = aead->Open(n, seeds[2], aad);
      // CCM: 7–13 bytes (SP 800-38C); GCM: any non-empty nonce, at most 128 bytes for
      // AES-GCM (aes_gcm_openssl.h).
      const bool nonce_ok = c.alg == Algorithm::kSm4Ccm     ? n.size() >= 7 && n.size() <= 13
                            : c.alg == Algorithm::kAes128Gcm ? !n.empty() && n.size() <= 128
                                                             : !n.empty();
      if (n == nonce) {
        EXPECT_THAT(got.status(), IsOk());
      } else if (nonce_ok) {
        EXPECT_THAT(got.status(), StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
      } else {
        EXPECT_TRUE(IsBadInput(got.status()));
        EXPECT_NE(got.status().message(), "decryption failed");
      }
    }, /*max_iters=*/5000);
    Fuzz((name + " aad").c_str(), {aad, ""}, [&](const std::string& a) {
      auto got = aead->Open(nonce, seeds[2], a);
      if (a == aad) {
        EXPECT_THAT(got.status(), IsOk());
      } else {
        EXPECT_THAT(got.status(), StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
      }
    }, /*max_iters=*/5000);
  }
}

// ---- Edge cases from the standards ------------------------------------------------------

// sm2p256v1's p and n (GB/T 32918.5 §3).
const std::string kP = HexToBytes("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF");
const std::string kN = HexToBytes("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123");
const std::string kNMinus1 =
    HexToBytes("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54122");
const std::string kOne = HexToBytes("0000000000000000000000000000000000000000000000000000000000000001");

TEST(StandardEdgeTest, Sm2VerifyBoundaryScalarsAreUnauthenticated) {
  for (SignatureEncoding encoding : {SignatureEncoding::kRaw, SignatureEncoding::kDer}) {
    SignatureOptions options;
    options.encoding = encoding;
    ASSERT_OK_AND_ASSIGN(auto verifier,
                         NewPublicKeyVerify(Algorithm::kSm2, Sm2Key().public_key().ToPoint(),
                                            options));
    // r = s = n − 1 (in range, t = n − 2); r = 1, s = n − 1 ((r + s) mod n = 0, §7.1 B5);
    // r = n and r = p (out of range, B1).
    for (const std::string& raw : {kNMinus1 + kNMinus1, kOne + kNMinus1, kNMinus1 + kOne,
                                   kN + kOne, kP + kOne, kOne + kP}) {
      const std::string sig =
          encoding == SignatureEncoding::kRaw ? raw : *Sm2SignatureToDer(raw);
      EXPECT_THAT(verifier->Verify(sig, "message"),
                  StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"))
          << testing::BytesToHex(raw);
    }
  }
}

TEST(StandardEdgeTest, Sm2PointEncodingsOutsideTheFieldAndInfinity) {
  const std::string y = Sm2Key().public_key().ToPoint().substr(33);
  for (const std::string& point :
       {std::string(1, '\0'), std::string("\x04"), "\x04" + kP + y,
        "\x04" + std::string(32, '\xff') + y, "\x04" + std::string(64, '\0'), "\x02" + kP,
        "\x03" + std::string(32, '\xff'), "\x00" + std::string(64, '\0'),
        "\x04" + Sm2Key().public_key().ToPoint().substr(1, 32) + kP}) {
    EXPECT_TRUE(IsBadInput(Sm2PublicKey::FromPoint(point).status()))
        << testing::BytesToHex(point);
    EXPECT_TRUE(IsBadInput(NewPublicKeyVerify(Algorithm::kSm2, point).status()))
        << testing::BytesToHex(point);
    EXPECT_TRUE(IsBadInput(NewPublicKeyEncrypt(Algorithm::kSm2, point).status()))
        << testing::BytesToHex(point);
  }
}

TEST(StandardEdgeTest, Sm2UserIdLimitThroughTheRegistry) {
  SignatureOptions options;
  options.user_id = std::string(kSm2MaxUserIdSize, 'u');
  ASSERT_OK_AND_ASSIGN(auto signer, NewPublicKeySign(Algorithm::kSm2, Sm2D(), options));
  ASSERT_OK_AND_ASSIGN(auto verifier,
                       NewPublicKeyVerify(Algorithm::kSm2, Sm2Key().public_key().ToPoint(),
                                          options));
  ASSERT_OK_AND_ASSIGN(std::string sig, signer->Sign("m"));
  EXPECT_THAT(verifier->Verify(sig, "m"), IsOk());
  options.user_id.push_back('u');  // 8192 bytes: ENTL would overflow 16 bits
  EXPECT_TRUE(IsBadInput(NewPublicKeySign(Algorithm::kSm2, Sm2D(), options).status()));
  EXPECT_TRUE(IsBadInput(
      NewPublicKeyVerify(Algorithm::kSm2, Sm2Key().public_key().ToPoint(), options).status()));
}

TEST(StandardEdgeTest, Sm2EncryptionOfEmptyAndOneMebibyteMessages) {
  std::mt19937_64 rng(testing::TestSeed());
  const std::string big = testing::RandomBytes(rng, 1 << 20);
  for (Sm2CiphertextFormat f : kFormats) {
    ASSERT_OK_AND_ASSIGN(std::string ct, Sm2Encrypt(Sm2Key().public_key(), big, f));
    if (f != Sm2CiphertextFormat::kDer) EXPECT_EQ(ct.size(), 97 + big.size());
    ASSERT_OK_AND_ASSIGN(std::string pt, Sm2Decrypt(Sm2Key(), ct, f));
    EXPECT_TRUE(pt == big);
    // The last KDF block (counter 32768) is bound: flip the last byte of C2.
    std::string bad = ct;
    bad[f == Sm2CiphertextFormat::kC1C2C3 ? ct.size() - 33 : ct.size() - 1] ^= 1;
    EXPECT_THAT(Sm2Decrypt(Sm2Key(), bad, f).status(),
                StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
    ASSERT_OK_AND_ASSIGN(std::string empty, Sm2Encrypt(Sm2Key().public_key(), "", f, true));
    ASSERT_OK_AND_ASSIGN(std::string none, Sm2Decrypt(Sm2Key(), empty, f));
    EXPECT_TRUE(none.empty());
  }
}

// With empty plaintext and empty AAD, GHASH is over one all-zero length block, so S = 0
// and the tag is E(K, J0) itself (SP 800-38D §7.1): checked against OpenSSL's SM4-ECB.
TEST(StandardEdgeTest, Sm4GcmEmptyPlaintextAndAadTagIsEncryptedJ0) {
  const std::string nonce = HexToBytes("00001234567800000000ABCD");
  ASSERT_OK_AND_ASSIGN(auto gcm, NewAead(Algorithm::kSm4Gcm, kSm4Key));
  ASSERT_OK_AND_ASSIGN(std::string tag, gcm->Seal(nonce, "", ""));
  const std::string j0 = nonce + std::string("\0\0\0\x01", 4);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  ASSERT_NE(ctx, nullptr);
  uint8_t out[32];
  int len = 0;
  ASSERT_EQ(EVP_EncryptInit_ex(ctx, EVP_sm4_ecb(), nullptr,
                               reinterpret_cast<const uint8_t*>(kSm4Key.data()), nullptr), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  ASSERT_EQ(EVP_EncryptUpdate(ctx, out, &len, reinterpret_cast<const uint8_t*>(j0.data()), 16),
            1);
  EVP_CIPHER_CTX_free(ctx);
  EXPECT_EQ(testing::BytesToHex(tag),
            testing::BytesToHex(std::string(reinterpret_cast<char*>(out), 16)));
}

// HMAC keys at the block-size boundaries (RFC 2104 §2: a key longer than B = 64 bytes is
// hashed first, and any length is allowed, the empty key too), against OpenSSL's HMAC
// with SM3 and SHA-256.
TEST(StandardEdgeTest, HmacKeysAroundTheBlockSize) {
  for (Algorithm alg : {Algorithm::kHmacSm3, Algorithm::kHmacSha256}) {
    const EVP_MD* md = alg == Algorithm::kHmacSm3 ? EVP_sm3() : EVP_sha256();
    for (size_t key_len : {0, 1, 63, 64, 65, 128}) {
      const std::string key(key_len, '\x5c');
      ASSERT_OK_AND_ASSIGN(auto mac, NewMac(alg, key));
      ASSERT_OK_AND_ASSIGN(std::string got, mac->ComputeMac("data"));
      uint8_t want[EVP_MAX_MD_SIZE];
      unsigned want_len = 0;
      ASSERT_NE(HMAC(md, key.data(), static_cast<int>(key.size()),
                     reinterpret_cast<const uint8_t*>("data"), 4, want, &want_len),
                nullptr);
      EXPECT_EQ(testing::BytesToHex(got),
                testing::BytesToHex(std::string(reinterpret_cast<char*>(want), want_len)))
          << AlgorithmName(alg) << " key of " << key_len << " bytes";
    }
  }
}

}  // namespace
}  // namespace smcrypt
