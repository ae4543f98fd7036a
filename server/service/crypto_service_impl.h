// crypto_service_impl.h — smcrypt.v1.CryptoService on gRPC's callback API.
//
// A thin final class (docs/contributing.md, "House style"): each handler parses the
// request, calls CryptoEngine, and converts the absl::Status with ToGrpcStatus; metrics
// are recorded by the server interceptor (daemon/metrics.h), not here. What each RPC is
// checked, audited and charged for is its row of the MethodSpec table (method_spec.h).
// The service is split by concern:
//   admission.h        --max_inflight and --max_inflight_bytes accounting (Admit), with
//                      its shares per stream and per connection;
//   call_guard.h       the unary call guard: admits the call, checks the policy and
//                      parses in the row's order, audits, and converts the status;
//   batch_runner.h     batch RPCs and the dynamic-batching queues;
//   stream_reactor.h   the stream reactors' base ("params in the first message only");
//   unary_handlers.cc, stream_handlers.cc, key_management_handlers.cc  the handlers
//                      (the last: Rewrap, RewrapBatch, GenerateDataKey*). Request
//                      conversions are in proto_convert.h.
//
// Unary calls are admitted on the gRPC thread and their work runs on a WorkerPool
// (worker_pool.h, --worker_threads) that finishes the reactor; without a pool the work
// runs inline on gRPC's callback threads.
//
// Memory: every admitted call is charged against --max_inflight_bytes from admission
// until gRPC is done with it (the reactor's OnDone), so a response waiting behind a
// client that reads slowly stays counted. A unary call reserves, at admission, its
// request bytes plus twice an estimate of its response (the response message and its
// serialized copy) plus kCallAdmissionBytes; once the work is done the request's
// payload is freed and the charge becomes twice the actual response plus
// kCallAdmissionBytes. A stream is charged each message it reads (three times its size
// while it is handled), then twice its queued responses until they are written and
// twice what its cipher keeps of its input (a pending segment or chunk, once per key
// version a decrypting stream still tries) until that is answered; a message that does
// not fit ends the stream with RESOURCE_EXHAUSTED. A call
// alone is admitted whatever its charge (a batch of 65,536 items is charged 64 MiB). Excess work is thus refused at once instead of queueing.
// One stream may hold at most --max_stream_inflight_bytes and the calls of one client
// connection (its peer address) at most --max_connection_inflight_bytes (admission.h,
// CallCharge); a stream or connection holding nothing always takes one message or call.
// Streams register with a StreamReaper (--stream_idle_timeout); every keyed request is
// checked against the AccessPolicy (--access_policy) and private- and secret-key uses are
// written to the AuditLog (--audit_log); inline keys in a request are wiped once the
// call has used them.
#ifndef SMCRYPT_SERVER_CRYPTO_SERVICE_IMPL_H_
#define SMCRYPT_SERVER_CRYPTO_SERVICE_IMPL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "grpcpp/grpcpp.h"
#include "server/engine/access_policy.h"
#include "server/engine/audit_log.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/dynamic_batcher.h"
#include "server/engine/self_test.h"
#include "server/engine/sizing.h"
#include "server/engine/worker_pool.h"
#include "server/service/admission.h"
#include "server/service/stream_reaper.h"
#include "smcrypt/v1/crypto.grpc.pb.h"

namespace smcrypt::server {

namespace v1 = ::smcrypt::v1;

// ServiceInfo is what GetServerInfo reports beyond the engine, and the limits the
// service enforces.
struct ServiceInfo {
  std::string version;
  uint64_t max_message_bytes = 0;
  int64_t max_inflight = 0;
  // max_inflight_bytes: bytes charged to calls in flight (see "Memory" above) beyond
  // which new calls and stream messages are RESOURCE_EXHAUSTED; 0: no byte limit.
  uint64_t max_inflight_bytes = 0;
  // max_stream_inflight_bytes / max_connection_inflight_bytes: bytes one stream / the
  // calls of one client connection may hold (admission.h, FairShares); 0: no such limit.
  uint64_t max_stream_inflight_bytes = 0;
  uint64_t max_connection_inflight_bytes = 0;
  // batching: dynamic batching of unary Sign, Verify, PublicKeyEncrypt, HybridEncrypt and
  // Hash (dynamic_batcher.h).
  BatchSettings batching;
  // sizing: the container limits and the values sized from them (GetServerInfo.sizing).
  Sizing sizing;
};

// ServiceGuards are the optional hardening pieces; null pointers turn each off. All must
// outlive the service.
struct ServiceGuards {
  const AccessPolicy* policy = nullptr;  // null: every request allowed
  const AuditLog* audit = nullptr;       // null: no audit lines
  StreamReaper* reaper = nullptr;        // null: streams never time out
  BatchObserver* batches = nullptr;      // null: batch sizes and queue times not recorded
  AdmissionObserver* admission = nullptr;  // null: refusals and connections not recorded
};

class CryptoServiceImpl final : public v1::CryptoService::CallbackService {
 public:
  // All pointers must outlive the service. `inflight` is the number of RPCs in flight,
  // counted by the metrics interceptor (this call included). `workers` may be null
  // (unary work then runs inline on gRPC's threads).
  CryptoServiceImpl(const CryptoEngine* engine, SelfTests* self_tests,
                    const std::atomic<int64_t>* inflight, ServiceInfo info,
                    WorkerPool* workers = nullptr, ServiceGuards guards = {});
  ~CryptoServiceImpl() override;

