// stream_handlers.cc — CryptoService's streaming handlers: five bidirectional streams
// on ParamsFirstStream (stream_reactor.h) and HashStream, a client stream whose
// algorithm may be repeated.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/service/call_guard.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/method_spec.h"
#include "server/service/proto_convert.h"
#include "server/service/status_util.h"
#include "server/service/stream_reactor.h"

namespace smcrypt::server {
namespace {

absl::StatusOr<SymmetricParams> EncryptStreamParamsFrom(const v1::EncryptStreamParams& params) {
  return SymmetricFrom(
      params, params.has_nonce() ? std::optional<absl::string_view>(params.nonce()) : std::nullopt,
      params.tag_length());
}

absl::StatusOr<SymmetricParams> DecryptStreamParamsFrom(const v1::DecryptStreamParams& params) {
  return SymmetricFrom(params, absl::string_view(params.nonce()), 0);
}

class EncryptStreamReactor final
    : public ParamsFirstStream<v1::EncryptStreamRequest, v1::EncryptStreamResponse,
                               SymmetricParams> {
 public:
  EncryptStreamReactor(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : ParamsFirstStream(svc, ctx, rpc::kEncryptStream, EncryptStreamParamsFrom) {}

 private:
  absl::Status Open(const SymmetricParams& p, const v1::EncryptStreamRequest& req,
                    std::deque<v1::EncryptStreamResponse>* out) override {
    absl::StatusOr<std::unique_ptr<StreamEncryptor>> enc = engine().NewStreamEncryptor(p);
    if (!enc.ok()) return enc.status();
    enc_ = *std::move(enc);
    v1::EncryptStreamResponse& header = out->emplace_back();
    header.set_nonce(std::string(enc_->nonce()));
    header.set_key_version(ReportedVersion(p));
    return OnNext(req, out);
  }

  absl::Status OnNext(const v1::EncryptStreamRequest& req,
                      std::deque<v1::EncryptStreamResponse>* out) override {
    absl::StatusOr<std::optional<StreamChunk>> chunk = enc_->Update(req.plaintext());
    if (!chunk.ok()) return chunk.status();
    in_ += req.plaintext().size();
    if (chunk->has_value()) Emit(**chunk, false, out);
    return absl::OkStatus();
  }

  absl::Status Close(std::deque<v1::EncryptStreamResponse>* out) override {
    absl::StatusOr<StreamChunk> chunk = enc_->Finish();
    if (!chunk.ok()) return chunk.status();
    Emit(*chunk, true, out);
    return absl::OkStatus();
  }

  void Emit(StreamChunk& chunk, bool last, std::deque<v1::EncryptStreamResponse>* out) {
    out_ += chunk.data.size();
    v1::EncryptStreamResponse& r = out->emplace_back();
    r.set_ciphertext(std::move(chunk.data));
    r.set_tag(std::move(chunk.tag));
    r.set_last(last);
  }

  // PendingBytes: the plaintext the encryptor keeps (a pending segment, a partial block).
  // Every mode's ciphertext is as long as its plaintext until Finish (tags travel apart),
  // so it is the plaintext read less the ciphertext made.
  uint64_t PendingBytes() const override { return in_ > out_ ? in_ - out_ : 0; }

  std::unique_ptr<StreamEncryptor> enc_;
  uint64_t in_ = 0;   // plaintext bytes read
  uint64_t out_ = 0;  // ciphertext bytes made
};

class DecryptStreamReactor final
    : public ParamsFirstStream<v1::DecryptStreamRequest, v1::DecryptStreamResponse,
                               SymmetricParams> {
 public:
  DecryptStreamReactor(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : ParamsFirstStream(svc, ctx, rpc::kDecryptStream, DecryptStreamParamsFrom) {}

 private:
  absl::Status Open(const SymmetricParams& p, const v1::DecryptStreamRequest& req,
                    std::deque<v1::DecryptStreamResponse>* out) override {
    absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec = engine().NewStreamDecryptor(p);
    if (!dec.ok()) return dec.status();
    dec_ = *std::move(dec);
    key_ = p.key;
    key_.value = {};  // only its version and trial are read (ReportedKeyVersion)
    versions_ = engine().TrialWidth(p.key);
    return OnNext(req, out);
  }

  absl::Status OnNext(const v1::DecryptStreamRequest& req,
                      std::deque<v1::DecryptStreamResponse>* out) override {
    absl::StatusOr<std::optional<StreamChunk>> chunk = dec_->Update(req.ciphertext(), req.tag());
    if (!chunk.ok()) return chunk.status();
    in_ += req.ciphertext().size();
    if (chunk->has_value()) {
      out_ += (*chunk)->data.size();
      Respond(out).set_plaintext(std::move((*chunk)->data));
    }
    return absl::OkStatus();
  }

  absl::Status Close(std::deque<v1::DecryptStreamResponse>* out) override {
    absl::StatusOr<StreamChunk> chunk = dec_->Finish();
    if (!chunk.ok()) return chunk.status();
    v1::DecryptStreamResponse& r = Respond(out);
    r.set_plaintext(std::move(chunk->data));
    r.set_last(true);
    return absl::OkStatus();
  }

  // Respond adds a response; the first says the version that opened the stream (known
  // once a segment is opened: KeyInput::trial).
  v1::DecryptStreamResponse& Respond(std::deque<v1::DecryptStreamResponse>* out) {
    v1::DecryptStreamResponse& r = out->emplace_back();
    if (!responded_) r.set_key_version(ReportedKeyVersion(key_));
    responded_ = true;
    return r;
  }

  std::unique_ptr<StreamDecryptor> dec_;
  // PendingBytes: the ciphertext the decryptor keeps (a pending segment, a held-back
  // block): before Finish each mode's plaintext is as long as its ciphertext (tags travel
  // apart), so it is the ciphertext read less the plaintext made.
  uint64_t PendingBytes() const override { return in_ > out_ ? in_ - out_ : 0; }
  // PendingCopies: one per version while the stream still tries versions.
  uint64_t PendingCopies() const override {
    return key_.trial != nullptr && key_.trial->tried.empty() ? versions_ : 1;
  }

  KeyInput key_;
  size_t versions_ = 1;
  bool responded_ = false;
  uint64_t in_ = 0;   // ciphertext bytes read
  uint64_t out_ = 0;  // plaintext bytes made
};

// HybridEncryptStreamReactor: header ‖ enc first, then one sealed chunk per non-empty
// plaintext message, then the final chunk at half-close (crypto.proto, stream format).
class HybridEncryptStreamReactor final
    : public ParamsFirstStream<v1::HybridEncryptStreamRequest,
                               v1::HybridEncryptStreamResponse, HybridStreamParams> {
 public:
  HybridEncryptStreamReactor(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : ParamsFirstStream(svc, ctx, rpc::kHybridEncryptStream, HybridFrom) {}

 private:
  absl::Status Open(const HybridStreamParams& p, const v1::HybridEncryptStreamRequest& req,
                    std::deque<v1::HybridEncryptStreamResponse>* out) override {
    absl::StatusOr<std::unique_ptr<HybridStreamEncryptor>> enc =
        engine().NewHybridStreamEncryptor(p);
    if (!enc.ok()) return enc.status();
    enc_ = *std::move(enc);
    v1::HybridEncryptStreamResponse& header = out->emplace_back();
    header.set_ciphertext(std::string(enc_->prefix()));
    header.set_key_version(ReportedVersion(p));
    return OnNext(req, out);
  }

  absl::Status OnNext(const v1::HybridEncryptStreamRequest& req,
                      std::deque<v1::HybridEncryptStreamResponse>* out) override {
    absl::StatusOr<std::string> chunk = enc_->Update(req.plaintext());
    if (!chunk.ok()) return chunk.status();
    if (!chunk->empty()) out->emplace_back().set_ciphertext(*std::move(chunk));
    return absl::OkStatus();
  }

  absl::Status Close(std::deque<v1::HybridEncryptStreamResponse>* out) override {
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
// stream fails unless the final chunk arrived before half-close. Opening with the
// private key: audited with the stream's final status (its row).
class HybridDecryptStreamReactor final
    : public ParamsFirstStream<v1::HybridDecryptStreamRequest,
                               v1::HybridDecryptStreamResponse, HybridStreamParams> {
 public:
  HybridDecryptStreamReactor(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : ParamsFirstStream(svc, ctx, rpc::kHybridDecryptStream, HybridFrom) {}

 private:
  absl::Status Open(const HybridStreamParams& p, const v1::HybridDecryptStreamRequest& req,
                    std::deque<v1::HybridDecryptStreamResponse>* out) override {
    absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> dec =
        engine().NewHybridStreamDecryptor(p);
    if (!dec.ok()) return dec.status();
    dec_ = *std::move(dec);
    key_ = p.key;
    key_.value = {};  // only its version and trial are read (ReportedKeyVersion)
    versions_ = engine().TrialWidth(p.key);
    return OnNext(req, out);
  }

  absl::Status OnNext(const v1::HybridDecryptStreamRequest& req,
                      std::deque<v1::HybridDecryptStreamResponse>* out) override {
    absl::StatusOr<std::string> pt = dec_->Update(req.ciphertext());
    if (!pt.ok()) return pt.status();
    if (!pt->empty()) Respond(out).set_plaintext(*std::move(pt));
    return absl::OkStatus();
  }

  absl::Status Close(std::deque<v1::HybridDecryptStreamResponse>* out) override {
    absl::Status s = dec_->Finish();
    if (!s.ok()) return s;
    Respond(out).set_last(true);
    return absl::OkStatus();
  }

  // Respond adds a response; the first says the version that opened the stream (known
  // once a chunk is opened: KeyInput::trial).
  v1::HybridDecryptStreamResponse& Respond(std::deque<v1::HybridDecryptStreamResponse>* out) {
    v1::HybridDecryptStreamResponse& r = out->emplace_back();
    if (!responded_) r.set_key_version(ReportedKeyVersion(key_));
    responded_ = true;
    return r;
  }

  std::unique_ptr<HybridStreamDecryptor> dec_;
  // PendingBytes: the stream bytes the decryptor keeps until they complete a chunk.
  uint64_t PendingBytes() const override { return dec_ != nullptr ? dec_->buffered_size() : 0; }
  // PendingCopies: one per version while the stream still tries versions.
  uint64_t PendingCopies() const override {
    return key_.trial != nullptr && key_.trial->tried.empty() ? versions_ : 1;
  }

  KeyInput key_;
  size_t versions_ = 1;
  bool responded_ = false;
};

// KeyExchangeReactor runs one SM2 key exchange in the order crypto.proto gives above
// KeyExchangeRequest. The Sm2KeyExchange holds the ephemeral scalar (and a responder's K
// until S_A is checked) between messages; it dies, its secrets wiped, with the stream.
class KeyExchangeReactor final
    : public ParamsFirstStream<v1::KeyExchangeRequest, v1::KeyExchangeResponse,
                               KeyExchangeInput> {
 public:
  KeyExchangeReactor(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx)
      : ParamsFirstStream(svc, ctx, rpc::kKeyExchange, KeyExchangeFrom) {}

 private:
  enum class Step { kAwaitingPeerPoint, kAwaitingPeerConfirmation, kDone };

  absl::Status OnNext(const v1::KeyExchangeRequest& req,
                      std::deque<v1::KeyExchangeResponse>* out) override {
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

  // Open: the first message, params (and a responder's R_A). The caller's private key is
  // used: audited with the stream's final status (its row).
  absl::Status Open(const KeyExchangeInput& input, const v1::KeyExchangeRequest& req,
                    std::deque<v1::KeyExchangeResponse>* out) override {
    const bool initiator = input.params.role == Sm2KeyExchangeRole::kInitiator;
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
    absl::StatusOr<std::unique_ptr<Sm2KeyExchange>> kex = engine().NewKeyExchange(input);
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

  absl::Status Close(std::deque<v1::KeyExchangeResponse>* out) override {
    (void)out;
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

// HashStreamReactor: a client stream; its first message names the algorithm, later
// messages may repeat it or leave it unset.
class HashStreamReactor final : public grpc::ServerReadReactor<v1::HashStreamRequest> {
 public:
  HashStreamReactor(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx,
                    v1::HashStreamResponse* response)
      : svc_(svc), ctx_(ctx), response_(response), slot_(svc, ctx) {
    absl::Status s = slot_.Open(ctx_);
    if (!s.ok()) {
      Finish(ToGrpcStatus(s));
      return;
    }
    StartRead(&req_);
  }

  void OnReadDone(bool ok) override {
    slot_.Touch();
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
    // the byte limits is refused as a unary call would be.
    absl::Status charged = slot_.charge().TryAdd(req_.ByteSizeLong());
    if (!charged.ok()) {
      Finish(ToGrpcStatus(charged));
      return;
    }
    hash_->Update(req_.data());
    total_ += req_.data().size();
    slot_.charge().Set(0);
    // The next read starts from an empty message (a cleared one keeps its buffers).
    v1::HashStreamRequest().Swap(&req_);
    StartRead(&req_);
  }

  void OnDone() override {
    slot_.Close();
    delete this;
  }

 private:
  const CryptoServiceImpl* svc_;
  grpc::CallbackServerContext* ctx_;
  v1::HashStreamResponse* response_;
  StreamSlot slot_;
  v1::HashStreamRequest req_;
  std::unique_ptr<HashStream> hash_;
  v1::Algorithm first_algorithm_ = v1::ALGORITHM_UNSPECIFIED;
  uint64_t total_ = 0;
};

// StartStream makes a bidirectional stream's reactor and starts it (BidiStream::Start).
template <typename Reactor>
Reactor* StartStream(const CryptoServiceImpl* svc, grpc::CallbackServerContext* ctx) {
  auto* reactor = new Reactor(svc, ctx);
  reactor->Start();
  return reactor;
}

}  // namespace

grpc::ServerReadReactor<v1::HashStreamRequest>* CryptoServiceImpl::HashStream(
    grpc::CallbackServerContext* ctx, v1::HashStreamResponse* response) {
  return new HashStreamReactor(this, ctx, response);
}

grpc::ServerBidiReactor<v1::EncryptStreamRequest, v1::EncryptStreamResponse>*
CryptoServiceImpl::EncryptStream(grpc::CallbackServerContext* ctx) {
  return StartStream<EncryptStreamReactor>(this, ctx);
}

grpc::ServerBidiReactor<v1::DecryptStreamRequest, v1::DecryptStreamResponse>*
CryptoServiceImpl::DecryptStream(grpc::CallbackServerContext* ctx) {
  return StartStream<DecryptStreamReactor>(this, ctx);
}

grpc::ServerBidiReactor<v1::HybridEncryptStreamRequest, v1::HybridEncryptStreamResponse>*
CryptoServiceImpl::HybridEncryptStream(grpc::CallbackServerContext* ctx) {
  return StartStream<HybridEncryptStreamReactor>(this, ctx);
}

grpc::ServerBidiReactor<v1::HybridDecryptStreamRequest, v1::HybridDecryptStreamResponse>*
CryptoServiceImpl::HybridDecryptStream(grpc::CallbackServerContext* ctx) {
  return StartStream<HybridDecryptStreamReactor>(this, ctx);
}

grpc::ServerBidiReactor<v1::KeyExchangeRequest, v1::KeyExchangeResponse>*
CryptoServiceImpl::KeyExchange(grpc::CallbackServerContext* ctx) {
  return StartStream<KeyExchangeReactor>(this, ctx);
}

}  // namespace smcrypt::server
