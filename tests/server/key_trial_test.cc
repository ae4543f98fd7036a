// Checks with a keyring key named without a version (crypto.proto, KeyRef "Key
// versions"; CryptoEngine with KeyInput::trial): every retained version is tried, the
// primary first and then newest first; a forgery is refused under every version and
// names them; unauthenticated modes and short tags need a named version; min_version
// leaves old versions out; a key of one version answers as before.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/audit_log.h"
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
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_keytrial_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(fs::path(path_) / name, std::ios::binary) << text;
    fs::permissions(fs::path(path_) / name, fs::perms::owner_read | fs::perms::owner_write);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string PrivatePem(Algorithm alg) {
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(alg);
  EXPECT_TRUE(kp.ok()) << kp.status();
  return PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
}

// Observer counts what the engine reports of trials and failures.
class Observer : public EngineObserver {
 public:
  void OnBytesProcessed(Algorithm, Operation, uint64_t) override {}
  void OnDecryptFailure(Algorithm) override { ++decrypt_failures; }
  void OnVerifyFailure(Algorithm) override { ++verify_failures; }
  void OnKeyVersionTrials(Operation op, bool authenticated, uint32_t extra) override {
    trials[{std::string(OperationName(op)), authenticated}] += extra;
  }
  int decrypt_failures = 0;
  int verify_failures = 0;
  std::map<std::pair<std::string, bool>, uint32_t> trials;
};

// Keys with versions 1, 2, 3 of each family the checks use ("sm4", "aes", "sm2", "ec",
// "rsa", "hmac", "xts"), and "plain", one SM4 `plain.pem`.
class KeyTrialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // RSA key generation is slow: the keys are made once for the suite.
    for (int v = 1; v <= 3; ++v) {
      pems_[{"sm2", v}] = PrivatePem(Algorithm::kSm2);
      pems_[{"ec", v}] = PrivatePem(Algorithm::kEcdsaP256);
      pems_[{"rsa", v}] = PrivatePem(Algorithm::kRsa2048Pss);
    }
  }

  void Build(uint32_t max_version = 3, const std::string& min_version = "") {
    for (uint32_t v = 1; v <= max_version; ++v) {
      const std::string n = ".v" + std::to_string(v) + ".pem";
      dir_.Write("sm4" + n, PemEncode("SM4 KEY", std::string(16, char('0' + v))));
      // SM4-XTS: K1 ‖ K2, which must differ.
      dir_.Write("xts" + n,
                 PemEncode("SM4 KEY", std::string(16, char('0' + v)) + std::string(16, 'x')));
      dir_.Write("aes" + n, PemEncode("AES KEY", std::string(32, char('a' + v))));
      dir_.Write("hmac" + n, PemEncode("HMAC KEY", std::string(20, char('h' + v))));
      for (const char* id : {"sm2", "ec", "rsa"}) {
        dir_.Write(id + n, pems_[{id, static_cast<int>(v)}]);
      }
    }
    if (!min_version.empty()) {
      for (const char* id : {"sm4", "sm2", "ec", "rsa", "hmac", "aes"}) {
        dir_.Write(std::string(id) + ".min_version", min_version);
      }
    }
    dir_.Write("plain.pem", PemEncode("SM4 KEY", std::string(16, 'p')));
    absl::StatusOr<std::unique_ptr<KeyStore>> keys = KeyStore::LoadFromDirectory(dir_.path());
    ASSERT_THAT(keys, IsOk());
    engine_ = std::make_unique<CryptoEngine>(std::shared_ptr<const KeyStore>(*std::move(keys)),
                                             EngineOptions{}, &observer_);
  }

  // Trial: `id` named without a version, as the service pins it (PinKeyVersion).
  KeyInput Trial(absl::string_view id) {  // `id` must outlive the KeyInput
    KeyInput k = KeyInput::Id(id);
    engine_->Resolve(&k);
    EXPECT_THAT(k.entry, IsOk());
    if (k.entry.ok()) k.version = (*k.entry)->version;
    k.report_version = true;
    k.trial = std::make_shared<KeyTrial>();
    return k;
  }

  static std::map<std::pair<std::string, int>, std::string> pems_;
  TempDir dir_;
  Observer observer_;
  std::unique_ptr<CryptoEngine> engine_;
};

