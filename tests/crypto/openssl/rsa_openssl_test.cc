// RSA-PSS and RSA-OAEP (SHA-256, MGF1-SHA-256, 32-byte salt, empty label): round trips,
// cross-checks with plain OpenSSL EVP both ways, tampering, the OAEP plaintext limit and
// modulus-size checks. Keys are generated once per suite (RSA key generation is slow).
#include <memory>
#include <string>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "crypto/openssl/openssl_primitives.h"
#include "crypto/openssl/rsa_oaep_decrypt_openssl.h"
#include "crypto/openssl/rsa_oaep_encrypt_openssl.h"
#include "crypto/openssl/rsa_pss_sign_openssl.h"
#include "crypto/openssl/rsa_pss_verify_openssl.h"
#include "gtest/gtest.h"
#include "tests/crypto/openssl/openssl_test_util.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::IsOkAndHolds;
using ::smcrypt::testing::RefPrivateKey;
using ::smcrypt::testing::RefPublicKey;
using ::smcrypt::testing::StatusIs;
using ::smcrypt::testing::U8;
using ::smcrypt::testing::View;
using ::testing::HasSubstr;

struct RsaKeys {
  KeyPair k2048;
  KeyPair k3072;
};

const RsaKeys& Keys() {
  static const RsaKeys* keys = [] {
    auto* k = new RsaKeys;
    k->k2048 = *GenerateKeyPairOpenSsl(Algorithm::kRsa2048Pss);
    // A fixed 3072-bit key (tests/testdata, made with `openssl genpkey`) read through
    // the PEM path; generating one per run takes seconds.
    const std::string pem = ::smcrypt::testing::ReadTestData("openssl_rsa3072_pkcs8.pem");
    SslUniquePtr<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    SslUniquePtr<EVP_PKEY> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    const std::string der = ::smcrypt::testing::RefPkcs8(key.get());
    k->k3072.private_key_der = SecretData(der.begin(), der.end());
    k->k3072.public_key_der = *PublicKeyFromPrivateOpenSsl(Algorithm::kRsa3072Oaep, pem);
    return k;
  }();
  return *keys;
}

void SetPss(EVP_PKEY_CTX* pctx, int salt_len) {
  ASSERT_EQ(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING), 1);
  ASSERT_EQ(EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()), 1);
  ASSERT_EQ(EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, salt_len), 1);
}

bool RefPssVerify(EVP_PKEY* key, absl::string_view sig, absl::string_view msg) {
  SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  EXPECT_EQ(EVP_DigestVerifyInit(ctx.get(), &pctx, EVP_sha256(), nullptr, key), 1);
  SetPss(pctx, 32);
  return EVP_DigestVerify(ctx.get(), U8(sig), sig.size(), U8(msg), msg.size()) == 1;
}

std::string RefPssSign(EVP_PKEY* key, absl::string_view msg, int salt_len) {
  SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  EXPECT_EQ(EVP_DigestSignInit(ctx.get(), &pctx, EVP_sha256(), nullptr, key), 1);
  SetPss(pctx, salt_len);
  std::string sig(EVP_PKEY_get_size(key), '\0');
  size_t len = sig.size();
  EXPECT_EQ(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, U8(msg),
                           msg.size()),
            1);
  sig.resize(len);
  return sig;
}

std::string RefOaep(EVP_PKEY* key, absl::string_view in, bool encrypt, const EVP_MD* md) {
  SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new(key, nullptr));
  EXPECT_EQ(encrypt ? EVP_PKEY_encrypt_init(ctx.get()) : EVP_PKEY_decrypt_init(ctx.get()), 1);
  EXPECT_EQ(EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING), 1);
  EXPECT_EQ(EVP_PKEY_CTX_set_rsa_oaep_md(ctx.get(), md), 1);
  EXPECT_EQ(EVP_PKEY_CTX_set_rsa_mgf1_md(ctx.get(), md), 1);
  std::string out(EVP_PKEY_get_size(key), '\0');
  size_t len = out.size();
  int rc = encrypt ? EVP_PKEY_encrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()),
                                      &len, U8(in), in.size())
                   : EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()),
                                      &len, U8(in), in.size());
  EXPECT_EQ(rc, 1);
  out.resize(len);
  return out;
}

