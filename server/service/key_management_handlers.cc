// key_management_handlers.cc — Rewrap, RewrapBatch, GenerateDataKey and
// GenerateDataKeyWithoutPlaintext on the call guard (call_guard.h, Guarded) and the batch
// runner (batch_runner.h, RunBatch); their checks, audit lines and admission charges are
// their rows of method_spec.h.
#include <atomic>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/service/batch_runner.h"
#include "server/service/call_guard.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/key_management.h"
#include "server/service/method_spec.h"
#include "server/service/proto_convert.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::server {
namespace {

std::atomic<uint64_t> data_keys_wiped{0};

absl::StatusOr<DataKeySpec> ToDataKeySpec(v1::DataKeySpec spec) {
  switch (spec) {
    case v1::DATA_KEY_SPEC_SM4_128: return DataKeySpec::kSm4_128;
    case v1::DATA_KEY_SPEC_AES_128: return DataKeySpec::kAes128;
    case v1::DATA_KEY_SPEC_AES_256: return DataKeySpec::kAes256;
    case v1::DATA_KEY_SPEC_UNSPECIFIED:
      return absl::InvalidArgumentError(
          "key_spec is required (DATA_KEY_SPEC_SM4_128, DATA_KEY_SPEC_AES_128 or "
          "DATA_KEY_SPEC_AES_256)");
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown key_spec value ", static_cast<int>(spec)));
  }
}

// GenerateDataKeyCall serves both GenerateDataKey RPCs; GenerateDataKeyWithoutPlaintext's
// response has no plaintext_key. GenerateDataKey's plaintext_key is wiped in OnDone
// (WipeDataKey).
template <typename Req, typename Resp>
grpc::ServerUnaryReactor* GenerateDataKeyCall(const CryptoServiceImpl* svc,
                                              const MethodSpec& spec,
                                              grpc::CallbackServerContext* ctx,
                                              const Req* request, Resp* response) {
  constexpr bool kWithPlaintext = std::is_same_v<Resp, v1::GenerateDataKeyResponse>;
  std::function<void()> on_done;
  if constexpr (kWithPlaintext) on_done = [response] { WipeDataKey(response); };
  return Guarded(
      svc, spec, ctx, request, response,
      [](const Req& r) { return DataKeyInputFrom(r); },
      [svc, response](const DataKeyInput& in) -> absl::Status {
        absl::StatusOr<DataKey> key = svc->engine().GenerateDataKey(in);
        if (!key.ok()) return key.status();
        if constexpr (kWithPlaintext) {
          // Copied straight into the response's buffer, which WipeDataKey zeroes.
          response->set_plaintext_key(key->plaintext_key.data(), key->plaintext_key.size());
        }
        response->set_ciphertext(std::move(key->ciphertext));
        response->set_nonce(std::move(key->nonce));
        response->set_tag(std::move(key->tag));
        response->set_key_version(ReportedVersion(in));
        return absl::OkStatus();
      },
      std::move(on_done));
}

template <typename Req>
absl::StatusOr<DataKeyInput> DataKeyInputOf(const Req& req) {
  absl::StatusOr<DataKeySpec> spec = ToDataKeySpec(req.key_spec());
  if (!spec.ok()) return spec.status();
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  absl::StatusOr<Sm2CiphertextFormat> format = ToSm2Format(*alg, req.sm2_format());
  if (!format.ok()) return format.status();
  DataKeyInput in;
  in.spec = *spec;
  in.algorithm = *alg;
  in.key = ToKey(req.key());
  in.aad = req.aad();
  in.info = req.info();
  in.format = *format;
  return in;
}

}  // namespace