std::map<std::pair<std::string, int>, std::string> KeyTrialTest::pems_;

std::string Flip(std::string s, size_t i) {
  s[i] ^= 0x01;
  return s;
}

// ExpectTriedAll: the error of a decryption refused under versions 3, 2, 1 of `id`.
void ExpectTriedAll(const absl::Status& s, const std::string& id) {
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("decryption failed (tried key '" + id +
                                    "' versions 3, 2, 1)")));
  StatusReason r = ReasonOf(s);
  EXPECT_EQ(r.reason, reason::kDecryptionFailed);
  EXPECT_THAT(r.metadata, UnorderedElementsAre(Pair("key_id", id),
                                               Pair("key_versions_tried", "3,2,1")));
}

TEST_F(KeyTrialTest, AeadOpensUnderEachVersionAndReportsIt) {
  Build();
  for (auto [alg, id] : {std::pair{Algorithm::kSm4Gcm, "sm4"}, {Algorithm::kSm4Ccm, "sm4"},
                         {Algorithm::kAes256Gcm, "aes"}}) {
    for (uint32_t v = 1; v <= 3; ++v) {
      SCOPED_TRACE(std::string(AlgorithmName(alg)) + " v" + std::to_string(v));
      SymmetricParams p;
      p.algorithm = alg;
      p.aad = "context";
      p.key = KeyInput::Id(id, v);
      absl::StatusOr<SymmetricCiphertext> ct = engine_->Encrypt(p, std::string(4096, 'x'));
      ASSERT_THAT(ct, IsOk());
      p.nonce = ct->nonce;
      p.key = Trial(id);
      absl::StatusOr<std::string> pt = engine_->Decrypt(p, ct->ciphertext, ct->tag);
      ASSERT_THAT(pt, IsOk());
      EXPECT_EQ(*pt, std::string(4096, 'x'));
      EXPECT_EQ(p.key.trial->version, v);
      // The primary (3) first, then newest first, up to the one that opened.
      std::vector<uint32_t> expected;
      for (uint32_t t = 3; t >= v; --t) expected.push_back(t);
      EXPECT_EQ(p.key.trial->tried, expected);

      // A forged tag: refused under every version, naming them.
      p.key = Trial(id);
      absl::StatusOr<std::string> forged = engine_->Decrypt(p, ct->ciphertext, Flip(ct->tag, 0));
      ExpectTriedAll(forged.status(), id);
      EXPECT_THAT(p.key.trial->tried, ElementsAre(3, 2, 1));
      EXPECT_EQ(p.key.trial->version, 0u);
    }
  }
  // 9 decryptions opened (3 + 2 + 1 versions tried each time): 3 × (0 + 1 + 2) extra; 9
  // forgeries, 2 extra each.
  EXPECT_EQ((observer_.trials[{"decrypt", true}]), 9u);
  EXPECT_EQ((observer_.trials[{"decrypt", false}]), 18u);
  EXPECT_EQ(observer_.decrypt_failures, 9);
}

