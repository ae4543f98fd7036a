// stream_reactor.h — the reactors' base of the streaming RPCs.
//
// StreamSlot admits a stream and registers it with the StreamReaper; BidiStream runs a
// bidirectional stream (admission, per-message charges, ordered writes, audit at the
// end); ParamsFirstStream adds, once for all five bidirectional streams, the rule of
// their params: the first message carries them, later messages must not, and a stream
// that ends before them fails. The streams themselves are thin subclasses in
// stream_handlers.cc. Only the service's own files include this header.
#ifndef SMCRYPT_SERVER_SERVICE_STREAM_REACTOR_H_
#define SMCRYPT_SERVER_SERVICE_STREAM_REACTOR_H_

#include <cstdint>
#include <deque>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"
#include "server/service/call_guard.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/method_spec.h"
#include "server/service/proto_convert.h"
#include "server/service/status_util.h"
#include "server/service/stream_reaper.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::server {

// StreamSlot is a stream's admission, its charge (CallCharge: --max_inflight_bytes,
// --max_stream_inflight_bytes and its connection's share) and its StreamReaper entry
// (--stream_idle_timeout). Open once, from the reactor's start; Touch on every completed
// read and write; Close in the reactor's OnDone.
class StreamSlot {
 public:
  StreamSlot(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : svc_(svc), idle_(ctx) {}

  // Open admits the stream (CryptoServiceImpl::Admit, no bytes: its messages are charged
  // as they come) and registers it with the reaper, if any.
  absl::Status Open(grpc::CallbackServerContext* ctx) {
    absl::Status s = svc_->Admit(ctx, /*stream=*/true, 0, &charge_);
    if (!s.ok()) return s;
    if (svc_->reaper() != nullptr) {
      svc_->reaper()->Register(&idle_);
      registered_ = true;
    }
    return absl::OkStatus();
  }
  void Touch() { idle_.Touch(); }
  CallCharge& charge() { return charge_; }
  // Close unregisters the stream and releases its charge.
  void Close() {
    if (registered_) svc_->reaper()->Unregister(&idle_);
    registered_ = false;
    charge_.Close();
  }

 private:
  const CryptoServiceImpl* svc_;
  StreamReaper::Entry idle_;
  CallCharge charge_;
  bool registered_ = false;
};

// BidiStream serializes a bidirectional stream: read one request, queue the responses
// it produces, write them one by one, then read the next. At half-close, OnEnd queues
// the final responses and the stream finishes OK. Any error finishes the stream with it.
//
// Each stream registers with the StreamReaper (--stream_idle_timeout) and touches it on
// every completed read and write. A stream that uses a private or secret key (AuditAs)
// writes one audit line with its final status.
template <typename Req, typename Resp>
class BidiStream : public grpc::ServerBidiReactor<Req, Resp> {
 public:
  BidiStream(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : svc_(svc), ctx_(ctx), slot_(svc, ctx) {}

  // Start admits the call and begins reading; call once right after construction.
  void Start() {
    absl::Status s = slot_.Open(ctx_);
    if (!s.ok()) {
      this->Finish(ToGrpcStatus(s));
      return;
    }
    this->StartRead(&req_);
  }

  void OnReadDone(bool ok) override {
    slot_.Touch();
    absl::Status s;
    if (!ok) {
      if (ctx_->IsCancelled()) {
        Done(grpc::Status::CANCELLED);
        return;
      }
      finishing_ = true;
      s = OnEnd(&out_);
    } else {
      // The message and the responses it makes are charged until those are written.
      s = slot_.charge().TryAdd(3 * req_.ByteSizeLong());
      if (s.ok()) s = OnMessage(req_, first_, &out_);
      if (first_) WipeInlineKeys(req_);
      first_ = false;
      // The next read starts from an empty message (a cleared one keeps its buffers).
      Req().Swap(&req_);
    }
    if (!s.ok()) {
      out_.clear();
      Done(ToGrpcStatus(s));
      return;
    }
    Pump();
  }

  void OnWriteDone(bool ok) override {
    slot_.Touch();
    if (!ok) {
      Done(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      return;
    }
    // A response that carried a secret (KeyExchange's shared key) is wiped before its
    // memory is freed.
    if constexpr (requires { out_.front().mutable_shared_key(); }) {
      std::string* secret = out_.front().mutable_shared_key();
      SecureZero(secret->data(), secret->size());
    }
    out_.pop_front();
    Pump();
  }

  void OnDone() override {
    // An audited stream that ended without Done still writes its line.
    if (!audit_method_.empty()) AuditEnd(absl::StatusCode::kCancelled);
    slot_.Close();
    delete this;
  }

 protected:
  const CryptoEngine& engine() const { return svc_->engine(); }
  const CryptoServiceImpl& svc() const { return *svc_; }
  grpc::CallbackServerContext* ctx() const { return ctx_; }
  virtual absl::Status OnMessage(const Req& req, bool first, std::deque<Resp>* out) = 0;
  virtual absl::Status OnEnd(std::deque<Resp>* out) = 0;
  // PendingBytes: the bytes of input the stream's cipher keeps that are not answered yet
  // (a pending GCM segment, a partial block or HPKE chunk), now.
  virtual uint64_t PendingBytes() const { return 0; }
  // PendingCopies: how many copies of its unanswered input the stream's cipher keeps (a
  // decrypting stream still trying key versions keeps one per version).
  virtual uint64_t PendingCopies() const { return 1; }
  // AuditAs makes the stream write an audit line when it ends (private- and secret-key streams),
  // with the versions of AuditVersion(input, unparsed_version), as the key's trial
  // (KeyInput::trial) has them by then.
  template <typename Params, typename In>
  void AuditAs(const MethodSpec& spec, const Params& p, const In* input,
               uint32_t unparsed_version) {
    audit_method_ = spec.method;
    audit_op_ = spec.op;
    audit_alg_ = p.algorithm();
    audit_key_version_ = AuditVersion(input, unparsed_version).version;
    const KeyInput* key = input != nullptr ? KeyInputOf(*input) : nullptr;
    if (key != nullptr && key->report_version) audit_trial_ = key->trial;
    // Only the key's kind and key_id are kept, never inline bytes.
    if (p.key().ref_case() == v1::KeyRef::kKeyId) audit_key_.set_key_id(p.key().key_id());
    if (p.key().ref_case() == v1::KeyRef::kInlineKey) audit_key_.set_inline_key("");
  }

 private:
  void Done(const grpc::Status& status) {
    if (!audit_method_.empty()) AuditEnd(static_cast<absl::StatusCode>(status.error_code()));
    this->Finish(status);
  }

  // AuditEnd writes the stream's one audit line (AuditAs), with its final status.
  void AuditEnd(absl::StatusCode code) {
    const AuditedVersions v = VersionsOf(audit_key_version_, audit_trial_.get());
    svc_->Audit(ctx_, audit_method_, audit_op_, audit_alg_, &audit_key_, code, v.version,
                v.tried);
    audit_method_ = {};
  }

  // Rebalance sets the stream's charge to what it holds now: the queued responses and
  // their serialized copies, and what the stream's cipher keeps of the input it has not
  // answered yet (PendingBytes), which becomes a response, once per copy (PendingCopies).
  void Rebalance() {
    uint64_t held = 0;
    for (const Resp& r : out_) held += 2 * r.ByteSizeLong();
    if (!finishing_) held += 2 * PendingBytes() * PendingCopies();
    slot_.charge().Set(held);
  }

  void Pump() {
    Rebalance();
    if (!out_.empty()) {
      this->StartWrite(&out_.front());
      return;
    }
    if (finishing_) {
      Done(grpc::Status::OK);
    } else {
      this->StartRead(&req_);
    }
  }

  const CryptoServiceImpl* svc_;
  grpc::CallbackServerContext* ctx_;
  StreamSlot slot_;
  Req req_;
  std::deque<Resp> out_;
  bool first_ = true;
  bool finishing_ = false;
  absl::string_view audit_method_;
  AccessOperation audit_op_ = AccessOperation::kDecrypt;
  v1::Algorithm audit_alg_ = v1::ALGORITHM_UNSPECIFIED;
  v1::KeyRef audit_key_;
  uint32_t audit_key_version_ = 0;
  std::shared_ptr<const KeyTrial> audit_trial_;
};


// ParamsOf: the params message of a stream request type (its params() field).
template <typename Req>
using ParamsOf = std::remove_cvref_t<decltype(std::declval<const Req&>().params())>;

// ParamsFirstStream is a bidirectional stream whose first message carries its params
// (Req.params) and whose later messages must not. The first message's params are checked
// as `spec` says (Check at PolicyScope::kCall with `parse`: policy and parsing in the
// row's order); an audited method's stream then writes one audit line with its final
// status (BidiStream::AuditAs). The errors, INVALID_ARGUMENT, name spec.method:
//   "the first <method> message must carry params"   (a first message without params)
//   "params may only be sent in the first message"   (a later message with params)
//   "<method> ended before its params"               (half-close before any message)
// Subclasses implement Open (the first message, its params checked into `In`), OnNext
// (each later message) and Close (half-close after the params).
template <typename Req, typename Resp, typename In>
class ParamsFirstStream : public BidiStream<Req, Resp> {
 public:
  using Parse = absl::StatusOr<In> (*)(const ParamsOf<Req>&);

  ParamsFirstStream(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx,
                    const MethodSpec& spec, Parse parse)
      : BidiStream<Req, Resp>(svc, ctx), spec_(spec), parse_(parse) {}

 protected:
  // Open sets the stream up from its checked params and answers the first message (its
  // other fields included).
  virtual absl::Status Open(const In& input, const Req& first, std::deque<Resp>* out) = 0;
  // OnNext answers a later message (it carries no params).
  virtual absl::Status OnNext(const Req& req, std::deque<Resp>* out) = 0;
  // Close queues the final responses at half-close (Open has succeeded).
  virtual absl::Status Close(std::deque<Resp>* out) = 0;

 private:
  absl::Status OnMessage(const Req& req, bool first, std::deque<Resp>* out) final {
    if (!first) {
      if (req.has_params()) {
        return absl::InvalidArgumentError("params may only be sent in the first message");
      }
      return OnNext(req, out);
    }
    if (!req.has_params()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the first ", spec_.method, " message must carry params"));
    }
    Checked<In> p = Check(this->svc(), spec_, this->ctx(), req.params(), PolicyScope::kCall,
                          parse_);
    // An audited stream (private-key use) is audited with its final status, parse
    // errors after the policy check included.
    if (p.audit) {
      this->AuditAs(spec_, req.params(), p.input.ok() ? &*p.input : nullptr,
                    p.unparsed_version);
    }
    if (!p.input.ok()) return p.input.status();
    opened_ = true;
    return Open(*p.input, req, out);
  }

  absl::Status OnEnd(std::deque<Resp>* out) final {
    if (!opened_) {
      return absl::InvalidArgumentError(absl::StrCat(spec_.method, " ended before its params"));
    }
    return Close(out);
  }

  const MethodSpec& spec_;
  const Parse parse_;
  bool opened_ = false;
};

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SERVICE_STREAM_REACTOR_H_
