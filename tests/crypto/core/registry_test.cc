// Tests of the Algorithm-keyed factories: every algorithm through its interface, key
// formats, wrong-kind and wrong-family errors, and the library example of docs/languages.md.
#include <gtest/gtest.h>

#include <string>

#include "smcrypt/cpu.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

// ---- The example of docs/languages.md, compiled and run as written there. ----
absl::Status SignAndVerify(absl::string_view message) {
  auto pair = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kSm2);
  if (!pair.ok()) return pair.status();
  auto signer = smcrypt::NewPublicKeySign(
      smcrypt::Algorithm::kSm2, smcrypt::SecretDataAsStringView(pair->private_key_der));
  if (!signer.ok()) return signer.status();
  auto signature = (*signer)->Sign(message);
  if (!signature.ok()) return signature.status();
  auto verifier = smcrypt::NewPublicKeyVerify(smcrypt::Algorithm::kSm2, pair->public_key_der);
  if (!verifier.ok()) return verifier.status();
  return (*verifier)->Verify(*signature, message);  // OK, or kUnauthenticated
}

absl::StatusOr<std::string> Seal(absl::string_view key, absl::string_view nonce,
                                 absl::string_view plaintext, absl::string_view aad) {
  auto aead = smcrypt::NewAead(smcrypt::Algorithm::kSm4Gcm, key);
  if (!aead.ok()) return aead.status();
  return (*aead)->Seal(nonce, plaintext, aad);
}

TEST(ReadmeExampleTest, RunsAsDocumented) {
  EXPECT_THAT(SignAndVerify("message digest"), IsOk());
  // RFC 8998 Appendix A.1.
  auto sealed = Seal(HexToBytes("0123456789ABCDEFFEDCBA9876543210"),
                     HexToBytes("00001234567800000000ABCD"),
                     HexToBytes("AAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBCCCCCCCCCCCCCCCCDDDDDDDDDDDDDDDD"
                                "EEEEEEEEEEEEEEEEFFFFFFFFFFFFFFFFEEEEEEEEEEEEEEEEAAAAAAAAAAAAAAAA"),
                     HexToBytes("FEEDFACEDEADBEEFFEEDFACEDEADBEEFABADDAD2"));
  ASSERT_THAT(sealed, IsOk());
  EXPECT_EQ(testing::BytesToHex(*sealed),
            "17f399f08c67d5ee19d0dc9969c4bb7d5fd46fd3756489069157b282bb200735"
            "d82710ca5c22f0ccfa7cbf93d496ac15a56834cbcf98c397b4024a2691233b8d"
            "83de3541e4c2b58177e065a9bf7b62ec");
}

