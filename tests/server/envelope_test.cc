// Rewrap and GenerateDataKey in the engine, without gRPC (label unit;
// server/engine/crypto_engine_envelope.cc). Every algorithm Decrypt, PublicKeyDecrypt and
// HybridDecrypt serve with a keyring key: a ciphertext made under version 1 comes back
// under the primary (version 2) and opens there only; a tampered input is
// DECRYPTION_FAILED with no output; inline keys and fields an algorithm does not take are
// refused. Data keys of each spec under each wrapping open with Decrypt, PublicKeyDecrypt
// or HybridDecrypt and equal the plaintext key; AES-GCM results are checked against
// OpenSSL's EVP AES-GCM.
#include <openssl/evp.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/error_reason.h"
#include "server/engine/key_store.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt::server {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

const std::string kSm4V1(16, '1'), kSm4V2(16, '2');
const std::string kAes256V1(32, 'a'), kAes256V2(32, 'b');
const std::string kAes128(16, 'c');
// 48 bytes: whole blocks, so ECB and CBC run with padding NONE (Rewrap refuses PKCS#7).
const std::string kMessage = "envelope: the plaintext never leaves the server.";

// RewrapPadding: the padding a Rewrap of `alg` is tested with (ECB, CBC: NONE).
std::optional<Padding> RewrapPadding(Algorithm alg) {
  const CipherMode mode = CipherModeOf(alg);
  if (mode == CipherMode::kEcb || mode == CipherMode::kCbc) return Padding::kNone;
  return std::nullopt;
}

std::string PrivatePem(Algorithm alg, std::string* public_der) {
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(alg);
  EXPECT_TRUE(kp.ok()) << kp.status();
  *public_der = kp->public_key_der;
  return PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
}

// Keyring: versions 1 and 2 of an SM4 ("s"), SM4-XTS ("x"), AES-256 ("a"), SM2 ("m"),
// RSA-2048 ("r") and EC P-256 ("p") key, and one AES-128 key ("c"); version 2 is the
// newest, so the primary.
class EnvelopeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_envelope_XXXXXX").string();
    dir_ = new std::string(mkdtemp(tmpl.data()));
    publics_ = new std::vector<std::string>(2);
    Write("s.v1.pem", PemEncode("SM4 KEY", kSm4V1));
    Write("s.v2.pem", PemEncode("SM4 KEY", kSm4V2));
    Write("a.v1.pem", PemEncode("AES KEY", kAes256V1));
    Write("a.v2.pem", PemEncode("AES KEY", kAes256V2));
    Write("c.pem", PemEncode("AES KEY", kAes128));
    Write("x.v1.pem", PemEncode("SM4 KEY", std::string(16, 'x') + std::string(16, 'X')));
    Write("x.v2.pem", PemEncode("SM4 KEY", std::string(16, 'y') + std::string(16, 'Y')));
    std::string ignored;
    for (int v : {1, 2}) {
      Write(absl::StrCat("m.v", v, ".pem"), PrivatePem(Algorithm::kSm2, &(*publics_)[v - 1]));
      Write(absl::StrCat("r.v", v, ".pem"), PrivatePem(Algorithm::kRsa2048Oaep, &ignored));
      Write(absl::StrCat("p.v", v, ".pem"), PrivatePem(Algorithm::kEcdsaP256, &ignored));
    }
    absl::StatusOr<std::unique_ptr<KeyStore>> keys = KeyStore::LoadFromDirectory(*dir_);
    ASSERT_TRUE(keys.ok()) << keys.status();
    engine_ = new CryptoEngine(std::shared_ptr<const KeyStore>(*std::move(keys)),
                               EngineOptions{}, nullptr);
  }
  static void TearDownTestSuite() {
    delete engine_;
    fs::remove_all(*dir_);
    delete dir_;
    delete publics_;
  }
  static void Write(const std::string& name, const std::string& text) {
    std::ofstream(fs::path(*dir_) / name, std::ios::binary) << text;
    fs::permissions(fs::path(*dir_) / name, fs::perms::owner_read | fs::perms::owner_write);
  }
  const CryptoEngine& engine() { return *engine_; }
  // sm2_public: the SubjectPublicKeyInfo DER of "m" version 1 or 2.
  static const std::string& sm2_public(int version) { return (*publics_)[version - 1]; }

  static std::string* dir_;
  static std::vector<std::string>* publics_;
  static CryptoEngine* engine_;
};
std::string* EnvelopeTest::dir_ = nullptr;
std::vector<std::string>* EnvelopeTest::publics_ = nullptr;
CryptoEngine* EnvelopeTest::engine_ = nullptr;

