// Engine and key store tests without gRPC (docs/contributing.md, "House style"; first layer):
// status mapping, key policy, streams against the one-shot API and OpenSSL.
#include "server/engine/crypto_engine.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <random>
#include <thread>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/key_store.h"
#include "server/engine/primitive_cache.h"
#include "server/engine/worker_pool.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::server {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::TestSeed;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

MATCHER_P(IsOkAndHolds, value, "is OK and holds the value") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status();
    return false;
  }
  return *arg == value;
}

std::string RawPem(absl::string_view label, absl::string_view key) {
  return PemEncode(label, key);
}

std::string PrivatePem(Algorithm alg, std::string* public_der = nullptr) {
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(alg);
  EXPECT_TRUE(kp.ok()) << kp.status();
  if (public_der != nullptr) *public_der = kp->public_key_der;
  return PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_keys_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(fs::path(path_) / name, std::ios::binary) << text;
    // Keyring files must not be world-readable (key_store.h, "Permissions").
    fs::permissions(fs::path(path_) / name, fs::perms::owner_read | fs::perms::owner_write);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// ---- Key store -----------------------------------------------------------------------

TEST(KeyStoreTest, PemTypeBindsTheFamily) {
  struct Case {
    std::string label;
    std::string body;
    KeyFamily family;
  } cases[] = {
      {"SM4 KEY", std::string(16, 'k'), KeyFamily::kSm4},
      {"AES KEY", std::string(16, 'k'), KeyFamily::kAes128},
      {"AES KEY", std::string(32, 'k'), KeyFamily::kAes256},
      {"HMAC KEY", std::string(7, 'k'), KeyFamily::kHmac},
  };
  for (const Case& c : cases) {
    absl::StatusOr<StoredKey> key = KeyStore::ParseEntry("k", RawPem(c.label, c.body));
    ASSERT_THAT(key, IsOk()) << c.label;
    EXPECT_EQ(key->family, c.family) << c.label;
    EXPECT_TRUE(key->is_symmetric);
  }
  absl::StatusOr<StoredKey> sm2 = KeyStore::ParseEntry("s", PrivatePem(Algorithm::kSm2));
  ASSERT_THAT(sm2, IsOk());
  EXPECT_EQ(sm2->family, KeyFamily::kSm2);
  EXPECT_TRUE(sm2->is_private);
  absl::StatusOr<StoredKey> p256 = KeyStore::ParseEntry("p", PrivatePem(Algorithm::kEcdsaP256));
  ASSERT_THAT(p256, IsOk());
  EXPECT_EQ(p256->family, KeyFamily::kEcP256);
  std::string pub;
  PrivatePem(Algorithm::kEcdsaSecp256k1, &pub);
  absl::StatusOr<StoredKey> k1 = KeyStore::ParseEntry("q", PemEncode("PUBLIC KEY", pub));
  ASSERT_THAT(k1, IsOk());
  EXPECT_EQ(k1->family, KeyFamily::kEcSecp256k1);
  EXPECT_FALSE(k1->is_private);
  EXPECT_EQ(k1->public_key_der, pub);
}

TEST(KeyStoreTest, RejectsBadEntries) {
  EXPECT_THAT(KeyStore::ParseEntry("k", RawPem("SM4 KEY", std::string(15, 'k'))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("16 bytes (or 32 for SM4-XTS: K1 ‖ K2), got 15")));
  EXPECT_THAT(KeyStore::ParseEntry("k", RawPem("SM4 KEY", std::string(24, 'k'))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("got 24")));
  EXPECT_THAT(KeyStore::ParseEntry("k", RawPem("AES KEY", std::string(24, 'k'))),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(KeyStore::ParseEntry("k", RawPem("CERTIFICATE", "x")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("PEM type")));
  EXPECT_THAT(KeyStore::ParseEntry("k", "not pem"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(KeyStore::ParseEntry("k", RawPem("PRIVATE KEY", "\x30\x03\x02\x01\x00")),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(KeyStore::ParseEntry("k", RawPem("SM4 KEY", std::string(16, 'k')) +
                                            RawPem("SM4 KEY", std::string(16, 'k'))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exactly 1")));
  EXPECT_THAT(KeyStore::ParseEntry("bad id", RawPem("SM4 KEY", std::string(16, 'k'))),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// A keyring entry of a supported family that its own family refuses names that family's
// reason, not the last candidate's family mismatch ("key is SM2, algorithm needs
// RSA-3072"): an SM2 scalar d = n - 1 (GB/T 32918.1 6.1 allows [1, n-2]) and an SM2
// public point off the curve.
TEST(KeyStoreTest, RefusedKeyNamesItsOwnFamilysReason) {
  const std::string sm2_alg = "301306072a8648ce3d020106082a811ccf5501822d";
  const std::string pkcs8 = HexToBytes(
      "3041020100" + sm2_alg + "0427302502010104" +
      "20fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54122");
  absl::StatusOr<StoredKey> priv = KeyStore::ParseEntry("k", PemEncode("PRIVATE KEY", pkcs8));
  EXPECT_THAT(priv, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("[1, n-2]")));
  EXPECT_THAT(priv, StatusIs(absl::StatusCode::kInvalidArgument,
                             ::testing::Not(HasSubstr("algorithm needs"))));
  const std::string spki = HexToBytes("3059" + sm2_alg + "03420004" + std::string(128, '0'));
  absl::StatusOr<StoredKey> pub = KeyStore::ParseEntry("k", PemEncode("PUBLIC KEY", spki));
  EXPECT_THAT(pub, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not on the curve")));
}

TEST(KeyStoreTest, KubernetesSecretLayout) {
  // A mounted Secret: files live in ..<timestamp>/, ..data points at it, and each key
  // is a symlink through ..data.
  TempDir dir;
  fs::create_directory(fs::path(dir.path()) / "..2024_01_01");
  dir.Write("..2024_01_01/sm4.pem", RawPem("SM4 KEY", std::string(16, 's')));
  dir.Write("..2024_01_01/mac.pem", RawPem("HMAC KEY", "secret"));
  fs::create_directory_symlink("..2024_01_01", fs::path(dir.path()) / "..data");
  fs::create_symlink("..data/sm4.pem", fs::path(dir.path()) / "sm4.pem");
  fs::create_symlink("..data/mac.pem", fs::path(dir.path()) / "mac.pem");
  dir.Write(".hidden.pem", "junk that would fail");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = KeyStore::LoadFromDirectory(dir.path());
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->size(), 2u);
  EXPECT_THAT((*store)->Find("sm4"), IsOk());
  EXPECT_THAT((*store)->Find("mac"), IsOk());
  EXPECT_THAT((*store)->Find("nope"), StatusIs(absl::StatusCode::kNotFound));
  // Ids no file can have: INVALID_ARGUMENT, the id not echoed.
  for (const char* id : {"", "../sm4", ".sm4", "sm4/x", "a b"}) {
    EXPECT_THAT((*store)->Find(id),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("[A-Za-z0-9._-]")))
        << id;
  }
  EXPECT_THAT((*store)->Find(std::string(129, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT((*store)->Find(std::string(128, 'a')), StatusIs(absl::StatusCode::kNotFound));
}

TEST(KeyStoreTest, BadFileNamesTheFile) {
  TempDir dir;
  dir.Write("good.pem", RawPem("SM4 KEY", std::string(16, 's')));
  dir.Write("broken.pem", "-----BEGIN SM4 KEY-----\n!!!!\n-----END SM4 KEY-----\n");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = KeyStore::LoadFromDirectory(dir.path());
  EXPECT_THAT(store, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("broken.pem")));
  EXPECT_THAT(KeyStore::LoadFromDirectory(dir.path() + "/missing"),
              StatusIs(absl::StatusCode::kNotFound));
}

// ---- Engine --------------------------------------------------------------------------

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("sm4.pem", RawPem("SM4 KEY", sm4_key_));
    dir_.Write("aes.pem", RawPem("AES KEY", std::string(16, 'a')));
    dir_.Write("sm2.pem", PrivatePem(Algorithm::kSm2, &sm2_public_));
    dir_.Write("sm2pub.pem", PemEncode("PUBLIC KEY", sm2_public_));
    absl::StatusOr<std::unique_ptr<KeyStore>> store = KeyStore::LoadFromDirectory(dir_.path());
    ASSERT_THAT(store, IsOk());
    keys_ = *std::move(store);
  }

  CryptoEngine Engine(bool allow_inline = true) {
    EngineOptions o;
    o.allow_inline_private_keys = allow_inline;
    return CryptoEngine(keys_.get(), o, nullptr);
  }

  TempDir dir_;
  std::string sm4_key_ = HexToBytes("0123456789abcdeffedcba9876543210");
  std::string sm2_public_;
  std::unique_ptr<KeyStore> keys_;
};

TEST_F(EngineTest, StatusMapping) {
  CryptoEngine e = Engine();
  EXPECT_THAT(e.Hash(Algorithm::kSm4Gcm, "x"), StatusIs(absl::StatusCode::kInvalidArgument));
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = KeyInput::Id("nope");
  EXPECT_THAT(e.Encrypt(p, "x"), StatusIs(absl::StatusCode::kNotFound));
  p.key = KeyInput::Id("aes");  // an AES key for SM4
  EXPECT_THAT(e.Encrypt(p, "x"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("' is an AES-128 key; SM4-GCM needs an SM4 key")));
  p.key = KeyInput::Id("sm2");  // an SM2 key for SM4
  EXPECT_THAT(e.Encrypt(p, "x"), StatusIs(absl::StatusCode::kFailedPrecondition));
  p.key = KeyInput{};
  EXPECT_THAT(e.Encrypt(p, "x"), StatusIs(absl::StatusCode::kInvalidArgument));
  p.key = KeyInput::Inline("short");
  EXPECT_THAT(e.Encrypt(p, "x"), StatusIs(absl::StatusCode::kInvalidArgument));
  // A public-key entry cannot sign; an SM2 key cannot do ECDSA.
  EXPECT_THAT(e.Sign(Algorithm::kSm2, KeyInput::Id("sm2pub"), "m", {}, false),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(e.Sign(Algorithm::kEcdsaP256, KeyInput::Id("sm2"), "m", {}, false),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // user_id is SM2-only.
  absl::StatusOr<KeyPair> p256 = smcrypt::GenerateKeyPair(Algorithm::kEcdsaP256);
  ASSERT_THAT(p256, IsOk());
  EXPECT_THAT(e.Sign(Algorithm::kEcdsaP256,
                     KeyInput::Inline(SecretDataAsStringView(p256->private_key_der)), "m", {},
                     /*user_id_set=*/true),
              StatusIs(absl::StatusCode::kInvalidArgument));
  // user_id with prehashed: e = SM3(Z || M) already holds Z, so the ID cannot be bound.
  SignatureOptions prehashed_with_id;
  prehashed_with_id.prehashed = true;
  prehashed_with_id.user_id = "alice";
  EXPECT_THAT(e.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), std::string(32, 'e'),
                     prehashed_with_id, /*user_id_set=*/true),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prehashed")));
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2pub"), std::string(32, 'e'),
                       std::string(64, 's'), prehashed_with_id, /*user_id_set=*/true),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("prehashed")));
  // Hybrid: wrong algorithm kind, wrong key family, public key for decryption.
  EXPECT_THAT(e.HybridEncrypt(Algorithm::kSm4Gcm, KeyInput::Id("sm4"), "m", ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(e.HybridEncrypt(Algorithm::kHpkeP256Sha256Aes128Gcm, KeyInput::Id("sm2"), "m", ""),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(e.HybridEncrypt(Algorithm::kHpkeP256Sha256Aes128Gcm,
                              KeyInput::Inline(sm2_public_), "m", ""),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(e.HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2pub"),
                              std::string(100, 'c'), ""),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(e.GenerateRandom(0), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(e.GenerateRandom(CryptoEngine::kMaxRandomBytes + 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// An inline public key (DER or PEM SubjectPublicKeyInfo) where a private key is needed is
// FailedPrecondition saying so, as for a keyring public key, not a DER parse error.
TEST_F(EngineTest, InlinePublicKeyWherePrivateKeyIsNeeded) {
  CryptoEngine e = Engine();
  absl::StatusOr<KeyPair> p256 = smcrypt::GenerateKeyPair(Algorithm::kEcdsaP256);
  ASSERT_THAT(p256, IsOk());
  const auto is_public = StatusIs(absl::StatusCode::kFailedPrecondition,
                                  HasSubstr("inline key is a public key"));
  for (const std::string& pub : {sm2_public_, PemEncode("PUBLIC KEY", sm2_public_)}) {
    const KeyInput k = KeyInput::Inline(pub);
    EXPECT_THAT(e.Sign(Algorithm::kSm2, k, "m", {}, false), is_public);
    EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, k, std::string(120, 'c'),
                                   Sm2CiphertextFormat::kC1C3C2),
                is_public);
    EXPECT_THAT(e.HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, k, std::string(120, 'c'), ""),
                is_public);
    EXPECT_THAT(e.GetPublicKey(Algorithm::kSm2, k), is_public);
  }
  EXPECT_THAT(e.Sign(Algorithm::kEcdsaP256, KeyInput::Inline(p256->public_key_der), "m", {}, false),
              is_public);
  // Garbage stays InvalidArgument.
  EXPECT_THAT(e.Sign(Algorithm::kSm2, KeyInput::Inline("\x30\x03\x02\x01\x00"), "m", {}, false),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(EngineTest, WrongSignatureIsFalseNotError) {
  CryptoEngine e = Engine();
  ASSERT_OK_AND_ASSIGN(std::string sig, e.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "msg", {}, false));
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2pub"), "msg", sig, {}, false),
              IsOkAndHolds(true));
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2"), "msG", sig, {}, false),
              IsOkAndHolds(false));
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Inline(sm2_public_), "msg", "\x30\x01", {}, false),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// An inline HMAC key of zero bytes is a key (RFC 2104 §2 sets no lower bound), not a
// missing one; a KeyRef with nothing set is still INVALID_ARGUMENT.
TEST_F(EngineTest, HmacWithAnEmptyInlineKey) {
  CryptoEngine e = Engine();
  const KeyInput empty = KeyInput::Inline("");
  // Python: hmac.new(b"", b"", "sha256").hexdigest()
  ASSERT_OK_AND_ASSIGN(std::string sha, e.Hmac(Algorithm::kHmacSha256, empty, ""));
  EXPECT_EQ(BytesToHex(sha), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  EXPECT_THAT(e.VerifyHmac(Algorithm::kHmacSha256, empty, "", sha), IsOkAndHolds(true));
  for (const std::string& msg :
       {std::string(), std::string("abc"), std::string(64, 'm'), std::string(300, '\x01')}) {
    SCOPED_TRACE(::testing::Message() << "message of " << msg.size() << " bytes");
    const std::string want = ::smcrypt::testing::OpenSslHmac("SM3", "", msg);
    EXPECT_THAT(e.Hmac(Algorithm::kHmacSm3, empty, msg), IsOkAndHolds(want));
    EXPECT_THAT(e.VerifyHmac(Algorithm::kHmacSm3, empty, msg, want), IsOkAndHolds(true));
    EXPECT_THAT(e.Hmac(Algorithm::kHmacSha256, empty, msg),
                IsOkAndHolds(::smcrypt::testing::OpenSslHmac("SHA2-256", "", msg)));
  }
  for (Algorithm alg : {Algorithm::kHmacSm3, Algorithm::kHmacSha256}) {
    EXPECT_THAT(e.Hmac(alg, KeyInput{}, "m"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("key is required (key_id or inline_key)")));
    EXPECT_THAT(e.VerifyHmac(alg, KeyInput{}, "m", std::string(32, 't')),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("key is required (key_id or inline_key)")));
  }
}

// RFC 2104 §5: a tag truncated to its leftmost t bytes, t ≥ max(L/2, 10) = 16 for the
// 32-byte tags, verifies over those t bytes; a wrong length is an error, never false.
TEST_F(EngineTest, VerifyHmacTakesTruncatedTags) {
  CryptoEngine e = Engine();
  const KeyInput key = KeyInput::Inline("mac key");
  for (Algorithm alg : {Algorithm::kHmacSm3, Algorithm::kHmacSha256}) {
    SCOPED_TRACE(AlgorithmName(alg));
    ASSERT_OK_AND_ASSIGN(std::string tag, e.Hmac(alg, key, "data"));
    ASSERT_EQ(tag.size(), 32u);
    for (size_t t = 16; t <= 32; ++t) {
      EXPECT_THAT(e.VerifyHmac(alg, key, "data", tag.substr(0, t)), IsOkAndHolds(true)) << t;
      std::string wrong = tag.substr(0, t);
      wrong[t - 1] ^= 0x01;
      EXPECT_THAT(e.VerifyHmac(alg, key, "data", wrong), IsOkAndHolds(false)) << t;
      EXPECT_THAT(e.VerifyHmac(alg, key, "datA", tag.substr(0, t)), IsOkAndHolds(false)) << t;
    }
    std::string wrong16 = tag.substr(0, 16);
    wrong16[0] ^= 0x80;
    EXPECT_THAT(e.VerifyHmac(alg, key, "data", wrong16), IsOkAndHolds(false));
    // The rightmost 16 bytes are not a truncation.
    EXPECT_THAT(e.VerifyHmac(alg, key, "data", tag.substr(16)), IsOkAndHolds(false));
    for (size_t n : {0, 1, 8, 15, 33, 64}) {
      std::string bad = tag;
      bad.resize(n, '\0');
      EXPECT_THAT(e.VerifyHmac(alg, key, "data", bad),
                  StatusIs(absl::StatusCode::kInvalidArgument,
                           absl::StrCat("expected_mac must be 16 to 32 bytes (a tag truncated "
                                        "to its leftmost bytes, RFC 2104 §5), got ",
                                        n)));
    }
  }
}

// DerTlv encodes one DER element (short or two-byte long-form length).
std::string DerTlv(uint8_t tag, const std::string& contents) {
  std::string out(1, static_cast<char>(tag));
  if (contents.size() >= 128) {
    out.push_back(static_cast<char>(contents.size() < 256 ? 0x81 : 0x82));
    if (contents.size() >= 256) out.push_back(static_cast<char>(contents.size() >> 8));
  }
  out.push_back(static_cast<char>(contents.size() & 0xff));
  return out + contents;
}

// SM2Cipher (GM/T 0009) is read as strict DER: a coordinate INTEGER with a needless leading
// 00, an empty or a negative one is INVALID_ARGUMENT, in PublicKeyDecrypt and in
// Sm2CiphertextConvert alike; the DER encoding of the same ciphertext decrypts.
TEST_F(EngineTest, Sm2DerCiphertextMustBeStrictDer) {
  CryptoEngine e = Engine();
  ASSERT_OK_AND_ASSIGN(std::string der, e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Id("sm2"),
                                                           "message", Sm2CiphertextFormat::kDer));
  ASSERT_OK_AND_ASSIGN(std::string raw, Sm2CiphertextConvert(der, Sm2CiphertextFormat::kDer,
                                                             Sm2CiphertextFormat::kC1C3C2));
  const std::string x = raw.substr(1, 32), y = raw.substr(33, 32);
  const std::string c3 = raw.substr(65, 32), c2 = raw.substr(97);
  auto minimal = [](std::string v) {  // the contents of v's DER INTEGER
    while (v.size() > 1 && v[0] == '\0' && static_cast<uint8_t>(v[1]) < 0x80) v.erase(0, 1);
    if (static_cast<uint8_t>(v[0]) >= 0x80) v.insert(0, 1, '\0');
    return v;
  };
  auto cipher = [&](const std::string& x_contents) {
    return DerTlv(0x30, DerTlv(0x02, x_contents) + DerTlv(0x02, minimal(y)) +
                            DerTlv(0x04, c3) + DerTlv(0x04, c2));
  };
  ASSERT_EQ(BytesToHex(cipher(minimal(x))), BytesToHex(der));
  EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), der,
                                 Sm2CiphertextFormat::kDer),
              IsOkAndHolds(std::string("message")));
  const struct {
    const char* name;
    std::string x_contents;
    const char* message;
  } rows[] = {
      {"x with an extra leading 00", std::string(1, '\0') + minimal(x),
       "SM2Cipher C1 x: DER: non-minimal INTEGER"},
      {"x of zero bytes", "", "SM2Cipher C1 x: DER: empty INTEGER"},
      {"x negative", "\x80" + x.substr(1), "SM2Cipher C1 x: DER: negative INTEGER"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const std::string bad = cipher(row.x_contents);
    EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), bad,
                                   Sm2CiphertextFormat::kDer),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(row.message)));
    for (Sm2CiphertextFormat to : {Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kC1C2C3,
                                   Sm2CiphertextFormat::kDer}) {
      EXPECT_THAT(Sm2CiphertextConvert(bad, Sm2CiphertextFormat::kDer, to),
                  StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(row.message)));
    }
  }
  // C1 without its 04 byte (64-byte x ‖ y) stays accepted in the raw formats.
  EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), raw.substr(1),
                                 Sm2CiphertextFormat::kC1C3C2),
              IsOkAndHolds(std::string("message")));
}

