// Key versions and minimum versions of the keyring (server/engine/key_store.h, "Versions" and
// "Minimum version"), and the engine using a named version: file names, both forms of
// version 1, conflicts, family mismatches, min_version files, rejected ids.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/audit_log.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/error_reason.h"
#include "server/engine/key_store.h"
#include "server/engine/reload.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt::server {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_keyver_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(fs::path(path_) / name, std::ios::binary) << text;
    fs::permissions(fs::path(path_) / name, fs::perms::owner_read | fs::perms::owner_write);
  }
  void Remove(const std::string& name) const { fs::remove(fs::path(path_) / name); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Sm4Pem(char fill) { return PemEncode("SM4 KEY", std::string(16, fill)); }

std::string Sm2Pem(std::string* public_der = nullptr) {
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  EXPECT_TRUE(kp.ok()) << kp.status();
  if (public_der != nullptr) *public_der = kp->public_key_der;
  return PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
}

absl::StatusOr<std::unique_ptr<KeyStore>> Load(const TempDir& dir) {
  return KeyStore::LoadFromDirectory(dir.path());
}

// ---- File names -------------------------------------------------------------------------

TEST(KeyFileNameTest, ParsesBothFormsAndMinVersion) {
  absl::StatusOr<std::optional<KeyFileName>> plain = ParseKeyFileName("pay.pem");
  ASSERT_THAT(plain, IsOk());
  ASSERT_TRUE(plain->has_value());
  EXPECT_EQ((*plain)->key_id, "pay");
  EXPECT_EQ((*plain)->version, 1u);
  EXPECT_FALSE((*plain)->versioned);

  absl::StatusOr<std::optional<KeyFileName>> v12 = ParseKeyFileName("pay.v12.pem");
  ASSERT_THAT(v12, IsOk());
  ASSERT_TRUE(v12->has_value());
  EXPECT_EQ((*v12)->key_id, "pay");
  EXPECT_EQ((*v12)->version, 12u);
  EXPECT_TRUE((*v12)->versioned);

  // Dots elsewhere stay part of the id; ".v" without digits is not a version.
  absl::StatusOr<std::optional<KeyFileName>> dotted = ParseKeyFileName("a.v2x.v3.pem");
  ASSERT_THAT(dotted, IsOk());
  EXPECT_EQ((*dotted)->key_id, "a.v2x");
  EXPECT_EQ((*dotted)->version, 3u);
  absl::StatusOr<std::optional<KeyFileName>> no_digits = ParseKeyFileName("a.v.pem");
  ASSERT_THAT(no_digits, IsOk());
  EXPECT_EQ((*no_digits)->key_id, "a.v");
  EXPECT_FALSE((*no_digits)->versioned);

  absl::StatusOr<std::optional<KeyFileName>> min = ParseKeyFileName("pay.min_version");
  ASSERT_THAT(min, IsOk());
  ASSERT_TRUE(min->has_value());
  EXPECT_EQ((*min)->kind, KeyFileName::Kind::kMinVersion);
  EXPECT_EQ((*min)->key_id, "pay");

  absl::StatusOr<std::optional<KeyFileName>> other = ParseKeyFileName("README.txt");
  ASSERT_THAT(other, IsOk());
  EXPECT_FALSE(other->has_value());
}

TEST(KeyFileNameTest, RejectsBadVersionNumbers) {
  for (const char* name : {"k.v0.pem", "k.v01.pem", "k.v4294967296.pem", "k.v99999999999.pem"}) {
    EXPECT_THAT(ParseKeyFileName(name),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("leading zeros")))
        << name;
  }
  EXPECT_THAT(ParseKeyFileName("k.v4294967295.pem"), IsOk());
  // The id left after the suffix must itself be valid (".v1.pem" has an empty id).
  EXPECT_THAT(ParseKeyFileName(".v1.pem"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseKeyFileName("k.v1.v2.pem"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'k.v1'")));
}

TEST(KeyFileNameTest, ParseKeyVersion) {
  EXPECT_THAT(ParseKeyVersion("7"), IsOk());
  EXPECT_EQ(*ParseKeyVersion("4294967295"), 4294967295u);
  for (const char* bad : {"", "0", "07", "-1", "+1", "1a", " 1", "4294967296"}) {
    EXPECT_THAT(ParseKeyVersion(bad), StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
  }
  // The message quotes the text whole up to 24 characters, and marks a cut.
  EXPECT_THAT(ParseKeyVersion("18446744073709551616"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("version '18446744073709551616' is not")));
  EXPECT_THAT(ParseKeyVersion(std::string(30, '9')),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("version '" + std::string(24, '9') + "...' is not")));
}

TEST(KeyFileNameTest, VersionSuffixIdsAreInvalid) {
  EXPECT_TRUE(IsValidKeyId("pay"));
  EXPECT_TRUE(IsValidKeyId("pay.v"));
  EXPECT_TRUE(IsValidKeyId("pay.v1x"));
  EXPECT_TRUE(IsValidKeyId("payv1"));
  EXPECT_FALSE(IsValidKeyId("pay.v1"));
  EXPECT_FALSE(IsValidKeyId("pay.v0"));
  EXPECT_FALSE(IsValidKeyId("pay.v01"));
}

// ---- Loading ----------------------------------------------------------------------------

TEST(KeyVersionsTest, PlainFileIsVersionOneAndUnversioned) {
  TempDir dir;
  dir.Write("k.pem", Sm4Pem('a'));
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  absl::StatusOr<const StoredKey*> k = (*store)->Find("k");
  ASSERT_THAT(k, IsOk());
  EXPECT_EQ((*k)->version, 1u);
  EXPECT_FALSE((*k)->versioned);
  EXPECT_THAT((*store)->Find("k", 1), IsOk());
  EXPECT_THAT((*store)->Find("k", 2),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("key 'k'"), HasSubstr("no version 2"))));
  EXPECT_EQ(ReasonOf((*store)->Find("k", 2).status()).reason, "KEY_VERSION_NOT_FOUND");
}

TEST(KeyVersionsTest, NewestIsTheHighestNumberAndPlainCountsAsOne) {
  TempDir dir;
  dir.Write("k.pem", Sm4Pem('1'));
  dir.Write("k.v2.pem", Sm4Pem('2'));
  dir.Write("k.v10.pem", Sm4Pem('x'));  // numeric, not lexical, order
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->size(), 1u);
  EXPECT_EQ((*store)->entries().size(), 3u);
  absl::StatusOr<const StoredKey*> newest = (*store)->Find("k");
  ASSERT_THAT(newest, IsOk());
  EXPECT_EQ((*newest)->version, 10u);
  EXPECT_TRUE((*newest)->versioned);
  EXPECT_EQ(SecretDataAsStringView((*newest)->material), std::string(16, 'x'));
  absl::StatusOr<const StoredKey*> v1 = (*store)->Find("k", 1);
  ASSERT_THAT(v1, IsOk());
  EXPECT_EQ(SecretDataAsStringView((*v1)->material), std::string(16, '1'));
  EXPECT_TRUE((*v1)->versioned);  // the key has .v<n> files
  std::vector<uint32_t> versions;
  for (const StoredKey* e : (*store)->Versions("k")) versions.push_back(e->version);
  EXPECT_THAT(versions, ElementsAre(1u, 2u, 10u));
  EXPECT_THAT((*store)->Find("k", 3),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("its versions: 1, 2, 10")));
}

