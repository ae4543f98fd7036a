// ECDSA P-256 / secp256k1 over SHA-256: cross-checks with plain OpenSSL EVP both ways,
// the RFC 6979 §A.2.5 P-256 signature as a known answer, raw ↔ DER, tampering and the
// malformed-signature table.
#include <memory>
#include <random>
#include <string>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include "crypto/openssl/ecdsa_sign_openssl.h"
#include "crypto/openssl/ecdsa_verify_openssl.h"
#include "crypto/openssl/openssl_primitives.h"
#include "gtest/gtest.h"
#include "tests/crypto/openssl/openssl_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::RefPrivateKey;
using ::smcrypt::testing::RefPublicKey;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::U8;
using ::smcrypt::testing::View;

bool RefVerify(EVP_PKEY* key, absl::string_view der_sig, absl::string_view msg) {
  SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
  EXPECT_EQ(EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key), 1);
  return EVP_DigestVerify(ctx.get(), U8(der_sig), der_sig.size(), U8(msg), msg.size()) == 1;
}

std::string RefSign(EVP_PKEY* key, absl::string_view msg) {
  SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
  EXPECT_EQ(EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key), 1);
  std::string sig(80, '\0');
  size_t len = sig.size();
  EXPECT_EQ(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len,
                           U8(msg), msg.size()),
            1);
  sig.resize(len);
  return sig;
}

// RefDerToRaw / RefRawToDer convert with OpenSSL's ECDSA_SIG, independently of smcrypt.
std::string RefDerToRaw(absl::string_view der) {
  const unsigned char* p = U8(der);
  SslUniquePtr<ECDSA_SIG> sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
  EXPECT_NE(sig, nullptr);
  std::string raw(64, '\0');
  unsigned char* out = reinterpret_cast<unsigned char*>(raw.data());
  BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + 32, 32);
  return raw;
}
std::string RefRawToDer(absl::string_view raw) {
  SslUniquePtr<ECDSA_SIG> sig(ECDSA_SIG_new());
  ECDSA_SIG_set0(sig.get(), BN_bin2bn(U8(raw), 32, nullptr), BN_bin2bn(U8(raw) + 32, 32, nullptr));
  unsigned char* buf = nullptr;
  int len = i2d_ECDSA_SIG(sig.get(), &buf);
  std::string der(reinterpret_cast<char*>(buf), len);
  OPENSSL_free(buf);
  return der;
}

std::string Sha256(absl::string_view msg) {
  std::string d(32, '\0');
  SHA256(U8(msg), msg.size(), reinterpret_cast<unsigned char*>(d.data()));
  return d;
}

class EcdsaOpenSslTest : public ::testing::TestWithParam<Algorithm> {};

TEST_P(EcdsaOpenSslTest, CrossChecksWithPlainEvpBothWays) {
  const Algorithm alg = GetParam();
  ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPairOpenSsl(alg));
  SslUniquePtr<EVP_PKEY> ref_priv = RefPrivateKey(pair.private_key_der);
  SslUniquePtr<EVP_PKEY> ref_pub = RefPublicKey(pair.public_key_der);
  ASSERT_OK_AND_ASSIGN(auto signer, EcdsaSignOpenSsl::New(alg, View(pair.private_key_der)));
  ASSERT_OK_AND_ASSIGN(auto verifier, EcdsaVerifyOpenSsl::New(alg, pair.public_key_der));
  for (absl::string_view msg : {absl::string_view(""), absl::string_view("abc"),
                                absl::string_view("a longer message, over one block of 64 bytes "
                                                  "so SHA-256 compresses twice")}) {
    ASSERT_OK_AND_ASSIGN(std::string sig, signer->Sign(msg));
    EXPECT_TRUE(RefVerify(ref_pub.get(), sig, msg));
    EXPECT_THAT(verifier->Verify(sig, msg), IsOk());
    const std::string ref_sig = RefSign(ref_priv.get(), msg);
    EXPECT_THAT(verifier->Verify(ref_sig, msg), IsOk());
    // Randomized: two signatures of one message differ.
    ASSERT_OK_AND_ASSIGN(std::string sig2, signer->Sign(msg));
    EXPECT_NE(sig, sig2);
    EXPECT_THAT(verifier->Verify(sig, "other"),
                StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
  }
}