// A C1 that is not a point on the curve is reported as C1, never as a public key.
TEST_F(EngineTest, MalformedC1IsNamedC1) {
  CryptoEngine e = Engine();
  ASSERT_OK_AND_ASSIGN(std::string ct, e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Id("sm2"),
                                                          "m", Sm2CiphertextFormat::kC1C3C2));
  ct[64] ^= 0x01;  // the last byte of y1
  const auto names_c1 = [](const char* message) {
    return StatusIs(absl::StatusCode::kInvalidArgument,
                    ::testing::AllOf(HasSubstr(message),
                                     ::testing::Not(HasSubstr("public key"))));
  };
  EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), ct,
                                 Sm2CiphertextFormat::kC1C3C2),
              names_c1("SM2 ciphertext: C1: point not on the curve"));
  // SM2Cipher: x and y re-encoded from the same C1.
  std::string der;
  {
    std::string ok = ct;
    ok[64] ^= 0x01;
    ASSERT_OK_AND_ASSIGN(der, Sm2CiphertextConvert(ok, Sm2CiphertextFormat::kC1C3C2,
                                                   Sm2CiphertextFormat::kDer));
  }
  // The last byte of y's INTEGER: 4 OCTET STRING bytes "m", then 32 + 2 of HASH, then y.
  der[der.size() - 3 - 34 - 1] ^= 0x01;
  EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), der,
                                 Sm2CiphertextFormat::kDer),
              names_c1("SM2Cipher C1: point not on the curve"));
}

