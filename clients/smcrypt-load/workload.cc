#include "clients/smcrypt-load/workload.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/smcrypt-load/key_exchange_call.h"
#include "clients/smcrypt/algorithm_names.h"

namespace smcrypt::load {
namespace {

namespace v1 = smcrypt::v1;

// Unary wraps a prepared request and a callback-API method into a CallFn; the response
// lives until the callback.
template <typename Req, typename Resp, typename Method>
CallFn Unary(std::shared_ptr<const Req> req, Method method) {
  return [req = std::move(req), method](Stub& stub, grpc::ClientContext* ctx,
                                        std::function<void(grpc::Status)> done) {
    auto* resp = new Resp();
    method(stub.async(), ctx, req.get(), resp,
           [resp, done = std::move(done)](grpc::Status s) {
             delete resp;
             done(s);
           });
  };
}

#define SMCRYPT_LOAD_CALL(Method, Req, Resp, req)                                          \
  Unary<Req, Resp>(std::move(req), [](auto* a, grpc::ClientContext* c, const Req* q, Resp* r, \
                                      std::function<void(grpc::Status)> f) {                 \
    a->Method(c, q, r, std::move(f));                                                        \
  })

// Batch sends `items` copies of `item` in one *Batch RPC. A batch answers OK with a
// status per item; the first failed item fails the operation with its code and message,
// so item failures are counted like RPC failures.
template <typename BatchReq, typename BatchResp, typename Item, typename Method>
CallFn Batch(const Item& item, size_t items, Method method) {
  auto req = std::make_shared<BatchReq>();
  for (size_t i = 0; i < items; ++i) *req->add_items() = item;
  return [req = std::shared_ptr<const BatchReq>(std::move(req)), method](
             Stub& stub, grpc::ClientContext* ctx, std::function<void(grpc::Status)> done) {
    auto* resp = new BatchResp();
    method(stub.async(), ctx, req.get(), resp,
           [resp, n = req->items_size(), done = std::move(done)](grpc::Status s) {
             if (s.ok() && resp->results_size() != n) {
               s = grpc::Status(grpc::StatusCode::INTERNAL,
                                absl::StrCat("batch of ", n, " answered with ",
                                             resp->results_size(), " results"));
             }
             for (int i = 0; s.ok() && i < resp->results_size(); ++i) {
               const v1::Status& item = resp->results(i).status();
               if (item.code() != 0) {
                 s = grpc::Status(static_cast<grpc::StatusCode>(item.code()),
                                  absl::StrCat("batch item ", i, ": ", item.message()));
               }
             }
             delete resp;
             done(s);
           });
  };
}

#define SMCRYPT_LOAD_BATCH(Method, Req, Resp, item, items)                                    \
  Batch<Req, Resp>(item, items, [](auto* a, grpc::ClientContext* c, const Req* q, Resp* r,      \
                                   std::function<void(grpc::Status)> f) {                     \
    a->Method(c, q, r, std::move(f));                                                          \
  })

size_t SymmetricKeySize(v1::Algorithm alg) {
  switch (alg) {
    case v1::AES_256_ECB:
    case v1::AES_256_CBC:
    case v1::AES_256_CTR:
    case v1::AES_256_GCM:
    case v1::SM4_XTS:
    case v1::SM4_XTS_GB:
    case v1::HMAC_SM3:
    case v1::HMAC_SHA_256:
      return 32;
    default:
      return 16;
  }
}

v1::Padding PaddingFor(v1::Algorithm alg, size_t size) {
  if (!cli::UsesPadding(alg)) return v1::PADDING_UNSPECIFIED;
  // The studies time the raw block modes; whole blocks go unpadded.
  return size % 16 == 0 ? v1::PADDING_NONE : v1::PADDING_PKCS7;
}

}  // namespace

absl::Status RpcError(const std::string& what, const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", CodeName(status.error_code()), ": ",
                                   status.error_message()));
}

size_t MaxOaepPlaintext(v1::Algorithm alg) {
  if (alg == v1::RSA_2048_OAEP) return 256 - 2 * 32 - 2;
  if (alg == v1::RSA_3072_OAEP) return 384 - 2 * 32 - 2;
  return 0;
}

