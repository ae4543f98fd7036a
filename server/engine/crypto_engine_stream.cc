// crypto_engine_stream.cc — the CryptoEngine's streams: keys and parameters resolved,
// then the library's streams (smcrypt/streaming.h), with the bytes they process counted.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/crypto_engine_internal.h"
#include "server/engine/error_reason.h"
#include "smcrypt/random.h"
#include "smcrypt/registry.h"

namespace smcrypt::server {

using engine_internal::WrongAlgorithm;
using engine_internal::ExplainPrivateKeyError;
using engine_internal::NameInlineKey;
using engine_internal::CheckSymmetricParams;
using engine_internal::CheckHybridAlgorithm;
using engine_internal::IsDecryptionFailure;
using engine_internal::NoteTrial;
using engine_internal::RecordDecryptResult;
using engine_internal::VersionsFailed;

namespace {

// StreamTrial is the bookkeeping of a decrypting stream whose key was named without a
// version and has several (CryptoEngine::TrialKeys): it feeds the same input to one
// decryptor per version, in the trial order, until one opens a segment or chunk (or
// finishes), and then keeps only that one. Until then each candidate holds its own copy
// of the pending segment or partial chunk (at most kMaxTrialVersions copies).
struct StreamTrial {
  std::string key_id;
  std::shared_ptr<KeyTrial> trial;  // the call's (KeyInput::trial), may be null
  EngineObserver* observer = nullptr;
  std::vector<uint32_t> tried;
  bool active = false;  // more than one candidate, none has opened yet

  // Run runs step(decryptor) → R on each candidate of `*candidates` ({version, dec}) in
  // order: the first whose result is OK and opened(result, decryptor) is kept alone; a decryption
  // failure drops its candidate; any other error (the same for every version) answers.
  // Every candidate dropped: VersionsFailed. Else the OK result of the last candidate
  // (nothing opened yet).
  template <typename R, typename C, typename Step, typename Opened>
  R Run(std::vector<C>* candidates, const Step& step, const Opened& opened) {
    std::optional<R> pending;
    for (size_t i = 0; i < candidates->size();) {
      R r = step(*(*candidates)[i].dec);
      const uint32_t version = (*candidates)[i].version;
      if (r.ok() && opened(r, *(*candidates)[i].dec)) {
        C kept = std::move((*candidates)[i]);
        candidates->clear();
        candidates->push_back(std::move(kept));
        tried.push_back(version);
        active = false;
        NoteTrial(observer, Operation::kDecrypt, trial.get(), KeyTrial{tried, version}, true);
        return r;
      }
      if (!r.ok() && !IsDecryptionFailure(r.status())) return r;
      if (r.ok()) {
        pending.emplace(std::move(r));
        ++i;
        continue;
      }
      tried.push_back(version);
      candidates->erase(candidates->begin() + static_cast<ptrdiff_t>(i));
    }
    if (candidates->empty()) {
      active = false;
      NoteTrial(observer, Operation::kDecrypt, trial.get(), KeyTrial{tried, 0}, false);
      return VersionsFailed(key_id, tried);
    }
    return *std::move(pending);
  }
};

// TrialStreamDecryptor: a symmetric GCM/CCM decrypting stream over the candidates of a
// StreamTrial (one per version), then the one that opened. A segment whose tag is under
// kMinTrialTagSize bytes before a version is chosen answers `short_tag`
// (KEY_VERSION_REQUIRED).
class TrialStreamDecryptor final : public StreamDecryptor {
 public:
  struct Candidate {
    uint32_t version;
    std::unique_ptr<StreamDecryptor> dec;
  };
  TrialStreamDecryptor(std::vector<Candidate> candidates, StreamTrial trial,
                       absl::Status short_tag)
      : candidates_(std::move(candidates)), trial_(std::move(trial)),
        short_tag_(std::move(short_tag)) {
    trial_.active = candidates_.size() > 1;
  }
  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view ciphertext,
                                                    absl::string_view tag) override {
    using R = absl::StatusOr<std::optional<StreamChunk>>;
    if (candidates_.empty()) return absl::FailedPreconditionError("the stream has failed");
    if (!trial_.active) return candidates_.front().dec->Update(ciphertext, tag);
    // A message without a segment (no tag) is the library's to answer.
    if (!tag.empty() && tag.size() < kMinTrialTagSize) return short_tag_;
    return trial_.Run<R>(
        &candidates_, [&](StreamDecryptor& d) { return d.Update(ciphertext, tag); },
        [](const R& r, StreamDecryptor&) { return r->has_value(); });
  }
  absl::StatusOr<StreamChunk> Finish() override {
    using R = absl::StatusOr<StreamChunk>;
    if (candidates_.empty()) return absl::FailedPreconditionError("the stream has failed");
    if (!trial_.active) return candidates_.front().dec->Finish();
    return trial_.Run<R>(&candidates_, [](StreamDecryptor& d) { return d.Finish(); },
                         [](const R&, StreamDecryptor&) { return true; });
  }