TEST_P(EcdsaOpenSslTest, RawEncodingAndPrehashed) {
  const Algorithm alg = GetParam();
  ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPairOpenSsl(alg));
  SslUniquePtr<EVP_PKEY> ref_priv = RefPrivateKey(pair.private_key_der);
  SslUniquePtr<EVP_PKEY> ref_pub = RefPublicKey(pair.public_key_der);
  const std::string msg = "message to sign";
  ASSERT_OK_AND_ASSIGN(auto raw_signer, EcdsaSignOpenSsl::New(alg, View(pair.private_key_der),
                                                              SignatureEncoding::kRaw));
  ASSERT_OK_AND_ASSIGN(auto raw_verifier,
                       EcdsaVerifyOpenSsl::New(alg, pair.public_key_der, SignatureEncoding::kRaw));
  ASSERT_OK_AND_ASSIGN(std::string raw, raw_signer->Sign(msg));
  ASSERT_EQ(raw.size(), 64u);
  EXPECT_TRUE(RefVerify(ref_pub.get(), RefRawToDer(raw), msg));
  EXPECT_THAT(raw_verifier->Verify(raw, msg), IsOk());
  EXPECT_THAT(raw_verifier->Verify(RefDerToRaw(RefSign(ref_priv.get(), msg)), msg), IsOk());
  // Every bit of a raw signature matters.
  for (size_t bit = 0; bit < 512; bit += 3) {
    std::string bad = raw;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_THAT(raw_verifier->Verify(bad, msg),
                StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
  }
  // Prehashed: sign the digest, verify as a message with plain EVP, and back.
  ASSERT_OK_AND_ASSIGN(auto pre_signer, NewPublicKeySignOpenSsl(alg, View(pair.private_key_der),
                                                                SignatureEncoding::kDer, true));
  ASSERT_OK_AND_ASSIGN(auto pre_verifier, NewPublicKeyVerifyOpenSsl(alg, pair.public_key_der,
                                                                    SignatureEncoding::kDer, true));
  ASSERT_OK_AND_ASSIGN(std::string sig, pre_signer->Sign(Sha256(msg)));
  EXPECT_TRUE(RefVerify(ref_pub.get(), sig, msg));
  EXPECT_THAT(pre_verifier->Verify(RefSign(ref_priv.get(), msg), Sha256(msg)), IsOk());
  EXPECT_THAT(pre_signer->Sign(std::string(31, 'd')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(pre_signer->Sign(msg), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(pre_verifier->Verify(sig, std::string(33, 'd')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(EcdsaOpenSslTest, MalformedSignatureTable) {
  const Algorithm alg = GetParam();
  ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPairOpenSsl(alg));
  ASSERT_OK_AND_ASSIGN(auto signer, EcdsaSignOpenSsl::New(alg, View(pair.private_key_der)));
  ASSERT_OK_AND_ASSIGN(auto der_verifier, EcdsaVerifyOpenSsl::New(alg, pair.public_key_der));
  ASSERT_OK_AND_ASSIGN(auto raw_verifier,
                       EcdsaVerifyOpenSsl::New(alg, pair.public_key_der, SignatureEncoding::kRaw));
  const std::string msg = "m";
  ASSERT_OK_AND_ASSIGN(std::string sig, signer->Sign(msg));
  const auto invalid = absl::StatusCode::kInvalidArgument;
  const auto unauth = absl::StatusCode::kUnauthenticated;
  EXPECT_THAT(der_verifier->Verify(sig + '\0', msg), StatusIs(invalid));  // trailing byte
  EXPECT_THAT(der_verifier->Verify(sig.substr(0, sig.size() - 1), msg), StatusIs(invalid));
  EXPECT_THAT(der_verifier->Verify("", msg), StatusIs(invalid));
  EXPECT_THAT(der_verifier->Verify("garbage", msg), StatusIs(invalid));
  // Non-minimal INTEGER (a 00 before a byte below 0x80), negative INTEGER, BER long form.
  EXPECT_THAT(der_verifier->Verify(HexToBytes("3007020200010201 01"), msg), StatusIs(invalid));
  EXPECT_THAT(der_verifier->Verify(HexToBytes("30060201ff020101"), msg), StatusIs(invalid));
  EXPECT_THAT(der_verifier->Verify(HexToBytes("3081060201010201 01"), msg), StatusIs(invalid));
  // INTEGER over 32 bytes.
  EXPECT_THAT(der_verifier->Verify(HexToBytes("3026022101" + std::string(64, '0') + "020101"), msg),
              StatusIs(invalid));
  // Well-formed but wrong: r = s = 1, r = 0.
  EXPECT_THAT(der_verifier->Verify(HexToBytes("3006020101020101"), msg), StatusIs(unauth));
  EXPECT_THAT(der_verifier->Verify(HexToBytes("3006020100020101"), msg), StatusIs(unauth));
  // Raw: wrong lengths are malformed; zeros and r = n are well-formed but invalid.
  EXPECT_THAT(raw_verifier->Verify(std::string(63, '\x01'), msg), StatusIs(invalid));
  EXPECT_THAT(raw_verifier->Verify(std::string(65, '\x01'), msg), StatusIs(invalid));
  EXPECT_THAT(raw_verifier->Verify(sig, msg), StatusIs(invalid));  // DER to a raw verifier
  EXPECT_THAT(raw_verifier->Verify(std::string(64, '\0'), msg), StatusIs(unauth));
  EXPECT_THAT(raw_verifier->Verify(std::string(64, '\xff'), msg), StatusIs(unauth));
  // Flipping any bit of a DER signature never verifies.
  for (size_t bit = 0; bit < sig.size() * 8; ++bit) {
    std::string bad = sig;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    absl::Status s = der_verifier->Verify(bad, msg);
    EXPECT_TRUE(s.code() == invalid || s.code() == unauth) << "bit " << bit << ": " << s;
  }
}

TEST_P(EcdsaOpenSslTest, RawScalarAndPointKeys) {
  const Algorithm alg = GetParam();
  ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPairOpenSsl(alg));
  SslUniquePtr<EVP_PKEY> ref_priv = RefPrivateKey(pair.private_key_der);
  BIGNUM* d = nullptr;
  ASSERT_EQ(EVP_PKEY_get_bn_param(ref_priv.get(), "priv", &d), 1);
  std::string scalar(32, '\0');
  BN_bn2binpad(d, reinterpret_cast<unsigned char*>(scalar.data()), 32);
  BN_clear_free(d);
  unsigned char point[65];
  size_t point_len = 0;
  ASSERT_EQ(EVP_PKEY_get_octet_string_param(ref_priv.get(), "encoded-pub-key", point,
                                            sizeof(point), &point_len),
            1);
  ASSERT_EQ(point_len, 65u);
  ASSERT_OK_AND_ASSIGN(auto signer, EcdsaSignOpenSsl::New(alg, scalar));
  ASSERT_OK_AND_ASSIGN(auto verifier,
                       EcdsaVerifyOpenSsl::New(alg, std::string(reinterpret_cast<char*>(point), 65)));
  // Compressed form of the same point.
  std::string compressed(reinterpret_cast<char*>(point), 33);
  compressed[0] = static_cast<char>(0x02 | (point[64] & 1));
  ASSERT_OK_AND_ASSIGN(auto verifier_c, EcdsaVerifyOpenSsl::New(alg, compressed));
  ASSERT_OK_AND_ASSIGN(std::string sig, signer->Sign("hello"));
  EXPECT_THAT(verifier->Verify(sig, "hello"), IsOk());
  EXPECT_THAT(verifier_c->Verify(sig, "hello"), IsOk());
  EXPECT_TRUE(RefVerify(RefPublicKey(pair.public_key_der).get(), sig, "hello"));
  ASSERT_OK_AND_ASSIGN(std::string spki, PublicKeyFromPrivateOpenSsl(alg, scalar));
  EXPECT_EQ(spki, pair.public_key_der);
}

INSTANTIATE_TEST_SUITE_P(Curves, EcdsaOpenSslTest,
                         ::testing::Values(Algorithm::kEcdsaP256, Algorithm::kEcdsaSecp256k1),
                         [](const ::testing::TestParamInfo<Algorithm>& info) {
                           return info.param == Algorithm::kEcdsaP256 ? "P256" : "secp256k1";
                         });

// RFC 6979 §A.2.5: P-256 key, SHA-256, message "sample". The deterministic (r, s) it
// lists is a valid ECDSA signature, so it must verify; the public key derived from x
// must equal the listed (Ux, Uy).
TEST(EcdsaP256KnownAnswerTest, Rfc6979Sample) {
  const std::string x =
      HexToBytes("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721");
  const std::string point = HexToBytes(
      "04"
      "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6"
      "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299");
  const std::string rs = HexToBytes(
      "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
      "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8");
  ASSERT_OK_AND_ASSIGN(std::string spki, PublicKeyFromPrivateOpenSsl(Algorithm::kEcdsaP256, x));
  EXPECT_EQ(spki.substr(spki.size() - 65), point);
  ASSERT_OK_AND_ASSIGN(auto verifier, EcdsaVerifyOpenSsl::New(Algorithm::kEcdsaP256, point,
                                                              SignatureEncoding::kRaw));
  EXPECT_THAT(verifier->Verify(rs, "sample"), IsOk());
  EXPECT_THAT(verifier->Verify(rs, "test"),
              StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
  ASSERT_OK_AND_ASSIGN(auto der_verifier, EcdsaVerifyOpenSsl::New(Algorithm::kEcdsaP256, spki));
  EXPECT_THAT(der_verifier->Verify(RefRawToDer(rs), "sample"), IsOk());
  // secp256k1 verifier refuses the P-256 key.
  EXPECT_THAT(EcdsaVerifyOpenSsl::New(Algorithm::kEcdsaSecp256k1, spki),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "key is EC P-256, algorithm needs EC secp256k1"));
}

}  // namespace
}  // namespace smcrypt
