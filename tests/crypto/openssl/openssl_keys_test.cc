// Key handling for the OpenSSL algorithms: accepted encodings (DER, PEM, raw scalar and
// points), key generation and public-from-private, and the bad-key table with exact
// status codes (wrong family/curve/size → FailedPrecondition, garbage → InvalidArgument).
#include <memory>
#include <string>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

#include "crypto/openssl/openssl_keys.h"
#include "crypto/openssl/openssl_primitives.h"
#include "gtest/gtest.h"
#include "tests/crypto/openssl/openssl_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::IsOkAndHolds;
using ::smcrypt::testing::RefPem;
using ::smcrypt::testing::RefPkcs8;
using ::smcrypt::testing::RefPrivateKey;
using ::smcrypt::testing::RefSpki;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::View;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr auto kPrecondition = absl::StatusCode::kFailedPrecondition;

// P-256 group order n (FIPS 186-4 §D.1.2.3).
const char kP256Order[] = "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551";

TEST(OpenSslKeysTest, GeneratedKeysAreReadableByOpenSslAndMatch) {
  for (Algorithm alg : {Algorithm::kEcdsaP256, Algorithm::kEcdsaSecp256k1,
                        Algorithm::kRsa2048Oaep}) {
    ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPairOpenSsl(alg));
    SslUniquePtr<EVP_PKEY> ref = RefPrivateKey(pair.private_key_der);
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(RefSpki(ref.get()), pair.public_key_der);
    EXPECT_THAT(PublicKeyFromPrivateOpenSsl(alg, View(pair.private_key_der)),
                IsOkAndHolds(pair.public_key_der));
    // PEM forms of both keys are accepted and give the same public key.
    EXPECT_THAT(PublicKeyFromPrivateOpenSsl(alg, RefPem(ref.get(), true)),
                IsOkAndHolds(pair.public_key_der));
    EXPECT_THAT(NewPublicKeyVerifyOpenSsl(alg == Algorithm::kRsa2048Oaep ? Algorithm::kRsa2048Pss
                                                                         : alg,
                                          RefPem(ref.get(), false)),
                IsOk());
  }
  EXPECT_THAT(GenerateKeyPairOpenSsl(Algorithm::kSm2), StatusIs(kInvalid));
  EXPECT_THAT(GenerateKeyPairOpenSsl(Algorithm::kAes128Gcm), StatusIs(kInvalid));
}

