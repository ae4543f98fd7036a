#include "clients/smcrypt-load/runner.h"

#include <sys/resource.h>
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

struct ServerWatch;

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
  // Operations of the warm-up are not counted.
  bool Claim() {
    return options_.max_ops <= 0 || !measuring_.load() || issued_.fetch_add(1) < options_.max_ops;
  }

  // BeginOp starts an operation on `s`, or parks `s` while the load pauses at the end of
  // the warm-up. The check and the in-flight count change under one lock, so once a pause
  // has drained no operation starts until StartMeasuring resumes the parked slots.
  void BeginOp(Slot* s, Clock::time_point intended) {
    {
      absl::MutexLock lock(&mu_);
      if (pausing_) {
        parked_.push_back(s);
        return;
      }
      ++inflight_;
      result_.max_inflight = std::max<int64_t>(result_.max_inflight, inflight_);
    }
    s->intended = intended;
    s->sent = Clock::now();
    s->call_index = 0;
    IssueCall(s);
  }

  void IssueCall(Slot* s) {
    s->parity ^= 1;
    auto& ctx = s->ctx[s->parity];
    ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
    for (const auto& [key, value] : options_.metadata) ctx->AddMetadata(key, value);
    op_.calls[s->call_index](*stubs_[s->channel], ctx.get(),
                             [this, s](grpc::Status status) { OnCallDone(s, status); });
  }

  void OnCallDone(Slot* s, const grpc::Status& status) {
    rpcs_.fetch_add(op_.rpcs_per_call, std::memory_order_relaxed);
    if (status.ok() && ++s->call_index < op_.calls.size()) {
      IssueCall(s);
      return;
    }
    const Clock::time_point now = Clock::now();
    {
      absl::MutexLock lock(&mu_);
      --inflight_;
      if (s->intended < measure_start_) {
        // Started in the warm-up: not part of the figures.
        ++result_.warmup_ops;
      } else if (status.ok()) {
        last_done_ = now;
        ++result_.ops_ok;
        result_.payload_bytes += static_cast<double>(op_.payload_bytes);
        result_.latency.Record(Nanos(now - s->intended));
        result_.service.Record(Nanos(now - s->sent));
      } else {
        last_done_ = now;
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
  // Launch starts the run: the pacer thread (open loop, returned) or one operation per
  // slot (closed loop), with the measured window open now unless there is a warm-up.
  std::thread Launch(bool warmup);
  // Supervise waits for the run to end: it ends the warm-up once the load has drained,
  // stops the run at the end of the measured duration, and samples the server and prints
  // the progress about once a second.
  void Supervise(ServerWatch& server);

  const std::vector<std::shared_ptr<Stub>>& stubs_;
  const Operation& op_;
  const RunOptions& options_;
  std::vector<Slot> slots_;
  // StartMeasuring ends the warm-up: the figures so far are dropped, the measured window
  // starts now, and the slots parked by the pause start their next operations.
  void StartMeasuring(Clock::time_point now);
  // Intended is the scheduled start of open-loop arrival `i`, from the start of the run.
  std::chrono::nanoseconds Intended(int64_t i) const;

  std::atomic<bool> stop_{false};
  std::atomic<bool> measuring_{false};
  std::atomic<int64_t> issued_{0};
  std::atomic<int64_t> rpcs_{0};
  absl::Mutex mu_;
  std::vector<Slot*> free_ ABSL_GUARDED_BY(mu_);  // open loop: idle slots
  int64_t inflight_ ABSL_GUARDED_BY(mu_) = 0;
  size_t retired_ ABSL_GUARDED_BY(mu_) = 0;       // closed loop: slots that stopped
  bool pacer_done_ ABSL_GUARDED_BY(mu_) = false;
  // The end of the warm-up: no operation starts while pausing_, so the load drains, the
  // server is scraped with nothing in flight, and the measured window's request count is
  // exactly the server's. Closed loop: slots park in parked_; open loop: the pacer waits.
  bool pausing_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Slot*> parked_ ABSL_GUARDED_BY(mu_);
  // Open loop: the schedule's shift by the pause, so arrivals resume at the rate.
  Clock::duration pause_shift_ ABSL_GUARDED_BY(mu_) = Clock::duration::zero();
  Clock::time_point start_, last_done_ ABSL_GUARDED_BY(mu_);
  // Operations whose intended start is earlier belong to the warm-up; the far past
  // when there is none.
  Clock::time_point measure_start_ ABSL_GUARDED_BY(mu_) = Clock::time_point::min();
  double cpu_at_start_ = 0;
  RunResult result_ ABSL_GUARDED_BY(mu_);
};

std::chrono::nanoseconds Runner::Intended(int64_t i) const {
  const double r0 = options_.rate;
  const double w = absl::ToDoubleSeconds(options_.warmup);
  const double warm_arrivals = std::floor(r0 * w);
  double t;
  if (static_cast<double>(i) < warm_arrivals || options_.rate_end <= 0 ||
      options_.duration <= absl::ZeroDuration()) {
    t = static_cast<double>(i) / r0;
  } else {
    // Rate r(t) = r0 + k t after the warm-up: arrivals n(t) = r0 t + k t^2 / 2, solved for t.
    const double j = static_cast<double>(i) - warm_arrivals;
    const double k = (options_.rate_end - r0) / absl::ToDoubleSeconds(options_.duration);
    const double ramp = k == 0 ? j / r0 : (std::sqrt(std::max(0.0, r0 * r0 + 2 * k * j)) - r0) / k;
    t = warm_arrivals / r0 + ramp;
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(t * 1e9));
}

void Runner::StartMeasuring(Clock::time_point now) {
  std::vector<Slot*> parked;
  {
    absl::MutexLock lock(&mu_);
    const int64_t warm = result_.warmup_ops;
    const int64_t peak = result_.max_inflight;
    result_ = RunResult();
    result_.warmup_ops = warm;
    result_.max_inflight = peak;
    measure_start_ = now;
    last_done_ = now;
    result_.warmup_rpcs = rpcs_.exchange(0);
    cpu_at_start_ = ProcessCpuSeconds();
    measuring_.store(true);
    pausing_ = false;
    parked.swap(parked_);
  }
  for (Slot* s : parked) StartNext(s);
}

void Runner::Pace() {
  const bool warmup = options_.warmup > absl::ZeroDuration();
  const int64_t warm_arrivals =
      static_cast<int64_t>(std::floor(options_.rate * absl::ToDoubleSeconds(options_.warmup)));
  for (int64_t i = 0;; ++i) {
    if (warmup && i == warm_arrivals) {
      // The first measured arrival: pause, let Go() scrape the drained server, and move
      // the rest of the schedule to start at the measured window.
      absl::MutexLock lock(&mu_);
      pausing_ = true;
      auto resumed = [this] { return !pausing_ || stop_.load(); };
      mu_.Await(absl::Condition(&resumed));
      const Clock::time_point next = start_ + pause_shift_ + Intended(i);
      if (measure_start_ > next) pause_shift_ += measure_start_ - next;
    }
    if (stop_.load() || !Claim()) break;
    Clock::time_point intended;
    {
      absl::MutexLock lock(&mu_);
      intended = start_ + pause_shift_ + Intended(i);
      // The schedule ends with the measured duration.
      if (measuring_.load() && options_.duration > absl::ZeroDuration() &&
          intended >= measure_start_ + absl::ToChronoNanoseconds(options_.duration)) {
        break;
      }
    }
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

// ServerWatch is the server's side of a run with a metrics URL: its counters at the start
// of the measured window, the peaks sampled during it, and why a scrape failed.
struct ServerWatch {
  std::string url;  // empty: no server figures
  std::optional<ServerSample> before;
  std::string error;
  double inflight_peak = 0, rss_peak = 0;

  // Begin takes the counters at the start of the measured window.
  void Begin() {
    if (url.empty()) return;
    absl::StatusOr<ServerSample> s = ScrapeServer(url);
    if (s.ok()) {
      before = *s;
      error.clear();
      rss_peak = before->resident_bytes;
      inflight_peak = 0;
    } else {
      before.reset();
      error = std::string(s.status().message());
    }
  }

  // Sample updates the peaks (about once a second while the window runs).
  void Sample() {
    if (url.empty() || !before) return;
    absl::StatusOr<ServerSample> s = ScrapeServer(url, absl::Seconds(2));
    if (s.ok()) {
      inflight_peak = std::max(inflight_peak, s->inflight);
      rss_peak = std::max(rss_peak, s->resident_bytes);
    }
  }

  // End takes the counters after the run and adds the server's figures to `r`.
  void End(RunResult& r) {
    if (!url.empty() && before) {
      // The server counts an RPC before it sends the status, so the counters are complete
      // once the last reply arrived; poll briefly in case the scrape races the exporter.
      absl::StatusOr<ServerSample> after;
      for (int i = 0; i < 20; ++i) {
        after = ScrapeServer(url);
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
        error = std::string(after.status().message());
      }
    }
    r.server_error = error;
  }
};

std::thread Runner::Launch(bool warmup) {
  start_ = Clock::now();
  if (warmup) {
    absl::MutexLock lock(&mu_);
    measure_start_ = Clock::time_point::max();
    last_done_ = start_;
  } else {
    StartMeasuring(start_);
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
  return pacer;
}

void Runner::Supervise(ServerWatch& server) {
  const absl::Time t0 = absl::Now();
  absl::Time measured_from = t0;
  Clock::time_point next_sample = Clock::now();
  for (;;) {
    bool finished, drained;
    const bool warming = !measuring_.load();
    if (warming && options_.rate <= 0 &&
        absl::Now() - t0 >= options_.warmup) {
      // Closed loop: the warm-up's time is up; slots park as their operations end.
      absl::MutexLock lock(&mu_);
      pausing_ = true;
    }
    {
      absl::MutexLock lock(&mu_);
      auto done = [this] {
        return options_.rate > 0 ? pacer_done_ && inflight_ == 0 : retired_ == slots_.size();
      };
      auto wake = [&] { return done() || (warming && pausing_ && inflight_ == 0); };
      // Wake at the end of the warm-up or of the measured duration, not up to 250 ms late.
      absl::Duration wait = absl::Milliseconds(250);
      if (warming && options_.rate <= 0 && !pausing_) {
        wait = std::clamp(t0 + options_.warmup - absl::Now(), absl::ZeroDuration(), wait);
      } else if (!warming && options_.duration > absl::ZeroDuration()) {
        wait = std::clamp(measured_from + options_.duration - absl::Now(), absl::ZeroDuration(),
                          wait);
      }
      mu_.AwaitWithTimeout(absl::Condition(&wake), wait);
      finished = done();
      drained = pausing_ && inflight_ == 0;
    }
    if (finished) break;
    if (warming) {
      if (!drained) {
        if (options_.progress) Progress(absl::ToDoubleSeconds(absl::Now() - t0));
        continue;
      }
      // The warm-up is over and nothing is in flight: the server's counters and the
      // figures start from here.
      server.Begin();
      measured_from = absl::Now();
      StartMeasuring(Clock::now());
    }
    double elapsed = absl::ToDoubleSeconds(absl::Now() - measured_from);
    if (options_.duration > absl::ZeroDuration() && elapsed >= absl::ToDoubleSeconds(options_.duration)) {
      stop_.store(true);
      absl::MutexLock lock(&mu_);  // unlocking re-evaluates the pacer's wait
    }
    if (Clock::now() >= next_sample) {
      next_sample = Clock::now() + std::chrono::seconds(1);
      server.Sample();
      if (options_.progress) Progress(elapsed);
    }
  }
}

RunResult Runner::Go() {
  ServerWatch server;
  server.url = options_.metrics_url;
  const bool warmup = options_.warmup > absl::ZeroDuration();
  if (!warmup) server.Begin();
  std::thread pacer = Launch(warmup);
  Supervise(server);
  stop_.store(true);
  {
    // Wake a pacer waiting for a free slot.
    absl::MutexLock lock(&mu_);
  }
  if (pacer.joinable()) pacer.join();
  const double cpu_at_end = ProcessCpuSeconds();
  if (options_.progress) std::fprintf(stderr, "\r\033[K");

  RunResult r;
  {
    absl::MutexLock lock(&mu_);
    r = std::move(result_);
    if (measuring_.load()) {
      r.seconds = std::chrono::duration<double>(last_done_ - measure_start_).count();
      r.warmup_seconds = std::chrono::duration<double>(measure_start_ - start_).count();
      r.client_cpu_seconds = cpu_at_end - cpu_at_start_;
    }
  }
  r.rpcs = rpcs_.load();
  server.End(r);
  return r;
}

}  // namespace

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

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