TEST(KeyVersionsTest, PlainAndV1TogetherIsAnErrorNamingBoth) {
  TempDir dir;
  dir.Write("k.pem", Sm4Pem('a'));
  dir.Write("k.v1.pem", Sm4Pem('b'));
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("k.pem"), HasSubstr("k.v1.pem"),
                                        HasSubstr("both hold version 1"))));
}

TEST(KeyVersionsTest, VersionsOfDifferentFamiliesFail) {
  TempDir dir;
  dir.Write("k.v1.pem", Sm4Pem('a'));
  dir.Write("k.v2.pem", Sm2Pem());
  EXPECT_THAT(Load(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("k.v2.pem"), HasSubstr("SM2"), HasSubstr("SM4"),
                             HasSubstr("one family"))));
  // A private and a public key of one family may be versions of one key.
  TempDir mixed;
  std::string pub;
  mixed.Write("s.v1.pem", Sm2Pem(&pub));
  Sm2Pem(&pub);
  mixed.Write("s.v2.pem", PemEncode("PUBLIC KEY", pub));
  EXPECT_THAT(Load(mixed), IsOk());
}

TEST(KeyVersionsTest, LeadingZerosAndZeroFailNamingTheFile) {
  for (const char* name : {"k.v01.pem", "k.v0.pem"}) {
    TempDir dir;
    dir.Write(name, Sm4Pem('a'));
    EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                    AllOf(HasSubstr(name), HasSubstr("leading zeros"))))
        << name;
  }
}