  grpc::ServerUnaryReactor* Hash(grpc::CallbackServerContext* ctx,
      const v1::HashRequest* request, v1::HashResponse* response) override;
  grpc::ServerUnaryReactor* HashBatch(grpc::CallbackServerContext* ctx,
      const v1::HashBatchRequest* request, v1::HashBatchResponse* response) override;
  grpc::ServerUnaryReactor* Hmac(grpc::CallbackServerContext* ctx,
      const v1::HmacRequest* request, v1::HmacResponse* response) override;
  grpc::ServerUnaryReactor* Sign(grpc::CallbackServerContext* ctx,
      const v1::SignRequest* request, v1::SignResponse* response) override;
  grpc::ServerUnaryReactor* Verify(grpc::CallbackServerContext* ctx,
      const v1::VerifyRequest* request, v1::VerifyResponse* response) override;
  grpc::ServerUnaryReactor* SignBatch(grpc::CallbackServerContext* ctx,
      const v1::SignBatchRequest* request, v1::SignBatchResponse* response) override;
  grpc::ServerUnaryReactor* VerifyBatch(grpc::CallbackServerContext* ctx,
      const v1::VerifyBatchRequest* request, v1::VerifyBatchResponse* response) override;
  grpc::ServerUnaryReactor* Encrypt(grpc::CallbackServerContext* ctx,
      const v1::EncryptRequest* request, v1::EncryptResponse* response) override;
  grpc::ServerUnaryReactor* Decrypt(grpc::CallbackServerContext* ctx,
      const v1::DecryptRequest* request, v1::DecryptResponse* response) override;
  grpc::ServerUnaryReactor* EncryptBatch(grpc::CallbackServerContext* ctx,
      const v1::EncryptBatchRequest* request, v1::EncryptBatchResponse* response) override;
  grpc::ServerUnaryReactor* PublicKeyEncrypt(grpc::CallbackServerContext* ctx,
      const v1::PublicKeyEncryptRequest* request, v1::PublicKeyEncryptResponse* response) override;
  grpc::ServerUnaryReactor* PublicKeyDecrypt(grpc::CallbackServerContext* ctx,
      const v1::PublicKeyDecryptRequest* request, v1::PublicKeyDecryptResponse* response) override;
  grpc::ServerUnaryReactor* HybridEncrypt(grpc::CallbackServerContext* ctx,
      const v1::HybridEncryptRequest* request, v1::HybridEncryptResponse* response) override;
  grpc::ServerUnaryReactor* HybridEncryptBatch(grpc::CallbackServerContext* ctx,
      const v1::HybridEncryptBatchRequest* request,
      v1::HybridEncryptBatchResponse* response) override;
  grpc::ServerUnaryReactor* HybridDecrypt(grpc::CallbackServerContext* ctx,
      const v1::HybridDecryptRequest* request, v1::HybridDecryptResponse* response) override;
  grpc::ServerUnaryReactor* GenerateKeyPair(grpc::CallbackServerContext* ctx,
      const v1::GenerateKeyPairRequest* request, v1::GenerateKeyPairResponse* response) override;
  grpc::ServerUnaryReactor* GetPublicKey(grpc::CallbackServerContext* ctx,
      const v1::GetPublicKeyRequest* request, v1::GetPublicKeyResponse* response) override;
  grpc::ServerUnaryReactor* GenerateRandom(grpc::CallbackServerContext* ctx,
      const v1::GenerateRandomRequest* request, v1::GenerateRandomResponse* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* ctx,
      const v1::GetServerInfoRequest* request, v1::GetServerInfoResponse* response) override;
  // ListKeys is in key_handlers.cc.
  grpc::ServerUnaryReactor* ListKeys(grpc::CallbackServerContext* ctx,
      const v1::ListKeysRequest* request, v1::ListKeysResponse* response) override;
  // Key management (key_management_handlers.cc).
  grpc::ServerUnaryReactor* Rewrap(grpc::CallbackServerContext* ctx,
      const v1::RewrapRequest* request, v1::RewrapResponse* response) override;
  grpc::ServerUnaryReactor* RewrapBatch(grpc::CallbackServerContext* ctx,
      const v1::RewrapBatchRequest* request, v1::RewrapBatchResponse* response) override;
  grpc::ServerUnaryReactor* GenerateDataKey(grpc::CallbackServerContext* ctx,
      const v1::GenerateDataKeyRequest* request, v1::GenerateDataKeyResponse* response) override;
  grpc::ServerUnaryReactor* GenerateDataKeyWithoutPlaintext(grpc::CallbackServerContext* ctx,
      const v1::GenerateDataKeyWithoutPlaintextRequest* request,
      v1::GenerateDataKeyWithoutPlaintextResponse* response) override;
  grpc::ServerReadReactor<v1::HashStreamRequest>* HashStream(
      grpc::CallbackServerContext* ctx, v1::HashStreamResponse* response) override;
  grpc::ServerBidiReactor<v1::EncryptStreamRequest, v1::EncryptStreamResponse>* EncryptStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerBidiReactor<v1::DecryptStreamRequest, v1::DecryptStreamResponse>* DecryptStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerBidiReactor<v1::HybridEncryptStreamRequest, v1::HybridEncryptStreamResponse>* HybridEncryptStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerBidiReactor<v1::HybridDecryptStreamRequest, v1::HybridDecryptStreamResponse>* HybridDecryptStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerBidiReactor<v1::KeyExchangeRequest, v1::KeyExchangeResponse>* KeyExchange(
      grpc::CallbackServerContext* ctx) override;