// An inline key in none of the accepted encodings is INVALID_ARGUMENT naming the field,
// the key the algorithm needs, its accepted forms and sizes, and how many bytes came.
TEST_F(EngineTest, UnparsableInlineKeysNameTheFieldAndTheAcceptedForms) {
  CryptoEngine e = Engine();
  const std::string one_byte(1, '\0');
  const KeyInput one = KeyInput::Inline(one_byte);
  const std::string sm2_public =
      "key.inline_key: expected an SM2 public key as SubjectPublicKeyInfo DER or PEM, or a "
      "65-byte uncompressed / 33-byte compressed point; got 1 byte (DER: expected SEQUENCE, "
      "got tag 0x00)";
  // A private key's bytes are never echoed, its first byte included.
  const std::string sm2_private =
      "key.inline_key: expected an SM2 private key as PKCS#8 DER or PEM, or a 32-byte scalar; "
      "got 1 byte (not DER: it does not start with a SEQUENCE)";
  const auto is = [](const std::string& message) {
    return StatusIs(absl::StatusCode::kInvalidArgument, message);
  };
  EXPECT_THAT(e.Verify(Algorithm::kSm2, one, "m", std::string(64, 's'), {}, false),
              is(sm2_public));
  EXPECT_THAT(e.PublicKeyEncrypt(Algorithm::kSm2, one, "m", Sm2CiphertextFormat::kC1C3C2),
              is(sm2_public));
  EXPECT_THAT(e.HybridEncrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, one, "m", ""), is(sm2_public));
  EXPECT_THAT(e.Sign(Algorithm::kSm2, one, "m", {}, false), is(sm2_private));
  EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, one, std::string(120, 'c'),
                                 Sm2CiphertextFormat::kC1C3C2),
              is(sm2_private));
  EXPECT_THAT(e.HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, one, std::string(120, 'c'), ""),
              is(sm2_private));
  EXPECT_THAT(e.GetPublicKey(Algorithm::kSm2, one), is(sm2_private));
  // The EC curves (raw forms too) and RSA (DER and PEM only), through OpenSSL.
  for (auto [alg, family] : {std::pair{Algorithm::kEcdsaP256, "EC P-256"},
                             std::pair{Algorithm::kHpkeP256Sha256Aes128Gcm, "EC P-256"},
                             std::pair{Algorithm::kEcdsaSecp256k1, "EC secp256k1"}}) {
    SCOPED_TRACE(AlgorithmName(alg));
    const std::string pub = absl::StrCat(
        "key.inline_key: expected an ", family, " public key as SubjectPublicKeyInfo DER or "
        "PEM, or a 65-byte uncompressed / 33-byte compressed point; got 1 byte (DER: "
        "expected SEQUENCE, got tag 0x00)");
    const std::string priv = absl::StrCat(
        "key.inline_key: expected an ", family, " private key as PKCS#8 DER or PEM, or a "
        "32-byte scalar; got 1 byte (not DER: it does not start with a SEQUENCE)");
    if (IsHybridAlgorithm(alg)) {
      EXPECT_THAT(e.HybridEncrypt(alg, one, "m", ""), is(pub));
      EXPECT_THAT(e.HybridDecrypt(alg, one, std::string(120, 'c'), ""), is(priv));
    } else {
      EXPECT_THAT(e.Verify(alg, one, "m", std::string(64, 's'), {}, false), is(pub));
      EXPECT_THAT(e.Sign(alg, one, "m", {}, false), is(priv));
    }
    EXPECT_THAT(e.GetPublicKey(alg, one), is(priv));
  }
  EXPECT_THAT(e.Verify(Algorithm::kRsa2048Pss, one, "m", std::string(256, 's'), {}, false),
              is("key.inline_key: expected an RSA-2048 public key as SubjectPublicKeyInfo DER "
                 "or PEM; got 1 byte (DER: expected SEQUENCE, got tag 0x00)"));
  EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kRsa3072Oaep, one, std::string(384, 'c'),
                                 Sm2CiphertextFormat::kC1C3C2),
              is("key.inline_key: expected an RSA-3072 private key as PKCS#8 DER or PEM; got 1 "
                 "byte (not DER: it does not start with a SEQUENCE)"));
  // Longer garbage, an empty key and a broken SEQUENCE, with the parser's reason.
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Inline("not a key at all"), "m",
                       std::string(64, 's'), {}, false),
              is("key.inline_key: expected an SM2 public key as SubjectPublicKeyInfo DER or "
                 "PEM, or a 65-byte uncompressed / 33-byte compressed point; got 16 bytes (DER: "
                 "expected SEQUENCE, got tag 0x6e)"));
  EXPECT_THAT(e.Sign(Algorithm::kEcdsaP256, KeyInput::Inline(""), "m", {}, false),
              is("key.inline_key: expected an EC P-256 private key as PKCS#8 DER or PEM, or a "
                 "32-byte scalar; got 0 bytes (not DER: it does not start with a SEQUENCE)"));
  EXPECT_THAT(e.Verify(Algorithm::kEcdsaP256, KeyInput::Inline(""), "m", std::string(64, 's'),
                       {}, false),
              is("key.inline_key: expected an EC P-256 public key as SubjectPublicKeyInfo DER or "
                 "PEM, or a 65-byte uncompressed / 33-byte compressed point; got 0 bytes (DER: "
                 "expected SEQUENCE, got end of input)"));
  const std::string broken("\x30\x03\x02\x01\x00", 5);  // SEQUENCE { INTEGER 0 }
  EXPECT_THAT(e.Sign(Algorithm::kSm2, KeyInput::Inline(broken), "m", {}, false),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::StartsWith("key.inline_key: expected an SM2 private key as "
                                             "PKCS#8 DER or PEM, or a 32-byte scalar; got 5 "
                                             "bytes (")));
  // A raw point of the right size that is not on the curve is named as such.
  std::string off_curve = sm2_public_.substr(sm2_public_.size() - 65);  // SPKI: the point last
  off_curve[64] ^= 0x01;
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Inline(off_curve), "m", std::string(64, 's'),
                       {}, false),
              is("key.inline_key: SM2 public key: point not on the curve"));
}