// OpensslAesGcmOpen opens ciphertext ‖ tag with OpenSSL's EVP AES-GCM (16- or 32-byte
// key, any nonce length); nullopt when the tag does not verify.
std::optional<std::string> OpensslAesGcmOpen(const std::string& key, const std::string& nonce,
                                              const std::string& ct, const std::string& tag,
                                              const std::string& aad) {
  EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* cipher = key.size() == 32 ? EVP_aes_256_gcm() : EVP_aes_128_gcm();
  std::string out(ct.size() + 16, '\0');
  int len = 0, fin = 0;
  bool ok = EVP_DecryptInit_ex(c, cipher, nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, nonce.size(), nullptr) == 1 &&
            EVP_DecryptInit_ex(c, nullptr, nullptr,
                               reinterpret_cast<const uint8_t*>(key.data()),
                               reinterpret_cast<const uint8_t*>(nonce.data())) == 1 &&
            EVP_DecryptUpdate(c, nullptr, &len, reinterpret_cast<const uint8_t*>(aad.data()),
                              aad.size()) == 1 &&
            EVP_DecryptUpdate(c, reinterpret_cast<uint8_t*>(out.data()), &len,
                              reinterpret_cast<const uint8_t*>(ct.data()), ct.size()) == 1 &&
            EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, tag.size(),
                                const_cast<char*>(tag.data())) == 1 &&
            EVP_DecryptFinal_ex(c, reinterpret_cast<uint8_t*>(out.data()) + len, &fin) == 1;
  EVP_CIPHER_CTX_free(c);
  if (!ok) return std::nullopt;
  out.resize(len + fin);
  return out;
}

// ---- Rewrap, symmetric -----------------------------------------------------------------

struct SymmetricCase {
  Algorithm alg;
  const char* key_id;
  const char* aad;
  uint32_t tag_length;  // AEAD only; 0: 16
};

class RewrapSymmetricTest : public EnvelopeTest,
                            public ::testing::WithParamInterface<SymmetricCase> {
 protected:
  void CheckRoundTrip();
};

TEST_P(RewrapSymmetricTest, OpensUnderTheNamedVersionAndSealsUnderThePrimary) {
  CheckRoundTrip();
}

// The other unauthenticated modes: the same round trip (their tampering cannot be seen).
class RewrapOtherModesTest : public RewrapSymmetricTest {};

TEST_P(RewrapOtherModesTest, OpensUnderTheNamedVersionAndSealsUnderThePrimary) {
  CheckRoundTrip();
}

