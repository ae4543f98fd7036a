// The two-phase rotation runbook (docs/rotation.md) against two real smcryptd replicas
// (label integration), each with its own copy of the keys folder laid out as a Kubernetes
// Secret volume, updated at different moments as kubelet would. A client spreads a mixed
// load (Encrypt then Decrypt, Sign then Verify, HybridEncrypt then HybridDecrypt, each
// pair on two random replicas, no version named anywhere) over both while the runbook
// runs: add v2 pinned to primary 1 on one replica, then the other; promote on one, then
// the other; rewrap the stored corpus; raise min_version on one, then the other. Asserts 0
// failed calls throughout, that adding v2 changed nothing until the promotion, and that
// every stored ciphertext opens on both replicas at the end.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/secret_volume.h"
#include "tests/server/smcryptd_process.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::SecretVolume;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::WaitFor;

using Stub = v1::CryptoService::Stub;
using Files = std::vector<std::pair<std::string, std::string>>;

std::string Sm2PrivatePem() {
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
  EXPECT_TRUE(kp.ok()) << kp.status();
  return PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
}

// Corpus: what the load stored, in the shape a caller keeps it (no version beside it).
struct Stored {
  bool hybrid = false;
  std::string nonce, ciphertext, tag, aad, plaintext;
  uint32_t reported_version = 0;  // the response's key_version (0: not reported)
};

// Replica: one smcryptd with its own Secret volume.
struct Replica {
  SecretVolume keys;
  Smcryptd server;
  std::unique_ptr<Stub> stub;
};

class Load {
 public:
  explicit Load(std::vector<Stub*> stubs) : stubs_(std::move(stubs)) {}

