// Admission's accounting (server/service/admission.h) without gRPC (label unit): the
// default shares of --max_inflight_bytes, the stream and connection limits and their
// "holds nothing else" rules, the OVERLOADED statuses naming the limit, charges released
// on close whatever path a call took, connection entries removed with their last call,
// and threads admitting and closing calls at once leaving nothing charged.
#include "server/service/admission.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/error_reason.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt::server {
namespace {

using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;

std::chrono::system_clock::time_point Later() {
  return std::chrono::system_clock::now() + std::chrono::seconds(60);
}

// LimitOf: the `limit` metadata of an OVERLOADED status ("" for another reason).
std::string LimitOf(const absl::Status& s) {
  StatusReason r = ReasonOf(s);
  if (r.reason != reason::kOverloaded) return "";
  for (const auto& [k, v] : r.metadata) {
    if (k == "limit") return v;
  }
  return "";
}

class CountingObserver final : public AdmissionObserver {
 public:
  void OnOverload(OverloadLimit limit) override { ++refusals[static_cast<int>(limit)]; }
  void OnConnections(int delta) override { connections += delta; }
  std::atomic<int> refusals[kNumOverloadLimits] = {};
  std::atomic<int> connections{0};
};

class AdmissionTest : public ::testing::Test {
 protected:
  // Make: an Admission with these byte limits (--max_inflight far away).
  std::unique_ptr<Admission> Make(uint64_t budget, uint64_t stream, uint64_t connection) {
    return std::make_unique<Admission>(&inflight_,
                                       AdmissionLimits{1 << 20, budget, stream, connection},
                                       &observer_);
  }
  static absl::Status Admit(const Admission& a, const std::string& peer, bool stream,
                            uint64_t bytes, CallCharge* charge) {
    return a.Admit(Later(), [&] { return peer; }, stream, bytes, charge);
  }

  std::atomic<int64_t> inflight_{1};
  CountingObserver observer_;
};

TEST(FairSharesTest, DefaultsAreSharesOfTheBudgetAndFitMaximalMessages) {
  // The defaults: 128 MiB budget, 4 MiB messages. budget / 8 = 16 MiB is less than five
  // maximal messages, so the stream share is 20 MiB; the connection share is budget / 4.
  FairShares d = DefaultFairShares(128 * kMiB, 4 * kMiB);
  EXPECT_EQ(d.stream, 20 * kMiB);
  EXPECT_EQ(d.connection, 32 * kMiB);
  // A large budget: plain shares.
  d = DefaultFairShares(1024 * kMiB, 4 * kMiB);
  EXPECT_EQ(d.stream, 128 * kMiB);
  EXPECT_EQ(d.connection, 256 * kMiB);
  // A budget of one message: both shares are the whole budget.
  d = DefaultFairShares(4 * kMiB, 4 * kMiB);
  EXPECT_EQ(d.stream, 4 * kMiB);
  EXPECT_EQ(d.connection, 4 * kMiB);
  // The connection share is never below the stream share.
  d = DefaultFairShares(64 * kMiB, 4 * kMiB);
  EXPECT_EQ(d.stream, 20 * kMiB);
  EXPECT_EQ(d.connection, 20 * kMiB);
  // No budget: no shares.
  d = DefaultFairShares(0, 4 * kMiB);
  EXPECT_EQ(d.stream, 0u);
  EXPECT_EQ(d.connection, 0u);
}

TEST_F(AdmissionTest, StreamLimitRefusesAStreamThatHoldsSomethingAndNamesTheFlag) {
  auto a = Make(100 * kMiB, 4 * kMiB, 0);
  CallCharge stream;
  ASSERT_THAT(Admit(*a, "ipv4:10.0.0.1:1000", true, 0, &stream), IsOk());
  // A stream holding nothing takes a message of any size (three times 4 MiB here).
  ASSERT_THAT(stream.TryAdd(12 * kMiB), IsOk());
  stream.Set(3 * kMiB);  // what it keeps once the message is handled
  ASSERT_THAT(stream.TryAdd(1 * kMiB), IsOk());  // 4 MiB: at the limit
  absl::Status s = stream.TryAdd(1);
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted,
                          HasSubstr("--max_stream_inflight_bytes")));
  EXPECT_EQ(LimitOf(s), "max_stream_inflight_bytes");
  EXPECT_EQ(stream.held(), 4 * kMiB) << "a refused message charges nothing";
  EXPECT_EQ(a->inflight_bytes(), 4 * kMiB);
  EXPECT_EQ(a->refusals(OverloadLimit::kStreamBytes), 1u);
  EXPECT_EQ(observer_.refusals[static_cast<int>(OverloadLimit::kStreamBytes)], 1);
  // A unary call is not held to the stream limit.
  CallCharge unary;
  EXPECT_THAT(Admit(*a, "ipv4:10.0.0.1:1000", false, 8 * kMiB, &unary), IsOk());
  stream.Close();
  unary.Close();
  EXPECT_EQ(a->inflight_bytes(), 0u);
}

