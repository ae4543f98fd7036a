// Concurrency of the engine and the core below it, written to be meaningful under
// ThreadSanitizer (the TSan build runs it; docs/design.md "Tests and CI"): several threads
// share one CryptoEngine, its keyring primitives (parsed when the keyring is set), the LRU of
// inline public keys (primitive_cache.h, sized below the key set so entries are evicted
// while others are in use), the per-key SM2 tables (crypto/sm2/sm2_key_cache.*), the
// batch paths and a WorkerPool, and each thread checks every result. Each test runs
// in its own process (gtest_discover_tests), so the first use of the back-end dispatch
// tables is itself concurrent.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/key_store.h"
#include "server/engine/worker_pool.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"
#include "tests/testing/test_util.h"

namespace smcrypt::server {
namespace {

namespace fs = std::filesystem;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::TestSeed;

constexpr int kThreads = 4;

class Keyring {
 public:
  Keyring() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_conc_XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    absl::StatusOr<KeyPair> sm2 = GenerateKeyPair(Algorithm::kSm2);
    absl::StatusOr<KeyPair> p256 = GenerateKeyPair(Algorithm::kEcdsaP256);
    EXPECT_TRUE(sm2.ok() && p256.ok());
    Write("sm2", PemEncode("PRIVATE KEY", SecretDataAsStringView(sm2->private_key_der)));
    Write("p256", PemEncode("PRIVATE KEY", SecretDataAsStringView(p256->private_key_der)));
    Write("sm4", PemEncode("SM4 KEY", std::string(16, '\x42')));
    Write("hmac", PemEncode("HMAC KEY", std::string(32, '\x24')));
    sm2_public_ = sm2->public_key_der;
  }
  ~Keyring() { fs::remove_all(dir_); }
  const std::string& dir() const { return dir_; }
  const std::string& sm2_public() const { return sm2_public_; }

 private:
  void Write(const std::string& id, const std::string& pem) {
    const fs::path p = fs::path(dir_) / (id + ".pem");
    std::ofstream(p, std::ios::binary) << pem;
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
  }
  std::string dir_;
  std::string sm2_public_;
};

// RunThreads runs body(thread index) on kThreads threads released together.
template <typename Body>
void RunThreads(Body body) {
  std::vector<std::thread> threads;
  absl::Notification go;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      go.WaitForNotification();
      body(t);
    });
  }
  go.Notify();
  for (std::thread& th : threads) th.join();
}

