// hpke_sm_suite_test.cc — independent cross-checks of the SM suite's building blocks:
// HKDF-SM3 against OpenSSL's HKDF with SM3 and against RFC 5869's steps written out on
// OpenSSL's HMAC-SM3; DHKEM(SM2)'s DH and pk(sk) against OpenSSL's EC_POINT_mul on
// sm2p256v1; SM4-GCM against smcrypt's Sm4 Aead and Botan 2's SM4/GCM. Random inputs come
// from a printed seed (SMCRYPT_TEST_SEED replays).
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/obj_mac.h>

#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/hpke/hpke_internal.h"
#include "crypto/sm2/sm2_ecdh.h"
#include "gtest/gtest.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm4.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

#if defined(SMCRYPT_HAVE_BOTAN)
#include <botan/aead.h>
#include <botan/exceptn.h>
#endif

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::TestSeed;

std::string Hex(const SecretData& s) { return BytesToHex(SecretDataAsStringView(s)); }

// ---- OpenSSL oracles -----------------------------------------------------------------

std::string OpenSslHkdfSm3(int mode, absl::string_view salt, absl::string_view key,
                           absl::string_view info, size_t length) {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  char digest[] = "SM3";
  OSSL_PARAM params[6];
  size_t n = 0;
  params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  params[n++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
  params[n++] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
                                                  const_cast<char*>(key.data()), key.size());
  if (!salt.empty()) {
    params[n++] = OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_SALT, const_cast<char*>(salt.data()), salt.size());
  }
  if (!info.empty()) {
    params[n++] = OSSL_PARAM_construct_octet_string(
        OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()), info.size());
  }
  params[n] = OSSL_PARAM_construct_end();
  std::string out(length, '\0');
  const int ok = EVP_KDF_derive(ctx, reinterpret_cast<unsigned char*>(&out[0]), length, params);
  EVP_KDF_CTX_free(ctx);
  EVP_KDF_free(kdf);
  EXPECT_EQ(ok, 1) << "OpenSSL HKDF-SM3";
  return out;
}

std::string OpenSslHmacSm3(absl::string_view key, absl::string_view data) {
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  char digest[] = "SM3";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  std::string out(32, '\0');
  size_t len = 0;
  const bool ok =
      EVP_MAC_init(ctx, reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                   params) == 1 &&
      EVP_MAC_update(ctx, reinterpret_cast<const unsigned char*>(data.data()), data.size()) ==
          1 &&
      EVP_MAC_final(ctx, reinterpret_cast<unsigned char*>(&out[0]), &len, out.size()) == 1;
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
  EXPECT_TRUE(ok && len == 32) << "OpenSSL HMAC-SM3";
  return out;
}

// Rfc5869Sm3 writes out RFC 5869 §2.2–2.3 on OpenSSL's HMAC-SM3.
std::string Rfc5869ExtractSm3(absl::string_view salt, absl::string_view ikm) {
  const std::string zero(32, '\0');
  return OpenSslHmacSm3(salt.empty() ? absl::string_view(zero) : salt, ikm);
}
std::string Rfc5869ExpandSm3(absl::string_view prk, absl::string_view info, size_t length) {
  std::string okm, t;
  for (int i = 1; okm.size() < length; ++i) {
    t = OpenSslHmacSm3(prk, absl::StrCat(t, info, std::string(1, static_cast<char>(i))));
    okm += t;
  }
  return okm.substr(0, length);
}

