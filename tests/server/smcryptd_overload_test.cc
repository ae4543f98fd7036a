// Overload tests against the real smcryptd (label integration):
//   - 2 × 20,000 concurrent requests near --max_message_bytes: every call ends OK or
//     RESOURCE_EXHAUSTED (none times out), the byte charge stays within
//     --max_inflight_bytes, and the server's peak resident memory stays within the
//     formula of its flags in docs/service.md ("Memory under overload"); with the limits off the
//     same burst grows past it;
//   - a response the client cannot receive (HTTP/2 window 0) stays charged until the call
//     ends, keeping large calls out, and is released when the client goes away;
//   - --max_inflight refuses unary calls and streams at once, also while streams idle;
//   - an over-limit message is RESOURCE_EXHAUSTED, unary or streamed, and the server
//     keeps serving;
//   - clients that open streams and never send, or never read, hold no server thread:
//     other clients are served while they stall, the thread count does not grow, and
//     --stream_idle_timeout cancels them and frees their slots.
//
// Sizes are set by environment variables so a larger run needs no rebuild:
// SMCRYPT_OVERLOAD_CALLS (default 20000; 6000 under ASan) and SMCRYPT_OVERLOAD_BYTES
// (request payload, default 60 KiB under a 64 KiB --max_message_bytes).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "gtest/gtest.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/overload_burst.h"
#include "tests/server/smcryptd_process.h"
#include "tests/server/stalled_reader.h"

// Under AddressSanitizer (the ASan build runs the integration label) freed memory sits
// in ASan's quarantine (256 MiB by default), so resident memory says nothing about the
// server's own bound: the run is smaller and the RSS bound is reported, not asserted.
constexpr bool kUnderAsan = ::smcrypt::testing::kUnderAsan;

namespace {

namespace v1 = ::smcrypt::v1;
using grpc::StatusCode;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::Burst;
using ::smcrypt::testing::BurstResult;
using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::LargeEncrypt;
using ::smcrypt::testing::NewConnection;
using ::smcrypt::testing::Serves;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::StalledReader;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// ProcStatusKiB reads a "Name:   123 kB" line of /proc/<pid>/status (or the count of
// "Threads:"); -1 when absent.
int64_t ProcStatus(pid_t pid, const std::string& name) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name + ":", 0) == 0) return std::atoll(line.c_str() + name.size() + 1);
  }
  return -1;
}

// ---- 20,000 concurrent large requests --------------------------------------------------

// Limits are the flags that bound smcryptd's memory (docs/service.md, "Memory under overload").
struct Limits {
  int64_t inflight_bytes;  // --max_inflight_bytes
  int64_t quota;           // --grpc_memory_quota
  int64_t streams;         // --max_concurrent_streams
};

// BoundMiB is the formula of docs/service.md: under any load, smcryptd's peak resident memory
// grows over its idle size by at most
//   max_inflight_bytes + grpc_memory_quota
//   + connections × max_concurrent_streams × (64 KiB + 16 KiB) + 32 MiB
// where 64 KiB is the HTTP/2 stream window gRPC grants a call (what a client may send
// before the server reads it), 16 KiB the per-call state of gRPC and smcryptd, and
// 32 MiB what the burst itself touches (threads' stacks and allocator caches, code).
int64_t BoundMiB(const Limits& l, int connections) {
  const int64_t per_stream = (64 + 16) << 10;
  return (l.inflight_bytes + l.quota + connections * l.streams * per_stream) / (1 << 20) + 32;
}

std::vector<std::string> LimitFlags(const Limits& l, int max_message, int calls) {
  return {absl::StrCat("--max_message_bytes=", max_message),
          absl::StrCat("--max_inflight_bytes=", l.inflight_bytes),
          absl::StrCat("--grpc_memory_quota=", l.quota),
          absl::StrCat("--max_concurrent_streams=", l.streams),
          absl::StrCat("--max_inflight=", calls / 4), "--worker_threads=2",
          "--malloc_trim_after_bytes=1048576"};
}