TEST(EngineConcurrencyTest, SharedEngineKeyringCachesAndBatches) {
  Keyring ring;
  absl::StatusOr<std::unique_ptr<KeyStore>> keys = KeyStore::LoadFromDirectory(ring.dir());
  ASSERT_TRUE(keys.ok()) << keys.status();
  EngineOptions options;
  options.public_key_cache_size = 2;  // fewer than the inline keys below: evictions
  CryptoEngine engine(keys->get(), options, nullptr);

  // Inline SM2 public keys with their signatures over "msg" (verification goes through
  // the LRU; with 4 keys and 2 entries, threads evict what others just used).
  struct Signed {
    std::string public_der;
    std::string signature;
  };
  std::vector<Signed> signers;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
    ASSERT_TRUE(kp.ok());
    absl::StatusOr<std::string> sig =
        engine.Sign(Algorithm::kSm2, KeyInput::Inline(SecretDataAsStringView(kp->private_key_der)),
                    "msg", {}, false);
    ASSERT_TRUE(sig.ok()) << sig.status();
    signers.push_back({kp->public_key_der, *sig});
  }

  const uint64_t seed = TestSeed();
  std::atomic<int> failures{0};
  RunThreads([&](int t) {
    std::mt19937_64 rng(seed + t);
    auto expect = [&](bool ok, int line = __builtin_LINE()) {
      if (!ok && failures.fetch_add(1) < 3) ADD_FAILURE_AT(__FILE__, line) << "thread " << t;
    };
    for (int i = 0; i < 12; ++i) {
      const std::string data = RandomBytes(rng, rng() % 300);
      // Keyring SM2 and ECDSA keys: sign, then verify with the keyring key.
      for (const char* id : {"sm2", "p256"}) {
        const Algorithm alg = id[0] == 's' ? Algorithm::kSm2 : Algorithm::kEcdsaP256;
        absl::StatusOr<std::string> sig = engine.Sign(alg, KeyInput::Id(id), data, {}, false);
        expect(sig.ok());
        if (sig.ok()) {
          absl::StatusOr<bool> v = engine.Verify(alg, KeyInput::Id(id), data, *sig, {}, false);
          expect(v.ok() && *v);
        }
      }
      // Inline public keys through the bounded cache.
      const Signed& s = signers[rng() % signers.size()];
      absl::StatusOr<bool> v = engine.Verify(Algorithm::kSm2, KeyInput::Inline(s.public_der),
                                             "msg", s.signature, {}, false);
      expect(v.ok() && *v);
      // SM4-GCM with the keyring key; SM2 encryption to the inline public key.
      SymmetricParams gcm;
      gcm.algorithm = Algorithm::kSm4Gcm;
      gcm.key = KeyInput::Id("sm4");
      absl::StatusOr<SymmetricCiphertext> ct = engine.Encrypt(gcm, data);
      expect(ct.ok());
      if (ct.ok()) {
        gcm.nonce = ct->nonce;
        absl::StatusOr<std::string> pt = engine.Decrypt(gcm, ct->ciphertext, ct->tag);
        expect(pt.ok() && *pt == data);
      }
      absl::StatusOr<std::string> pk = engine.PublicKeyEncrypt(
          Algorithm::kSm2, KeyInput::Inline(ring.sm2_public()), data + "x",
          Sm2CiphertextFormat::kC1C3C2);
      expect(pk.ok());
      if (pk.ok()) {
        absl::StatusOr<std::string> back = engine.PublicKeyDecrypt(
            Algorithm::kSm2, KeyInput::Id("sm2"), *pk, Sm2CiphertextFormat::kC1C3C2);
        expect(back.ok() && *back == data + "x");
      }
      // HPKE with the keyring key, HMAC, and the batch paths of unary batching.
      absl::StatusOr<std::string> sealed = engine.HybridEncrypt(
          Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2"), data, "info");
      expect(sealed.ok());
      if (sealed.ok()) {
        absl::StatusOr<std::string> opened = engine.HybridDecrypt(
            Algorithm::kHpkeSm2Sm3Sm4Gcm, KeyInput::Id("sm2"), *sealed, "info");
        expect(opened.ok() && *opened == data);
      }
      absl::StatusOr<std::string> mac = engine.Hmac(Algorithm::kHmacSm3, KeyInput::Id("hmac"), data);
      expect(mac.ok());
      const std::string data_y = data + "y", data_z = data + "z";  // the items' views
      const HashItem hash_items[] = {{Algorithm::kSm3, data}, {Algorithm::kSm3, data_y}};
      std::vector<absl::StatusOr<std::string>> digests = engine.HashBatch(hash_items);
      const auto want = Sm3Digest(data);
      const auto want_y = Sm3Digest(data_y);
      expect(digests.size() == 2 && digests[0].ok() && digests[1].ok() &&
             *digests[0] == std::string(want.begin(), want.end()) &&
             *digests[1] == std::string(want_y.begin(), want_y.end()));
      const PublicKeyEncryptItem pke_items[] = {
          {Algorithm::kSm2, KeyInput::Id("sm2"), data, Sm2CiphertextFormat::kC1C3C2},
          {Algorithm::kSm2, KeyInput::Id("sm2"), data_z, Sm2CiphertextFormat::kC1C2C3}};
      std::vector<absl::StatusOr<std::string>> cts = engine.PublicKeyEncryptBatch(pke_items);
      expect(cts.size() == 2 && cts[0].ok() && cts[1].ok());
      if (cts.size() == 2 && cts[0].ok() && cts[1].ok()) {
        absl::StatusOr<std::string> b0 = engine.PublicKeyDecrypt(
            Algorithm::kSm2, KeyInput::Id("sm2"), *cts[0], Sm2CiphertextFormat::kC1C3C2);
        absl::StatusOr<std::string> b1 = engine.PublicKeyDecrypt(
            Algorithm::kSm2, KeyInput::Id("sm2"), *cts[1], Sm2CiphertextFormat::kC1C2C3);
        expect(b0.ok() && *b0 == data && b1.ok() && *b1 == data_z);
      }
    }
  });
  EXPECT_EQ(failures.load(), 0) << "seed " << seed;
}