 private:
  std::vector<Candidate> candidates_;
  StreamTrial trial_;
  absl::Status short_tag_;
};

// CountingStreamEncryptor / CountingStreamDecryptor record the bytes a symmetric stream
// processes (plaintext in, ciphertext in), and a failed decryption, as the unary
// Encrypt/Decrypt do.
class CountingStreamEncryptor final : public StreamEncryptor {
 public:
  CountingStreamEncryptor(std::unique_ptr<StreamEncryptor> inner, Algorithm alg,
                          EngineObserver* observer)
      : inner_(std::move(inner)), alg_(alg), observer_(observer) {}
  absl::string_view nonce() const override { return inner_->nonce(); }
  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view plaintext) override {
    auto out = inner_->Update(plaintext);
    if (out.ok() && observer_ != nullptr) {
      observer_->OnBytesProcessed(alg_, Operation::kEncrypt, plaintext.size());
    }
    return out;
  }
  absl::StatusOr<StreamChunk> Finish() override { return inner_->Finish(); }

 private:
  std::unique_ptr<StreamEncryptor> inner_;
  Algorithm alg_;
  EngineObserver* observer_;
};

class CountingStreamDecryptor final : public StreamDecryptor {
 public:
  CountingStreamDecryptor(std::unique_ptr<StreamDecryptor> inner, Algorithm alg,
                          EngineObserver* observer)
      : inner_(std::move(inner)), alg_(alg), observer_(observer) {}
  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view ciphertext,
                                                    absl::string_view tag) override {
    auto out = inner_->Update(ciphertext, tag);
    if (out.ok() && observer_ != nullptr) {
      observer_->OnBytesProcessed(alg_, Operation::kDecrypt, ciphertext.size());
    }
    RecordDecryptResult(observer_, alg_, out.status());
    return out;
  }
  absl::StatusOr<StreamChunk> Finish() override {
    absl::StatusOr<StreamChunk> out = inner_->Finish();
    RecordDecryptResult(observer_, alg_, out.status());
    return out;
  }

 private:
  std::unique_ptr<StreamDecryptor> inner_;
  Algorithm alg_;
  EngineObserver* observer_;
};

class CountingHashStream final : public HashStream {
 public:
  CountingHashStream(std::unique_ptr<smcrypt::Hash> hash, Algorithm alg, const CryptoEngine* engine,
                     EngineObserver* observer)
      : hash_(std::move(hash)), alg_(alg), observer_(observer) {}
  void Update(absl::string_view data) override {
    hash_->Update(data);
    if (observer_ != nullptr) observer_->OnBytesProcessed(alg_, Operation::kHash, data.size());
  }
  std::string Finish() override { return hash_->Finish(); }

 private:
  std::unique_ptr<smcrypt::Hash> hash_;
  Algorithm alg_;
  EngineObserver* observer_;
};

// CountingHybridStreamEncryptor / CountingHybridStreamDecryptor record the bytes a
// hybrid stream processes (plaintext sealed; ct ‖ tag of each chunk opened), and a
// failed decryption.
class CountingHybridStreamEncryptor final : public HybridStreamEncryptor {
 public:
  CountingHybridStreamEncryptor(std::unique_ptr<HpkeStreamEncryptor> inner, Algorithm alg,
                                EngineObserver* observer)
      : inner_(std::move(inner)), alg_(alg), observer_(observer) {}
  absl::string_view prefix() const override { return inner_->prefix(); }
  absl::StatusOr<std::string> Update(absl::string_view plaintext) override {
    absl::StatusOr<std::string> out = inner_->Update(plaintext);
    if (out.ok() && observer_ != nullptr && !plaintext.empty()) {
      observer_->OnBytesProcessed(alg_, Operation::kEncrypt, plaintext.size());
    }
    return out;
  }
  absl::StatusOr<std::string> Finish() override { return inner_->Finish(); }

