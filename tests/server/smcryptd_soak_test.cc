// Soak test against the real smcryptd (label slow, not in CI).
//
// Four client threads drive a fixed mix of RPCs — Hash, HashBatch, HashStream, Hmac, Sign,
// Verify, SignBatch, VerifyBatch, Encrypt, Decrypt, EncryptBatch, EncryptStream,
// DecryptStream, PublicKeyEncrypt/Decrypt, HybridEncrypt/Decrypt and their streams,
// GenerateRandom, keyring and inline keys, and calls that must fail (a wrong tag, an
// unknown key_id) — and check every answer (round trips give the plaintext back, a
// signature verifies). The run is a warm-up of SMCRYPT_SOAK_WARMUP_SECONDS (default 20)
// then SMCRYPT_SOAK_SECONDS (default 120). It asserts:
//   - zero unexpected results (any status or value other than the expected one);
//   - the server's resident memory (VmRSS) at the end exceeds that at the end of the
//     warm-up by less than 16 MiB. After the warm-up every allocator arena, gRPC pool
//     and cache (public-key LRU, keyring primitives) has reached its working size. The
//     mix runs ~1,700 RPCs/s on the 2-core CI machine (200,000 RPCs in 120 s; measured
//     growth +1.1 MiB, +4 %), so a leak of 84 bytes per RPC would reach the bound, and a
//     longer run scales the sensitivity with it.
//
// The longer manual run (an hour):
//   SMCRYPT_SOAK_SECONDS=3600 build/tests/server/smcryptd_soak_test
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"

// Under AddressSanitizer freed memory sits in ASan's quarantine (256 MiB by default)
// until it is full, so resident memory says nothing of a leak (LeakSanitizer checks
// that): the growth is reported, not asserted.
constexpr bool kUnderAsan = ::smcrypt::testing::kUnderAsan;

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using grpc::StatusCode;
using ::smcrypt::testing::Smcryptd;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

int64_t RssKiB(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

std::unique_ptr<grpc::ClientContext> Ctx() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return ctx;
}

v1::KeyRef Id(const std::string& id) {
  v1::KeyRef k;
  k.set_key_id(id);
  return k;
}
v1::KeyRef Inline(const std::string& bytes) {
  v1::KeyRef k;
  k.set_inline_key(bytes);
  return k;
}

