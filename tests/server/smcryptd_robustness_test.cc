// Robustness tests against the real smcryptd binary on a loopback port (label
// integration): malformed requests to every RPC (unset and unknown enum values, empty
// keys, oversized messages, oversized batches), streams used out of order (data before
// params, params twice, nothing at all, early half-close, cancellation), tiny deadlines,
// and many concurrent clients mixing valid and invalid calls. After each, the server must
// still answer, report SERVING and serve /metrics; and it never logs key bytes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/sm2.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/test_util.h"

namespace {

namespace v1 = ::smcrypt::v1;
using grpc::StatusCode;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::Smcryptd;

constexpr uint64_t kMaxMessageBytes = 256 * 1024;

std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 30) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return ctx;
}

// Keys sent inline; the test checks that none of them appears in the server log.
const std::string kSm4Key = smcrypt::testing::HexToBytes("0123456789abcdeffedcba9876543210");
const std::string kHmacKey = "inline hmac key bytes 0x5eC12e7";
// GB/T 32918.5 example private key.
const std::string kSm2D =
    smcrypt::testing::HexToBytes("3945208F7B2144B13F36E38AC6D39F95889393692860B51A42FB81EF4DF7C5B8");

std::string Sm2Pkcs8() {
  static const std::string der = std::string(smcrypt::SecretDataAsStringView(
      smcrypt::Sm2PrivateKeyToPkcs8(*smcrypt::Sm2PrivateKey::FromScalar(kSm2D))));
  return der;
}

class SmcryptdRobustnessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new Smcryptd();
    ASSERT_TRUE(server_->Start({absl::StrCat("--max_message_bytes=", kMaxMessageBytes)}))
        << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  // ExpectHealthy checks that the process is alive, health is SERVING, a real call
  // works and /metrics answers.
  static void ExpectHealthy() {
    ASSERT_TRUE(server_->Alive()) << server_->log();
    auto health = grpc::health::v1::Health::NewStub(server_->Channel());
    grpc::health::v1::HealthCheckRequest hreq;
    grpc::health::v1::HealthCheckResponse hresp;
    auto ctx = Ctx();
    ASSERT_TRUE(health->Check(ctx.get(), hreq, &hresp).ok());
    EXPECT_EQ(hresp.status(), grpc::health::v1::HealthCheckResponse::SERVING);
    v1::HashRequest req;
    req.set_algorithm(v1::SM3);
    req.set_data("abc");
    v1::HashResponse resp;
    auto ctx2 = Ctx();
    ASSERT_TRUE(server_->Stub()->Hash(ctx2.get(), req, &resp).ok());
    EXPECT_EQ(smcrypt::testing::BytesToHex(resp.digest()),
              "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
    const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
    EXPECT_NE(metrics.find("200 OK"), std::string::npos);
    EXPECT_NE(metrics.find("grpc_server_handled_total"), std::string::npos);
  }

  static Smcryptd* server_;
};
Smcryptd* SmcryptdRobustnessTest::server_ = nullptr;

v1::KeyRef Inline(const std::string& key) {
  v1::KeyRef ref;
  ref.set_inline_key(key);
  return ref;
}

// Unary calls one RPC with a request and returns the status code.
template <typename Req, typename Resp>
using UnaryFn = grpc::Status (v1::CryptoService::Stub::*)(grpc::ClientContext*, const Req&, Resp*);

template <typename Req, typename Resp>
StatusCode Call(v1::CryptoService::Stub* stub, UnaryFn<Req, Resp> fn, const Req& req) {
  Resp resp;
  auto ctx = Ctx();
  return (stub->*fn)(ctx.get(), req, &resp).error_code();
}