TEST(OpenSslKeysTest, WrongFamilyOrCurveIsFailedPrecondition) {
  SslUniquePtr<EVP_PKEY> sm2(EVP_PKEY_Q_keygen(nullptr, nullptr, "SM2"));
  SslUniquePtr<EVP_PKEY> p256(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  SslUniquePtr<EVP_PKEY> k1(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "secp256k1"));
  SslUniquePtr<EVP_PKEY> p384(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"));
  SslUniquePtr<EVP_PKEY> ed(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  SslUniquePtr<EVP_PKEY> rsa(EVP_RSA_gen(2048));
  ASSERT_TRUE(sm2 && p256 && k1 && p384 && ed && rsa);
  struct Case {
    Algorithm alg;
    EVP_PKEY* key;
    const char* message;
  } cases[] = {
      {Algorithm::kEcdsaP256, sm2.get(), "key is SM2, algorithm needs EC P-256"},
      {Algorithm::kEcdsaP256, k1.get(), "key is EC secp256k1, algorithm needs EC P-256"},
      {Algorithm::kEcdsaP256, p384.get(), "key is EC secp384r1, algorithm needs EC P-256"},
      {Algorithm::kEcdsaP256, rsa.get(), "key is RSA-2048, algorithm needs EC P-256"},
      {Algorithm::kEcdsaP256, ed.get(), "key is ED25519, algorithm needs EC P-256"},
      {Algorithm::kEcdsaSecp256k1, p256.get(), "key is EC P-256, algorithm needs EC secp256k1"},
      {Algorithm::kRsa2048Pss, p256.get(), "key is EC P-256, algorithm needs RSA-2048"},
      {Algorithm::kRsa3072Oaep, sm2.get(), "key is SM2, algorithm needs RSA-3072"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const std::string pkcs8 = RefPkcs8(c.key);
    const std::string spki = RefSpki(c.key);
    const bool pss_or_ec = c.alg != Algorithm::kRsa3072Oaep;
    if (pss_or_ec) {
      EXPECT_THAT(NewPublicKeySignOpenSsl(c.alg, pkcs8), StatusIs(kPrecondition, c.message));
      EXPECT_THAT(NewPublicKeyVerifyOpenSsl(c.alg, spki), StatusIs(kPrecondition, c.message));
      EXPECT_THAT(NewPublicKeyVerifyOpenSsl(c.alg, RefPem(c.key, false)),
                  StatusIs(kPrecondition, c.message));
    } else {
      EXPECT_THAT(NewRsaOaepDecryptOpenSsl(c.alg, pkcs8), StatusIs(kPrecondition, c.message));
      EXPECT_THAT(NewRsaOaepEncryptOpenSsl(c.alg, spki), StatusIs(kPrecondition, c.message));
    }
    EXPECT_THAT(PublicKeyFromPrivateOpenSsl(c.alg, RefPem(c.key, true)),
                StatusIs(kPrecondition, c.message));
  }
}

TEST(OpenSslKeysTest, GarbageAndMalformedKeysAreInvalidArgument) {
  ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPairOpenSsl(Algorithm::kEcdsaP256));
  const std::string pkcs8(View(pair.private_key_der));
  const std::string spki = pair.public_key_der;
  SslUniquePtr<EVP_PKEY> ref = RefPrivateKey(pair.private_key_der);
  const std::string pem_priv = RefPem(ref.get(), true);
  const std::string pem_pub = RefPem(ref.get(), false);
  const Algorithm alg = Algorithm::kEcdsaP256;
  struct Case {
    const char* name;
    std::string key;
  };
  const Case private_cases[] = {
      {"empty", ""},
      {"garbage", "not a key at all"},
      {"31-byte scalar", std::string(31, '\x01')},
      {"33-byte scalar", std::string(33, '\x01')},
      {"truncated PKCS#8", pkcs8.substr(0, pkcs8.size() - 1)},
      {"PKCS#8 + trailing byte", pkcs8 + '\0'},
      {"SPKI given as private key", spki},
      {"PEM public key as private", pem_pub},
      {"PEM with trailing data", pem_priv + "junk"},
      {"broken PEM", "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n"},
      {"scalar zero", std::string(32, '\0')},
      {"scalar n", HexToBytes(kP256Order)},
      {"scalar all ones", std::string(32, '\xff')},
  };
  // Bytes in no accepted encoding name the accepted forms; a key in one of them that is
  // not a valid key names the key and the failed check.
  const auto bad_private = StatusIs(
      kInvalid, AnyOf(StartsWith("expected an EC P-256 private key as PKCS#8 DER or PEM, or a "
                                 "32-byte scalar; got "),
                      StartsWith("EC P-256 private key")));
  for (const Case& c : private_cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(NewPublicKeySignOpenSsl(alg, c.key), bad_private);
  }
  EXPECT_THAT(NewPublicKeySignOpenSsl(alg, "not a key at all"),
              StatusIs(kInvalid, "expected an EC P-256 private key as PKCS#8 DER or PEM, or a "
                                 "32-byte scalar; got 16 bytes (not DER: it does not start with "
                                 "a SEQUENCE)"));
  EXPECT_THAT(NewPublicKeySignOpenSsl(alg, std::string(32, '\0')),
              StatusIs(kInvalid, "EC P-256 private key: scalar out of range [1, n-1]"));
  std::string off_curve = spki.substr(spki.size() - 65);
  off_curve[64] ^= 1;
  std::string bad_prefix = spki.substr(spki.size() - 65);
  bad_prefix[0] = 0x05;
  std::string bad_compressed = spki.substr(spki.size() - 65, 33);
  bad_compressed[0] = 0x02;
  for (int i = 1; i < 33; ++i) bad_compressed[i] = '\xff';  // x ≥ p
  const Case public_cases[] = {
      {"empty", ""},
      {"garbage", "not a key at all"},
      {"64-byte point", spki.substr(spki.size() - 64)},
      {"point off the curve", off_curve},
      {"bad prefix byte", bad_prefix},
      {"compressed x >= p", bad_compressed},
      {"truncated SPKI", spki.substr(0, spki.size() - 1)},
      {"SPKI + trailing byte", spki + '\0'},
      {"PKCS#8 given as public key", pkcs8},
      {"PEM private key as public", pem_priv},
  };
  const auto bad_public = StatusIs(
      kInvalid, AnyOf(StartsWith("expected an EC P-256 public key as SubjectPublicKeyInfo DER "
                                 "or PEM, or a 65-byte uncompressed / 33-byte compressed point; "
                                 "got "),
                      StartsWith("EC P-256 public key")));
  for (const Case& c : public_cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(NewPublicKeyVerifyOpenSsl(alg, c.key), bad_public);
  }
  EXPECT_THAT(NewPublicKeyVerifyOpenSsl(alg, off_curve),
              StatusIs(kInvalid, "EC P-256 public key: not a valid point on the curve"));
  // RSA: no raw forms.
  EXPECT_THAT(NewRsaOaepDecryptOpenSsl(Algorithm::kRsa2048Oaep, std::string(32, '\x01')),
              StatusIs(kInvalid, "expected an RSA-2048 private key as PKCS#8 DER or PEM; got 32 "
                                 "bytes (not DER: it does not start with a SEQUENCE)"));
  EXPECT_THAT(NewRsaOaepEncryptOpenSsl(Algorithm::kRsa2048Oaep, spki.substr(spki.size() - 65)),
              StatusIs(kInvalid, "expected an RSA-2048 public key as SubjectPublicKeyInfo DER or "
                                 "PEM; got 65 bytes (DER: expected SEQUENCE, got OCTET STRING)"));
}

TEST(OpenSslKeysTest, ScalarRangeEdges) {
  // n − 1 is the largest valid scalar; its public key is −G = (Gx, p − Gy).
  std::string n_minus_1 = HexToBytes(kP256Order);
  n_minus_1[31] = static_cast<char>(static_cast<uint8_t>(n_minus_1[31]) - 1);
  ASSERT_OK_AND_ASSIGN(std::string spki,
                       PublicKeyFromPrivateOpenSsl(Algorithm::kEcdsaP256, n_minus_1));
  EXPECT_EQ(::smcrypt::testing::BytesToHex(spki.substr(spki.size() - 65, 33)),
            "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296");
  std::string one(32, '\0');
  one[31] = 1;
  ASSERT_OK_AND_ASSIGN(spki, PublicKeyFromPrivateOpenSsl(Algorithm::kEcdsaP256, one));
  EXPECT_EQ(::smcrypt::testing::BytesToHex(spki.substr(spki.size() - 65)),
            "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"
            "4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5");
}

TEST(OpenSslKeysTest, MismatchedPublicKeyInPkcs8IsRejected) {
  // Splice key B's public point into key A's PKCS#8 (RFC 5915 publicKey field).
  ASSERT_OK_AND_ASSIGN(KeyPair a, GenerateKeyPairOpenSsl(Algorithm::kEcdsaP256));
  ASSERT_OK_AND_ASSIGN(KeyPair b, GenerateKeyPairOpenSsl(Algorithm::kEcdsaP256));
  std::string pkcs8(View(a.private_key_der));
  const std::string point_a = a.public_key_der.substr(a.public_key_der.size() - 65);
  const std::string point_b = b.public_key_der.substr(b.public_key_der.size() - 65);
  const size_t at = pkcs8.find(point_a);
  ASSERT_NE(at, std::string::npos);
  pkcs8.replace(at, 65, point_b);
  EXPECT_THAT(NewPublicKeySignOpenSsl(Algorithm::kEcdsaP256, pkcs8),
              StatusIs(kInvalid, HasSubstr("does not match")));
}

}  // namespace
}  // namespace smcrypt