// Limits print readably: GCM's 2^61 - 1 bytes of nonce, not 2305843009213693951.
TEST_F(EngineTest, HugeLimitsReadAsPowersOfTwo) {
  CryptoEngine e = Engine();
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = KeyInput::Id("sm4");
  p.nonce = "";
  EXPECT_THAT(e.Encrypt(p, "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "SM4-GCM nonce size must be 1 to 2^61 - 1 bytes (12 recommended), got 0"));
  EXPECT_THAT(e.Decrypt(p, "x", std::string(16, 't')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1 to 2^61 - 1 bytes")));
}

TEST_F(EngineTest, InlinePrivateKeyPolicy) {
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  ASSERT_THAT(kp, IsOk());
  const KeyInput inline_private = KeyInput::Inline(SecretDataAsStringView(kp->private_key_der));
  CryptoEngine deny = Engine(/*allow_inline=*/false);
  EXPECT_THAT(deny.Sign(Algorithm::kSm2, inline_private, "m", {}, false),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(deny.PublicKeyDecrypt(Algorithm::kSm2, inline_private, "c",
                                    Sm2CiphertextFormat::kC1C3C2),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // Keyring keys and inline public keys stay usable.
  EXPECT_THAT(deny.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "m", {}, false), IsOk());
  EXPECT_THAT(deny.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Inline(kp->public_key_der), "m",
                                    Sm2CiphertextFormat::kC1C3C2),
              IsOk());
  ASSERT_OK_AND_ASSIGN(GeneratedKeyPair g, deny.GenerateKeyPair(Algorithm::kSm2, false));
  EXPECT_TRUE(g.private_key_der.empty());
  EXPECT_TRUE(g.private_key_withheld);
  EXPECT_FALSE(g.public_key_der.empty());
  ASSERT_OK_AND_ASSIGN(GeneratedKeyPair a, Engine().GenerateKeyPair(Algorithm::kSm2, false));
  EXPECT_FALSE(a.private_key_der.empty());
  EXPECT_FALSE(a.private_key_withheld);
}

TEST_F(EngineTest, HashBatchMatchesHash) {
  CryptoEngine e = Engine();
  std::mt19937_64 rng(TestSeed());
  std::vector<std::string> data;
  std::vector<HashItem> items;
  for (int i = 0; i < 40; ++i) data.push_back(RandomBytes(rng, rng() % 300));
  for (int i = 0; i < 40; ++i) {
    items.push_back({i % 3 == 0 ? Algorithm::kSha256 : Algorithm::kSm3, data[i]});
  }
  items.push_back({Algorithm::kSm4Ecb, "x"});
  std::vector<absl::StatusOr<std::string>> out = e.HashBatch(items);
  ASSERT_EQ(out.size(), items.size());
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(out[i].value(), e.Hash(items[i].algorithm, data[i]).value()) << i;
  }
  EXPECT_THAT(out[40], StatusIs(absl::StatusCode::kInvalidArgument));
}

// SignBatch / VerifyBatch: SM2 items (keyring key, inline keys, a user ID, raw encoding,
// prehashed, repeated keys) go through the SM2 batch path; ECDSA items and bad items
// (public key for signing, unknown key, SM2 key for ECDSA, malformed digest or
// signature) get exactly what Sign / Verify give, in order, without disturbing the
// others. SM2 signatures are randomized, so batch signatures are checked by Verify.
TEST_F(EngineTest, SignAndVerifyBatchEqualSingleOperations) {
  CryptoEngine e = Engine();
  std::mt19937_64 rng(TestSeed());
  absl::StatusOr<KeyPair> sm2 = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  absl::StatusOr<KeyPair> p256 = smcrypt::GenerateKeyPair(Algorithm::kEcdsaP256);
  ASSERT_THAT(sm2, IsOk());
  ASSERT_THAT(p256, IsOk());
  const KeyInput sm2_inline = KeyInput::Inline(SecretDataAsStringView(sm2->private_key_der));
  const KeyInput sm2_inline_pub = KeyInput::Inline(sm2->public_key_der);
  const KeyInput p256_inline = KeyInput::Inline(SecretDataAsStringView(p256->private_key_der));
  const KeyInput p256_inline_pub = KeyInput::Inline(p256->public_key_der);
  SignatureOptions alice;
  alice.user_id = "alice@example";
  SignatureOptions raw_pre;
  raw_pre.encoding = SignatureEncoding::kRaw;
  raw_pre.prehashed = true;
  std::vector<std::string> data;
  std::vector<SignItem> sign_items;
  std::vector<VerifyItem> verify_items;
  data.reserve(75);  // the items hold views of these strings
  for (int i = 0; i < 75; ++i) {
    const int kind = i % 9;
    data.push_back(RandomBytes(rng, kind == 4 ? (i == 4 ? 31 : 32) : rng() % 200));
    SignItem s{Algorithm::kSm2, KeyInput::Id("sm2"), data.back(), {}, false};
    KeyInput pub = KeyInput::Id("sm2pub");
    switch (kind) {
      case 1: s.key = sm2_inline; pub = sm2_inline_pub; break;
      case 2: s.options = alice; s.user_id_set = true; break;
      case 3: s.algorithm = Algorithm::kEcdsaP256; s.key = p256_inline; pub = p256_inline_pub; break;
      case 4: s.options = raw_pre; break;
      case 5: s.key = KeyInput::Id("sm2pub"); break;                                // cannot sign
      case 6: s.key = KeyInput::Id("nope"); pub = KeyInput::Id("nope"); break;      // unknown
      case 7: s.algorithm = Algorithm::kEcdsaP256; break;                           // wrong family
      default: break;
    }
    sign_items.push_back(s);
    verify_items.push_back({s.algorithm, pub, data.back(), "", s.options, s.user_id_set});
  }
  std::vector<absl::StatusOr<std::string>> sigs = e.SignBatch(sign_items);
  ASSERT_EQ(sigs.size(), sign_items.size());
  std::vector<std::string> sig_bytes(sigs.size());
  for (size_t i = 0; i < sigs.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    const SignItem& s = sign_items[i];
    absl::StatusOr<std::string> single = e.Sign(s.algorithm, s.key, s.data, s.options, s.user_id_set);
    ASSERT_EQ(sigs[i].ok(), single.ok()) << sigs[i].status() << " vs " << single.status();
    if (!single.ok()) {
      EXPECT_EQ(sigs[i].status(), single.status());
      sig_bytes[i] = *e.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "other", {}, false);
      continue;
    }
    sig_bytes[i] = *sigs[i];
    EXPECT_THAT(e.Verify(s.algorithm, verify_items[i].key, s.data, *sigs[i], s.options,
                         s.user_id_set),
                IsOkAndHolds(true));
  }
  // Tamper with a few, truncate one, then VerifyBatch against Verify per item.
  sig_bytes[0][sig_bytes[0].size() - 3] ^= 0x04;
  sig_bytes[9] = "\x30\x01";
  sig_bytes[10][sig_bytes[10].size() / 2] ^= 0x01;
  for (size_t i = 0; i < verify_items.size(); ++i) verify_items[i].signature = sig_bytes[i];
  std::vector<absl::StatusOr<bool>> valid = e.VerifyBatch(verify_items);
  ASSERT_EQ(valid.size(), verify_items.size());
  int trues = 0;
  for (size_t i = 0; i < valid.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    const VerifyItem& v = verify_items[i];
    absl::StatusOr<bool> single =
        e.Verify(v.algorithm, v.key, v.data, v.signature, v.options, v.user_id_set);
    ASSERT_EQ(valid[i].ok(), single.ok()) << valid[i].status() << " vs " << single.status();
    if (single.ok()) {
      EXPECT_EQ(*valid[i], *single);
      trues += *single ? 1 : 0;
    } else {
      EXPECT_EQ(valid[i].status(), single.status());
    }
  }
  EXPECT_THAT(valid[0], IsOkAndHolds(false));
  EXPECT_THAT(valid[9], StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(valid[10], IsOkAndHolds(false));
  EXPECT_GE(trues, 35);
  EXPECT_TRUE(e.SignBatch({}).empty());
  EXPECT_TRUE(e.VerifyBatch({}).empty());
}

// PublicKeyEncryptBatch: SM2 items (keyring private and public keys, an inline key, all
// three formats, repeated keys: EncryptMany) decrypt to their messages; bad items
// (unknown key, wrong family, wrong algorithm, RSA-OAEP over its limit) get exactly what
// PublicKeyEncrypt gives, in order, without disturbing the others.
TEST_F(EngineTest, PublicKeyEncryptBatchEqualsSingleOperations) {
  CryptoEngine e = Engine();
  std::mt19937_64 rng(TestSeed());
  absl::StatusOr<KeyPair> rsa = smcrypt::GenerateKeyPair(Algorithm::kRsa2048Oaep);
  ASSERT_THAT(rsa, IsOk());
  const Sm2CiphertextFormat formats[] = {Sm2CiphertextFormat::kC1C3C2,
                                         Sm2CiphertextFormat::kC1C2C3, Sm2CiphertextFormat::kDer};
  std::vector<std::string> data;
  std::vector<PublicKeyEncryptItem> items;
  data.reserve(60);
  for (int i = 0; i < 60; ++i) {
    const int kind = i % 10;
    data.push_back(RandomBytes(rng, kind == 8 ? 300 : rng() % 200));
    PublicKeyEncryptItem it{Algorithm::kSm2, KeyInput::Id("sm2"), data.back(), formats[i % 3]};
    switch (kind) {
      case 1: it.key = KeyInput::Id("sm2pub"); break;
      case 2: it.key = KeyInput::Inline(sm2_public_); break;
      case 3: it.key = KeyInput::Id("nope"); break;                        // unknown
      case 4: it.key = KeyInput::Id("sm4"); break;                         // wrong family
      case 5: it.algorithm = Algorithm::kSm4Gcm; break;                    // not public-key
      case 6:
      case 8:  // RSA-2048-OAEP takes at most 190 bytes: item 8's 300 fail alone
        it.algorithm = Algorithm::kRsa2048Oaep;
        it.key = KeyInput::Inline(rsa->public_key_der);
        it.format = Sm2CiphertextFormat::kC1C3C2;
        break;
      default: break;
    }
    items.push_back(it);
  }
  std::vector<absl::StatusOr<std::string>> cts = e.PublicKeyEncryptBatch(items);
  ASSERT_EQ(cts.size(), items.size());
  int oks = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    const PublicKeyEncryptItem& it = items[i];
    absl::StatusOr<std::string> single = e.PublicKeyEncrypt(it.algorithm, it.key, it.plaintext, it.format);
    ASSERT_EQ(cts[i].ok(), single.ok()) << cts[i].status() << " vs " << single.status();
    if (!single.ok()) {
      EXPECT_EQ(cts[i].status(), single.status());
      continue;
    }
    ++oks;
    const KeyInput priv = it.algorithm == Algorithm::kSm2
                              ? KeyInput::Id("sm2")
                              : KeyInput::Inline(SecretDataAsStringView(rsa->private_key_der));
    EXPECT_THAT(e.PublicKeyDecrypt(it.algorithm, priv, *cts[i], it.format),
                IsOkAndHolds(std::string(it.plaintext)));
  }
  EXPECT_EQ(oks, 36);
  EXPECT_TRUE(e.PublicKeyEncryptBatch({}).empty());
}

// Streams of the block modes give exactly the one-shot ciphertext, whatever the split.
// EncryptBatch: SM4-CBC items (keyring and inline keys, both paddings, given and drawn
// IVs) take the multi-buffer path and equal Encrypt with the same IV; other algorithms
// and bad items (unknown key, wrong key family, bad IV, bad length, aad on CBC) get
// exactly Encrypt's result, in order, without disturbing their neighbours.
class Sm4CbcEncryptBytes : public EngineObserver {
 public:
  void OnBytesProcessed(Algorithm alg, Operation op, uint64_t bytes) override {
    if (alg == Algorithm::kSm4Cbc && op == Operation::kEncrypt) total += bytes;
  }
  uint64_t total = 0;
};

TEST_F(EngineTest, EncryptBatchEqualsEncryptPerItem) {
  Sm4CbcEncryptBytes bytes;
  CryptoEngine e(keys_.get(), EngineOptions{}, &bytes);
  std::mt19937_64 rng(TestSeed());
  const std::string inline_key = RandomBytes(rng, 16);
  std::vector<std::string> ivs, pts;
  std::vector<SymmetricParams> params;
  for (int i = 0; i < 45; ++i) {
    ivs.push_back(RandomBytes(rng, 16));
    pts.push_back(RandomBytes(rng, i % 5 == 4 ? 32 : rng() % 300));
  }
  uint64_t want_cbc_bytes = 0;
  for (int i = 0; i < 45; ++i) {
    SymmetricParams p;
    p.algorithm = Algorithm::kSm4Cbc;
    p.key = i % 2 == 0 ? KeyInput::Id("sm4") : KeyInput::Inline(inline_key);
    p.nonce = absl::string_view(ivs[i]);
    if (i % 5 == 4) p.padding = Padding::kNone;
    bool good_cbc = true;
    switch (i % 9) {
      case 3: p.nonce.reset(); break;                       // IV drawn by the engine
      case 5: p.algorithm = Algorithm::kSm4Gcm; p.nonce = absl::string_view(ivs[i]).substr(0, 12);
              good_cbc = false; break;
      case 6: p.algorithm = Algorithm::kAes128Cbc; p.key = KeyInput::Id("aes"); good_cbc = false;
              break;
      case 7: if (i == 7) { p.key = KeyInput::Id("nope"); good_cbc = false; }
              if (i == 16) { p.key = KeyInput::Id("aes"); good_cbc = false; }
              if (i == 25) { p.nonce = absl::string_view(ivs[i]).substr(0, 8); good_cbc = false; }
              if (i == 34) { p.aad = "aad"; good_cbc = false; }
              break;
      default: break;
    }
    if (good_cbc) want_cbc_bytes += pts[i].size();
    params.push_back(p);
  }
  pts[9].push_back('x');  // 33 bytes with Padding::kNone: InvalidArgument
  want_cbc_bytes -= 32;
  std::vector<absl::string_view> views(pts.begin(), pts.end());
  std::vector<absl::StatusOr<SymmetricCiphertext>> got = e.EncryptBatch(params, views);
  ASSERT_EQ(got.size(), params.size());
  EXPECT_EQ(bytes.total, want_cbc_bytes);
  for (size_t i = 0; i < params.size(); ++i) {
    SymmetricParams p = params[i];
    if (got[i].ok() && !p.nonce.has_value()) {
      EXPECT_EQ(got[i]->nonce.size(), 16u) << "item " << i;
      p.nonce = absl::string_view(got[i]->nonce);
    }
    absl::StatusOr<SymmetricCiphertext> want = e.Encrypt(p, pts[i]);
    ASSERT_EQ(got[i].status(), want.status()) << "item " << i;
    if (!want.ok()) continue;
    if (p.algorithm == Algorithm::kSm4Gcm) {  // nonce given: deterministic too
      EXPECT_EQ(got[i]->tag, want->tag) << "item " << i;
    }
    EXPECT_EQ(got[i]->nonce, want->nonce) << "item " << i;
    EXPECT_EQ(BytesToHex(got[i]->ciphertext), BytesToHex(want->ciphertext)) << "item " << i;
    absl::StatusOr<std::string> back = e.Decrypt(p, got[i]->ciphertext, got[i]->tag);
    ASSERT_THAT(back, IsOk()) << "item " << i;
    EXPECT_EQ(*back, pts[i]) << "item " << i;
  }
  EXPECT_THAT(got[7], StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(got[16], StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(got[25], StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(got[34], StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(got[9], StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(e.EncryptBatch({}, {}).empty());
}

TEST_F(EngineTest, BlockStreamsEqualOneShot) {
  CryptoEngine e = Engine();
  std::mt19937_64 rng(TestSeed());
  for (Algorithm alg : {Algorithm::kSm4Ecb, Algorithm::kSm4Cbc, Algorithm::kSm4Ctr,
                        Algorithm::kAes128Cbc, Algorithm::kAes128Ctr}) {
    for (size_t len : {0, 1, 15, 16, 17, 31, 32, 33, 100, 1000}) {
      const std::string pt = RandomBytes(rng, len);
      const std::string iv = alg == Algorithm::kSm4Ecb ? "" : RandomBytes(rng, 16);
      // A counter near 2^64 checks the carry across the 64-bit halves.
      std::string ctr_iv = iv;
      if (alg == Algorithm::kSm4Ctr && !iv.empty()) {
        for (int i = 8; i < 16; ++i) ctr_iv[i] = '\xff';
      }
      SymmetricParams p;
      p.algorithm = alg;
      // The key must outlive `p` (KeyInput holds a view): a named string, not the
      // conditional's temporary.
      const std::string key_copy = alg == Algorithm::kAes128Cbc || alg == Algorithm::kAes128Ctr
                                       ? std::string(16, 'a') : sm4_key_;
      p.key = KeyInput::Inline(key_copy);
      p.nonce = alg == Algorithm::kSm4Ctr ? ctr_iv : iv;
      ASSERT_OK_AND_ASSIGN(SymmetricCiphertext one, e.Encrypt(p, pt));
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamEncryptor> enc, e.NewStreamEncryptor(p));
      std::string streamed;
      size_t pos = 0;
      while (pos < pt.size()) {
        size_t n = std::min<size_t>(pt.size() - pos, 1 + rng() % 40);
        ASSERT_OK_AND_ASSIGN(std::optional<StreamChunk> c, enc->Update(pt.substr(pos, n)));
        if (c.has_value()) streamed += c->data;
        pos += n;
      }
      ASSERT_OK_AND_ASSIGN(StreamChunk last, enc->Finish());
      streamed += last.data;
      EXPECT_EQ(BytesToHex(streamed), BytesToHex(one.ciphertext))
          << AlgorithmName(alg) << " len " << len << " seed " << TestSeed();
      // And back, in other splits.
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamDecryptor> dec, e.NewStreamDecryptor(p));
      std::string back;
      pos = 0;
      while (pos < streamed.size()) {
        size_t n = std::min<size_t>(streamed.size() - pos, 1 + rng() % 40);
        ASSERT_OK_AND_ASSIGN(std::optional<StreamChunk> c, dec->Update(streamed.substr(pos, n), ""));
        if (c.has_value()) back += c->data;
        pos += n;
      }
      ASSERT_OK_AND_ASSIGN(StreamChunk tail, dec->Finish());
      back += tail.data;
      EXPECT_EQ(back, pt) << AlgorithmName(alg) << " len " << len;
    }
  }
}

// GCM streams follow the documented segment format: check the segments with OpenSSL's
// HKDF and AES-GCM, key K_N = HKDF-SHA256(salt N, IKM K, info "smcrypt aead stream" 0x00
// "AES-128-GCM" 0x00 SHA-256(aad)), nonce 0^7 || BE32(i) || last, empty aad.
TEST_F(EngineTest, AeadStreamSegmentsMatchOpenSsl) {
  CryptoEngine e = Engine();
  const std::string key(16, 'a');
  const std::string nonce = HexToBytes("000102030405060708090a0b");
  SymmetricParams p;
  p.algorithm = Algorithm::kAes128Gcm;
  p.key = KeyInput::Id("aes");
  p.nonce = nonce;
  p.aad = "header";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamEncryptor> enc, e.NewStreamEncryptor(p));
  std::vector<StreamChunk> segments;
  for (absl::string_view chunk : {"first segment", "second", "third and last"}) {
    ASSERT_OK_AND_ASSIGN(std::optional<StreamChunk> c, enc->Update(chunk));
    if (c.has_value()) segments.push_back(*c);
  }
  ASSERT_OK_AND_ASSIGN(StreamChunk last, enc->Finish());
  segments.push_back(last);
  ASSERT_EQ(segments.size(), 3u);
  std::string stream_key(16, '\0');
  {
    EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
    ASSERT_NE(kdf, nullptr);
    EVP_KDF_CTX* kctx = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    std::string info("smcrypt aead stream\0AES-128-GCM\0", 32);
    std::string aad_hash(32, '\0');
    unsigned int hash_len = 0;
    ASSERT_EQ(EVP_Digest("header", 6, reinterpret_cast<uint8_t*>(aad_hash.data()), &hash_len,
                         EVP_sha256(), nullptr), 1);
    info += aad_hash;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(key.data()),
                                          key.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(nonce.data()),
                                          nonce.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info.data(), info.size()),
        OSSL_PARAM_construct_end()};
    ASSERT_EQ(EVP_KDF_derive(kctx, reinterpret_cast<uint8_t*>(stream_key.data()),
                             stream_key.size(), params), 1);
    EVP_KDF_CTX_free(kctx);
  }
  const char* plain[] = {"first segment", "second", "third and last"};
  for (uint32_t i = 0; i < 3; ++i) {
    std::string n(12, '\0');
    n[10] = static_cast<char>(i);
    n[11] = i == 2 ? 1 : 0;
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    ASSERT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nullptr,
                                 reinterpret_cast<const uint8_t*>(stream_key.data()),
                                 reinterpret_cast<const uint8_t*>(n.data())), 1);
    int len = 0;
    std::string ct(strlen(plain[i]), '\0');
    ASSERT_EQ(EVP_EncryptUpdate(ctx, reinterpret_cast<uint8_t*>(ct.data()), &len,
                                reinterpret_cast<const uint8_t*>(plain[i]), ct.size()), 1);
    ASSERT_EQ(EVP_EncryptFinal_ex(ctx, nullptr, &len), 1);
    std::string tag(16, '\0');
    ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data()), 1);
    EVP_CIPHER_CTX_free(ctx);
    EXPECT_EQ(BytesToHex(segments[i].data), BytesToHex(ct)) << i;
    EXPECT_EQ(BytesToHex(segments[i].tag), BytesToHex(tag)) << i;
  }
  // Decrypt: in order it works; dropping the final segment or swapping fails.
  auto decrypt = [&](const std::vector<StreamChunk>& segs) -> absl::StatusOr<std::string> {
    absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec = e.NewStreamDecryptor(p);
    if (!dec.ok()) return dec.status();
    std::string out;
    for (const StreamChunk& s : segs) {
      absl::StatusOr<std::optional<StreamChunk>> c = (*dec)->Update(s.data, s.tag);
      if (!c.ok()) return c.status();
      if (c->has_value()) out += (*c)->data;
    }
    absl::StatusOr<StreamChunk> f = (*dec)->Finish();
    if (!f.ok()) return f.status();
    return out + f->data;
  };
  EXPECT_THAT(decrypt(segments), IsOkAndHolds(std::string("first segmentsecondthird and last")));
  EXPECT_THAT(decrypt({segments[0], segments[1]}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
  EXPECT_THAT(decrypt({segments[1], segments[0], segments[2]}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
}


// ---- Failed decryptions and verifications ------------------------------------------------

// FailureObserver counts OnDecryptFailure / OnVerifyFailure per algorithm.
class FailureObserver : public EngineObserver {
 public:
  void OnBytesProcessed(Algorithm, Operation, uint64_t) override {}
  void OnDecryptFailure(Algorithm alg) override { decrypt.push_back(alg); }
  void OnVerifyFailure(Algorithm alg) override { verify.push_back(alg); }
  std::vector<Algorithm> decrypt, verify;
};

// A tampered AEAD tag, a tampered SM2 ciphertext, a hybrid ciphertext opened with other
// info and a cut-short decrypting stream are decrypt failures; a wrong signature (unary
// and batched) and a wrong HMAC are verify failures; malformed requests are neither.
TEST_F(EngineTest, ObserverSeesFailedDecryptionsAndVerifications) {
  FailureObserver seen;
  CryptoEngine e(keys_.get(), EngineOptions{}, &seen);
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = KeyInput::Id("sm4");
  absl::StatusOr<SymmetricCiphertext> ct = e.Encrypt(p, "attack at dawn");
  ASSERT_THAT(ct, IsOk());
  p.nonce = ct->nonce;
  ASSERT_THAT(e.Decrypt(p, ct->ciphertext, ct->tag), IsOk());
  std::string bad_tag = ct->tag;
  bad_tag[0] ^= 1;
  EXPECT_THAT(e.Decrypt(p, ct->ciphertext, bad_tag),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
  EXPECT_THAT(e.Decrypt(p, ct->ciphertext, ""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(seen.decrypt, std::vector<Algorithm>{Algorithm::kSm4Gcm});

  absl::StatusOr<std::string> sm2_ct =
      e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Id("sm2"), "hello", Sm2CiphertextFormat{});
  ASSERT_THAT(sm2_ct, IsOk());
  std::string tampered = *sm2_ct;
  tampered[tampered.size() - 1] ^= 1;
  EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), tampered,
                                 Sm2CiphertextFormat{}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
  absl::StatusOr<std::string> hct =
      e.HybridEncrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2"), "x", "info");
  ASSERT_THAT(hct, IsOk());
  EXPECT_THAT(e.HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2"), *hct, "other"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
  EXPECT_THAT(e.HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("nope"), *hct, "info"),
              StatusIs(absl::StatusCode::kNotFound));

  // A stream cut short (its final segment dropped) fails once, at Update or Finish.
  SymmetricParams sp;
  sp.algorithm = Algorithm::kSm4Gcm;
  sp.key = KeyInput::Id("sm4");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamEncryptor> enc, e.NewStreamEncryptor(sp));
  const std::string nonce(enc->nonce());
  ASSERT_OK_AND_ASSIGN(std::optional<StreamChunk> none, enc->Update("first"));
  ASSERT_OK_AND_ASSIGN(std::optional<StreamChunk> first, enc->Update("second"));
  EXPECT_FALSE(none.has_value());
  ASSERT_TRUE(first.has_value());
  sp.nonce = nonce;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<StreamDecryptor> dec, e.NewStreamDecryptor(sp));
  absl::StatusOr<std::optional<StreamChunk>> opened = dec->Update(first->data, first->tag);
  absl::Status cut = opened.ok() ? dec->Finish().status() : opened.status();
  EXPECT_THAT(cut, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
  EXPECT_EQ(seen.decrypt, (std::vector<Algorithm>{Algorithm::kSm4Gcm, Algorithm::kSm2,
                                                  Algorithm::kHpkeSm2Sm3Sm4Gcm,
                                                  Algorithm::kSm4Gcm}));

  absl::StatusOr<std::string> sig =
      e.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "message", SignatureOptions{}, false);
  ASSERT_THAT(sig, IsOk());
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2pub"), "message", *sig,
                       SignatureOptions{}, false),
              IsOkAndHolds(true));
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2pub"), "other", *sig,
                       SignatureOptions{}, false),
              IsOkAndHolds(false));
  std::vector<VerifyItem> items(3);
  for (VerifyItem& it : items) {
    it.algorithm = Algorithm::kSm2;
    it.key = KeyInput::Id("sm2pub");
    it.data = "message";
    it.signature = *sig;
  }
  items[1].data = "other";
  items[2].key = KeyInput::Id("nope");
  std::vector<absl::StatusOr<bool>> batch = e.VerifyBatch(items);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_THAT(batch[0], IsOkAndHolds(true));
  EXPECT_THAT(batch[1], IsOkAndHolds(false));
  EXPECT_THAT(batch[2], StatusIs(absl::StatusCode::kNotFound));
  const std::string key(32, 'k');
  absl::StatusOr<std::string> mac = e.Hmac(Algorithm::kHmacSm3, KeyInput::Inline(key), "data");
  ASSERT_THAT(mac, IsOk());
  EXPECT_THAT(e.VerifyHmac(Algorithm::kHmacSm3, KeyInput::Inline(key), "data", *mac),
              IsOkAndHolds(true));
  EXPECT_THAT(e.VerifyHmac(Algorithm::kHmacSm3, KeyInput::Inline(key), "datum", *mac),
              IsOkAndHolds(false));
  EXPECT_THAT(e.VerifyHmac(Algorithm::kHmacSm3, KeyInput::Inline(key), "data", "short"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(seen.verify, (std::vector<Algorithm>{Algorithm::kSm2, Algorithm::kSm2,
                                                 Algorithm::kHmacSm3}));
}

// ---- Hybrid encryption -------------------------------------------------------------------

class CountingObserver : public EngineObserver {
 public:
  void OnBytesProcessed(Algorithm alg, Operation op, uint64_t bytes) override {
    if (alg == Algorithm::kHpkeSm2Sm3Sm4Gcm) (op == Operation::kEncrypt ? enc : dec) += bytes;
  }
  uint64_t enc = 0, dec = 0;
};

TEST_F(EngineTest, HybridGenerateKeyPairAndUnaryRoundTrip) {
  CountingObserver counts;
  EngineOptions o;
  CryptoEngine e(keys_.get(), o, &counts);
  for (Algorithm alg : {Algorithm::kHpkeSm2Sm3Sm4Gcm, Algorithm::kHpkeP256Sha256Aes128Gcm}) {
    absl::StatusOr<GeneratedKeyPair> kp = e.GenerateKeyPair(alg, false);
    ASSERT_THAT(kp, IsOk());
    absl::StatusOr<std::string> ct =
        e.HybridEncrypt(alg, KeyInput::Inline(kp->public_key_der), "hello", "info");
    ASSERT_THAT(ct, IsOk());
    EXPECT_EQ(ct->size(), 5u + 88u);
    EXPECT_THAT(e.HybridDecrypt(alg, KeyInput::Inline(SecretDataAsStringView(kp->private_key_der)),
                                *ct, "info"),
                IsOkAndHolds(std::string("hello")));
    EXPECT_THAT(e.HybridDecrypt(alg, KeyInput::Inline(SecretDataAsStringView(kp->private_key_der)),
                                *ct, "other"),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
  }
  EXPECT_EQ(counts.enc, 5u);
  EXPECT_EQ(counts.dec, 93u);
  // Inline private keys obey the policy.
  CryptoEngine deny = Engine(/*allow_inline=*/false);
  absl::StatusOr<std::string> ct = deny.HybridEncrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm,
                                                      KeyInput::Id("sm2"), "x", "");
  ASSERT_THAT(ct, IsOk());
  EXPECT_THAT(deny.HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm,
                                 KeyInput::Inline(std::string(32, '\x07')), *ct, ""),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(deny.HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2"), *ct, ""),
              IsOkAndHolds(std::string("x")));
}

// HybridEncryptBatch: both suites, keyring keys (a PRIVATE KEY's public half, a PUBLIC
// KEY, a P-256 key) and inline keys (SPKI DER, raw point), repeated so that items share
// a primitive, with bad items mixed in (not a hybrid algorithm, a key of the other family,
// unknown key_id, no key, garbage inline key). Every error equals HybridEncrypt's; every
// ciphertext opens with HybridDecrypt under the right private key and info, has its own
// ephemeral key (enc), and the bytes counted equal those of the OK items. Inline keys
// are resolved once per group: one LRU lookup per distinct (algorithm, key), no hits.
class HybridEncryptBytes : public EngineObserver {
 public:
  void OnBytesProcessed(Algorithm alg, Operation op, uint64_t bytes) override {
    if (IsHybridAlgorithm(alg) && op == Operation::kEncrypt) total += bytes;
  }
  uint64_t total = 0;
};

TEST_F(EngineTest, HybridEncryptBatchEqualsHybridEncryptPerItem) {
  const Algorithm kSm = Algorithm::kHpkeSm2Sm3Sm4Gcm;
  const Algorithm kP256 = Algorithm::kHpkeP256Sha256Aes128Gcm;
  dir_.Write("p256.pem", PrivatePem(Algorithm::kEcdsaP256));
  absl::StatusOr<std::unique_ptr<KeyStore>> store = KeyStore::LoadFromDirectory(dir_.path());
  ASSERT_THAT(store, IsOk());
  HybridEncryptBytes bytes;
  CryptoEngine e((*store).get(), EngineOptions{}, &bytes);
  absl::StatusOr<GeneratedKeyPair> sm_kp = e.GenerateKeyPair(kSm, false);
  absl::StatusOr<GeneratedKeyPair> p256_kp = e.GenerateKeyPair(kP256, false);
  ASSERT_THAT(sm_kp, IsOk());
  ASSERT_THAT(p256_kp, IsOk());
  // The raw 65-byte point of the generated SM2 key: the last 65 bytes of its SPKI.
  const std::string sm_raw = sm_kp->public_key_der.substr(sm_kp->public_key_der.size() - 65);
  ASSERT_EQ(sm_raw[0], '\x04');
  const KeyInput sm_private = KeyInput::Inline(SecretDataAsStringView(sm_kp->private_key_der));
  const KeyInput p256_private = KeyInput::Inline(SecretDataAsStringView(p256_kp->private_key_der));

  struct Case {
    Algorithm alg;
    KeyInput key;
    KeyInput private_key;  // kNone for items that must fail
  };
  const std::vector<Case> cases = {
      {kSm, KeyInput::Id("sm2"), KeyInput::Id("sm2")},
      {kSm, KeyInput::Id("sm2pub"), KeyInput::Id("sm2")},
      {kSm, KeyInput::Inline(sm_kp->public_key_der), sm_private},
      {kSm, KeyInput::Inline(sm_raw), sm_private},
      {kP256, KeyInput::Id("p256"), KeyInput::Id("p256")},
      {kP256, KeyInput::Inline(p256_kp->public_key_der), p256_private},
      {kP256, KeyInput::Id("sm2"), KeyInput{}},                       // SM2 key: FailedPrecondition
      {kP256, KeyInput::Inline(sm_kp->public_key_der), KeyInput{}},   // likewise, inline
      {kSm, KeyInput::Id("p256"), KeyInput{}},                        // P-256 key for SM suite
      {Algorithm::kSm4Gcm, KeyInput::Id("sm4"), KeyInput{}},          // not a hybrid algorithm
      {kSm, KeyInput::Id("nope"), KeyInput{}},                        // NotFound
      {kSm, KeyInput{}, KeyInput{}},                                  // no key
      {kSm, KeyInput::Inline("garbage"), KeyInput{}},                 // InvalidArgument
  };
  std::mt19937_64 rng(TestSeed());
  std::vector<std::string> pts, infos;
  std::vector<size_t> case_of;
  const int n = 130;
  pts.reserve(n);  // the items hold views of these strings
  infos.reserve(n);
  std::vector<HybridEncryptItem> items;
  for (int i = 0; i < n; ++i) {
    // Mostly good items, so each good case gets several (up to 8-lane groups and more).
    const size_t c = i % 3 == 2 ? 6 + (i / 3) % (cases.size() - 6) : (i / 3 + i % 3) % 6;
    case_of.push_back(c);
    pts.push_back(RandomBytes(rng, i == 0 ? 0 : rng() % 300));
    infos.push_back(RandomBytes(rng, rng() % 24));
    items.push_back({cases[c].alg, cases[c].key, pts.back(), infos.back()});
  }
  std::vector<absl::StatusOr<std::string>> got = e.HybridEncryptBatch(items);
  ASSERT_EQ(got.size(), items.size());
  // Bytes counted and LRU traffic, before the per-item HybridEncrypt calls below add theirs.
  uint64_t want_bytes = 0;
  for (int i = 0; i < n; ++i) {
    if (got[i].ok()) want_bytes += pts[i].size();
  }
  EXPECT_EQ(bytes.total, want_bytes);
  absl::flat_hash_set<std::pair<Algorithm, std::string>> inline_groups;
  for (const HybridEncryptItem& it : items) {
    if (it.key.kind == KeyInput::Kind::kInline && IsHybridAlgorithm(it.algorithm)) {
      inline_groups.emplace(it.algorithm, std::string(it.key.value));
    }
  }
  CacheStats cache = e.public_key_cache_stats();
  EXPECT_EQ(cache.hits, 0u);
  EXPECT_EQ(cache.misses, inline_groups.size());

  absl::flat_hash_set<std::string> encs;
  int ok = 0;
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i << ", case " << case_of[i]);
    const Case& c = cases[case_of[i]];
    absl::StatusOr<std::string> single = e.HybridEncrypt(c.alg, c.key, pts[i], infos[i]);
    ASSERT_EQ(got[i].ok(), single.ok()) << got[i].status() << " vs " << single.status();
    if (!single.ok()) {
      EXPECT_EQ(got[i].status(), single.status());
      EXPECT_EQ(c.private_key.kind, KeyInput::Kind::kNone) << got[i].status();
      continue;
    }
    ASSERT_NE(c.private_key.kind, KeyInput::Kind::kNone);
    ++ok;
    ASSERT_EQ(got[i]->size(), pts[i].size() + 88);
    encs.insert(got[i]->substr(7, 65));
    EXPECT_THAT(e.HybridDecrypt(c.alg, c.private_key, *got[i], infos[i]), IsOkAndHolds(pts[i]));
    EXPECT_THAT(e.HybridDecrypt(c.alg, c.private_key, *got[i], infos[i] + "x"),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
  }
  EXPECT_EQ(encs.size(), static_cast<size_t>(ok));  // a fresh ephemeral key per message
  EXPECT_GE(ok, 80);
  for (size_t c = 6; c < cases.size(); ++c) {
    SCOPED_TRACE(::testing::Message() << "case " << c);
    EXPECT_NE(std::find(case_of.begin(), case_of.end(), c), case_of.end());
  }
  EXPECT_THAT(got[2], StatusIs(absl::StatusCode::kFailedPrecondition));  // case 6
  EXPECT_TRUE(e.HybridEncryptBatch({}).empty());
}