// The small limits of the bounded run: the formula is then tight (4 + 8 + 10 + 32 MiB).
constexpr Limits kSmall = {4 << 20, 8 << 20, 16};
constexpr int kBurstConnections = 8;
constexpr int kMaxMessage = 64 * 1024;

int Calls() { return EnvInt("SMCRYPT_OVERLOAD_CALLS", kUnderAsan ? 6000 : 20000); }
int Payload() { return EnvInt("SMCRYPT_OVERLOAD_BYTES", 60 * 1024); }

// Two bursts of 20,000 concurrent 60 KiB Encrypt calls (1.2 GB each on the wire) against
// the small limits: every call is served or refused at once (none waits for its
// deadline), the byte charge never passes --max_inflight_bytes, and peak RSS stays
// within the formula on any CPU, however many of the calls get served.
TEST(OverloadTest, ConcurrentLargeRequestsStayWithinTheMemoryFormula) {
  const int calls = Calls();
  const int payload = Payload();
  ASSERT_LT(payload + 64, kMaxMessage) << "the payload must fit --max_message_bytes";
  Smcryptd server;
  ASSERT_TRUE(server.Start(LimitFlags(kSmall, kMaxMessage, calls))) << server.log();
  ASSERT_TRUE(Serves(server));
  const int64_t rss_before_kib = ProcStatus(server.pid(), "VmRSS");
  ASSERT_GT(rss_before_kib, 0);
  const int64_t bound_mib = BoundMiB(kSmall, kBurstConnections);
  int served = 0, refused = 0;
  for (int round = 1; round <= 2; ++round) {
    const BurstResult r = Burst(server, calls, payload, kBurstConnections);
    const int64_t growth_mib = (ProcStatus(server.pid(), "VmHWM") - rss_before_kib) / 1024;
    std::printf("round %d: %d concurrent Encrypt calls of %d bytes on %d connections in %.1f s "
                "(last answer at %.2f s): OK %d, RESOURCE_EXHAUSTED %d, other %d; peak RSS "
                "+%lld MiB over %lld KiB idle (bound %lld MiB)\n",
                round, calls, payload, kBurstConnections, r.seconds, r.slowest, r.ok, r.refused,
                r.other, static_cast<long long>(growth_mib),
                static_cast<long long>(rss_before_kib), static_cast<long long>(bound_mib));
    EXPECT_EQ(r.other, 0) << "first other status: " << r.first_other;
    EXPECT_GT(r.ok, 0);
    served += r.ok;
    refused += r.refused;
    if (!kUnderAsan) {
      // (Under ASan freed memory sits in its quarantine: RSS says nothing of the bound.)
      EXPECT_LE(growth_mib, bound_mib) << "peak RSS grew by " << growth_mib << " MiB";
    }
  }
  EXPECT_TRUE(Serves(server)) << "the server still answers after the bursts";
  // The charge never passed the budget; it is back to 0 once every call is done; the
  // trimmer returned the burst's heap (its gauges are sampled every 250 ms).
  double peak = -1, now = -1, trims = -1;
  for (int i = 0; i < 100; ++i) {
    const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
    peak = MetricValue(metrics, "smcrypt_inflight_bytes_peak");
    now = MetricValue(metrics, "smcrypt_inflight_bytes");
    trims = MetricValue(metrics, "smcrypt_malloc_trims_total");
    if (now == 0 && trims >= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_GT(peak, 0);
  EXPECT_LE(peak, kSmall.inflight_bytes);
  EXPECT_EQ(now, 0);
  EXPECT_GE(trims, 1);
  // Refusals are counted (how many calls are refused depends on how fast the client
  // sends them; the bound holds either way).
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  if (refused > 0) {
    EXPECT_GT(MetricValue(metrics,
                          "grpc_server_handled_total{grpc_code=\"ResourceExhausted\",grpc_method="
                          "\"Encrypt\",grpc_service=\"smcrypt.v1.CryptoService\",grpc_type="
                          "\"unary\"}"),
              0);
  }
  std::printf("served %d of %d; RSS after the bursts: %lld KiB; byte charge peak %.0f of %lld; "
              "%.0f trims\n",
              served, 2 * calls, static_cast<long long>(ProcStatus(server.pid(), "VmRSS")), peak,
              static_cast<long long>(kSmall.inflight_bytes), trims);
}

// The same burst with the limits off (0) grows past the formula of the small limits:
// the bounded test above can fail.
TEST(OverloadTest, WithoutLimitsTheSameBurstExceedsTheFormula) {
  const int calls = Calls();
  const int payload = Payload();
  Smcryptd server;
  ASSERT_TRUE(server.Start(LimitFlags({0, 0, 0}, kMaxMessage, calls))) << server.log();
  ASSERT_TRUE(Serves(server));
  const int64_t rss_before_kib = ProcStatus(server.pid(), "VmRSS");
  const BurstResult r = Burst(server, calls, payload, kBurstConnections);
  const int64_t growth_mib = (ProcStatus(server.pid(), "VmHWM") - rss_before_kib) / 1024;
  const int64_t bound_mib = BoundMiB(kSmall, kBurstConnections);
  std::printf("limits off: OK %d, RESOURCE_EXHAUSTED %d, other %d in %.1f s; peak RSS +%lld MiB "
              "(the small limits' bound: %lld MiB)\n",
              r.ok, r.refused, r.other, r.seconds, static_cast<long long>(growth_mib),
              static_cast<long long>(bound_mib));
  EXPECT_EQ(r.other, 0) << "first other status: " << r.first_other;
  EXPECT_GT(growth_mib, bound_mib);
  EXPECT_TRUE(Serves(server));
}

// ---- Responses stay charged until they are sent ------------------------------------------

// A response that cannot be sent (the client's window is 0) stays charged against
// --max_inflight_bytes until the call ends, so it keeps the next large call out; once the
// stalled client goes away its charge is released and that call is served.
TEST(OverloadTest, UnsentResponsesStayChargedUntilTheCallEnds) {
  constexpr int kBudget = 4 << 20;
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--max_message_bytes=1048576",
                            absl::StrCat("--max_inflight_bytes=", kBudget)}))
      << server.log();
  ASSERT_TRUE(Serves(server));
  // GenerateRandom of 1 MiB: a 4-byte request whose response is charged twice (message
  // and serialized copy): about 2 MiB, so two such calls do not fit 4 MiB together.
  v1::GenerateRandomRequest big;
  big.set_length(1 << 20);
  StalledReader stalled(server.port());
  ASSERT_TRUE(stalled.connected());
  stalled.Call("/smcrypt.v1.CryptoService/GenerateRandom", big.SerializeAsString());
  // The call is answered by the server (its gauge is sampled every 250 ms) ...
  double charged = 0;
  for (int i = 0; i < 100 && charged < (2 << 20); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    charged = MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_bytes");
  }
  ASSERT_GE(charged, 2 << 20) << "the stalled call's response is charged";
  // ... and its response, stuck behind the window, keeps another one out.
  {
    v1::GenerateRandomResponse resp;
    auto ctx = Ctx(10);
    grpc::Status s = server.Stub()->GenerateRandom(ctx.get(), big, &resp);
    EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    EXPECT_NE(s.error_message().find("--max_inflight_bytes"), std::string::npos)
        << s.error_message();
  }
  // Small calls still fit beside it.
  EXPECT_TRUE(Serves(server));
  // The stalled client goes away: its call ends, the charge is released.
  stalled.Close();
  bool served = false;
  for (int i = 0; i < 100 && !served; ++i) {
    v1::GenerateRandomResponse resp;
    auto ctx = Ctx(10);
    served = server.Stub()->GenerateRandom(ctx.get(), big, &resp).ok() &&
             resp.data().size() == (1u << 20);
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(served) << "the large call is served once the stalled one has ended";
}