TEST_F(KeyTrialTest, UnauthenticatedModesAndShortTagsNeedAVersion) {
  Build();
  struct Case {
    Algorithm alg;
    const char* id;
  };
  for (Case c : {Case{Algorithm::kSm4Ecb, "sm4"}, {Algorithm::kSm4Cbc, "sm4"},
                 {Algorithm::kSm4Ctr, "sm4"}, {Algorithm::kSm4Cfb, "sm4"},
                 {Algorithm::kSm4Ofb, "sm4"}, {Algorithm::kSm4Xts, "xts"},
                 {Algorithm::kAes256Cbc, "aes"}, {Algorithm::kAes256Ctr, "aes"}}) {
    SCOPED_TRACE(AlgorithmName(c.alg));
    SymmetricParams p;
    p.algorithm = c.alg;
    p.key = KeyInput::Id(c.id, 1);
    absl::StatusOr<SymmetricCiphertext> ct = engine_->Encrypt(p, std::string(64, 'u'));
    ASSERT_THAT(ct, IsOk());
    p.nonce = ct->nonce;
    // Named: it opens.
    EXPECT_THAT(engine_->Decrypt(p, ct->ciphertext, ""), IsOk());
    p.key = Trial(c.id);
    absl::StatusOr<std::string> pt = engine_->Decrypt(p, ct->ciphertext, "");
    EXPECT_THAT(pt, StatusIs(absl::StatusCode::kFailedPrecondition,
                             HasSubstr("set key.key_version")));
    StatusReason r = ReasonOf(pt.status());
    EXPECT_EQ(r.reason, reason::kKeyVersionRequired);
    EXPECT_THAT(r.metadata, UnorderedElementsAre(Pair("key_id", c.id),
                                                 Pair("retained_versions", "3,2,1")));
    if (c.alg != Algorithm::kSm4Xts) {
      EXPECT_THAT(engine_->NewStreamDecryptor(p),
                  StatusIs(absl::StatusCode::kFailedPrecondition));
    }
  }
  // Tags under 12 bytes (CCM's 4 to 10; GCM's are 12 to 16) are never tried.
  for (uint32_t tag_length : {4u, 8u, 10u}) {
    SymmetricParams p;
    p.algorithm = Algorithm::kSm4Ccm;
    p.tag_length = tag_length;
    p.key = KeyInput::Id("sm4", 2);
    absl::StatusOr<SymmetricCiphertext> ct = engine_->Encrypt(p, "short tag");
    ASSERT_THAT(ct, IsOk());
    p.nonce = ct->nonce;
    EXPECT_THAT(engine_->Decrypt(p, ct->ciphertext, ct->tag), IsOk());
    p.key = Trial("sm4");
    absl::StatusOr<std::string> pt = engine_->Decrypt(p, ct->ciphertext, ct->tag);
    EXPECT_THAT(pt, StatusIs(absl::StatusCode::kFailedPrecondition,
                             HasSubstr(std::to_string(tag_length) +
                                       "-byte tag is under 12 bytes")));
    EXPECT_EQ(ReasonOf(pt.status()).reason, reason::kKeyVersionRequired);
  }
  // A 12-byte tag is tried.
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.tag_length = 12;
  p.key = KeyInput::Id("sm4", 1);
  absl::StatusOr<SymmetricCiphertext> ct = engine_->Encrypt(p, "twelve");
  ASSERT_THAT(ct, IsOk());
  p.nonce = ct->nonce;
  p.key = Trial("sm4");
  EXPECT_THAT(engine_->Decrypt(p, ct->ciphertext, ct->tag), IsOk());
  EXPECT_EQ(p.key.trial->version, 1u);
}