Preparer::Preparer(std::shared_ptr<Stub> stub, absl::Duration timeout, uint64_t seed)
    : stub_(std::move(stub)), timeout_(timeout), seed_(seed) {
  symmetric_key_32_ = Payload(32);
  // A different stream from the payloads: rotate the bytes.
  std::rotate(symmetric_key_32_.begin(), symmetric_key_32_.begin() + 7, symmetric_key_32_.end());
}

void Preparer::Prepare(grpc::ClientContext* ctx) const {
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
}

std::string Preparer::Payload(size_t size) {
  std::mt19937_64 rng(seed_ ^ (size * 0x9E3779B97F4A7C15ull));
  std::string out(size, '\0');
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&out[i], &v, 8);
  }
  for (uint64_t v = rng(); i < size; ++i, v >>= 8) out[i] = static_cast<char>(v);
  return out;
}

absl::StatusOr<v1::GetServerInfoResponse> Preparer::ServerInfo() {
  grpc::ClientContext ctx;
  Prepare(&ctx);
  v1::GetServerInfoResponse resp;
  ++rpcs_;
  grpc::Status s = stub_->GetServerInfo(&ctx, v1::GetServerInfoRequest(), &resp);
  if (!s.ok()) return RpcError("GetServerInfo", s);
  return resp;
}

absl::StatusOr<const v1::GenerateKeyPairResponse*> Preparer::KeyPair(v1::Algorithm alg) {
  auto it = keys_.find(alg);
  if (it != keys_.end()) return &it->second;
  v1::GenerateKeyPairRequest req;
  req.set_algorithm(alg);
  v1::GenerateKeyPairResponse resp;
  grpc::ClientContext ctx;
  Prepare(&ctx);
  ++rpcs_;
  grpc::Status s = stub_->GenerateKeyPair(&ctx, req, &resp);
  if (!s.ok()) return RpcError(absl::StrCat("GenerateKeyPair ", cli::AlgorithmName(alg)), s);
  if (resp.private_key_der().empty()) {
    return absl::FailedPreconditionError(
        "the server withholds generated private keys (--inline_private_keys=deny); "
        "give smcrypt-load keyring keys with --keys ALG=KEY_ID");
  }
  return &keys_.emplace(alg, std::move(resp)).first->second;
}

void Preparer::SymmetricRef(v1::Algorithm alg, const std::string& key, v1::KeyRef* ref) const {
  auto it = key_ids_.find(alg);
  if (it != key_ids_.end()) {
    ref->set_key_id(it->second);
  } else {
    ref->set_inline_key(key);
  }
}

absl::Status Preparer::KeyRefFor(v1::Algorithm alg, bool private_key, v1::KeyRef* ref) {
  auto it = key_ids_.find(alg);
  if (it != key_ids_.end()) {
    // The keyring holds a private key (the public half is derived from it) or, for the
    // public-key operations only, a public key.
    ref->set_key_id(it->second);
    return absl::OkStatus();
  }
  absl::StatusOr<const v1::GenerateKeyPairResponse*> kp = KeyPair(alg);
  if (!kp.ok()) return kp.status();
  ref->set_inline_key(private_key ? (*kp)->private_key_der() : (*kp)->public_key_der());
  return absl::OkStatus();
}

using cli::AlgorithmFamily;
using cli::InFamily;

struct Preparer::MakeArgs {
  const WorkloadSpec& spec;
  v1::Algorithm alg;
  std::string name;  // the algorithm's
  std::string rpc;   // spec.rpc without "Batch"
  size_t items;      // copies in one *Batch RPC; 0 for a unary RPC
  std::string data;  // the payload, spec.size bytes

  // Wrong is the error of an algorithm that `rpc` does not take (it takes `family`).
  absl::Status Wrong(absl::string_view family) const {
    return absl::InvalidArgumentError(
        absl::StrCat("--rpc ", spec.rpc, " takes ", family, ", not ", name));
  }
};