void RewrapSymmetricTest::CheckRoundTrip() {
  const SymmetricCase& c = GetParam();
  const bool aead = IsAeadAlgorithm(c.alg);
  SymmetricParams p;
  p.algorithm = c.alg;
  p.key = KeyInput::Id(c.key_id, 1);
  p.aad = c.aad;
  p.tag_length = c.tag_length;
  p.padding = RewrapPadding(c.alg);
  absl::StatusOr<SymmetricCiphertext> v1 = engine().Encrypt(p, kMessage);
  ASSERT_THAT(v1, IsOk());

  RewrapInput in;
  in.algorithm = c.alg;
  in.key = KeyInput::Id(c.key_id, 1);
  in.ciphertext = v1->ciphertext;
  in.nonce = v1->nonce;
  in.tag = v1->tag;
  in.aad = c.aad;
  in.padding = RewrapPadding(c.alg);
  absl::StatusOr<Rewrapped> r = engine().Rewrap(in);
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->source_key_version, 1u);
  EXPECT_EQ(r->key_version, 2u);
  EXPECT_EQ(r->nonce.size(), v1->nonce.size());
  if (CipherModeOf(c.alg) != CipherMode::kEcb) EXPECT_NE(r->nonce, v1->nonce);  // fresh
  EXPECT_EQ(r->tag.size(), v1->tag.size());
  EXPECT_EQ(r->ciphertext.find(kMessage), std::string::npos);

  // Opens under the primary, with the same aad; not under version 1.
  SymmetricParams d = p;
  d.key = KeyInput::Id(c.key_id, 2);
  d.nonce = r->nonce;
  EXPECT_EQ(*engine().Decrypt(d, r->ciphertext, r->tag), kMessage);
  d.key = KeyInput::Id(c.key_id, 1);
  absl::StatusOr<std::string> under_v1 = engine().Decrypt(d, r->ciphertext, r->tag);
  if (aead) {
    EXPECT_THAT(under_v1, StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
    d.key = KeyInput::Id(c.key_id, 2);
    d.aad = "another context";
    EXPECT_THAT(engine().Decrypt(d, r->ciphertext, r->tag),
                StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  } else {
    EXPECT_TRUE(!under_v1.ok() || *under_v1 != kMessage);
  }
  if (c.alg == Algorithm::kAes256Gcm) {
    EXPECT_EQ(OpensslAesGcmOpen(kAes256V2, r->nonce, r->ciphertext, r->tag, c.aad), kMessage);
  }

  // A ciphertext already under the primary: source 2, target 2. Named without a version
  // where versions can be tried (an AEAD tag of 12 bytes or more), else named.
  const bool triable = aead && (c.tag_length == 0 || c.tag_length >= 12);
  in.key = KeyInput::Id(c.key_id, triable ? 0 : 2);
  in.ciphertext = r->ciphertext;
  in.nonce = r->nonce;
  in.tag = r->tag;
  absl::StatusOr<Rewrapped> again = engine().Rewrap(in);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->source_key_version, 2u);
  EXPECT_EQ(again->key_version, 2u);
}

// A tampered AEAD input (ciphertext or aad) is DECRYPTION_FAILED; CBC, which cannot tell
// tampering, refuses a ciphertext that is not whole blocks. Neither seals anything.
TEST_P(RewrapSymmetricTest, TamperedInputIsDecryptionFailedWithNoOutput) {
  const SymmetricCase& c = GetParam();
  SymmetricParams p;
  p.algorithm = c.alg;
  p.key = KeyInput::Id(c.key_id, 1);
  p.aad = c.aad;
  p.tag_length = c.tag_length;
  p.padding = RewrapPadding(c.alg);
  absl::StatusOr<SymmetricCiphertext> v1 = engine().Encrypt(p, kMessage);
  ASSERT_THAT(v1, IsOk());
  std::string ct = v1->ciphertext;
  RewrapInput in;
  in.algorithm = c.alg;
  in.key = KeyInput::Id(c.key_id, 1);
  in.nonce = v1->nonce;
  in.tag = v1->tag;
  in.aad = c.aad;
  in.padding = RewrapPadding(c.alg);
  if (!IsAeadAlgorithm(c.alg)) {
    ct.pop_back();
    in.ciphertext = ct;
    EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kInvalidArgument));
    return;
  }
  ct[3] ^= 0x01;
  in.ciphertext = ct;
  absl::StatusOr<Rewrapped> r = engine().Rewrap(in);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_EQ(ReasonOf(r.status()).reason, reason::kDecryptionFailed);
  in.ciphertext = v1->ciphertext;
  in.aad = "not the aad";
  EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kInvalidArgument,
                                            "decryption failed"));
}