TEST_F(KeyTrialTest, OneRetainedVersionAnswersAsBefore) {
  Build();
  // A plain key: a CBC ciphertext and an 8-byte CCM tag open; a forgery is the bare
  // "decryption failed" with no metadata.
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Cbc;
  p.key = KeyInput::Id("plain");
  absl::StatusOr<SymmetricCiphertext> ct = engine_->Encrypt(p, "plain");
  ASSERT_THAT(ct, IsOk());
  p.nonce = ct->nonce;
  p.key = Trial("plain");
  EXPECT_THAT(engine_->Decrypt(p, ct->ciphertext, ""), IsOk());

  p.algorithm = Algorithm::kSm4Ccm;
  p.tag_length = 8;
  p.nonce.reset();
  p.key = KeyInput::Id("plain");
  ct = engine_->Encrypt(p, "plain");
  ASSERT_THAT(ct, IsOk());
  p.nonce = ct->nonce;
  p.key = Trial("plain");
  EXPECT_THAT(engine_->Decrypt(p, ct->ciphertext, ct->tag), IsOk());
  absl::StatusOr<std::string> forged = engine_->Decrypt(p, ct->ciphertext, Flip(ct->tag, 1));
  EXPECT_THAT(forged, StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  EXPECT_TRUE(ReasonOf(forged.status()).metadata.empty());
  EXPECT_TRUE(observer_.trials.empty());
}

TEST_F(KeyTrialTest, MinVersionLeavesRetiredVersionsOut) {
  Build(3, "2");
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  // Version 1's key, given inline: version 1 is retired and no longer tried.
  const std::string v1_key(16, '1');  // outlives the KeyInput's view
  p.key = KeyInput::Inline(v1_key);
  absl::StatusOr<SymmetricCiphertext> ct = engine_->Encrypt(p, "old");
  ASSERT_THAT(ct, IsOk());
  p.nonce = ct->nonce;
  p.key = Trial("sm4");
  absl::StatusOr<std::string> pt = engine_->Decrypt(p, ct->ciphertext, ct->tag);
  EXPECT_THAT(pt, StatusIs(absl::StatusCode::kInvalidArgument,
                           HasSubstr("tried key 'sm4' versions 3, 2)")));
  EXPECT_THAT(p.key.trial->tried, ElementsAre(3, 2));
  // Version 2 is still tried.
  p.key = KeyInput::Id("sm4", 2);
  ct = engine_->Encrypt(p, "kept");
  ASSERT_THAT(ct, IsOk());
  p.nonce = ct->nonce;
  p.key = Trial("sm4");
  EXPECT_THAT(engine_->Decrypt(p, ct->ciphertext, ct->tag), IsOk());
  EXPECT_EQ(p.key.trial->version, 2u);
  // Retained versions for KEY_VERSION_REQUIRED are 3, 2 only.
  p.algorithm = Algorithm::kSm4Cbc;
  static const std::string kIv(16, '\0');
  p.nonce = kIv;
  StatusReason r = ReasonOf(engine_->Decrypt(p, std::string(16, 'c'), "").status());
  EXPECT_THAT(r.metadata, UnorderedElementsAre(Pair("key_id", "sm4"),
                                               Pair("retained_versions", "3,2")));
}

TEST_F(KeyTrialTest, PublicKeyAndHybridDecryptTryEveryVersion) {
  Build();
  struct Case {
    Algorithm alg;
    const char* id;
  };
  for (Case c : {Case{Algorithm::kSm2, "sm2"}, {Algorithm::kRsa2048Oaep, "rsa"}}) {
    for (uint32_t v = 1; v <= 3; ++v) {
      SCOPED_TRACE(std::string(AlgorithmName(c.alg)) + " v" + std::to_string(v));
      absl::StatusOr<std::string> ct = engine_->PublicKeyEncrypt(
          c.alg, KeyInput::Id(c.id, v), "pk secret", Sm2CiphertextFormat::kC1C3C2);
      ASSERT_THAT(ct, IsOk());
      KeyInput k = Trial(c.id);
      absl::StatusOr<std::string> pt =
          engine_->PublicKeyDecrypt(c.alg, k, *ct, Sm2CiphertextFormat::kC1C3C2);
      ASSERT_THAT(pt, IsOk());
      EXPECT_EQ(*pt, "pk secret");
      EXPECT_EQ(k.trial->version, v);
      // A forged SM2 C3 (bytes 65..96 of C1C3C2) or OAEP block.
      const size_t at = c.alg == Algorithm::kSm2 ? 70 : ct->size() - 1;
      k = Trial(c.id);
      ExpectTriedAll(
          engine_->PublicKeyDecrypt(c.alg, k, Flip(*ct, at), Sm2CiphertextFormat::kC1C3C2)
              .status(),
          c.id);
    }
  }
  for (uint32_t v = 1; v <= 3; ++v) {
    absl::StatusOr<std::string> ct = engine_->HybridEncrypt(
        Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2", v), "hpke secret", "info");
    ASSERT_THAT(ct, IsOk());
    KeyInput k = Trial("sm2");
    absl::StatusOr<std::string> pt =
        engine_->HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, k, *ct, "info");
    ASSERT_THAT(pt, IsOk());
    EXPECT_EQ(*pt, "hpke secret");
    EXPECT_EQ(k.trial->version, v);
    k = Trial("sm2");
    ExpectTriedAll(engine_->HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, k,
                                          Flip(*ct, ct->size() - 1), "info")
                       .status(),
                   "sm2");
  }
}

