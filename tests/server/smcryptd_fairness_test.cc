// The shares of --max_inflight_bytes per stream and per connection against the real
// smcryptd (label integration; about 10 s in all):
//   - streams that each send one large GCM segment and then stall, on one connection and
//     on connections of their own, hold at most their connection's share: the ones past
//     it, and the stalled streams that try a second segment, are OVERLOADED naming their
//     limit, while a unary load on another connection is served throughout; with the
//     shares off the same streams take the whole budget and unary calls are refused;
//   - one connection's unary calls whose responses cannot be sent hold at most its share,
//     and another connection's calls are served; with the share off they are refused;
//   - a stream is charged the input its cipher keeps, whatever it has passed through;
//   - when everything has ended the charge and the connections tracked are back to 0.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "error_details.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"
#include "tests/server/stalled_reader.h"

namespace {

namespace v1 = ::smcrypt::v1;
using grpc::StatusCode;
using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::StalledReader;
using ::smcrypt::testing::WaitFor;
using EncryptStream =
    grpc::ClientReaderWriter<v1::EncryptStreamRequest, v1::EncryptStreamResponse>;

constexpr int kMiB = 1 << 20;

// NewConnection opens a connection of its own (channels with different arguments share
// none).
std::shared_ptr<grpc::Channel> NewConnection(const Smcryptd& server, int index) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt("smcrypt.test.connection", index);
  return grpc::CreateCustomChannel(server.target(), grpc::InsecureChannelCredentials(), args);
}

// LimitOf: the `limit` of an OVERLOADED status, "" for any other status.
std::string LimitOf(const grpc::Status& s) {
  std::optional<smcrypt::rpc::ErrorInfo> info = smcrypt::rpc::DecodeErrorInfo(s);
  if (!info.has_value() || info->reason != "OVERLOADED") return "";
  auto it = info->metadata.find("limit");
  return it == info->metadata.end() ? "" : it->second;
}

double Metric(Smcryptd& server, const std::string& sample) {
  return MetricValue(HttpGet(server.metrics_port(), "/metrics"), sample);
}

v1::EncryptRequest Unary(size_t payload) {
  v1::EncryptRequest req;
  req.set_algorithm(v1::SM4_GCM);
  req.mutable_key()->set_inline_key(std::string(16, 'k'));
  req.set_plaintext(std::string(payload, 'p'));
  return req;
}

// StalledStream is an SM4-GCM EncryptStream that sends one segment of `segment` bytes,
// reads the stream's nonce (the segment stays pending in the server, charged twice) and
// then neither sends nor reads.
struct StalledStream {
  std::unique_ptr<grpc::ClientContext> ctx = Ctx(120);
  std::unique_ptr<EncryptStream> stream;
  bool stalled = false;   // the server holds its segment
  grpc::Status status;    // the server's answer when it ended the stream

  StalledStream(v1::CryptoService::Stub* stub, int segment) {
    stream = stub->EncryptStream(ctx.get());
    v1::EncryptStreamRequest first;
    first.mutable_params()->set_algorithm(v1::SM4_GCM);
    first.mutable_params()->mutable_key()->set_inline_key(std::string(16, 'k'));
    first.set_plaintext(std::string(segment, 'p'));
    v1::EncryptStreamResponse nonce;
    stalled = stream->Write(first) && stream->Read(&nonce) && !nonce.nonce().empty();
    if (!stalled) End();
  }
  // SendMore sends another segment: a stream over its share is ended by the server (one
  // that is not is cancelled after 10 s).
  void SendMore(int segment) {
    absl::Notification ended;
    std::thread watchdog([&] {
      if (!ended.WaitForNotificationWithTimeout(absl::Seconds(10))) ctx->TryCancel();
    });
    v1::EncryptStreamRequest next;
    next.set_plaintext(std::string(segment, 'q'));
    stream->Write(next);
    End();
    ended.Notify();
    watchdog.join();
  }
  // End reads what is left and the status (cancelling first when `cancel`).
  void End(bool cancel = false) {
    if (cancel) ctx->TryCancel();
    v1::EncryptStreamResponse r;
    while (stream->Read(&r)) {
    }
    status = stream->Finish();
    stalled = false;
  }
};

