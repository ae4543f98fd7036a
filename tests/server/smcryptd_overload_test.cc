// Overload tests against the real smcryptd (label integration; issue 11 item 4):
//   - 20,000 concurrent requests near --max_message_bytes: every call ends OK or
//     RESOURCE_EXHAUSTED (none times out), and the server's peak resident memory stays
//     under a stated bound;
//   - --max_inflight refuses unary calls and streams at once, also while streams idle;
//   - an over-limit message is RESOURCE_EXHAUSTED, unary or streamed, and the server
//     keeps serving;
//   - clients that open streams and never send, or never read, hold no server thread:
//     other clients are served while they stall, the thread count does not grow, and
//     --stream_idle_timeout cancels them and frees their slots.
//
// Sizes are set by environment variables so a larger run needs no rebuild:
// SMCRYPT_OVERLOAD_CALLS (default 20000) and SMCRYPT_OVERLOAD_BYTES (request payload,
// default 60 KiB under a 64 KiB --max_message_bytes). The default run takes ~10-20 s.
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
#include "tests/server/smcryptd_process.h"

// Under AddressSanitizer (the ASan build runs the integration label) freed memory sits
// in ASan's quarantine (256 MiB by default), so resident memory says nothing about the
// server's own bound: the run is smaller and the RSS bound is reported, not asserted.
#if defined(__SANITIZE_ADDRESS__)
#define SMCRYPT_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SMCRYPT_UNDER_ASAN 1
#endif
#endif
#ifdef SMCRYPT_UNDER_ASAN
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif

namespace {

namespace v1 = ::smcrypt::v1;
using grpc::StatusCode;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::Smcryptd;

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

std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 30) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return ctx;
}

// Channel opens its own connection (channels with different arguments share nothing).
std::shared_ptr<grpc::Channel> NewConnection(const std::string& target, int index) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt("smcrypt.test.connection", index);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

v1::EncryptRequest LargeEncrypt(size_t payload) {
  v1::EncryptRequest req;
  req.set_algorithm(v1::SM4_GCM);
  req.mutable_key()->set_inline_key(std::string(16, 'k'));
  req.set_plaintext(std::string(payload, 'p'));
  return req;
}

bool Serves(Smcryptd& server) {
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  auto ctx = Ctx(10);
  grpc::Status s = server.Stub()->Hash(ctx.get(), req, &resp);
  return s.ok() && resp.digest().size() == 32;
}

// ---- 20,000 concurrent large requests --------------------------------------------------

