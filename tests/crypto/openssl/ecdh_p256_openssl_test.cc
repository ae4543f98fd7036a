// ECDH P-256: RFC 5903 §8.1 known answer, agreement both ways, a cross-check with plain
// EVP_PKEY_derive, and peer-key validation.
#include <string>

#include <openssl/evp.h>

#include "crypto/openssl/ecdh_p256_openssl.h"
#include "gtest/gtest.h"
#include "tests/crypto/openssl/openssl_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::RefPrivateKey;
using ::smcrypt::testing::RefPublicKey;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::View;

TEST(EcdhP256OpenSslTest, Rfc5903Section8_1) {
  const std::string i = HexToBytes("C88F01F510D9AC3F70A292DAA2316DE544E9AAB8AFE84049C62A9C57862D1433");
  const std::string gi = HexToBytes(
      "04DAD0B65394221CF9B051E1FECA5787D098DFE637FC90B9EF945D0C377258118"
      "05271A0461CDB8252D61F1C456FA3E59AB1F45B33ACCF5F58389E0577B8990BB3");
  const std::string r = HexToBytes("C6EF9C5D78AE012A011164ACB397CE2088685D8F06BF9BE0B283AB46476BEE53");
  const std::string gr = HexToBytes(
      "04D12DFB5289C8D4F81208B70270398C342296970A0BCCB74C736FC7554494BF63"
      "56FBF3CA366CC23E8157854C13C58D6AAC23F046ADA30F8353E74F33039872AB");
  const char kGirx[] = "d6840f6b42f6edafd13116e0e12565202fef8e9ece7dce03812464d04b9442de";
  ASSERT_OK_AND_ASSIGN(auto initiator, EcdhP256OpenSsl::New(i));
  ASSERT_OK_AND_ASSIGN(auto responder, EcdhP256OpenSsl::New(r));
  EXPECT_EQ(BytesToHex(initiator->public_point()), BytesToHex(gi));
  EXPECT_EQ(BytesToHex(responder->public_point()), BytesToHex(gr));
  ASSERT_OK_AND_ASSIGN(SecretData z1, initiator->ComputeSharedSecret(gr));
  ASSERT_OK_AND_ASSIGN(SecretData z2, responder->ComputeSharedSecret(gi));
  EXPECT_EQ(BytesToHex(View(z1)), kGirx);
  EXPECT_EQ(BytesToHex(View(z2)), kGirx);
  ASSERT_OK_AND_ASSIGN(SecretData scalar, initiator->PrivateScalar());
  EXPECT_EQ(View(scalar), i);
}

TEST(EcdhP256OpenSslTest, AgreesWithPlainEvpDerive) {
  ASSERT_OK_AND_ASSIGN(auto a, EcdhP256OpenSsl::Generate());
  ASSERT_OK_AND_ASSIGN(auto b, EcdhP256OpenSsl::Generate());
  ASSERT_OK_AND_ASSIGN(std::string b_spki, b->PublicKeySpki());
  ASSERT_OK_AND_ASSIGN(SecretData a_pkcs8, a->PrivateKeyPkcs8());
  ASSERT_OK_AND_ASSIGN(SecretData z, a->ComputeSharedSecret(b_spki));
  ASSERT_OK_AND_ASSIGN(SecretData z_point, a->ComputeSharedSecret(b->public_point()));
  EXPECT_EQ(z, z_point);
  SslUniquePtr<EVP_PKEY> ref_a = RefPrivateKey(a_pkcs8);
  SslUniquePtr<EVP_PKEY> ref_b = RefPublicKey(b_spki);
  SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new(ref_a.get(), nullptr));
  ASSERT_EQ(EVP_PKEY_derive_init(ctx.get()), 1);
  ASSERT_EQ(EVP_PKEY_derive_set_peer(ctx.get(), ref_b.get()), 1);
  unsigned char ref_z[32];
  size_t len = sizeof(ref_z);
  ASSERT_EQ(EVP_PKEY_derive(ctx.get(), ref_z, &len), 1);
  EXPECT_EQ(BytesToHex(View(z)), BytesToHex(std::string(reinterpret_cast<char*>(ref_z), len)));
  ASSERT_OK_AND_ASSIGN(SecretData z_b, b->ComputeSharedSecret(a->public_point()));
  EXPECT_EQ(z, z_b);
}

TEST(EcdhP256OpenSslTest, PeerKeyIsValidated) {
  ASSERT_OK_AND_ASSIGN(auto a, EcdhP256OpenSsl::Generate());
  std::string off_curve = a->public_point();
  off_curve[64] ^= 1;
  EXPECT_THAT(a->ComputeSharedSecret(off_curve),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a->ComputeSharedSecret(std::string(65, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(a->ComputeSharedSecret(""), StatusIs(absl::StatusCode::kInvalidArgument));
  SslUniquePtr<EVP_PKEY> k1(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "secp256k1"));
  EXPECT_THAT(a->ComputeSharedSecret(::smcrypt::testing::RefSpki(k1.get())),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "key is EC secp256k1, algorithm needs EC P-256"));
  EXPECT_THAT(EcdhP256OpenSsl::New(std::string(32, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace smcrypt