// ECB and CBC with PKCS#7 padding (the default): refused before any decryption, since
// whether the padding checks would answer a caller allowed rewrap but not decrypt about
// the plaintext (a padding oracle).
TEST_F(EnvelopeTest, RewrapRefusesPkcs7PaddedModes) {
  for (Algorithm alg : {Algorithm::kSm4Cbc, Algorithm::kSm4Ecb, Algorithm::kAes256Cbc}) {
    const char* key_id = alg == Algorithm::kAes256Cbc ? "a" : "s";
    SymmetricParams p;
    p.algorithm = alg;
    p.key = KeyInput::Id(key_id, 1);
    absl::StatusOr<SymmetricCiphertext> v1 = engine().Encrypt(p, "padded");
    ASSERT_THAT(v1, IsOk());
    RewrapInput in;
    in.algorithm = alg;
    in.key = KeyInput::Id(key_id, 1);
    in.ciphertext = v1->ciphertext;
    in.nonce = v1->nonce;
    for (std::optional<Padding> padding : {std::optional<Padding>(), std::optional(Padding::kPkcs7)}) {
      in.padding = padding;
      EXPECT_THAT(engine().Rewrap(in),
                  StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("padding oracle")))
          << AlgorithmName(alg);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, RewrapSymmetricTest,
    ::testing::Values(SymmetricCase{Algorithm::kSm4Gcm, "s", "context", 0},
                      SymmetricCase{Algorithm::kSm4Gcm, "s", "", 12},
                      SymmetricCase{Algorithm::kSm4Ccm, "s", "context", 0},
                      SymmetricCase{Algorithm::kSm4Ccm, "s", "", 8},
                      SymmetricCase{Algorithm::kSm4Cbc, "s", "", 0},
                      SymmetricCase{Algorithm::kAes256Gcm, "a", "context", 0}),
    [](const ::testing::TestParamInfo<SymmetricCase>& info) {
      std::string name(AlgorithmName(info.param.alg));
      absl::StrAppend(&name, "_tag", info.param.tag_length);
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

INSTANTIATE_TEST_SUITE_P(
    Modes, RewrapOtherModesTest,
    ::testing::Values(SymmetricCase{Algorithm::kSm4Ecb, "s", "", 0},
                      SymmetricCase{Algorithm::kSm4Ctr, "s", "", 0},
                      SymmetricCase{Algorithm::kSm4Cfb, "s", "", 0},
                      SymmetricCase{Algorithm::kSm4Ofb, "s", "", 0},
                      SymmetricCase{Algorithm::kSm4Xts, "x", "", 0},
                      SymmetricCase{Algorithm::kAes256Cbc, "a", "", 0}),
    [](const ::testing::TestParamInfo<SymmetricCase>& info) {
      std::string name(AlgorithmName(info.param.alg));
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

// ---- Rewrap, public-key and hybrid -------------------------------------------------------

struct PublicCase {
  Algorithm alg;
  const char* key_id;
  Sm2CiphertextFormat format;
  const char* info;
};

class RewrapPublicTest : public EnvelopeTest, public ::testing::WithParamInterface<PublicCase> {
 protected:
  absl::StatusOr<std::string> Seal(const KeyInput& key, absl::string_view pt) {
    const PublicCase& c = GetParam();
    if (IsHybridAlgorithm(c.alg)) return engine().HybridEncrypt(c.alg, key, pt, c.info);
    return engine().PublicKeyEncrypt(c.alg, key, pt, c.format);
  }
  absl::StatusOr<std::string> Open(const KeyInput& key, absl::string_view ct) {
    const PublicCase& c = GetParam();
    if (IsHybridAlgorithm(c.alg)) return engine().HybridDecrypt(c.alg, key, ct, c.info);
    return engine().PublicKeyDecrypt(c.alg, key, ct, c.format);
  }
  RewrapInput Input(absl::string_view ct, uint32_t version) {
    const PublicCase& c = GetParam();
    RewrapInput in;
    in.algorithm = c.alg;
    in.key = KeyInput::Id(c.key_id, version);
    in.ciphertext = ct;
    in.format = c.format;
    in.info = c.info;
    return in;
  }
};

TEST_P(RewrapPublicTest, OpensUnderTheNamedVersionAndSealsUnderThePrimary) {
  const PublicCase& c = GetParam();
  absl::StatusOr<std::string> v1 = Seal(KeyInput::Id(c.key_id, 1), kMessage);
  ASSERT_THAT(v1, IsOk());
  absl::StatusOr<Rewrapped> r = engine().Rewrap(Input(*v1, 1));
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->source_key_version, 1u);
  EXPECT_EQ(r->key_version, 2u);
  EXPECT_TRUE(r->nonce.empty());
  EXPECT_TRUE(r->tag.empty());
  if (c.format != Sm2CiphertextFormat::kDer) {
    EXPECT_EQ(r->ciphertext.size(), v1->size());  // same format (DER INTEGERs vary)
  }
  EXPECT_EQ(*Open(KeyInput::Id(c.key_id, 2), r->ciphertext), kMessage);
  EXPECT_THAT(Open(KeyInput::Id(c.key_id, 1), r->ciphertext),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
}

TEST_P(RewrapPublicTest, TamperedInputIsDecryptionFailedWithNoOutput) {
  const PublicCase& c = GetParam();
  absl::StatusOr<std::string> v1 = Seal(KeyInput::Id(c.key_id, 1), kMessage);
  ASSERT_THAT(v1, IsOk());
  std::string ct = *v1;
  ct[ct.size() - 1] ^= 0x01;
  absl::StatusOr<Rewrapped> r = engine().Rewrap(Input(ct, 1));
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_EQ(ReasonOf(r.status()).reason, reason::kDecryptionFailed);
  // Under the wrong version: the same failure.
  EXPECT_THAT(engine().Rewrap(Input(*v1, 2)),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
}

INSTANTIATE_TEST_SUITE_P(
    Algorithms, RewrapPublicTest,
    ::testing::Values(PublicCase{Algorithm::kSm2, "m", Sm2CiphertextFormat::kC1C3C2, ""},
                      PublicCase{Algorithm::kSm2, "m", Sm2CiphertextFormat::kC1C2C3, ""},
                      PublicCase{Algorithm::kSm2, "m", Sm2CiphertextFormat::kDer, ""},
                      PublicCase{Algorithm::kRsa2048Oaep, "r", Sm2CiphertextFormat::kC1C3C2, ""},
                      PublicCase{Algorithm::kHpkeSm2Sm3Sm4Gcm, "m",
                                 Sm2CiphertextFormat::kC1C3C2, "app-v1"},
                      PublicCase{Algorithm::kHpkeP256Sha256Aes128Gcm, "p",
                                 Sm2CiphertextFormat::kC1C3C2, "app-v1"}),
    [](const ::testing::TestParamInfo<PublicCase>& info) {
      std::string name(AlgorithmName(info.param.alg));
      absl::StrAppend(&name, "_", static_cast<int>(info.param.format));
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

// ---- Rewrap: batch, refusals ---------------------------------------------------------------

TEST_F(EnvelopeTest, RewrapBatchAnswersEachItem) {
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = KeyInput::Id("s", 1);
  absl::StatusOr<SymmetricCiphertext> a = engine().Encrypt(p, "first");
  absl::StatusOr<SymmetricCiphertext> b = engine().Encrypt(p, "second");
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  std::string bad_tag = b->tag;
  bad_tag[0] ^= 0x80;
  std::vector<RewrapInput> items(3);
  for (RewrapInput& in : items) {
    in.algorithm = Algorithm::kSm4Gcm;
    in.key = KeyInput::Id("s", 1);
  }
  items[0].ciphertext = a->ciphertext, items[0].nonce = a->nonce, items[0].tag = a->tag;
  items[1].ciphertext = b->ciphertext, items[1].nonce = b->nonce, items[1].tag = bad_tag;
  items[2].ciphertext = b->ciphertext, items[2].nonce = b->nonce, items[2].tag = b->tag;
  std::vector<absl::StatusOr<Rewrapped>> out = engine().RewrapBatch(items);
  ASSERT_EQ(out.size(), 3u);
  ASSERT_THAT(out[0], IsOk());
  EXPECT_THAT(out[1], StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_EQ(ReasonOf(out[1].status()).reason, reason::kDecryptionFailed);
  ASSERT_THAT(out[2], IsOk());
  p.key = KeyInput::Id("s", 2);
  p.nonce = out[2]->nonce;
  EXPECT_EQ(*engine().Decrypt(p, out[2]->ciphertext, out[2]->tag), "second");
}

TEST_F(EnvelopeTest, RewrapRefusesInlineKeysAndForeignFields) {
  RewrapInput in;
  in.algorithm = Algorithm::kSm4Gcm;
  in.key = KeyInput::Inline(kSm4V1);
  in.ciphertext = "x";
  in.nonce = std::string(12, 'n');
  in.tag = std::string(16, 't');
  EXPECT_THAT(engine().Rewrap(in),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("keyring key")));
  in.key = KeyInput();
  EXPECT_THAT(engine().Rewrap(in),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key is required")));
  in.key = KeyInput::Id("s", 1);
  in.info = "info";
  EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("info is not a field of SM4-GCM")));
  in.info = "";
  in.algorithm = Algorithm::kSm2;
  in.key = KeyInput::Id("m", 1);
  EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("nonce is not a field of SM2")));
  in.algorithm = Algorithm::kHmacSm3;
  EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("cannot be used here")));
  // A key of another family, an unknown key: the keyring's errors.
  in.algorithm = Algorithm::kSm4Gcm;
  in.key = KeyInput::Id("a", 1);
  EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kFailedPrecondition));
  in.key = KeyInput::Id("nope", 0);
  EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kNotFound));
  in.key = KeyInput::Id("s", 9);
  EXPECT_THAT(engine().Rewrap(in), StatusIs(absl::StatusCode::kNotFound));
}