// ---- Every algorithm through the registry. ----
TEST(RegistryTest, HashesMatchKnownAnswers) {
  ASSERT_OK_AND_ASSIGN(auto sm3, NewHash(Algorithm::kSm3));
  sm3->Update("abc");
  EXPECT_EQ(testing::BytesToHex(sm3->Finish()),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
  ASSERT_OK_AND_ASSIGN(auto sha, NewHash(Algorithm::kSha256));
  sha->Update("abc");
  EXPECT_EQ(testing::BytesToHex(sha->Finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(RegistryTest, SymmetricRoundTrips) {
  const std::string iv(16, '\x07');
  const std::string nonce(12, '\x09');
  for (Algorithm alg : {Algorithm::kSm4Ecb, Algorithm::kSm4Cbc, Algorithm::kSm4Ctr,
                        Algorithm::kAes128Ecb, Algorithm::kAes128Cbc, Algorithm::kAes128Ctr,
                        Algorithm::kAes256Ecb, Algorithm::kAes256Cbc, Algorithm::kAes256Ctr}) {
    SCOPED_TRACE(AlgorithmName(alg));
    const std::string key(SymmetricKeySize(alg), '\x11');
    ASSERT_OK_AND_ASSIGN(auto cipher, NewCipher(alg, key));
    const std::string use_iv = cipher->iv_size() ? iv : "";
    ASSERT_OK_AND_ASSIGN(std::string ct, cipher->Encrypt(use_iv, "attack at dawn"));
    ASSERT_OK_AND_ASSIGN(std::string pt, cipher->Decrypt(use_iv, ct));
    EXPECT_EQ(pt, "attack at dawn");
  }
  for (Algorithm alg : {Algorithm::kSm4Gcm, Algorithm::kSm4Ccm, Algorithm::kAes128Gcm,
                        Algorithm::kAes256Gcm}) {
    SCOPED_TRACE(AlgorithmName(alg));
    const std::string key(SymmetricKeySize(alg), '\x22');
    ASSERT_OK_AND_ASSIGN(auto aead, NewAead(alg, key));
    EXPECT_EQ(aead->tag_size(), 16u);
    ASSERT_OK_AND_ASSIGN(std::string ct, aead->Seal(nonce, "attack at dawn", "aad"));
    ASSERT_OK_AND_ASSIGN(std::string pt, aead->Open(nonce, ct, "aad"));
    EXPECT_EQ(pt, "attack at dawn");
    EXPECT_THAT(aead->Open(nonce, ct, "AAD"),
                StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  }
  for (Algorithm alg : {Algorithm::kHmacSm3, Algorithm::kHmacSha256}) {
    ASSERT_OK_AND_ASSIGN(auto mac, NewMac(alg, "key"));
    ASSERT_OK_AND_ASSIGN(std::string tag, mac->ComputeMac("data"));
    EXPECT_THAT(mac->VerifyMac(tag, "data"), IsOk());
    EXPECT_THAT(mac->VerifyMac(tag, "Data"), StatusIs(absl::StatusCode::kInvalidArgument));
  }
}

TEST(RegistryTest, SignaturesRoundTripInEveryEncoding) {
  for (Algorithm alg : {Algorithm::kSm2, Algorithm::kEcdsaP256, Algorithm::kEcdsaSecp256k1,
                        Algorithm::kRsa2048Pss}) {
    SCOPED_TRACE(AlgorithmName(alg));
    ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPair(alg));
    const std::string private_der(SecretDataAsStringView(pair.private_key_der));
    ASSERT_OK_AND_ASSIGN(std::string derived, PublicKeyFromPrivate(alg, private_der));
    EXPECT_EQ(derived, pair.public_key_der);
    const std::string private_pem = PemEncode("PRIVATE KEY", private_der);
    const std::string public_pem = PemEncode("PUBLIC KEY", pair.public_key_der);
    for (SignatureEncoding enc : {SignatureEncoding::kDer, SignatureEncoding::kRaw}) {
      if (alg == Algorithm::kRsa2048Pss && enc == SignatureEncoding::kRaw) continue;
      SignatureOptions options;
      options.encoding = enc;
      ASSERT_OK_AND_ASSIGN(auto signer, NewPublicKeySign(alg, private_pem, options));
      ASSERT_OK_AND_ASSIGN(auto verifier, NewPublicKeyVerify(alg, public_pem, options));
      ASSERT_OK_AND_ASSIGN(std::string sig, signer->Sign("message"));
      if (enc == SignatureEncoding::kRaw) EXPECT_EQ(sig.size(), 64u);
      EXPECT_THAT(verifier->Verify(sig, "message"), IsOk());
      EXPECT_THAT(verifier->Verify(sig, "massage"),
                  StatusIs(absl::StatusCode::kUnauthenticated));
    }
  }
}

TEST(RegistryTest, Sm2UserIdIsBoundIntoTheSignature) {
  ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPair(Algorithm::kSm2));
  SignatureOptions alice;
  alice.user_id = "alice@example.com";
  ASSERT_OK_AND_ASSIGN(auto signer, NewPublicKeySign(Algorithm::kSm2,
                                                     SecretDataAsStringView(pair.private_key_der),
                                                     alice));
  ASSERT_OK_AND_ASSIGN(std::string sig, signer->Sign("m"));
  ASSERT_OK_AND_ASSIGN(auto as_alice, NewPublicKeyVerify(Algorithm::kSm2, pair.public_key_der, alice));
  ASSERT_OK_AND_ASSIGN(auto as_default, NewPublicKeyVerify(Algorithm::kSm2, pair.public_key_der));
  EXPECT_THAT(as_alice->Verify(sig, "m"), IsOk());
  EXPECT_THAT(as_default->Verify(sig, "m"), StatusIs(absl::StatusCode::kUnauthenticated));
  SignatureOptions too_long;
  too_long.user_id = std::string(8192, 'a');
  EXPECT_THAT(NewPublicKeyVerify(Algorithm::kSm2, pair.public_key_der, too_long),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(RegistryTest, PublicKeyEncryptionRoundTrips) {
  for (Algorithm alg : {Algorithm::kSm2, Algorithm::kRsa2048Oaep}) {
    SCOPED_TRACE(AlgorithmName(alg));
    ASSERT_OK_AND_ASSIGN(KeyPair pair, GenerateKeyPair(alg));
    for (Sm2CiphertextFormat format : {Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kC1C2C3,
                                       Sm2CiphertextFormat::kDer}) {
      PublicKeyEncryptionOptions options;
      options.sm2_format = format;
      ASSERT_OK_AND_ASSIGN(auto enc, NewPublicKeyEncrypt(alg, pair.public_key_der, options));
      ASSERT_OK_AND_ASSIGN(auto dec, NewPublicKeyDecrypt(
                                         alg, SecretDataAsStringView(pair.private_key_der), options));
      ASSERT_OK_AND_ASSIGN(std::string ct, enc->Encrypt("secret"));
      ASSERT_OK_AND_ASSIGN(std::string pt, dec->Decrypt(ct));
      EXPECT_EQ(pt, "secret");
      std::string tampered = ct;
      tampered.back() ^= 1;
      EXPECT_THAT(dec->Decrypt(tampered), StatusIs(absl::StatusCode::kInvalidArgument));
    }
  }
}

// ---- Errors. ----
TEST(RegistryTest, WrongKindIsInvalidArgument) {
  EXPECT_THAT(NewHash(Algorithm::kSm4Gcm), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewMac(Algorithm::kSm3, "k"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewCipher(Algorithm::kSm4Gcm, std::string(16, 'k')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewAead(Algorithm::kSm4Cbc, std::string(16, 'k')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(GenerateKeyPair(Algorithm::kSm3), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewPublicKeyEncrypt(Algorithm::kEcdsaP256, "x"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(RegistryTest, KeyOfAnotherFamilyIsFailedPrecondition) {
  ASSERT_OK_AND_ASSIGN(KeyPair sm2, GenerateKeyPair(Algorithm::kSm2));
  ASSERT_OK_AND_ASSIGN(KeyPair p256, GenerateKeyPair(Algorithm::kEcdsaP256));
  ASSERT_OK_AND_ASSIGN(KeyPair rsa, GenerateKeyPair(Algorithm::kRsa2048Oaep));
  EXPECT_THAT(NewPublicKeySign(Algorithm::kSm2, SecretDataAsStringView(p256.private_key_der)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("EC P-256")));
  EXPECT_THAT(NewPublicKeyVerify(Algorithm::kSm2, rsa.public_key_der),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("RSA")));
  EXPECT_THAT(NewPublicKeyEncrypt(Algorithm::kSm2, p256.public_key_der),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(NewPublicKeySign(Algorithm::kEcdsaP256, SecretDataAsStringView(sm2.private_key_der)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("SM2")));
  EXPECT_THAT(NewPublicKeyVerify(Algorithm::kEcdsaSecp256k1, p256.public_key_der),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(NewPublicKeyEncrypt(Algorithm::kRsa3072Oaep, rsa.public_key_der),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(RegistryTest, GarbageKeysAreInvalidArgument) {
  for (Algorithm alg : {Algorithm::kSm2, Algorithm::kEcdsaP256, Algorithm::kRsa2048Pss}) {
    SCOPED_TRACE(AlgorithmName(alg));
    EXPECT_THAT(NewPublicKeySign(alg, "not a key"), StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(NewPublicKeyVerify(alg, ""), StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(NewPublicKeyVerify(alg, "-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----\n"),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
  // A PEM block of the wrong kind for SM2.
  EXPECT_THAT(NewPublicKeySign(Algorithm::kSm2, PemEncode("PUBLIC KEY", std::string(10, 'x'))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PRIVATE KEY")));
}

TEST(RegistryTest, ActiveKernelsNameEverySmAlgorithm) {
  auto kernels = ActiveKernels();
  ASSERT_EQ(kernels.size(), 3u);
  for (const auto& k : kernels) {
    EXPECT_FALSE(k.kernel.empty()) << k.algorithm;
  }
}

}  // namespace
}  // namespace smcrypt