TEST_F(EngineTest, HybridStreamAnySplitAndReleaseAfterVerification) {
  CountingObserver counts;
  CryptoEngine e(keys_.get(), EngineOptions{}, &counts);
  std::mt19937_64 rng(TestSeed());
  HybridStreamParams p;
  p.algorithm = Algorithm::kHpkeSm2Sm3Sm4Gcm;
  p.key = KeyInput::Id("sm2");  // a PRIVATE KEY entry: its public half encrypts
  p.info = "info";
  p.aad = "aad";
  absl::StatusOr<std::unique_ptr<HybridStreamEncryptor>> enc = e.NewHybridStreamEncryptor(p);
  ASSERT_THAT(enc, IsOk());
  EXPECT_EQ((*enc)->prefix().size(), 72u);
  const std::vector<std::string> pts = {RandomBytes(rng, 1), RandomBytes(rng, 1000),
                                        RandomBytes(rng, 5000)};
  std::string stream((*enc)->prefix());
  std::vector<size_t> chunk_end;  // offset just past each chunk
  for (const std::string& pt : pts) {
    absl::StatusOr<std::string> c = (*enc)->Update(pt);
    ASSERT_THAT(c, IsOk());
    EXPECT_EQ(c->size(), 5 + pt.size() + 16);
    stream += *c;
    chunk_end.push_back(stream.size());
  }
  EXPECT_THAT((*enc)->Update(""), IsOkAndHolds(std::string()));
  EXPECT_THAT((*enc)->Update(std::string(kHybridMaxChunkSize + 1, 'x')),
              StatusIs(absl::StatusCode::kInvalidArgument));
  absl::StatusOr<std::string> last = (*enc)->Finish();
  ASSERT_THAT(last, IsOk());
  EXPECT_EQ((*last)[0], '\x01');
  stream += *last;
  chunk_end.push_back(stream.size());
  EXPECT_EQ(counts.enc, 6001u);

  // Byte by byte: a chunk's plaintext comes out exactly when its last byte arrives.
  absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> dec = e.NewHybridStreamDecryptor(p);
  ASSERT_THAT(dec, IsOk());
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < stream.size(); ++i) {
    absl::StatusOr<std::string> pt = (*dec)->Update(stream.substr(i, 1));
    ASSERT_THAT(pt, IsOk()) << i;
    if (next < chunk_end.size() && i + 1 == chunk_end[next]) {
      EXPECT_EQ(*pt, next < pts.size() ? pts[next] : "") << i;
      ++next;
    } else {
      EXPECT_TRUE(pt->empty()) << "plaintext released mid-chunk at byte " << i;
    }
    out += *pt;
  }
  EXPECT_THAT((*dec)->Finish(), IsOk());
  EXPECT_EQ(out, pts[0] + pts[1] + pts[2]);
  EXPECT_THAT((*dec)->Update("x"), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("after the final chunk")));

  // Every proper prefix ending on a chunk boundary is a truncated stream.
  for (size_t end : {size_t{72}, chunk_end[0], chunk_end[1], chunk_end[2]}) {
    absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> d = e.NewHybridStreamDecryptor(p);
    ASSERT_THAT(d, IsOk());
    ASSERT_THAT((*d)->Update(stream.substr(0, end)), IsOk());
    EXPECT_THAT((*d)->Finish(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("truncated")));
  }
  // The wrong aad fails on the first chunk, releasing nothing.
  HybridStreamParams wrong = p;
  wrong.aad = "AAD";
  absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> d = e.NewHybridStreamDecryptor(wrong);
  ASSERT_THAT(d, IsOk());
  EXPECT_THAT((*d)->Update(stream),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("decryption failed")));
}

}  // namespace
}  // namespace smcrypt::server