// ---- GenerateDataKey ---------------------------------------------------------------------

struct Wrapping {
  Algorithm alg;
  const char* key_id;  // empty: the inline SM2 public key of "m" version 2
  const char* aad;
  const char* info;
  Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2;
};

// Unwrap opens a wrapped data key with the engine's own Decrypt, PublicKeyDecrypt or
// HybridDecrypt under the keyring key's primary (version 2; "c" has only version 1).
absl::StatusOr<std::string> Unwrap(const CryptoEngine& engine, const Wrapping& w,
                                   const DataKey& k) {
  const std::string id = *w.key_id != '\0' ? w.key_id : "m";
  const KeyInput key = KeyInput::Id(id, id == "c" ? 1 : 2);
  if (IsAeadAlgorithm(w.alg)) {
    SymmetricParams p;
    p.algorithm = w.alg;
    p.key = key;
    p.nonce = k.nonce;
    p.aad = w.aad;
    return engine.Decrypt(p, k.ciphertext, k.tag);
  }
  if (IsHybridAlgorithm(w.alg)) return engine.HybridDecrypt(w.alg, key, k.ciphertext, w.info);
  return engine.PublicKeyDecrypt(w.alg, key, k.ciphertext, w.format);
}

TEST_F(EnvelopeTest, DataKeysOfEverySpecUnderEveryWrappingOpenWithTheExistingCalls) {
  const std::vector<Wrapping> wrappings = {
      {Algorithm::kSm4Gcm, "s", "tenant=7", ""},
      {Algorithm::kAes256Gcm, "a", "tenant=7", ""},
      {Algorithm::kAes128Gcm, "c", "", ""},
      {Algorithm::kSm2, "m", "", ""},
      {Algorithm::kSm2, "m", "", "", Sm2CiphertextFormat::kDer},
      {Algorithm::kSm2, "", "", ""},
      {Algorithm::kRsa2048Oaep, "r", "", ""},
      {Algorithm::kHpkeSm2Sm3Sm4Gcm, "m", "", "dk"},
      {Algorithm::kHpkeP256Sha256Aes128Gcm, "p", "", "dk"},
  };
  for (DataKeySpec spec : {DataKeySpec::kSm4_128, DataKeySpec::kAes128, DataKeySpec::kAes256}) {
    for (const Wrapping& w : wrappings) {
      SCOPED_TRACE(::testing::Message() << AlgorithmName(w.alg) << " '" << w.key_id << "' spec "
                                        << static_cast<int>(spec));
      DataKeyInput in;
      in.spec = spec;
      in.algorithm = w.alg;
      in.key = *w.key_id != '\0' ? KeyInput::Id(w.key_id) : KeyInput::Inline(sm2_public(2));
      in.aad = w.aad;
      in.info = w.info;
      in.format = w.format;
      absl::StatusOr<DataKey> k = engine().GenerateDataKey(in);
      ASSERT_THAT(k, IsOk());
      ASSERT_EQ(k->plaintext_key.size(), spec == DataKeySpec::kAes256 ? 32u : 16u);
      const std::string key(SecretDataAsStringView(k->plaintext_key));
      absl::StatusOr<std::string> unwrapped = Unwrap(engine(), w, *k);
      ASSERT_THAT(unwrapped, IsOk());
      EXPECT_EQ(*unwrapped, key);
      if (IsAeadAlgorithm(w.alg)) {
        EXPECT_EQ(k->nonce.size(), 12u);
        EXPECT_EQ(k->tag.size(), 16u);
      } else {
        EXPECT_TRUE(k->nonce.empty());
        EXPECT_TRUE(k->tag.empty());
      }
      if (w.alg == Algorithm::kAes256Gcm) {
        EXPECT_EQ(OpensslAesGcmOpen(kAes256V2, k->nonce, k->ciphertext, k->tag, w.aad), key);
        EXPECT_EQ(OpensslAesGcmOpen(kAes256V2, k->nonce, k->ciphertext, k->tag, "tenant=8"),
                  std::nullopt);
      }
      if (w.alg == Algorithm::kAes128Gcm) {
        EXPECT_EQ(OpensslAesGcmOpen(kAes128, k->nonce, k->ciphertext, k->tag, w.aad), key);
      }
      // Two draws differ.
      absl::StatusOr<DataKey> k2 = engine().GenerateDataKey(in);
      ASSERT_THAT(k2, IsOk());
      EXPECT_NE(k2->plaintext_key, k->plaintext_key);
    }
  }
}