TEST_F(SmcryptdRobustnessTest, UnsetAndUnknownEnumsAndEmptyKeysAreInvalidArgument) {
  auto stub = server_->Stub();
  for (int alg : {0, 31, 999, -1}) {
    SCOPED_TRACE(absl::StrCat("algorithm ", alg));
    const auto a = static_cast<v1::Algorithm>(alg);
    v1::HashRequest hash;
    hash.set_algorithm(a);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Hash, hash), StatusCode::INVALID_ARGUMENT);
    v1::HmacRequest hmac;
    hmac.set_algorithm(a);
    *hmac.mutable_key() = Inline(kHmacKey);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Hmac, hmac), StatusCode::INVALID_ARGUMENT);
    v1::SignRequest sign;
    sign.set_algorithm(a);
    *sign.mutable_key() = Inline(kSm2D);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Sign, sign), StatusCode::INVALID_ARGUMENT);
    v1::VerifyRequest verify;
    verify.set_algorithm(a);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Verify, verify),
              StatusCode::INVALID_ARGUMENT);
    v1::EncryptRequest enc;
    enc.set_algorithm(a);
    *enc.mutable_key() = Inline(kSm4Key);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Encrypt, enc),
              StatusCode::INVALID_ARGUMENT);
    v1::DecryptRequest dec;
    dec.set_algorithm(a);
    *dec.mutable_key() = Inline(kSm4Key);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Decrypt, dec),
              StatusCode::INVALID_ARGUMENT);
    v1::PublicKeyEncryptRequest pke;
    pke.set_algorithm(a);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::PublicKeyEncrypt, pke),
              StatusCode::INVALID_ARGUMENT);
    v1::PublicKeyDecryptRequest pkd;
    pkd.set_algorithm(a);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::PublicKeyDecrypt, pkd),
              StatusCode::INVALID_ARGUMENT);
    v1::GenerateKeyPairRequest gen;
    gen.set_algorithm(a);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::GenerateKeyPair, gen),
              StatusCode::INVALID_ARGUMENT);
    v1::GetPublicKeyRequest get;
    get.set_algorithm(a);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::GetPublicKey, get),
              StatusCode::INVALID_ARGUMENT);
  }
  // Unknown values of the other enums, and missing or empty keys.
  v1::SignRequest sign;
  sign.set_algorithm(v1::SM2);
  *sign.mutable_key() = Inline(kSm2D);
  sign.mutable_options()->set_encoding(static_cast<v1::SignatureEncoding>(77));
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Sign, sign), StatusCode::INVALID_ARGUMENT);
  v1::EncryptRequest enc;
  enc.set_algorithm(v1::SM4_CBC);
  *enc.mutable_key() = Inline(kSm4Key);
  enc.set_padding(static_cast<v1::Padding>(9));
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Encrypt, enc), StatusCode::INVALID_ARGUMENT);
  v1::PublicKeyEncryptRequest pke;
  pke.set_algorithm(v1::SM2);
  pke.set_sm2_format(static_cast<v1::Sm2CiphertextFormat>(12));
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::PublicKeyEncrypt, pke),
            StatusCode::INVALID_ARGUMENT);
  for (v1::Algorithm a : {v1::SM2, v1::ECDSA_P256, v1::RSA_2048_PSS, v1::HMAC_SM3, v1::SM4_GCM}) {
    SCOPED_TRACE(v1::Algorithm_Name(a));
    for (bool set_empty : {false, true}) {
      v1::SignRequest s;
      s.set_algorithm(a);
      s.set_data("m");
      if (set_empty) *s.mutable_key() = Inline("");
      EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Sign, s), StatusCode::INVALID_ARGUMENT);
      v1::HmacRequest h;
      h.set_algorithm(a);
      if (set_empty) *h.mutable_key() = Inline("");
      // An empty inline HMAC key is a key (RFC 2104 §2); every other case here is not.
      EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Hmac, h),
                a == v1::HMAC_SM3 && set_empty ? StatusCode::OK : StatusCode::INVALID_ARGUMENT);
      v1::EncryptRequest e;
      e.set_algorithm(a);
      if (set_empty) *e.mutable_key() = Inline("");
      EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Encrypt, e),
                StatusCode::INVALID_ARGUMENT);
    }
  }
  v1::SignRequest unknown_id;
  unknown_id.set_algorithm(v1::SM2);
  unknown_id.mutable_key()->set_key_id("no-such-key");
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Sign, unknown_id), StatusCode::NOT_FOUND);
  v1::GenerateRandomRequest rnd;
  for (uint32_t len : {0u, (1u << 20) + 1, 0xffffffffu}) {
    rnd.set_length(len);
    EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::GenerateRandom, rnd),
              StatusCode::INVALID_ARGUMENT)
        << len;
  }
  ExpectHealthy();
}