// UnaryLoad runs Encrypt calls of `payload` bytes, 2 ms apart, on a connection of its own
// from `threads` threads until stopped, keeping every status that was not OK.
class UnaryLoad {
 public:
  UnaryLoad(const Smcryptd& server, int threads, int payload) {
    auto stub = v1::CryptoService::NewStub(NewConnection(server, 900));
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([this, stub = stub.get(), payload] {
        const v1::EncryptRequest req = Unary(payload);
        while (!stop_.load()) {
          v1::EncryptResponse resp;
          auto ctx = Ctx(30);
          grpc::Status s = stub->Encrypt(ctx.get(), req, &resp);
          absl::MutexLock lock(&mu_);
          if (s.ok()) {
            ++ok_;
          } else {
            failures_.push_back(absl::StrCat(s.error_code(), " ", LimitOf(s), ": ",
                                             s.error_message()));
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
      });
    }
    stub_ = std::move(stub);
  }
  // Stop waits for the threads; the number of calls served.
  int Stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    absl::MutexLock lock(&mu_);
    return ok_;
  }
  std::vector<std::string> failures() {
    absl::MutexLock lock(&mu_);
    return failures_;
  }
  ~UnaryLoad() { Stop(); }

 private:
  std::unique_ptr<v1::CryptoService::Stub> stub_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  int ok_ = 0;
  std::vector<std::string> failures_;
};

// ExpectIdle: smcrypt_inflight_bytes (sampled every 250 ms) and smcrypt_inflight_connections
// read 0.
void ExpectIdle(Smcryptd& server) {
  EXPECT_TRUE(WaitFor([&] {
    return Metric(server, "smcrypt_inflight_bytes") == 0 &&
           Metric(server, "smcrypt_inflight_connections") == 0;
  })) << "bytes " << Metric(server, "smcrypt_inflight_bytes") << ", connections "
      << Metric(server, "smcrypt_inflight_connections");
}

// The stalled-stream flags: 1 MiB messages, a 16 MiB budget; shares of 2 MiB per stream
// and 4 MiB per connection (or 0: none).
std::vector<std::string> StallFlags(bool shares) {
  return {"--max_message_bytes=1048576", "--max_inflight_bytes=16777216",
          absl::StrCat("--max_stream_inflight_bytes=", shares ? 2 * kMiB : 0),
          absl::StrCat("--max_connection_inflight_bytes=", shares ? 4 * kMiB : 0),
          "--stream_idle_timeout=0", "--worker_threads=2"};
}

// Each stalled stream's 512 KiB segment is charged 1.5 MiB while it is handled and 1 MiB
// while it waits; a unary Encrypt of 400 KiB about 1.2 MiB. The load's calls are small
// and paced (2 ms apart per thread): a unary call stays charged (its response) until gRPC
// is done with it, which on a busy machine comes up to tens of milliseconds after the
// client has its answer, so a client calling back to back has its last calls charged to
// its connection too (unpaced on 2 shared vCPUs, this load can have some 60 such calls,
// 4 MiB, charged).
constexpr int kSegment = 512 << 10;
constexpr int kUnaryPayload = 400 << 10;
constexpr int kLoadPayload = 32 << 10;
constexpr int kOnOneConnection = 12;
constexpr int kOwnConnections = 4;

