#include "server/service/crypto_service_impl.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpc/grpc_security_constants.h"
#include "server/engine/error_reason.h"
#include "server/service/method_spec.h"
#include "server/service/proto_convert.h"
#include "server/service/status_util.h"
#include "smcrypt/cpu.h"
#include "smcrypt/pem.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::server {
namespace {

absl::Status CheckBatchSize(size_t n) {
  if (n > CryptoEngine::kMaxBatchItems) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a batch holds at most ", CryptoEngine::kMaxBatchItems, " items, got ", n));
  }
  return absl::OkStatus();
}

// StillWanted is checked between the items of a batch, so a long batch stops once its
// deadline has passed or the client has cancelled, instead of running to the end.
absl::Status StillWanted(grpc::CallbackServerContext* ctx) {
  // An expired deadline also cancels the call, so the deadline is checked first.
  if (ctx->deadline() < std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError("the deadline passed while the batch was running");
  }
  if (ctx->IsCancelled()) return absl::CancelledError("the client cancelled the batch");
  return absl::OkStatus();
}

// Batch requests hold many small items whose parsed form, results and per-item state
// take far more memory than their serialized bytes (65,536 empty HybridEncryptBatch items:
// 0.7 MB on the wire, ~75 MB in the server). Admission charges each batch item this much
// on top of the request's size, so --max_inflight_bytes bounds batches too.
constexpr uint64_t kBatchItemAdmissionBytes = 1024;

// ResponseBytes bounds a response's serialized size before the work, as spec.response
// says: about the request's size (ciphertexts, plaintexts, per-item results; tags,
// nonces and framing are under kCallAdmissionBytes), or what the request asks for.
template <typename Req>
uint64_t ResponseBytes(const MethodSpec& spec, const Req& r) {
  switch (spec.response) {
    case ResponseEstimate::kRandomLength:
      if constexpr (requires { r.length(); }) {
        return std::min<uint64_t>(r.length(), CryptoEngine::kMaxRandomBytes) + 16;
      }
      break;
    case ResponseEstimate::kKeyPair:
    case ResponseEstimate::kServerInfo:
      return 16 << 10;
    case ResponseEstimate::kRequestPlus4KiB:
      return r.ByteSizeLong() + 4096;
    case ResponseEstimate::kRequestSize:
    case ResponseEstimate::kStream:
      break;
  }
  return r.ByteSizeLong();
}

// AdmissionBytes is what a unary call reserves (crypto_service_impl.h, "Memory").
template <typename Req>
uint64_t AdmissionBytes(const MethodSpec& spec, const Req& r) {
  uint64_t items = 0;
  if constexpr (requires { r.items_size(); }) {
    if (spec.charge_items) items = r.items_size();
  }
  return r.ByteSizeLong() + items * kBatchItemAdmissionBytes + 2 * ResponseBytes(spec, r) +
         kCallAdmissionBytes;
}

// HeldBytes is a unary call's charge once its work is done: the response message and its
// serialized copy, held until gRPC is done with the call.
uint64_t HeldBytes(const google::protobuf::Message& response) {
  return 2 * response.ByteSizeLong() + kCallAdmissionBytes;
}

// FreePayload frees the request's fields once the work is done (nothing reads the
// request after that; its inline keys are wiped first), so a call waiting for its
// client to read the response holds only the response. The request is gRPC's own
// non-const object, outside any protobuf arena.
template <typename Req>
void FreePayload(const Req* request) {
  Req* mutable_request = const_cast<Req*>(request);
  if (mutable_request->GetArena() != nullptr) return;
  Req empty;
  mutable_request->Swap(&empty);
}

// CallReactor finishes a unary call and holds its --max_inflight_bytes charge until gRPC
// is done with the call (OnDone: the response was handed to the transport, or the call
// ended without it), then runs `on_done` (before gRPC frees the response).
class CallReactor final : public grpc::ServerUnaryReactor {
 public:
  CallReactor(const CryptoServiceImpl* svc, std::function<void()> on_done)
      : svc_(svc), on_done_(std::move(on_done)) {}

  // Charged records `bytes` already charged by Admit.
  void Charged(uint64_t bytes) { charge_ = bytes; }
  // Hold changes the charge to `bytes`: the difference is charged (whatever the budget:
  // the response exists) or released.
  void Hold(uint64_t bytes) {
    if (bytes > charge_) {
      svc_->Charge(bytes - charge_);
    } else {
      svc_->Release(charge_ - bytes);
    }
    charge_ = bytes;
  }

  void OnDone() override {
    if (on_done_) on_done_();
    svc_->Release(charge_);
    delete this;
  }

 private:
  const CryptoServiceImpl* svc_;
  std::function<void()> on_done_;
  uint64_t charge_ = 0;
};

