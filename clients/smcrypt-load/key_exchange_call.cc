// key_exchange_call.cc — StartKeyExchangeCall: the two streams of one SM2 key exchange
// on gRPC's callback API, each side's messages relayed to the other.
#include "clients/smcrypt-load/key_exchange_call.h"

#include <deque>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"

namespace smcrypt::load {
namespace {

namespace v1 = smcrypt::v1;

// KeyExchange is one exchange (StartKeyExchangeCall); the object deletes itself after
// both streams' OnDone.
class KeyExchange {
 public:
  using Params = KeyExchangeCallParams;

  static void Start(const Params& p, Stub& stub, grpc::ClientContext* ctx,
                    std::function<void(grpc::Status)> done) {
    auto* x = new KeyExchange(p, stub, ctx, std::move(done));
    std::lock_guard<std::mutex> lock(x->mu_);
    v1::KeyExchangeRequest first;
    *first.mutable_params() = p.initiator;
    x->Send(kA, std::move(first));
    x->Launch(kA);
    x->Launch(kB);  // its first message (params, R_A) follows A's first response
  }

 private:
  enum Side { kA = 0, kB = 1 };

  class Stream final : public grpc::ClientBidiReactor<v1::KeyExchangeRequest,
                                                      v1::KeyExchangeResponse> {
   public:
    Stream(KeyExchange* x, Side side) : x_(x), side_(side) {}
    void OnWriteDone(bool ok) override { x_->WriteDone(side_, ok); }
    void OnWritesDoneDone(bool ok) override { x_->WriteDone(side_, ok); }
    void OnReadDone(bool ok) override { x_->ReadDone(side_, ok); }
    void OnDone(const grpc::Status& s) override { x_->StreamDone(side_, s); }

    v1::KeyExchangeResponse response;

   private:
    KeyExchange* x_;
    Side side_;
  };

  // One side's stream: its pending writes (nullopt: writes-done), whether a write is in
  // flight, and whether the stream was started and has ended.
  struct Leg {
    Leg(KeyExchange* x, Side side) : stream(x, side) {}
    Stream stream;
    grpc::ClientContext* ctx = nullptr;
    std::deque<std::optional<v1::KeyExchangeRequest>> queue;
    std::optional<v1::KeyExchangeRequest> writing;
    bool write_in_flight = false;
    bool started = false;
    bool closed = false;  // writes-done queued
    bool done = false;
    grpc::Status status;
  };

  KeyExchange(const Params& p, Stub& stub, grpc::ClientContext* ctx,
              std::function<void(grpc::Status)> done)
      : params_(p), stub_(stub), done_(std::move(done)), legs_{Leg(this, kA), Leg(this, kB)} {
    legs_[kA].ctx = ctx;
    b_ctx_.set_deadline(ctx->deadline());
    for (const auto& [key, value] : p.metadata) b_ctx_.AddMetadata(key, value);
    legs_[kB].ctx = &b_ctx_;
  }

  // Launch starts `side`'s stream with a read, and the writes queued so far (mu_ held).
  void Launch(Side side) {
    Leg& leg = legs_[side];
    stub_.async()->KeyExchange(leg.ctx, &leg.stream);
    leg.started = true;
    Pump(side);
    leg.stream.StartRead(&leg.stream.response);
    leg.stream.StartCall();
  }

  // Send queues a message (nullopt: half-close) on `side` (mu_ held); nothing follows a
  // half-close, and nothing is sent on a stream that has ended.
  void Send(Side side, std::optional<v1::KeyExchangeRequest> req) {
    Leg& leg = legs_[side];
    if (leg.done || (req.has_value() && leg.closed)) return;
    leg.queue.push_back(std::move(req));
    Pump(side);
  }

  void Pump(Side side) {
    Leg& leg = legs_[side];
    if (!leg.started || leg.done || leg.write_in_flight || leg.queue.empty()) return;
    leg.write_in_flight = true;
    leg.writing = std::move(leg.queue.front());
    leg.queue.pop_front();
    if (leg.writing) {
      leg.stream.StartWrite(&*leg.writing);
    } else {
      leg.stream.StartWritesDone();
    }
  }

  void WriteDone(Side side, bool ok) {
    std::lock_guard<std::mutex> lock(mu_);
    legs_[side].write_in_flight = false;
    if (ok) Pump(side);  // a failed write: the stream is ending; OnDone has its status
  }

  void ReadDone(Side side, bool ok) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ok) return;  // the stream ended: OnDone carries the status
    Leg& leg = legs_[side];
    v1::KeyExchangeResponse r = std::move(leg.stream.response);
    ++reads_[side];
    if (side == kA && reads_[kA] == 1) {  // R_A → B's first message
      v1::KeyExchangeRequest req;
      *req.mutable_params() = params_.responder;
      req.set_peer_ephemeral_point(r.ephemeral_point());
      Send(kB, std::move(req));
      leg.stream.StartRead(&leg.stream.response);
    } else if (side == kB && reads_[kB] == 1) {  // R_B, S_B → A
      v1::KeyExchangeRequest req;
      req.set_peer_ephemeral_point(r.ephemeral_point());
      req.set_peer_confirmation(r.confirmation());
      Send(kA, std::move(req));
      leg.stream.StartRead(&leg.stream.response);
    } else if (side == kA && reads_[kA] == 2) {  // K_A, S_A → B
      key_[kA] = r.shared_key();
      leg.closed = true;
      Send(kA, std::nullopt);
      v1::KeyExchangeRequest req;
      req.set_peer_confirmation(r.confirmation());
      Send(kB, std::move(req));
    } else if (side == kB && reads_[kB] == 2) {  // K_B
      key_[kB] = r.shared_key();
      leg.closed = true;
      Send(kB, std::nullopt);
    }
  }

  void StreamDone(Side side, const grpc::Status& s) {
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      Leg& leg = legs_[side];
      leg.done = true;
      leg.status = s;
      if (!s.ok() && first_failure_.ok()) first_failure_ = s;
      const Side other = side == kA ? kB : kA;
      if (!s.ok() && !legs_[other].done && !legs_[other].closed) {
        // The other stream's exchange cannot finish: half-close it (after any write in
        // flight), and the server ends it.
        legs_[other].closed = true;
        Send(other, std::nullopt);
      }
      last = legs_[kA].done && legs_[kB].done;
    }
    if (!last) return;
    grpc::Status result = Result();
    std::function<void(grpc::Status)> done = std::move(done_);
    delete this;
    done(result);
  }

  grpc::Status Result() const {
    // The first failure is the cause; the other stream's end follows from it.
    if (!first_failure_.ok()) return first_failure_;
    if (key_[kA].empty() || key_[kA] != key_[kB]) {
      return grpc::Status(grpc::StatusCode::DATA_LOSS,
                          absl::StrCat("KeyExchange: the two streams' shared keys differ (",
                                       key_[kA].size(), " and ", key_[kB].size(), " bytes)"));
    }
    return grpc::Status::OK;
  }

  const Params& params_;
  Stub& stub_;
  std::function<void(grpc::Status)> done_;
  grpc::ClientContext b_ctx_;
  std::mutex mu_;
  Leg legs_[2];
  int reads_[2] = {0, 0};
  std::string key_[2];
  grpc::Status first_failure_;
};

}  // namespace

void StartKeyExchangeCall(const KeyExchangeCallParams& p, Stub& stub, grpc::ClientContext* ctx,
                          std::function<void(grpc::Status)> done) {
  KeyExchange::Start(p, stub, ctx, std::move(done));
}

}  // namespace smcrypt::load