TEST_F(KeyTrialTest, VerifyAndHmacTryEveryVersion) {
  Build();
  struct Case {
    Algorithm alg;
    const char* id;
  };
  for (Case c : {Case{Algorithm::kSm2, "sm2"}, {Algorithm::kEcdsaP256, "ec"},
                 {Algorithm::kRsa2048Pss, "rsa"}}) {
    std::vector<VerifyItem> items;
    std::vector<std::string> sigs;
    sigs.reserve(4);
    for (uint32_t v = 1; v <= 3; ++v) {
      SCOPED_TRACE(std::string(AlgorithmName(c.alg)) + " v" + std::to_string(v));
      absl::StatusOr<std::string> sig =
          engine_->Sign(c.alg, KeyInput::Id(c.id, v), "signed", {}, false);
      ASSERT_THAT(sig, IsOk());
      KeyInput k = Trial(c.id);
      EXPECT_THAT(engine_->Verify(c.alg, k, "signed", *sig, {}, false), IsOk());
      EXPECT_TRUE(*engine_->Verify(c.alg, k, "signed", *sig, {}, false));
      EXPECT_EQ(k.trial->version, v);
      sigs.push_back(*sig);
    }
    // A forged signature (another message's): false under every version.
    KeyInput k = Trial(c.id);
    absl::StatusOr<bool> forged = engine_->Verify(c.alg, k, "forged", sigs[0], {}, false);
    ASSERT_THAT(forged, IsOk());
    EXPECT_FALSE(*forged);
    EXPECT_THAT(k.trial->tried, ElementsAre(3, 2, 1));
    EXPECT_EQ(k.trial->version, 0u);
    // VerifyBatch: each item reports its own version; the forged one tried all.
    sigs.push_back(sigs[0]);
    for (size_t i = 0; i < sigs.size(); ++i) {
      items.push_back({c.alg, Trial(c.id), i < 3 ? "signed" : "forged", sigs[i], {}, false});
    }
    std::vector<absl::StatusOr<bool>> res = engine_->VerifyBatch(items);
    ASSERT_EQ(res.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      ASSERT_THAT(res[i], IsOk());
      EXPECT_EQ(*res[i], i < 3);
      EXPECT_EQ(items[i].key.trial->version, i < 3 ? i + 1 : 0u);
    }
    EXPECT_THAT(items[3].key.trial->tried, ElementsAre(3, 2, 1));
  }
  for (uint32_t v = 1; v <= 3; ++v) {
    absl::StatusOr<std::string> mac =
        engine_->Hmac(Algorithm::kHmacSm3, KeyInput::Id("hmac", v), "maced");
    ASSERT_THAT(mac, IsOk());
    KeyInput k = Trial("hmac");
    EXPECT_TRUE(*engine_->VerifyHmac(Algorithm::kHmacSm3, k, "maced", *mac));
    EXPECT_EQ(k.trial->version, v);
    // Truncated to 16 bytes, the shortest accepted.
    k = Trial("hmac");
    EXPECT_TRUE(*engine_->VerifyHmac(Algorithm::kHmacSm3, k, "maced", mac->substr(0, 16)));
    EXPECT_EQ(k.trial->version, v);
    k = Trial("hmac");
    EXPECT_FALSE(*engine_->VerifyHmac(Algorithm::kHmacSm3, k, "maced", Flip(*mac, 3)));
    EXPECT_THAT(k.trial->tried, ElementsAre(3, 2, 1));
  }
  EXPECT_EQ((observer_.trials[{"mac", false}]), 6u);
  EXPECT_EQ((observer_.trials[{"mac", true}]), 2u * (0 + 1 + 2));
}

// StreamOf seals `chunks` with a symmetric stream under `p` and returns {nonce, segments}.
std::pair<std::string, std::vector<StreamChunk>> SealStream(const CryptoEngine& e,
                                                            const SymmetricParams& p,
                                                            const std::vector<std::string>& in) {
  absl::StatusOr<std::unique_ptr<StreamEncryptor>> enc = e.NewStreamEncryptor(p);
  EXPECT_THAT(enc, IsOk());
  std::vector<StreamChunk> out;
  for (const std::string& c : in) {
    absl::StatusOr<std::optional<StreamChunk>> s = (*enc)->Update(c);
    EXPECT_THAT(s, IsOk());
    if (s.ok() && s->has_value()) out.push_back(**s);
  }
  absl::StatusOr<StreamChunk> last = (*enc)->Finish();
  EXPECT_THAT(last, IsOk());
  out.push_back(*last);
  return {std::string((*enc)->nonce()), out};
}