TEST_F(AdmissionTest, ConnectionLimitCoversUnaryCallsAndStreamsOfOneConnectionOnly) {
  auto a = Make(100 * kMiB, 0, 10 * kMiB);
  const std::string peer = "ipv4:10.0.0.1:1000";
  CallCharge first, stream, over, other, after;
  // The connection's first call fits whatever its size (the lone-call rule).
  ASSERT_THAT(Admit(*a, peer, false, 12 * kMiB, &first), IsOk());
  EXPECT_EQ(a->connections(), 1);
  first.Set(6 * kMiB);
  ASSERT_THAT(Admit(*a, peer, true, 0, &stream), IsOk());
  ASSERT_THAT(stream.TryAdd(4 * kMiB), IsOk());  // 10 MiB: at the limit
  absl::Status s = stream.TryAdd(1);
  EXPECT_EQ(LimitOf(s), "max_connection_inflight_bytes") << s;
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kResourceExhausted,
                          HasSubstr("--max_connection_inflight_bytes")));
  s = Admit(*a, peer, false, 1, &over);
  EXPECT_EQ(LimitOf(s), "max_connection_inflight_bytes") << s;
  EXPECT_EQ(a->refusals(OverloadLimit::kConnectionBytes), 2u);
  // Another connection is not affected.
  EXPECT_THAT(Admit(*a, "ipv4:10.0.0.1:1001", false, 9 * kMiB, &other), IsOk());
  EXPECT_EQ(a->connections(), 2);
  EXPECT_EQ(observer_.connections, 2);
  // The refused call is closed like the others (its reactor's OnDone).
  over.Close();
  first.Close();
  // What the first call held is free again for the connection.
  EXPECT_THAT(Admit(*a, peer, false, 6 * kMiB, &after), IsOk());
  stream.Close();
  after.Close();
  EXPECT_EQ(a->connections(), 1);
  other.Close();
  EXPECT_EQ(a->connections(), 0);
  EXPECT_EQ(observer_.connections, 0);
  EXPECT_EQ(a->inflight_bytes(), 0u);
}

TEST_F(AdmissionTest, ARefusalByTheBudgetLeavesTheConnectionUncharged) {
  auto a = Make(10 * kMiB, 0, 8 * kMiB);
  CallCharge big, small, refused;
  ASSERT_THAT(Admit(*a, "ipv4:10.0.0.2:1", false, 8 * kMiB, &big), IsOk());
  ASSERT_THAT(Admit(*a, "ipv4:10.0.0.3:1", false, 1 * kMiB, &small), IsOk());
  absl::Status s = Admit(*a, "ipv4:10.0.0.3:1", false, 2 * kMiB, &refused);
  EXPECT_EQ(LimitOf(s), "max_inflight_bytes") << s;
  refused.Close();
  // The connection holds only its admitted call: 7 MiB more fit it and the budget
  // once the big call is gone.
  big.Close();
  CallCharge fits;
  EXPECT_THAT(Admit(*a, "ipv4:10.0.0.3:1", false, 7 * kMiB, &fits), IsOk());
  small.Close();
  fits.Close();
  EXPECT_EQ(a->inflight_bytes(), 0u);
  EXPECT_EQ(a->connections(), 0);
}

TEST_F(AdmissionTest, MaxInflightRefusalJoinsNoConnection) {
  std::atomic<int64_t> inflight{5};
  Admission a(&inflight, AdmissionLimits{4, 0, 0, 1 * kMiB}, &observer_);
  CallCharge c;
  absl::Status s = a.Admit(Later(), [] { return std::string("ipv4:10.0.0.1:1"); }, false, 10, &c);
  EXPECT_EQ(LimitOf(s), "max_inflight") << s;
  EXPECT_EQ(a.connections(), 0);
  EXPECT_EQ(a.refusals(OverloadLimit::kInflight), 1u);
  c.Close();
  EXPECT_EQ(a.inflight_bytes(), 0u);
}