TEST(HpkeSmSuiteTest, HkdfSm3MatchesOpenSslAndRfc5869Steps) {
  const uint64_t seed = TestSeed();
  std::cout << "HKDF-SM3 vs OpenSSL, seed " << seed << " (set SMCRYPT_TEST_SEED to replay)\n";
  std::mt19937_64 rng(seed);
  const internal::HpkeKdf& kdf = internal::kHpkeKdfHkdfSm3Desc;
  EXPECT_EQ(kdf.nh, 32u);
  for (size_t length : {1, 16, 31, 32, 33, 64, 65, 100, 255 * 32}) {
    for (size_t salt_len : {0, 1, 32, 64, 65, 100}) {
      SCOPED_TRACE(absl::StrCat("length ", length, " salt ", salt_len));
      const std::string salt = RandomBytes(rng, salt_len);
      const std::string ikm = RandomBytes(rng, 1 + rng() % 80);
      const std::string info = RandomBytes(rng, rng() % 60);
      ASSERT_OK_AND_ASSIGN(SecretData prk, kdf.extract(salt, ikm));
      EXPECT_EQ(Hex(prk), BytesToHex(OpenSslHkdfSm3(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, salt, ikm,
                                                    "", 32)));
      EXPECT_EQ(Hex(prk), BytesToHex(Rfc5869ExtractSm3(salt, ikm)));
      ASSERT_OK_AND_ASSIGN(SecretData okm,
                           kdf.expand(SecretDataAsStringView(prk), info, length));
      EXPECT_EQ(Hex(okm), BytesToHex(OpenSslHkdfSm3(EVP_KDF_HKDF_MODE_EXPAND_ONLY, "",
                                                    SecretDataAsStringView(prk), info,
                                                    length)));
      EXPECT_EQ(Hex(okm), BytesToHex(Rfc5869ExpandSm3(SecretDataAsStringView(prk), info,
                                                      length)));
    }
  }
  // Out-of-range lengths.
  const std::string prk(32, 'k');
  EXPECT_THAT(kdf.expand(prk, "", 0), testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(kdf.expand(prk, "", 255 * 32 + 1),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

// ---- SM2 ECDH against EC_POINT_mul -----------------------------------------------------

struct EcGroupDeleter {
  void operator()(EC_GROUP* g) const { EC_GROUP_free(g); }
};
struct EcPointDeleter {
  void operator()(EC_POINT* p) const { EC_POINT_free(p); }
};
struct BnDeleter {
  void operator()(BIGNUM* b) const { BN_free(b); }
};

std::string PointBytes(const EC_GROUP* group, const EC_POINT* p) {
  std::string out(65, '\0');
  EXPECT_EQ(EC_POINT_point2oct(group, p, POINT_CONVERSION_UNCOMPRESSED,
                               reinterpret_cast<unsigned char*>(&out[0]), out.size(), nullptr),
            65u);
  return out;
}

TEST(HpkeSmSuiteTest, Sm2EcdhMatchesOpenSslPointMul) {
  const uint64_t seed = TestSeed();
  std::cout << "SM2 ECDH vs OpenSSL, seed " << seed << " (set SMCRYPT_TEST_SEED to replay)\n";
  std::mt19937_64 rng(seed);
  std::unique_ptr<EC_GROUP, EcGroupDeleter> group(EC_GROUP_new_by_curve_name(NID_sm2));
  ASSERT_NE(group, nullptr);
  const internal::HpkeKem& kem = internal::kHpkeKemSm2Desc;
  int done = 0;
  for (int i = 0; done < 24 && i < 100; ++i) {
    const std::string d = RandomBytes(rng, 32);
    const std::string e = RandomBytes(rng, 32);
    auto dk = Sm2PrivateKey::FromScalar(d);
    auto ek = Sm2PrivateKey::FromScalar(e);
    if (!dk.ok() || !ek.ok()) continue;  // outside [1, n − 2]
    ++done;
    std::unique_ptr<BIGNUM, BnDeleter> dbn(
        BN_bin2bn(reinterpret_cast<const unsigned char*>(d.data()), 32, nullptr));
    std::unique_ptr<BIGNUM, BnDeleter> ebn(
        BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()), 32, nullptr));
    std::unique_ptr<EC_POINT, EcPointDeleter> dg(EC_POINT_new(group.get()));
    std::unique_ptr<EC_POINT, EcPointDeleter> eg(EC_POINT_new(group.get()));
    std::unique_ptr<EC_POINT, EcPointDeleter> shared(EC_POINT_new(group.get()));
    ASSERT_EQ(EC_POINT_mul(group.get(), dg.get(), dbn.get(), nullptr, nullptr, nullptr), 1);
    ASSERT_EQ(EC_POINT_mul(group.get(), eg.get(), ebn.get(), nullptr, nullptr, nullptr), 1);
    ASSERT_EQ(EC_POINT_mul(group.get(), shared.get(), nullptr, eg.get(), dbn.get(), nullptr), 1);
    const std::string want_pk = PointBytes(group.get(), dg.get());
    const std::string want_x = PointBytes(group.get(), shared.get()).substr(1, 32);

    // pk(sk) of the KEM.
    ASSERT_OK_AND_ASSIGN(std::string pk, kem.public_key(d));
    EXPECT_EQ(BytesToHex(pk), BytesToHex(want_pk));
    // Sm2Ecdh and the KEM's DH.
    ASSERT_OK_AND_ASSIGN(SecretData x, Sm2Ecdh(*dk, ek->public_key()));
    EXPECT_EQ(Hex(x), BytesToHex(want_x));
    ASSERT_OK_AND_ASSIGN(SecretData x2, kem.dh(d, PointBytes(group.get(), eg.get())));
    EXPECT_EQ(Hex(x2), BytesToHex(want_x));
  }
  EXPECT_EQ(done, 24);
}

TEST(HpkeSmSuiteTest, Sm2KemDhRejectsInvalidPoints) {
  const internal::HpkeKem& kem = internal::kHpkeKemSm2Desc;
  const std::string d(31, '\0');
  const std::string sk = d + "\x07";
  // Not on the curve: G with the last byte of y changed.
  ASSERT_OK_AND_ASSIGN(std::string g, kem.public_key(std::string(31, '\0') + "\x01"));
  std::string bad = g;
  bad[64] ^= 1;
  EXPECT_THAT(kem.dh(sk, bad), testing::StatusIs(absl::StatusCode::kInvalidArgument));
  // Coordinates ≥ p, the all-zero "point", wrong prefix, wrong length.
  EXPECT_THAT(kem.dh(sk, "\x04" + std::string(64, '\xff')),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(kem.dh(sk, "\x04" + std::string(64, '\0')),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  std::string prefix = g;
  prefix[0] = 0x05;
  EXPECT_THAT(kem.dh(sk, prefix), testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(kem.dh(sk, g.substr(0, 33)), testing::StatusIs(absl::StatusCode::kInvalidArgument));
  // Out-of-range scalars: 0, n − 1 (SM2 private keys are [1, n − 2]), n, a short one.
  EXPECT_THAT(kem.dh(std::string(32, '\0'), g),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
  const std::string n_bytes = testing::HexToBytes(
      "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123");
  std::string n_minus_1 = n_bytes, n_minus_2 = n_bytes;
  n_minus_1[31] = static_cast<char>(0x22);
  n_minus_2[31] = static_cast<char>(0x21);
  EXPECT_THAT(kem.dh(n_minus_1, g), testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                      "SM2 private key out of range [1, n-2]"));
  EXPECT_THAT(kem.dh(n_bytes, g), testing::StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(kem.dh(sk.substr(1), g), testing::StatusIs(absl::StatusCode::kInvalidArgument));
  // n − 2 is in range: (n − 2)·G = −2G, so x((n − 2)·G) = x(2G).
  ASSERT_OK_AND_ASSIGN(SecretData x_n2, kem.dh(n_minus_2, g));
  ASSERT_OK_AND_ASSIGN(SecretData x_2, kem.dh(std::string(31, '\0') + "\x02", g));
  EXPECT_EQ(Hex(x_n2), Hex(x_2));
  EXPECT_THAT(kem.public_key(std::string(32, '\xff')),
              testing::StatusIs(absl::StatusCode::kInvalidArgument));
}

// The batched Encap key schedule (HMAC-SM3 in SM3 lanes) equals ExtractAndExpand then
// KeyScheduleBase message by message, for batch sizes around the lane counts and info of
// every length class (empty, within one block, several blocks).
TEST(HpkeSmSuiteTest, BatchedKeyScheduleEqualsSerial) {
  std::mt19937_64 rng(TestSeed());
  const internal::HpkeSuiteDesc& desc = internal::GetHpkeSuiteDesc(HpkeSuite::kSm2Sm3Sm4Gcm);
  for (size_t m : {1, 2, 7, 8, 9, 16, 17, 40}) {
    std::vector<std::string> dh, ctx, info;
    for (size_t i = 0; i < m; ++i) {
      dh.push_back(RandomBytes(rng, 32));
      ctx.push_back(RandomBytes(rng, 130));
      info.push_back(RandomBytes(rng, (i * 29) % 200));
    }
    std::vector<absl::string_view> dv(dh.begin(), dh.end()), cv(ctx.begin(), ctx.end()),
        iv(info.begin(), info.end());
    std::vector<internal::HpkeKeySchedule> got(m);
    ASSERT_OK(internal::EncapKeyScheduleManyHkdfSm3(desc, dv, cv, iv, absl::MakeSpan(got)));
    for (size_t i = 0; i < m; ++i) {
      ASSERT_OK_AND_ASSIGN(SecretData ss, internal::ExtractAndExpand(*desc.kem, dh[i], ctx[i]));
      ASSERT_OK_AND_ASSIGN(internal::HpkeKeySchedule want,
                           internal::KeyScheduleBase(desc, SecretDataAsStringView(ss), info[i]));
      EXPECT_EQ(BytesToHex(got[i].key_schedule_context), BytesToHex(want.key_schedule_context));
      EXPECT_EQ(Hex(got[i].secret), Hex(want.secret)) << "m " << m << " item " << i;
      EXPECT_EQ(Hex(got[i].key), Hex(want.key)) << "m " << m << " item " << i;
      EXPECT_EQ(Hex(got[i].base_nonce), Hex(want.base_nonce)) << "m " << m << " item " << i;
      EXPECT_TRUE(got[i].exporter_secret.empty());
    }
  }
  // The P-256 suite (HKDF-SHA256) and mismatched spans are refused.
  std::vector<internal::HpkeKeySchedule> one(1);
  const std::vector<absl::string_view> a = {"x"};
  EXPECT_THAT(internal::EncapKeyScheduleManyHkdfSm3(
                  internal::GetHpkeSuiteDesc(HpkeSuite::kP256Sha256Aes128Gcm), a, a, a,
                  absl::MakeSpan(one)),
              testing::StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(internal::EncapKeyScheduleManyHkdfSm3(desc, a, {}, a, absl::MakeSpan(one)),
              testing::StatusIs(absl::StatusCode::kInternal));
}

// ---- SM4-GCM ---------------------------------------------------------------------------

#if defined(SMCRYPT_HAVE_BOTAN)
std::string BotanSm4GcmSeal(absl::string_view key, absl::string_view nonce,
                            absl::string_view pt, absl::string_view aad) {
  auto mode = Botan::AEAD_Mode::create_or_throw("SM4/GCM(16)", Botan::ENCRYPTION);
  mode->set_key(reinterpret_cast<const uint8_t*>(key.data()), key.size());
  mode->set_associated_data(reinterpret_cast<const uint8_t*>(aad.data()), aad.size());
  mode->start(reinterpret_cast<const uint8_t*>(nonce.data()), nonce.size());
  Botan::secure_vector<uint8_t> buf(pt.begin(), pt.end());
  mode->finish(buf);
  return std::string(buf.begin(), buf.end());
}
#endif

TEST(HpkeSmSuiteTest, Sm4GcmAeadMatchesSm4AeadAndBotan) {
  const uint64_t seed = TestSeed();
  std::cout << "SM4-GCM AEAD vs Botan, seed " << seed << " (set SMCRYPT_TEST_SEED to replay)\n";
  std::mt19937_64 rng(seed);
  const internal::HpkeAead& aead_desc = internal::kHpkeAeadSm4GcmDesc;
  EXPECT_EQ(aead_desc.nk, 16u);
  EXPECT_EQ(aead_desc.nn, 12u);
  EXPECT_EQ(aead_desc.nt, 16u);
  for (size_t len : {0, 1, 15, 16, 17, 64, 1000}) {
    const std::string key = RandomBytes(rng, 16);
    const std::string nonce = RandomBytes(rng, 12);
    const std::string pt = RandomBytes(rng, len);
    const std::string aad = RandomBytes(rng, rng() % 40);
    ASSERT_OK_AND_ASSIGN(auto hpke_aead, aead_desc.new_aead(key));
    ASSERT_OK_AND_ASSIGN(auto sm4, NewSm4Gcm(key, 16));
    ASSERT_OK_AND_ASSIGN(std::string a, hpke_aead->Seal(nonce, pt, aad));
    ASSERT_OK_AND_ASSIGN(std::string b, sm4->Seal(nonce, pt, aad));
    EXPECT_EQ(BytesToHex(a), BytesToHex(b));
#if defined(SMCRYPT_HAVE_BOTAN)
    EXPECT_EQ(BytesToHex(a), BytesToHex(BotanSm4GcmSeal(key, nonce, pt, aad)));
#endif
  }
#if !defined(SMCRYPT_HAVE_BOTAN)
  GTEST_SKIP() << "Botan 2 not found; SM4-GCM checked against smcrypt's Sm4 Aead only";
#endif
}

}  // namespace
}  // namespace smcrypt
