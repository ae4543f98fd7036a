// call_guard.h — the call guard of the unary handlers, and the checks it shares with the
// batch runs and the streams.
//
// Guarded admits a unary call (admission.h), runs its work on the worker pool, and on
// the way checks the access policy and parses the request in the order its MethodSpec
// row says (Check), audits an audited method's final status (AuditDone) and converts
// the status. The pieces are templates over the request types; only the service's own
// files include this header.
#ifndef SMCRYPT_SERVER_SERVICE_CALL_GUARD_H_
#define SMCRYPT_SERVER_SERVICE_CALL_GUARD_H_

#include <functional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "server/engine/crypto_engine.h"
#include "server/service/admission.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/method_spec.h"
#include "server/service/proto_convert.h"
#include "server/service/status_util.h"

namespace smcrypt::server {

// CheckBatchSize: INVALID_ARGUMENT for a batch of more than CryptoEngine::kMaxBatchItems.
inline absl::Status CheckBatchSize(size_t n) {
  if (n > CryptoEngine::kMaxBatchItems) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a batch holds at most ", CryptoEngine::kMaxBatchItems, " items, got ", n));
  }
  return absl::OkStatus();
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

// CallReactor finishes a unary call and holds its charge (CallCharge: --max_inflight_bytes
// and its connection's share) until gRPC is done with the call (OnDone: the response was
// handed to the transport, or the call ended without it), then runs `on_done` (before
// gRPC frees the response).
class CallReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit CallReactor(std::function<void()> on_done) : on_done_(std::move(on_done)) {}

  // charge: what Admit charged the call.
  CallCharge* charge() { return &charge_; }
  // Hold changes the charge to `bytes`: the difference is charged (whatever the budget:
  // the response exists) or released.
  void Hold(uint64_t bytes) { charge_.Set(bytes); }

  void OnDone() override {
    if (on_done_) on_done_();
    charge_.Close();
    delete this;
  }

 private:
  std::function<void()> on_done_;
  CallCharge charge_;
};

// AdmitCall makes a unary call's CallReactor (`on_done`: CallReactor's) and admits the
// call, charging AdmissionBytes(spec). A call refused is answered at once with the
// refusal (its inline keys wiped, its payload freed) and `*admitted` is false.
template <typename Req>
CallReactor* AdmitCall(const CryptoServiceImpl* svc, const MethodSpec& spec,
                       grpc::CallbackServerContext* ctx, const Req* request,
                       std::function<void()> on_done, bool* admitted) {
  auto* reactor = new CallReactor(std::move(on_done));
  const uint64_t bytes = AdmissionBytes(spec, *request);
  absl::Status s = svc->Admit(ctx, /*stream=*/false, bytes, reactor->charge());
  *admitted = s.ok();
  if (!s.ok()) {
    WipeInlineKeys(*request);
    FreePayload(request);
    reactor->Finish(ToGrpcStatus(s));
  }
  return reactor;
}