TEST(FairnessTest, StalledStreamsHoldTheirShareWhileAnotherConnectionIsServed) {
  Smcryptd server;
  ASSERT_TRUE(server.Start(StallFlags(true))) << server.log();
  UnaryLoad load(server, 2, kLoadPayload);

  // 12 streams on one connection: three fit its 4 MiB (1 MiB each, 1.5 MiB for the one
  // being handled), the rest are refused by the connection's share.
  auto shared = v1::CryptoService::NewStub(NewConnection(server, 1));
  std::vector<std::unique_ptr<StalledStream>> on_one;
  int stalled = 0;
  for (int i = 0; i < kOnOneConnection; ++i) {
    on_one.push_back(std::make_unique<StalledStream>(shared.get(), kSegment));
    if (on_one.back()->stalled) {
      ++stalled;
    } else {
      EXPECT_EQ(on_one.back()->status.error_code(), StatusCode::RESOURCE_EXHAUSTED) << i;
      EXPECT_EQ(LimitOf(on_one.back()->status), "max_connection_inflight_bytes")
          << i << ": " << on_one.back()->status.error_message();
    }
  }
  EXPECT_EQ(stalled, 3);
  // Streams on connections of their own each fit.
  std::vector<std::unique_ptr<v1::CryptoService::Stub>> stubs;
  std::vector<std::unique_ptr<StalledStream>> own;
  for (int i = 0; i < kOwnConnections; ++i) {
    stubs.push_back(v1::CryptoService::NewStub(NewConnection(server, 10 + i)));
    own.push_back(std::make_unique<StalledStream>(stubs.back().get(), kSegment));
    EXPECT_TRUE(own.back()->stalled) << i << ": " << own.back()->status.error_message();
  }
  const double connections = Metric(server, "smcrypt_inflight_connections");
  EXPECT_GE(connections, 1 + kOwnConnections) << "the shared connection and the four others";
  EXPECT_LE(connections, 1 + kOwnConnections + 1) << "and the unary load's, between calls";
  // The unary load keeps being served beside the 7 MiB they hold, and so are calls of
  // 1.2 MiB on another connection (with the shares off they are refused: the test below).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  // (each on a connection of its own: a finished call may still be charged for a moment).
  for (int i = 0; i < 3; ++i) {
    auto other = v1::CryptoService::NewStub(NewConnection(server, 901 + i));
    v1::EncryptResponse resp;
    auto ctx = Ctx(10);
    grpc::Status s = other->Encrypt(ctx.get(), Unary(kUnaryPayload), &resp);
    EXPECT_TRUE(s.ok()) << i << ": " << LimitOf(s) << " " << s.error_message();
  }
  // A stalled stream that sends a second segment would hold 2.5 MiB: over its share.
  for (auto& s : own) {
    if (!s->stalled) {
      ADD_FAILURE() << "a stream on a connection of its own was refused";
      continue;
    }
    s->SendMore(kSegment);
    EXPECT_EQ(s->status.error_code(), StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(LimitOf(s->status), "max_stream_inflight_bytes") << s->status.error_message();
    EXPECT_NE(s->status.error_message().find("--max_stream_inflight_bytes"), std::string::npos);
  }
  const int served = load.Stop();
  EXPECT_GT(served, 0);
  EXPECT_TRUE(load.failures().empty())
      << load.failures().size() << " unary calls failed; first: " << load.failures()[0];
  for (auto& s : on_one) {
    if (s->stalled) s->End(/*cancel=*/true);
  }
  ExpectIdle(server);
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics,
                        "smcrypt_overload_refusals_total{limit=\"max_connection_inflight_bytes\"}"),
            kOnOneConnection - 3);
  EXPECT_EQ(
      MetricValue(metrics, "smcrypt_overload_refusals_total{limit=\"max_stream_inflight_bytes\"}"),
      kOwnConnections);
  EXPECT_EQ(MetricValue(metrics, "smcrypt_overload_refusals_total{limit=\"max_inflight_bytes\"}"),
            0);
  // The refusals are logged (at most one line per share every 10 s), naming the peer.
  EXPECT_NE(server.log().find("over --max_connection_inflight_bytes since the previous such "
                              "line; last (peer ipv4:127.0.0.1:"),
            std::string::npos)
      << server.log();
  std::printf("unary calls served beside the stalled streams: %d\n", served);
}