// What an SM4-GCM EncryptStream keeps of its input (the pending segment, up to one
// message) stays charged while the stream idles, so streams that send one large message
// and wait cannot hold memory the budget does not see.
TEST(OverloadTest, DataAStreamKeepsStaysCharged) {
  constexpr int kMessage = 1 << 20;
  Smcryptd server;
  ASSERT_TRUE(server.Start({absl::StrCat("--max_message_bytes=", kMessage + 1024),
                            absl::StrCat("--max_inflight_bytes=", 4 << 20)}))
      << server.log();
  auto stub = server.Stub();
  auto ctx = Ctx(60);
  auto stream = stub->EncryptStream(ctx.get());
  v1::EncryptStreamRequest first;
  first.mutable_params()->set_algorithm(v1::SM4_GCM);
  first.mutable_params()->mutable_key()->set_inline_key(std::string(16, 'k'));
  first.set_plaintext(std::string(kMessage, 'p'));
  ASSERT_TRUE(stream->Write(first));
  v1::EncryptStreamResponse nonce;
  ASSERT_TRUE(stream->Read(&nonce));  // the nonce; the segment stays pending
  double charged = 0;
  for (int i = 0; i < 100 && charged < kMessage; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    charged = MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_bytes");
  }
  EXPECT_GE(charged, 2.0 * kMessage) << "the pending segment is charged (twice: it becomes a "
                                        "response and its serialized copy)";
  // The stream ends: the segment is sent and the charge released.
  ASSERT_TRUE(stream->WritesDone());
  v1::EncryptStreamResponse r;
  size_t ciphertext = 0;
  while (stream->Read(&r)) ciphertext += r.ciphertext().size();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(ciphertext, static_cast<size_t>(kMessage));
  for (int i = 0; i < 100 && charged != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    charged = MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_bytes");
  }
  EXPECT_EQ(charged, 0);
}

