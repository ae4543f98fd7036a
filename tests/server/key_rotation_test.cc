// Two-phase rotation in the keyring (server/engine/key_store.h, "Primary version" and
// "Rotation"): `<key_id>.primary` files valid and invalid, the cap on retained versions,
// load times kept across reloads of identical bytes, public key fingerprints, and a
// reload that keeps the previous keyring whole when a primary file is bad.
#include <openssl/sha.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/crypto_engine.h"
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
using ::testing::HasSubstr;

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_rotation_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(fs::path(path_) / name, std::ios::binary | std::ios::trunc) << text;
    fs::permissions(fs::path(path_) / name, fs::perms::owner_read | fs::perms::owner_write);
  }
  void Remove(const std::string& name) const { fs::remove(fs::path(path_) / name); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Sm4Pem(char fill) { return PemEncode("SM4 KEY", std::string(16, fill)); }

absl::StatusOr<std::unique_ptr<KeyStore>> Load(const TempDir& dir,
                                               const KeyStore* previous = nullptr) {
  return KeyStore::LoadFromDirectory(dir.path(), {}, previous);
}

// A key of three SM4 versions.
void WriteThreeVersions(const TempDir& dir) {
  dir.Write("k.v1.pem", Sm4Pem('1'));
  dir.Write("k.v2.pem", Sm4Pem('2'));
  dir.Write("k.v3.pem", Sm4Pem('3'));
}

TEST(KeyPrimaryTest, PrimaryFileName) {
  absl::StatusOr<std::optional<KeyFileName>> f = ParseKeyFileName("pay.primary");
  ASSERT_THAT(f, IsOk());
  ASSERT_TRUE(f->has_value());
  EXPECT_EQ((*f)->kind, KeyFileName::Kind::kPrimary);
  EXPECT_EQ((*f)->key_id, "pay");
  EXPECT_THAT(ParseKeyFileName(".primary"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseKeyFileName("pay.v2.primary"), StatusIs(absl::StatusCode::kInvalidArgument));
  absl::StatusOr<std::optional<KeyFileName>> other = ParseKeyFileName("pay.primary.tmp");
  ASSERT_THAT(other, IsOk());
  EXPECT_FALSE(other->has_value());
}

TEST(KeyPrimaryTest, AbsentPrimaryIsTheNewest) {
  TempDir dir;
  WriteThreeVersions(dir);
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->PrimaryVersion("k"), 3u);
  EXPECT_EQ((*store)->MinVersion("k"), 1u);  // no min_version file
  EXPECT_EQ((*store)->PrimaryVersion("nope"), 0u);
  EXPECT_EQ((*store)->MinVersion("nope"), 0u);
  ASSERT_THAT((*store)->Find("k"), IsOk());
  EXPECT_EQ((*(*store)->Find("k"))->version, 3u);
}

TEST(KeyPrimaryTest, PrimaryFilePinsAnOlderVersion) {
  TempDir dir;
  WriteThreeVersions(dir);
  dir.Write("k.primary", " 2\n");
  dir.Write("k.min_version", "2");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->PrimaryVersion("k"), 2u);
  EXPECT_EQ((*store)->MinVersion("k"), 2u);
  absl::StatusOr<const StoredKey*> primary = (*store)->Find("k", 0);
  ASSERT_THAT(primary, IsOk());
  EXPECT_EQ((*primary)->version, 2u);
  EXPECT_EQ(SecretDataAsStringView((*primary)->material), std::string(16, '2'));
  // The newest is still usable by number, and AllVersions lists the retired one too.
  ASSERT_THAT((*store)->Find("k", 3), IsOk());
  EXPECT_EQ((*store)->Versions("k").size(), 2u);
  EXPECT_EQ((*store)->AllVersions("k").size(), 3u);
  // A retired version's refusal names the primary as what a request without one gets.
  EXPECT_THAT((*store)->Find("k", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("name no version for the primary (2)")));
}

TEST(KeyPrimaryTest, PrimaryOfAPlainKeyIsVersionOne) {
  TempDir dir;
  dir.Write("p.pem", Sm4Pem('p'));
  dir.Write("p.primary", "1");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->PrimaryVersion("p"), 1u);
  EXPECT_FALSE((*(*store)->Find("p"))->versioned);
}

TEST(KeyPrimaryTest, BadPrimaryFilesFailNamingTheFile) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"4", "primary version 4 of key 'k' is not loaded (its versions: 1, 2, 3)"},
      {"1", "primary version 1 of key 'k' is below its minimum version 2"},
      {"0", "holds one decimal version number"},
      {"02", "holds one decimal version number"},
      {"two", "holds one decimal version number"},
      {"", "holds one decimal version number"},
      {"2 3", "holds one decimal version number"},
      {"4294967296", "holds one decimal version number"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    WriteThreeVersions(dir);
    dir.Write("k.min_version", "2");
    dir.Write("k.primary", c.text);
    EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                    AllOf(HasSubstr("k.primary"), HasSubstr(c.message))))
        << "primary file '" << c.text << "'";
  }
  TempDir orphan;
  orphan.Write("a.pem", Sm4Pem('a'));
  orphan.Write("other.primary", "1");
  EXPECT_THAT(Load(orphan), StatusIs(absl::StatusCode::kInvalidArgument,
                                     AllOf(HasSubstr("other.primary"),
                                           HasSubstr("key 'other' has no other.pem"))));
}