  void Start(int threads) {
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this, t] { Run(t); });
    }
  }
  void Stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  int64_t calls() const { return calls_; }
  int64_t failures() const { return failures_; }
  std::vector<std::string> first_failures() {
    absl::MutexLock lock(&mu_);
    return failure_messages_;
  }
  // TakeCorpus moves out what was stored so far.
  std::vector<Stored> TakeCorpus() {
    absl::MutexLock lock(&mu_);
    return std::move(corpus_);
  }
  // Versions lists the distinct key_version values Encrypt reported since the last call.
  std::vector<uint32_t> TakeEncryptVersions() {
    absl::MutexLock lock(&mu_);
    std::vector<uint32_t> v(seen_versions_.begin(), seen_versions_.end());
    seen_versions_.clear();
    return v;
  }

 private:
  void Fail(const std::string& what, const grpc::Status& s) {
    ++failures_;
    absl::MutexLock lock(&mu_);
    if (failure_messages_.size() < 8) {
      failure_messages_.push_back(absl::StrCat(what, ": ", s.error_code(), " ", s.error_message()));
    }
  }
  void Keep(Stored s, uint32_t version) {
    absl::MutexLock lock(&mu_);
    if (!s.hybrid) seen_versions_.insert(version);
    corpus_.push_back(std::move(s));
  }

  void Symmetric(Stub* w, Stub* r, const std::string& tag) {
    v1::EncryptRequest er;
    er.set_algorithm(v1::SM4_GCM);
    er.mutable_key()->set_key_id("data");
    er.set_plaintext("record " + tag);
    er.set_aad("ctx " + tag);
    v1::EncryptResponse eresp;
    grpc::Status s = w->Encrypt(Ctx(10).get(), er, &eresp);
    ++calls_;
    if (!s.ok()) return Fail("Encrypt", s);
    v1::DecryptRequest dr;
    dr.set_algorithm(v1::SM4_GCM);
    dr.mutable_key()->set_key_id("data");
    dr.set_nonce(eresp.nonce());
    dr.set_ciphertext(eresp.ciphertext());
    dr.set_tag(eresp.tag());
    dr.set_aad(er.aad());
    v1::DecryptResponse dresp;
    s = r->Decrypt(Ctx(10).get(), dr, &dresp);
    ++calls_;
    if (!s.ok()) return Fail("Decrypt", s);
    if (dresp.plaintext() != er.plaintext()) return Fail("Decrypt plaintext", grpc::Status());
    Keep({false, eresp.nonce(), eresp.ciphertext(), eresp.tag(), er.aad(), er.plaintext(),
          eresp.key_version()},
         eresp.key_version());
  }

  void Signature(Stub* w, Stub* r, const std::string& tag) {
    v1::SignRequest sr;
    sr.set_algorithm(v1::SM2);
    sr.mutable_key()->set_key_id("signing");
    sr.set_data("document " + tag);
    v1::SignResponse sresp;
    grpc::Status s = w->Sign(Ctx(10).get(), sr, &sresp);
    ++calls_;
    if (!s.ok()) return Fail("Sign", s);
    v1::VerifyRequest vr;
    vr.set_algorithm(v1::SM2);
    vr.mutable_key()->set_key_id("signing");
    vr.set_data(sr.data());
    vr.set_signature(sresp.signature());
    v1::VerifyResponse vresp;
    s = r->Verify(Ctx(10).get(), vr, &vresp);
    ++calls_;
    if (!s.ok()) return Fail("Verify", s);
    if (!vresp.valid()) return Fail("Verify valid", grpc::Status());
  }

  void Hybrid(Stub* w, Stub* r, const std::string& tag) {
    v1::HybridEncryptRequest hr;
    hr.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    hr.mutable_key()->set_key_id("recipient");
    hr.set_plaintext("sealed " + tag);
    hr.set_info("info " + tag);
    v1::HybridEncryptResponse hresp;
    grpc::Status s = w->HybridEncrypt(Ctx(10).get(), hr, &hresp);
    ++calls_;
    if (!s.ok()) return Fail("HybridEncrypt", s);
    v1::HybridDecryptRequest dr;
    dr.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    dr.mutable_key()->set_key_id("recipient");
    dr.set_ciphertext(hresp.ciphertext());
    dr.set_info(hr.info());
    v1::HybridDecryptResponse dresp;
    s = r->HybridDecrypt(Ctx(10).get(), dr, &dresp);
    ++calls_;
    if (!s.ok()) return Fail("HybridDecrypt", s);
    if (dresp.plaintext() != hr.plaintext()) return Fail("HybridDecrypt plaintext", grpc::Status());
    Keep({true, "", hresp.ciphertext(), "", hr.info(), hr.plaintext(), hresp.key_version()},
         hresp.key_version());
  }

  void Run(int t) {
    std::mt19937 rng(1000 + t);
    for (int i = 0; !stop_; ++i) {
      Stub* w = stubs_[rng() % stubs_.size()];
      Stub* r = stubs_[rng() % stubs_.size()];
      const std::string tag = absl::StrCat(t, "-", i);
      switch (i % 3) {
        case 0: Symmetric(w, r, tag); break;
        case 1: Signature(w, r, tag); break;
        default: Hybrid(w, r, tag); break;
      }
    }
  }

  std::vector<Stub*> stubs_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> failures_{0};
  absl::Mutex mu_;
  std::vector<std::string> failure_messages_ ABSL_GUARDED_BY(mu_);
  std::vector<Stored> corpus_ ABSL_GUARDED_BY(mu_);
  std::set<uint32_t> seen_versions_ ABSL_GUARDED_BY(mu_);
};

// KeyState: what ListKeys says of one key on one replica.
struct KeyState {
  std::vector<uint32_t> versions;
  uint32_t primary = 0;
  uint32_t min_version = 0;
  bool operator==(const KeyState&) const = default;
};

std::map<std::string, KeyState> ListKeys(Stub* stub) {
  std::map<std::string, KeyState> out;
  v1::ListKeysRequest req;
  do {
    v1::ListKeysResponse resp;
    grpc::Status s = stub->ListKeys(Ctx(5).get(), req, &resp);
    if (!s.ok()) return {};
    for (const v1::KeyInfo& k : resp.keys()) {
      KeyState& st = out[k.key_id()];
      for (const v1::KeyVersionInfo& v : k.versions()) {
        if (!v.retired()) st.versions.push_back(v.version());
      }
      st.primary = k.primary_version();
      st.min_version = k.min_version();
    }
    req.set_page_token(resp.next_page_token());
  } while (!req.page_token().empty());
  return out;
}

class SmcryptdRotationTest : public ::testing::Test {
 protected:
  static constexpr const char* kKeys[] = {"data", "signing", "recipient"};