TEST(OverloadTest, ConcurrentLargeRequestsAreRefusedFastAndMemoryStaysBounded) {
  const int calls = EnvInt("SMCRYPT_OVERLOAD_CALLS", kUnderAsan ? 6000 : 20000);
  const int payload = EnvInt("SMCRYPT_OVERLOAD_BYTES", 60 * 1024);
  const int max_message = 64 * 1024;
  ASSERT_LT(payload + 64, max_message) << "the payload must fit --max_message_bytes";
  // The byte budget admits 64 requests of 64 KiB at once, and --max_inflight a quarter
  // of the calls (5,000); the rest are refused.
  const int64_t budget = 4 << 20;
  // gRPC's transports may hold 64 MiB of arriving requests (--grpc_memory_quota).
  const int64_t quota = int64_t{EnvInt("SMCRYPT_OVERLOAD_QUOTA_MIB", 64)} << 20;
  Smcryptd server;
  ASSERT_TRUE(server.Start({absl::StrCat("--max_message_bytes=", max_message),
                            absl::StrCat("--max_inflight_bytes=", budget),
                            absl::StrCat("--grpc_memory_quota=", quota),
                            absl::StrCat("--max_inflight=", calls / 4),
                            "--worker_threads=2"}))
      << server.log();
  ASSERT_TRUE(Serves(server));
  const int64_t rss_before_kib = ProcStatus(server.pid(), "VmRSS");
  ASSERT_GT(rss_before_kib, 0);

  // One serialized request, shared by every call (a grpc::ByteBuffer copy references
  // the same slices), so the client holds one copy while 20,000 are in flight.
  grpc::ByteBuffer request;
  {
    bool own = false;
    const grpc::Status serialized =
        grpc::GenericSerialize<grpc::ProtoBufferWriter, v1::EncryptRequest>(
            LargeEncrypt(payload), &request, &own);
    ASSERT_TRUE(serialized.ok());
  }
  constexpr int kConnections = 8;
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  for (int i = 0; i < kConnections; ++i) {
    stubs.push_back(std::make_unique<grpc::GenericStub>(NewConnection(server.target(), i)));
  }

  struct Call {
    grpc::ClientContext ctx;
    grpc::ByteBuffer response;
    std::chrono::steady_clock::time_point start;
  };
  std::vector<std::unique_ptr<Call>> pending(calls);
  absl::Mutex mu;
  std::map<StatusCode, int> codes;
  std::map<StatusCode, double> max_seconds;
  std::string first_other;
  int done = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    pending[i] = std::make_unique<Call>();
    Call* call = pending[i].get();
    call->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(90));
    call->start = std::chrono::steady_clock::now();
    stubs[i % kConnections]->UnaryCall(
        &call->ctx, "/smcrypt.v1.CryptoService/Encrypt", grpc::StubOptions(), &request,
        &call->response, [&, call](grpc::Status s) {
          const double seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - call->start)
                  .count();
          call->response.Clear();
          absl::MutexLock lock(&mu);
          ++codes[s.error_code()];
          max_seconds[s.error_code()] = std::max(max_seconds[s.error_code()], seconds);
          if (s.error_code() != StatusCode::OK &&
              s.error_code() != StatusCode::RESOURCE_EXHAUSTED && first_other.empty()) {
            first_other = absl::StrCat(s.error_code(), ": ", s.error_message());
          }
          ++done;
        });
  }
  {
    absl::MutexLock lock(&mu);
    auto all_done = [&] { return done == calls; };
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&all_done), absl::Seconds(120)))
        << done << " of " << calls << " calls finished";
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t hwm_kib = ProcStatus(server.pid(), "VmHWM");
  const int64_t growth_mib = (hwm_kib - rss_before_kib) / 1024;
  std::printf(
      "%d concurrent Encrypt calls of %d bytes on %d connections in %.1f s: OK %d (slowest "
      "%.2f s), RESOURCE_EXHAUSTED %d (slowest %.2f s), other %d; server RSS %lld KiB "
      "before, peak %lld KiB (+%lld MiB)\n",
      calls, payload, kConnections, wall, codes[StatusCode::OK], max_seconds[StatusCode::OK],
      codes[StatusCode::RESOURCE_EXHAUSTED], max_seconds[StatusCode::RESOURCE_EXHAUSTED],
      calls - codes[StatusCode::OK] - codes[StatusCode::RESOURCE_EXHAUSTED],
      static_cast<long long>(rss_before_kib), static_cast<long long>(hwm_kib),
      static_cast<long long>(growth_mib));
  // Every call is answered: served, or refused at once; none waits for its deadline.
  EXPECT_EQ(codes[StatusCode::OK] + codes[StatusCode::RESOURCE_EXHAUSTED], calls)
      << "first other status: " << first_other;
  EXPECT_GT(codes[StatusCode::OK], 0);
  EXPECT_GT(codes[StatusCode::RESOURCE_EXHAUSTED], 0) << calls << " calls exceed --max_inflight";
  // Bound: what gRPC's transports may hold of arriving requests (--grpc_memory_quota,
  // 64 MiB), the admitted requests (--max_inflight_bytes, 4 MiB) being processed, the
  // responses of answered calls still waiting for the client to read them (a call counts
  // against --max_inflight until it is done, so at most calls / 4 responses of `payload`
  // + 16 bytes: 293 MiB), plus 184 MiB for the per-call state of 20,000 open calls (gRPC
  // call arena, metadata, reactor, queued task: ~8 KiB each, ~156 MiB) and what glibc's
  // per-thread arenas keep of freed blocks: 549 MiB. Measured +55 to +161 MiB (peak
  // VmHWM) in six runs on a loaded 2-core machine, where most calls were refused, and
  // +329 MiB on a quiet one, where 18,266 of 20,000 were served and their responses
  // queued behind the client's reads. 20,000 × 60 KiB is 1.2 GB on the wire; without
  // --grpc_memory_quota the peak grew by 821 MiB.
  const int64_t responses_mib = (int64_t{calls / 4} * (payload + 16)) >> 20;
  const int64_t kBoundMiB = (quota >> 20) + (budget >> 20) + responses_mib + 184;
  if (!kUnderAsan) {
    EXPECT_LT(growth_mib, kBoundMiB) << "peak RSS grew by " << growth_mib << " MiB";
  }
  EXPECT_TRUE(Serves(server)) << "the server still answers after the burst";
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_GT(MetricValue(metrics,
                        "grpc_server_handled_total{grpc_code=\"ResourceExhausted\",grpc_method="
                        "\"Encrypt\",grpc_service=\"smcrypt.v1.CryptoService\",grpc_type="
                        "\"unary\"}"),
            0);
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
  ASSERT_TRUE(server.Start({"--worker_threads=2", "--stream_idle_timeout=8s"})) << server.log();
  ASSERT_TRUE(Serves(server));
  const int64_t threads_before = ProcStatus(server.pid(), "Threads");

  // 200 streams that open and never send, on 4 connections.
  constexpr int kSilent = 200;
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
  const double inflight =
      MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_inflight_requests");
  // (Unless the machine is so slow that the idle timeout already hit some.)
  EXPECT_GE(inflight, kSilent + kNoRead) << "the stalled streams are in flight";
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
  // The stalled streams hold no thread each: the count does not grow with them.
  EXPECT_LT(threads_stalled, threads_before + 8);

  // --stream_idle_timeout=8s cancels every stalled stream and frees its slot (the
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
  std::printf("stalled streams ended %.1f s after the other clients were served\n", waited);
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