// Hash, HashBatch.
absl::Status Preparer::MakeHash(const MakeArgs& args, Workload& w) {
  if (!InFamily(args.alg, AlgorithmFamily::kHash)) return args.Wrong("SM3 or SHA-256");
  auto req = std::make_shared<v1::HashRequest>();
  req->set_algorithm(args.alg);
  req->set_data(args.data);
  if (args.items > 0) {
    w.op.calls.push_back(SMCRYPT_LOAD_BATCH(HashBatch, v1::HashBatchRequest,
                                            v1::HashBatchResponse, *req, args.items));
  } else {
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(Hash, v1::HashRequest, v1::HashResponse, req));
  }
  return absl::OkStatus();
}

// Hmac.
absl::Status Preparer::MakeHmac(const MakeArgs& args, Workload& w) {
  if (!InFamily(args.alg, AlgorithmFamily::kMac)) return args.Wrong("HMAC-SM3 or HMAC-SHA-256");
  auto req = std::make_shared<v1::HmacRequest>();
  req->set_algorithm(args.alg);
  SymmetricRef(args.alg, symmetric_key_32_, req->mutable_key());
  req->set_data(args.data);
  w.op.calls.push_back(SMCRYPT_LOAD_CALL(Hmac, v1::HmacRequest, v1::HmacResponse, req));
  return absl::OkStatus();
}

// Sign, SignBatch; Verify and VerifyBatch of a signature made here.
absl::Status Preparer::MakeSignature(const MakeArgs& args, Workload& w) {
  if (!InFamily(args.alg, AlgorithmFamily::kSignature)) return args.Wrong("a signature algorithm");
  auto sign = std::make_shared<v1::SignRequest>();
  sign->set_algorithm(args.alg);
  if (absl::Status st = KeyRefFor(args.alg, /*private_key=*/true, sign->mutable_key());
      !st.ok()) {
    return st;
  }
  sign->set_data(args.data);
  if (args.rpc == "Sign") {
    if (args.items > 0) {
      w.op.calls.push_back(SMCRYPT_LOAD_BATCH(SignBatch, v1::SignBatchRequest,
                                              v1::SignBatchResponse, *sign, args.items));
    } else {
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(Sign, v1::SignRequest, v1::SignResponse, sign));
    }
  } else {
    v1::SignResponse sig;
    grpc::ClientContext ctx;
    Prepare(&ctx);
    ++rpcs_;
    grpc::Status s = stub_->Sign(&ctx, *sign, &sig);
    if (!s.ok()) return RpcError(absl::StrCat("Sign ", args.name), s);
    auto req = std::make_shared<v1::VerifyRequest>();
    req->set_algorithm(args.alg);
    if (absl::Status st = KeyRefFor(args.alg, false, req->mutable_key()); !st.ok()) return st;
    req->set_data(args.data);
    req->set_signature(sig.signature());
    if (args.items > 0) {
      w.op.calls.push_back(SMCRYPT_LOAD_BATCH(VerifyBatch, v1::VerifyBatchRequest,
                                              v1::VerifyBatchResponse, *req, args.items));
    } else {
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(Verify, v1::VerifyRequest, v1::VerifyResponse, req));
    }
  }
  return absl::OkStatus();
}

// Encrypt, EncryptBatch; Decrypt of a ciphertext made here.
absl::Status Preparer::MakeSymmetric(const MakeArgs& args, Workload& w) {
  if (!InFamily(args.alg, AlgorithmFamily::kSymmetric)) return args.Wrong("an SM4 or AES mode");
  v1::EncryptRequest enc;
  enc.set_algorithm(args.alg);
  SymmetricRef(args.alg, symmetric_key_32_.substr(0, SymmetricKeySize(args.alg)),
               enc.mutable_key());
  enc.set_plaintext(args.data);
  enc.set_padding(PaddingFor(args.alg, args.spec.size));
  if (args.rpc == "Encrypt") {
    // No nonce: the server draws a fresh one per request, as a client should let it.
    auto req = std::make_shared<v1::EncryptRequest>(std::move(enc));
    if (args.items > 0) {
      w.op.calls.push_back(SMCRYPT_LOAD_BATCH(EncryptBatch, v1::EncryptBatchRequest,
                                              v1::EncryptBatchResponse, *req, args.items));
    } else {
      w.op.calls.push_back(
          SMCRYPT_LOAD_CALL(Encrypt, v1::EncryptRequest, v1::EncryptResponse, req));
    }
  } else {
    v1::EncryptResponse ct;
    grpc::ClientContext ctx;
    Prepare(&ctx);
    ++rpcs_;
    grpc::Status s = stub_->Encrypt(&ctx, enc, &ct);
    if (!s.ok()) return RpcError(absl::StrCat("Encrypt ", args.name), s);
    auto req = std::make_shared<v1::DecryptRequest>();
    req->set_algorithm(args.alg);
    *req->mutable_key() = enc.key();
    req->set_nonce(ct.nonce());
    req->set_ciphertext(ct.ciphertext());
    req->set_tag(ct.tag());
    req->set_padding(enc.padding());
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(Decrypt, v1::DecryptRequest, v1::DecryptResponse, req));
  }
  return absl::OkStatus();
}