TEST_F(AdmissionTest, WithTheLimitsOffNoConnectionIsTracked) {
  auto a = Make(0, 0, 0);
  bool asked = false;
  CallCharge c;
  ASSERT_THAT(a->Admit(Later(), [&] { asked = true; return std::string("x"); }, true,
                       100 * kMiB, &c),
              IsOk());
  EXPECT_FALSE(asked) << "the peer is read only for the connection limit";
  EXPECT_THAT(c.TryAdd(100 * kMiB), IsOk());
  EXPECT_EQ(a->connections(), 0);
  EXPECT_EQ(a->inflight_bytes(), 200 * kMiB);
  // The destructor closes a charge that was not closed.
  {
    CallCharge scoped;
    ASSERT_THAT(Admit(*a, "p", false, 1, &scoped), IsOk());
  }
  c.Close();
  c.Close();  // a second close does nothing
  EXPECT_EQ(a->inflight_bytes(), 0u);
}

// Refusals by a share are logged at most once per share every 10 s: a burst of them
// writes one line (the first), naming the flag and the peer.
TEST_F(AdmissionTest, ShareRefusalsAreLoggedOncePerInterval) {
  auto a = Make(100 * kMiB, 0, 1 * kMiB);
  CallCharge held;
  ASSERT_THAT(Admit(*a, "ipv4:10.9.9.9:7", false, 1 * kMiB, &held), IsOk());
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 100; ++i) {
    CallCharge refused;
    EXPECT_EQ(LimitOf(Admit(*a, "ipv4:10.9.9.9:7", false, 1, &refused)),
              "max_connection_inflight_bytes");
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(a->refusals(OverloadLimit::kConnectionBytes), 100u);
  size_t lines = 0;
  for (size_t at = log.find("over --max_connection_inflight_bytes"); at != std::string::npos;
       at = log.find("over --max_connection_inflight_bytes", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 1u) << log;
  EXPECT_NE(log.find("refused 1 call(s) or stream message(s)"), std::string::npos) << log;
  EXPECT_NE(log.find("(peer ipv4:10.9.9.9:7)"), std::string::npos) << log;
}

// Many short connections: each entry goes with its last call, so the ledger does not grow.
TEST_F(AdmissionTest, EntriesOfShortConnectionsAreRemoved) {
  auto a = Make(100 * kMiB, 0, 1 * kMiB);
  for (int i = 0; i < 10000; ++i) {
    CallCharge c;
    ASSERT_THAT(Admit(*a, absl::StrCat("ipv4:10.0.", i / 250, ".", i % 250, ":40000"), false,
                      4096, &c),
                IsOk());
    EXPECT_EQ(a->connections(), 1);
    c.Close();
  }
  EXPECT_EQ(a->connections(), 0);
  EXPECT_EQ(observer_.connections, 0);
}

// Threads admit, resize and close calls of 16 connections at once; some calls are
// refused. Afterwards nothing is charged and no connection is left.
TEST_F(AdmissionTest, ConcurrentCallsLeaveNothingCharged) {
  auto a = Make(4 * kMiB, 256 << 10, 512 << 10);
  std::atomic<int> ok{0}, refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) {
        const std::string peer = absl::StrCat("ipv4:127.0.0.1:", 5000 + (t * 7 + i) % 16);
        CallCharge c;
        const bool stream = i % 3 == 0;
        absl::Status s = Admit(*a, peer, stream, stream ? 0 : 64 << 10, &c);
        if (s.ok() && stream) s = c.TryAdd(96 << 10);
        if (s.ok() && stream) s = c.TryAdd(96 << 10);
        if (s.ok()) {
          ++ok;
          c.Set(i % 2 == 0 ? 8 << 10 : 128 << 10);
        } else {
          ++refused;
        }
        c.Close();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok + refused, 40000);
  EXPECT_GT(ok, 0);
  EXPECT_EQ(a->inflight_bytes(), 0u);
  EXPECT_EQ(a->connections(), 0);
  EXPECT_EQ(observer_.connections, 0);
  EXPECT_LE(a->peak_inflight_bytes(), 4 * kMiB + (128 << 10) * 8)
      << "at most the budget, plus what Set added past it after the work";
}

}  // namespace
}  // namespace smcrypt::server
