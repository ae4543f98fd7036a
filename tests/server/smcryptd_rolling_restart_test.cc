// Rollouts without failed calls (docs/deployment.md, "Rollouts and draining"), against
// real smcryptd processes (label integration).
//
// RollingRestartTest: three replicas (--drain_delay=2s) behind one client channel with
// round_robin over `ipv4:127.0.0.1:A,127.0.0.1:B,127.0.0.1:C` and the clients' retry
// policy (cli::kServiceConfigJson), under a steady mixed load (Hash SM3, Encrypt SM4-GCM,
// Sign then Verify SM2, inline keys). While all three are up, each replica answers a third
// of the calls within ±15 % (grpc_server_handled_total deltas of each /metrics). Then each
// replica in turn gets SIGTERM, exits 0, and a new process starts on its port; for 0.5 s
// after each SIGTERM a stale sender opens new connections to that replica alone, one
// attempt per call, as a Kubernetes endpoint or an L4 balancer that has not yet seen the
// pod go does. No call of either fails. With --drain_delay=0 the stale sender's
// connections are refused (UNAVAILABLE); without retries a few calls of the load mostly
// end CANCELLED; either fails the test (SMCRYPT_ROLLING_* below).
//
// DrainTest: one replica. During the drain delay health is NOT_SERVING on both listeners,
// smcrypt_draining is 1, new connections are served and a stream open at SIGTERM goes on;
// a second SIGTERM ends the delay, new connections are refused, the stream completes and
// the process exits 0. A stream still open when --shutdown_grace ends is cancelled and
// counted in the log. Bad --drain_delay values fail start-up.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "clients/smcrypt/session.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/registry.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"

namespace smcrypt {
namespace {

using ::grpc::health::v1::HealthCheckRequest;
using ::grpc::health::v1::HealthCheckResponse;
using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::InlineKeyRef;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::WaitFor;

// HandledCalls sums grpc_server_handled_total of every CryptoService method and code on
// the /metrics of `server` (-1 when it cannot be read).
double HandledCalls(Smcryptd& server) {
  const std::string text = HttpGet(server.metrics_port(), "/metrics");
  if (text.empty()) return -1;
  double total = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "grpc_server_handled_total{") ||
        !absl::StrContains(line, "grpc_service=\"smcrypt.v1.CryptoService\"")) {
      continue;
    }
    total += std::strtod(std::string(line.substr(line.rfind(' ') + 1)).c_str(), nullptr);
  }
  return total;
}

// NewConnectionChannel is a channel with a connection of its own (no subchannel shared
// with other channels) and no retries: each call is one attempt, the way a client behind
// an L4 balancer reaches whichever pod its new connection lands on.
std::shared_ptr<grpc::Channel> NewConnectionChannel(const std::string& target) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
}

grpc::Status CallHash(v1::CryptoService::Stub* stub) {
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  return stub->Hash(Ctx(10).get(), req, &resp);
}

// Failures counts failed calls and keeps the first few messages.
class Failures {
 public:
  void Add(const std::string& what, const grpc::Status& s) {
    ++count_;
    absl::MutexLock lock(&mu_);
    if (first_.size() < 8) {
      first_.push_back(absl::StrCat(what, ": ", s.error_code(), " ", s.error_message()));
    }
  }
  int64_t count() const { return count_; }
  std::string Describe() {
    absl::MutexLock lock(&mu_);
    return absl::StrJoin(first_, "; ");
  }

 private:
  std::atomic<int64_t> count_{0};
  absl::Mutex mu_;
  std::vector<std::string> first_ ABSL_GUARDED_BY(mu_);
};

// MixedLoad runs Hash SM3, Encrypt SM4-GCM and Sign then Verify SM2 in turn on each of
// its threads, every call through one stub.
class MixedLoad {
 public:
  MixedLoad(v1::CryptoService::Stub* stub, Failures* failures)
      : stub_(stub), failures_(failures) {
    absl::StatusOr<KeyPair> sm2 = GenerateKeyPair(Algorithm::kSm2);
    EXPECT_TRUE(sm2.ok()) << sm2.status();
    if (sm2.ok()) {
      sm2_private_ = std::string(SecretDataAsStringView(sm2->private_key_der));
      sm2_public_ = sm2->public_key_der;
    }
  }
  ~MixedLoad() { Stop(); }