// Unary admits the call, then runs `fn` on the worker pool (CryptoServiceImpl::Run) and
// finishes a CallReactor with its status. `fn` must capture nothing from the handler's
// stack (the handler returns before it runs): ctx, request and response live until the
// reactor is done. The call's charge is AdmissionBytes(spec) from admission, HeldBytes once
// `fn` has run; its inline keys are wiped and its payload freed before the answer.
// `on_done` (optional) runs in the reactor's OnDone.
template <typename Req, typename Resp, typename Fn>
grpc::ServerUnaryReactor* Unary(const CryptoServiceImpl* svc, const MethodSpec& spec,
                                grpc::CallbackServerContext* ctx, const Req* request,
                                Resp* response, Fn fn, std::function<void()> on_done = nullptr) {
  auto* reactor = new CallReactor(svc, std::move(on_done));
  const uint64_t bytes = AdmissionBytes(spec, *request);
  absl::Status s = svc->Admit(ctx, bytes);
  if (!s.ok()) {
    WipeInlineKeys(*request);
    FreePayload(request);
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  reactor->Charged(bytes);
  svc->Run([reactor, ctx, request, response, fn = std::move(fn)]() {
    // A call whose client went away or whose deadline passed while it waited for a
    // worker is answered without doing the work (gRPC has already ended it).
    grpc::Status status = grpc::Status::CANCELLED;
    if (!ctx->IsCancelled()) status = ToGrpcStatus(fn());
    WipeInlineKeys(*request);
    FreePayload(request);
    reactor->Hold(HeldBytes(*response));
    reactor->Finish(status);
  });
  return reactor;
}

// ---- The call guard: policy, parsing and audit as the MethodSpec says -------------------

// AlgorithmOf / KeyOf: the algorithm and key a request (a batch item, stream params)
// names, as the access policy and audit lines see them; UNSPECIFIED / null when it has
// no such field.
template <typename Req>
v1::Algorithm AlgorithmOf(const Req& r) {
  if constexpr (requires { r.algorithm(); }) {
    return r.algorithm();
  } else {
    return v1::ALGORITHM_UNSPECIFIED;
  }
}

template <typename Req>
const v1::KeyRef* KeyOf(const Req& r) {
  if constexpr (requires { r.key(); }) {
    return &r.key();  // a KeyRef: anything else does not compile
  } else {
    return nullptr;
  }
}

// KeyInputOf: the key of an engine input (a request's parse result), or null when it has
// none.
template <typename T>
concept HasKeyInput = requires(T t) { requires std::is_same_v<decltype(t.key), KeyInput>; };
template <typename T>
concept HasParamsKeyInput =
    requires(T t) { requires std::is_same_v<decltype(t.params.key), KeyInput>; };

template <typename In>
auto KeyInputOf(In& in) {
  using Ptr = std::conditional_t<std::is_const_v<In>, const KeyInput*, KeyInput*>;
  if constexpr (HasKeyInput<std::remove_const_t<In>>) {
    return Ptr(&in.key);
  } else if constexpr (HasParamsKeyInput<std::remove_const_t<In>>) {
    return Ptr(&in.params.key);
  } else {
    return Ptr(nullptr);
  }
}

// ReportedVersion: the version a response and an audit line report for `in` (0: none).
template <typename In>
uint32_t ReportedVersion(const In& in) {
  const KeyInput* key = KeyInputOf(in);
  return key != nullptr && key->report_version ? key->version : 0;
}

// AuditVersion: the version the audit line of `req` reports: the one fixed in its parsed
// input, else the one the request named.
template <typename Req, typename In>
uint32_t AuditVersion(const Req& req, const absl::StatusOr<In>& input) {
  if (input.ok()) return ReportedVersion(*input);
  if constexpr (requires { req.key().key_version(); }) {
    if (req.key().ref_case() == v1::KeyRef::kKeyId) return req.key().key_version();
  }
  return 0;
}

// Checked is what the checks of one request (a unary call, a queued call, a batch item or
// a stream's params) left: its engine input, or the status that answers it. `audit`: it
// passed the policy check of an audited method, so its final status is to be audited.
template <typename In>
struct Checked {
  absl::StatusOr<In> input;
  bool audit = false;
};

// InputOf is the engine input a parse function makes of a request: `parse(req)` returns
// absl::StatusOr<InputOf<Parse, Req>>.
template <typename Parse, typename Req>
using InputOf = typename std::invoke_result_t<const Parse&, const Req&>::value_type;

// Check parses `req` with `parse` and, when spec.scope is `level`, checks it against the
// access policy before or after parsing as spec.order says. A parsed keyring key gets its
// version fixed (CryptoServiceImpl::PinKeyVersion). The order decides which
// status a request with both a bad field and a denied key gets, and whether a request
// that does not parse is checked (and its denial audited) at all: it is the table's
// (method_spec.h), never the handler's. A denial is audited by Authorize.
template <typename Req, typename Parse>
Checked<InputOf<Parse, Req>> Check(const CryptoServiceImpl& svc, const MethodSpec& spec,
                                   grpc::CallbackServerContext* ctx, const Req& req,
                                   PolicyScope level, const Parse& parse) {
  auto parse_and_pin = [&]() -> absl::StatusOr<InputOf<Parse, Req>> {
    absl::StatusOr<InputOf<Parse, Req>> in = parse(req);
    if (!in.ok()) return in;
    KeyInput* key = KeyInputOf(*in);
    const v1::KeyRef* ref = KeyOf(req);
    if (key != nullptr && ref != nullptr) {
      absl::Status pinned = svc.PinKeyVersion(*ref, key);
      if (!pinned.ok()) return pinned;
    }
    return in;
  };
  if (spec.scope != level) return {parse_and_pin(), false};
  absl::StatusOr<InputOf<Parse, Req>> input;
  if (spec.order == CheckOrder::kParseFirst) {
    input = parse_and_pin();
    if (!input.ok()) return {std::move(input), false};
  }
  absl::Status allowed = svc.Authorize(ctx, spec.method, spec.op, AlgorithmOf(req), KeyOf(req));
  if (!allowed.ok()) return {std::move(allowed), false};
  if (spec.order == CheckOrder::kPolicyFirst) input = parse_and_pin();
  return {std::move(input), spec.audited};
}

// AuditDone writes the audit line of a request that Check allowed for an audited method.
// `key_version` is AuditVersion's.
template <typename Req>
void AuditDone(const CryptoServiceImpl& svc, const MethodSpec& spec,
               grpc::CallbackServerContext* ctx, const Req& req, absl::StatusCode code,
               uint32_t key_version) {
  svc.Audit(ctx, spec.method, spec.op, AlgorithmOf(req), KeyOf(req), code, key_version);
}

// KeyedAlgorithm: the algorithm and key of a request whose other fields go to the
// engine as they are (Hmac, PublicKeyDecrypt, HybridDecrypt, GetPublicKey), so that
// Check fixes its key's version; `format` for PublicKeyDecrypt only.
struct KeyedAlgorithm {
  Algorithm algorithm;
  KeyInput key;
  Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2;
};
constexpr auto kAlgorithmAndKey = [](const auto& r) -> absl::StatusOr<KeyedAlgorithm> {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(r.algorithm());
  if (!alg.ok()) return alg.status();
  return KeyedAlgorithm{*alg, ToKey(r.key())};
};

// Parse functions shared by several handlers. kAlgorithmOnly: the request's algorithm;
// kNothingToParse: requests without fields to check before the work; kBatchSize: a batch
// RPC's item count (its items are parsed one by one, in RunBatch).
constexpr auto kAlgorithmOnly = [](const auto& r) { return ToAlgorithm(r.algorithm()); };
constexpr auto kNothingToParse = [](const auto&) {
  return absl::StatusOr<std::monostate>(std::monostate{});
};
constexpr auto kBatchSize = [](const auto& r) -> absl::StatusOr<std::monostate> {
  absl::Status s = CheckBatchSize(r.items_size());
  if (!s.ok()) return s;
  return std::monostate{};
};

// Guarded is the call guard of the unary handlers. Unary admits the call, charging
// AdmissionBytes(spec); on the worker, Check parses and authorizes the request as `spec`
// says, work(input) → absl::Status does the engine call and fills the response, an
// audited method audits the final status (parse errors after the policy check included),
// and Unary converts the status. `spec` is a row of the table (static); `parse` and
// `work` capture nothing from the handler's stack (see Unary).
template <typename Req, typename Resp, typename Parse, typename Work>
grpc::ServerUnaryReactor* Guarded(const CryptoServiceImpl* svc, const MethodSpec& spec,
                                  grpc::CallbackServerContext* ctx, const Req* request,
                                  Resp* response, Parse parse, Work work,
                                  std::function<void()> on_done = nullptr) {
  return Unary(
      svc, spec, ctx, request, response,
      [svc, spec = &spec, ctx, request, parse = std::move(parse),
       work = std::move(work)]() -> absl::Status {
        Checked<InputOf<Parse, Req>> c = Check(*svc, *spec, ctx, *request, PolicyScope::kCall,
                                               parse);
        absl::Status s = c.input.ok() ? work(*c.input) : c.input.status();
        if (c.audit) {
          AuditDone(*svc, *spec, ctx, *request, s.code(), AuditVersion(*request, c.input));
        }
        return s;
      },
      std::move(on_done));
}

// ---- Dynamic batching (dynamic_batcher.h) ---------------------------------------------

// QueuedCall is one admitted unary call waiting in, or taken from, a BatchQueue.
template <typename Req, typename Resp>
struct QueuedCall {
  using Request = Req;
  CallReactor* reactor;
  grpc::CallbackServerContext* ctx;
  const Req* request;
  Resp* response;
};

// FinishQueued answers a call of a batch as Unary would: inline keys wiped, payload
// freed, charge set to the response, status converted.
template <typename Call>
void FinishQueued(const Call& c, const absl::Status& s) {
  const grpc::Status status = ToGrpcStatus(s);
  WipeInlineKeys(*c.request);
  FreePayload(c.request);
  c.reactor->Hold(HeldBytes(*c.response));
  c.reactor->Finish(status);
}

// Queued admits the call as Unary does, then adds it to `queue`.
template <typename Req, typename Resp>
grpc::ServerUnaryReactor* Queued(const CryptoServiceImpl* svc, const MethodSpec& spec,
                                 BatchQueue<QueuedCall<Req, Resp>>* queue,
                                 grpc::CallbackServerContext* ctx, const Req* request,
                                 Resp* response) {
  auto* reactor = new CallReactor(svc, nullptr);
  const uint64_t bytes = AdmissionBytes(spec, *request);
  absl::Status s = svc->Admit(ctx, bytes);
  if (!s.ok()) {
    WipeInlineKeys(*request);
    FreePayload(request);
    reactor->Finish(ToGrpcStatus(s));
    return reactor;
  }
  reactor->Charged(bytes);
  queue->Add(QueuedCall<Req, Resp>{reactor, ctx, request, response});
  return reactor;
}

// A call whose client went away or whose deadline passed while it was queued is
// answered without doing the work (gRPC has already ended it), as in Unary.
absl::Status NotWanted() { return absl::CancelledError("the call ended while it was queued"); }

using SignCall = QueuedCall<v1::SignRequest, v1::SignResponse>;
using VerifyCall = QueuedCall<v1::VerifyRequest, v1::VerifyResponse>;
using HashCall = QueuedCall<v1::HashRequest, v1::HashResponse>;
using PublicKeyEncryptCall = QueuedCall<v1::PublicKeyEncryptRequest, v1::PublicKeyEncryptResponse>;
using HybridEncryptCall = QueuedCall<v1::HybridEncryptRequest, v1::HybridEncryptResponse>;

// WipeKeyPair wipes the private key of a GenerateKeyPair response once gRPC has sent it
// (in OnDone, before gRPC frees the response). gRPC's own send buffers are freed
// without wiping.
void WipeKeyPair(v1::GenerateKeyPairResponse* response) {
  for (std::string* s : {response->mutable_private_key_der(),
                         response->mutable_private_key_pem()}) {
    SecureZero(s->data(), s->size());
  }
}

// ---- Streaming reactors ----------------------------------------------------------------

// BidiStream serializes a bidirectional stream: read one request, queue the responses
// it produces, write them one by one, then read the next. At half-close, OnEnd queues
// the final responses and the stream finishes OK. Any error finishes the stream with it.
//
// Each stream registers with the StreamReaper (--stream_idle_timeout) and touches it on
// every completed read and write. A stream that uses a private key (AuditAs) writes one
// audit line with its final status.
template <typename Req, typename Resp>
class BidiStream : public grpc::ServerBidiReactor<Req, Resp> {
 public:
  BidiStream(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : svc_(svc), ctx_(ctx), idle_(ctx) {}

  // Start admits the call and begins reading; call once right after construction.
  void Start() {
    absl::Status s = svc_->Admit(ctx_);
    if (!s.ok()) {
      this->Finish(ToGrpcStatus(s));
      return;
    }
    if (svc_->reaper() != nullptr) {
      svc_->reaper()->Register(&idle_);
      registered_ = true;
    }
    this->StartRead(&req_);
  }

  void OnReadDone(bool ok) override {
    idle_.Touch();
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
      const uint64_t bytes = req_.ByteSizeLong();
      s = svc_->TryCharge(3 * bytes);
      if (s.ok()) {
        charge_ += 3 * bytes;
        in_bytes_ += bytes;
        const size_t queued = out_.size();
        s = OnMessage(req_, first_, &out_);
        for (size_t i = queued; i < out_.size(); ++i) out_bytes_ += out_[i].ByteSizeLong();
      }
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
    idle_.Touch();
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
    if (registered_) svc_->reaper()->Unregister(&idle_);
    svc_->Release(charge_);
    delete this;
  }

 protected:
  const CryptoEngine& engine() const { return svc_->engine(); }
  const CryptoServiceImpl& svc() const { return *svc_; }
  grpc::CallbackServerContext* ctx() const { return ctx_; }
  virtual absl::Status OnMessage(const Req& req, bool first, std::deque<Resp>* out) = 0;
  virtual absl::Status OnEnd(std::deque<Resp>* out) = 0;
  // AuditAs makes the stream write an audit line when it ends (private-key streams).
  template <typename Params>
  void AuditAs(const MethodSpec& spec, const Params& p, uint32_t key_version) {
    audit_method_ = spec.method;
    audit_op_ = spec.op;
    audit_alg_ = p.algorithm();
    audit_key_version_ = key_version;
    // Only the key's kind and key_id are kept, never inline bytes.
    if (p.key().ref_case() == v1::KeyRef::kKeyId) audit_key_.set_key_id(p.key().key_id());
    if (p.key().ref_case() == v1::KeyRef::kInlineKey) audit_key_.set_inline_key("");
  }

 private:
  void Done(const grpc::Status& status) {
    if (!audit_method_.empty()) {
      svc_->Audit(ctx_, audit_method_, audit_op_, audit_alg_, &audit_key_,
                  static_cast<absl::StatusCode>(status.error_code()), audit_key_version_);
    }
    this->Finish(status);
  }

  // Rebalance sets the stream's charge to what it holds now: the queued responses and
  // their serialized copies, and what the stream's cipher keeps of the input it has not
  // answered yet (a pending GCM segment, a partial HPKE chunk), which becomes a response.
  void Rebalance() {
    uint64_t held = 0;
    for (const Resp& r : out_) held += 2 * r.ByteSizeLong();
    if (!finishing_ && in_bytes_ > out_bytes_) held += 2 * (in_bytes_ - out_bytes_);
    if (held > charge_) {
      svc_->Charge(held - charge_);
    } else {
      svc_->Release(charge_ - held);
    }
    charge_ = held;
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
  StreamReaper::Entry idle_;
  bool registered_ = false;
  Req req_;
  std::deque<Resp> out_;
  // charge_: bytes charged to the stream (Rebalance); in_bytes_ and out_bytes_: the
  // serialized sizes of the messages read and of the responses made so far.
  uint64_t charge_ = 0;
  uint64_t in_bytes_ = 0;
  uint64_t out_bytes_ = 0;
  bool first_ = true;
  bool finishing_ = false;
  absl::string_view audit_method_;
  AccessOperation audit_op_ = AccessOperation::kDecrypt;
  v1::Algorithm audit_alg_ = v1::ALGORITHM_UNSPECIFIED;
  v1::KeyRef audit_key_;
  uint32_t audit_key_version_ = 0;
};

class EncryptStreamReactor final
    : public BidiStream<v1::EncryptStreamRequest, v1::EncryptStreamResponse> {
 public:
  using BidiStream::BidiStream;

 private:
  absl::Status OnMessage(const v1::EncryptStreamRequest& req, bool first,
                         std::deque<v1::EncryptStreamResponse>* out) override {
    if (first) {
      if (!req.has_params()) {
        return absl::InvalidArgumentError("the first EncryptStream message must carry params");
      }
      absl::StatusOr<SymmetricParams> p =
          Check(svc(), rpc::kEncryptStream, ctx(), req.params(), PolicyScope::kCall,
                [](const v1::EncryptStreamParams& params) {
                  return SymmetricFrom(params,
                                       params.has_nonce()
                                           ? std::optional<absl::string_view>(params.nonce())
                                           : std::nullopt,
                                       params.tag_length());
                })
              .input;
      if (!p.ok()) return p.status();
      absl::StatusOr<std::unique_ptr<StreamEncryptor>> enc = engine().NewStreamEncryptor(*p);
      if (!enc.ok()) return enc.status();
      enc_ = *std::move(enc);
      algorithm_ = p->algorithm;
      v1::EncryptStreamResponse& header = out->emplace_back();
      header.set_nonce(std::string(enc_->nonce()));
      header.set_key_version(ReportedVersion(*p));
    } else if (req.has_params()) {
      return absl::InvalidArgumentError("params may only be sent in the first message");
    }
    absl::StatusOr<std::optional<StreamChunk>> chunk = enc_->Update(req.plaintext());
    if (!chunk.ok()) return chunk.status();
    if (chunk->has_value()) Emit(**chunk, false, out);
    return absl::OkStatus();
  }

  absl::Status OnEnd(std::deque<v1::EncryptStreamResponse>* out) override {
    if (enc_ == nullptr) {
      return absl::InvalidArgumentError("EncryptStream ended before its params");
    }
    absl::StatusOr<StreamChunk> chunk = enc_->Finish();
    if (!chunk.ok()) return chunk.status();
    Emit(*chunk, true, out);
    return absl::OkStatus();
  }

  void Emit(StreamChunk& chunk, bool last, std::deque<v1::EncryptStreamResponse>* out) {
    v1::EncryptStreamResponse& r = out->emplace_back();
    r.set_ciphertext(std::move(chunk.data));
    r.set_tag(std::move(chunk.tag));
    r.set_last(last);
  }

  std::unique_ptr<StreamEncryptor> enc_;
  Algorithm algorithm_ = Algorithm::kSm4Gcm;
};

class DecryptStreamReactor final
    : public BidiStream<v1::DecryptStreamRequest, v1::DecryptStreamResponse> {
 public:
  using BidiStream::BidiStream;

 private:
  absl::Status OnMessage(const v1::DecryptStreamRequest& req, bool first,
                         std::deque<v1::DecryptStreamResponse>* out) override {
    if (first) {
      if (!req.has_params()) {
        return absl::InvalidArgumentError("the first DecryptStream message must carry params");
      }
      absl::StatusOr<SymmetricParams> p =
          Check(svc(), rpc::kDecryptStream, ctx(), req.params(), PolicyScope::kCall,
                [](const v1::DecryptStreamParams& params) {
                  return SymmetricFrom(params, absl::string_view(params.nonce()), 0);
                })
              .input;
      if (!p.ok()) return p.status();
      absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec = engine().NewStreamDecryptor(*p);
      if (!dec.ok()) return dec.status();
      dec_ = *std::move(dec);
    } else if (req.has_params()) {
      return absl::InvalidArgumentError("params may only be sent in the first message");
    }
    absl::StatusOr<std::optional<StreamChunk>> chunk = dec_->Update(req.ciphertext(), req.tag());
    if (!chunk.ok()) return chunk.status();
    if (chunk->has_value()) {
      out->emplace_back().set_plaintext(std::move((*chunk)->data));
    }
    return absl::OkStatus();
  }

  absl::Status OnEnd(std::deque<v1::DecryptStreamResponse>* out) override {
    if (dec_ == nullptr) {
      return absl::InvalidArgumentError("DecryptStream ended before its params");
    }
    absl::StatusOr<StreamChunk> chunk = dec_->Finish();
    if (!chunk.ok()) return chunk.status();
    v1::DecryptStreamResponse& r = out->emplace_back();
    r.set_plaintext(std::move(chunk->data));
    r.set_last(true);
    return absl::OkStatus();
  }

  std::unique_ptr<StreamDecryptor> dec_;
};

// HybridEncryptStreamReactor: header ‖ enc first, then one sealed chunk per non-empty
// plaintext message, then the final chunk at half-close (crypto.proto, stream format).
class HybridEncryptStreamReactor final
    : public BidiStream<v1::HybridEncryptStreamRequest, v1::HybridEncryptStreamResponse> {
 public:
  using BidiStream::BidiStream;

 private:
  absl::Status OnMessage(const v1::HybridEncryptStreamRequest& req, bool first,
                         std::deque<v1::HybridEncryptStreamResponse>* out) override {
    if (first) {
      if (!req.has_params()) {
        return absl::InvalidArgumentError(
            "the first HybridEncryptStream message must carry params");
      }
      absl::StatusOr<HybridStreamParams> p =
          Check(svc(), rpc::kHybridEncryptStream, ctx(), req.params(), PolicyScope::kCall,
                HybridFrom)
              .input;
      if (!p.ok()) return p.status();
      absl::StatusOr<std::unique_ptr<HybridStreamEncryptor>> enc =
          engine().NewHybridStreamEncryptor(*p);
      if (!enc.ok()) return enc.status();
      enc_ = *std::move(enc);
      v1::HybridEncryptStreamResponse& header = out->emplace_back();
      header.set_ciphertext(std::string(enc_->prefix()));
      header.set_key_version(ReportedVersion(*p));
    } else if (req.has_params()) {
      return absl::InvalidArgumentError("params may only be sent in the first message");
    }
    absl::StatusOr<std::string> chunk = enc_->Update(req.plaintext());
    if (!chunk.ok()) return chunk.status();
    if (!chunk->empty()) out->emplace_back().set_ciphertext(*std::move(chunk));
    return absl::OkStatus();
  }

  absl::Status OnEnd(std::deque<v1::HybridEncryptStreamResponse>* out) override {
    if (enc_ == nullptr) {
      return absl::InvalidArgumentError("HybridEncryptStream ended before its params");
    }
    absl::StatusOr<std::string> chunk = enc_->Finish();
    if (!chunk.ok()) return chunk.status();
    v1::HybridEncryptStreamResponse& r = out->emplace_back();
    r.set_ciphertext(*std::move(chunk));
    r.set_last(true);
    return absl::OkStatus();
  }

  std::unique_ptr<HybridStreamEncryptor> enc_;
};

// HybridDecryptStreamReactor: plaintext of each chunk once its tag is verified; the
// stream fails unless the final chunk arrived before half-close.
class HybridDecryptStreamReactor final
    : public BidiStream<v1::HybridDecryptStreamRequest, v1::HybridDecryptStreamResponse> {
 public:
  using BidiStream::BidiStream;

 private:
  absl::Status OnMessage(const v1::HybridDecryptStreamRequest& req, bool first,
                         std::deque<v1::HybridDecryptStreamResponse>* out) override {
    if (first) {
      if (!req.has_params()) {
        return absl::InvalidArgumentError(
            "the first HybridDecryptStream message must carry params");
      }
      Checked<HybridStreamParams> p = Check(svc(), rpc::kHybridDecryptStream, ctx(),
                                            req.params(), PolicyScope::kCall, HybridFrom);
      // Opening with the private key: audited with the stream's final status (parse
      // errors included).
      if (p.audit) {
        AuditAs(rpc::kHybridDecryptStream, req.params(), AuditVersion(req.params(), p.input));
      }
      if (!p.input.ok()) return p.input.status();
      absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> dec =
          engine().NewHybridStreamDecryptor(*p.input);
      if (!dec.ok()) return dec.status();
      dec_ = *std::move(dec);
    } else if (req.has_params()) {
      return absl::InvalidArgumentError("params may only be sent in the first message");
    }
    absl::StatusOr<std::string> pt = dec_->Update(req.ciphertext());
    if (!pt.ok()) return pt.status();
    if (!pt->empty()) out->emplace_back().set_plaintext(*std::move(pt));
    return absl::OkStatus();
  }

  absl::Status OnEnd(std::deque<v1::HybridDecryptStreamResponse>* out) override {
    if (dec_ == nullptr) {
      return absl::InvalidArgumentError("HybridDecryptStream ended before its params");
    }
    absl::Status s = dec_->Finish();
    if (!s.ok()) return s;
    out->emplace_back().set_last(true);
    return absl::OkStatus();
  }

  std::unique_ptr<HybridStreamDecryptor> dec_;
};

// KeyExchangeReactor runs one SM2 key exchange in the order crypto.proto gives above
// KeyExchangeRequest. The Sm2KeyExchange holds the ephemeral scalar (and a responder's K
// until S_A is checked) between messages; it dies, its secrets wiped, with the stream.
class KeyExchangeReactor final
    : public BidiStream<v1::KeyExchangeRequest, v1::KeyExchangeResponse> {
 public:
  using BidiStream::BidiStream;

 private:
  enum class Step { kAwaitingPeerPoint, kAwaitingPeerConfirmation, kDone };

  absl::Status OnMessage(const v1::KeyExchangeRequest& req, bool first,
                         std::deque<v1::KeyExchangeResponse>* out) override {
    if (first) return OnParams(req, out);
    if (req.has_params()) {
      return absl::InvalidArgumentError("params may only be sent in the first message");
    }
    switch (step_) {
      case Step::kAwaitingPeerPoint: {  // initiator, second message: R_B (and S_B)
        if (req.peer_ephemeral_point().empty()) {
          return absl::InvalidArgumentError(
              "the initiator's second KeyExchange message must carry peer_ephemeral_point "
              "(R_B)");
        }
        absl::Status s = CheckConfirmationPresence(req, "S_B");
        if (!s.ok()) return s;
        absl::StatusOr<Sm2KeyExchangeOutput> k =
            kex_->ComputeKey(req.peer_ephemeral_point(), req.peer_confirmation());
        if (!k.ok()) return k.status();
        v1::KeyExchangeResponse& r = out->emplace_back();
        r.set_shared_key(std::string(SecretDataAsStringView(k->key)));
        r.set_confirmation(std::move(k->confirmation));
        step_ = Step::kDone;
        return absl::OkStatus();
      }
      case Step::kAwaitingPeerConfirmation: {  // responder, second message: S_A
        if (!req.peer_ephemeral_point().empty()) {
          return absl::InvalidArgumentError(
              "peer_ephemeral_point (R_A) belongs in the responder's first message; the "
              "second carries peer_confirmation (S_A) only");
        }
        if (req.peer_confirmation().empty()) {
          return absl::InvalidArgumentError(
              "the responder's second KeyExchange message must carry peer_confirmation (S_A)");
        }
        absl::StatusOr<SecretData> key = kex_->ConfirmPeer(req.peer_confirmation());
        if (!key.ok()) return key.status();
        out->emplace_back().set_shared_key(std::string(SecretDataAsStringView(*key)));
        step_ = Step::kDone;
        return absl::OkStatus();
      }
      case Step::kDone:
        break;
    }
    return absl::InvalidArgumentError(
        "the key exchange is complete (its last response carried shared_key); half-close "
        "the stream");
  }

  absl::Status OnParams(const v1::KeyExchangeRequest& req,
                        std::deque<v1::KeyExchangeResponse>* out) {
    if (!req.has_params()) {
      return absl::InvalidArgumentError("the first KeyExchange message must carry params");
    }
    Checked<KeyExchangeInput> p = Check(svc(), rpc::kKeyExchange, ctx(), req.params(),
                                        PolicyScope::kCall, KeyExchangeFrom);
    // The caller's private key is used: audited with the stream's final status.
    if (p.audit) {
      AuditAs(rpc::kKeyExchange, req.params(), AuditVersion(req.params(), p.input));
    }
    if (!p.input.ok()) return p.input.status();
    const bool initiator = p.input->params.role == Sm2KeyExchangeRole::kInitiator;
    if (initiator && (!req.peer_ephemeral_point().empty() || !req.peer_confirmation().empty())) {
      return absl::InvalidArgumentError(
          "an initiator's first KeyExchange message carries params only; send the peer's "
          "R_B (and S_B) in the second");
    }
    if (!initiator && req.peer_ephemeral_point().empty()) {
      return absl::InvalidArgumentError(
          "a responder's first KeyExchange message must carry peer_ephemeral_point (R_A) "
          "with its params");
    }
    if (!initiator && !req.peer_confirmation().empty()) {
      return absl::InvalidArgumentError(
          "peer_confirmation (S_A) belongs in the responder's second message, after R_B "
          "and S_B");
    }
    absl::StatusOr<std::unique_ptr<Sm2KeyExchange>> kex = engine().NewKeyExchange(*p.input);
    if (!kex.ok()) return kex.status();
    kex_ = *std::move(kex);
    absl::StatusOr<std::string> own_point = kex_->Start();
    if (!own_point.ok()) return own_point.status();
    v1::KeyExchangeResponse& r = out->emplace_back();
    r.set_ephemeral_point(*std::move(own_point));
    if (initiator) {
      step_ = Step::kAwaitingPeerPoint;
      return absl::OkStatus();
    }
    absl::StatusOr<Sm2KeyExchangeOutput> k = kex_->ComputeKey(req.peer_ephemeral_point());
    if (!k.ok()) return k.status();
    if (kex_->params().confirmation) {
      r.set_confirmation(std::move(k->confirmation));
      step_ = Step::kAwaitingPeerConfirmation;
    } else {
      r.set_shared_key(std::string(SecretDataAsStringView(k->key)));
      step_ = Step::kDone;
    }
    return absl::OkStatus();
  }

  absl::Status CheckConfirmationPresence(const v1::KeyExchangeRequest& req,
                                         absl::string_view name) const {
    const bool confirmation = kex_->params().confirmation;
    if (confirmation && req.peer_confirmation().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "confirmation is on: this message must carry peer_confirmation (", name, ")"));
    }
    if (!confirmation && !req.peer_confirmation().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "peer_confirmation (", name, ") was sent but params.confirmation is false"));
    }
    return absl::OkStatus();
  }

  absl::Status OnEnd(std::deque<v1::KeyExchangeResponse>* out) override {
    (void)out;
    if (kex_ == nullptr) {
      return absl::InvalidArgumentError("KeyExchange ended before its params");
    }
    if (step_ != Step::kDone) {
      return absl::InvalidArgumentError(
          step_ == Step::kAwaitingPeerPoint
              ? "KeyExchange ended before the peer's R_B: no shared key"
              : "KeyExchange ended before the peer's S_A: no shared key");
    }
    return absl::OkStatus();
  }

  std::unique_ptr<Sm2KeyExchange> kex_;
  Step step_ = Step::kAwaitingPeerPoint;
};

