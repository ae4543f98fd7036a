// Dynamic batching through the public RPC API (label integration): many concurrent unary
// Sign, Verify, PublicKeyEncrypt, HybridEncrypt and Hash calls against the real smcryptd
// (one worker thread and --batch_max_delay, so calls are certainly batched together),
// mixing good calls with calls the access policy denies and malformed ones. Each call
// gets its own status and result (signatures verify, ciphertexts open to their own
// plaintext, digests equal OpenSSL's SM3), every Sign call has exactly one audit line,
// the batch histograms count every call, a call whose deadline passes in the queue ends
// DEADLINE_EXCEEDED without stopping the server, and GetServerInfo reports the settings.
#include <openssl/evp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"

namespace smcrypt::testing {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using grpc::StatusCode;

std::string OpenSslSm3(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sm3(), nullptr);
  return std::string(reinterpret_cast<char*>(md), len);
}

v1::KeyRef Id(const std::string& id) {
  v1::KeyRef k;
  k.set_key_id(id);
  return k;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class BatchingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/smcryptd_batching_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = new std::string(tmpl);
    const std::string keys = *dir_ + "/keys";
    fs::create_directory(keys);
    chmod(keys.c_str(), 0700);
    for (const char* id : {"sm2", "other"}) {
      const std::string path = keys + "/" + id + ".pem";
      ASSERT_EQ(std::system(("openssl genpkey -algorithm SM2 -out " + path + " 2>/dev/null").c_str()), 0);
      chmod(path.c_str(), 0600);
    }
    std::ofstream(*dir_ + "/policy.txt")
        << "allow hash,info * anonymous\n"
           "allow sign,verify,encrypt,decrypt sm2,@inline anonymous\n";
    server_ = new Smcryptd();
    ASSERT_TRUE(server_->Start({"--keys_dir=" + keys, "--worker_threads=1",
                                "--batch_max_delay=2ms", "--access_policy=" + *dir_ + "/policy.txt",
                                "--audit_log=" + *dir_ + "/audit.log"}))
        << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string* dir_;
  static Smcryptd* server_;
};
std::string* BatchingTest::dir_ = nullptr;
Smcryptd* BatchingTest::server_ = nullptr;