// PublicKeyEncrypt; PublicKeyDecrypt of ciphertexts made here.
absl::Status Preparer::MakePublicKeyEncryption(const MakeArgs& args, Workload& w) {
  if (!InFamily(args.alg, AlgorithmFamily::kPublicKeyEncrypt)) {
    return args.Wrong("SM2 or RSA-*-OAEP");
  }
  v1::KeyRef public_ref, private_ref;
  if (absl::Status st = KeyRefFor(args.alg, false, &public_ref); !st.ok()) return st;
  if (args.rpc == "PublicKeyDecrypt") {
    if (absl::Status st = KeyRefFor(args.alg, true, &private_ref); !st.ok()) return st;
  }
  // RSA-OAEP takes at most one block per call: larger payloads go as consecutive
  // maximum-size blocks (the study's method), each its own RPC, all in one operation.
  const size_t block = MaxOaepPlaintext(args.alg) == 0 ? std::max<size_t>(args.spec.size, 1)
                                                  : MaxOaepPlaintext(args.alg);
  const size_t n = args.spec.size == 0 ? 1 : (args.spec.size + block - 1) / block;
  w.blocks = static_cast<int>(n);
  w.block_size = std::min(block, args.spec.size);
  for (size_t i = 0; i < n; ++i) {
    v1::PublicKeyEncryptRequest enc;
    enc.set_algorithm(args.alg);
    *enc.mutable_key() = public_ref;
    enc.set_plaintext(args.data.substr(i * block, block));
    if (args.rpc == "PublicKeyEncrypt") {
      auto req = std::make_shared<v1::PublicKeyEncryptRequest>(std::move(enc));
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(PublicKeyEncrypt, v1::PublicKeyEncryptRequest,
                                             v1::PublicKeyEncryptResponse, req));
      continue;
    }
    v1::PublicKeyEncryptResponse ct;
    grpc::ClientContext ctx;
    Prepare(&ctx);
    ++rpcs_;
    grpc::Status s = stub_->PublicKeyEncrypt(&ctx, enc, &ct);
    if (!s.ok()) return RpcError(absl::StrCat("PublicKeyEncrypt ", args.name), s);
    auto req = std::make_shared<v1::PublicKeyDecryptRequest>();
    req->set_algorithm(args.alg);
    *req->mutable_key() = private_ref;
    req->set_ciphertext(ct.ciphertext());
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(PublicKeyDecrypt, v1::PublicKeyDecryptRequest,
                                           v1::PublicKeyDecryptResponse, req));
  }
  return absl::OkStatus();
}