TEST(KeyVersionsTest, MinVersionRetiresOlderVersions) {
  TempDir dir;
  dir.Write("k.v1.pem", Sm4Pem('1'));
  dir.Write("k.v2.pem", Sm4Pem('2'));
  dir.Write("k.v3.pem", Sm4Pem('3'));
  dir.Write("k.min_version", "2\n");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->MinVersion("k"), 2u);
  absl::Status retired = (*store)->Find("k", 1).status();
  EXPECT_THAT(retired, StatusIs(absl::StatusCode::kFailedPrecondition,
                                AllOf(HasSubstr("version 1"), HasSubstr("minimum version 2"))));
  EXPECT_EQ(ReasonOf(retired).reason, "KEY_VERSION_RETIRED");
  EXPECT_THAT((*store)->Find("k", 2), IsOk());
  EXPECT_EQ((*(*store)->Find("k"))->version, 3u);
  std::vector<uint32_t> versions;
  for (const StoredKey* e : (*store)->Versions("k")) versions.push_back(e->version);
  EXPECT_THAT(versions, ElementsAre(2u, 3u));
  // Below the minimum and absent: NOT_FOUND (absence is checked first).
  TempDir gap;
  gap.Write("g.v2.pem", Sm4Pem('2'));
  gap.Write("g.v3.pem", Sm4Pem('3'));
  gap.Write("g.min_version", "3");
  absl::StatusOr<std::unique_ptr<KeyStore>> g = Load(gap);
  ASSERT_THAT(g, IsOk());
  EXPECT_THAT((*g)->Find("g", 1), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT((*g)->Find("g", 2), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(KeyVersionsTest, MinVersionAboveNewestFails) {
  TempDir dir;
  dir.Write("k.pem", Sm4Pem('1'));
  dir.Write("k.v2.pem", Sm4Pem('2'));
  dir.Write("k.min_version", "3");
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("k.min_version"),
                                        HasSubstr("above its newest version 2"))));
}

TEST(KeyVersionsTest, BadMinVersionFiles) {
  for (const char* text : {"", "0", "02", "two", "2 3", "-1"}) {
    TempDir dir;
    dir.Write("k.v2.pem", Sm4Pem('2'));
    dir.Write("k.min_version", text);
    EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("k.min_version")))
        << "'" << text << "'";
  }
  TempDir orphan;
  orphan.Write("k.pem", Sm4Pem('1'));
  orphan.Write("other.min_version", "1");
  EXPECT_THAT(Load(orphan), StatusIs(absl::StatusCode::kInvalidArgument,
                                     AllOf(HasSubstr("other.min_version"),
                                           HasSubstr("no other.pem"))));
  // Whitespace around the number is allowed (echo 2 > k.min_version).
  TempDir spaced;
  spaced.Write("k.v2.pem", Sm4Pem('2'));
  spaced.Write("k.min_version", " 2 \n");
  EXPECT_THAT(Load(spaced), IsOk());
}

TEST(KeyVersionsTest, MinVersionFileWritableByOthersIsRefused) {
  TempDir dir;
  dir.Write("k.v2.pem", Sm4Pem('2'));
  dir.Write("k.min_version", "2");
  fs::permissions(fs::path(dir.path()) / "k.min_version", fs::perms::others_write,
                  fs::perm_options::add);
  EXPECT_THAT(Load(dir),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("k.min_version")));
}

