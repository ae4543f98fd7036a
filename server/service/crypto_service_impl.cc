#include "server/service/crypto_service_impl.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpc/grpc_security_constants.h"
#include "server/service/batch_runner.h"
#include "server/service/proto_convert.h"

// The service's core: construction, the worker pool, the access policy, audit lines and
// key versions. The handlers are in unary_handlers.cc and stream_handlers.cc.
namespace smcrypt::server {

CryptoServiceImpl::CryptoServiceImpl(const CryptoEngine* engine, SelfTests* self_tests,
                                     const std::atomic<int64_t>* inflight, ServiceInfo info,
                                     WorkerPool* workers, ServiceGuards guards)
    : engine_(engine),
      self_tests_(self_tests),
      info_(std::move(info)),
      admission_(inflight,
                 AdmissionLimits{info_.max_inflight, info_.max_inflight_bytes,
                                 info_.max_stream_inflight_bytes,
                                 info_.max_connection_inflight_bytes},
                 guards.admission),
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

// The worker pool outlives the service and still runs queued tasks when the service is
// destroyed (server.h): a batch run may still be queued after its last call was answered,
// so the queues are drained of runs first.
CryptoServiceImpl::~CryptoServiceImpl() {
  if (queues_ != nullptr) queues_->WaitIdle();
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
                                          v1::Algorithm alg, const v1::KeyRef* key,
                                          const KeyInput* resolved) const {
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
      // The version named, else the primary of a key with version files (as PinKeyVersion
      // reports it), from the call's one lookup.
      r.key_version = key->key_version();
      if (r.key_version == 0 && resolved != nullptr && resolved->entry.ok() &&
          (*resolved->entry)->versioned) {
        r.key_version = (*resolved->entry)->version;
      }
    }
    r.code = s.code();
    guards_.audit->Write(r);
  }
  return s;
}

absl::Status CryptoServiceImpl::AdmitAudit() const {
  return guards_.audit != nullptr ? guards_.audit->Admit() : absl::OkStatus();
}

void CryptoServiceImpl::Audit(grpc::CallbackServerContext* ctx, absl::string_view method,
                              AccessOperation op, v1::Algorithm alg, const v1::KeyRef* key,
                              absl::StatusCode code, uint32_t key_version,
                              absl::Span<const uint32_t> key_versions_tried) const {
  if (guards_.audit == nullptr || !guards_.audit->enabled()) return;
  const ClientIdentity client = IdentityOf(*ctx);
  AuditRecord r;
  r.client = &client;
  r.method = method;
  r.operation = op;
  r.algorithm = AlgorithmLabel(alg);
  r.key = ToAccessKey(key);
  r.key_version = key_version;
  r.key_versions_tried = key_versions_tried;
  r.code = code;
  guards_.audit->Write(r, /*admitted=*/true);
}

absl::Status CryptoServiceImpl::PinKeyVersion(const v1::KeyRef& ref, const KeyInput& resolved,
                                             KeyInput* key) const {
  if (ref.key_version() != 0 && ref.ref_case() != v1::KeyRef::kKeyId) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key.key_version (", ref.key_version(),
        ") names a version of a keyring key; it must be 0 (unset) unless key.key_id is set"));
  }
  if (key->kind != KeyInput::Kind::kKeyId) return absl::OkStatus();
  if (resolved.kind == KeyInput::Kind::kKeyId && resolved.value == key->value &&
      resolved.version == key->version) {
    key->keyring = resolved.keyring;
    key->entry = resolved.entry;
  } else {
    engine_->Resolve(key, resolved.keyring);
  }
  const absl::StatusOr<const StoredKey*>& entry = key->entry;
  if (!entry.ok()) {
    // The engine answers with Find's error; the audit line names the refused version.
    key->report_version = ref.key_version() != 0;
    return absl::OkStatus();
  }
  key->version = (*entry)->version;
  key->report_version = ref.key_version() != 0 || (*entry)->versioned;
  if (ref.key_version() == 0) key->trial = std::make_shared<KeyTrial>();
  return absl::OkStatus();
}

}  // namespace smcrypt::server
