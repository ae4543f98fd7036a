#include "clients/smcrypt-load/workload.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

// KeyExchange is one SM2 key exchange (GB/T 32918.3 §6, with confirmation) against the
// server on two streams of one channel: the server as initiator for `initiator` and as
// responder for `responder`, each side's messages relayed to the other:
//   A: → params                      ← R_A
//   B: → params, R_A                 ← R_B, S_B
//   A: → R_B, S_B                    ← K, S_A
//   B: → S_A                         ← K
// The operation succeeds when both streams end OK and both K are equal and non-empty
// (else DATA_LOSS). Stream A uses the runner's context; B a context of its own with the
// same deadline and `metadata`. Both streams start together, so that they are admitted
// together under the server's stream limit (the channel queues streams beyond it in
// order): an initiator waiting for a responder that cannot start would hold its slot.
// When one stream fails, the other is half-closed, so that the server ends it as well
// (INVALID_ARGUMENT, an exchange ended early) and counts it: every exchange is two RPCs
// at the server, and the operation fails with the first failure. The object deletes
// itself after both streams' OnDone.
class KeyExchange {
 public:
  struct Params {
    v1::KeyExchangeParams initiator, responder;
    std::vector<std::pair<std::string, std::string>> metadata;
  };

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

absl::StatusOr<Workload> Preparer::Make(const WorkloadSpec& spec) {
  using cli::AlgorithmFamily;
  using cli::InFamily;
  const v1::Algorithm alg = spec.algorithm;
  const std::string name = cli::AlgorithmName(alg);
  auto wrong = [&](absl::string_view family) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rpc ", spec.rpc, " takes ", family, ", not ", name));
  };
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
  const std::string data = Payload(spec.size);