class HashStreamReactor final : public grpc::ServerReadReactor<v1::HashStreamRequest> {
 public:
  HashStreamReactor(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx,
                    v1::HashStreamResponse* response)
      : svc_(svc), ctx_(ctx), response_(response), idle_(ctx) {
    absl::Status s = svc_->Admit(ctx_);
    if (!s.ok()) {
      Finish(ToGrpcStatus(s));
      return;
    }
    if (svc_->reaper() != nullptr) {
      svc_->reaper()->Register(&idle_);
      registered_ = true;
    }
    StartRead(&req_);
  }

  void OnReadDone(bool ok) override {
    idle_.Touch();
    if (!ok) {
      if (ctx_->IsCancelled()) {
        Finish(grpc::Status::CANCELLED);
      } else if (hash_ == nullptr) {
        Finish(ToGrpcStatus(absl::InvalidArgumentError(
            "HashStream needs at least one message, carrying the algorithm")));
      } else {
        response_->set_digest(hash_->Finish());
        response_->set_total_bytes(total_);
        Finish(grpc::Status::OK);
      }
      return;
    }
    if (hash_ == nullptr) {
      absl::StatusOr<Algorithm> alg =
          Check(*svc_, rpc::kHashStream, ctx_, req_, PolicyScope::kCall, kAlgorithmOnly).input;
      absl::StatusOr<std::unique_ptr<HashStream>> h =
          alg.ok() ? svc_->engine().NewHashStream(*alg)
                   : absl::StatusOr<std::unique_ptr<HashStream>>(alg.status());
      if (!h.ok()) {
        Finish(ToGrpcStatus(h.status()));
        return;
      }
      hash_ = *std::move(h);
      first_algorithm_ = req_.algorithm();
    } else if (req_.algorithm() != v1::ALGORITHM_UNSPECIFIED &&
               req_.algorithm() != first_algorithm_) {
      Finish(ToGrpcStatus(absl::InvalidArgumentError(
          "algorithm changed within the stream; set it in the first message only")));
      return;
    }
    // The message is charged while it is hashed, so a stream message that does not fit
    // --max_inflight_bytes is refused as a unary call would be.
    const uint64_t bytes = req_.ByteSizeLong();
    absl::Status charged = svc_->TryCharge(bytes);
    if (!charged.ok()) {
      Finish(ToGrpcStatus(charged));
      return;
    }
    hash_->Update(req_.data());
    total_ += req_.data().size();
    svc_->Release(bytes);
    // The next read starts from an empty message (a cleared one keeps its buffers).
    v1::HashStreamRequest().Swap(&req_);
    StartRead(&req_);
  }

