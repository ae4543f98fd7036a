// unary_handlers.cc — CryptoService's unary handlers, each on the call guard
// (call_guard.h, Guarded) or, with --batching, a batch queue (batch_runner.h, Queued).
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/service/batch_runner.h"
#include "server/service/call_guard.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/method_spec.h"
#include "server/service/proto_convert.h"
#include "server/service/status_util.h"
#include "smcrypt/cpu.h"
#include "smcrypt/pem.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::server {
namespace {

// WipeKeyPair wipes the private key of a GenerateKeyPair response once gRPC has sent it
// (in OnDone, before gRPC frees the response). gRPC's own send buffers are freed
// without wiping.
void WipeKeyPair(v1::GenerateKeyPairResponse* response) {
  for (std::string* s : {response->mutable_private_key_der(),
                         response->mutable_private_key_pem()}) {
    SecureZero(s->data(), s->size());
  }
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
          if (*valid) response->set_key_version(ReportedVersion(in));
          return absl::OkStatus();
        }
        absl::StatusOr<std::string> mac = engine_->Hmac(alg, key, request->data());
        if (!mac.ok()) return mac.status();
        response->set_mac(*std::move(mac));
        response->set_key_version(ReportedVersion(in));
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
        if (*valid) response->set_key_version(ReportedVersion(item));
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
            [response](absl::StatusOr<bool> valid, const VerifyItem* in) {
              v1::VerifyBatchResult* r = response->add_results();
              SetItemStatus(valid.status(), r->mutable_status());
              if (valid.ok()) r->set_valid(*valid);
              if (valid.ok() && *valid) r->set_key_version(ReportedVersion(*in));
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
        response->set_key_version(ReportedVersion(p));
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
        response->set_key_version(ReportedVersion(p));
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
        response->set_key_version(ReportedVersion(in));
        return absl::OkStatus();
      });
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
  // A keyring key may come without an algorithm: its family decides (set in the work,
  // from the call's one lookup); an inline key needs one.
  auto parse = [](const v1::GetPublicKeyRequest& r) -> absl::StatusOr<KeyedAlgorithm> {
    if (r.algorithm() == v1::ALGORITHM_UNSPECIFIED && r.key().has_key_id()) {
      return KeyedAlgorithm{Algorithm::kSm2, ToKey(r.key())};  // kSm2: replaced in the work
    }
    return kAlgorithmAndKey(r);
  };
  return Guarded(
      this, rpc::kGetPublicKey, ctx, request, response, parse,
      [this, request, response](KeyedAlgorithm in) -> absl::Status {
        if (request->algorithm() == v1::ALGORITHM_UNSPECIFIED) {
          if (!in.key.entry.ok()) return in.key.entry.status();
          absl::StatusOr<Algorithm> alg = PublicKeyAlgorithmOf(**in.key.entry);
          if (!alg.ok()) return alg.status();
          in.algorithm = *alg;
        }
        // A named version is looked up as everywhere (KeyStore::Find): its key, or
        // NOT_FOUND / FAILED_PRECONDITION; no version is the primary.
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
        v1::ResourceSizing* sizing = response->mutable_sizing();
        sizing->set_cgroup(info_.sizing.limits.cgroup);
        sizing->set_cpu_limit(info_.sizing.limits.cpu_limit);
        sizing->set_memory_limit_bytes(info_.sizing.limits.memory_limit_bytes);
        sizing->set_cpus_available(info_.sizing.limits.cpus_available);
        for (const SizedValue& v : info_.sizing.values) {
          v1::SizedValue* out = sizing->add_values();
          out->set_name(v.name);
          out->set_value(v.value);
          out->set_source(v.source);
        }
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