TEST_F(EnvelopeTest, GenerateDataKeyRefusals) {
  DataKeyInput in;
  in.algorithm = Algorithm::kSm4Gcm;
  in.key = KeyInput::Inline(kSm4V1);
  EXPECT_THAT(engine().GenerateDataKey(in),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("keyring key")));
  for (Algorithm alg : {Algorithm::kSm4Cbc, Algorithm::kSm4Ccm, Algorithm::kAes256Ctr,
                        Algorithm::kHmacSm3, Algorithm::kSm3, Algorithm::kEcdsaP256}) {
    in.algorithm = alg;
    in.key = KeyInput::Id("s");
    EXPECT_THAT(engine().GenerateDataKey(in),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cannot be used here")))
        << AlgorithmName(alg);
  }
  in.algorithm = Algorithm::kSm2;
  in.key = KeyInput::Id("m");
  in.aad = "context";
  EXPECT_THAT(engine().GenerateDataKey(in), StatusIs(absl::StatusCode::kInvalidArgument,
                                                     HasSubstr("aad is not a field of SM2")));
  in.aad = "";
  in.info = "info";
  EXPECT_THAT(engine().GenerateDataKey(in), StatusIs(absl::StatusCode::kInvalidArgument,
                                                     HasSubstr("info is not a field of SM2")));
  in.algorithm = Algorithm::kSm4Gcm;
  in.info = "";
  in.key = KeyInput::Id("a");  // an AES key for SM4-GCM
  EXPECT_THAT(engine().GenerateDataKey(in), StatusIs(absl::StatusCode::kFailedPrecondition));
  in.key = KeyInput::Id("s", 1);  // a named version wraps under it
  absl::StatusOr<DataKey> k = engine().GenerateDataKey(in);
  ASSERT_THAT(k, IsOk());
  SymmetricParams p;
  p.key = KeyInput::Id("s", 1);
  p.nonce = k->nonce;
  EXPECT_EQ(*engine().Decrypt(p, k->ciphertext, k->tag),
            std::string(SecretDataAsStringView(k->plaintext_key)));
}

}  // namespace
}  // namespace smcrypt::server