namespace smcrypt::server {
namespace {

// Every byte a symmetric stream processes is counted, as for the unary RPCs.
class BytesByOperation : public EngineObserver {
 public:
  void OnBytesProcessed(Algorithm alg, Operation op, uint64_t bytes) override {
    if (alg == Algorithm::kSm4Gcm || alg == Algorithm::kSm4Ctr) {
      (op == Operation::kEncrypt ? enc : dec) += bytes;
    }
  }
  uint64_t enc = 0, dec = 0;
};

TEST(EngineStreamMetricsTest, SymmetricStreamsRecordBytes) {
  std::unique_ptr<KeyStore> keys = KeyStore::Empty();
  for (Algorithm alg : {Algorithm::kSm4Ctr, Algorithm::kSm4Gcm}) {
    BytesByOperation counts;
    CryptoEngine e(keys.get(), EngineOptions{}, &counts);
    SymmetricParams p;
    p.algorithm = alg;
    const std::string key(16, 'k');
    p.key = KeyInput::Inline(key);
    const std::string nonce(alg == Algorithm::kSm4Ctr ? 16 : 12, 'n');  // p.nonce is a view
    p.nonce = nonce;
    auto enc = e.NewStreamEncryptor(p);
    ASSERT_TRUE(enc.ok()) << enc.status();
    std::vector<StreamChunk> chunks;
    for (size_t len : {1000u, 3000u}) {
      auto out = (*enc)->Update(std::string(len, 'p'));
      ASSERT_TRUE(out.ok()) << out.status();
      if (out->has_value()) chunks.push_back(**out);
    }
    auto last = (*enc)->Finish();
    ASSERT_TRUE(last.ok()) << last.status();
    chunks.push_back(*last);
    EXPECT_EQ(counts.enc, 4000u) << AlgorithmName(alg);
    auto dec = e.NewStreamDecryptor(p);
    ASSERT_TRUE(dec.ok()) << dec.status();
    uint64_t ciphertext_bytes = 0;
    for (const StreamChunk& c : chunks) {
      if (c.data.empty() && c.tag.empty()) continue;
      auto opened = (*dec)->Update(c.data, c.tag);
      ASSERT_TRUE(opened.ok()) << AlgorithmName(alg) << ": " << opened.status();
      ciphertext_bytes += c.data.size();
    }
    ASSERT_TRUE((*dec)->Finish().ok());
    EXPECT_EQ(counts.dec, ciphertext_bytes) << AlgorithmName(alg);
    EXPECT_GT(counts.dec, 0u);
  }
}

// ---- Parsed-key caches ---------------------------------------------------------------

TEST(LruCacheTest, EvictsLeastRecentlyUsedAndStaysBounded) {
  LruCache<std::string> cache(3);
  for (const char* k : {"a", "b", "c"}) cache.Insert(k, std::make_shared<const std::string>(k));
  ASSERT_NE(cache.Find("a"), nullptr);  // "a" becomes the most recently used
  cache.Insert("d", std::make_shared<const std::string>("d"));
  EXPECT_EQ(cache.Find("b"), nullptr);  // the least recently used went
  for (const char* k : {"a", "c", "d"}) {
    std::shared_ptr<const std::string> v = cache.Find(k);
    ASSERT_NE(v, nullptr) << k;
    EXPECT_EQ(*v, k);
  }
  for (int i = 0; i < 100; ++i) {
    cache.Insert(absl::StrCat("k", i), std::make_shared<const std::string>("v"));
    EXPECT_LE(cache.stats().size, 3u);
  }
  CacheStats st = cache.stats();
  EXPECT_EQ(st.size, 3u);
  EXPECT_EQ(st.capacity, 3u);
  EXPECT_EQ(st.hits, 4u);
  EXPECT_EQ(st.misses, 1u);
  // A value handed out stays valid after its entry is evicted.
  std::shared_ptr<const std::string> held = cache.Find("k99");
  for (int i = 0; i < 10; ++i) cache.Insert(absl::StrCat("x", i), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(*held, "v");

  LruCache<std::string> off(0);
  off.Insert("a", std::make_shared<const std::string>("a"));
  EXPECT_EQ(off.Find("a"), nullptr);
  EXPECT_EQ(off.stats().size, 0u);
}

TEST_F(EngineTest, InlinePublicKeyCacheHitsGiveIdenticalResults) {
  CryptoEngine cached = Engine();
  EngineOptions no_cache_options;
  no_cache_options.public_key_cache_size = 0;
  CryptoEngine uncached(keys_.get(), no_cache_options, nullptr);
  const KeyInput pub = KeyInput::Inline(sm2_public_);
  ASSERT_OK_AND_ASSIGN(std::string sig,
                       cached.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "msg", {}, false));
  SignatureOptions alice;
  alice.user_id = "alice@example.com";
  ASSERT_OK_AND_ASSIGN(std::string alice_sig,
                       cached.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "msg", alice, true));
  for (int round = 0; round < 3; ++round) {
    for (const CryptoEngine* e : {&cached, &uncached}) {
      EXPECT_THAT(e->Verify(Algorithm::kSm2, pub, "msg", sig, {}, false), IsOkAndHolds(true));
      EXPECT_THAT(e->Verify(Algorithm::kSm2, pub, "msG", sig, {}, false), IsOkAndHolds(false));
      // The user ID is part of the cache key: the default-ID verifier is not reused.
      EXPECT_THAT(e->Verify(Algorithm::kSm2, pub, "msg", alice_sig, alice, true),
                  IsOkAndHolds(true));
      EXPECT_THAT(e->Verify(Algorithm::kSm2, pub, "msg", alice_sig, {}, false),
                  IsOkAndHolds(false));
      // Randomized encryption: every ciphertext opens with the private key.
      for (Sm2CiphertextFormat f : {Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kDer}) {
        ASSERT_OK_AND_ASSIGN(std::string ct, e->PublicKeyEncrypt(Algorithm::kSm2, pub, "plain", f));
        EXPECT_THAT(e->PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), ct, f),
                    IsOkAndHolds(std::string("plain")));
      }
      ASSERT_OK_AND_ASSIGN(std::string hct,
                           e->HybridEncrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, pub, "hybrid", "info"));
      EXPECT_THAT(e->HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2"), hct, "info"),
                  IsOkAndHolds(std::string("hybrid")));
    }
  }
  // One verifier per user ID, one encrypter per format, one hybrid encrypter; the rest
  // of the calls hit.
  const CacheStats st = cached.public_key_cache_stats();
  EXPECT_EQ(st.size, 5u);
  EXPECT_EQ(st.misses, 5u);
  EXPECT_EQ(st.hits, 3u * 7u - 5u);
  const CacheStats off = uncached.public_key_cache_stats();
  EXPECT_EQ(off.size, 0u);
  EXPECT_EQ(off.capacity, 0u);
  EXPECT_EQ(off.hits, 0u);
}