// Tally counts RPCs per name and records the unexpected ones.
class Tally {
 public:
  void Ok(const char* rpc) {
    absl::MutexLock lock(&mu_);
    ++calls_[rpc];
  }
  // Check records `rpc` and, unless `good`, an unexpected result described by `what`.
  void Check(const char* rpc, bool good, const std::string& what) {
    absl::MutexLock lock(&mu_);
    ++calls_[rpc];
    if (good) return;
    ++unexpected_;
    if (examples_.size() < 10) examples_.push_back(absl::StrCat(rpc, ": ", what));
  }
  void Status(const char* rpc, const grpc::Status& s, StatusCode want = StatusCode::OK) {
    Check(rpc, s.error_code() == want,
          absl::StrCat("status ", s.error_code(), " (want ", want, "): ", s.error_message()));
  }
  uint64_t total() {
    absl::MutexLock lock(&mu_);
    uint64_t n = 0;
    for (const auto& [name, c] : calls_) n += c;
    return n;
  }
  std::string Summary() {
    absl::MutexLock lock(&mu_);
    std::string out;
    for (const auto& [name, c] : calls_) absl::StrAppend(&out, name, "=", c, " ");
    return out;
  }
  uint64_t unexpected() {
    absl::MutexLock lock(&mu_);
    return unexpected_;
  }
  std::vector<std::string> examples() {
    absl::MutexLock lock(&mu_);
    return examples_;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, uint64_t> calls_;
  uint64_t unexpected_ = 0;
  std::vector<std::string> examples_;
};

// Mix runs one round of every RPC kind.
void Mix(v1::CryptoService::Stub* stub, std::mt19937_64& rng, const std::string& sm2_inline,
         const std::string& sm2_inline_public, Tally* t) {
  auto bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  const std::string data = bytes(1 + rng() % 16384);
  {  // Hash, HashBatch, HashStream
    v1::HashRequest req;
    req.set_algorithm(rng() % 2 ? v1::SM3 : v1::SHA_256);
    req.set_data(data);
    v1::HashResponse resp;
    auto ctx = Ctx();
    grpc::Status s = stub->Hash(ctx.get(), req, &resp);
    t->Check("Hash", s.ok() && resp.digest().size() == 32, s.error_message());
    v1::HashBatchRequest breq;
    for (int i = 0; i < 16; ++i) {
      v1::HashRequest* item = breq.add_items();
      item->set_algorithm(v1::SM3);
      item->set_data(bytes(64 + i * 7));
    }
    v1::HashBatchResponse bresp;
    auto bctx = Ctx();
    s = stub->HashBatch(bctx.get(), breq, &bresp);
    t->Check("HashBatch", s.ok() && bresp.results_size() == 16, s.error_message());
    auto sctx = Ctx();
    v1::HashStreamResponse sresp;
    auto stream = stub->HashStream(sctx.get(), &sresp);
    v1::HashStreamRequest sreq;
    sreq.set_algorithm(v1::SM3);
    for (int i = 0; i < 4; ++i) {
      sreq.set_data(data);
      stream->Write(sreq);
    }
    stream->WritesDone();
    s = stream->Finish();
    t->Check("HashStream", s.ok() && sresp.total_bytes() == 4 * data.size(), s.error_message());
  }
  {  // Hmac with the keyring key, then its check
    v1::HmacRequest req;
    req.set_algorithm(v1::HMAC_SM3);
    *req.mutable_key() = Id("mac");
    req.set_data(data);
    v1::HmacResponse resp;
    auto ctx = Ctx();
    grpc::Status s = stub->Hmac(ctx.get(), req, &resp);
    t->Check("Hmac", s.ok() && resp.mac().size() == 32, s.error_message());
    req.set_expected_mac(resp.mac());
    auto ctx2 = Ctx();
    s = stub->Hmac(ctx2.get(), req, &resp);
    t->Check("HmacVerify", s.ok() && resp.valid(), s.error_message());
  }
  {  // Sign / Verify with the keyring key and an inline private key
    for (bool keyring : {true, false}) {
      // Keyring key, or an inline private key and its inline public key.
      const v1::KeyRef key = keyring ? Id("signing") : Inline(sm2_inline);
      const v1::KeyRef public_key = keyring ? Id("signing") : Inline(sm2_inline_public);
      v1::SignRequest req;
      req.set_algorithm(v1::SM2);
      *req.mutable_key() = key;
      req.set_data(data);
      v1::SignResponse resp;
      auto ctx = Ctx();
      grpc::Status s = stub->Sign(ctx.get(), req, &resp);
      t->Status("Sign", s);
      v1::VerifyRequest vreq;
      vreq.set_algorithm(v1::SM2);
      *vreq.mutable_key() = public_key;
      vreq.set_data(data);
      vreq.set_signature(resp.signature());
      v1::VerifyResponse vresp;
      auto vctx = Ctx();
      s = stub->Verify(vctx.get(), vreq, &vresp);
      t->Check("Verify", s.ok() && vresp.valid(), s.error_message());
    }
    v1::SignBatchRequest breq;
    v1::VerifyBatchRequest vbreq;
    for (int i = 0; i < 8; ++i) {
      v1::SignRequest* item = breq.add_items();
      item->set_algorithm(v1::SM2);
      *item->mutable_key() = Id("signing");
      item->set_data(absl::StrCat("item ", i));
    }
    v1::SignBatchResponse bresp;
    auto ctx = Ctx();
    grpc::Status s = stub->SignBatch(ctx.get(), breq, &bresp);
    t->Check("SignBatch", s.ok() && bresp.results_size() == 8, s.error_message());
    for (int i = 0; i < bresp.results_size(); ++i) {
      v1::VerifyRequest* item = vbreq.add_items();
      item->set_algorithm(v1::SM2);
      *item->mutable_key() = Id("signing");
      item->set_data(absl::StrCat("item ", i));
      item->set_signature(bresp.results(i).signature());
    }
    v1::VerifyBatchResponse vbresp;
    auto vctx = Ctx();
    s = stub->VerifyBatch(vctx.get(), vbreq, &vbresp);
    bool all = s.ok() && vbresp.results_size() == 8;
    for (const auto& r : vbresp.results()) all = all && r.valid();
    t->Check("VerifyBatch", all, s.error_message());
  }
  {  // Encrypt / Decrypt, keyring and inline, and a wrong tag (expected failure)
    for (const v1::KeyRef& key : {Id("data"), Inline(bytes(16))}) {
      v1::EncryptRequest req;
      req.set_algorithm(v1::SM4_GCM);
      *req.mutable_key() = key;
      req.set_plaintext(data);
      v1::EncryptResponse resp;
      auto ctx = Ctx();
      grpc::Status s = stub->Encrypt(ctx.get(), req, &resp);
      t->Status("Encrypt", s);
      v1::DecryptRequest dreq;
      dreq.set_algorithm(v1::SM4_GCM);
      *dreq.mutable_key() = key;
      dreq.set_nonce(resp.nonce());
      dreq.set_ciphertext(resp.ciphertext());
      dreq.set_tag(resp.tag());
      v1::DecryptResponse dresp;
      auto dctx = Ctx();
      s = stub->Decrypt(dctx.get(), dreq, &dresp);
      t->Check("Decrypt", s.ok() && dresp.plaintext() == data, s.error_message());
      std::string tag = resp.tag();
      if (!tag.empty()) tag[0] ^= 1;
      dreq.set_tag(tag);
      auto bctx = Ctx();
      t->Status("DecryptBadTag", stub->Decrypt(bctx.get(), dreq, &dresp),
                StatusCode::INVALID_ARGUMENT);
    }
    v1::EncryptBatchRequest breq;
    for (int i = 0; i < 16; ++i) {
      v1::EncryptRequest* item = breq.add_items();
      item->set_algorithm(i % 2 ? v1::SM4_CBC : v1::SM4_CTR);
      *item->mutable_key() = Id("data");
      item->set_plaintext(bytes(16 + i * 33));
    }
    v1::EncryptBatchResponse bresp;
    auto ctx = Ctx();
    grpc::Status s = stub->EncryptBatch(ctx.get(), breq, &bresp);
    bool all = s.ok() && bresp.results_size() == 16;
    for (const auto& r : bresp.results()) all = all && r.status().code() == 0;
    t->Check("EncryptBatch", all, s.error_message());
    v1::EncryptRequest missing;
    missing.set_algorithm(v1::SM4_GCM);
    *missing.mutable_key() = Id("no-such-key");
    v1::EncryptResponse mresp;
    auto mctx = Ctx();
    t->Status("EncryptUnknownKey", stub->Encrypt(mctx.get(), missing, &mresp),
              StatusCode::NOT_FOUND);
  }
  {  // EncryptStream → DecryptStream, 4 chunks of 16 KiB, SM4-GCM segments
    std::vector<v1::EncryptStreamResponse> segments;
    std::string nonce;
    {
      auto ctx = Ctx();
      auto stream = stub->EncryptStream(ctx.get());
      for (int i = 0; i < 4; ++i) {
        v1::EncryptStreamRequest req;
        if (i == 0) {
          req.mutable_params()->set_algorithm(v1::SM4_GCM);
          *req.mutable_params()->mutable_key() = Id("data");
        }
        req.set_plaintext(data.substr(0, 4096) + std::to_string(i));
        stream->Write(req);
      }
      stream->WritesDone();
      v1::EncryptStreamResponse r;
      while (stream->Read(&r)) {
        if (!r.nonce().empty()) nonce = r.nonce();
        segments.push_back(r);
      }
      t->Status("EncryptStream", stream->Finish());
    }
    auto ctx = Ctx();
    auto stream = stub->DecryptStream(ctx.get());
    bool first = true;
    for (const v1::EncryptStreamResponse& seg : segments) {
      if (seg.ciphertext().empty() && seg.tag().empty()) continue;
      v1::DecryptStreamRequest req;
      if (first) {
        req.mutable_params()->set_algorithm(v1::SM4_GCM);
        *req.mutable_params()->mutable_key() = Id("data");
        req.mutable_params()->set_nonce(nonce);
        first = false;
      }
      req.set_ciphertext(seg.ciphertext());
      req.set_tag(seg.tag());
      stream->Write(req);
    }
    stream->WritesDone();
    std::string plain;
    v1::DecryptStreamResponse r;
    while (stream->Read(&r)) plain += r.plaintext();
    grpc::Status s = stream->Finish();
    std::string want;
    for (int i = 0; i < 4; ++i) want += data.substr(0, 4096) + std::to_string(i);
    t->Check("DecryptStream", s.ok() && plain == want, s.error_message());
  }
  {  // PublicKeyEncrypt/Decrypt SM2, HybridEncrypt/Decrypt and their streams
    v1::PublicKeyEncryptRequest req;
    req.set_algorithm(v1::SM2);
    *req.mutable_key() = Id("signing");
    req.set_plaintext(data.substr(0, 256));
    v1::PublicKeyEncryptResponse resp;
    auto ctx = Ctx();
    grpc::Status s = stub->PublicKeyEncrypt(ctx.get(), req, &resp);
    t->Status("PublicKeyEncrypt", s);
    v1::PublicKeyDecryptRequest dreq;
    dreq.set_algorithm(v1::SM2);
    *dreq.mutable_key() = Id("signing");
    dreq.set_ciphertext(resp.ciphertext());
    v1::PublicKeyDecryptResponse dresp;
    auto dctx = Ctx();
    s = stub->PublicKeyDecrypt(dctx.get(), dreq, &dresp);
    t->Check("PublicKeyDecrypt", s.ok() && dresp.plaintext() == data.substr(0, 256),
             s.error_message());

    v1::HybridEncryptRequest hreq;
    hreq.set_algorithm(rng() % 2 ? v1::HPKE_SM2_SM3_SM4GCM : v1::HPKE_P256_SHA256_AES128GCM);
    *hreq.mutable_key() = Id(hreq.algorithm() == v1::HPKE_SM2_SM3_SM4GCM ? "signing" : "ec");
    hreq.set_plaintext(data);
    hreq.set_info("soak");
    v1::HybridEncryptResponse hresp;
    auto hctx = Ctx();
    s = stub->HybridEncrypt(hctx.get(), hreq, &hresp);
    t->Status("HybridEncrypt", s);
    v1::HybridDecryptRequest hdreq;
    hdreq.set_algorithm(hreq.algorithm());
    *hdreq.mutable_key() = hreq.key();
    hdreq.set_ciphertext(hresp.ciphertext());
    hdreq.set_info("soak");
    v1::HybridDecryptResponse hdresp;
    auto hdctx = Ctx();
    s = stub->HybridDecrypt(hdctx.get(), hdreq, &hdresp);
    t->Check("HybridDecrypt", s.ok() && hdresp.plaintext() == data, s.error_message());

    std::string sealed;
    {
      auto sctx = Ctx();
      auto stream = stub->HybridEncryptStream(sctx.get());
      for (int i = 0; i < 3; ++i) {
        v1::HybridEncryptStreamRequest r;
        if (i == 0) {
          r.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
          *r.mutable_params()->mutable_key() = Id("signing");
        }
        r.set_plaintext(data);
        stream->Write(r);
      }
      stream->WritesDone();
      v1::HybridEncryptStreamResponse r;
      while (stream->Read(&r)) sealed += r.ciphertext();
      t->Status("HybridEncryptStream", stream->Finish());
    }
    auto sctx = Ctx();
    auto stream = stub->HybridDecryptStream(sctx.get());
    v1::HybridDecryptStreamRequest r;
    r.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    *r.mutable_params()->mutable_key() = Id("signing");
    r.set_ciphertext(sealed);
    stream->Write(r);
    stream->WritesDone();
    std::string opened;
    v1::HybridDecryptStreamResponse out;
    while (stream->Read(&out)) opened += out.plaintext();
    s = stream->Finish();
    t->Check("HybridDecryptStream", s.ok() && opened == data + data + data, s.error_message());
  }
  {
    v1::GenerateRandomRequest req;
    req.set_length(64);
    v1::GenerateRandomResponse resp;
    auto ctx = Ctx();
    grpc::Status s = stub->GenerateRandom(ctx.get(), req, &resp);
    t->Check("GenerateRandom", s.ok() && resp.data().size() == 64, s.error_message());
  }
}

TEST(SoakTest, MixedRpcsWithoutErrorsOrMemoryGrowth) {
  const int warmup = EnvInt("SMCRYPT_SOAK_WARMUP_SECONDS", 20);
  const int seconds = EnvInt("SMCRYPT_SOAK_SECONDS", 120);
  const std::string dir = (fs::temp_directory_path() / absl::StrCat("smcrypt_soak_", getpid())).string();
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  auto write_key = [&](const std::string& name, const std::string& pem) {
    std::ofstream(dir + "/" + name, std::ios::binary) << pem;
    fs::permissions(dir + "/" + name, fs::perms::owner_read | fs::perms::owner_write);
  };
  absl::StatusOr<smcrypt::KeyPair> sm2 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kSm2);
  absl::StatusOr<smcrypt::KeyPair> p256 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kEcdsaP256);
  absl::StatusOr<smcrypt::KeyPair> inline_sm2 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kSm2);
  ASSERT_TRUE(sm2.ok() && p256.ok() && inline_sm2.ok());
  write_key("signing.pem", smcrypt::PemEncode("PRIVATE KEY", smcrypt::SecretDataAsStringView(
                                                                 sm2->private_key_der)));
  write_key("ec.pem", smcrypt::PemEncode("PRIVATE KEY",
                                         smcrypt::SecretDataAsStringView(p256->private_key_der)));
  write_key("data.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, 'd')));
  write_key("mac.pem", smcrypt::PemEncode("HMAC KEY", "soak mac key"));
  const std::string sm2_inline(smcrypt::SecretDataAsStringView(inline_sm2->private_key_der));

  Smcryptd server;
  ASSERT_TRUE(server.Start({"--keys_dir=" + dir, "--audit_log=none"})) << server.log();
  Tally tally;
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&, i] {
      auto stub = server.Stub();
      std::mt19937_64 rng(1234 + i);
      while (!stop.load()) Mix(stub.get(), rng, sm2_inline, inline_sm2->public_key_der, &tally);
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(warmup));
  const int64_t rss_warm = RssKiB(server.pid());
  const uint64_t calls_warm = tally.total();
  int64_t rss_max = rss_warm;
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < seconds; ++s) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    rss_max = std::max(rss_max, RssKiB(server.pid()));
    if (s % 30 == 29) {
      std::printf("soak %d/%d s: %llu RPCs, RSS %lld KiB\n", s + 1, seconds,
                  static_cast<unsigned long long>(tally.total()),
                  static_cast<long long>(RssKiB(server.pid())));
      std::fflush(stdout);
    }
  }
  const int64_t rss_end = RssKiB(server.pid());
  const uint64_t calls_run = tally.total() - calls_warm;
  const double run_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  for (auto& c : clients) c.join();
  fs::remove_all(dir);

  const int64_t growth_kib = rss_end - rss_warm;
  std::printf(
      "soak: %llu RPCs in %.0f s after a %d s warm-up (%.0f RPC/s); server RSS %lld KiB after "
      "warm-up, %lld KiB at the end (%+lld KiB, %+.1f%%), peak %lld KiB\nper RPC: %s\n",
      static_cast<unsigned long long>(calls_run), run_seconds, warmup, calls_run / run_seconds,
      static_cast<long long>(rss_warm), static_cast<long long>(rss_end),
      static_cast<long long>(growth_kib), 100.0 * growth_kib / rss_warm,
      static_cast<long long>(rss_max), tally.Summary().c_str());
  EXPECT_EQ(tally.unexpected(), 0u);
  for (const std::string& e : tally.examples()) ADD_FAILURE() << e;
  EXPECT_GT(calls_run, 0u);
  if (!kUnderAsan) {
    EXPECT_LT(growth_kib, 16 * 1024) << "resident memory grew by " << growth_kib << " KiB";
  }
  EXPECT_TRUE(server.Alive());
}

}  // namespace