  void Start(int threads) {
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this, t] { Run(t); });
  }
  void Stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }
  int64_t calls() const { return calls_; }

 private:
  void Run(int t) {
    for (int i = t; !stop_; ++i) {
      switch (i % 3) {
        case 0: Hash(); break;
        case 1: Encrypt(); break;
        default: SignVerify(); break;
      }
    }
  }
  void Count(const char* what, const grpc::Status& s) {
    ++calls_;
    if (!s.ok()) failures_->Add(what, s);
  }
  void Hash() {
    v1::HashRequest req;
    req.set_algorithm(v1::SM3);
    req.set_data(std::string(256, 'h'));
    v1::HashResponse resp;
    Count("Hash", stub_->Hash(Ctx(10).get(), req, &resp));
  }
  void Encrypt() {
    v1::EncryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = InlineKeyRef(std::string(16, '\x42'));
    req.set_plaintext(std::string(512, 'p'));
    v1::EncryptResponse resp;
    Count("Encrypt", stub_->Encrypt(Ctx(10).get(), req, &resp));
  }
  void SignVerify() {
    v1::SignRequest sreq;
    sreq.set_algorithm(v1::SM2);
    *sreq.mutable_key() = InlineKeyRef(sm2_private_);
    sreq.set_data("document");
    v1::SignResponse sresp;
    grpc::Status s = stub_->Sign(Ctx(10).get(), sreq, &sresp);
    Count("Sign", s);
    if (!s.ok()) return;
    v1::VerifyRequest vreq;
    vreq.set_algorithm(v1::SM2);
    *vreq.mutable_key() = InlineKeyRef(sm2_public_);
    vreq.set_data(sreq.data());
    vreq.set_signature(sresp.signature());
    v1::VerifyResponse vresp;
    s = stub_->Verify(Ctx(10).get(), vreq, &vresp);
    Count("Verify", s);
    if (s.ok() && !vresp.valid()) failures_->Add("Verify valid", grpc::Status());
  }

  v1::CryptoService::Stub* stub_;
  Failures* failures_;
  std::string sm2_private_, sm2_public_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> calls_{0};
};

// EnvOr is environment variable `name`, or `fallback` when unset or empty.
std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// SMCRYPT_ROLLING_DRAIN_DELAY (default 2s) sets the replicas' --drain_delay, and
// SMCRYPT_ROLLING_NO_RETRIES=1 turns the load channel's retries off: with 0 and 1 the test
// shows the failures the drain delay and the retries prevent (and fails).
class RollingRestartTest : public ::testing::Test {
 protected:
  static constexpr int kReplicas = 3;
  const std::string drain_delay_ = EnvOr("SMCRYPT_ROLLING_DRAIN_DELAY", "2s");
  const bool retries_ = EnvOr("SMCRYPT_ROLLING_NO_RETRIES", "0") != "1";
  const std::vector<std::string> flags_ = {absl::StrCat("--drain_delay=", drain_delay_),
                                           "--shutdown_grace=10s"};

  void SetUp() override {
    for (int i = 0; i < kReplicas; ++i) {
      replicas_.push_back(std::make_unique<Smcryptd>());
      ASSERT_TRUE(replicas_.back()->Start(flags_)) << replicas_.back()->log();
    }
  }

  std::string Target() const {
    std::vector<std::string> addresses;
    for (const auto& r : replicas_) addresses.push_back(r->target());
    return absl::StrCat("ipv4:", absl::StrJoin(addresses, ","));
  }

  // ExpectEvenSpread reads each replica's answered calls over `seconds` and expects each
  // within ±15 % of their mean.
  void ExpectEvenSpread(int seconds, const std::string& when) {
    std::vector<double> before, delta;
    for (auto& r : replicas_) before.push_back(HandledCalls(*r));
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    double sum = 0;
    for (int i = 0; i < kReplicas; ++i) {
      delta.push_back(HandledCalls(*replicas_[i]) - before[i]);
      sum += delta.back();
    }
    const double mean = sum / kReplicas;
    ASSERT_GT(mean, 100) << when << ": too few calls to compare";
    for (int i = 0; i < kReplicas; ++i) {
      EXPECT_LE(std::abs(delta[i] - mean), 0.15 * mean)
          << when << ": replica " << i << " answered " << delta[i] << " calls, the mean is "
          << mean;
    }
  }