absl::StatusOr<RewrapInput> RewrapInputFrom(const v1::RewrapRequest& req) {
  absl::StatusOr<Algorithm> alg = ToAlgorithm(req.algorithm());
  if (!alg.ok()) return alg.status();
  absl::StatusOr<std::optional<Padding>> padding = ToPadding(req.padding());
  if (!padding.ok()) return padding.status();
  absl::StatusOr<Sm2CiphertextFormat> format = ToSm2Format(*alg, req.sm2_format());
  if (!format.ok()) return format.status();
  RewrapInput in;
  in.algorithm = *alg;
  in.key = ToKey(req.key());
  in.ciphertext = req.ciphertext();
  in.nonce = req.nonce();
  in.tag = req.tag();
  in.aad = req.aad();
  in.padding = *padding;
  in.format = *format;
  in.info = req.info();
  return in;
}

absl::StatusOr<DataKeyInput> DataKeyInputFrom(const v1::GenerateDataKeyRequest& req) {
  return DataKeyInputOf(req);
}

absl::StatusOr<DataKeyInput> DataKeyInputFrom(
    const v1::GenerateDataKeyWithoutPlaintextRequest& req) {
  return DataKeyInputOf(req);
}

void WipeDataKey(v1::GenerateDataKeyResponse* response) {
  std::string* key = response->mutable_plaintext_key();
  if (key->empty()) return;
  SecureZero(key->data(), key->size());
  data_keys_wiped.fetch_add(1, std::memory_order_relaxed);
}

uint64_t DataKeysWiped() { return data_keys_wiped.load(std::memory_order_relaxed); }

grpc::ServerUnaryReactor* CryptoServiceImpl::Rewrap(grpc::CallbackServerContext* ctx,
                                                    const v1::RewrapRequest* request,
                                                    v1::RewrapResponse* response) {
  return Guarded(
      this, rpc::kRewrap, ctx, request, response, RewrapInputFrom,
      [this, response](const RewrapInput& in) -> absl::Status {
        absl::StatusOr<Rewrapped> r = engine_->Rewrap(in);
        if (!r.ok()) return r.status();
        response->set_ciphertext(std::move(r->ciphertext));
        response->set_nonce(std::move(r->nonce));
        response->set_tag(std::move(r->tag));
        response->set_key_version(r->key_version);
        response->set_source_key_version(r->source_key_version);
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::RewrapBatch(grpc::CallbackServerContext* ctx,
                                                         const v1::RewrapBatchRequest* request,
                                                         v1::RewrapBatchResponse* response) {
  // Each item: policy, then parsing (a denial wins); allowed items are audited. One
  // keyring for every item (RunBatch).
  return Guarded(
      this, rpc::kRewrapBatch, ctx, request, response, kBatchSize,
      [this, ctx, request, response](std::monostate) {
        return RunBatch(
            *this, rpc::kRewrapBatch, ctx, request->items(), kBatchChunk, RewrapInputFrom,
            [this](absl::Span<const RewrapInput> items) { return engine_->RewrapBatch(items); },
            [response](absl::StatusOr<Rewrapped> r, const RewrapInput*) {
              v1::RewrapBatchResult* out = response->add_results();
              SetItemStatus(r.status(), out->mutable_status());
              if (!r.ok()) return;
              out->set_ciphertext(std::move(r->ciphertext));
              out->set_nonce(std::move(r->nonce));
              out->set_tag(std::move(r->tag));
              out->set_key_version(r->key_version);
              out->set_source_key_version(r->source_key_version);
            });
      });
}

grpc::ServerUnaryReactor* CryptoServiceImpl::GenerateDataKey(
    grpc::CallbackServerContext* ctx, const v1::GenerateDataKeyRequest* request,
    v1::GenerateDataKeyResponse* response) {
  return GenerateDataKeyCall(this, rpc::kGenerateDataKey, ctx, request, response);
}

grpc::ServerUnaryReactor* CryptoServiceImpl::GenerateDataKeyWithoutPlaintext(
    grpc::CallbackServerContext* ctx, const v1::GenerateDataKeyWithoutPlaintextRequest* request,
    v1::GenerateDataKeyWithoutPlaintextResponse* response) {
  return GenerateDataKeyCall(this, rpc::kGenerateDataKeyWithoutPlaintext, ctx, request,
                             response);
}

}  // namespace smcrypt::server