// A lone call is admitted whatever its charge; GenerateRandom's charge is bounded by the
// largest length it serves, so an out-of-range length costs nothing.
TEST(OverloadTest, OutOfRangeRandomLengthIsNotCharged) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--max_message_bytes=1048576", "--max_inflight_bytes=4194304"}))
      << server.log();
  v1::GenerateRandomRequest req;
  req.set_length(4294967279u);
  v1::GenerateRandomResponse resp;
  auto ctx = Ctx(10);
  grpc::Status s = server.Stub()->GenerateRandom(ctx.get(), req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  double peak = -1;
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    peak = MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_bytes_peak");
    if (peak > 0) break;
  }
  EXPECT_GT(peak, 0);
  EXPECT_LE(peak, 4194304) << "charged as at most a 1 MiB response";
}

// ---- --max_inflight covers streams and refuses at once ---------------------------------

TEST(OverloadTest, MaxInflightRefusesUnaryAndStreamsAtOnce) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--max_inflight=8", "--stream_idle_timeout=0"})) << server.log();
  auto stub = server.Stub();
  // Eight HashStreams that never send hold the eight slots.
  std::vector<std::unique_ptr<grpc::ClientContext>> ctxs;
  std::vector<std::unique_ptr<grpc::ClientWriter<v1::HashStreamRequest>>> streams;
  std::vector<v1::HashStreamResponse> responses(8);
  for (int i = 0; i < 8; ++i) {
    ctxs.push_back(Ctx(60));
    streams.push_back(stub->HashStream(ctxs.back().get(), &responses[i]));
  }
  // The in-flight gauge shows them (the streams are admitted asynchronously).
  for (int i = 0; i < 100; ++i) {
    if (MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_requests") >= 8)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  auto ctx = Ctx(30);
  grpc::Status s = stub->Hash(ctx.get(), req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max_inflight"), std::string::npos);
  // A ninth stream is refused too, before it sends anything.
  {
    auto sctx = Ctx(30);
    v1::HashStreamResponse sresp;
    auto extra = stub->HashStream(sctx.get(), &sresp);
    grpc::Status ss = extra->Finish();
    EXPECT_EQ(ss.error_code(), StatusCode::RESOURCE_EXHAUSTED) << ss.error_message();
  }
  // Closing the streams frees the slots.
  for (auto& c : ctxs) c->TryCancel();
  for (auto& st : streams) st->Finish();
  bool served = false;
  for (int i = 0; i < 100 && !served; ++i) {
    served = Serves(server);
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(served);
}

// ---- Message-size limit ----------------------------------------------------------------

TEST(OverloadTest, OverLimitMessagesAreResourceExhaustedAndServingContinues) {
  const int max_message = 64 * 1024;
  Smcryptd server;
  ASSERT_TRUE(server.Start({absl::StrCat("--max_message_bytes=", max_message)})) << server.log();
  auto stub = server.Stub();
  for (int round = 0; round < 3; ++round) {
    {
      v1::EncryptResponse resp;
      auto ctx = Ctx();
      grpc::Status s = stub->Encrypt(ctx.get(), LargeEncrypt(max_message + 1), &resp);
      EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    }
    {
      // One stream message over the limit ends the stream with RESOURCE_EXHAUSTED.
      auto ctx = Ctx();
      auto stream = stub->EncryptStream(ctx.get());
      v1::EncryptStreamRequest first;
      first.mutable_params()->set_algorithm(v1::SM4_GCM);
      first.mutable_params()->mutable_key()->set_inline_key(std::string(16, 'k'));
      first.set_plaintext(std::string(max_message + 1, 'p'));
      stream->Write(first);
      stream->WritesDone();
      v1::EncryptStreamResponse r;
      while (stream->Read(&r)) {
      }
      grpc::Status s = stream->Finish();
      EXPECT_EQ(s.error_code(), StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    }
    // Just under the limit is served.
    v1::EncryptResponse resp;
    auto ctx = Ctx();
    grpc::Status s = stub->Encrypt(ctx.get(), LargeEncrypt(max_message - 64), &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.ciphertext().size(), static_cast<size_t>(max_message - 64));
  }
}

// ---- Stalled clients -------------------------------------------------------------------

TEST(OverloadTest, StalledStreamsHoldNoThreadAndAreCancelledWhenIdle) {
  Smcryptd server;
  // The idle timeout leaves room for a loaded machine: opening the streams and seeing the
  // writers stall took under 3 s on a 2-core machine with two busy loops beside it.
  ASSERT_TRUE(server.Start({"--worker_threads=2", "--stream_idle_timeout=15s"})) << server.log();
  ASSERT_TRUE(Serves(server));
  const int64_t threads_before = ProcStatus(server.pid(), "Threads");

  // 200 streams that open and never send, on 4 connections.
  constexpr int kSilent = 200;
  const auto opened = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < 4; ++i) channels.push_back(NewConnection(server.target(), 100 + i));
  std::vector<std::unique_ptr<grpc::ClientContext>> silent_ctx;
  std::vector<std::unique_ptr<grpc::ClientReaderWriter<v1::EncryptStreamRequest,
                                                       v1::EncryptStreamResponse>>>
      silent;
  for (int i = 0; i < kSilent; ++i) {
    auto stub = v1::CryptoService::NewStub(channels[i % channels.size()]);
    silent_ctx.push_back(Ctx(120));
    silent.push_back(stub->EncryptStream(silent_ctx.back().get()));
  }
  // 8 streams that send and never read: the server's writes stop on flow control, then
  // its reads stop, and the client's writes block (each on its own thread).
  constexpr int kNoRead = 8;
  std::atomic<int> no_read_writes{0};
  std::vector<std::unique_ptr<grpc::ClientContext>> no_read_ctx;
  std::vector<std::thread> no_read_threads;
  std::vector<grpc::Status> no_read_status(kNoRead);
  for (int i = 0; i < kNoRead; ++i) {
    no_read_ctx.push_back(Ctx(120));
    grpc::ClientContext* ctx = no_read_ctx.back().get();
    no_read_threads.emplace_back([&, ctx, i] {
      auto stub = v1::CryptoService::NewStub(NewConnection(server.target(), 200 + i));
      auto stream = stub->EncryptStream(ctx);
      v1::EncryptStreamRequest req;
      req.mutable_params()->set_algorithm(v1::SM4_CTR);
      req.mutable_params()->mutable_key()->set_inline_key(std::string(16, 'k'));
      req.set_plaintext(std::string(64 * 1024, 'p'));
      while (stream->Write(req)) {
        ++no_read_writes;
        req.clear_params();
      }
      // The server ended the stream. A client that reads again drains what was sent
      // and gets the status (a sync client's Finish waits for the reads).
      v1::EncryptStreamResponse r;
      while (stream->Read(&r)) {
      }
      no_read_status[i] = stream->Finish();
    });
  }
  // Wait until the writers are stuck (no progress for half a second).
  int last = -1;
  for (int i = 0; i < 100 && no_read_writes.load() != last; ++i) {
    last = no_read_writes.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  // Every stalled stream is in flight (they are admitted asynchronously).
  double inflight = 0;
  for (int i = 0; i < 100 && inflight < kSilent + kNoRead; ++i) {
    inflight = MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_requests");
    if (inflight < kSilent + kNoRead) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double opened_after =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - opened).count();
  EXPECT_GE(inflight, kSilent + kNoRead)
      << "the stalled streams are in flight (" << opened_after << " s after they opened)";
  const int64_t threads_stalled = ProcStatus(server.pid(), "Threads");

  // Other clients are served meanwhile (unary work on the 2 workers, streams on gRPC's
  // callback threads), on a fresh connection.
  auto stub = v1::CryptoService::NewStub(NewConnection(server.target(), 300));
  for (int i = 0; i < 50; ++i) {
    v1::EncryptResponse resp;
    auto ctx = Ctx(10);
    grpc::Status s = stub->Encrypt(ctx.get(), LargeEncrypt(1024), &resp);
    ASSERT_TRUE(s.ok()) << i << ": " << s.error_message();
  }
  std::printf("server threads: %lld before, %lld with %d silent and %d unread streams\n",
              static_cast<long long>(threads_before), static_cast<long long>(threads_stalled),
              kSilent, kNoRead);
  // The stalled streams hold no thread each: the count does not grow with them (208
  // streams; gRPC's own pool may add a few threads on a loaded machine).
  EXPECT_LT(threads_stalled, threads_before + 32);

  // --stream_idle_timeout=15s cancels every stalled stream and frees its slot (the
  // clients' own deadlines are 120 s).
  const auto wait_start = std::chrono::steady_clock::now();
  for (int i = 0; i < kSilent; ++i) {
    grpc::Status s = silent[i]->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::CANCELLED) << i << ": " << s.error_message();
  }
  for (auto& t : no_read_threads) t.join();
  for (int i = 0; i < kNoRead; ++i) {
    EXPECT_EQ(no_read_status[i].error_code(), StatusCode::CANCELLED)
        << no_read_status[i].error_message();
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
  std::printf("stalled streams in flight %.1f s after they opened, ended %.1f s after the other "
              "clients were served\n",
              opened_after, waited);
  double after = -1;
  for (int i = 0; i < 100; ++i) {
    after = MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_requests");
    if (after == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(after, 0);
  EXPECT_NE(server.log().find("(--stream_idle_timeout)"), std::string::npos) << server.log();
  EXPECT_TRUE(Serves(server));
}

}  // namespace