  // Admit admits the call of `ctx` into `charge` (its reactor's; `stream`: the stream
  // limit applies) and charges it `bytes` (Admission::Admit): OK, or RESOURCE_EXHAUSTED
  // above --max_inflight or when `bytes` do not fit one of the byte limits, or
  // DEADLINE_EXCEEDED when the client's deadline has already passed. `charge` holds what
  // the call is charged until it is closed (the reactor's OnDone), admitted or not.
  absl::Status Admit(grpc::CallbackServerContext* ctx, bool stream, uint64_t bytes,
                     CallCharge* charge) const {
    return admission_.Admit(
        ctx->deadline(), [ctx] { return ctx->peer(); }, stream, bytes, charge);
  }
  // The byte counts are Admission's (admission.h).
  uint64_t inflight_bytes() const { return admission_.inflight_bytes(); }
  uint64_t peak_inflight_bytes() const { return admission_.peak_inflight_bytes(); }
  uint64_t TakePeakSince() const { return admission_.TakePeakSince(); }
  int64_t inflight_connections() const { return admission_.connections(); }

  // Authorize checks the access policy for `op` on `key` (OK without a policy); a
  // denial is audited and returned as PERMISSION_DENIED naming client, operation, key.
  // `resolved` (may be null): `key` as the call resolved it (CryptoEngine::Resolve), whose
  // entry gives the audit line the version of a key named without one.
  absl::Status Authorize(grpc::CallbackServerContext* ctx, absl::string_view method,
                         AccessOperation op, v1::Algorithm alg, const v1::KeyRef* key,
                         const KeyInput* resolved = nullptr) const;
  // AdmitAudit: AuditLog::Admit (OK without an audit log). Every request it admits is
  // audited (Audit), whatever its outcome.
  absl::Status AdmitAudit() const;
  // Audit writes the audit line of a request AdmitAudit admitted (when --audit_log is
  // not none); `key_version` 0 writes none, `key_versions_tried` of one or none writes
  // none (audit_log.h).
  void Audit(grpc::CallbackServerContext* ctx, absl::string_view method, AccessOperation op,
             v1::Algorithm alg, const v1::KeyRef* key, absl::StatusCode code,
             uint32_t key_version = 0,
             absl::Span<const uint32_t> key_versions_tried = {}) const;
  // PinKeyVersion fixes the version of a keyring `key` (parsed from `ref`) from the call's
  // one lookup `resolved` (CryptoEngine::Resolve; `key` takes its keyring and entry): a
  // request naming no version gets the key's primary, and a KeyInput::trial so that its
  // checks try every retained version, and `report_version` is set as crypto.proto's
  // KeyRef "Key versions" says. A key the keyring cannot resolve keeps
  // the lookup's error (the engine returns it in its place among the checks).
  // InvalidArgument for a key_version with an inline key or without a key_id.
  absl::Status PinKeyVersion(const v1::KeyRef& ref, const KeyInput& resolved,
                             KeyInput* key) const;
  StreamReaper* reaper() const { return guards_.reaper; }
  const CryptoEngine& engine() const { return *engine_; }
  // Run runs `work` on the worker pool, or inline when there is none.
  void Run(std::function<void()> work) const;
  // batch_queues: the batched operations' queues (null with batching off;
  // batch_runner.h).
  struct BatchQueues;
  const BatchQueues* batch_queues() const { return queues_.get(); }

 private:
  std::unique_ptr<BatchQueues> queues_;
  const CryptoEngine* engine_;
  SelfTests* self_tests_;
  ServiceInfo info_;
  Admission admission_;
  WorkerPool* workers_;
  ServiceGuards guards_;
};

// IdentityOf reads the client's identity from the call's AuthContext (mTLS certificate
// subject, common name and SANs) and its peer address.
ClientIdentity IdentityOf(const grpc::CallbackServerContext& ctx);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_CRYPTO_SERVICE_IMPL_H_