  // Restart stops replica `i` with SIGTERM while a stale sender keeps opening connections
  // to it for 0.5 s, waits for its exit, and starts a new process on its port.
  void Restart(int i, Failures* stale_failures, int64_t* stale_calls) {
    Smcryptd& old = *replicas_[i];
    const int port = old.port();
    old.Signal(SIGTERM);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < until) {
      auto stub = v1::CryptoService::NewStub(NewConnectionChannel(old.target()));
      grpc::Status s = CallHash(stub.get());
      ++*stale_calls;
      if (!s.ok()) stale_failures->Add(absl::StrCat("stale sender to replica ", i), s);
    }
    ASSERT_EQ(old.WaitExit(), 0) << old.log();
    if (drain_delay_ != "0") {
      EXPECT_TRUE(absl::StrContains(old.log(), "drain delay of ")) << old.log();
    }
    auto fresh = std::make_unique<Smcryptd>();
    std::vector<std::string> flags = flags_;
    flags.push_back(absl::StrCat("--listen=127.0.0.1:", port));
    ASSERT_TRUE(fresh->Start(flags)) << fresh->log();
    replicas_[i] = std::move(fresh);
    // The client's channel reconnects to the port and sends the new process its share.
    ASSERT_TRUE(WaitFor([&] { return HandledCalls(*replicas_[i]) > 50; }, 40))
        << "replica " << i << " restarted on port " << port << " gets no calls";
  }

  std::vector<std::unique_ptr<Smcryptd>> replicas_;
};

TEST_F(RollingRestartTest, EveryReplicaRestartedInTurnLosesNoCall) {
  grpc::ChannelArguments args;
  args.SetServiceConfigJSON(cli::kServiceConfigJson);
  if (!retries_) args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  auto channel = grpc::CreateCustomChannel(Target(), grpc::InsecureChannelCredentials(), args);
  auto stub = v1::CryptoService::NewStub(channel);
  Failures failures;
  MixedLoad load(stub.get(), &failures);
  load.Start(4);
  ASSERT_TRUE(WaitFor([&] {
    for (auto& r : replicas_) {
      if (HandledCalls(*r) < 50) return false;
    }
    return true;
  }, 30)) << "round_robin does not reach every replica";
  ExpectEvenSpread(3, "before the rollout");

  Failures stale_failures;
  int64_t stale_calls = 0;
  for (int i = 0; i < kReplicas; ++i) {
    Restart(i, &stale_failures, &stale_calls);
    if (HasFatalFailure()) break;
  }
  if (!HasFatalFailure()) ExpectEvenSpread(3, "after the rollout");
  load.Stop();
  std::printf("mixed load: %lld calls, %lld failed; stale sender: %lld calls, %lld failed\n",
              static_cast<long long>(load.calls()), static_cast<long long>(failures.count()),
              static_cast<long long>(stale_calls),
              static_cast<long long>(stale_failures.count()));
  EXPECT_GT(load.calls(), 0);
  EXPECT_EQ(failures.count(), 0) << failures.Describe();
  EXPECT_GT(stale_calls, 0);
  EXPECT_EQ(stale_failures.count(), 0) << stale_failures.Describe();
}

// HealthStatus is grpc.health.v1 Check of `service` at `target` (UNKNOWN if the call
// fails).
HealthCheckResponse::ServingStatus HealthStatus(const std::string& target,
                                                const std::string& service) {
  auto health = grpc::health::v1::Health::NewStub(NewConnectionChannel(target));
  HealthCheckRequest req;
  req.set_service(service);
  HealthCheckResponse resp;
  if (!health->Check(Ctx(5).get(), req, &resp).ok()) return HealthCheckResponse::UNKNOWN;
  return resp.status();
}

// HealthTarget is the --health_listen address the server logged.
std::string HealthTarget(Smcryptd& server) {
  std::smatch m;
  const std::string log = server.log();
  const std::regex re("health \\(grpc.health.v1 only, plaintext\\) on (127\\.0\\.0\\.1:[0-9]+)");
  return std::regex_search(log, m, re) ? m[1].str() : "";
}