TEST_F(EngineTest, InlinePrivateKeysAreNeverCached) {
  CryptoEngine e = Engine();
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  ASSERT_THAT(kp, IsOk());
  const KeyInput priv = KeyInput::Inline(SecretDataAsStringView(kp->private_key_der));
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string sig, e.Sign(Algorithm::kSm2, priv, "m", {}, false));
    ASSERT_OK_AND_ASSIGN(std::string ct,
                         e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Inline(kp->public_key_der),
                                            "m", Sm2CiphertextFormat::kC1C3C2));
    EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, priv, ct, Sm2CiphertextFormat::kC1C3C2),
                IsOkAndHolds(std::string("m")));
    EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Inline(kp->public_key_der), "m", sig, {},
                         false),
                IsOkAndHolds(true));
  }
  // Only the two public-key primitives (encrypter, verifier) were cached.
  const CacheStats st = e.public_key_cache_stats();
  EXPECT_EQ(st.size, 2u);
  EXPECT_EQ(st.misses, 2u);
  EXPECT_EQ(st.hits, 4u);
}

TEST_F(EngineTest, PublicKeyCacheStaysBounded) {
  EngineOptions o;
  o.public_key_cache_size = 4;
  CryptoEngine e(keys_.get(), o, nullptr);
  std::vector<std::string> publics;
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(Algorithm::kSm2);
    ASSERT_THAT(kp, IsOk());
    publics.push_back(kp->public_key_der);
    ASSERT_THAT(e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Inline(publics.back()), "m",
                                   Sm2CiphertextFormat::kC1C3C2),
                IsOk());
    EXPECT_LE(e.public_key_cache_stats().size, 4u);
  }
  CacheStats st = e.public_key_cache_stats();
  EXPECT_EQ(st.size, 4u);
  EXPECT_EQ(st.misses, 10u);
  EXPECT_EQ(st.hits, 0u);
  // The most recent key is still there, the first one was evicted.
  ASSERT_THAT(e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Inline(publics.back()), "m",
                                 Sm2CiphertextFormat::kC1C3C2),
              IsOk());
  EXPECT_EQ(e.public_key_cache_stats().hits, 1u);
  ASSERT_THAT(e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Inline(publics.front()), "m",
                                 Sm2CiphertextFormat::kC1C3C2),
              IsOk());
  st = e.public_key_cache_stats();
  EXPECT_EQ(st.misses, 11u);
  EXPECT_EQ(st.size, 4u);
  // A key the factory refuses is not cached.
  EXPECT_THAT(e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Inline("not a key"), "m",
                                 Sm2CiphertextFormat::kC1C3C2),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(e.public_key_cache_stats().size, 4u);
}

