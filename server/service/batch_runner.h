// batch_runner.h — the batched paths of the service: the batch RPCs (SignBatch,
// VerifyBatch, EncryptBatch, HybridEncryptBatch, RewrapBatch, HashBatch) and the dynamic-batching
// queues of unary calls (dynamic_batcher.h, --batching).
//
// Both check each request or item as its MethodSpec row says (call_guard.h, Check),
// hand the items that pass to one engine batch call, and answer each with its own
// status, auditing an audited method's items. Only the service's own files include
// this header.
#ifndef SMCRYPT_SERVER_SERVICE_BATCH_RUNNER_H_
#define SMCRYPT_SERVER_SERVICE_BATCH_RUNNER_H_

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "grpcpp/grpcpp.h"
#include "server/engine/dynamic_batcher.h"
#include "server/service/call_guard.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/method_spec.h"

namespace smcrypt::server {

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

// Queued admits the call as Unary does (AdmitCall), then adds it to `queue`.
template <typename Req, typename Resp>
grpc::ServerUnaryReactor* Queued(const CryptoServiceImpl* svc, const MethodSpec& spec,
                                 BatchQueue<QueuedCall<Req, Resp>>* queue,
                                 grpc::CallbackServerContext* ctx, const Req* request,
                                 Resp* response) {
  bool admitted = false;
  CallReactor* reactor = AdmitCall(svc, spec, ctx, request, nullptr, &admitted);
  if (admitted) queue->Add(QueuedCall<Req, Resp>{reactor, ctx, request, response});
  return reactor;
}

using SignCall = QueuedCall<v1::SignRequest, v1::SignResponse>;
using VerifyCall = QueuedCall<v1::VerifyRequest, v1::VerifyResponse>;
using HashCall = QueuedCall<v1::HashRequest, v1::HashResponse>;
using PublicKeyEncryptCall = QueuedCall<v1::PublicKeyEncryptRequest, v1::PublicKeyEncryptResponse>;
using HybridEncryptCall = QueuedCall<v1::HybridEncryptRequest, v1::HybridEncryptResponse>;

// The batched operations: SM2 signatures, verifications and encryptions, the SM HPKE
// suite, and SM3 hashes of at most kMaxBatchedHashSize bytes; other algorithms run one
// call at a time (their primitives share no work across messages). Each queue's
// BatchedOperation (its metrics label) is the queue column of its method's row; each
// run answers its calls as their unary handler would (batch_runner.cc).
struct CryptoServiceImpl::BatchQueues {
  // `submit` hands a run to the worker pool (null: runs inline); `runners` runs of one
  // queue at most at a time.
  BatchQueues(const CryptoServiceImpl* svc, const BatchSettings& settings, size_t runners,
              BatchQueue<SignCall>::Submit submit, BatchObserver* observer);
  // WaitIdle waits until no run of any queue is queued or running.
  void WaitIdle();

  BatchQueue<SignCall> sign;
  BatchQueue<VerifyCall> verify;
  BatchQueue<HashCall> hash;
  BatchQueue<PublicKeyEncryptCall> public_key_encrypt;
  BatchQueue<HybridEncryptCall> hybrid_encrypt;
};

// StillWanted is checked between the items of a batch, so a long batch stops once its
// deadline has passed or the client has cancelled, instead of running to the end.
absl::Status StillWanted(grpc::CallbackServerContext* ctx);

// CheckAndRun is the body of every batched path (the batch queues' runs and the batch
// RPCs' chunks): check(i) → Checked<In> for each i in [0, n), one engine(inputs) call for
// the inputs that passed, then answer(i, result, checked, input) in order, where `result`
// is item i's engine result or the status its check left, `checked` its Checked (its
// input moved out) and `input` its checked input (null when the check failed). The
// inputs' views stay valid until the items are answered.
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
    answer(i, std::move(r), checked[i], input);
  }
}

// AuditItem audits an item (or queued call) that Check allowed for an audited method
// (`checked`), with its final `status`; `input` is its checked input, null when the check
// failed.
template <typename Req, typename In>
void AuditItem(const CryptoServiceImpl& svc, const MethodSpec& spec,
               grpc::CallbackServerContext* ctx, const Req& req, const absl::Status& status,
               const Checked<In>& checked, const In* input) {
  AuditDone(svc, spec, ctx, req, status.code(), AuditVersion(input, checked.unparsed_version));
}

// kBatchChunk: SignBatch, VerifyBatch, EncryptBatch, HybridEncryptBatch and RewrapBatch items per
// engine call (its SM2 items share the multi-buffer path, SM4-CBC items the multi-buffer
// lanes, HPKE items to one recipient key HybridEncrypt::EncryptMany); cancellation is
// checked between calls. kWholeBatch: HashBatch's items go to the engine at once.
inline constexpr int kBatchChunk = 256;
inline constexpr int kWholeBatch = 0;

// RunBatch answers a batch RPC's items in request order, `chunk` items per engine call
// (kWholeBatch: all at once, with no cancellation check). Before each chunk, StillWanted
// stops a batch whose deadline passed or whose client cancelled. The keyring is taken
// once, for every item of the batch (one call, one keyring). Each item is checked
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
  const std::shared_ptr<const Keyring> keyring = svc.engine().keyring();
  for (int begin = 0; begin < n; begin += step) {
    if (chunk != kWholeBatch) {
      absl::Status s = StillWanted(ctx);
      if (!s.ok()) return s;
    }
    const int end = std::min(n, begin + step);
    CheckAndRun<In>(
        end - begin,
        [&](size_t i) {
          return Check(svc, spec, ctx, items[begin + i], PolicyScope::kEachItem, parse,
                       keyring);
        },
        engine,
        [&](size_t i, auto result, const Checked<In>& checked, const In* input) {
          if (checked.audit) {
            AuditItem(svc, spec, ctx, items[begin + i], result.status(), checked, input);
          }
          write(std::move(result), input);
        });
  }
  return absl::OkStatus();
}

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SERVICE_BATCH_RUNNER_H_