  void OnDone() override {
    if (registered_) svc_->reaper()->Unregister(&idle_);
    delete this;
  }

 private:
  const CryptoServiceImpl* svc_;
  grpc::CallbackServerContext* ctx_;
  v1::HashStreamResponse* response_;
  StreamReaper::Entry idle_;
  bool registered_ = false;
  v1::HashStreamRequest req_;
  std::unique_ptr<HashStream> hash_;
  v1::Algorithm first_algorithm_ = v1::ALGORITHM_UNSPECIFIED;
  uint64_t total_ = 0;
};

}  // namespace

CryptoServiceImpl::CryptoServiceImpl(const CryptoEngine* engine, SelfTests* self_tests,
                                     const std::atomic<int64_t>* inflight, ServiceInfo info,
                                     WorkerPool* workers, ServiceGuards guards)
    : engine_(engine),
      self_tests_(self_tests),
      inflight_(inflight),
      info_(std::move(info)),
      workers_(workers),
      guards_(guards) {
  if (info_.batching.enabled) {
    BatchQueue<SignCall>::Submit submit;
    if (workers_ != nullptr) submit = [this](std::function<void()> run) { Run(std::move(run)); };
    // One run per worker thread, so a single busy operation keeps every worker busy.
    const size_t runners = workers_ != nullptr ? workers_->num_threads() : 1;
    queues_ = std::make_unique<BatchQueues>(this, info_.batching, runners, std::move(submit),
                                            guards_.batches);
  }
}