 private:
  std::unique_ptr<HpkeStreamEncryptor> inner_;
  Algorithm alg_;
  EngineObserver* observer_;
};

class CountingHybridStreamDecryptor final : public HybridStreamDecryptor {
 public:
  // Candidate: the decryptor of one version of the key (one, unless the stream tries
  // versions: StreamTrial).
  struct Candidate {
    uint32_t version;
    std::unique_ptr<HpkeStreamDecryptor> dec;
  };
  CountingHybridStreamDecryptor(std::vector<Candidate> candidates, Algorithm alg,
                                EngineObserver* observer, StreamTrial trial)
      : candidates_(std::move(candidates)), alg_(alg), observer_(observer),
        trial_(std::move(trial)) {
    trial_.active = candidates_.size() > 1;
  }
  absl::StatusOr<std::string> Update(absl::string_view data) override {
    using R = absl::StatusOr<std::string>;
    if (candidates_.empty()) return absl::FailedPreconditionError("the stream has failed");
    const uint64_t before = candidates_.front().dec->opened_ciphertext_size();
    absl::StatusOr<std::string> out =
        !trial_.active
            ? candidates_.front().dec->Update(data)
            : trial_.Run<R>(
                  &candidates_, [&](HpkeStreamDecryptor& d) { return d.Update(data); },
                  // No candidate has opened a chunk before one is kept.
                  [](const R&, HpkeStreamDecryptor& d) {
                    return d.opened_ciphertext_size() > 0;
                  });
    const uint64_t opened =
        candidates_.empty() ? 0 : candidates_.front().dec->opened_ciphertext_size() - before;
    if (observer_ != nullptr && opened > 0) {
      observer_->OnBytesProcessed(alg_, Operation::kDecrypt, opened);
    }
    RecordDecryptResult(observer_, alg_, out.status());
    return out;
  }
  absl::Status Finish() override {
    // Finish succeeds only after the final chunk was opened, so by a chosen candidate.
    if (candidates_.empty()) return absl::FailedPreconditionError("the stream has failed");
    absl::Status s = candidates_.front().dec->Finish();
    RecordDecryptResult(observer_, alg_, s);
    return s;
  }
  uint64_t buffered_size() const override {
    return candidates_.empty() ? 0 : candidates_.front().dec->buffered_size();
  }