TEST_F(BatchingTest, ConcurrentCallsKeepTheirOwnStatusResultAndAuditLine) {
  constexpr int kThreads = 24, kRounds = 6;
  std::atomic<int> failures{0}, sign_calls{0}, sm2_signs{0}, verifies{0}, pkes{0}, hpkes{0},
      hashes{0};
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok && failures.fetch_add(1) < 5) ADD_FAILURE() << what;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      auto bytes = [&](size_t n) {
        std::string s(n, '\0');
        for (char& c : s) c = static_cast<char>(rng());
        return s;
      };
      auto stub = server_->Stub();
      for (int r = 0; r < kRounds; ++r) {
        const int variant = (t + r) % 4;
        const std::string data = bytes(rng() % 300);
        // Sign: good, denied key, malformed inline key, bad encoding value.
        v1::SignRequest sreq;
        sreq.set_algorithm(v1::SM2);
        sreq.set_data(data);
        *sreq.mutable_key() = Id("sm2");
        if (variant == 1) *sreq.mutable_key() = Id("other");
        if (variant == 2) sreq.mutable_key()->set_inline_key("not a key");
        if (variant == 3) sreq.mutable_options()->set_encoding(static_cast<v1::SignatureEncoding>(99));
        v1::SignResponse sres;
        grpc::ClientContext sctx;
        grpc::Status s = stub->Sign(&sctx, sreq, &sres);
        sign_calls.fetch_add(1);
        const StatusCode want_sign[] = {StatusCode::OK, StatusCode::PERMISSION_DENIED,
                                        StatusCode::INVALID_ARGUMENT, StatusCode::INVALID_ARGUMENT};
        expect(s.error_code() == want_sign[variant],
               absl::StrCat("Sign variant ", variant, ": ", s.error_code(), " ", s.error_message()));
        if (!s.ok()) continue;
        sm2_signs.fetch_add(1);
        // Verify: the signature, a tampered one, and a malformed one.
        for (int v = 0; v < 3; ++v) {
          v1::VerifyRequest vreq;
          vreq.set_algorithm(v1::SM2);
          *vreq.mutable_key() = Id("sm2");
          vreq.set_data(data);
          std::string sig = sres.signature();
          if (v == 1) sig[sig.size() - 1] ^= 0x01;
          if (v == 2) sig = "\x30\x02";
          vreq.set_signature(sig);
          v1::VerifyResponse vres;
          grpc::ClientContext vctx;
          grpc::Status vs = stub->Verify(&vctx, vreq, &vres);
          verifies.fetch_add(1);
          if (v == 2) {
            expect(vs.error_code() == StatusCode::INVALID_ARGUMENT, "Verify malformed");
          } else {
            expect(vs.ok() && vres.valid() == (v == 0),
                   absl::StrCat("Verify ", v, ": ", vs.error_message()));
          }
        }
        // PublicKeyEncrypt in a random format, opened with PublicKeyDecrypt.
        const v1::Sm2CiphertextFormat format =
            static_cast<v1::Sm2CiphertextFormat>(1 + rng() % 3);
        v1::PublicKeyEncryptRequest ereq;
        ereq.set_algorithm(v1::SM2);
        *ereq.mutable_key() = Id("sm2");
        ereq.set_plaintext(data);
        ereq.set_sm2_format(format);
        v1::PublicKeyEncryptResponse eres;
        grpc::ClientContext ectx;
        grpc::Status es = stub->PublicKeyEncrypt(&ectx, ereq, &eres);
        pkes.fetch_add(1);
        expect(es.ok(), "PublicKeyEncrypt: " + es.error_message());
        if (es.ok()) {
          v1::PublicKeyDecryptRequest dreq;
          dreq.set_algorithm(v1::SM2);
          *dreq.mutable_key() = Id("sm2");
          dreq.set_ciphertext(eres.ciphertext());
          dreq.set_sm2_format(format);
          v1::PublicKeyDecryptResponse dres;
          grpc::ClientContext dctx;
          grpc::Status ds = stub->PublicKeyDecrypt(&dctx, dreq, &dres);
          expect(ds.ok() && dres.plaintext() == data, "PublicKeyDecrypt");
        }
        // HybridEncrypt with its own info, opened with HybridDecrypt.
        const std::string info = absl::StrCat("thread ", t, " round ", r);
        v1::HybridEncryptRequest hreq;
        hreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
        *hreq.mutable_key() = Id(variant == 1 ? "other" : "sm2");
        hreq.set_plaintext(data);
        hreq.set_info(info);
        v1::HybridEncryptResponse hres;
        grpc::ClientContext hctx;
        grpc::Status hs = stub->HybridEncrypt(&hctx, hreq, &hres);
        hpkes.fetch_add(1);
        expect(hs.ok(), "HybridEncrypt: " + hs.error_message());
        if (hs.ok()) {
          v1::HybridDecryptRequest oreq;
          oreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
          *oreq.mutable_key() = Id("sm2");
          oreq.set_ciphertext(hres.ciphertext());
          oreq.set_info(info);
          v1::HybridDecryptResponse ores;
          grpc::ClientContext octx;
          grpc::Status os = stub->HybridDecrypt(&octx, oreq, &ores);
          expect(os.ok() && ores.plaintext() == data, "HybridDecrypt: " + os.error_message());
        }
        // Hash of up to 4 KiB (the batched sizes) and one larger.
        const std::string hdata = bytes(r == 5 ? 5000 : rng() % 4097);
        v1::HashRequest qreq;
        qreq.set_algorithm(v1::SM3);
        qreq.set_data(hdata);
        v1::HashResponse qres;
        grpc::ClientContext qctx;
        grpc::Status qs = stub->Hash(&qctx, qreq, &qres);
        hashes.fetch_add(1);
        expect(qs.ok() && qres.digest() == OpenSslSm3(hdata), "Hash");
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(sm2_signs.load(), 0);

  // One audit line per Sign call: the handler's for allowed calls, the policy's for denials.
  // The writer thread writes them shortly after the calls (audit_log.h, "Writing").
  int sign_lines = 0;
  for (int i = 0; i < 1000 && sign_lines != sign_calls.load(); ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    sign_lines = 0;
    for (absl::string_view line : absl::StrSplit(ReadAll(*dir_ + "/audit.log"), '\n')) {
      if (absl::StrContains(line, "\"method\":\"Sign\"")) ++sign_lines;
    }
  }
  EXPECT_EQ(sign_lines, sign_calls.load());

  // The histograms count every batched call; with one worker and a 2 ms delay, batches
  // hold more than one call.
  const std::string m = HttpGet(server_->metrics_port(), "/metrics");
  auto metric = [&](const std::string& series) { return MetricValue(m, series); };
  const double sign_sum = metric("smcrypt_batch_size_sum{algorithm=\"SM2\",grpc_method=\"Sign\"}");
  const double sign_count = metric("smcrypt_batch_size_count{algorithm=\"SM2\",grpc_method=\"Sign\"}");
  EXPECT_EQ(sign_sum, sign_calls.load());
  EXPECT_LT(sign_count, sign_sum);
  EXPECT_EQ(metric("smcrypt_batch_size_sum{algorithm=\"SM2\",grpc_method=\"Verify\"}"), verifies.load());
  EXPECT_EQ(metric("smcrypt_batch_size_sum{algorithm=\"SM2\",grpc_method=\"PublicKeyEncrypt\"}"),
            pkes.load());
  EXPECT_EQ(metric("smcrypt_batch_size_sum{algorithm=\"HPKE-SM2-SM3-SM4GCM\",grpc_method=\"HybridEncrypt\"}"),
            hpkes.load());
  // Hashes over 4 KiB run on their own.
  const double hashed = metric("smcrypt_batch_size_sum{algorithm=\"SM3\",grpc_method=\"Hash\"}");
  EXPECT_LT(hashed, hashes.load());
  EXPECT_GT(hashed, 0);
  EXPECT_EQ(metric("smcrypt_batch_queue_seconds_count{algorithm=\"SM2\",grpc_method=\"Sign\"}"),
            sign_calls.load());
}