void CryptoServiceImpl::Run(std::function<void()> work) const {
  if (workers_ == nullptr) {
    work();
  } else {
    workers_->Submit(std::move(work));
  }
}

absl::Status CryptoServiceImpl::Admit(grpc::CallbackServerContext* ctx, uint64_t bytes) const {
  const int64_t n = inflight_->load(std::memory_order_relaxed);
  if (n > info_.max_inflight) {
    return WithReason(absl::ResourceExhaustedError(absl::StrCat(
                          "more than ", info_.max_inflight,
                          " RPCs in flight (--max_inflight); retry later")),
                      reason::kOverloaded, {{"limit", "max_inflight"}});
  }
  if (ctx->deadline() < std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError("the deadline passed before the request was handled");
  }
  return TryCharge(bytes);
}

absl::Status CryptoServiceImpl::TryCharge(uint64_t bytes) const {
  if (bytes == 0) return absl::OkStatus();
  if (info_.max_inflight_bytes == 0) {
    Charge(bytes);
    return absl::OkStatus();
  }
  // Charge `bytes` unless that passes the budget. A lone call always fits.
  uint64_t current = inflight_bytes_.load(std::memory_order_relaxed);
  do {
    if (current != 0 && current + bytes > info_.max_inflight_bytes) {
      return WithReason(
          absl::ResourceExhaustedError(absl::StrCat(
              "more than ", info_.max_inflight_bytes,
              " bytes of requests and responses in flight (--max_inflight_bytes); retry later")),
          reason::kOverloaded, {{"limit", "max_inflight_bytes"}});
    }
  } while (!inflight_bytes_.compare_exchange_weak(current, current + bytes,
                                                  std::memory_order_relaxed));
  NotePeak(current + bytes);
  return absl::OkStatus();
}

void CryptoServiceImpl::Charge(uint64_t bytes) const {
  if (bytes == 0) return;
  NotePeak(inflight_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

void CryptoServiceImpl::Release(uint64_t bytes) const {
  if (bytes == 0) return;
  inflight_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

void CryptoServiceImpl::NotePeak(uint64_t now) const {
  for (std::atomic<uint64_t>* peak : {&peak_inflight_bytes_, &window_peak_bytes_}) {
    uint64_t seen = peak->load(std::memory_order_relaxed);
    while (now > seen && !peak->compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
  }
}

ClientIdentity IdentityOf(const grpc::CallbackServerContext& ctx) {
  ClientIdentity id;
  id.peer = ctx.peer();
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth == nullptr || !auth->IsPeerAuthenticated()) return id;
  id.authenticated = true;
  for (const grpc::string_ref& v : auth->FindPropertyValues(GRPC_X509_SUBJECT_PROPERTY_NAME)) {
    id.subject.assign(v.data(), v.size());
  }
  for (const grpc::string_ref& v : auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME)) {
    id.common_name.assign(v.data(), v.size());
  }
  for (const grpc::string_ref& v : auth->FindPropertyValues(GRPC_X509_SAN_PROPERTY_NAME)) {
    id.sans.emplace_back(v.data(), v.size());
  }
  return id;
}

absl::Status CryptoServiceImpl::Authorize(grpc::CallbackServerContext* ctx,
                                          absl::string_view method, AccessOperation op,
                                          v1::Algorithm alg, const v1::KeyRef* key) const {
  if (guards_.policy == nullptr) return absl::OkStatus();
  const ClientIdentity client = IdentityOf(*ctx);
  const AccessKey access_key = ToAccessKey(key);
  absl::Status s = guards_.policy->Check(client, op, access_key);
  if (!s.ok() && guards_.audit != nullptr) {
    AuditRecord r;
    r.client = &client;
    r.method = method;
    r.operation = op;
    r.algorithm = AlgorithmLabel(alg);
    r.key = access_key;
    if (key != nullptr && key->ref_case() == v1::KeyRef::kKeyId) {
      // The version named, else the newest of a key with version files (as PinKeyVersion
      // reports it).
      r.key_version = key->key_version();
      if (r.key_version == 0) {
        const std::shared_ptr<const KeyStore> keys = engine_->key_store();
        absl::StatusOr<const StoredKey*> entry = keys->Find(key->key_id(), 0);
        if (entry.ok() && (*entry)->versioned) r.key_version = (*entry)->version;
      }
    }
    r.code = s.code();
    guards_.audit->Write(r);
  }
  return s;
}

void CryptoServiceImpl::Audit(grpc::CallbackServerContext* ctx, absl::string_view method,
                              AccessOperation op, v1::Algorithm alg, const v1::KeyRef* key,
                              absl::StatusCode code, uint32_t key_version) const {
  if (guards_.audit == nullptr || !guards_.audit->enabled()) return;
  const ClientIdentity client = IdentityOf(*ctx);
  AuditRecord r;
  r.client = &client;
  r.method = method;
  r.operation = op;
  r.algorithm = AlgorithmLabel(alg);
  r.key = ToAccessKey(key);
  r.key_version = key_version;
  r.code = code;
  guards_.audit->Write(r);
}

absl::Status CryptoServiceImpl::PinKeyVersion(const v1::KeyRef& ref, KeyInput* key) const {
  if (ref.key_version() != 0 && ref.ref_case() != v1::KeyRef::kKeyId) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key.key_version (", ref.key_version(),
        ") names a version of a keyring key; it must be 0 (unset) unless key.key_id is set"));
  }
  if (key->kind != KeyInput::Kind::kKeyId) return absl::OkStatus();
  const std::shared_ptr<const KeyStore> keys = engine_->key_store();
  absl::StatusOr<const StoredKey*> entry = keys->Find(key->value, key->version);
  if (!entry.ok()) {
    // The engine answers with Find's error; the audit line names the refused version.
    key->report_version = ref.key_version() != 0;
    return absl::OkStatus();
  }
  key->version = (*entry)->version;
  key->report_version = ref.key_version() != 0 || (*entry)->versioned;
  return absl::OkStatus();
}

// ---- Batched operations ------------------------------------------------------------------