TEST_F(EngineTest, KeyringPrimitivesAreBuiltOnceAndMatchFreshKeys) {
  CryptoEngine e = Engine();
  EXPECT_GT(e.keyring_primitives(), 0u);
  // SM4-GCM with a given nonce: the keyring's prebuilt AEAD and the same key sent inline
  // (parsed per request) give the same bytes.
  const std::string nonce(12, 'n');
  SymmetricParams by_id;
  by_id.algorithm = Algorithm::kSm4Gcm;
  by_id.key = KeyInput::Id("sm4");
  by_id.nonce = nonce;
  by_id.aad = "aad";
  SymmetricParams by_value = by_id;
  by_value.key = KeyInput::Inline(sm4_key_);
  ASSERT_OK_AND_ASSIGN(SymmetricCiphertext a, e.Encrypt(by_id, "plaintext"));
  ASSERT_OK_AND_ASSIGN(SymmetricCiphertext b, e.Encrypt(by_value, "plaintext"));
  EXPECT_EQ(a.ciphertext, b.ciphertext);
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_THAT(e.Decrypt(by_id, a.ciphertext, a.tag), IsOkAndHolds(std::string("plaintext")));
  std::string bad_tag = a.tag;
  bad_tag[0] ^= 1;
  EXPECT_THAT(e.Decrypt(by_id, a.ciphertext, bad_tag),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  // A 12-byte tag is not the prebuilt one: parsed per request, still right.
  by_id.tag_length = 12;
  ASSERT_OK_AND_ASSIGN(SymmetricCiphertext c, e.Encrypt(by_id, "plaintext"));
  EXPECT_EQ(c.tag, a.tag.substr(0, 12));
  EXPECT_THAT(e.Decrypt(by_id, c.ciphertext, c.tag), IsOkAndHolds(std::string("plaintext")));
  // SM2 through keyring ids, default options: no LRU traffic.
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(std::string sig,
                         e.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "m", {}, false));
    EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2pub"), "m", sig, {}, false),
                IsOkAndHolds(true));
    EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Inline(sm2_public_), "m", sig, {}, false),
                IsOkAndHolds(true));
    ASSERT_OK_AND_ASSIGN(std::string ct, e.PublicKeyEncrypt(Algorithm::kSm2, KeyInput::Id("sm2pub"),
                                                            "m", Sm2CiphertextFormat::kC1C2C3));
    EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), ct,
                                   Sm2CiphertextFormat::kC1C2C3),
                IsOkAndHolds(std::string("m")));
    // The wrong format fails as before.
    EXPECT_THAT(e.PublicKeyDecrypt(Algorithm::kSm2, KeyInput::Id("sm2"), ct,
                                   Sm2CiphertextFormat::kDer),
                StatusIs(absl::StatusCode::kInvalidArgument));
  }
  // Only the inline verifier went through the LRU (one miss, two hits).
  const CacheStats st = e.public_key_cache_stats();
  EXPECT_EQ(st.misses, 1u);
  EXPECT_EQ(st.hits, 2u);
  // Keyring key with a non-default user ID: parsed for the request, still right.
  SignatureOptions alice;
  alice.user_id = "alice";
  ASSERT_OK_AND_ASSIGN(std::string asig,
                       e.Sign(Algorithm::kSm2, KeyInput::Id("sm2"), "m", alice, true));
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2pub"), "m", asig, alice, true),
              IsOkAndHolds(true));
  EXPECT_THAT(e.Verify(Algorithm::kSm2, KeyInput::Id("sm2pub"), "m", asig, {}, false),
              IsOkAndHolds(false));
}

TEST(WorkerPoolTest, RunsEveryTaskOffTheCallerAndDrainsOnDestruction) {
  std::atomic<int> ran{0};
  std::atomic<int> on_caller{0};
  const std::thread::id caller = std::this_thread::get_id();
  {
    WorkerPool pool(2, 16);
    EXPECT_EQ(pool.num_threads(), 2u);
    for (int i = 0; i < 1000; ++i) {
      pool.Submit([&] {
        if (std::this_thread::get_id() == caller) on_caller.fetch_add(1);
        ran.fetch_add(1);
      });
    }
  }  // the destructor runs what is still queued
  EXPECT_EQ(ran.load(), 1000);
  EXPECT_EQ(on_caller.load(), 0);
  EXPECT_GE(DefaultWorkerThreads(), 1u);
}

TEST(WorkerPoolTest, SubmitWaitsWhileTheQueueIsFull) {
  absl::Notification release;
  std::atomic<int> ran{0};
  WorkerPool pool(1, 2);
  pool.Submit([&] {
    release.WaitForNotification();
    ran.fetch_add(1);
  });
  while (pool.queued() != 0) absl::SleepFor(absl::Milliseconds(1));  // the worker took it
  pool.Submit([&] { ran.fetch_add(1); });
  pool.Submit([&] { ran.fetch_add(1); });  // the queue is now full
  absl::Notification third_queued;
  std::thread submitter([&] {
    pool.Submit([&] { ran.fetch_add(1); });
    third_queued.Notify();
  });
  EXPECT_FALSE(third_queued.WaitForNotificationWithTimeout(absl::Milliseconds(200)));
  EXPECT_EQ(pool.queued(), 2u);
  release.Notify();
  third_queued.WaitForNotification();
  submitter.join();
  while (ran.load() != 4) absl::SleepFor(absl::Milliseconds(1));
  EXPECT_EQ(ran.load(), 4);
}

}  // namespace
}  // namespace smcrypt::server