// HybridEncrypt, HybridEncryptBatch; HybridDecrypt of a ciphertext made here.
absl::Status Preparer::MakeHybrid(const MakeArgs& args, Workload& w) {
  if (!InFamily(args.alg, AlgorithmFamily::kHybrid)) return args.Wrong("an HPKE suite");
  v1::HybridEncryptRequest enc;
  enc.set_algorithm(args.alg);
  if (absl::Status st = KeyRefFor(args.alg, false, enc.mutable_key()); !st.ok()) return st;
  enc.set_plaintext(args.data);
  enc.set_info("smcrypt-load");
  if (args.rpc == "HybridEncrypt") {
    auto req = std::make_shared<v1::HybridEncryptRequest>(std::move(enc));
    if (args.items > 0) {
      w.op.calls.push_back(SMCRYPT_LOAD_BATCH(HybridEncryptBatch, v1::HybridEncryptBatchRequest,
                                              v1::HybridEncryptBatchResponse, *req, args.items));
    } else {
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(HybridEncrypt, v1::HybridEncryptRequest,
                                             v1::HybridEncryptResponse, req));
    }
  } else {
    v1::HybridEncryptResponse ct;
    grpc::ClientContext ctx;
    Prepare(&ctx);
    ++rpcs_;
    grpc::Status s = stub_->HybridEncrypt(&ctx, enc, &ct);
    if (!s.ok()) return RpcError(absl::StrCat("HybridEncrypt ", args.name), s);
    auto req = std::make_shared<v1::HybridDecryptRequest>();
    req->set_algorithm(args.alg);
    if (absl::Status st = KeyRefFor(args.alg, true, req->mutable_key()); !st.ok()) return st;
    req->set_ciphertext(ct.ciphertext());
    req->set_info(enc.info());
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(HybridDecrypt, v1::HybridDecryptRequest,
                                           v1::HybridDecryptResponse, req));
  }
  return absl::OkStatus();
}

// GenerateKeyPair (the public key only).
absl::Status Preparer::MakeKeyPair(const MakeArgs& args, Workload& w) {
  if (!InFamily(args.alg, AlgorithmFamily::kSignature) &&
      !InFamily(args.alg, AlgorithmFamily::kPublicKeyEncrypt) &&
      !InFamily(args.alg, AlgorithmFamily::kHybrid)) {
    return args.Wrong("an asymmetric algorithm");
  }
  // Only the public key comes back, so the run works against a server that denies
  // inline private keys too (it withholds them anyway).
  auto req = std::make_shared<v1::GenerateKeyPairRequest>();
  req->set_algorithm(args.alg);
  req->set_omit_private_key(true);
  w.op.payload_bytes = 0;
  w.op.calls.push_back(SMCRYPT_LOAD_CALL(GenerateKeyPair, v1::GenerateKeyPairRequest,
                                         v1::GenerateKeyPairResponse, req));
  return absl::OkStatus();
}

// GetPublicKey of the private key the workloads of the algorithm use.
absl::Status Preparer::MakeGetPublicKey(const MakeArgs& args, Workload& w) {
  auto req = std::make_shared<v1::GetPublicKeyRequest>();
  req->set_algorithm(args.alg);
  if (absl::Status st = KeyRefFor(args.alg, /*private_key=*/true, req->mutable_key()); !st.ok()) {
    return st;
  }
  w.op.payload_bytes = 0;
  w.op.calls.push_back(SMCRYPT_LOAD_CALL(GetPublicKey, v1::GetPublicKeyRequest,
                                         v1::GetPublicKeyResponse, req));
  return absl::OkStatus();
}

// KeyExchange.
absl::Status Preparer::MakeKeyExchange(const MakeArgs& args, Workload& w) {
  if (args.alg != v1::SM2) return args.Wrong("SM2");
  // The server plays both parties for one key (A = B: the same work as two keys), with
  // confirmation and a 16-byte K; the Params outlive the run inside the CallFn.
  auto p = std::make_shared<KeyExchangeCallParams>();
  for (v1::KeyExchangeParams* side : {&p->initiator, &p->responder}) {
    side->set_algorithm(v1::SM2);
    if (absl::Status st = KeyRefFor(args.alg, /*private_key=*/true, side->mutable_key());
        !st.ok()) {
      return st;
    }
    if (absl::Status st = KeyRefFor(args.alg, /*private_key=*/false, side->mutable_peer_key());
        !st.ok()) {
      return st;
    }
    side->set_key_length(16);
    side->set_confirmation(true);
  }
  p->initiator.set_role(v1::KEY_EXCHANGE_ROLE_INITIATOR);
  p->responder.set_role(v1::KEY_EXCHANGE_ROLE_RESPONDER);
  p->metadata = metadata_;
  w.op.payload_bytes = 0;
  w.op.rpcs_per_call = 2;
  w.op.calls.push_back([p](Stub& stub, grpc::ClientContext* ctx,
                           std::function<void(grpc::Status)> done) {
    StartKeyExchangeCall(*p, stub, ctx, std::move(done));
  });
  return absl::OkStatus();
}