  if (rpc == "Hash") {
    if (!InFamily(alg, AlgorithmFamily::kHash)) return wrong("SM3 or SHA-256");
    auto req = std::make_shared<v1::HashRequest>();
    req->set_algorithm(alg);
    req->set_data(data);
    if (items > 0) {
      w.op.calls.push_back(SMCRYPT_LOAD_BATCH(HashBatch, v1::HashBatchRequest,
                                              v1::HashBatchResponse, *req, items));
    } else {
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(Hash, v1::HashRequest, v1::HashResponse, req));
    }
  } else if (rpc == "Hmac") {
    if (!InFamily(alg, AlgorithmFamily::kMac)) return wrong("HMAC-SM3 or HMAC-SHA-256");
    auto req = std::make_shared<v1::HmacRequest>();
    req->set_algorithm(alg);
    SymmetricRef(alg, symmetric_key_32_, req->mutable_key());
    req->set_data(data);
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(Hmac, v1::HmacRequest, v1::HmacResponse, req));
  } else if (rpc == "Sign" || rpc == "Verify") {
    if (!InFamily(alg, AlgorithmFamily::kSignature)) return wrong("a signature algorithm");
    auto sign = std::make_shared<v1::SignRequest>();
    sign->set_algorithm(alg);
    if (absl::Status st = KeyRefFor(alg, /*private_key=*/true, sign->mutable_key()); !st.ok()) return st;
    sign->set_data(data);
    if (rpc == "Sign") {
      if (items > 0) {
        w.op.calls.push_back(SMCRYPT_LOAD_BATCH(SignBatch, v1::SignBatchRequest,
                                                v1::SignBatchResponse, *sign, items));
      } else {
        w.op.calls.push_back(SMCRYPT_LOAD_CALL(Sign, v1::SignRequest, v1::SignResponse, sign));
      }
    } else {
      v1::SignResponse sig;
      grpc::ClientContext ctx;
      Prepare(&ctx);
      ++rpcs_;
      grpc::Status s = stub_->Sign(&ctx, *sign, &sig);
      if (!s.ok()) return RpcError(absl::StrCat("Sign ", name), s);
      auto req = std::make_shared<v1::VerifyRequest>();
      req->set_algorithm(alg);
      if (absl::Status st = KeyRefFor(alg, false, req->mutable_key()); !st.ok()) return st;
      req->set_data(data);
      req->set_signature(sig.signature());
      if (items > 0) {
        w.op.calls.push_back(SMCRYPT_LOAD_BATCH(VerifyBatch, v1::VerifyBatchRequest,
                                                v1::VerifyBatchResponse, *req, items));
      } else {
        w.op.calls.push_back(SMCRYPT_LOAD_CALL(Verify, v1::VerifyRequest, v1::VerifyResponse, req));
      }
    }
  } else if (rpc == "Encrypt" || rpc == "Decrypt") {
    if (!InFamily(alg, AlgorithmFamily::kSymmetric)) return wrong("an SM4 or AES mode");
    v1::EncryptRequest enc;
    enc.set_algorithm(alg);
    SymmetricRef(alg, symmetric_key_32_.substr(0, SymmetricKeySize(alg)), enc.mutable_key());
    enc.set_plaintext(data);
    enc.set_padding(PaddingFor(alg, spec.size));
    if (rpc == "Encrypt") {
      // No nonce: the server draws a fresh one per request, as a client should let it.
      auto req = std::make_shared<v1::EncryptRequest>(std::move(enc));
      if (items > 0) {
        w.op.calls.push_back(SMCRYPT_LOAD_BATCH(EncryptBatch, v1::EncryptBatchRequest,
                                                v1::EncryptBatchResponse, *req, items));
      } else {
        w.op.calls.push_back(SMCRYPT_LOAD_CALL(Encrypt, v1::EncryptRequest, v1::EncryptResponse, req));
      }
    } else {
      v1::EncryptResponse ct;
      grpc::ClientContext ctx;
      Prepare(&ctx);
      ++rpcs_;
      grpc::Status s = stub_->Encrypt(&ctx, enc, &ct);
      if (!s.ok()) return RpcError(absl::StrCat("Encrypt ", name), s);
      auto req = std::make_shared<v1::DecryptRequest>();
      req->set_algorithm(alg);
      *req->mutable_key() = enc.key();
      req->set_nonce(ct.nonce());
      req->set_ciphertext(ct.ciphertext());
      req->set_tag(ct.tag());
      req->set_padding(enc.padding());
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(Decrypt, v1::DecryptRequest, v1::DecryptResponse, req));
    }
  } else if (rpc == "PublicKeyEncrypt" || rpc == "PublicKeyDecrypt") {
    if (!InFamily(alg, AlgorithmFamily::kPublicKeyEncrypt)) return wrong("SM2 or RSA-*-OAEP");
    v1::KeyRef public_ref, private_ref;
    if (absl::Status st = KeyRefFor(alg, false, &public_ref); !st.ok()) return st;
    if (rpc == "PublicKeyDecrypt") {
      if (absl::Status st = KeyRefFor(alg, true, &private_ref); !st.ok()) return st;
    }
    // RSA-OAEP takes at most one block per call: larger payloads go as consecutive
    // maximum-size blocks (the study's method), each its own RPC, all in one operation.
    const size_t block = MaxOaepPlaintext(alg) == 0 ? std::max<size_t>(spec.size, 1)
                                                    : MaxOaepPlaintext(alg);
    const size_t n = spec.size == 0 ? 1 : (spec.size + block - 1) / block;
    w.blocks = static_cast<int>(n);
    w.block_size = std::min(block, spec.size);
    for (size_t i = 0; i < n; ++i) {
      v1::PublicKeyEncryptRequest enc;
      enc.set_algorithm(alg);
      *enc.mutable_key() = public_ref;
      enc.set_plaintext(data.substr(i * block, block));
      if (rpc == "PublicKeyEncrypt") {
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
      if (!s.ok()) return RpcError(absl::StrCat("PublicKeyEncrypt ", name), s);
      auto req = std::make_shared<v1::PublicKeyDecryptRequest>();
      req->set_algorithm(alg);
      *req->mutable_key() = private_ref;
      req->set_ciphertext(ct.ciphertext());
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(PublicKeyDecrypt, v1::PublicKeyDecryptRequest,
                                             v1::PublicKeyDecryptResponse, req));
    }
  } else if (rpc == "HybridEncrypt" || rpc == "HybridDecrypt") {
    if (!InFamily(alg, AlgorithmFamily::kHybrid)) return wrong("an HPKE suite");
    v1::HybridEncryptRequest enc;
    enc.set_algorithm(alg);
    if (absl::Status st = KeyRefFor(alg, false, enc.mutable_key()); !st.ok()) return st;
    enc.set_plaintext(data);
    enc.set_info("smcrypt-load");
    if (rpc == "HybridEncrypt") {
      auto req = std::make_shared<v1::HybridEncryptRequest>(std::move(enc));
      if (items > 0) {
        w.op.calls.push_back(SMCRYPT_LOAD_BATCH(HybridEncryptBatch, v1::HybridEncryptBatchRequest,
                                                v1::HybridEncryptBatchResponse, *req, items));
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
      if (!s.ok()) return RpcError(absl::StrCat("HybridEncrypt ", name), s);
      auto req = std::make_shared<v1::HybridDecryptRequest>();
      req->set_algorithm(alg);
      if (absl::Status st = KeyRefFor(alg, true, req->mutable_key()); !st.ok()) return st;
      req->set_ciphertext(ct.ciphertext());
      req->set_info(enc.info());
      w.op.calls.push_back(SMCRYPT_LOAD_CALL(HybridDecrypt, v1::HybridDecryptRequest,
                                             v1::HybridDecryptResponse, req));
    }
  } else if (rpc == "GenerateKeyPair") {
    if (!InFamily(alg, AlgorithmFamily::kSignature) &&
        !InFamily(alg, AlgorithmFamily::kPublicKeyEncrypt) &&
        !InFamily(alg, AlgorithmFamily::kHybrid)) {
      return wrong("an asymmetric algorithm");
    }
    // Only the public key comes back, so the run works against a server that denies
    // inline private keys too (it withholds them anyway).
    auto req = std::make_shared<v1::GenerateKeyPairRequest>();
    req->set_algorithm(alg);
    req->set_omit_private_key(true);
    w.op.payload_bytes = 0;
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(GenerateKeyPair, v1::GenerateKeyPairRequest,
                                           v1::GenerateKeyPairResponse, req));
  } else if (rpc == "GetPublicKey") {
    auto req = std::make_shared<v1::GetPublicKeyRequest>();
    req->set_algorithm(alg);
    if (absl::Status st = KeyRefFor(alg, /*private_key=*/true, req->mutable_key()); !st.ok()) return st;
    w.op.payload_bytes = 0;
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(GetPublicKey, v1::GetPublicKeyRequest,
                                           v1::GetPublicKeyResponse, req));
  } else if (rpc == "GetServerInfo") {
    auto req = std::make_shared<v1::GetServerInfoRequest>();
    w.op.payload_bytes = 0;
    w.op.calls.push_back(SMCRYPT_LOAD_CALL(GetServerInfo, v1::GetServerInfoRequest,
                                           v1::GetServerInfoResponse, req));
  } else if (rpc == "KeyExchange") {
    if (alg != v1::SM2) return wrong("SM2");
    // The server plays both parties for one key (A = B: the same work as two keys), with
    // confirmation and a 16-byte K; the Params outlive the run inside the CallFn.
    auto p = std::make_shared<KeyExchange::Params>();
    for (v1::KeyExchangeParams* side : {&p->initiator, &p->responder}) {
      side->set_algorithm(v1::SM2);
      if (absl::Status st = KeyRefFor(alg, /*private_key=*/true, side->mutable_key()); !st.ok()) {
        return st;
      }
      if (absl::Status st = KeyRefFor(alg, /*private_key=*/false, side->mutable_peer_key());
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
      KeyExchange::Start(*p, stub, ctx, std::move(done));
    });
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