 private:
  std::vector<Candidate> candidates_;
  Algorithm alg_;
  EngineObserver* observer_;
  StreamTrial trial_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HashStream>> CryptoEngine::NewHashStream(Algorithm alg) const {
  if (!IsHashAlgorithm(alg)) return WrongAlgorithm(alg, "SM3 or SHA-256");
  absl::StatusOr<std::unique_ptr<smcrypt::Hash>> h = NewHash(alg);
  if (!h.ok()) return h.status();
  return std::unique_ptr<HashStream>(
      new CountingHashStream(*std::move(h), alg, this, observer_));
}

absl::StatusOr<std::unique_ptr<StreamEncryptor>> CryptoEngine::NewStreamEncryptor(
    const SymmetricParams& p) const {
  const std::shared_ptr<const Ring> ring = RingFor(p.key);
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  if (CipherModeOf(p.algorithm) == CipherMode::kXts) {
    return absl::InvalidArgumentError(absl::StrCat(
        AlgorithmName(p.algorithm),
        " has no stream: one message is one data unit (at most 2^20 blocks); use Encrypt and "
        "Decrypt per data unit"));
  }
  absl::StatusOr<absl::string_view> key = SymmetricKey(*ring, p.algorithm, p.key);
  if (!key.ok()) return key.status();
  absl::StatusOr<std::unique_ptr<StreamEncryptor>> enc;
  if (IsAeadAlgorithm(p.algorithm)) {
    if (p.nonce.has_value()) {
      if (s = CheckAeadStreamNonce(*p.nonce); !s.ok()) return s;
    }
    absl::StatusOr<std::string> nonce =
        p.nonce.has_value() ? std::string(*p.nonce) : RandomString(kAeadStreamNonceSize);
    if (!nonce.ok()) return nonce.status();
    enc = NewAeadStreamEncryptor(p.algorithm, *key, p.tag_length, *nonce, p.aad);
  } else {
    const bool padded = p.padding.value_or(Padding::kPkcs7) == Padding::kPkcs7;
    absl::StatusOr<std::unique_ptr<Cipher>> bulk = NewCipher(p.algorithm, *key, Padding::kNone);
    if (!bulk.ok()) return bulk.status();
    absl::StatusOr<std::unique_ptr<Cipher>> last = NewCipher(p.algorithm, *key, Padding::kPkcs7);
    if (!last.ok()) return last.status();
    absl::StatusOr<std::string> iv =
        p.nonce.has_value() ? std::string(*p.nonce) : RandomString((*bulk)->iv_size());
    if (!iv.ok()) return iv.status();
    enc = NewBlockStreamEncryptor(CipherModeOf(p.algorithm), *std::move(bulk), *std::move(last),
                                  *iv, padded, AlgorithmName(p.algorithm));
  }
  if (!enc.ok()) return enc.status();
  return std::unique_ptr<StreamEncryptor>(
      new CountingStreamEncryptor(*std::move(enc), p.algorithm, observer_));
}

absl::StatusOr<std::unique_ptr<StreamDecryptor>> CryptoEngine::NewStreamDecryptor(
    const SymmetricParams& p) const {
  const std::shared_ptr<const Ring> ring = RingFor(p.key);
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  if (CipherModeOf(p.algorithm) == CipherMode::kXts) {
    return absl::InvalidArgumentError(absl::StrCat(
        AlgorithmName(p.algorithm),
        " has no stream: one message is one data unit (at most 2^20 blocks); use Encrypt and "
        "Decrypt per data unit"));
  }
  const std::vector<KeyInput> keys = TrialKeys(*ring, p.key);
  absl::StatusOr<absl::string_view> key = SymmetricKey(*ring, p.algorithm, keys[0]);
  if (!key.ok()) return key.status();
  const absl::string_view nonce = p.nonce.value_or("");
  absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec;
  if (IsAeadAlgorithm(p.algorithm)) {
    // One decryptor per version tried (TrialKeys: one unless the request named none).
    std::vector<TrialStreamDecryptor::Candidate> candidates;
    for (const KeyInput& k : keys) {
      absl::StatusOr<absl::string_view> kb = SymmetricKey(*ring, p.algorithm, k);
      if (!kb.ok()) return kb.status();
      dec = NewAeadStreamDecryptor(p.algorithm, *kb, nonce, p.aad);
      if (!dec.ok()) return dec.status();
      candidates.push_back({k.version, *std::move(dec)});
    }
    if (candidates.size() == 1) {
      dec = std::move(candidates.front().dec);
    } else {
      const absl::Status short_tag = RequireOneVersion(
          *ring, p.key, absl::StrCat("a segment tag is under ", kMinTrialTagSize, " bytes"));
      dec = std::unique_ptr<StreamDecryptor>(new TrialStreamDecryptor(
          std::move(candidates),
          StreamTrial{std::string(p.key.value), p.key.trial, observer_, {}, false}, short_tag));
    }
  } else {
    s = RequireOneVersion(*ring, p.key,
                          absl::StrCat(AlgorithmName(p.algorithm), " is unauthenticated"));
    if (!s.ok()) return s;
    const bool padded = p.padding.value_or(Padding::kPkcs7) == Padding::kPkcs7;
    absl::StatusOr<std::unique_ptr<Cipher>> bulk = NewCipher(p.algorithm, *key, Padding::kNone);
    if (!bulk.ok()) return bulk.status();
    absl::StatusOr<std::unique_ptr<Cipher>> last = NewCipher(p.algorithm, *key, Padding::kPkcs7);
    if (!last.ok()) return last.status();
    dec = NewBlockStreamDecryptor(CipherModeOf(p.algorithm), *std::move(bulk), *std::move(last),
                                  nonce, padded, AlgorithmName(p.algorithm));
  }
  if (!dec.ok()) return dec.status();
  return std::unique_ptr<StreamDecryptor>(
      new CountingStreamDecryptor(*std::move(dec), p.algorithm, observer_));
}

absl::StatusOr<std::unique_ptr<HybridStreamEncryptor>> CryptoEngine::NewHybridStreamEncryptor(
    const HybridStreamParams& p) const {
  const std::shared_ptr<const Ring> ring = RingFor(p.key);
  absl::Status s = CheckHybridAlgorithm(p.algorithm);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PublicKey(*ring, p.algorithm, p.key);
  if (!k.ok()) return k.status();
  absl::StatusOr<HpkeSuite> suite = HpkeSuiteOf(p.algorithm);
  if (!suite.ok()) return suite.status();
  absl::StatusOr<std::unique_ptr<HpkeStreamEncryptor>> enc =
      HpkeStreamEncryptor::New(*suite, *k, p.info, p.aad);
  if (!enc.ok()) return NameInlineKey(enc.status(), p.key);
  return std::unique_ptr<HybridStreamEncryptor>(
      new CountingHybridStreamEncryptor(*std::move(enc), p.algorithm, observer_));
}

absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> CryptoEngine::NewHybridStreamDecryptor(
    const HybridStreamParams& p) const {
  const std::shared_ptr<const Ring> ring = RingFor(p.key);
  absl::Status s = CheckHybridAlgorithm(p.algorithm);
  if (!s.ok()) return s;
  absl::StatusOr<HpkeSuite> suite = HpkeSuiteOf(p.algorithm);
  if (!suite.ok()) return suite.status();
  // One decryptor per version tried (TrialKeys: one unless the request named none).
  std::vector<CountingHybridStreamDecryptor::Candidate> candidates;
  for (const KeyInput& k : TrialKeys(*ring, p.key, /*private_only=*/true)) {
    absl::StatusOr<absl::string_view> kb = PrivateKey(*ring, p.algorithm, k);
    if (!kb.ok()) return kb.status();
    absl::StatusOr<std::unique_ptr<HpkeStreamDecryptor>> dec =
        HpkeStreamDecryptor::New(*suite, *kb, p.info, p.aad);
    if (!dec.ok()) {
      return NameInlineKey(ExplainPrivateKeyError(dec.status(), p.algorithm, k), k);
    }
    candidates.push_back({k.version, *std::move(dec)});
  }
  return std::unique_ptr<HybridStreamDecryptor>(new CountingHybridStreamDecryptor(
      std::move(candidates), p.algorithm, observer_,
      StreamTrial{std::string(p.key.value), p.key.trial, observer_, {}, false}));
}

// ---- SM2 key exchange -------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Sm2KeyExchange>> CryptoEngine::NewKeyExchange(
    const KeyExchangeInput& in) const {
  if (in.algorithm != Algorithm::kSm2) return WrongAlgorithm(in.algorithm, "SM2");
  const std::shared_ptr<const Ring> ring = RingFor(in.key);
  absl::StatusOr<absl::string_view> own = PrivateKey(*ring, in.algorithm, in.key);
  if (!own.ok()) return own.status();
  absl::StatusOr<Sm2PrivateKey> own_key = ParseSm2PrivateKey(*own);
  if (!own_key.ok()) {
    return NameInlineKey(ExplainPrivateKeyError(own_key.status(), in.algorithm, in.key), in.key);
  }
  if (in.peer_key.kind == KeyInput::Kind::kNone) {
    return absl::InvalidArgumentError("peer_key is required (key_id or inline_key)");
  }
  absl::StatusOr<absl::string_view> peer = PublicKey(*ring, in.algorithm, in.peer_key);
  if (!peer.ok()) {
    // The same error as for the caller's own key, said of peer_key (reason and metadata
    // kept).
    absl::Status st(peer.status().code(), absl::StrCat("peer_key: ", peer.status().message()));
    peer.status().ForEachPayload(
        [&st](absl::string_view url, const absl::Cord& payload) { st.SetPayload(url, payload); });
    return st;
  }
  absl::StatusOr<Sm2PublicKey> peer_key = ParseSm2PublicKey(*peer);
  if (!peer_key.ok()) {
    absl::Status st = peer_key.status();
    if (in.peer_key.kind == KeyInput::Kind::kInline &&
        st.code() == absl::StatusCode::kInvalidArgument) {
      return WithReason(
          absl::InvalidArgumentError(absl::StrCat("peer_key.inline_key: ", st.message())),
          reason::kInvalidKey, {{"field", "peer_key.inline_key"}});
    }
    return st;
  }
  absl::StatusOr<Sm2KeyExchange> kex = Sm2KeyExchange::New(*own_key, *peer_key, in.params);
  if (!kex.ok()) return kex.status();
  return std::make_unique<Sm2KeyExchange>(*std::move(kex));
}

}  // namespace smcrypt::server