// Without the shares the same stalled streams take the whole budget: the scenario above
// is one where they matter.
TEST(FairnessTest, WithoutSharesStalledStreamsRefuseEveryOtherCall) {
  Smcryptd server;
  ASSERT_TRUE(server.Start(StallFlags(false))) << server.log();
  auto shared = v1::CryptoService::NewStub(NewConnection(server, 1));
  std::vector<std::unique_ptr<StalledStream>> streams;
  int stalled = 0;
  for (int i = 0; i < kOnOneConnection; ++i) {
    streams.push_back(std::make_unique<StalledStream>(shared.get(), kSegment));
    stalled += streams.back()->stalled;
  }
  std::vector<std::unique_ptr<v1::CryptoService::Stub>> stubs;
  for (int i = 0; i < kOwnConnections; ++i) {
    stubs.push_back(v1::CryptoService::NewStub(NewConnection(server, 10 + i)));
    streams.push_back(std::make_unique<StalledStream>(stubs.back().get(), kSegment));
    stalled += streams.back()->stalled;
  }
  EXPECT_EQ(stalled, 15) << "15 MiB of the 16 MiB budget";
  auto other = v1::CryptoService::NewStub(NewConnection(server, 900));
  for (int i = 0; i < 3; ++i) {
    v1::EncryptResponse resp;
    auto ctx = Ctx(10);
    grpc::Status s = other->Encrypt(ctx.get(), Unary(kUnaryPayload), &resp);
    EXPECT_EQ(LimitOf(s), "max_inflight_bytes") << s.error_code() << " " << s.error_message();
  }
  for (auto& s : streams) {
    if (s->stalled) s->End(/*cancel=*/true);
  }
  EXPECT_TRUE(WaitFor([&] { return Metric(server, "smcrypt_inflight_bytes") == 0; }));
}

// ---- One connection's unary calls -------------------------------------------------------

// GenerateRandom of 1 MiB is charged about 2 MiB (response and serialized copy); the
// StalledReader's responses can never be sent, so its calls keep their charges.
constexpr uint32_t kRandomLength = 1 << 20;
constexpr int kStalledCalls = 16;

std::vector<std::string> UnaryFlags(bool share) {
  return {"--max_message_bytes=1048576", "--max_inflight_bytes=16777216",
          absl::StrCat("--max_connection_inflight_bytes=", share ? 6 * kMiB : 0)};
}

// StallCalls starts kStalledCalls calls whose responses cannot be sent and waits until
// each is either admitted (charged) or refused: `admitted` calls charged.
void StallCalls(Smcryptd& server, StalledReader* stalled, int admitted) {
  v1::GenerateRandomRequest req;
  req.set_length(kRandomLength);
  for (int i = 0; i < kStalledCalls; ++i) {
    stalled->Call("/smcrypt.v1.CryptoService/GenerateRandom", req.SerializeAsString());
  }
  EXPECT_TRUE(WaitFor([&] {
    return Metric(server, "grpc_server_handled_total{grpc_code=\"ResourceExhausted\","
                          "grpc_method=\"GenerateRandom\",grpc_service=\"smcrypt.v1."
                          "CryptoService\",grpc_type=\"unary\"}") == kStalledCalls - admitted &&
           Metric(server, "smcrypt_inflight_bytes") >= admitted * 2.0 * kRandomLength;
  })) << Metric(server, "smcrypt_inflight_bytes");
}