struct RsaCase {
  const char* name;
  Algorithm pss;
  Algorithm oaep;
  const KeyPair& (*keys)();
  size_t k;
};

class RsaOpenSslTest : public ::testing::TestWithParam<RsaCase> {};

TEST_P(RsaOpenSslTest, PssCrossChecksWithPlainEvp) {
  const RsaCase& c = GetParam();
  const KeyPair& pair = c.keys();
  SslUniquePtr<EVP_PKEY> ref_priv = RefPrivateKey(pair.private_key_der);
  SslUniquePtr<EVP_PKEY> ref_pub = RefPublicKey(pair.public_key_der);
  ASSERT_OK_AND_ASSIGN(auto signer, RsaPssSignOpenSsl::New(c.pss, View(pair.private_key_der)));
  ASSERT_OK_AND_ASSIGN(auto verifier, RsaPssVerifyOpenSsl::New(c.pss, pair.public_key_der));
  const std::string msg = "RSA-PSS message";
  ASSERT_OK_AND_ASSIGN(std::string sig, signer->Sign(msg));
  EXPECT_EQ(sig.size(), c.k);
  EXPECT_TRUE(RefPssVerify(ref_pub.get(), sig, msg));
  EXPECT_THAT(verifier->Verify(sig, msg), IsOk());
  EXPECT_THAT(verifier->Verify(RefPssSign(ref_priv.get(), msg, 32), msg), IsOk());
  // A salt of another length is rejected (the salt length is fixed at 32).
  EXPECT_THAT(verifier->Verify(RefPssSign(ref_priv.get(), msg, 20), msg),
              StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
  // Randomized salt.
  ASSERT_OK_AND_ASSIGN(std::string sig2, signer->Sign(msg));
  EXPECT_NE(sig, sig2);
  // Tampering.
  EXPECT_THAT(verifier->Verify(sig, "RSA-PSS messagf"),
              StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
  for (size_t bit = 0; bit < sig.size() * 8; bit += 61) {
    std::string bad = sig;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_THAT(verifier->Verify(bad, msg),
                StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"))
        << "bit " << bit;
  }
  EXPECT_THAT(verifier->Verify(std::string(c.k, '\xff'), msg),  // ≥ n
              StatusIs(absl::StatusCode::kUnauthenticated, "signature invalid"));
  EXPECT_THAT(verifier->Verify(sig.substr(1), msg),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("signature must be")));
  EXPECT_THAT(verifier->Verify(sig + "x", msg), StatusIs(absl::StatusCode::kInvalidArgument));
  // Prehashed.
  ASSERT_OK_AND_ASSIGN(auto pre_signer, NewPublicKeySignOpenSsl(c.pss, View(pair.private_key_der),
                                                                SignatureEncoding::kDer, true));
  std::string digest(32, '\0');
  EVP_Digest(msg.data(), msg.size(), reinterpret_cast<unsigned char*>(digest.data()), nullptr,
             EVP_sha256(), nullptr);
  ASSERT_OK_AND_ASSIGN(std::string pre_sig, pre_signer->Sign(digest));
  EXPECT_TRUE(RefPssVerify(ref_pub.get(), pre_sig, msg));
  EXPECT_THAT(pre_signer->Sign(msg), StatusIs(absl::StatusCode::kInvalidArgument));
  // No raw encoding for RSA.
  EXPECT_THAT(NewPublicKeySignOpenSsl(c.pss, View(pair.private_key_der), SignatureEncoding::kRaw),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(RsaOpenSslTest, OaepRoundTripsAndCrossChecks) {
  const RsaCase& c = GetParam();
  const KeyPair& pair = c.keys();
  SslUniquePtr<EVP_PKEY> ref_priv = RefPrivateKey(pair.private_key_der);
  SslUniquePtr<EVP_PKEY> ref_pub = RefPublicKey(pair.public_key_der);
  ASSERT_OK_AND_ASSIGN(auto enc, RsaOaepEncryptOpenSsl::New(c.oaep, pair.public_key_der));
  ASSERT_OK_AND_ASSIGN(auto dec, RsaOaepDecryptOpenSsl::New(c.oaep, View(pair.private_key_der)));
  const size_t limit = c.k - 66;
  for (size_t len : {size_t{0}, size_t{1}, size_t{32}, limit}) {
    const std::string pt(len, 'p');
    ASSERT_OK_AND_ASSIGN(std::string ct, enc->Encrypt(pt));
    EXPECT_EQ(ct.size(), c.k);
    EXPECT_THAT(dec->Decrypt(ct), IsOkAndHolds(pt));
    EXPECT_EQ(RefOaep(ref_priv.get(), ct, false, EVP_sha256()), pt);
    EXPECT_THAT(dec->Decrypt(RefOaep(ref_pub.get(), pt, true, EVP_sha256())), IsOkAndHolds(pt));
  }
  EXPECT_THAT(enc->Encrypt(std::string(limit + 1, 'p')),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       absl::StrCat(absl::StrCat("RSA-", c.k * 8, "-OAEP"),
                                    " plaintext must be at most ", limit, " bytes, got ",
                                    limit + 1)));
  ASSERT_OK_AND_ASSIGN(std::string ct, enc->Encrypt("secret"));
  for (size_t bit = 0; bit < ct.size() * 8; bit += 97) {
    std::string bad = ct;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_THAT(dec->Decrypt(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                            "decryption failed"))
        << "bit " << bit;
  }
  // OAEP with SHA-1 made by OpenSSL is not our scheme: one generic failure.
  EXPECT_THAT(dec->Decrypt(RefOaep(ref_pub.get(), "secret", true, EVP_sha1())),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_THAT(dec->Decrypt(ct.substr(1)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ciphertext must be")));
  EXPECT_THAT(dec->Decrypt(""), StatusIs(absl::StatusCode::kInvalidArgument));
}

const KeyPair& Keys2048() { return Keys().k2048; }
const KeyPair& Keys3072() { return Keys().k3072; }

INSTANTIATE_TEST_SUITE_P(Sizes, RsaOpenSslTest,
                         ::testing::Values(RsaCase{"RSA2048", Algorithm::kRsa2048Pss,
                                                   Algorithm::kRsa2048Oaep, &Keys2048, 256},
                                           RsaCase{"RSA3072", Algorithm::kRsa3072Pss,
                                                   Algorithm::kRsa3072Oaep, &Keys3072, 384}),
                         [](const ::testing::TestParamInfo<RsaCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(RsaKeySizeTest, ModulusSizeMustMatchAlgorithm) {
  const auto pre = absl::StatusCode::kFailedPrecondition;
  EXPECT_THAT(RsaPssSignOpenSsl::New(Algorithm::kRsa2048Pss, View(Keys3072().private_key_der)),
              StatusIs(pre, "key is RSA-3072, algorithm needs RSA-2048"));
  EXPECT_THAT(RsaPssVerifyOpenSsl::New(Algorithm::kRsa3072Pss, Keys2048().public_key_der),
              StatusIs(pre, "key is RSA-2048, algorithm needs RSA-3072"));
  EXPECT_THAT(RsaOaepEncryptOpenSsl::New(Algorithm::kRsa2048Oaep, Keys3072().public_key_der),
              StatusIs(pre, "key is RSA-3072, algorithm needs RSA-2048"));
  EXPECT_THAT(RsaOaepDecryptOpenSsl::New(Algorithm::kRsa3072Oaep, View(Keys2048().private_key_der)),
              StatusIs(pre, "key is RSA-2048, algorithm needs RSA-3072"));
  // A 1024-bit key is named by its size.
  SslUniquePtr<EVP_PKEY> small(EVP_RSA_gen(1024));
  EXPECT_THAT(RsaPssVerifyOpenSsl::New(Algorithm::kRsa2048Pss,
                                       ::smcrypt::testing::RefSpki(small.get())),
              StatusIs(pre, "key is RSA-1024, algorithm needs RSA-2048"));
  // PSS keys do not go to OAEP-only factories and vice versa by algorithm kind.
  EXPECT_THAT(RsaPssSignOpenSsl::New(Algorithm::kRsa2048Oaep, View(Keys2048().private_key_der)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewRsaOaepEncryptOpenSsl(Algorithm::kRsa2048Pss, Keys2048().public_key_der),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace smcrypt