absl::StatusOr<Workload> Preparer::Make(const WorkloadSpec& spec) {
  // A *Batch RPC carries `batch_items` copies of the request its name starts with.
  std::string rpc = spec.rpc;
  size_t items = 0;
  if (absl::EndsWith(rpc, "Batch")) {
    rpc.resize(rpc.size() - 5);
    items = std::max<size_t>(1, spec.batch_items);
    if (rpc != "Hash" && rpc != "Sign" && rpc != "Verify" && rpc != "Encrypt" &&
        rpc != "HybridEncrypt") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--rpc ", spec.rpc, ": the batch RPCs are HashBatch, SignBatch, VerifyBatch, "
          "EncryptBatch and HybridEncryptBatch"));
    }
  }
  Workload w;
  w.op.payload_bytes = spec.size * std::max<size_t>(1, items);
  const MakeArgs args{spec, spec.algorithm, cli::AlgorithmName(spec.algorithm), rpc, items,
                      Payload(spec.size)};

  absl::Status st;
  if (rpc == "Hash") {
    st = MakeHash(args, w);
  } else if (rpc == "Hmac") {
    st = MakeHmac(args, w);
  } else if (rpc == "Sign" || rpc == "Verify") {
    st = MakeSignature(args, w);
  } else if (rpc == "Encrypt" || rpc == "Decrypt") {
    st = MakeSymmetric(args, w);
  } else if (rpc == "PublicKeyEncrypt" || rpc == "PublicKeyDecrypt") {
    st = MakePublicKeyEncryption(args, w);
  } else if (rpc == "HybridEncrypt" || rpc == "HybridDecrypt") {
    st = MakeHybrid(args, w);
  } else if (rpc == "GenerateKeyPair") {
    st = MakeKeyPair(args, w);
  } else if (rpc == "GetPublicKey") {
    st = MakeGetPublicKey(args, w);
  } else if (rpc == "GetServerInfo") {
    auto req = std::make_shared<v1::GetServerInfoRequest>();
    w.op.payload_bytes = 0;
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(GetServerInfo, v1::GetServerInfoRequest,
                                           v1::GetServerInfoResponse, req));
  } else if (rpc == "KeyExchange") {
    st = MakeKeyExchange(args, w);
  } else if (rpc == "GenerateRandom") {
    auto req = std::make_shared<v1::GenerateRandomRequest>();
    req->set_length(static_cast<uint32_t>(spec.size));
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(GenerateRandom, v1::GenerateRandomRequest,
                                           v1::GenerateRandomResponse, req));
  } else {
    std::string list;
    for (const char* r : kUnaryRpcs) absl::StrAppend(&list, list.empty() ? "" : ", ", r);
    for (const char* r : kBatchRpcs) absl::StrAppend(&list, ", ", r);
    return absl::InvalidArgumentError(
        absl::StrCat("--rpc ", spec.rpc, ": expected one of ", list));
  }
  if (!st.ok()) return st;
  return w;
}

void PayloadCheck::Add(std::string_view piece) {
  for (size_t i = 0; i < piece.size() && !first_difference_; ++i) {
    const size_t at = received_ + i;
    if (at >= total_ || chunk_.empty() || piece[i] != chunk_[at % chunk_.size()]) {
      first_difference_ = at;
    }
  }
  received_ += piece.size();
}

absl::Status PayloadCheck::Finish() const {
  if (first_difference_ && *first_difference_ < total_) {
    return absl::DataLossError(absl::StrCat("the decrypted plaintext differs from what was "
                                            "encrypted at byte ", *first_difference_));
  }
  if (received_ != total_) {
    return absl::DataLossError(absl::StrCat("the decrypted plaintext has ", received_,
                                            " bytes, ", total_, " were encrypted"));
  }
  return absl::OkStatus();
}

}  // namespace smcrypt::load