TEST(FairnessTest, OneConnectionsUnaryCallsCannotTakeTheWholeBudget) {
  Smcryptd server;
  ASSERT_TRUE(server.Start(UnaryFlags(true))) << server.log();
  StalledReader stalled(server.port());
  ASSERT_TRUE(stalled.connected());
  // Two calls fit the connection's 6 MiB; the other 14 are refused by its share.
  StallCalls(server, &stalled, 2);
  EXPECT_LE(Metric(server, "smcrypt_inflight_bytes"), 6 * kMiB);
  EXPECT_EQ(Metric(server,
                   "smcrypt_overload_refusals_total{limit=\"max_connection_inflight_bytes\"}"),
            kStalledCalls - 2);
  // Other connections' calls are served (each 2 MiB, beside the 4 MiB held; each on a
  // connection of its own, as a finished call may still be charged for a moment).
  v1::GenerateRandomRequest req;
  req.set_length(kRandomLength);
  for (int i = 0; i < 10; ++i) {
    auto other = v1::CryptoService::NewStub(NewConnection(server, 2 + i));
    v1::GenerateRandomResponse resp;
    auto ctx = Ctx(10);
    grpc::Status s = other->GenerateRandom(ctx.get(), req, &resp);
    EXPECT_TRUE(s.ok()) << i << ": " << LimitOf(s) << " " << s.error_message();
  }
  stalled.Close();
  ExpectIdle(server);
}

TEST(FairnessTest, WithoutTheShareOneConnectionTakesTheWholeBudget) {
  Smcryptd server;
  ASSERT_TRUE(server.Start(UnaryFlags(false))) << server.log();
  StalledReader stalled(server.port());
  ASSERT_TRUE(stalled.connected());
  StallCalls(server, &stalled, 7);  // 7 × 2 MiB of the 16 MiB
  auto other = v1::CryptoService::NewStub(NewConnection(server, 2));
  v1::GenerateRandomRequest req;
  req.set_length(kRandomLength);
  v1::GenerateRandomResponse resp;
  auto ctx = Ctx(10);
  grpc::Status s = other->GenerateRandom(ctx.get(), req, &resp);
  EXPECT_EQ(LimitOf(s), "max_inflight_bytes") << s.error_code() << " " << s.error_message();
  stalled.Close();
  EXPECT_TRUE(WaitFor([&] { return Metric(server, "smcrypt_inflight_bytes") == 0; }));
}

// ---- The flags -----------------------------------------------------------------------

// Without the flags the shares are derived from --max_inflight_bytes (and logged); a value
// below --max_message_bytes, other than 0, stops start-up naming the flag.
TEST(FairnessTest, ShareFlagsAreDerivedOrCheckedAtStart) {
  {
    Smcryptd server;
    ASSERT_TRUE(server.Start({})) << server.log();
    // 128 MiB and 4 MiB messages: max(16 MiB, 5 × 4 MiB) and max(32 MiB, 20 MiB).
    EXPECT_NE(server.log().find("--max_stream_inflight_bytes=20971520 (default"),
              std::string::npos)
        << server.log();
    EXPECT_NE(server.log().find("--max_connection_inflight_bytes=33554432 (default"),
              std::string::npos)
        << server.log();
  }
  {
    Smcryptd server;
    ASSERT_TRUE(server.Start({"--max_stream_inflight_bytes=0",
                              "--max_connection_inflight_bytes=8388608"}))
        << server.log();
    EXPECT_NE(server.log().find("--max_stream_inflight_bytes=0 (no limit)\n"), std::string::npos)
        << server.log();
    EXPECT_NE(server.log().find("--max_connection_inflight_bytes=8388608\n"), std::string::npos)
        << server.log();
  }
  for (const char* flag : {"--max_stream_inflight_bytes=65535",
                           "--max_connection_inflight_bytes=1000"}) {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--max_message_bytes=65536", flag})) << flag;
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    EXPECT_NE(server.log().find(name + " must be 0 (no limit) or at least --max_message_bytes"),
              std::string::npos)
        << flag << ": " << server.log();
  }
  {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--max_connection_inflight_bytes=-1"}));
    EXPECT_NE(server.log().find("max_connection_inflight_bytes"), std::string::npos)
        << server.log();
  }
}

// ---- What a stream is charged -------------------------------------------------------------