  void SetUp() override {
    sm4_[0] = PemEncode("SM4 KEY", std::string(16, 'a'));
    sm4_[1] = PemEncode("SM4 KEY", std::string(16, 'b'));
    for (int v = 0; v < 2; ++v) {
      signing_[v] = Sm2PrivatePem();
      recipient_[v] = Sm2PrivatePem();
    }
    for (Replica* r : {&a_, &b_}) {
      Publish(*r, /*with_v2=*/false, 0, 0);
      ASSERT_TRUE(r->server.Start({"--keys_dir=" + r->keys.dir(), "--reload_interval=0"}))
          << r->server.log();
      r->stub = r->server.Stub();
    }
  }

  // Publish lays out v1 as the plain `<id>.pem` and, with_v2, `<id>.v2.pem`; a primary
  // and min_version file for each key when not 0.
  void Publish(Replica& r, bool with_v2, uint32_t primary, uint32_t min_version) {
    Files files = {{"data.pem", sm4_[0]},
                   {"signing.pem", signing_[0]},
                   {"recipient.pem", recipient_[0]}};
    if (with_v2) {
      files.push_back({"data.v2.pem", sm4_[1]});
      files.push_back({"signing.v2.pem", signing_[1]});
      files.push_back({"recipient.v2.pem", recipient_[1]});
    }
    for (const char* id : kKeys) {
      if (primary != 0) files.push_back({absl::StrCat(id, ".primary"), absl::StrCat(primary, "\n")});
      if (min_version != 0) {
        files.push_back({absl::StrCat(id, ".min_version"), absl::StrCat(min_version, "\n")});
      }
    }
    r.keys.Publish(files);
  }

  // Step publishes the replica's new files, sends SIGHUP and waits until its ListKeys
  // reports `want` for every key (the runbook's "wait until every replica reports").
  void Step(Replica& r, bool with_v2, uint32_t primary, uint32_t min_version, KeyState want) {
    Publish(r, with_v2, primary, min_version);
    r.server.Signal(SIGHUP);
    ASSERT_TRUE(WaitFor([&] {
      std::map<std::string, KeyState> keys = ListKeys(r.stub.get());
      for (const char* id : kKeys) {
        if (!(keys[id] == want)) return false;
      }
      return true;
    }, 30)) << r.server.log();
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // load on the new state
  }

