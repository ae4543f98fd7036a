#include "clients/smcrypt-load/runner.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace smcrypt::load {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t Nanos(Clock::duration d) {
  const auto n = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
  return n < 0 ? 0 : static_cast<uint64_t>(n);
}

class Runner {
 public:
  Runner(const std::vector<std::shared_ptr<Stub>>& stubs, const Operation& op,
         const RunOptions& options)
      : stubs_(stubs), op_(op), options_(options) {
    const int n = std::max(1, options.concurrency);
    slots_.resize(static_cast<size_t>(n));
    for (size_t i = 0; i < slots_.size(); ++i) {
      slots_[i].channel = i % stubs_.size();
      free_.push_back(&slots_[i]);
    }
  }

  RunResult Go();

 private:
  struct Slot {
    size_t channel = 0;
    size_t call_index = 0;
    // Two contexts alternate, so a context is never destroyed inside its own callback.
    std::unique_ptr<grpc::ClientContext> ctx[2];
    int parity = 0;
    Clock::time_point intended, sent;
  };

  // Claim counts one more operation against max_ops; false when the budget is spent.
  bool Claim() {
    return options_.max_ops <= 0 || issued_.fetch_add(1) < options_.max_ops;
  }

  void BeginOp(Slot* s, Clock::time_point intended) {
    s->intended = intended;
    s->sent = Clock::now();
    s->call_index = 0;
    {
      absl::MutexLock lock(&mu_);
      ++inflight_;
      result_.max_inflight = std::max<int64_t>(result_.max_inflight, inflight_);
    }
    IssueCall(s);
  }

  void IssueCall(Slot* s) {
    s->parity ^= 1;
    auto& ctx = s->ctx[s->parity];
    ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
    op_.calls[s->call_index](*stubs_[s->channel], ctx.get(),
                             [this, s](grpc::Status status) { OnCallDone(s, status); });
  }

  void OnCallDone(Slot* s, const grpc::Status& status) {
    rpcs_.fetch_add(1, std::memory_order_relaxed);
    if (status.ok() && ++s->call_index < op_.calls.size()) {
      IssueCall(s);
      return;
    }
    const Clock::time_point now = Clock::now();
    {
      absl::MutexLock lock(&mu_);
      --inflight_;
      last_done_ = now;
      if (status.ok()) {
        ++result_.ops_ok;
        result_.payload_bytes += static_cast<double>(op_.payload_bytes);
        result_.latency.Record(Nanos(now - s->intended));
        result_.service.Record(Nanos(now - s->sent));
      } else {
        ++result_.ops_failed;
        ++result_.errors_by_code[CodeName(status.error_code())];
        if (result_.first_error.empty()) {
          result_.first_error = absl::StrCat(CodeName(status.error_code()), ": ",
                                             status.error_message());
        }
      }
    }
    if (options_.rate > 0) {
      absl::MutexLock lock(&mu_);
      free_.push_back(s);
      return;
    }
    StartNext(s);
  }

  // Closed loop: the slot starts its next operation, or retires.
  void StartNext(Slot* s) {
    if (!stop_.load() && Claim()) {
      BeginOp(s, Clock::now());
      return;
    }
    absl::MutexLock lock(&mu_);
    ++retired_;
  }

  void Pace();
  void Progress(double elapsed);

  const std::vector<std::shared_ptr<Stub>>& stubs_;
  const Operation& op_;
  const RunOptions& options_;
  std::vector<Slot> slots_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> issued_{0};
  std::atomic<int64_t> rpcs_{0};
  absl::Mutex mu_;
  std::vector<Slot*> free_ ABSL_GUARDED_BY(mu_);  // open loop: idle slots
  int64_t inflight_ ABSL_GUARDED_BY(mu_) = 0;
  size_t retired_ ABSL_GUARDED_BY(mu_) = 0;       // closed loop: slots that stopped
  bool pacer_done_ ABSL_GUARDED_BY(mu_) = false;
  Clock::time_point start_, last_done_ ABSL_GUARDED_BY(mu_);
  RunResult result_ ABSL_GUARDED_BY(mu_);
};

void Runner::Pace() {
  const double period_ns = 1e9 / options_.rate;
  for (int64_t i = 0;; ++i) {
    const Clock::time_point intended =
        start_ + std::chrono::nanoseconds(static_cast<int64_t>(i * period_ns));
    if (stop_.load() || !Claim()) break;
    std::this_thread::sleep_until(intended);
    Slot* s = nullptr;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this] { return !free_.empty() || stop_.load(); };
      mu_.Await(absl::Condition(&ready));
      if (free_.empty()) break;
      s = free_.back();
      free_.pop_back();
    }
    BeginOp(s, intended);
  }
  absl::MutexLock lock(&mu_);
  pacer_done_ = true;
}