namespace {

// CheckAndRun is the body of every batched path (the batch queues' runs and the batch
// RPCs' chunks): check(i) → Checked<In> for each i in [0, n), one engine(inputs) call for
// the inputs that passed, then answer(i, result, audit, input) in order, where `result` is
// item i's engine result or the status its check left and `input` its checked input (null
// when the check failed). The inputs' views stay valid until the items are answered.
template <typename In, typename CheckFn, typename Engine, typename Answer>
void CheckAndRun(size_t n, const CheckFn& check, const Engine& engine, const Answer& answer) {
  constexpr size_t kNotRun = ~size_t{0};
  std::vector<Checked<In>> checked;
  checked.reserve(n);
  std::vector<In> inputs;
  std::vector<size_t> index(n, kNotRun);  // item → position in inputs
  for (size_t i = 0; i < n; ++i) {
    checked.push_back(check(i));
    if (checked[i].input.ok()) {
      index[i] = inputs.size();
      inputs.push_back(*std::move(checked[i].input));
    }
  }
  auto results = engine(inputs);
  using Result = typename decltype(results)::value_type;
  for (size_t i = 0; i < n; ++i) {
    Result r = index[i] == kNotRun ? Result(checked[i].input.status())
                                   : std::move(results[index[i]]);
    const In* input = index[i] == kNotRun ? nullptr : &inputs[index[i]];
    answer(i, std::move(r), checked[i].audit, input);
  }
}

// RunQueued answers a run of queued calls as their unary handler would: each call still
// wanted is checked with the handler's MethodSpec (Check: cancellation, access policy,
// parsing, in that spec's order), the calls that pass go to the engine's batch operation
// in one call, and each call is answered with its own status, write(response, value,
// input) filling the response of a success; an audited method audits each allowed call.
template <typename Call, typename Parse, typename Engine, typename Write>
void RunQueued(const CryptoServiceImpl& svc, const MethodSpec& spec, absl::Span<Call> calls,
               const Parse& parse, const Engine& engine, const Write& write) {
  using In = InputOf<Parse, typename Call::Request>;
  CheckAndRun<In>(
      calls.size(),
      [&](size_t i) -> Checked<In> {
        const Call& c = calls[i];
        if (c.ctx->IsCancelled()) return {NotWanted(), false};
        return Check(svc, spec, c.ctx, *c.request, PolicyScope::kCall, parse);
      },
      engine,
      [&](size_t i, auto result, bool audit, const In* input) {
        const Call& c = calls[i];
        if (result.ok()) write(c.response, *std::move(result), *input);
        if (audit) {
          const uint32_t v = input != nullptr ? ReportedVersion(*input)
                                              : AuditVersion(*c.request, absl::StatusOr<In>(
                                                                             result.status()));
          AuditDone(svc, spec, c.ctx, *c.request, result.status().code(), v);
        }
        FinishQueued(c, result.status());
      });
}

void RunSignBatch(const CryptoServiceImpl& svc, absl::Span<SignCall> calls) {
  RunQueued(
      svc, rpc::kSign, calls, SignItemFrom,
      [&](absl::Span<const SignItem> items) { return svc.engine().SignBatch(items); },
      [](v1::SignResponse* r, std::string sig, const SignItem& in) {
        r->set_signature(std::move(sig));
        r->set_key_version(ReportedVersion(in));
      });
}

void RunVerifyBatch(const CryptoServiceImpl& svc, absl::Span<VerifyCall> calls) {
  RunQueued(
      svc, rpc::kVerify, calls, VerifyItemFrom,
      [&](absl::Span<const VerifyItem> items) { return svc.engine().VerifyBatch(items); },
      [](v1::VerifyResponse* r, bool valid, const VerifyItem&) { r->set_valid(valid); });
}

void RunHashBatch(const CryptoServiceImpl& svc, absl::Span<HashCall> calls) {
  // The queue takes SM3 only, so every item is {kSm3, data}.
  RunQueued(
      svc, rpc::kHash, calls, HashItemFrom,
      [&](absl::Span<const HashItem> items) { return svc.engine().HashBatch(items); },
      [](v1::HashResponse* r, std::string digest, const HashItem&) {
        r->set_digest(std::move(digest));
      });
}

void RunPublicKeyEncryptBatch(const CryptoServiceImpl& svc,
                              absl::Span<PublicKeyEncryptCall> calls) {
  RunQueued(
      svc, rpc::kPublicKeyEncrypt, calls, PublicKeyEncryptItemFrom,
      [&](absl::Span<const PublicKeyEncryptItem> items) {
        return svc.engine().PublicKeyEncryptBatch(items);
      },
      [](v1::PublicKeyEncryptResponse* r, std::string ct, const PublicKeyEncryptItem& in) {
        r->set_ciphertext(std::move(ct));
        r->set_key_version(ReportedVersion(in));
      });
}

void RunHybridEncryptBatch(const CryptoServiceImpl& svc, absl::Span<HybridEncryptCall> calls) {
  RunQueued(
      svc, rpc::kHybridEncrypt, calls, HybridEncryptItemFrom,
      [&](absl::Span<const HybridEncryptItem> items) {
        return svc.engine().HybridEncryptBatch(items);
      },
      [](v1::HybridEncryptResponse* r, std::string ct, const HybridEncryptItem& in) {
        r->set_ciphertext(std::move(ct));
        r->set_key_version(ReportedVersion(in));
      });
}

// kBatchChunk: SignBatch, VerifyBatch, EncryptBatch and HybridEncryptBatch items per
// engine call (its SM2 items share the multi-buffer path, SM4-CBC items the multi-buffer
// lanes, HPKE items to one recipient key HybridEncrypt::EncryptMany); cancellation is
// checked between calls. kWholeBatch: HashBatch's items go to the engine at once.
constexpr int kBatchChunk = 256;
constexpr int kWholeBatch = 0;

// RunBatch answers a batch RPC's items in request order, `chunk` items per engine call
// (kWholeBatch: all at once, with no cancellation check). Before each chunk, StillWanted
// stops a batch whose deadline passed or whose client cancelled. Each item is checked
// with the batch's spec at PolicyScope::kEachItem (parsed, and for a per-item method
// authorized, in spec.order), the items that pass go to `engine` together, and
// write(result, input) adds each item's result (`input`: its checked input, null when
// the check failed); an audited method audits each allowed item's final status.
template <typename Item, typename Parse, typename Engine, typename Write>
absl::Status RunBatch(const CryptoServiceImpl& svc, const MethodSpec& spec,
                      grpc::CallbackServerContext* ctx,
                      const google::protobuf::RepeatedPtrField<Item>& items, int chunk,
                      const Parse& parse, const Engine& engine, const Write& write) {
  using In = InputOf<Parse, Item>;
  const int n = items.size();
  const int step = chunk == kWholeBatch ? n : chunk;
  for (int begin = 0; begin < n; begin += step) {
    if (chunk != kWholeBatch) {
      absl::Status s = StillWanted(ctx);
      if (!s.ok()) return s;
    }
    const int end = std::min(n, begin + step);
    CheckAndRun<In>(
        end - begin,
        [&](size_t i) {
          return Check(svc, spec, ctx, items[begin + i], PolicyScope::kEachItem, parse);
        },
        engine,
        [&](size_t i, auto result, bool audit, const In* input) {
          if (audit) {
            const uint32_t v =
                input != nullptr
                    ? ReportedVersion(*input)
                    : AuditVersion(items[begin + i], absl::StatusOr<In>(result.status()));
            AuditDone(svc, spec, ctx, items[begin + i], result.status().code(), v);
          }
          write(std::move(result), input);
        });
  }
  return absl::OkStatus();
}

// SymmetricInput: an Encrypt item's parameters and plaintext.
struct SymmetricInput {
  SymmetricParams params;
  absl::string_view plaintext;
};

absl::StatusOr<SymmetricParams> EncryptParamsFrom(const v1::EncryptRequest& req) {
  return SymmetricFrom(
      req, req.has_nonce() ? std::optional<absl::string_view>(req.nonce()) : std::nullopt,
      req.tag_length());
}

}  // namespace

// The batched operations: SM2 signatures, verifications and encryptions, the SM HPKE
// suite, and SM3 hashes of at most kMaxBatchedHashSize bytes; other algorithms run one
// call at a time (their primitives share no work across messages). Each queue's
// BatchedOperation (its metrics label) is the queue column of its method's row.
struct CryptoServiceImpl::BatchQueues {
  BatchQueues(const CryptoServiceImpl* svc, const BatchSettings& settings, size_t runners,
              BatchQueue<SignCall>::Submit submit, BatchObserver* observer)
      : sign(*rpc::kSign.queue, settings, runners, submit,
             [svc](absl::Span<SignCall> b) { RunSignBatch(*svc, b); }, observer),
        verify(*rpc::kVerify.queue, settings, runners, submit,
               [svc](absl::Span<VerifyCall> b) { RunVerifyBatch(*svc, b); }, observer),
        // A hash of at most kMaxBatchedHashSize bytes costs less than handing it to a
        // worker: its batches run on the gRPC thread that received the call.
        hash(*rpc::kHash.queue, settings, std::max<size_t>(runners, 2), nullptr,
             [svc](absl::Span<HashCall> b) { RunHashBatch(*svc, b); }, observer),
        public_key_encrypt(
            *rpc::kPublicKeyEncrypt.queue, settings, runners, submit,
            [svc](absl::Span<PublicKeyEncryptCall> b) { RunPublicKeyEncryptBatch(*svc, b); },
            observer),
        hybrid_encrypt(
            *rpc::kHybridEncrypt.queue, settings, runners, submit,
            [svc](absl::Span<HybridEncryptCall> b) { RunHybridEncryptBatch(*svc, b); },
            observer) {}

  BatchQueue<SignCall> sign;
  BatchQueue<VerifyCall> verify;
  BatchQueue<HashCall> hash;
  BatchQueue<PublicKeyEncryptCall> public_key_encrypt;
  BatchQueue<HybridEncryptCall> hybrid_encrypt;
};

// The worker pool outlives the service and still runs queued tasks when the service is
// destroyed (server.h): a batch run may still be queued after its last call was answered,
// so the queues are drained of runs first.
CryptoServiceImpl::~CryptoServiceImpl() {
  if (queues_ == nullptr) return;
  queues_->sign.WaitIdle();
  queues_->verify.WaitIdle();
  queues_->hash.WaitIdle();
  queues_->public_key_encrypt.WaitIdle();
  queues_->hybrid_encrypt.WaitIdle();
}

// ---- Hashing -------------------------------------------------------------------------

grpc::ServerUnaryReactor* CryptoServiceImpl::Hash(grpc::CallbackServerContext* ctx,
                                                  const v1::HashRequest* request,
                                                  v1::HashResponse* response) {
  if (queues_ != nullptr && request->algorithm() == v1::SM3 &&
      request->data().size() <= kMaxBatchedHashSize) {
    return Queued(this, rpc::kHash, &queues_->hash, ctx, request, response);
  }
  return Guarded(
      this, rpc::kHash, ctx, request, response, HashItemFrom,
      [this, response](const HashItem& item) -> absl::Status {
        absl::StatusOr<std::string> digest = engine_->Hash(item.algorithm, item.data);
        if (!digest.ok()) return digest.status();
        response->set_digest(*std::move(digest));
        return absl::OkStatus();
      });
}

grpc::ServerReadReactor<v1::HashStreamRequest>* CryptoServiceImpl::HashStream(
    grpc::CallbackServerContext* ctx, v1::HashStreamResponse* response) {
  return new HashStreamReactor(this, ctx, response);
}