  // Rewrap rewraps `items` in batches on alternating replicas; every item must come back
  // under `want_version`.
  void Rewrap(std::vector<Stored>& items, uint32_t want_version) {
    for (size_t start = 0; start < items.size(); start += 100) {
      const size_t end = std::min(items.size(), start + 100);
      v1::RewrapBatchRequest req;
      for (size_t i = start; i < end; ++i) {
        v1::RewrapRequest* item = req.add_items();
        const Stored& s = items[i];
        item->set_ciphertext(s.ciphertext);
        if (s.hybrid) {
          item->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
          item->mutable_key()->set_key_id("recipient");
          item->set_info(s.aad);
        } else {
          item->set_algorithm(v1::SM4_GCM);
          item->mutable_key()->set_key_id("data");
          item->set_nonce(s.nonce);
          item->set_tag(s.tag);
          item->set_aad(s.aad);
        }
      }
      Stub* stub = (start / 100) % 2 == 0 ? a_.stub.get() : b_.stub.get();
      v1::RewrapBatchResponse resp;
      grpc::Status st = stub->RewrapBatch(Ctx(30).get(), req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message();
      ASSERT_EQ(resp.results_size(), static_cast<int>(end - start));
      for (size_t i = start; i < end; ++i) {
        const v1::RewrapBatchResult& res = resp.results(i - start);
        ASSERT_EQ(res.status().code(), 0) << res.status().message();
        EXPECT_EQ(res.key_version(), want_version);
        // The version that opened it: what sealed it (a plain `<id>.pem` is version 1).
        EXPECT_EQ(res.source_key_version(), std::max(1u, items[i].reported_version));
        items[i].ciphertext = res.ciphertext();
        items[i].nonce = res.nonce();
        items[i].tag = res.tag();
        items[i].reported_version = res.key_version();
      }
    }
  }

  // Opens checks that `s` opens on `stub` with no version named.
  static void ExpectOpens(Stub* stub, const Stored& s) {
    if (s.hybrid) {
      v1::HybridDecryptRequest req;
      req.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
      req.mutable_key()->set_key_id("recipient");
      req.set_ciphertext(s.ciphertext);
      req.set_info(s.aad);
      v1::HybridDecryptResponse resp;
      grpc::Status st = stub->HybridDecrypt(Ctx(10).get(), req, &resp);
      ASSERT_TRUE(st.ok()) << st.error_message();
      EXPECT_EQ(resp.plaintext(), s.plaintext);
      EXPECT_EQ(resp.key_version(), 2u);
      return;
    }
    v1::DecryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    req.mutable_key()->set_key_id("data");
    req.set_nonce(s.nonce);
    req.set_ciphertext(s.ciphertext);
    req.set_tag(s.tag);
    req.set_aad(s.aad);
    v1::DecryptResponse resp;
    grpc::Status st = stub->Decrypt(Ctx(10).get(), req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(resp.plaintext(), s.plaintext);
    EXPECT_EQ(resp.key_version(), 2u);
  }

  std::string sm4_[2], signing_[2], recipient_[2];
  Replica a_, b_;
};

TEST_F(SmcryptdRotationTest, TheRunbookLosesNoCallAndStrandsNoData) {
  Load load({a_.stub.get(), b_.stub.get()});
  load.Start(4);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  // Only plain `<id>.pem` files: no version is reported to callers that name none.
  EXPECT_EQ(load.TakeEncryptVersions(), std::vector<uint32_t>{0});

  // 1. Add v2 with the primary pinned to 1, one replica after the other: nothing new is
  // sealed or signed with v2 yet, so the replica still without v2 opens everything.
  Step(a_, true, 1, 0, {{1, 2}, 1, 1});
  Step(b_, true, 1, 0, {{1, 2}, 1, 1});
  EXPECT_EQ(load.TakeEncryptVersions(), (std::vector<uint32_t>{0, 1}));  // 0: before the step

  // 2. Promote, one replica after the other: a replica still on primary 1 has v2 and opens
  // v2 data by trying its versions.
  Step(a_, true, 2, 0, {{1, 2}, 2, 1});
  Step(b_, true, 2, 0, {{1, 2}, 2, 1});
  load.TakeEncryptVersions();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(load.TakeEncryptVersions(), std::vector<uint32_t>{2});

  // 3. Rewrap everything stored so far (every replica seals with v2 from here on).
  std::vector<Stored> corpus = load.TakeCorpus();
  ASSERT_GT(corpus.size(), 20u);
  Rewrap(corpus, 2);

  // 4. Retire v1, one replica after the other.
  Step(a_, true, 2, 2, {{2}, 2, 2});
  Step(b_, true, 2, 2, {{2}, 2, 2});
  load.Stop();

  EXPECT_EQ(load.failures(), 0) << ::testing::PrintToString(load.first_failures());
  EXPECT_GT(load.calls(), 200);
  std::vector<Stored> later = load.TakeCorpus();
  corpus.insert(corpus.end(), later.begin(), later.end());
  for (const Stored& s : corpus) {
    ExpectOpens(a_.stub.get(), s);
    ExpectOpens(b_.stub.get(), s);
  }
  EXPECT_TRUE(a_.server.Alive() && b_.server.Alive());
  ::testing::Test::RecordProperty("calls", static_cast<int>(load.calls()));
  ::testing::Test::RecordProperty("stored", static_cast<int>(corpus.size()));
}

// Without the pinned phase, a replica that seals with v2 before the other has it loaded
// strands that data there: the failure the first phase prevents.
TEST_F(SmcryptdRotationTest, PromotingBeforeEveryReplicaHasTheVersionFailsCalls) {
  Load load({a_.stub.get(), b_.stub.get()});
  load.Start(4);
  Step(a_, true, 0, 0, {{1, 2}, 2, 1});  // v2 added and, with no primary file, primary
  load.Stop();
  EXPECT_GT(load.failures(), 0);
  for (const std::string& f : load.first_failures()) {
    EXPECT_THAT(f, ::testing::AnyOf(::testing::HasSubstr("Decrypt: 3 decryption failed"),
                                    ::testing::HasSubstr("Verify valid"),
                                    ::testing::HasSubstr("HybridDecrypt: 3 decryption failed")))
        << f;
  }
}

}  // namespace
}  // namespace smcrypt