TEST(DrainTest, HealthIsNotServingWhileCallsSucceedUntilASecondSigterm) {
  Smcryptd server;
  // A delay far longer than the test: the second SIGTERM ends it.
  ASSERT_TRUE(server.Start({"--drain_delay=10m", "--shutdown_grace=30s",
                            "--health_listen=127.0.0.1:0"}))
      << server.log();
  // The health port is logged just after the two ports Start waits for.
  ASSERT_TRUE(WaitFor([&] { return !HealthTarget(server).empty(); })) << server.log();
  const std::string health_target = HealthTarget(server);
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics, "smcrypt_draining"), 0);
  EXPECT_EQ(MetricValue(metrics, "smcrypt_limit{name=\"drain_delay_seconds\",source=\"flag\"}"),
            600);
  EXPECT_EQ(
      MetricValue(metrics, "smcrypt_limit{name=\"shutdown_grace_seconds\",source=\"flag\"}"), 30);
  for (const std::string& target : {server.target(), health_target}) {
    EXPECT_EQ(HealthStatus(target, "smcrypt.v1.CryptoService"), HealthCheckResponse::SERVING);
  }

  // A stream open at SIGTERM.
  auto stub = server.Stub();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::HashStreamResponse resp;
  auto writer = stub->HashStream(&ctx, &resp);
  v1::HashStreamRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("a");
  ASSERT_TRUE(writer->Write(req));

  server.Signal(SIGTERM);
  for (const std::string& target : {server.target(), health_target}) {
    for (const std::string service : {"", "smcrypt.v1.CryptoService"}) {
      EXPECT_TRUE(WaitFor([&] {
        return HealthStatus(target, service) == HealthCheckResponse::NOT_SERVING;
      })) << target << " '" << service << "' still SERVING after SIGTERM";
    }
  }
  EXPECT_EQ(MetricValue(HttpGet(server.metrics_port(), "/metrics"), "smcrypt_draining"), 1);
  EXPECT_TRUE(absl::StrContains(server.log(), "drain delay: serving on for 10m"))
      << server.log();
  // New connections are still served during the delay, and the stream goes on.
  for (int i = 0; i < 5; ++i) {
    auto fresh = v1::CryptoService::NewStub(NewConnectionChannel(server.target()));
    grpc::Status s = CallHash(fresh.get());
    EXPECT_TRUE(s.ok()) << "during the drain delay: " << s.error_code() << " "
                        << s.error_message();
  }
  req.Clear();
  req.set_data("b");
  ASSERT_TRUE(writer->Write(req));
  EXPECT_TRUE(server.Alive());

  // The second SIGTERM ends the delay: the listener closes, the stream still completes.
  server.Signal(SIGTERM);
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(server.log(), "shutting down"); }))
      << server.log();
  EXPECT_TRUE(absl::StrContains(server.log(), "received SIGTERM again: skipping the remaining"))
      << server.log();
  EXPECT_TRUE(WaitFor([&] {
    auto fresh = v1::CryptoService::NewStub(NewConnectionChannel(server.target()));
    return CallHash(fresh.get()).error_code() == grpc::StatusCode::UNAVAILABLE;
  })) << "new connections are still accepted after the drain delay";
  req.Clear();
  req.set_data("c");
  ASSERT_TRUE(writer->Write(req));
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  // SM3("abc"), GB/T 32905-2016 Appendix A.1.
  EXPECT_EQ(absl::BytesToHexString(resp.digest()),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
  // Well before the 10 minutes of the delay.
  EXPECT_EQ(server.WaitExit(60), 0) << server.log();
}

TEST(DrainTest, StreamOpenAtTheGraceEndIsCancelledAndCounted) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--drain_delay=0", "--shutdown_grace=1s"})) << server.log();
  auto stub = server.Stub();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::HashStreamResponse resp;
  auto writer = stub->HashStream(&ctx, &resp);
  v1::HashStreamRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("a");
  ASSERT_TRUE(writer->Write(req));
  ASSERT_TRUE(WaitFor([&] {
    return MetricValue(HttpGet(server.metrics_port(), "/metrics"),
                       "smcrypt_inflight_requests") == 1;
  }));
  server.Signal(SIGTERM);
  // The stream is never finished by the client: the grace ends, the server cancels it.
  EXPECT_EQ(server.WaitExit(), 0) << server.log();
  grpc::Status s = writer->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_TRUE(absl::StrContains(server.log(),
                                "shutdown grace of 1s over: cancelling 1 RPCs still in flight"))
      << server.log();
}

TEST(DrainTest, BadDrainDelayFailsStartUp) {
  for (const char* bad : {"--drain_delay=-1s", "--drain_delay=11m"}) {
    Smcryptd server;
    EXPECT_FALSE(server.Start({bad})) << bad;
    EXPECT_EQ(server.WaitExit(), 1) << bad << ": " << server.log();
    EXPECT_TRUE(absl::StrContains(server.log(), "--drain_delay must be 0 (none) to 10m"))
        << server.log();
  }
}

// An infinite or huge grace would overflow the shutdown deadline into the past.
TEST(DrainTest, BadShutdownGraceFailsStartUp) {
  for (const char* bad : {"--shutdown_grace=-1s", "--shutdown_grace=inf",
                          "--shutdown_grace=61m", "--shutdown_grace=100000000h"}) {
    Smcryptd server;
    EXPECT_FALSE(server.Start({bad})) << bad;
    EXPECT_EQ(server.WaitExit(), 1) << bad << ": " << server.log();
    EXPECT_TRUE(absl::StrContains(server.log(), "--shutdown_grace must be 0 (cancel at once) to 1h"))
        << server.log();
  }
}

}  // namespace
}  // namespace smcrypt