grpc::ServerUnaryReactor* CryptoServiceImpl::HashBatch(grpc::CallbackServerContext* ctx,
                                                       const v1::HashBatchRequest* request,
                                                       v1::HashBatchResponse* response) {
  // One policy check for the batch, after its size; items with a bad algorithm get their
  // status, the others go to the engine in one call.
  return Guarded(
      this, rpc::kHashBatch, ctx, request, response, kBatchSize,
      [this, ctx, request, response](std::monostate) {
        return RunBatch(
            *this, rpc::kHashBatch, ctx, request->items(), kWholeBatch, HashItemFrom,
            [this](absl::Span<const HashItem> items) {
              return engine_->HashBatch(items);
            },
            [response](absl::StatusOr<std::string> digest, const HashItem*) {
              v1::HashBatchResult* r = response->add_results();
              SetItemStatus(digest.status(), r->mutable_status());
              if (digest.ok()) r->set_digest(*std::move(digest));
            });
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::Hmac(grpc::CallbackServerContext* ctx,
                                                  const v1::HmacRequest* request,
                                                  v1::HmacResponse* response) {
  // An HMAC uses a secret key on the caller's behalf: audited like a signature.
  return Guarded(
      this, rpc::kHmac, ctx, request, response, kAlgorithmAndKey,
      [this, request, response](const KeyedAlgorithm& in) -> absl::Status {
        const Algorithm alg = in.algorithm;
        const KeyInput& key = in.key;
        if (request->has_expected_mac()) {
          absl::StatusOr<bool> valid =
              engine_->VerifyHmac(alg, key, request->data(), request->expected_mac());
          if (!valid.ok()) return valid.status();
          response->set_valid(*valid);
          return absl::OkStatus();
        }
        absl::StatusOr<std::string> mac = engine_->Hmac(alg, key, request->data());
        if (!mac.ok()) return mac.status();
        response->set_mac(*std::move(mac));
        return absl::OkStatus();
      });
}

// ---- Signatures ----------------------------------------------------------------------

grpc::ServerUnaryReactor* CryptoServiceImpl::Sign(grpc::CallbackServerContext* ctx,
                                                  const v1::SignRequest* request,
                                                  v1::SignResponse* response) {
  if (queues_ != nullptr && request->algorithm() == v1::SM2) {
    return Queued(this, rpc::kSign, &queues_->sign, ctx, request, response);
  }
  return Guarded(
      this, rpc::kSign, ctx, request, response, SignItemFrom,
      [this, response](const SignItem& item) -> absl::Status {
        absl::StatusOr<std::string> sig = engine_->Sign(
            item.algorithm, item.key, item.data, item.options, item.user_id_set);
        if (!sig.ok()) return sig.status();
        response->set_signature(*std::move(sig));
        response->set_key_version(ReportedVersion(item));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::Verify(grpc::CallbackServerContext* ctx,
                                                    const v1::VerifyRequest* request,
                                                    v1::VerifyResponse* response) {
  if (queues_ != nullptr && request->algorithm() == v1::SM2) {
    return Queued(this, rpc::kVerify, &queues_->verify, ctx, request, response);
  }
  return Guarded(
      this, rpc::kVerify, ctx, request, response, VerifyItemFrom,
      [this, response](const VerifyItem& item) -> absl::Status {
        absl::StatusOr<bool> valid =
            engine_->Verify(item.algorithm, item.key, item.data, item.signature,
                            item.options, item.user_id_set);
        if (!valid.ok()) return valid.status();
        response->set_valid(*valid);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::SignBatch(grpc::CallbackServerContext* ctx,
                                                       const v1::SignBatchRequest* request,
                                                       v1::SignBatchResponse* response) {
  // Each item: policy, then parsing (a denial wins); allowed items are audited.
  return Guarded(
      this, rpc::kSignBatch, ctx, request, response, kBatchSize,
      [this, ctx, request, response](std::monostate) {
        return RunBatch(
            *this, rpc::kSignBatch, ctx, request->items(), kBatchChunk, SignItemFrom,
            [this](absl::Span<const SignItem> items) {
              return engine_->SignBatch(items);
            },
            [response](absl::StatusOr<std::string> sig, const SignItem* in) {
              v1::SignBatchResult* r = response->add_results();
              SetItemStatus(sig.status(), r->mutable_status());
              if (sig.ok()) {
                r->set_signature(*std::move(sig));
                r->set_key_version(ReportedVersion(*in));
              }
            });
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::VerifyBatch(grpc::CallbackServerContext* ctx,
                                                         const v1::VerifyBatchRequest* request,
                                                         v1::VerifyBatchResponse* response) {
  // Each item: policy, then parsing (a denial wins).
  return Guarded(
      this, rpc::kVerifyBatch, ctx, request, response, kBatchSize,
      [this, ctx, request, response](std::monostate) {
        return RunBatch(
            *this, rpc::kVerifyBatch, ctx, request->items(), kBatchChunk,
            VerifyItemFrom,
            [this](absl::Span<const VerifyItem> items) {
              return engine_->VerifyBatch(items);
            },
            [response](absl::StatusOr<bool> valid, const VerifyItem*) {
              v1::VerifyBatchResult* r = response->add_results();
              SetItemStatus(valid.status(), r->mutable_status());
              if (valid.ok()) r->set_valid(*valid);
            });
      });
}

// ---- Symmetric encryption ------------------------------------------------------------

grpc::ServerUnaryReactor* CryptoServiceImpl::Encrypt(grpc::CallbackServerContext* ctx,
                                                     const v1::EncryptRequest* request,
                                                     v1::EncryptResponse* response) {
  return Guarded(
      this, rpc::kEncrypt, ctx, request, response, EncryptParamsFrom,
      [this, request, response](const SymmetricParams& p) -> absl::Status {
        absl::StatusOr<SymmetricCiphertext> ct =
            engine_->Encrypt(p, request->plaintext());
        if (!ct.ok()) return ct.status();
        response->set_nonce(std::move(ct->nonce));
        response->set_ciphertext(std::move(ct->ciphertext));
        response->set_tag(std::move(ct->tag));
        response->set_key_version(ReportedVersion(p));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::Decrypt(grpc::CallbackServerContext* ctx,
                                                     const v1::DecryptRequest* request,
                                                     v1::DecryptResponse* response) {
  return Guarded(
      this, rpc::kDecrypt, ctx, request, response,
      [](const v1::DecryptRequest& r) {
        return SymmetricFrom(r, absl::string_view(r.nonce()), 0);
      },
      [this, request, response](const SymmetricParams& p) -> absl::Status {
        absl::StatusOr<std::string> pt =
            engine_->Decrypt(p, request->ciphertext(), request->tag());
        if (!pt.ok()) return pt.status();
        response->set_plaintext(*std::move(pt));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::EncryptBatch(grpc::CallbackServerContext* ctx,
                                                          const v1::EncryptBatchRequest* request,
                                                          v1::EncryptBatchResponse* response) {
  // Each item: parsing, then policy (a parse error wins; such an item is not checked).
  return Guarded(
      this, rpc::kEncryptBatch, ctx, request, response, kBatchSize,
      [this, ctx, request, response](std::monostate) {
        return RunBatch(
            *this, rpc::kEncryptBatch, ctx, request->items(), kBatchChunk,
            [](const v1::EncryptRequest& item) -> absl::StatusOr<SymmetricInput> {
              absl::StatusOr<SymmetricParams> p = EncryptParamsFrom(item);
              if (!p.ok()) return p.status();
              return SymmetricInput{*std::move(p), item.plaintext()};
            },
            [this](absl::Span<const SymmetricInput> inputs) {
              std::vector<SymmetricParams> params;
              std::vector<absl::string_view> plaintexts;
              params.reserve(inputs.size());
              plaintexts.reserve(inputs.size());
              for (const SymmetricInput& in : inputs) {
                params.push_back(in.params);
                plaintexts.push_back(in.plaintext);
              }
              return engine_->EncryptBatch(params, plaintexts);
            },
            [response](absl::StatusOr<SymmetricCiphertext> ct, const SymmetricInput* in) {
              v1::EncryptBatchResult* r = response->add_results();
              SetItemStatus(ct.status(), r->mutable_status());
              if (ct.ok()) {
                r->set_nonce(std::move(ct->nonce));
                r->set_ciphertext(std::move(ct->ciphertext));
                r->set_tag(std::move(ct->tag));
                r->set_key_version(ReportedVersion(*in));
              }
            });
      });
}

grpc::ServerBidiReactor<v1::EncryptStreamRequest, v1::EncryptStreamResponse>*
CryptoServiceImpl::EncryptStream(grpc::CallbackServerContext* ctx) {
  auto* reactor = new EncryptStreamReactor(this, ctx);
  reactor->Start();
  return reactor;
}

grpc::ServerBidiReactor<v1::DecryptStreamRequest, v1::DecryptStreamResponse>*
CryptoServiceImpl::DecryptStream(grpc::CallbackServerContext* ctx) {
  auto* reactor = new DecryptStreamReactor(this, ctx);
  reactor->Start();
  return reactor;
}

// ---- Public-key and hybrid encryption --------------------------------------------------

grpc::ServerUnaryReactor* CryptoServiceImpl::PublicKeyEncrypt(
    grpc::CallbackServerContext* ctx, const v1::PublicKeyEncryptRequest* request,
    v1::PublicKeyEncryptResponse* response) {
  if (queues_ != nullptr && request->algorithm() == v1::SM2) {
    return Queued(this, rpc::kPublicKeyEncrypt, &queues_->public_key_encrypt, ctx, request,
                  response);
  }
  return Guarded(
      this, rpc::kPublicKeyEncrypt, ctx, request, response, PublicKeyEncryptItemFrom,
      [this, response](const PublicKeyEncryptItem& item) -> absl::Status {
        absl::StatusOr<std::string> ct = engine_->PublicKeyEncrypt(
            item.algorithm, item.key, item.plaintext, item.format);
        if (!ct.ok()) return ct.status();
        response->set_ciphertext(*std::move(ct));
        response->set_key_version(ReportedVersion(item));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::PublicKeyDecrypt(
    grpc::CallbackServerContext* ctx, const v1::PublicKeyDecryptRequest* request,
    v1::PublicKeyDecryptResponse* response) {
  return Guarded(
      this, rpc::kPublicKeyDecrypt, ctx, request, response,
      [](const v1::PublicKeyDecryptRequest& r) -> absl::StatusOr<KeyedAlgorithm> {
        absl::StatusOr<Algorithm> alg = ToAlgorithm(r.algorithm());
        if (!alg.ok()) return alg.status();
        absl::StatusOr<Sm2CiphertextFormat> format = ToSm2Format(*alg, r.sm2_format());
        if (!format.ok()) return format.status();
        return KeyedAlgorithm{*alg, ToKey(r.key()), *format};
      },
      [this, request, response](const KeyedAlgorithm& p) -> absl::Status {
        absl::StatusOr<std::string> pt = engine_->PublicKeyDecrypt(
            p.algorithm, p.key, request->ciphertext(), p.format);
        if (!pt.ok()) return pt.status();
        response->set_plaintext(*std::move(pt));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::HybridEncrypt(
    grpc::CallbackServerContext* ctx, const v1::HybridEncryptRequest* request,
    v1::HybridEncryptResponse* response) {
  if (queues_ != nullptr && request->algorithm() == v1::HPKE_SM2_SM3_SM4GCM) {
    return Queued(this, rpc::kHybridEncrypt, &queues_->hybrid_encrypt, ctx, request, response);
  }
  return Guarded(
      this, rpc::kHybridEncrypt, ctx, request, response, HybridEncryptItemFrom,
      [this, response](const HybridEncryptItem& item) -> absl::Status {
        absl::StatusOr<std::string> ct = engine_->HybridEncrypt(
            item.algorithm, item.key, item.plaintext, item.info);
        if (!ct.ok()) return ct.status();
        response->set_ciphertext(*std::move(ct));
        response->set_key_version(ReportedVersion(item));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::HybridEncryptBatch(
    grpc::CallbackServerContext* ctx, const v1::HybridEncryptBatchRequest* request,
    v1::HybridEncryptBatchResponse* response) {
  // Each item as HybridEncrypt checks it: algorithm, then policy.
  return Guarded(
      this, rpc::kHybridEncryptBatch, ctx, request, response, kBatchSize,
      [this, ctx, request, response](std::monostate) {
        return RunBatch(
            *this, rpc::kHybridEncryptBatch, ctx, request->items(), kBatchChunk,
            HybridEncryptItemFrom,
            [this](absl::Span<const HybridEncryptItem> items) {
              return engine_->HybridEncryptBatch(items);
            },
            [response](absl::StatusOr<std::string> ct, const HybridEncryptItem* in) {
              v1::HybridEncryptBatchResult* r = response->add_results();
              SetItemStatus(ct.status(), r->mutable_status());
              if (ct.ok()) {
                r->set_ciphertext(*std::move(ct));
                r->set_key_version(ReportedVersion(*in));
              }
            });
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::HybridDecrypt(
    grpc::CallbackServerContext* ctx, const v1::HybridDecryptRequest* request,
    v1::HybridDecryptResponse* response) {
  return Guarded(
      this, rpc::kHybridDecrypt, ctx, request, response, kAlgorithmAndKey,
      [this, request, response](const KeyedAlgorithm& in) -> absl::Status {
        absl::StatusOr<std::string> pt = engine_->HybridDecrypt(
            in.algorithm, in.key, request->ciphertext(), request->info());
        if (!pt.ok()) return pt.status();
        response->set_plaintext(*std::move(pt));
        return absl::OkStatus();
      });
}

grpc::ServerBidiReactor<v1::HybridEncryptStreamRequest, v1::HybridEncryptStreamResponse>*
CryptoServiceImpl::HybridEncryptStream(grpc::CallbackServerContext* ctx) {
  auto* reactor = new HybridEncryptStreamReactor(this, ctx);
  reactor->Start();
  return reactor;
}

grpc::ServerBidiReactor<v1::HybridDecryptStreamRequest, v1::HybridDecryptStreamResponse>*
CryptoServiceImpl::HybridDecryptStream(grpc::CallbackServerContext* ctx) {
  auto* reactor = new HybridDecryptStreamReactor(this, ctx);
  reactor->Start();
  return reactor;
}

grpc::ServerBidiReactor<v1::KeyExchangeRequest, v1::KeyExchangeResponse>*
CryptoServiceImpl::KeyExchange(grpc::CallbackServerContext* ctx) {
  auto* reactor = new KeyExchangeReactor(this, ctx);
  reactor->Start();
  return reactor;
}

// ---- Keys, randomness, server information ------------------------------------------------

grpc::ServerUnaryReactor* CryptoServiceImpl::GenerateKeyPair(
    grpc::CallbackServerContext* ctx, const v1::GenerateKeyPairRequest* request,
    v1::GenerateKeyPairResponse* response) {
  return Guarded(
      this, rpc::kGenerateKeyPair, ctx, request, response, kAlgorithmOnly,
      [this, request, response](Algorithm alg) -> absl::Status {
        absl::StatusOr<GeneratedKeyPair> kp =
            engine_->GenerateKeyPair(alg, request->omit_private_key());
        if (!kp.ok()) return kp.status();
        if (!kp->private_key_der.empty()) {
          const absl::string_view der = SecretDataAsStringView(kp->private_key_der);
          response->set_private_key_der(std::string(der));
          response->set_private_key_pem(PemEncode("PRIVATE KEY", der));
        }
        response->set_public_key_pem(PemEncode("PUBLIC KEY", kp->public_key_der));
        response->set_public_key_der(std::move(kp->public_key_der));
        response->set_private_key_withheld(kp->private_key_withheld);
        return absl::OkStatus();
      },
      [response] { WipeKeyPair(response); });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::GetPublicKey(grpc::CallbackServerContext* ctx,
                                                          const v1::GetPublicKeyRequest* request,
                                                          v1::GetPublicKeyResponse* response) {
  return Guarded(
      this, rpc::kGetPublicKey, ctx, request, response, kAlgorithmAndKey,
      [this, response](const KeyedAlgorithm& in) -> absl::Status {
        // A named version is looked up as everywhere (KeyStore::Find): its key, or
        // NOT_FOUND / FAILED_PRECONDITION; no version is the newest.
        absl::StatusOr<std::string> der = engine_->GetPublicKey(in.algorithm, in.key);
        if (!der.ok()) return der.status();
        if (in.key.report_version) {
          absl::StatusOr<std::vector<std::pair<uint32_t, std::string>>> versions =
              engine_->PublicKeyVersions(in.algorithm, in.key);
          if (!versions.ok()) return versions.status();
          for (auto& [version, version_der] : *versions) {
            v1::PublicKeyVersion* v = response->add_versions();
            v->set_version(version);
            v->set_public_key_pem(PemEncode("PUBLIC KEY", version_der));
            v->set_public_key_der(std::move(version_der));
          }
        }
        response->set_public_key_pem(PemEncode("PUBLIC KEY", *der));
        response->set_public_key_der(*std::move(der));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::GenerateRandom(
    grpc::CallbackServerContext* ctx, const v1::GenerateRandomRequest* request,
    v1::GenerateRandomResponse* response) {
  return Guarded(
      this, rpc::kGenerateRandom, ctx, request, response, kNothingToParse,
      [this, request, response](std::monostate) -> absl::Status {
        absl::StatusOr<std::string> data = engine_->GenerateRandom(request->length());
        if (!data.ok()) return data.status();
        response->set_data(*std::move(data));
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::GetServerInfo(
    grpc::CallbackServerContext* ctx, const v1::GetServerInfoRequest* request,
    v1::GetServerInfoResponse* response) {
  return Guarded(
      this, rpc::kGetServerInfo, ctx, request, response, kNothingToParse,
      [this, request, response](std::monostate) -> absl::Status {
        if (request->run_self_tests()) self_tests_->Run();
        response->set_version(info_.version);
        response->set_cpu_features_detected(FormatCpuFeatureList(DetectCpuFeatures()));
        response->set_cpu_features_active(FormatCpuFeatureList(GetCpuFeatures()));
        response->set_cpu(FormatCpuIdentity(GetCpuIdentity()));
        for (const KernelChoice& k : ActiveKernels()) {
          v1::KernelInfo* ki = response->add_kernels();
          ki->set_algorithm(k.algorithm);
          ki->set_kernel(k.kernel);
        }
        response->set_max_message_bytes(info_.max_message_bytes);
        response->set_max_inflight(static_cast<uint64_t>(info_.max_inflight));
        response->set_inline_private_keys(engine_->allow_inline_private_keys() ? "allow" : "deny");
        for (const SelfTestResult& r : self_tests_->results()) {
          v1::SelfTestResult* out = response->add_self_tests();
          out->set_name(r.name);
          out->set_passed(r.passed);
          out->set_message(r.message);
        }
        response->set_self_tests_passed(self_tests_->all_passed());
        for (Algorithm alg : AllAlgorithms()) {
          response->add_algorithms(std::string(AlgorithmName(alg)));
        }
        response->set_keyring_size(static_cast<uint32_t>(engine_->keyring_size()));
        response->set_max_inflight_bytes(info_.max_inflight_bytes);
        v1::BatchingInfo* batching = response->mutable_batching();
        batching->set_enabled(queues_ != nullptr);
        batching->set_max_batch_size(static_cast<uint32_t>(info_.batching.max_batch));
        batching->set_max_delay_micros(
            static_cast<uint64_t>(absl::ToInt64Microseconds(info_.batching.max_delay)));
        if (queues_ != nullptr) {
          for (int i = 0; i < kNumBatchedOperations; ++i) {
            const auto op = static_cast<BatchedOperation>(i);
            batching->add_operations(
                absl::StrCat(BatchedMethod(op), "(", BatchedAlgorithm(op), ")"));
          }
        }
        return absl::OkStatus();
      });
}

}  // namespace smcrypt::server
