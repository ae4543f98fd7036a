// Keyring reloads without gRPC (server/engine/reload.h, CryptoEngine::SetKeyStore): the
// Kubernetes Secret `..data` symlink swap, explicit reloads, bad directories that keep
// the previous keyring, a stream started before a swap, and calls racing repeated swaps
// (meaningful under ThreadSanitizer; the TSan build runs this suite); the checks of
// changed TLS files.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/key_store.h"
#include "server/engine/reload.h"
#include "server/engine/secret_file.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "tests/server/secret_volume.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::server {
namespace {

namespace fs = std::filesystem;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::OpenSslHmac;
using ::smcrypt::testing::SecretVolume;
using ::smcrypt::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string HmacPem(const std::string& key) { return PemEncode("HMAC KEY", key); }

class CountingObserver : public ReloadObserver {
 public:
  void OnKeyringReload(bool ok) override { (ok ? keyring_ok : keyring_failed)++; }
  void OnTlsCertificateReload(bool ok) override { (ok ? tls_ok : tls_failed)++; }
  std::atomic<int> keyring_ok{0}, keyring_failed{0}, tls_ok{0}, tls_failed{0};
};

std::shared_ptr<const KeyStore> Load(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<KeyStore>> keys = KeyStore::LoadFromDirectory(dir);
  EXPECT_THAT(keys, IsOk());
  return keys.ok() ? std::shared_ptr<const KeyStore>(*std::move(keys)) : nullptr;
}

absl::StatusOr<std::string> Mac(const CryptoEngine& engine, const std::string& id) {
  return engine.Hmac(Algorithm::kHmacSha256, KeyInput::Id(id), "message");
}

std::string Expected(const std::string& key) { return OpenSslHmac("SHA2-256", key, "message"); }

TEST(KeyringReloadTest, SecretSymlinkSwapAddsRemovesAndChangesKeys) {
  SecretVolume vol;
  vol.Publish({{"a.pem", HmacPem("key a, version 1")}, {"b.pem", HmacPem("key b")}});
  CryptoEngine engine(Load(vol.dir()), {}, nullptr);
  CountingObserver observer;
  KeyringReloader reloader(vol.dir(), {}, &engine, &observer);
  EXPECT_FALSE(reloader.ReloadIfChanged());  // nothing changed since construction
  ASSERT_THAT(Mac(engine, "a"), IsOk());
  EXPECT_EQ(*Mac(engine, "a"), Expected("key a, version 1"));
  EXPECT_THAT(Mac(engine, "c"), StatusIs(absl::StatusCode::kNotFound, "unknown key_id 'c'"));

  vol.Publish({{"a.pem", HmacPem("key a, version 2")}, {"c.pem", HmacPem("key c")}});
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(observer.keyring_ok, 1);
  EXPECT_EQ(observer.keyring_failed, 0);
  EXPECT_EQ(engine.keyring_size(), 2u);
  ASSERT_THAT(Mac(engine, "c"), IsOk());
  EXPECT_EQ(*Mac(engine, "c"), Expected("key c"));
  EXPECT_EQ(*Mac(engine, "a"), Expected("key a, version 2"));
  // A removed key is what an unknown key_id always was.
  EXPECT_THAT(Mac(engine, "b"), StatusIs(absl::StatusCode::kNotFound, "unknown key_id 'b'"));
  EXPECT_FALSE(reloader.ReloadIfChanged());
}

// Between a Secret update's `..data` swap and its removal of a dropped key's link, the
// link dangles: a reload then sees the key removed, not a bad keyring. A dangling link
// that does not point into ..data still fails the reload.
TEST(KeyringReloadTest, DanglingLinkIntoDataMidUpdateIsARemovedKey) {
  SecretVolume vol;
  vol.Publish({{"a.pem", HmacPem("key a")}, {"b.pem", HmacPem("key b")}});
  CryptoEngine engine(Load(vol.dir()), {}, nullptr);
  CountingObserver observer;
  KeyringReloader reloader(vol.dir(), {}, &engine, &observer);
  vol.Publish({{"b.pem", HmacPem("key b")}});
  fs::create_symlink("..data/a.pem", fs::path(vol.dir()) / "a.pem");  // not yet removed
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(observer.keyring_ok, 1);
  EXPECT_EQ(observer.keyring_failed, 0);
  EXPECT_EQ(engine.keyring_size(), 1u);
  EXPECT_THAT(Mac(engine, "a"), StatusIs(absl::StatusCode::kNotFound, "unknown key_id 'a'"));
  EXPECT_THAT(Mac(engine, "b"), IsOk());

  fs::create_symlink("/nonexistent/c.pem", fs::path(vol.dir()) / "c.pem");
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(observer.keyring_failed, 1);
  EXPECT_THAT(KeyStore::LoadFromDirectory(vol.dir()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("c.pem: no such file (or a broken symlink)")));
  EXPECT_THAT(Mac(engine, "b"), IsOk());
}

TEST(KeyringReloadTest, DiffNamesAddedRemovedAndChangedKeys) {
  SecretVolume before, after;
  before.Publish({{"same.pem", HmacPem("s")}, {"gone.pem", HmacPem("g")},
                  {"edit.pem", HmacPem("e1")}});
  after.Publish({{"same.pem", HmacPem("s")}, {"new.pem", HmacPem("n")},
                 {"edit.pem", PemEncode("SM4 KEY", std::string(16, 'e'))}});
  const KeyringDiff diff = DiffKeyrings(*Load(before.dir()), *Load(after.dir()));
  EXPECT_THAT(diff.added, ElementsAre("new"));
  EXPECT_THAT(diff.removed, ElementsAre("gone"));
  EXPECT_THAT(diff.changed, ElementsAre("edit"));
  EXPECT_TRUE(DiffKeyrings(*Load(before.dir()), *Load(before.dir())).empty());
}

TEST(KeyringReloadTest, ExplicitReloadPicksUpAPlainFileWithoutPolling) {
  // Not a Secret volume: a plain directory where a file is added in place.
  SecretVolume vol;
  vol.Publish({{"a.pem", HmacPem("a")}});
  CryptoEngine engine(Load(vol.dir()), {}, nullptr);
  CountingObserver observer;
  KeyringReloader reloader(vol.dir(), {}, &engine, &observer);
  const fs::path added = fs::path(vol.dir()) / "z.pem";
  std::ofstream(added, std::ios::binary) << HmacPem("z");
  fs::permissions(added, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_THAT(Mac(engine, "z"), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_THAT(reloader.Reload(), IsOk());
  EXPECT_EQ(*Mac(engine, "z"), Expected("z"));
  EXPECT_EQ(engine.keyring_size(), 2u);
  // A reload of an unchanged directory succeeds and keeps the keyring object.
  const std::shared_ptr<const KeyStore> current = engine.key_store();
  ASSERT_THAT(reloader.Reload(), IsOk());
  EXPECT_EQ(engine.key_store(), current);
  EXPECT_EQ(observer.keyring_ok, 2);
}

TEST(KeyringReloadTest, BadDirectoryKeepsThePreviousKeyringAndIsRetriedOnlyWhenChanged) {
  SecretVolume vol;
  vol.Publish({{"a.pem", HmacPem("a")}});
  CryptoEngine engine(Load(vol.dir()), {}, nullptr);
  CountingObserver observer;
  KeyringReloader reloader(vol.dir(), {}, &engine, &observer);
  const std::shared_ptr<const KeyStore> before = engine.key_store();

  // A new version with a good new key and an unparsable one: nothing of it is used.
  vol.Publish({{"a.pem", HmacPem("a")}, {"new.pem", HmacPem("n")},
               {"bad.pem", "-----BEGIN HMAC KEY-----\nnot base64 !\n-----END HMAC KEY-----\n"}});
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(observer.keyring_failed, 1);
  EXPECT_EQ(observer.keyring_ok, 0);
  EXPECT_EQ(engine.key_store(), before);
  EXPECT_THAT(Mac(engine, "new"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(*Mac(engine, "a"), Expected("a"));
  EXPECT_FALSE(reloader.ReloadIfChanged());  // the same bad files: not retried
  EXPECT_EQ(observer.keyring_failed, 1);
  EXPECT_THAT(reloader.Reload(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bad.pem")));
  EXPECT_EQ(observer.keyring_failed, 2);

  // A secret any user may read fails the permission policy, as at start.
  vol.Publish({{"a.pem", HmacPem("a")}, {"new.pem", HmacPem("n")}});
  ASSERT_EQ(chmod((fs::path(vol.dir()) / "new.pem").c_str(), 0644), 0);
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(observer.keyring_failed, 3);
  EXPECT_EQ(engine.key_store(), before);

  // Fixed: the next change loads.
  ASSERT_EQ(chmod((fs::path(vol.dir()) / "new.pem").c_str(), 0600), 0);
  EXPECT_TRUE(reloader.ReloadIfChanged());
  EXPECT_EQ(observer.keyring_ok, 1);
  EXPECT_EQ(*Mac(engine, "new"), Expected("n"));
}

TEST(KeyringReloadTest, StreamAndHeldKeyringOutliveTheSwap) {
  SecretVolume vol;
  const std::string old_key(16, 'o');
  vol.Publish({{"data.pem", PemEncode("SM4 KEY", old_key)}});
  CryptoEngine engine(Load(vol.dir()), {}, nullptr);
  KeyringReloader reloader(vol.dir(), {}, &engine, nullptr);
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = KeyInput::Id("data");
  absl::StatusOr<std::unique_ptr<StreamEncryptor>> enc = engine.NewStreamEncryptor(p);
  ASSERT_THAT(enc, IsOk());
  const std::shared_ptr<const KeyStore> held = engine.key_store();

  vol.Publish({{"data.pem", PemEncode("SM4 KEY", std::string(16, 'n'))}});
  ASSERT_TRUE(reloader.ReloadIfChanged());
  ASSERT_NE(engine.key_store(), held);
  EXPECT_EQ(held->size(), 1u);  // the previous keyring lives while it is held
  EXPECT_THAT(held->Find("data"), IsOk());

  // The stream started before the swap finishes with the key it started with.
  std::vector<std::pair<std::string, std::string>> chunks;
  absl::StatusOr<std::optional<StreamChunk>> c = (*enc)->Update(std::string(5000, 'x'));
  ASSERT_THAT(c, IsOk());
  if (c->has_value()) chunks.push_back({(*c)->data, (*c)->tag});
  absl::StatusOr<StreamChunk> last = (*enc)->Finish();
  ASSERT_THAT(last, IsOk());
  chunks.push_back({last->data, last->tag});
  SymmetricParams q = p;
  q.key = KeyInput::Inline(old_key);
  q.nonce = (*enc)->nonce();
  absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec = engine.NewStreamDecryptor(q);
  ASSERT_THAT(dec, IsOk());
  std::string plaintext;
  for (const auto& [data, tag] : chunks) {
    absl::StatusOr<std::optional<StreamChunk>> d = (*dec)->Update(data, tag);
    ASSERT_THAT(d, IsOk());
    if (d->has_value()) plaintext += (*d)->data;
  }
  absl::StatusOr<StreamChunk> tail = (*dec)->Finish();
  ASSERT_THAT(tail, IsOk());
  plaintext += tail->data;
  EXPECT_EQ(plaintext, std::string(5000, 'x'));
}

TEST(KeyringReloadTest, CallsDuringRepeatedSwapsSeeOneKeyringEach) {
  // Two keyrings: "k" differs between them, "only_a" is in the first only. Threads call
  // while the main thread swaps back and forth; each result is one keyring's.
  SecretVolume a, b;
  a.Publish({{"k.pem", HmacPem("k in a")}, {"only_a.pem", HmacPem("only a")}});
  b.Publish({{"k.pem", HmacPem("k in b")}});
  const std::shared_ptr<const KeyStore> ring_a = Load(a.dir()), ring_b = Load(b.dir());
  CryptoEngine engine(ring_a, {}, nullptr);
  const std::string want_a = Expected("k in a"), want_b = Expected("k in b");
  const std::string want_only = Expected("only a");
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}, seen_a{0}, seen_b{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        absl::StatusOr<std::string> k = Mac(engine, "k");
        if (k.ok() && *k == want_a) {
          ++seen_a;
        } else if (k.ok() && *k == want_b) {
          ++seen_b;
        } else {
          ++failures;
        }
        absl::StatusOr<std::string> only = Mac(engine, "only_a");
        if (!(only.ok() ? *only == want_only : absl::IsNotFound(only.status()))) ++failures;
        const std::vector<absl::StatusOr<SymmetricCiphertext>> batch = engine.EncryptBatch(
            std::vector<SymmetricParams>(2), std::vector<absl::string_view>{"x", "y"});
        (void)batch;
        const size_t n = engine.keyring_size();
        if (n != 1 && n != 2) ++failures;
      }
    });
  }
  for (int i = 0; i < 200; ++i) engine.SetKeyStore(i % 2 == 0 ? ring_b : ring_a);
  // Keep swapping until both keyrings have been seen by the callers (bounded).
  for (int i = 0; i < 100000 && (seen_a.load() == 0 || seen_b.load() == 0); ++i) {
    engine.SetKeyStore(i % 2 == 0 ? ring_b : ring_a);
    std::this_thread::yield();
  }
  stop = true;
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  EXPECT_GT(seen_a, 0);
  EXPECT_GT(seen_b, 0);
}

// CaptureStderr runs `f` with file descriptor 2 sent to a pipe and returns what was written.
std::string CaptureStderr(const std::function<void()>& f) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const int saved = dup(STDERR_FILENO);
  dup2(fds[1], STDERR_FILENO);
  close(fds[1]);
  f();
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  return out;
}

// A file name with a newline cannot forge a log line: control characters are escaped.
TEST(KeyringReloadTest, FileNamesInLogLinesCannotForgeALine) {
  SecretVolume vol;
  vol.Publish({{"a.pem", HmacPem("key a")}});
  CryptoEngine engine(Load(vol.dir()), {}, nullptr);
  KeyringReloader reloader(vol.dir(), {}, &engine, nullptr);
  vol.Publish({{"a.pem", HmacPem("key a")}, {"x\nE forged.pem", "not a PEM file"}});
  const std::string log = CaptureStderr([&] { EXPECT_TRUE(reloader.ReloadIfChanged()); });
  EXPECT_THAT(log, HasSubstr("x\\x0aE forged.pem"));
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_THAT(Mac(engine, "a"), IsOk());
}

// ReadSecretFile refuses what is not a regular file without blocking on it (a FIFO with
// no writer would block a plain open forever), and files over the limit.
TEST(ReadSecretFileTest, RegularFilesOnlyAndNeverBlocks) {
  SecretVolume vol;
  const std::string dir = vol.dir();
  std::ofstream(dir + "/k.pem") << "text";
  struct stat st {};
  absl::StatusOr<SecretData> ok = ReadSecretFile(dir + "/k.pem", 16, &st);
  ASSERT_THAT(ok, IsOk());
  EXPECT_EQ(SecretDataAsStringView(*ok), "text");
  EXPECT_EQ(st.st_size, 4);
  EXPECT_THAT(ReadSecretFile(dir + "/k.pem", 3), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_EQ(mkfifo((dir + "/fifo.pem").c_str(), 0600), 0);
  EXPECT_THAT(ReadSecretFile(dir + "/fifo.pem", 16),
              StatusIs(absl::StatusCode::kFailedPrecondition, "not a regular file"));
  EXPECT_THAT(ReadSecretFile("/dev/zero", 16), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(ReadSecretFile(dir + "/missing.pem", 16), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ReadSecretFile(dir, 16), StatusIs(absl::StatusCode::kFailedPrecondition));

  // In a keyring: a FIFO fails the reload (the previous keyring stays) and does not hang.
  std::filesystem::remove(dir + "/k.pem");
  EXPECT_THAT(KeyStore::LoadFromDirectory(dir),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fifo.pem: not a regular file")));
}

// ---- TLS file checks ------------------------------------------------------------------

// SelfSigned makes <name>.pem and <name>.key (P-256, CN localhost) in `dir` with the
// openssl command and returns {certificate, key} text.
std::pair<std::string, std::string> SelfSigned(const std::string& dir, const std::string& name) {
  const std::string base = dir + "/" + name;
  const std::string cmd = absl::StrCat(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout ",
      base, ".key -out ", base, ".pem -subj /CN=localhost >/dev/null 2>&1");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "openssl could not make a test certificate";
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  return {read(base + ".pem"), read(base + ".key")};
}

std::string ReadPath(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Only a valid set reaches the memory file gRPC reads (key, then chain); a bad, empty or
// missing file leaves the previous set there.
TEST(TlsFileCheckTest, ReportsEachChangeValidOrNot) {
  SecretVolume vol;
  const auto [cert_a, key_a] = SelfSigned(vol.dir(), "a");
  const auto [cert_b, key_b] = SelfSigned(vol.dir(), "b");
  vol.Publish({{"tls.crt", cert_a}, {"tls.key", key_a}});
  const std::string cert = vol.dir() + "/tls.crt", key = vol.dir() + "/tls.key";
  EXPECT_THAT(ValidateTlsFiles(cert, key, ""), IsOk());
  CountingObserver observer;
  absl::StatusOr<std::unique_ptr<TlsFileCheck>> created =
      TlsFileCheck::Create(cert, key, "", &observer);
  ASSERT_THAT(created, IsOk());
  TlsFileCheck& check = **created;
  EXPECT_THAT(check.identity_path(), ::testing::StartsWith("/proc/self/fd/"));
  EXPECT_EQ(check.client_ca_path(), "");
  EXPECT_EQ(ReadPath(check.identity_path()), key_a + "\n" + cert_a);
  EXPECT_FALSE(check.CheckIfChanged());

  vol.Publish({{"tls.crt", cert_b}, {"tls.key", key_b}});
  EXPECT_TRUE(check.CheckIfChanged());
  EXPECT_FALSE(check.CheckIfChanged());
  EXPECT_EQ(observer.tls_ok, 1);
  EXPECT_EQ(observer.tls_failed, 0);
  EXPECT_EQ(ReadPath(check.identity_path()), key_b + "\n" + cert_b);

  vol.Publish({{"tls.crt", cert_a}, {"tls.key", key_b}});  // a key of another certificate
  EXPECT_TRUE(check.CheckIfChanged());
  EXPECT_EQ(observer.tls_failed, 1);
  EXPECT_THAT(ValidateTlsFiles(cert, key, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not match")));

  vol.Publish({{"tls.crt", "not PEM"}, {"tls.key", key_a}});
  EXPECT_TRUE(check.CheckIfChanged());
  EXPECT_EQ(observer.tls_failed, 2);
  EXPECT_THAT(ValidateTlsFiles(cert, key, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no PEM certificate")));
  vol.Publish({{"tls.crt", ""}, {"tls.key", key_a}});  // a file caught mid-write
  EXPECT_TRUE(check.CheckIfChanged());
  vol.Publish({{"tls.key", key_a}});  // the certificate file gone
  EXPECT_TRUE(check.CheckIfChanged());
  EXPECT_EQ(observer.tls_failed, 4);
  EXPECT_EQ(observer.tls_ok, 1);
  EXPECT_EQ(ReadPath(check.identity_path()), key_b + "\n" + cert_b);
  EXPECT_EQ(observer.keyring_ok + observer.keyring_failed, 0);

  // With a client CA bundle: its own memory file.
  vol.Publish({{"tls.crt", cert_a}, {"tls.key", key_a}, {"ca.pem", cert_b}});
  absl::StatusOr<std::unique_ptr<TlsFileCheck>> with_ca =
      TlsFileCheck::Create(cert, key, vol.dir() + "/ca.pem", nullptr);
  ASSERT_THAT(with_ca, IsOk());
  EXPECT_EQ(ReadPath((*with_ca)->client_ca_path()), cert_b);
  EXPECT_THAT(TlsFileCheck::Create(cert, vol.dir() + "/missing.key", "", nullptr),
              StatusIs(absl::StatusCode::kNotFound));

  // The client CA bundle must hold a certificate; a missing file is NotFound.
  vol.Publish({{"tls.crt", cert_a}, {"tls.key", key_a}, {"ca.pem", key_a}});
  EXPECT_THAT(ValidateTlsFiles(cert, key, vol.dir() + "/ca.pem"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--tls_client_ca")));
  EXPECT_THAT(ValidateTlsFiles(cert, key, vol.dir() + "/missing.pem"),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(ValidateTlsFiles(cert, key, vol.dir() + "/a.pem"), IsOk());
}

// ExpiredSelfSigned: {certificate, key} PEM of a P-256 certificate for localhost valid
// from two days ago until yesterday.
std::pair<std::string, std::string> ExpiredSelfSigned() {
  EVP_PKEY* pkey = EVP_EC_gen("P-256");
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -2 * 86400);
  X509_gmtime_adj(X509_getm_notAfter(x), -86400);
  X509_set_pubkey(x, pkey);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  EXPECT_GT(X509_sign(x, pkey, EVP_sha256()), 0);
  auto pem = [](auto write) {
    BIO* b = BIO_new(BIO_s_mem());
    write(b);
    char* data = nullptr;
    const long n = BIO_get_mem_data(b, &data);
    std::string out(data, static_cast<size_t>(n));
    BIO_free(b);
    return out;
  };
  std::string cert = pem([x](BIO* b) { PEM_write_bio_X509(b, x); });
  std::string key = pem([pkey](BIO* b) {
    PEM_write_bio_PrivateKey(b, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  });
  X509_free(x);
  EVP_PKEY_free(pkey);
  return {cert, key};
}

// An expired certificate is refused: at start (Create) and on a change, where the
// previous certificate stays in the memory file.
TEST(TlsFileCheckTest, ExpiredCertificateIsRefused) {
  SecretVolume vol;
  const auto [cert_a, key_a] = SelfSigned(vol.dir(), "a");
  const auto [cert_x, key_x] = ExpiredSelfSigned();
  vol.Publish({{"tls.crt", cert_a}, {"tls.key", key_a}});
  const std::string cert = vol.dir() + "/tls.crt", key = vol.dir() + "/tls.key";
  CountingObserver observer;
  absl::StatusOr<std::unique_ptr<TlsFileCheck>> check =
      TlsFileCheck::Create(cert, key, "", &observer);
  ASSERT_THAT(check, IsOk());
  vol.Publish({{"tls.crt", cert_x}, {"tls.key", key_x}});
  EXPECT_TRUE((*check)->CheckIfChanged());
  EXPECT_EQ(observer.tls_failed, 1);
  EXPECT_EQ(ReadPath((*check)->identity_path()), key_a + "\n" + cert_a);
  EXPECT_THAT(ValidateTlsFiles(cert, key, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the certificate expired")));
  EXPECT_THAT(TlsFileCheck::Create(cert, key, "", nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace smcrypt::server