// OpenStream feeds `segments` to a decrypting stream and returns the plaintext or the
// first error.
absl::StatusOr<std::string> OpenStream(StreamDecryptor& d,
                                       const std::vector<StreamChunk>& segments) {
  std::string pt;
  for (const StreamChunk& s : segments) {
    absl::StatusOr<std::optional<StreamChunk>> out = d.Update(s.data, s.tag);
    if (!out.ok()) return out.status();
    if (out->has_value()) pt += (*out)->data;
  }
  absl::StatusOr<StreamChunk> last = d.Finish();
  if (!last.ok()) return last.status();
  return pt + last->data;
}

TEST_F(KeyTrialTest, DecryptingStreamsKeepTheVersionThatOpens) {
  Build();
  for (uint32_t v = 1; v <= 3; ++v) {
    SCOPED_TRACE("v" + std::to_string(v));
    SymmetricParams p;
    p.algorithm = Algorithm::kSm4Gcm;
    p.key = KeyInput::Id("sm4", v);
    auto [nonce, segments] = SealStream(*engine_, p, {"one ", "two ", "three"});
    ASSERT_GE(segments.size(), 3u);
    p.nonce = nonce;
    p.key = Trial("sm4");
    absl::StatusOr<std::unique_ptr<StreamDecryptor>> d = engine_->NewStreamDecryptor(p);
    ASSERT_THAT(d, IsOk());
    absl::StatusOr<std::string> pt = OpenStream(**d, segments);
    ASSERT_THAT(pt, IsOk());
    EXPECT_EQ(*pt, "one two three");
    EXPECT_EQ(p.key.trial->version, v);
    // A forged segment tag before any segment opened: every version refuses.
    p.key = Trial("sm4");
    d = engine_->NewStreamDecryptor(p);
    ASSERT_THAT(d, IsOk());
    std::vector<StreamChunk> forged = segments;
    forged[0].tag = Flip(forged[0].tag, 0);
    ExpectTriedAll(OpenStream(**d, forged).status(), "sm4");
    // A stream of only its final segment: Finish chooses.
    p.key = KeyInput::Id("sm4", v);
    auto [nonce1, single] = SealStream(*engine_, p, {});
    p.nonce = nonce1;
    p.key = Trial("sm4");
    d = engine_->NewStreamDecryptor(p);
    ASSERT_THAT(d, IsOk());
    pt = OpenStream(**d, single);
    ASSERT_THAT(pt, IsOk());
    EXPECT_EQ(*pt, "");
    EXPECT_EQ(p.key.trial->version, v);
  }
  for (uint32_t v = 1; v <= 3; ++v) {
    HybridStreamParams hp;
    hp.info = "info";
    hp.key = KeyInput::Id("sm2", v);
    absl::StatusOr<std::unique_ptr<HybridStreamEncryptor>> enc =
        engine_->NewHybridStreamEncryptor(hp);
    ASSERT_THAT(enc, IsOk());
    std::string wire((*enc)->prefix());
    wire += *(*enc)->Update("hybrid ");
    wire += *(*enc)->Update("stream");
    wire += *(*enc)->Finish();
    hp.key = Trial("sm2");
    absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> d =
        engine_->NewHybridStreamDecryptor(hp);
    ASSERT_THAT(d, IsOk());
    // In two pieces: the first ends inside the first chunk.
    absl::StatusOr<std::string> a = (*d)->Update(wire.substr(0, 80));
    ASSERT_THAT(a, IsOk());
    EXPECT_EQ(*a, "");
    absl::StatusOr<std::string> b = (*d)->Update(wire.substr(80));
    ASSERT_THAT(b, IsOk());
    EXPECT_EQ(*b, "hybrid stream");
    EXPECT_THAT((*d)->Finish(), IsOk());
    EXPECT_EQ(hp.key.trial->version, v);
    hp.key = Trial("sm2");
    d = engine_->NewHybridStreamDecryptor(hp);
    ASSERT_THAT(d, IsOk());
    // A byte of the first chunk's tag (after header 7, enc 65 and the chunk's framing).
    ExpectTriedAll((*d)->Update(Flip(wire, 90)).status(), "sm2");
  }
}