// Unary admits the call (AdmitCall), then runs `fn` on the worker pool
// (CryptoServiceImpl::Run) and finishes the CallReactor with its status. `fn` must
// capture nothing from the handler's stack (the handler returns before it runs): ctx,
// request and response live until the reactor is done. The call's charge is
// AdmissionBytes(spec) from admission, HeldBytes once `fn` has run; its inline keys are
// wiped and its payload freed before the answer. `on_done` (optional) runs in the
// reactor's OnDone.
template <typename Req, typename Resp, typename Fn>
grpc::ServerUnaryReactor* Unary(const CryptoServiceImpl* svc, const MethodSpec& spec,
                                grpc::CallbackServerContext* ctx, const Req* request,
                                Resp* response, Fn fn, std::function<void()> on_done = nullptr) {
  bool admitted = false;
  CallReactor* reactor = AdmitCall(svc, spec, ctx, request, std::move(on_done), &admitted);
  if (!admitted) return reactor;
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

// ReportedVersion: the version a response and an audit line report for `in` (0: none):
// the version a check authenticated with, when it tried several (KeyInput::trial), else
// the one fixed for the call.
inline uint32_t ReportedKeyVersion(const KeyInput& key) {
  if (!key.report_version) return 0;
  if (key.trial != nullptr && key.trial->version != 0) return key.trial->version;
  return key.version;
}
template <typename In>
uint32_t ReportedVersion(const In& in) {
  const KeyInput* key = KeyInputOf(in);
  return key != nullptr ? ReportedKeyVersion(*key) : 0;
}

// AuditedVersions: what an audit line says of a keyring key's versions (audit_log.h):
// key_version (0: none), and key_versions_tried when a check tried more than one.
struct AuditedVersions {
  uint32_t version = 0;
  std::vector<uint32_t> tried;
};

// VersionsOf: the audit line's versions of a key fixed at `version` whose check tried
// `trial` (may be null): the version that authenticated and the versions tried when it
// tried several (none authenticated: no key_version), else `version`; none for a check
// that refused to pick one (KEY_VERSION_REQUIRED).
inline AuditedVersions VersionsOf(uint32_t version, const KeyTrial* trial) {
  if (trial != nullptr && trial->version_required) return {};
  if (trial == nullptr || trial->tried.size() <= 1) return {version, {}};
  return {trial->version, trial->tried};
}

// AuditVersion: the versions the audit line of a request reports: those of its parsed
// `input` once the work is done, else (null: it did not parse) `unparsed_version`
// (Checked).
template <typename In>
AuditedVersions AuditVersion(const In* input, uint32_t unparsed_version) {
  if (input == nullptr) return {unparsed_version, {}};
  const KeyInput* key = KeyInputOf(*input);
  if (key == nullptr || !key->report_version) return {};
  return VersionsOf(key->version, key->trial.get());
}

// Checked is what the checks of one request (a unary call, a queued call, a batch item or
// a stream's params) left: its engine input, or the status that answers it. `audit`: it
// passed the policy check of an audited method, so its final status is to be audited.
// `unparsed_version`: the version its audit line names when it does not parse: the one
// named, else the primary's from the call's lookup when the key is versioned.
template <typename In>
struct Checked {
  absl::StatusOr<In> input;
  bool audit = false;
  uint32_t unparsed_version = 0;
};

// InputOf is the engine input a parse function makes of a request: `parse(req)` returns
// absl::StatusOr<InputOf<Parse, Req>>.
template <typename Parse, typename Req>
using InputOf = typename std::invoke_result_t<const Parse&, const Req&>::value_type;

// Check parses `req` with `parse` and, when spec.scope is `level`, checks it against the
// access policy before or after parsing as spec.order says. A keyring key is looked up
// once, first (CryptoEngine::Resolve, one keyring for the whole call): the policy's
// audit line, the parsed input's version (CryptoServiceImpl::PinKeyVersion), the engine
// and the response all use that lookup. The order decides which
// status a request with both a bad field and a denied key gets, and whether a request
// that does not parse is checked (and its denial audited) at all: it is the table's
// (method_spec.h), never the handler's. A denial is audited by Authorize; an audited
// method's request that passes it is refused when the audit log cannot take its line
// (CryptoServiceImpl::AdmitAudit, AUDIT_UNAVAILABLE under --audit_failure=closed).
// `keyring`: the keyring of the call `req` is an item of (a batch RPC's, taken once for
// all its items); null: the current one.
template <typename Req, typename Parse>
Checked<InputOf<Parse, Req>> Check(const CryptoServiceImpl& svc, const MethodSpec& spec,
                                   grpc::CallbackServerContext* ctx, const Req& req,
                                   PolicyScope level, const Parse& parse,
                                   const std::shared_ptr<const Keyring>& keyring = nullptr) {
  const v1::KeyRef* ref = KeyOf(req);
  KeyInput resolved = ref != nullptr ? ToKey(*ref) : KeyInput();
  svc.engine().Resolve(&resolved, keyring);
  uint32_t unparsed = 0;
  if (ref != nullptr && ref->ref_case() == v1::KeyRef::kKeyId) {
    unparsed = ref->key_version();
    if (unparsed == 0 && resolved.entry.ok() && (*resolved.entry)->versioned) {
      unparsed = (*resolved.entry)->version;
    }
  }
  auto parse_and_pin = [&]() -> absl::StatusOr<InputOf<Parse, Req>> {
    absl::StatusOr<InputOf<Parse, Req>> in = parse(req);
    if (!in.ok()) return in;
    KeyInput* key = KeyInputOf(*in);
    if (key != nullptr && ref != nullptr) {
      absl::Status pinned = svc.PinKeyVersion(*ref, resolved, key);
      if (!pinned.ok()) return pinned;
    }
    return in;
  };
  if (spec.scope != level) return {parse_and_pin(), false, unparsed};
  absl::StatusOr<InputOf<Parse, Req>> input;
  if (spec.order == CheckOrder::kParseFirst) {
    input = parse_and_pin();
    if (!input.ok()) return {std::move(input), false, unparsed};
  }
  absl::Status allowed =
      svc.Authorize(ctx, spec.method, spec.op, AlgorithmOf(req), ref, &resolved);
  if (!allowed.ok()) return {std::move(allowed), false, unparsed};
  if (spec.audited) {
    // Room for its audit line, before the key is used (audit_log.h, "Failure").
    absl::Status audit = svc.AdmitAudit();
    if (!audit.ok()) return {std::move(audit), false, unparsed};
  }
  if (spec.order == CheckOrder::kPolicyFirst) input = parse_and_pin();
  return {std::move(input), spec.audited, unparsed};
}

// AuditDone writes the audit line of a request that Check allowed for an audited method.
// `versions` are AuditVersion's.
template <typename Req>
void AuditDone(const CryptoServiceImpl& svc, const MethodSpec& spec,
               grpc::CallbackServerContext* ctx, const Req& req, absl::StatusCode code,
               const AuditedVersions& versions) {
  svc.Audit(ctx, spec.method, spec.op, AlgorithmOf(req), KeyOf(req), code, versions.version,
            versions.tried);
}

// KeyedAlgorithm: the algorithm and key of a request whose other fields go to the
// engine as they are (Hmac, PublicKeyDecrypt, HybridDecrypt, GetPublicKey), so that
// Check fixes its key's version; `format` for PublicKeyDecrypt only.
struct KeyedAlgorithm {
  Algorithm algorithm;
  KeyInput key;
  Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2;
};
inline constexpr auto kAlgorithmAndKey = [](const auto& r) -> absl::StatusOr<KeyedAlgorithm> {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(r.algorithm());
  if (!alg.ok()) return alg.status();
  return KeyedAlgorithm{*alg, ToKey(r.key())};
};

// Parse functions shared by several handlers. kAlgorithmOnly: the request's algorithm;
// kNothingToParse: requests without fields to check before the work; kBatchSize: a batch
// RPC's item count (its items are parsed one by one, in RunBatch).
inline constexpr auto kAlgorithmOnly = [](const auto& r) { return ToAlgorithm(r.algorithm()); };
inline constexpr auto kNothingToParse = [](const auto&) {
  return absl::StatusOr<std::monostate>(std::monostate{});
};
inline constexpr auto kBatchSize = [](const auto& r) -> absl::StatusOr<std::monostate> {
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
          AuditDone(*svc, *spec, ctx, *request, s.code(),
                    AuditVersion(c.input.ok() ? &*c.input : nullptr, c.unparsed_version));
        }
        return s;
      },
      std::move(on_done));
}

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SERVICE_CALL_GUARD_H_