// A directory (or a symlink to one) under a keyring file's name is a load error, never an
// absent file: an absent min_version would bring retired versions back, an absent primary
// would promote the newest. A directory under any other name is skipped.
TEST(KeyPrimaryTest, DirectoryUnderAKeyringFileNameFailsTheLoad) {
  for (const std::string name : {"k.primary", "k.min_version", "k.v4.pem", "other.pem"}) {
    TempDir dir;
    WriteThreeVersions(dir);
    fs::create_directory(fs::path(dir.path()) / name);
    EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                    AllOf(HasSubstr(name), HasSubstr("a directory"))))
        << name;
  }
  TempDir dir;
  WriteThreeVersions(dir);
  dir.Write("k.min_version", "2");
  ASSERT_THAT(Load(dir), IsOk());
  dir.Remove("k.min_version");
  fs::create_directory_symlink(fs::temp_directory_path(), fs::path(dir.path()) / "k.min_version");
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a directory")));
  TempDir other;
  WriteThreeVersions(other);
  fs::create_directory(fs::path(other.path()) / "backup");
  EXPECT_THAT(Load(other), IsOk());
}

TEST(KeyPrimaryTest, PrimaryFileWritableByOthersIsRefused) {
  TempDir dir;
  WriteThreeVersions(dir);
  dir.Write("k.primary", "2");
  fs::permissions(fs::path(dir.path()) / "k.primary", fs::perms::others_write,
                  fs::perm_options::add);
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kPermissionDenied,
                                  HasSubstr("k.primary: mode 0602")));
  KeyStoreOptions insecure;
  insecure.allow_insecure_permissions = true;
  EXPECT_THAT(KeyStore::LoadFromDirectory(dir.path(), insecure), IsOk());
}

TEST(KeyRetainedVersionsTest, SixteenRetainedLoadSeventeenFail) {
  TempDir dir;
  for (int v = 1; v <= 16; ++v) dir.Write(absl::StrCat("k.v", v, ".pem"), Sm4Pem('a' + v));
  ASSERT_THAT(Load(dir), IsOk());
  dir.Write("k.v17.pem", Sm4Pem('z'));
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("k.v17.pem"),
                                        HasSubstr("key 'k' retains 17 versions (1 to 17)"),
                                        HasSubstr("at most 16"),
                                        HasSubstr("raise k.min_version"))));
  // Retiring one brings the key back under the cap; the error then names the file.
  dir.Write("k.min_version", "2");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  EXPECT_EQ((*store)->Versions("k").size(), kMaxRetainedVersions);
  dir.Write("k.v18.pem", Sm4Pem('y'));
  EXPECT_THAT(Load(dir), StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(HasSubstr("k.min_version"),
                                        HasSubstr("retains 17 versions (2 to 18)"))));
}

TEST(KeyLoadTimeTest, KeptForIdenticalBytesNewForChangedOrAdded) {
  TempDir dir;
  dir.Write("k.v1.pem", Sm4Pem('1'));
  dir.Write("k.v2.pem", Sm4Pem('2'));
  const absl::Time before = absl::Now();
  absl::StatusOr<std::unique_ptr<KeyStore>> first = Load(dir);
  ASSERT_THAT(first, IsOk());
  const absl::Time t1 = (*first)->Find("k", 1).value()->load_time;
  EXPECT_GE(t1, before);
  EXPECT_LE(t1, absl::Now());
  EXPECT_EQ((*first)->load_time(), t1);
  absl::SleepFor(absl::Milliseconds(5));

  dir.Write("k.v2.pem", Sm4Pem('X'));  // version 2 changes, version 1 does not
  dir.Write("k.v3.pem", Sm4Pem('3'));  // version 3 is new
  absl::StatusOr<std::unique_ptr<KeyStore>> second = Load(dir, first->get());
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ((*second)->Find("k", 1).value()->load_time, t1);
  EXPECT_GT((*second)->Find("k", 2).value()->load_time, t1);
  EXPECT_GT((*second)->Find("k", 3).value()->load_time, t1);
  EXPECT_GT((*second)->load_time(), t1);

  // Without the previous store every version is loaded now.
  absl::StatusOr<std::unique_ptr<KeyStore>> fresh = Load(dir);
  ASSERT_THAT(fresh, IsOk());
  EXPECT_GT((*fresh)->Find("k", 1).value()->load_time, t1);
}

