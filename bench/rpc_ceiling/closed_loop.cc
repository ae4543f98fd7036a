#include "bench/rpc_ceiling/closed_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace smcrypt::rpc_ceiling {

using Clock = std::chrono::steady_clock;

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return absl::StrCat("CODE_", static_cast<int>(code));
  }
}

int64_t Measurement::ErrorCount() const {
  int64_t n = 0;
  for (const auto& [code, count] : errors) n += count;
  return n;
}

absl::StatusOr<std::vector<std::unique_ptr<grpc::GenericStub>>> OpenChannels(
    const std::string& target, int count, const std::string& name, absl::Duration timeout) {
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  const auto deadline = absl::ToChronoTime(absl::Now() + timeout);
  for (int i = 0; i < count; ++i) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    // A distinct argument gives the channel its own subchannel, hence its own connection.
    args.SetString("smcrypt.rpc_ceiling.channel", absl::StrCat(name, "-", i));
    std::shared_ptr<grpc::Channel> channel =
        grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    if (!channel->WaitForConnected(deadline)) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to ", target, " (", name, " channel ", i, ")"));
    }
    stubs.push_back(std::make_unique<grpc::GenericStub>(std::move(channel)));
  }
  return stubs;
}

// QueueStats is what one completion-queue thread records; only that thread writes it
// while a run is going.
struct QueueStats {
  int64_t ok = 0;
  int64_t calls = 0;
  std::vector<uint64_t> latencies_ns;
  std::map<std::string, int64_t> errors;
};

struct ClosedLoop::RunState {
  const std::string* method = nullptr;
  const grpc::ByteBuffer* request = nullptr;
  LoopOptions options;
  Clock::time_point begin, end;  // the measured window; no call starts at or after `end`
  std::vector<QueueStats> stats;
  std::atomic<int64_t> outstanding{0};
  absl::Mutex mu;
  bool drained ABSL_GUARDED_BY(mu) = false;
};

// Slot is one of the `in_flight` calls; its address is the completion-queue tag.
struct ClosedLoop::Slot {
  RunState* state = nullptr;
  grpc::GenericStub* stub = nullptr;
  grpc::CompletionQueue* queue = nullptr;
  size_t queue_index = 0;
  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> reader;
  grpc::ByteBuffer response;
  grpc::Status status;
  Clock::time_point sent;

  void Start() {
    reader.reset();  // lives in the previous call's arena: before its context goes
    context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoNanoseconds(state->options.timeout));
    response.Clear();
    sent = Clock::now();
    reader = stub->PrepareUnaryCall(context.get(), *state->method, *state->request, queue);
    reader->StartCall();
    reader->Finish(&response, &status, this);
  }

  void OnDone() {
    const Clock::time_point now = Clock::now();
    QueueStats& s = state->stats[queue_index];
    ++s.calls;
    if (status.ok()) {
      if (now >= state->begin && now < state->end) {
        ++s.ok;
        s.latencies_ns.push_back(static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(now - sent).count()));
      }
    } else {
      ++s.errors[CodeName(status.error_code())];
    }
    if (now < state->end) {
      Start();
      return;
    }
    if (state->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      absl::MutexLock lock(&state->mu);
      state->drained = true;
    }
  }
};

ClosedLoop::ClosedLoop(int cq_threads) {
  for (int i = 0; i < std::max(1, cq_threads); ++i) {
    queues_.push_back(std::make_unique<grpc::CompletionQueue>());
  }
  for (size_t i = 0; i < queues_.size(); ++i) threads_.emplace_back([this, i] { Poll(i); });
}

ClosedLoop::~ClosedLoop() {
  for (auto& q : queues_) q->Shutdown();
  for (std::thread& t : threads_) t.join();
}

void ClosedLoop::Poll(size_t index) {
  void* tag = nullptr;
  bool ok = false;
  while (queues_[index]->Next(&tag, &ok)) static_cast<Slot*>(tag)->OnDone();
}

Measurement ClosedLoop::Run(const std::vector<std::unique_ptr<grpc::GenericStub>>& stubs,
                            const std::string& method, const grpc::ByteBuffer& request,
                            const LoopOptions& options) {
  RunState state;
  state.method = &method;
  state.request = &request;
  state.options = options;
  state.stats.resize(queues_.size());
  const size_t n = static_cast<size_t>(std::max(1, options.in_flight));
  const double expected = n * absl::ToDoubleSeconds(options.duration) * 1e5;
  for (QueueStats& s : state.stats) {
    s.latencies_ns.reserve(static_cast<size_t>(std::min(expected, 4e6)) / queues_.size());
  }
  std::vector<Slot> slots(n);
  for (size_t k = 0; k < n; ++k) {
    slots[k].state = &state;
    slots[k].stub = stubs[k % stubs.size()].get();
    slots[k].queue_index = k % queues_.size();
    slots[k].queue = queues_[slots[k].queue_index].get();
  }
  state.outstanding.store(static_cast<int64_t>(n));
  const Clock::time_point start = Clock::now();
  state.begin = start + absl::ToChronoNanoseconds(options.warmup);
  state.end = state.begin + absl::ToChronoNanoseconds(options.duration);
  for (Slot& s : slots) s.Start();
  {
    absl::MutexLock lock(&state.mu);
    state.mu.Await(absl::Condition(&state.drained));
  }

  Measurement m;
  m.seconds = absl::ToDoubleSeconds(options.duration);
  for (QueueStats& s : state.stats) {
    m.ok += s.ok;
    m.calls += s.calls;
    m.latencies_ns.insert(m.latencies_ns.end(), s.latencies_ns.begin(), s.latencies_ns.end());
    for (const auto& [code, count] : s.errors) m.errors[code] += count;
  }
  return m;
}

}  // namespace smcrypt::rpc_ceiling