void Runner::Progress(double elapsed) {
  int64_t ok, failed, inflight;
  {
    absl::MutexLock lock(&mu_);
    ok = result_.ops_ok;
    failed = result_.ops_failed;
    inflight = inflight_;
  }
  const double total = absl::ToDoubleSeconds(options_.duration);
  std::string when = total > 0 ? absl::StrFormat("%5.1fs/%.0fs", elapsed, total)
                               : absl::StrFormat("%5.1fs %lld/%lld ops", elapsed,
                                                 static_cast<long long>(ok + failed),
                                                 static_cast<long long>(options_.max_ops));
  std::fprintf(stderr, "\r\033[K%s  %s  %.0f ops/s  in flight %lld  ok %lld  errors %lld",
               options_.label.c_str(), when.c_str(), elapsed > 0 ? ok / elapsed : 0.0,
               static_cast<long long>(inflight), static_cast<long long>(ok),
               static_cast<long long>(failed));
  std::fflush(stderr);
}

RunResult Runner::Go() {
  const bool server = !options_.metrics_url.empty();
  std::optional<ServerSample> before;
  std::string server_error;
  if (server) {
    absl::StatusOr<ServerSample> s = ScrapeServer(options_.metrics_url);
    if (s.ok()) {
      before = *s;
    } else {
      server_error = std::string(s.status().message());
    }
  }
  double inflight_peak = 0, rss_peak = before ? before->resident_bytes : 0;

  start_ = Clock::now();
  {
    absl::MutexLock lock(&mu_);
    last_done_ = start_;
  }
  std::thread pacer;
  if (options_.rate > 0) {
    pacer = std::thread([this] { Pace(); });
  } else {
    // Closed loop: every slot starts one operation.
    for (Slot& s : slots_) {
      if (Claim()) {
        BeginOp(&s, Clock::now());
      } else {
        absl::MutexLock lock(&mu_);
        ++retired_;
      }
    }
  }
  const absl::Time t0 = absl::Now();
  Clock::time_point next_sample = Clock::now();
  for (;;) {
    bool finished;
    {
      absl::MutexLock lock(&mu_);
      auto done = [this] {
        return options_.rate > 0 ? pacer_done_ && inflight_ == 0 : retired_ == slots_.size();
      };
      mu_.AwaitWithTimeout(absl::Condition(&done), absl::Milliseconds(250));
      finished = done();
    }
    if (finished) break;
    const double elapsed = absl::ToDoubleSeconds(absl::Now() - t0);
    if (options_.duration > absl::ZeroDuration() && elapsed >= absl::ToDoubleSeconds(options_.duration)) {
      stop_.store(true);
      absl::MutexLock lock(&mu_);  // unlocking re-evaluates the pacer's wait
    }
    if (Clock::now() >= next_sample) {
      next_sample = Clock::now() + std::chrono::seconds(1);
      if (server && before) {
        absl::StatusOr<ServerSample> s = ScrapeServer(options_.metrics_url, absl::Seconds(2));
        if (s.ok()) {
          inflight_peak = std::max(inflight_peak, s->inflight);
          rss_peak = std::max(rss_peak, s->resident_bytes);
        }
      }
      if (options_.progress) Progress(elapsed);
    }
  }
  stop_.store(true);
  {
    // Wake a pacer waiting for a free slot.
    absl::MutexLock lock(&mu_);
  }
  if (pacer.joinable()) pacer.join();
  if (options_.progress) std::fprintf(stderr, "\r\033[K");

  RunResult r;
  {
    absl::MutexLock lock(&mu_);
    r = std::move(result_);
    r.seconds = std::chrono::duration<double>(last_done_ - start_).count();
  }
  r.rpcs = rpcs_.load();
  if (server && before) {
    // The server counts an RPC before it sends the status, so the counters are complete
    // once the last reply arrived; poll briefly in case the scrape races the exporter.
    absl::StatusOr<ServerSample> after;
    for (int i = 0; i < 20; ++i) {
      after = ScrapeServer(options_.metrics_url);
      if (!after.ok() || after->handled_total - before->handled_total >= r.rpcs) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (after.ok()) {
      r.have_server = true;
      r.server_before = *before;
      r.server_after = *after;
      r.server_inflight_peak = std::max(inflight_peak, after->inflight);
      r.server_rss_peak = std::max(rss_peak, after->resident_bytes);
    } else {
      server_error = std::string(after.status().message());
    }
  }
  r.server_error = server_error;
  return r;
}

}  // namespace

std::string CodeName(grpc::StatusCode code) {
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? absl::StrCat("CODE_", static_cast<int>(code)) : name;
}

RunResult Run(const std::vector<std::shared_ptr<Stub>>& stubs, const Operation& op,
              const RunOptions& options) {
  Runner runner(stubs, op, options);
  return runner.Go();
}

}  // namespace smcrypt::load