TEST_F(SmcryptdRobustnessTest, OversizedMessagesAndBatches) {
  auto stub = server_->Stub();
  v1::HashRequest big;
  big.set_algorithm(v1::SM3);
  big.set_data(std::string(kMaxMessageBytes + 1, 'x'));
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Hash, big), StatusCode::RESOURCE_EXHAUSTED);
  v1::EncryptRequest enc;
  enc.set_algorithm(v1::SM4_GCM);
  *enc.mutable_key() = Inline(kSm4Key);
  enc.set_plaintext(std::string(2 * kMaxMessageBytes, 'p'));
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Encrypt, enc),
            StatusCode::RESOURCE_EXHAUSTED);
  // A stream message over the limit ends the stream with RESOURCE_EXHAUSTED.
  {
    auto ctx = Ctx();
    v1::HashStreamResponse resp;
    auto writer = stub->HashStream(ctx.get(), &resp);
    v1::HashStreamRequest req;
    req.set_algorithm(v1::SM3);
    req.set_data(std::string(kMaxMessageBytes + 1, 'y'));
    writer->Write(req);
    writer->WritesDone();
    EXPECT_EQ(writer->Finish().error_code(), StatusCode::RESOURCE_EXHAUSTED);
  }
  // Batches: 65,536 items is the limit; one more is INVALID_ARGUMENT. (Items without an
  // algorithm are 2 bytes on the wire, so the batch stays under --max_message_bytes; each
  // gets its own INVALID_ARGUMENT status.)
  v1::HashBatchRequest batch;
  for (int i = 0; i < 65536; ++i) batch.add_items();
  batch.mutable_items(65535)->set_algorithm(v1::SM3);
  {
    v1::HashBatchResponse resp;
    auto ctx = Ctx(60);
    ASSERT_TRUE(stub->HashBatch(ctx.get(), batch, &resp).ok());
    ASSERT_EQ(resp.results_size(), 65536);
    EXPECT_EQ(resp.results(0).status().code(), static_cast<int>(StatusCode::INVALID_ARGUMENT));
    EXPECT_EQ(resp.results(65535).status().code(), 0);
    EXPECT_EQ(resp.results(65535).digest().size(), 32u);
  }
  batch.add_items()->set_algorithm(v1::SM3);
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::HashBatch, batch),
            StatusCode::INVALID_ARGUMENT);
  v1::VerifyBatchRequest vbatch;
  for (int i = 0; i < 65537; ++i) vbatch.add_items();
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::VerifyBatch, vbatch),
            StatusCode::INVALID_ARGUMENT);
  // Every bad item gets its own status; the good ones are served.
  v1::EncryptBatchRequest ebatch;
  for (int i = 0; i < 100; ++i) {
    v1::EncryptRequest* item = ebatch.add_items();
    item->set_algorithm(i % 2 == 0 ? v1::SM4_GCM : static_cast<v1::Algorithm>(500 + i));
    *item->mutable_key() = Inline(kSm4Key);
    item->set_plaintext("p");
  }
  v1::EncryptBatchResponse eresp;
  auto ctx = Ctx();
  ASSERT_TRUE(stub->EncryptBatch(ctx.get(), ebatch, &eresp).ok());
  ASSERT_EQ(eresp.results_size(), 100);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(eresp.results(i).status().code(),
              i % 2 == 0 ? 0 : static_cast<int>(StatusCode::INVALID_ARGUMENT))
        << i;
  }
  ExpectHealthy();
}