TEST_F(BatchingTest, DeadlinePassedInTheQueueEndsOnlyThatCall) {
  auto stub = server_->Stub();
  int deadline_exceeded = 0;
  for (int i = 0; i < 20; ++i) {
    v1::SignRequest req;
    req.set_algorithm(v1::SM2);
    *req.mutable_key() = Id("sm2");
    req.set_data("m");
    v1::SignResponse res;
    grpc::ClientContext ctx;
    // Shorter than --batch_max_delay: the lone call waits in its batch past the deadline.
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::microseconds(500));
    grpc::Status s = stub->Sign(&ctx, req, &res);
    if (s.error_code() == StatusCode::DEADLINE_EXCEEDED) ++deadline_exceeded;
    EXPECT_TRUE(s.ok() || s.error_code() == StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  }
  EXPECT_GT(deadline_exceeded, 0);
  v1::SignRequest req;
  req.set_algorithm(v1::SM2);
  *req.mutable_key() = Id("sm2");
  req.set_data("m");
  v1::SignResponse res;
  grpc::ClientContext ctx;
  EXPECT_TRUE(stub->Sign(&ctx, req, &res).ok());
  EXPECT_TRUE(server_->Alive());
}

TEST_F(BatchingTest, ServerInfoReportsTheSettings) {
  auto stub = server_->Stub();
  v1::GetServerInfoRequest req;
  v1::GetServerInfoResponse res;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->GetServerInfo(&ctx, req, &res).ok());
  EXPECT_TRUE(res.batching().enabled());
  EXPECT_EQ(res.batching().max_batch_size(), 64u);
  EXPECT_EQ(res.batching().max_delay_micros(), 2000u);
  std::vector<std::string> ops(res.batching().operations().begin(),
                               res.batching().operations().end());
  EXPECT_EQ(ops, (std::vector<std::string>{"Hash(SM3)", "Sign(SM2)", "Verify(SM2)",
                                           "PublicKeyEncrypt(SM2)",
                                           "HybridEncrypt(HPKE-SM2-SM3-SM4GCM)"}));
  EXPECT_EQ(res.max_inflight_bytes(), 128u << 20);
}

TEST(BatchingOffTest, EveryCallRunsOnItsOwn) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--batching=false", "--audit_log=none"})) << server.log();
  auto stub = server.Stub();
  v1::GetServerInfoRequest ireq;
  v1::GetServerInfoResponse ires;
  grpc::ClientContext ictx;
  ASSERT_TRUE(stub->GetServerInfo(&ictx, ireq, &ires).ok());
  EXPECT_FALSE(ires.batching().enabled());
  EXPECT_EQ(ires.batching().operations_size(), 0);
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse res;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->Hash(&ctx, req, &res).ok());
  EXPECT_EQ(res.digest(), OpenSslSm3("abc"));
  const std::string m = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(m, "smcrypt_batch_size_count{algorithm=\"SM3\",grpc_method=\"Hash\"}"), 0);
  EXPECT_NE(server.log().find("dynamic batching: off"), std::string::npos) << server.log();
}

TEST(BatchingFlagsTest, OutOfRangeSettingsStopStartUp) {
  for (const char* flag : {"--batch_max_size=0", "--batch_max_size=5000", "--batch_max_delay=11ms",
                           "--batch_max_delay=-1ms"}) {
    Smcryptd server;
    EXPECT_FALSE(server.Start({flag})) << flag;
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    EXPECT_NE(server.log().find(name + " must be"), std::string::npos)
        << flag << ": " << server.log();
  }
}

}  // namespace
}  // namespace smcrypt::testing