TEST(KeyFingerprintTest, Sha256OfThePublicKeyNeverForSymmetricKeys) {
  TempDir dir;
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  ASSERT_THAT(kp, IsOk());
  dir.Write("signer.pem", PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der)));
  dir.Write("verifier.pem", PemEncode("PUBLIC KEY", kp->public_key_der));
  dir.Write("data.pem", Sm4Pem('d'));
  dir.Write("mac.pem", PemEncode("HMAC KEY", "hmac key"));
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  std::string want(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(kp->public_key_der.data()),
         kp->public_key_der.size(), reinterpret_cast<unsigned char*>(want.data()));
  EXPECT_EQ((*(*store)->Find("signer"))->public_key_sha256, want);
  EXPECT_EQ((*(*store)->Find("verifier"))->public_key_sha256, want);
  EXPECT_TRUE((*(*store)->Find("data"))->public_key_sha256.empty());
  EXPECT_TRUE((*(*store)->Find("mac"))->public_key_sha256.empty());
  EXPECT_EQ((*store)->key_ids(),
            (std::vector<std::string>{"data", "mac", "signer", "verifier"}));
}

// A request naming no version encrypts with the primary, pinned below the newest.
TEST(KeyPrimaryTest, EngineEncryptsWithThePrimary) {
  TempDir dir;
  WriteThreeVersions(dir);
  dir.Write("k.primary", "2");
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  CryptoEngine engine(std::shared_ptr<const KeyStore>(*std::move(store)), {}, nullptr);
  SymmetricParams params;
  params.algorithm = Algorithm::kSm4Gcm;
  params.key = KeyInput::Id("k");
  absl::StatusOr<SymmetricCiphertext> ct = engine.Encrypt(params, "hello");
  ASSERT_THAT(ct, IsOk());
  SymmetricParams open = params;
  open.nonce = ct->nonce;
  open.key = KeyInput::Id("k", 2);
  EXPECT_THAT(engine.Decrypt(open, ct->ciphertext, ct->tag), IsOk());
  open.key = KeyInput::Id("k", 3);
  EXPECT_THAT(engine.Decrypt(open, ct->ciphertext, ct->tag),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// A reload that meets a bad primary file keeps the previous keyring whole; fixing the
// file promotes the version on the next reload, reported as `<key_id>.primary`.
TEST(KeyPrimaryReloadTest, BadPrimaryKeepsThePreviousKeyring) {
  TempDir dir;
  dir.Write("k.v1.pem", Sm4Pem('1'));
  dir.Write("k.v2.pem", Sm4Pem('2'));
  dir.Write("k.primary", "1");
  dir.Write("other.pem", Sm4Pem('o'));
  absl::StatusOr<std::unique_ptr<KeyStore>> store = Load(dir);
  ASSERT_THAT(store, IsOk());
  CryptoEngine engine(std::shared_ptr<const KeyStore>(*std::move(store)), {}, nullptr);
  KeyringReloader reloader(dir.path(), {}, &engine, nullptr);

  dir.Write("k.primary", "5");
  dir.Remove("other.pem");
  EXPECT_THAT(reloader.Reload(), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("k.primary: primary version 5")));
  std::shared_ptr<const KeyStore> kept = engine.key_store();
  EXPECT_EQ(kept->PrimaryVersion("k"), 1u);
  EXPECT_EQ(kept->size(), 2u);  // other.pem's removal is not applied either
  EXPECT_THAT(kept->Find("other"), IsOk());

  dir.Write("k.primary", "2");
  dir.Write("other.pem", Sm4Pem('o'));
  ASSERT_THAT(reloader.Reload(), IsOk());
  EXPECT_EQ(engine.key_store()->PrimaryVersion("k"), 2u);
  // The load time of unchanged bytes survives the reload.
  EXPECT_EQ(engine.key_store()->Find("k", 1).value()->load_time,
            kept->Find("k", 1).value()->load_time);
}

TEST(KeyPrimaryReloadTest, DiffNamesPrimaryAndMinVersionChanges) {
  TempDir dir;
  WriteThreeVersions(dir);
  dir.Write("k.primary", "2");
  absl::StatusOr<std::unique_ptr<KeyStore>> a = Load(dir);
  ASSERT_THAT(a, IsOk());
  dir.Remove("k.primary");
  dir.Write("k.min_version", "2");
  absl::StatusOr<std::unique_ptr<KeyStore>> b = Load(dir, a->get());
  ASSERT_THAT(b, IsOk());
  const KeyringDiff diff = DiffKeyrings(**a, **b);
  EXPECT_EQ(diff.changed, (std::vector<std::string>{"k.min_version", "k.primary"}));
  EXPECT_TRUE(diff.added.empty());
  EXPECT_TRUE(diff.removed.empty());
}

}  // namespace
}  // namespace smcrypt::server