// RunEncryptStream writes `msgs` (then half-closes unless `cancel_after` ≥ 0, in which
// case it cancels after that many writes) and returns the final status and the number
// of responses read.
std::pair<StatusCode, int> RunEncryptStream(v1::CryptoService::Stub* stub,
                                            const std::vector<v1::EncryptStreamRequest>& msgs,
                                            int cancel_after = -1) {
  auto ctx = Ctx();
  auto stream = stub->EncryptStream(ctx.get());
  int written = 0;
  for (const auto& m : msgs) {
    if (cancel_after >= 0 && written == cancel_after) break;
    if (!stream->Write(m)) break;
    ++written;
  }
  if (cancel_after >= 0) {
    ctx->TryCancel();
  } else {
    stream->WritesDone();
  }
  int reads = 0;
  v1::EncryptStreamResponse resp;
  while (stream->Read(&resp)) ++reads;
  return {stream->Finish().error_code(), reads};
}

TEST_F(SmcryptdRobustnessTest, StreamsUsedOutOfOrder) {
  auto stub = server_->Stub();
  v1::EncryptStreamRequest params;
  params.mutable_params()->set_algorithm(v1::SM4_GCM);
  *params.mutable_params()->mutable_key() = Inline(kSm4Key);
  v1::EncryptStreamRequest data;
  data.set_plaintext("chunk of plaintext");

  // Nothing at all, data before params, params twice: INVALID_ARGUMENT.
  EXPECT_EQ(RunEncryptStream(stub.get(), {}).first, StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(RunEncryptStream(stub.get(), {data, params}).first, StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(RunEncryptStream(stub.get(), {params, data, params}).first,
            StatusCode::INVALID_ARGUMENT);
  v1::EncryptStreamRequest bad_alg = params;
  bad_alg.mutable_params()->set_algorithm(static_cast<v1::Algorithm>(4242));
  EXPECT_EQ(RunEncryptStream(stub.get(), {bad_alg, data}).first, StatusCode::INVALID_ARGUMENT);
  v1::EncryptStreamRequest no_key = params;
  no_key.mutable_params()->clear_key();
  EXPECT_EQ(RunEncryptStream(stub.get(), {no_key}).first, StatusCode::INVALID_ARGUMENT);
  // Params then an early half-close: the nonce and the final (empty) segment.
  {
    auto [code, reads] = RunEncryptStream(stub.get(), {params});
    EXPECT_EQ(code, StatusCode::OK);
    EXPECT_EQ(reads, 2);
  }
  // Cancelled mid-stream, for every mode.
  for (v1::Algorithm a : {v1::SM4_GCM, v1::SM4_CCM, v1::SM4_CBC, v1::SM4_CTR, v1::AES_128_GCM}) {
    v1::EncryptStreamRequest p = params;
    p.mutable_params()->set_algorithm(a);
    if (a == v1::AES_128_GCM) *p.mutable_params()->mutable_key() = Inline(std::string(16, 'k'));
    std::vector<v1::EncryptStreamRequest> msgs = {p};
    for (int i = 0; i < 20; ++i) msgs.push_back(data);
    for (int cancel_after : {0, 1, 5}) {
      EXPECT_EQ(RunEncryptStream(stub.get(), msgs, cancel_after).first, StatusCode::CANCELLED);
    }
  }

  // DecryptStream: nothing, data before params, params twice, a segment without a tag.
  auto decrypt = [&](const std::vector<v1::DecryptStreamRequest>& msgs) {
    auto ctx = Ctx();
    auto stream = stub->DecryptStream(ctx.get());
    for (const auto& m : msgs) {
      if (!stream->Write(m)) break;
    }
    stream->WritesDone();
    v1::DecryptStreamResponse resp;
    while (stream->Read(&resp)) {
    }
    return stream->Finish().error_code();
  };
  v1::DecryptStreamRequest dparams;
  dparams.mutable_params()->set_algorithm(v1::SM4_GCM);
  *dparams.mutable_params()->mutable_key() = Inline(kSm4Key);
  dparams.mutable_params()->set_nonce(std::string(12, 'n'));
  v1::DecryptStreamRequest ddata;
  ddata.set_ciphertext("0123456789abcdef");
  ddata.set_tag(std::string(16, 't'));
  v1::DecryptStreamRequest no_tag;
  no_tag.set_ciphertext("0123456789abcdef");
  EXPECT_EQ(decrypt({}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(decrypt({ddata}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(decrypt({dparams, dparams}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(decrypt({dparams}), StatusCode::INVALID_ARGUMENT);  // no segment at all
  EXPECT_EQ(decrypt({dparams, no_tag}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(decrypt({dparams, ddata}), StatusCode::INVALID_ARGUMENT);  // "decryption failed"
  v1::DecryptStreamRequest short_nonce = dparams;
  short_nonce.mutable_params()->set_nonce("short");
  EXPECT_EQ(decrypt({short_nonce, ddata}), StatusCode::INVALID_ARGUMENT);
  v1::DecryptStreamRequest cbc = dparams;
  cbc.mutable_params()->set_algorithm(v1::SM4_CBC);
  cbc.mutable_params()->set_nonce(std::string(16, 'i'));
  v1::DecryptStreamRequest odd;
  odd.set_ciphertext("seventeen bytes!!");
  EXPECT_EQ(decrypt({cbc, odd}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(decrypt({cbc}), StatusCode::INVALID_ARGUMENT);  // PKCS#7 needs a block

  // HashStream: nothing, unknown algorithm, algorithm changed.
  auto hash = [&](const std::vector<v1::HashStreamRequest>& msgs) {
    auto ctx = Ctx();
    v1::HashStreamResponse resp;
    auto writer = stub->HashStream(ctx.get(), &resp);
    for (const auto& m : msgs) {
      if (!writer->Write(m)) break;
    }
    writer->WritesDone();
    return writer->Finish().error_code();
  };
  v1::HashStreamRequest h1, h2, hbad;
  h1.set_algorithm(v1::SM3);
  h2.set_algorithm(v1::SHA_256);
  hbad.set_algorithm(static_cast<v1::Algorithm>(31337));
  EXPECT_EQ(hash({}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(hash({hbad}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(hash({h1, h2}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(hash({h1, h1}), StatusCode::OK);

  // Hybrid streams: nothing, data before params, params twice, garbage after params.
  auto hybrid_decrypt = [&](const std::vector<v1::HybridDecryptStreamRequest>& msgs) {
    auto ctx = Ctx();
    auto stream = stub->HybridDecryptStream(ctx.get());
    for (const auto& m : msgs) {
      if (!stream->Write(m)) break;
    }
    stream->WritesDone();
    v1::HybridDecryptStreamResponse resp;
    while (stream->Read(&resp)) {
    }
    return stream->Finish().error_code();
  };
  {
    auto ctx = Ctx();
    auto stream = stub->HybridEncryptStream(ctx.get());
    stream->WritesDone();
    v1::HybridEncryptStreamResponse resp;
    while (stream->Read(&resp)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), StatusCode::INVALID_ARGUMENT);
  }
  v1::HybridDecryptStreamRequest hparams;
  hparams.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
  *hparams.mutable_params()->mutable_key() = Inline(kSm2D);  // raw 32-byte scalar
  v1::HybridDecryptStreamRequest hgarbage;
  hgarbage.set_ciphertext(std::string(200, '\x01'));
  EXPECT_EQ(hybrid_decrypt({}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(hybrid_decrypt({hgarbage}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(hybrid_decrypt({hparams, hparams}), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(hybrid_decrypt({hparams}), StatusCode::INVALID_ARGUMENT);  // no header, truncated
  EXPECT_EQ(hybrid_decrypt({hparams, hgarbage}), StatusCode::INVALID_ARGUMENT);
  ExpectHealthy();
}

TEST_F(SmcryptdRobustnessTest, TinyDeadlinesAndCancellation) {
  auto stub = server_->Stub();
  v1::SignRequest sign;
  sign.set_algorithm(v1::SM2);
  *sign.mutable_key() = Inline(kSm2D);
  sign.set_data("m");
  for (int micros : {0, 1, 50, 500}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::microseconds(micros));
    v1::SignResponse resp;
    const StatusCode code = stub->Sign(&ctx, sign, &resp).error_code();
    EXPECT_TRUE(code == StatusCode::DEADLINE_EXCEEDED || code == StatusCode::OK) << code;
  }
  // Cancelled unary calls racing with the server.
  for (int i = 0; i < 50; ++i) {
    grpc::ClientContext ctx;
    v1::GenerateKeyPairRequest req;
    req.set_algorithm(v1::SM2);
    v1::GenerateKeyPairResponse resp;
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(i * 20));
      ctx.TryCancel();
    });
    const StatusCode code = stub->GenerateKeyPair(&ctx, req, &resp).error_code();
    canceller.join();
    EXPECT_TRUE(code == StatusCode::CANCELLED || code == StatusCode::OK) << code;
  }
  // A stream abandoned with a deadline.
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    v1::HashStreamResponse resp;
    auto writer = stub->HashStream(&ctx, &resp);
    v1::HashStreamRequest req;
    req.set_algorithm(v1::SM3);
    writer->Write(req);
    EXPECT_EQ(writer->Finish().error_code(), StatusCode::DEADLINE_EXCEEDED);
  }
  ExpectHealthy();
}

// Many clients at once, each mixing valid calls with invalid ones; every answer must be
// the one that request deserves, and the server stays healthy. Bounded in count (50
// threads × 200 calls) and in time (each call has a 30 s deadline).
TEST_F(SmcryptdRobustnessTest, ConcurrentClientsMixingValidAndInvalidCalls) {
  constexpr int kThreads = 50;
  constexpr int kCallsPerThread = 200;
  std::atomic<int> wrong{0};
  std::atomic<int> done{0};
  absl::Mutex mu;
  std::string first_error;
  const uint64_t seed = smcrypt::testing::TestSeed();
  std::printf("seed %llu\n", static_cast<unsigned long long>(seed));
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto stub = server_->Stub();  // one channel per client
      std::mt19937_64 rng(seed + t);
      for (int i = 0; i < kCallsPerThread; ++i) {
        StatusCode want = StatusCode::OK;
        StatusCode got = StatusCode::OK;
        auto ctx = Ctx();
        switch (rng() % 8) {
          case 0: {  // valid hash
            v1::HashRequest req;
            req.set_algorithm(v1::SM3);
            req.set_data(smcrypt::testing::RandomBytes(rng, rng() % 2048));
            v1::HashResponse resp;
            got = stub->Hash(ctx.get(), req, &resp).error_code();
            break;
          }
          case 1: {  // unknown algorithm
            v1::HashRequest req;
            req.set_algorithm(static_cast<v1::Algorithm>(100 + rng() % 1000));
            v1::HashResponse resp;
            got = stub->Hash(ctx.get(), req, &resp).error_code();
            want = StatusCode::INVALID_ARGUMENT;
            break;
          }
          case 2: {  // valid SM2 signature
            v1::SignRequest req;
            req.set_algorithm(v1::SM2);
            *req.mutable_key() = Inline(kSm2D);
            req.set_data("message");
            v1::SignResponse resp;
            got = stub->Sign(ctx.get(), req, &resp).error_code();
            break;
          }
          case 3: {  // garbage signature: well answered with valid = false or INVALID_ARGUMENT
            v1::VerifyRequest req;
            req.set_algorithm(v1::SM2);
            *req.mutable_key() = Inline(
                smcrypt::testing::HexToBytes("04"
                                             "09F9DF311E5421A150DD7D161E4BC5C672179FAD1833FC076BB08FF356F35020"
                                             "CCEA490CE26775A52DC6EA718CC1AA600AED05FBF35E084A6632F6072DA9AD13"));
            req.set_data("message");
            req.set_signature(smcrypt::testing::RandomBytes(rng, rng() % 80));
            v1::VerifyResponse resp;
            got = stub->Verify(ctx.get(), req, &resp).error_code();
            if (got == StatusCode::OK && resp.valid()) got = StatusCode::UNKNOWN;
            if (got == StatusCode::INVALID_ARGUMENT) got = StatusCode::OK;
            break;
          }
          case 4: {  // tampered GCM ciphertext
            v1::DecryptRequest req;
            req.set_algorithm(v1::SM4_GCM);
            *req.mutable_key() = Inline(kSm4Key);
            req.set_nonce(std::string(12, 'n'));
            req.set_ciphertext(smcrypt::testing::RandomBytes(rng, rng() % 64));
            req.set_tag(smcrypt::testing::RandomBytes(rng, 16));
            v1::DecryptResponse resp;
            const grpc::Status s = stub->Decrypt(ctx.get(), req, &resp);
            got = s.error_code();
            if (s.error_message() != "decryption failed") got = StatusCode::UNKNOWN;
            want = StatusCode::INVALID_ARGUMENT;
            break;
          }
          case 5: {  // wrong-size key
            v1::EncryptRequest req;
            req.set_algorithm(v1::SM4_CBC);
            *req.mutable_key() = Inline(smcrypt::testing::RandomBytes(rng, 1 + rng() % 15));
            v1::EncryptResponse resp;
            got = stub->Encrypt(ctx.get(), req, &resp).error_code();
            want = StatusCode::INVALID_ARGUMENT;
            break;
          }
          case 6: {  // a short stream
            auto stream = stub->EncryptStream(ctx.get());
            v1::EncryptStreamRequest p;
            p.mutable_params()->set_algorithm(v1::SM4_CTR);
            *p.mutable_params()->mutable_key() = Inline(kSm4Key);
            p.set_plaintext("abc");
            stream->Write(p);
            stream->WritesDone();
            v1::EncryptStreamResponse resp;
            while (stream->Read(&resp)) {
            }
            got = stream->Finish().error_code();
            break;
          }
          default: {  // an SM2 key used for ECDSA: the wrong family
            v1::SignRequest req;
            req.set_algorithm(v1::ECDSA_P256);
            *req.mutable_key() = Inline(Sm2Pkcs8());
            req.set_data("m");
            v1::SignResponse resp;
            got = stub->Sign(ctx.get(), req, &resp).error_code();
            want = StatusCode::FAILED_PRECONDITION;
            break;
          }
        }
        if (got != want) {
          ++wrong;
          absl::MutexLock lock(&mu);
          if (first_error.empty()) {
            first_error = absl::StrCat("thread ", t, " call ", i, ": got ", got, ", want ", want);
          }
        }
        ++done;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d calls in %.1f s\n", done.load(), seconds);
  EXPECT_EQ(done.load(), kThreads * kCallsPerThread);
  EXPECT_EQ(wrong.load(), 0) << first_error;
  ExpectHealthy();
}

// Nothing the clients sent as key material shows up in the log, in hex or base64.
TEST_F(SmcryptdRobustnessTest, LogHoldsNoKeyBytes) {
  auto stub = server_->Stub();
  v1::SignRequest sign;
  sign.set_algorithm(v1::SM2);
  *sign.mutable_key() = Inline(kSm2D);
  sign.set_data("m");
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Sign, sign), StatusCode::OK);
  sign.set_algorithm(v1::RSA_2048_PSS);  // a key of the wrong family, in an error path
  EXPECT_NE(Call(stub.get(), &v1::CryptoService::Stub::Sign, sign), StatusCode::OK);
  v1::HmacRequest hmac;
  hmac.set_algorithm(v1::HMAC_SM3);
  *hmac.mutable_key() = Inline(kHmacKey);
  EXPECT_EQ(Call(stub.get(), &v1::CryptoService::Stub::Hmac, hmac), StatusCode::OK);
  const std::string log = server_->log();
  for (const std::string& key : {kSm2D, kSm4Key, kHmacKey}) {
    for (const std::string& form :
         {smcrypt::testing::BytesToHex(key), absl::Base64Escape(key), key}) {
      EXPECT_EQ(log.find(form.substr(0, 16)), std::string::npos) << form;
    }
  }
}

}  // namespace