// A stream is charged the input its cipher keeps now. A long GCM stream of small segments
// passes many tags (16 bytes each, outside the segments): an encrypting stream still has
// its pending last segment charged, a decrypting one no more than its pending segment.
TEST(FairnessTest, StreamsAreChargedWhatTheyHoldNotWhatPassedThrough) {
  constexpr int kSmall = 4000;
  constexpr int kSmallBytes = 256;
  constexpr int kLast = 48 << 10;
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--max_message_bytes=65536", "--stream_idle_timeout=0"}))
      << server.log();
  auto stub = server.Stub();
  v1::KeyRef key;
  key.set_inline_key(std::string(16, 'k'));

  // Encrypt: 4000 segments of 256 bytes, then one of 48 KiB that stays pending.
  auto ectx = Ctx(60);
  auto enc = stub->EncryptStream(ectx.get());
  std::vector<v1::EncryptStreamResponse> sealed;
  std::atomic<int> received{0};
  std::thread reader([&] {
    v1::EncryptStreamResponse r;
    while (enc->Read(&r)) {
      sealed.push_back(r);
      ++received;
    }
  });
  for (int i = 0; i <= kSmall; ++i) {
    v1::EncryptStreamRequest req;
    if (i == 0) {
      req.mutable_params()->set_algorithm(v1::SM4_GCM);
      *req.mutable_params()->mutable_key() = key;
    }
    req.set_plaintext(std::string(i == kSmall ? kLast : kSmallBytes, 'a' + i % 26));
    ASSERT_TRUE(enc->Write(req));
  }
  // The nonce and every small segment came back; the last one is pending.
  ASSERT_TRUE(WaitFor([&] { return received.load() == 1 + kSmall; })) << received.load();
  double charged = 0;
  EXPECT_TRUE(WaitFor([&] {
    charged = Metric(server, "smcrypt_inflight_bytes");
    return charged >= 2.0 * kLast;
  })) << "the pending 48 KiB segment is charged twice; charged " << charged;
  ASSERT_TRUE(enc->WritesDone());
  reader.join();
  ASSERT_TRUE(enc->Finish().ok());
  ASSERT_EQ(sealed.size(), 2u + kSmall);

  // Decrypt the same segments; before the last message the stream keeps one pending
  // segment (the last small one), whatever passed through before it.
  auto dctx = Ctx(60);
  auto dec = stub->DecryptStream(dctx.get());
  std::atomic<size_t> plaintext{0};
  std::thread dreader([&] {
    v1::DecryptStreamResponse r;
    while (dec->Read(&r)) plaintext += r.plaintext().size();
  });
  for (size_t i = 1; i < sealed.size() - 1; ++i) {
    v1::DecryptStreamRequest req;
    if (i == 1) {
      req.mutable_params()->set_algorithm(v1::SM4_GCM);
      *req.mutable_params()->mutable_key() = key;
      req.mutable_params()->set_nonce(sealed[0].nonce());
    }
    req.set_ciphertext(sealed[i].ciphertext());
    req.set_tag(sealed[i].tag());
    ASSERT_TRUE(dec->Write(req));
  }
  // Every small segment but the pending one is answered.
  ASSERT_TRUE(WaitFor([&] { return plaintext.load() == (kSmall - 1) * size_t{kSmallBytes}; }))
      << plaintext.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // two gauge samples
  charged = Metric(server, "smcrypt_inflight_bytes");
  EXPECT_LE(charged, 2.0 * kSmallBytes + 1024)
      << "a decrypting stream is charged its pending segment, not the tags it has passed";
  v1::DecryptStreamRequest last;
  last.set_ciphertext(sealed.back().ciphertext());
  last.set_tag(sealed.back().tag());
  ASSERT_TRUE(dec->Write(last));
  ASSERT_TRUE(dec->WritesDone());
  dreader.join();
  grpc::Status s = dec->Finish();
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(plaintext.load(), size_t{kSmall} * kSmallBytes + kLast);
  EXPECT_TRUE(WaitFor([&] { return Metric(server, "smcrypt_inflight_bytes") == 0; }));
}

}  // namespace