TEST(KeyTrialAuditTest, LineListsTheVersionsTriedAfterKeyVersion) {
  AuditRecord r;
  r.method = "HybridDecrypt";
  r.algorithm = "HPKE-SM2-SM3-SM4GCM";
  r.key = AccessKey::Id("pay");
  r.key_version = 1;
  const std::vector<uint32_t> tried = {3, 2, 1};
  r.key_versions_tried = tried;
  EXPECT_THAT(AuditLog::FormatLine(r),
              HasSubstr("\"key_id\":\"pay\",\"key_version\":1,\"key_versions_tried\":[3,2,1],"
                        "\"status\":\"OK\"}"));
  // None authenticated: no key_version, the versions tried.
  r.key_version = 0;
  r.code = absl::StatusCode::kInvalidArgument;
  EXPECT_THAT(AuditLog::FormatLine(r),
              HasSubstr("\"key_id\":\"pay\",\"key_versions_tried\":[3,2,1],"
                        "\"status\":\"INVALID_ARGUMENT\"}"));
  // One version tried: not listed.
  const std::vector<uint32_t> one = {2};
  r.key_versions_tried = one;
  r.key_version = 2;
  EXPECT_THAT(AuditLog::FormatLine(r), ::testing::Not(HasSubstr("key_versions_tried")));
}

// A key whose primary is a PUBLIC KEY file beside an older PRIVATE KEY version (a
// decryption key being retired, say): a decryption naming no version tries the versions
// that hold a private key, not only the primary.
TEST_F(KeyTrialTest, DecryptionSkipsVersionsWithoutAPrivateKey) {
  absl::StatusOr<KeyPair> v1 = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  absl::StatusOr<KeyPair> v2 = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  ASSERT_THAT(v1, IsOk());
  ASSERT_THAT(v2, IsOk());
  dir_.Write("mixed.v1.pem", PemEncode("PRIVATE KEY", SecretDataAsStringView(v1->private_key_der)));
  dir_.Write("mixed.v2.pem", PemEncode("PUBLIC KEY", v2->public_key_der));
  Build();
  absl::StatusOr<std::string> ct = engine_->PublicKeyEncrypt(
      Algorithm::kSm2, KeyInput::Id("mixed", 1), "to v1", Sm2CiphertextFormat::kC1C3C2);
  ASSERT_THAT(ct, IsOk());
  KeyInput k = Trial("mixed");
  absl::StatusOr<std::string> pt =
      engine_->PublicKeyDecrypt(Algorithm::kSm2, k, *ct, Sm2CiphertextFormat::kC1C3C2);
  ASSERT_THAT(pt, IsOk());
  EXPECT_EQ(*pt, "to v1");
  EXPECT_EQ(k.trial->version, 1u);
  EXPECT_THAT(k.trial->tried, ElementsAre(1u));
  absl::StatusOr<std::string> hpke =
      engine_->HybridEncrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("mixed", 1), "hpke", "");
  ASSERT_THAT(hpke, IsOk());
  KeyInput h = Trial("mixed");
  absl::StatusOr<std::string> opened =
      engine_->HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, h, *hpke, "");
  ASSERT_THAT(opened, IsOk());
  EXPECT_EQ(*opened, "hpke");
  // A key of public versions only still says that a private key is needed.
  dir_.Write("pubonly.pem", PemEncode("PUBLIC KEY", v2->public_key_der));
  Build();
  KeyInput p = Trial("pubonly");
  EXPECT_THAT(engine_->PublicKeyDecrypt(Algorithm::kSm2, p, *ct, Sm2CiphertextFormat::kC1C3C2),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace smcrypt::server