TEST(KeyVersionsTest, VersionSuffixIdsInRequestsAreInvalidArgument) {
  TempDir dir;
  dir.Write("k.v2.pem", Sm4Pem('2'));
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  EXPECT_THAT((*store)->Find("k.v2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("key_id 'k'"), HasSubstr("key_version 2"))));
  EXPECT_THAT((*store)->Find("k.v02"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(KeyVersionsTest, DiffNamesVersionsAndMinVersion) {
  TempDir dir;
  dir.Write("k.v1.pem", Sm4Pem('1'));
  dir.Write("plain.pem", Sm4Pem('p'));
  absl::StatusOr<std::unique_ptr<KeyStore>> before = Load(dir);
  ASSERT_THAT(before, IsOk());
  dir.Write("k.v2.pem", Sm4Pem('2'));
  absl::StatusOr<std::unique_ptr<KeyStore>> added = Load(dir);
  ASSERT_THAT(added, IsOk());
  KeyringDiff d = DiffKeyrings(**before, **added);
  EXPECT_THAT(d.added, ElementsAre("k.v2"));
  EXPECT_TRUE(d.removed.empty());
  EXPECT_TRUE(d.changed.empty());
  dir.Write("k.min_version", "2");
  absl::StatusOr<std::unique_ptr<KeyStore>> retired = Load(dir);
  ASSERT_THAT(retired, IsOk());
  d = DiffKeyrings(**added, **retired);
  EXPECT_THAT(d.changed, ElementsAre("k.min_version"));
  EXPECT_TRUE(d.added.empty());
}

// ---- Audit lines -------------------------------------------------------------------------

TEST(KeyVersionsAuditTest, LineCarriesTheVersionWhenSet) {
  AuditRecord r;
  r.method = "Sign";
  r.algorithm = "SM2";
  r.key = AccessKey::Id("pay");
  r.key_version = 3;
  EXPECT_THAT(AuditLog::FormatLine(r),
              HasSubstr("\"key_id\":\"pay\",\"key_version\":3,\"status\":\"OK\"}"));
  r.key_version = 0;
  EXPECT_THAT(AuditLog::FormatLine(r), HasSubstr("\"key_id\":\"pay\",\"status\":\"OK\"}"));
  EXPECT_THAT(AuditLog::FormatLine(r), ::testing::Not(HasSubstr("key_version")));
  // An inline key has no key_id, so no version either.
  r.key = AccessKey::Inline();
  r.key_version = 2;
  EXPECT_THAT(AuditLog::FormatLine(r), ::testing::Not(HasSubstr("key_version")));
}

// ---- Engine -------------------------------------------------------------------------------

TEST(KeyVersionsEngineTest, EncryptsWithTheNamedOrNewestVersion) {
  TempDir dir;
  dir.Write("k.pem", Sm4Pem('1'));
  dir.Write("k.v2.pem", Sm4Pem('2'));
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  CryptoEngine engine(std::shared_ptr<const KeyStore>(*std::move(store)), EngineOptions{},
                      nullptr);
  const std::string nonce(12, 'n');
  auto encrypt = [&](const KeyInput& key) {
    SymmetricParams p;
    p.algorithm = Algorithm::kSm4Gcm;
    p.key = key;
    p.nonce = nonce;
    return engine.Encrypt(p, "hello");
  };
  absl::StatusOr<SymmetricCiphertext> with_v1 = encrypt(KeyInput::Id("k", 1));
  absl::StatusOr<SymmetricCiphertext> with_v2 = encrypt(KeyInput::Id("k", 2));
  absl::StatusOr<SymmetricCiphertext> newest = encrypt(KeyInput::Id("k"));
  absl::StatusOr<SymmetricCiphertext> inline_v1 =
      encrypt(KeyInput::Inline(std::string(16, '1')));
  ASSERT_THAT(with_v1, IsOk());
  ASSERT_THAT(with_v2, IsOk());
  ASSERT_THAT(newest, IsOk());
  ASSERT_THAT(inline_v1, IsOk());
  EXPECT_EQ(with_v1->tag, inline_v1->tag);
  EXPECT_NE(with_v1->tag, with_v2->tag);
  EXPECT_EQ(newest->tag, with_v2->tag);
  EXPECT_THAT(encrypt(KeyInput::Id("k", 3)), StatusIs(absl::StatusCode::kNotFound,
                                                       HasSubstr("no version 3")));
}

// Rotation through the reloader the periodic check (--reload_interval) runs: a new
// version file and a min_version file change the directory's fingerprint.
TEST(KeyVersionsEngineTest, ReloadIfChangedPicksUpNewVersionsAndMinVersion) {
  TempDir dir;
  dir.Write("k.pem", Sm4Pem('1'));
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  CryptoEngine engine(std::shared_ptr<const KeyStore>(*std::move(store)), EngineOptions{},
                      nullptr);
  KeyringReloader reloader(dir.path(), KeyStoreOptions{}, &engine, nullptr);
  auto newest_version = [&] { return (*engine.key_store()->Find("k"))->version; };
  EXPECT_EQ(newest_version(), 1u);
  dir.Write("k.v2.pem", Sm4Pem('2'));
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(newest_version(), 2u);
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = KeyInput::Id("k", 1);
  p.nonce = absl::string_view("nnnnnnnnnnnn");
  EXPECT_THAT(engine.Encrypt(p, "x"), IsOk());
  dir.Write("k.min_version", "2");
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_THAT(engine.Encrypt(p, "x"), StatusIs(absl::StatusCode::kFailedPrecondition,
                                               HasSubstr("below its minimum version 2")));
  // A minimum above the newest fails the reload and keeps the keyring.
  dir.Write("k.min_version", "5\n");  // another size: the fingerprint sees it
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(engine.key_store()->MinVersion("k"), 2u);
  EXPECT_FALSE(reloader.ReloadIfChanged());  // retried only once the directory changes
}

TEST(KeyVersionsEngineTest, PublicKeyVersionsListsUsableVersions) {
  TempDir dir;
  std::string pub1, pub2, pub3;
  dir.Write("s.pem", Sm2Pem(&pub1));
  dir.Write("s.v2.pem", Sm2Pem(&pub2));
  dir.Write("s.v3.pem", Sm2Pem(&pub3));
  dir.Write("s.min_version", "2");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  CryptoEngine engine(std::shared_ptr<const KeyStore>(*std::move(store)), EngineOptions{},
                      nullptr);
  auto versions = engine.PublicKeyVersions(Algorithm::kSm2, KeyInput::Id("s"));
  ASSERT_THAT(versions, IsOk());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].first, 2u);
  EXPECT_EQ((*versions)[0].second, pub2);
  EXPECT_EQ((*versions)[1].first, 3u);
  EXPECT_EQ((*versions)[1].second, pub3);
  EXPECT_THAT(engine.GetPublicKey(Algorithm::kSm2, KeyInput::Id("s")), IsOk());
  EXPECT_EQ(*engine.GetPublicKey(Algorithm::kSm2, KeyInput::Id("s")), pub3);
  ASSERT_THAT(engine.GetPublicKey(Algorithm::kSm2, KeyInput::Id("s", 2)), IsOk());
  EXPECT_EQ(*engine.GetPublicKey(Algorithm::kSm2, KeyInput::Id("s", 2)), pub2);
  EXPECT_THAT(engine.GetPublicKey(Algorithm::kSm2, KeyInput::Id("s", 1)),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(engine.PublicKeyVersions(Algorithm::kSm4Gcm, KeyInput::Id("s")),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// A call resolves its key once (CryptoEngine::Resolve): a keyring swapped in after that
// does not change the key, the version or the primitive the call uses, and a key missing
// at resolution stays missing for the call even when the new keyring has it.
TEST(KeyVersionsEngineTest, ACallUsesTheKeyringItResolvedItsKeyIn) {
  TempDir dir;
  dir.Write("k.pem", Sm4Pem('a'));
  absl::StatusOr<std::unique_ptr<KeyStore>> first = Load(dir);
  ASSERT_THAT(first, IsOk());
  CryptoEngine engine(std::shared_ptr<const KeyStore>(*std::move(first)), EngineOptions{},
                      nullptr);
  KeyInput resolved = KeyInput::Id("k");
  engine.Resolve(&resolved);
  ASSERT_NE(resolved.keyring, nullptr);
  ASSERT_THAT(resolved.entry, IsOk());
  EXPECT_EQ((*resolved.entry)->version, 1u);
  KeyInput missing = KeyInput::Id("later");
  engine.Resolve(&missing);
  EXPECT_THAT(missing.entry, StatusIs(absl::StatusCode::kNotFound));

  // The keyring is replaced: k becomes another key at version 2, and "later" appears.
  dir.Write("k.v2.pem", Sm4Pem('b'));
  dir.Write("later.pem", Sm4Pem('c'));
  absl::StatusOr<std::unique_ptr<KeyStore>> second = Load(dir);
  ASSERT_THAT(second, IsOk());
  engine.SetKeyStore(std::shared_ptr<const KeyStore>(*std::move(second)));

  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = resolved;
  absl::StatusOr<SymmetricCiphertext> ct = engine.Encrypt(p, "hello");
  ASSERT_THAT(ct, IsOk());
  p.nonce = ct->nonce;
  // Version 1 (the resolved one) opens it; the new newest version does not.
  p.key = KeyInput::Id("k", 1);
  EXPECT_THAT(engine.Decrypt(p, ct->ciphertext, ct->tag), IsOk());
  p.key = KeyInput::Id("k");
  EXPECT_THAT(engine.Decrypt(p, ct->ciphertext, ct->tag),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  p.key = missing;
  EXPECT_THAT(engine.Encrypt(p, "hello"), StatusIs(absl::StatusCode::kNotFound));
  p.key = KeyInput::Id("later");
  EXPECT_THAT(engine.Encrypt(p, "hello"), IsOk());
  // A second key of the same call is looked up in the call's keyring.
  KeyInput second_key = KeyInput::Id("k");
  engine.Resolve(&second_key, resolved.keyring);
  ASSERT_THAT(second_key.entry, IsOk());
  EXPECT_EQ((*second_key.entry)->version, 1u);
}

}  // namespace
}  // namespace smcrypt::server