// Core primitives documented as safe to share (const methods): one object each, used
// from every thread, results checked against a single-threaded reference.
TEST(EngineConcurrencyTest, SharedCorePrimitives) {
  const std::string key(16, '\x5a');
  absl::StatusOr<std::unique_ptr<Aead>> gcm = NewSm4Gcm(key);
  absl::StatusOr<std::unique_ptr<Aead>> ccm = NewSm4Ccm(key);
  absl::StatusOr<std::unique_ptr<Cipher>> cbc = NewSm4Cbc(key);
  absl::StatusOr<std::unique_ptr<HmacSm3>> hmac = HmacSm3::New(key);
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
  ASSERT_TRUE(gcm.ok() && ccm.ok() && cbc.ok() && hmac.ok() && kp.ok());
  absl::StatusOr<std::unique_ptr<PublicKeySign>> signer =
      NewPublicKeySign(Algorithm::kSm2, SecretDataAsStringView(kp->private_key_der));
  absl::StatusOr<std::unique_ptr<PublicKeyVerify>> verifier =
      NewPublicKeyVerify(Algorithm::kSm2, kp->public_key_der);
  ASSERT_TRUE(signer.ok() && verifier.ok());
  const std::string nonce(12, '\x01'), iv(16, '\x02');

  const uint64_t seed = TestSeed();
  std::atomic<int> failures{0};
  RunThreads([&](int t) {
    std::mt19937_64 rng(seed + 100 + t);
    auto expect = [&](bool ok) {
      if (!ok) failures.fetch_add(1);
    };
    for (int i = 0; i < 40; ++i) {
      const std::string data = RandomBytes(rng, rng() % 2000);
      for (const Aead* a : {gcm->get(), ccm->get()}) {
        absl::StatusOr<std::string> c = a->Seal(nonce, data, "aad");
        expect(c.ok());
        if (c.ok()) {
          absl::StatusOr<std::string> p = a->Open(nonce, *c, "aad");
          expect(p.ok() && *p == data);
        }
      }
      absl::StatusOr<std::string> c = (*cbc)->Encrypt(iv, data);
      expect(c.ok());
      if (c.ok()) {
        absl::StatusOr<std::string> p = (*cbc)->Decrypt(iv, *c);
        expect(p.ok() && *p == data);
      }
      absl::StatusOr<std::string> m = (*hmac)->ComputeMac(data);
      expect(m.ok() && (*hmac)->VerifyMac(*m, data).ok());
      if (i % 8 == 0) {
        absl::StatusOr<std::string> sig = (*signer)->Sign(data);
        expect(sig.ok() && (*verifier)->Verify(*sig, data).ok());
      }
      std::vector<absl::string_view> batch(9, data);
      std::vector<uint8_t> out(32 * batch.size());
      Sm3Batch(batch, out.data());
      const auto want = Sm3Digest(data);
      for (size_t j = 0; j < batch.size(); ++j) {
        expect(std::equal(want.begin(), want.end(), out.begin() + 32 * j));
      }
    }
  });
  EXPECT_EQ(failures.load(), 0) << "seed " << seed;
}

// A WorkerPool fed from several threads at once, with a queue small enough that
// submitters block, runs every task exactly once.
TEST(EngineConcurrencyTest, WorkerPoolFromManySubmitters) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(2, 4);
    RunThreads([&](int) {
      for (int i = 0; i < 200; ++i) pool.Submit([&] { ran.fetch_add(1); });
    });
  }
  EXPECT_EQ(ran.load(), kThreads * 200);
}

}  // namespace
}  // namespace smcrypt::server
