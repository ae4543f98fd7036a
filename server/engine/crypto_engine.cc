#include "server/engine/crypto_engine.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/engine/crypto_engine_internal.h"
#include "server/engine/error_reason.h"
#include "smcrypt/random.h"

namespace smcrypt::server {
namespace engine_internal {

absl::Status WrongAlgorithm(Algorithm alg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("algorithm ", AlgorithmName(alg), " cannot be used here: expected ", what));
}

// ExplainPrivateKeyError turns the parse error of an inline private key that is in
// fact a public key into FailedPrecondition saying so (as for a keyring public key).
// Only called after parsing failed, so a valid key is never examined here.
absl::Status ExplainPrivateKeyError(absl::Status s, Algorithm alg, const KeyInput& key) {
  if (s.ok() || s.code() != absl::StatusCode::kInvalidArgument ||
      key.kind != KeyInput::Kind::kInline || !IsPublicKeyEncoding(key.value)) {
    return s;
  }
  return WithReason(absl::FailedPreconditionError(absl::StrCat(
                        "inline key is a public key (SubjectPublicKeyInfo); ", AlgorithmName(alg),
                        " needs the private key here (PKCS#8 DER or PEM)")),
                    reason::kPrivateKeyRequired, {{"algorithm", AlgorithmName(alg)}});
}

// NameInlineKey prefixes "key.inline_key: " to the InvalidArgument a factory returns for
// an inline asymmetric key (the algorithm and options are checked before the factory
// runs, so that error is about the key bytes), so the caller sees which field it was.
// A FailedPrecondition from the factory is a well-formed key of another family
// (WRONG_KEY_FAMILY) unless it already carries a reason.
absl::Status NameInlineKey(absl::Status s, const KeyInput& key) {
  if (key.kind != KeyInput::Kind::kInline) return s;
  if (s.code() == absl::StatusCode::kFailedPrecondition &&
      ReasonOf(s).reason == absl::StatusCodeToString(s.code())) {
    return WithReason(std::move(s), reason::kWrongKeyFamily);
  }
  if (s.code() != absl::StatusCode::kInvalidArgument) return s;
  return WithReason(absl::InvalidArgumentError(absl::StrCat("key.inline_key: ", s.message())),
                    reason::kInvalidKey, {{"field", "key.inline_key"}});
}


absl::Status CheckSignatureOptions(Algorithm alg, const SignatureOptions& options,
                                   bool user_id_set) {
  if (!IsSignatureAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, ECDSA-P256, ECDSA-SECP256K1, RSA-2048-PSS or RSA-3072-PSS");
  }
  if (user_id_set && alg != Algorithm::kSm2) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.user_id is for SM2 only, not ", AlgorithmName(alg)));
  }
  // With prehashed, data is e = SM3(Z || M) and Z already holds the ID (GB/T 32918.2
  // 5.5, 6.1 A1-A2): an ID given here would be silently ignored, so a caller who expects
  // it to be bound gets a signature that is not bound to it.
  if (user_id_set && options.prehashed) {
    return absl::InvalidArgumentError(
        "options.user_id has no effect with options.prehashed: the digest e = SM3(Z || M) "
        "already contains Z, computed from the ID; send the message instead, or leave "
        "user_id unset");
  }
  if (user_id_set && options.user_id.size() > kSm2MaxUserIdSize) {
    return absl::InvalidArgumentError(absl::StrCat("options.user_id must be at most ",
                                                   kSm2MaxUserIdSize, " bytes, got ",
                                                   options.user_id.size()));
  }
  if (options.encoding == SignatureEncoding::kRaw &&
      (alg == Algorithm::kRsa2048Pss || alg == Algorithm::kRsa3072Pss)) {
    return absl::InvalidArgumentError("options.encoding RAW is for SM2 and ECDSA, not RSA-PSS");
  }
  return absl::OkStatus();
}


absl::Status CheckSymmetricParams(const SymmetricParams& p) {
  if (!IsSymmetricAlgorithm(p.algorithm)) {
    return WrongAlgorithm(p.algorithm,
                          "an SM4 or AES mode (ECB, CBC, CTR, CFB, OFB, XTS, GCM, CCM)");
  }
  const bool aead = IsAeadAlgorithm(p.algorithm);
  if (!aead) {
    if (!p.aad.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("aad is for GCM and CCM only, not ", AlgorithmName(p.algorithm)));
    }
    if (p.tag_length != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tag_length is for GCM and CCM only, not ", AlgorithmName(p.algorithm)));
    }
    if (CipherModeOf(p.algorithm) == CipherMode::kEcb && p.nonce.has_value() && !p.nonce->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ECB takes no nonce/IV, got ", p.nonce->size(), " bytes"));
    }
    const CipherMode mode = CipherModeOf(p.algorithm);
    if (mode != CipherMode::kEcb && mode != CipherMode::kCbc && p.padding.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("padding is for ECB and CBC only, not ", AlgorithmName(p.algorithm)));
    }
  } else if (p.padding.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding is for ECB and CBC only, not ", AlgorithmName(p.algorithm)));
  }
  return absl::OkStatus();
}


absl::Status CheckHybridAlgorithm(Algorithm alg) {
  if (!IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "HPKE-SM2-SM3-SM4GCM or HPKE-P256-SHA256-AES128GCM");
  }
  return absl::OkStatus();
}

std::string KeyringPrimitiveKey(Algorithm alg, absl::string_view variant,
                                absl::string_view key_id, uint32_t version) {
  return absl::StrCat(AlgorithmName(alg), "|", variant, "|", key_id, "|", version);
}

// PublicCacheKey is the LRU key of a primitive parsed from public key bytes: algorithm,
// the length-prefixed options that shape the primitive, then the exact key bytes.
std::string PublicCacheKey(Algorithm alg, absl::string_view variant, absl::string_view key) {
  return absl::StrCat(AlgorithmName(alg), "|", variant.size(), ":", variant, "|", key);
}

std::string SignatureVariant(const SignatureOptions& o) {
  return absl::StrCat(static_cast<int>(o.encoding), o.prehashed ? "d" : "m", o.user_id);
}

std::string FormatVariant(Sm2CiphertextFormat f) { return absl::StrCat(static_cast<int>(f)); }

bool IsDefaultSignatureOptions(const SignatureOptions& o) {
  const SignatureOptions d;
  return o.user_id == d.user_id && o.encoding == d.encoding && o.prehashed == d.prehashed;
}

}  // namespace engine_internal

using engine_internal::WrongAlgorithm;
using engine_internal::ExplainPrivateKeyError;
using engine_internal::NameInlineKey;
using engine_internal::CheckSignatureOptions;
using engine_internal::CheckSymmetricParams;
using engine_internal::CheckHybridAlgorithm;
using engine_internal::KeyringPrimitiveKey;
using engine_internal::PublicCacheKey;
using engine_internal::SignatureVariant;
using engine_internal::FormatVariant;
using engine_internal::IsDefaultSignatureOptions;
using engine_internal::CountsAsVerified;
using engine_internal::RecordDecryptResult;
using engine_internal::FindPrimitive;
using engine_internal::Shared;
using engine_internal::CachedPublic;

namespace {

// Put files one primitive under each of `names` (a version, and 0 for the newest).
template <typename T>
void Put(absl::flat_hash_map<std::string, std::shared_ptr<const T>>* map,
         const std::vector<std::string>& names, absl::StatusOr<std::unique_ptr<T>> p) {
  // A key a factory refuses is left out; requests using it get the factory's error.
  if (!p.ok()) return;
  std::shared_ptr<const T> shared = *std::move(p);
  for (const std::string& name : names) map->emplace(name, shared);
}


}  // namespace

absl::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kHash: return "hash";
    case Operation::kMac: return "mac";
    case Operation::kSign: return "sign";
    case Operation::kVerify: return "verify";
    case Operation::kEncrypt: return "encrypt";
    case Operation::kDecrypt: return "decrypt";
  }
  return "unknown";
}


CryptoEngine::CryptoEngine(const KeyStore* keys, EngineOptions options, EngineObserver* observer)
    // The aliasing constructor with an empty owner: a pointer that owns nothing.
    : CryptoEngine(std::shared_ptr<const KeyStore>(std::shared_ptr<const void>(), keys), options,
                   observer) {}

CryptoEngine::CryptoEngine(std::shared_ptr<const KeyStore> keys, EngineOptions options,
                           EngineObserver* observer)
    : options_(options),
      observer_(observer),
      ring_(Ring::Build(std::move(keys))),
      verifier_cache_(options.public_key_cache_size),
      encrypter_cache_(options.public_key_cache_size),
      hybrid_encrypter_cache_(options.public_key_cache_size) {}

CryptoEngine::~CryptoEngine() = default;

void CryptoEngine::SetKeyStore(std::shared_ptr<const KeyStore> keys) {
  std::shared_ptr<const Ring> next = Ring::Build(std::move(keys));
  {
    absl::MutexLock lock(&ring_mu_);
    ring_.swap(next);
  }
  // `next` now holds the previous keyring; it is freed here unless a call still uses it.
}

std::shared_ptr<const CryptoEngine::Ring> CryptoEngine::ring() const {
  absl::ReaderMutexLock lock(&ring_mu_);
  return ring_;
}

std::shared_ptr<const KeyStore> CryptoEngine::key_store() const { return ring()->keys; }

size_t CryptoEngine::keyring_size() const { return ring()->keys->size(); }

std::shared_ptr<const CryptoEngine::Ring> CryptoEngine::Ring::Build(
    std::shared_ptr<const KeyStore> keys) {
  auto ring = std::make_shared<Ring>();
  ring->keys = std::move(keys);
  for (const StoredKey* e : ring->keys->entries()) {
    const absl::string_view secret = SecretDataAsStringView(e->material);
    const absl::string_view id = e->key_id;
    // A version's primitives are filed under its number, the newest's under 0 as well
    // (a request naming no version).
    const bool newest = ring->keys->Versions(id).back() == e;
    auto names = [&](Algorithm alg, absl::string_view variant) {
      std::vector<std::string> out = {KeyringPrimitiveKey(alg, variant, id, e->version)};
      if (newest) out.push_back(KeyringPrimitiveKey(alg, variant, id, 0));
      return out;
    };
    for (Algorithm alg : AllAlgorithms()) {
      if (!FamilyServes(e->family, alg)) continue;
      if (e->is_symmetric) {
        if (IsMacAlgorithm(alg)) Put(&ring->macs, names(alg, ""), NewMac(alg, secret));
        if (IsAeadAlgorithm(alg)) {
          Put(&ring->aeads, names(alg, ""), NewAead(alg, secret, 16));
        }
        continue;
      }
      if (IsSignatureAlgorithm(alg)) {
        Put(&ring->verifiers, names(alg, ""),
            NewPublicKeyVerify(alg, e->public_key_der));
        if (e->is_private) {
          Put(&ring->signers, names(alg, ""), NewPublicKeySign(alg, secret));
        }
      }
      if (IsPublicKeyEncryptionAlgorithm(alg)) {
        std::vector<Sm2CiphertextFormat> formats = {Sm2CiphertextFormat::kC1C3C2};
        if (alg == Algorithm::kSm2) {
          formats.push_back(Sm2CiphertextFormat::kC1C2C3);
          formats.push_back(Sm2CiphertextFormat::kDer);
        }
        for (Sm2CiphertextFormat f : formats) {
          PublicKeyEncryptionOptions o;
          o.sm2_format = f;
          Put(&ring->encrypters, names(alg, FormatVariant(f)),
              NewPublicKeyEncrypt(alg, e->public_key_der, o));
          if (e->is_private) {
            Put(&ring->decrypters, names(alg, FormatVariant(f)),
                NewPublicKeyDecrypt(alg, secret, o));
          }
        }
      }
      if (IsHybridAlgorithm(alg)) {
        Put(&ring->hybrid_encrypters, names(alg, ""),
            NewHybridEncrypt(alg, e->public_key_der));
        if (e->is_private) {
          Put(&ring->hybrid_decrypters, names(alg, ""),
              NewHybridDecrypt(alg, secret));
        }
      }
    }
  }
  return ring;
}

size_t CryptoEngine::Ring::num_primitives() const {
  return signers.size() + verifiers.size() + encrypters.size() + decrypters.size() +
         hybrid_encrypters.size() + hybrid_decrypters.size() + macs.size() + aeads.size();
}

CacheStats CryptoEngine::public_key_cache_stats() const {
  CacheStats total;
  for (CacheStats s : {verifier_cache_.stats(), encrypter_cache_.stats(),
                       hybrid_encrypter_cache_.stats()}) {
    total.size += s.size;
    total.capacity += s.capacity;
    total.hits += s.hits;
    total.misses += s.misses;
  }
  return total;
}

size_t CryptoEngine::keyring_primitives() const { return ring()->num_primitives(); }

void CryptoEngine::Record(Algorithm alg, Operation op, size_t bytes) const {
  if (observer_ != nullptr) observer_->OnBytesProcessed(alg, op, bytes);
}

void CryptoEngine::RecordVerified(Algorithm alg, size_t bytes, bool valid) const {
  Record(alg, IsMacAlgorithm(alg) ? Operation::kMac : Operation::kVerify, bytes);
  if (!valid && observer_ != nullptr) observer_->OnVerifyFailure(alg);
}

// ---- Keys --------------------------------------------------------------------------

// KeyName names a keyring key in messages: "key 'id'", with " version n" when the key
// is versioned (KeyStore) or its version is reported (KeyInput::report_version), so the
// messages of callers of unversioned keys are what they were before versions existed.
namespace {
std::string KeyName(const StoredKey& entry, const KeyInput& key) {
  if (!entry.versioned && !key.report_version) return absl::StrCat("key '", entry.key_id, "'");
  return absl::StrCat("key '", entry.key_id, "' version ", entry.version);
}
}  // namespace

absl::StatusOr<const StoredKey*> CryptoEngine::KeyringEntry(const Ring& ring, Algorithm alg,
                                                            const KeyInput& key) const {
  absl::StatusOr<const StoredKey*> entry = ring.keys->Find(key.value, key.version);
  if (!entry.ok()) return entry.status();
  if (!FamilyServes((*entry)->family, alg)) {
    return WithReason(
        absl::FailedPreconditionError(absl::StrCat(
            // Every family name (SM2, SM4, EC ..., RSA-..., AES-..., HMAC) takes "an".
            KeyName(**entry, key), " is an ", KeyFamilyName((*entry)->family), " key; ",
            AlgorithmName(alg), " needs an ", KeyFamilyName(KeyFamilyForAlgorithm(alg)),
            " key")),
        reason::kWrongKeyFamily,
        {{"key_id", key.value},
         {"key_family", KeyFamilyName((*entry)->family)},
         {"algorithm", AlgorithmName(alg)}});
  }
  return entry;
}

absl::StatusOr<absl::string_view> CryptoEngine::SymmetricKey(const Ring& ring, Algorithm alg,
                                                             const KeyInput& key) const {
  switch (key.kind) {
    case KeyInput::Kind::kNone:
      return absl::InvalidArgumentError("key is required (key_id or inline_key)");
    case KeyInput::Kind::kInline: {
      // The cipher's own check would say the same; this one also names the field and
      // gives the reason INVALID_KEY.
      const size_t size = SymmetricKeySize(alg);
      if (size != 0 && key.value.size() != size) {
        return WithReason(absl::InvalidArgumentError(absl::StrCat(
                              "key.inline_key: ", AlgorithmName(alg), " key size must be ",
                              size, " bytes, got ", key.value.size())),
                          reason::kInvalidKey, {{"field", "key.inline_key"}});
      }
      return key.value;
    }
    case KeyInput::Kind::kKeyId: {
      absl::StatusOr<const StoredKey*> entry = KeyringEntry(ring, alg, key);
      if (!entry.ok()) return entry.status();
      return SecretDataAsStringView((*entry)->material);
    }
  }
  return absl::InternalError("bad key kind");
}

absl::StatusOr<absl::string_view> CryptoEngine::PrivateKey(const Ring& ring, Algorithm alg,
                                                           const KeyInput& key) const {
  switch (key.kind) {
    case KeyInput::Kind::kNone:
      return absl::InvalidArgumentError("key is required (key_id or inline_key)");
    case KeyInput::Kind::kInline:
      if (!options_.allow_inline_private_keys) {
        return WithReason(absl::PermissionDeniedError(
                              "inline private keys are denied on this server "
                              "(--inline_private_keys=deny); use a key_id from the keyring"),
                          reason::kInlinePrivateKeyDenied);
      }
      return key.value;
    case KeyInput::Kind::kKeyId: {
      absl::StatusOr<const StoredKey*> entry = KeyringEntry(ring, alg, key);
      if (!entry.ok()) return entry.status();
      if (!(*entry)->is_private) {
        return WithReason(absl::FailedPreconditionError(absl::StrCat(
                              KeyName(**entry, key),
                              " is a public key; this operation needs a private key")),
                          reason::kPrivateKeyRequired, {{"key_id", key.value}});
      }
      return SecretDataAsStringView((*entry)->material);
    }
  }
  return absl::InternalError("bad key kind");
}

absl::StatusOr<absl::string_view> CryptoEngine::PublicKey(const Ring& ring, Algorithm alg,
                                                          const KeyInput& key) const {
  switch (key.kind) {
    case KeyInput::Kind::kNone:
      return absl::InvalidArgumentError("key is required (key_id or inline_key)");
    case KeyInput::Kind::kInline:
      return key.value;
    case KeyInput::Kind::kKeyId: {
      absl::StatusOr<const StoredKey*> entry = KeyringEntry(ring, alg, key);
      if (!entry.ok()) return entry.status();
      return absl::string_view((*entry)->public_key_der);
    }
  }
  return absl::InternalError("bad key kind");
}

// ---- Hashing -----------------------------------------------------------------------

absl::StatusOr<std::string> CryptoEngine::Hash(Algorithm alg, absl::string_view data) const {
  if (!IsHashAlgorithm(alg)) return WrongAlgorithm(alg, "SM3 or SHA-256");
  absl::StatusOr<std::unique_ptr<smcrypt::Hash>> h = NewHash(alg);
  if (!h.ok()) return h.status();
  (*h)->Update(data);
  Record(alg, Operation::kHash, data.size());
  return (*h)->Finish();
}

absl::StatusOr<std::string> CryptoEngine::Hmac(Algorithm alg, const KeyInput& key,
                                               absl::string_view data) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  if (!IsMacAlgorithm(alg)) return WrongAlgorithm(alg, "HMAC-SM3 or HMAC-SHA-256");
  absl::StatusOr<absl::string_view> k = SymmetricKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const Mac> cached;
  if (key.kind == KeyInput::Kind::kKeyId) cached = FindPrimitive(ring->macs, alg, "", key);
  absl::StatusOr<std::shared_ptr<const Mac>> mac =
      cached != nullptr ? cached : Shared(NewMac(alg, *k));
  if (!mac.ok()) return mac.status();
  absl::StatusOr<std::string> tag = (*mac)->ComputeMac(data);
  if (tag.ok()) Record(alg, Operation::kMac, data.size());
  return tag;
}

absl::StatusOr<bool> CryptoEngine::VerifyHmac(Algorithm alg, const KeyInput& key,
                                              absl::string_view data,
                                              absl::string_view expected) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  if (!IsMacAlgorithm(alg)) return WrongAlgorithm(alg, "HMAC-SM3 or HMAC-SHA-256");
  absl::StatusOr<absl::string_view> k = SymmetricKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const Mac> cached;
  if (key.kind == KeyInput::Kind::kKeyId) cached = FindPrimitive(ring->macs, alg, "", key);
  absl::StatusOr<std::shared_ptr<const Mac>> mac =
      cached != nullptr ? cached : Shared(NewMac(alg, *k));
  if (!mac.ok()) return mac.status();
  absl::StatusOr<bool> equal = VerifyTruncatedMac(**mac, data, expected);
  if (!equal.ok()) return equal.status();
  RecordVerified(alg, data.size(), *equal);
  return *equal;
}

// ---- Signatures --------------------------------------------------------------------

absl::StatusOr<std::shared_ptr<const PublicKeySign>> CryptoEngine::SignerFor(
    const Ring& ring, Algorithm alg, const KeyInput& key, const SignatureOptions& options,
    bool user_id_set) const {
  absl::Status s = CheckSignatureOptions(alg, options, user_id_set);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PrivateKey(ring, alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const PublicKeySign> cached;
  if (key.kind == KeyInput::Kind::kKeyId && IsDefaultSignatureOptions(options)) {
    cached = FindPrimitive(ring.signers, alg, "", key);
  }
  // An inline private key is parsed for this request only and never cached.
  if (cached != nullptr) return cached;
  absl::StatusOr<std::shared_ptr<const PublicKeySign>> signer =
      Shared(NewPublicKeySign(alg, *k, options));
  if (!signer.ok()) return NameInlineKey(ExplainPrivateKeyError(signer.status(), alg, key), key);
  return signer;
}

absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> CryptoEngine::VerifierFor(
    const Ring& ring, Algorithm alg, const KeyInput& key, const SignatureOptions& options,
    bool user_id_set) const {
  absl::Status s = CheckSignatureOptions(alg, options, user_id_set);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PublicKey(ring, alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const PublicKeyVerify> cached;
  if (key.kind == KeyInput::Kind::kKeyId && IsDefaultSignatureOptions(options)) {
    cached = FindPrimitive(ring.verifiers, alg, "", key);
  }
  if (cached != nullptr) return cached;
  absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> verifier =
      CachedPublic(verifier_cache_, PublicCacheKey(alg, SignatureVariant(options), *k),
                   [&] { return NewPublicKeyVerify(alg, *k, options); });
  if (!verifier.ok()) return NameInlineKey(verifier.status(), key);
  return verifier;
}

absl::StatusOr<std::string> CryptoEngine::Sign(Algorithm alg, const KeyInput& key,
                                               absl::string_view data,
                                               const SignatureOptions& options,
                                               bool user_id_set) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  absl::StatusOr<std::shared_ptr<const PublicKeySign>> signer =
      SignerFor(*ring, alg, key, options, user_id_set);
  if (!signer.ok()) return signer.status();
  absl::StatusOr<std::string> sig = (*signer)->Sign(data);
  if (sig.ok()) Record(alg, Operation::kSign, data.size());
  return sig;
}
absl::StatusOr<bool> CryptoEngine::Verify(Algorithm alg, const KeyInput& key,
                                          absl::string_view data, absl::string_view signature,
                                          const SignatureOptions& options,
                                          bool user_id_set) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> verifier =
      VerifierFor(*ring, alg, key, options, user_id_set);
  if (!verifier.ok()) return verifier.status();
  absl::Status v = (*verifier)->Verify(signature, data);
  if (CountsAsVerified(v)) {
    RecordVerified(alg, data.size(), v.ok());
    return v.ok();
  }
  return v;
}

// ---- Symmetric encryption ----------------------------------------------------------

absl::StatusOr<SymmetricCiphertext> CryptoEngine::Encrypt(const SymmetricParams& p,
                                                          absl::string_view plaintext) const {
  return EncryptWith(*ring(), p, plaintext);
}

absl::StatusOr<SymmetricCiphertext> CryptoEngine::EncryptWith(const Ring& ring,
                                                              const SymmetricParams& p,
                                                              absl::string_view plaintext) const {
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> key = SymmetricKey(ring, p.algorithm, p.key);
  if (!key.ok()) return key.status();
  SymmetricCiphertext out;
  if (IsAeadAlgorithm(p.algorithm)) {
    std::shared_ptr<const Aead> cached;
    if (p.key.kind == KeyInput::Kind::kKeyId && (p.tag_length == 0 || p.tag_length == 16)) {
      cached = FindPrimitive(ring.aeads, p.algorithm, "", p.key);
    }
    absl::StatusOr<std::shared_ptr<const Aead>> aead =
        cached != nullptr ? cached : Shared(NewAead(p.algorithm, *key, p.tag_length));
    if (!aead.ok()) return aead.status();
    if (p.nonce.has_value()) {
      out.nonce = std::string(*p.nonce);
    } else {
      absl::StatusOr<std::string> n = RandomString((*aead)->nonce_size());
      if (!n.ok()) return n.status();
      out.nonce = *std::move(n);
    }
    absl::StatusOr<std::string> ct = (*aead)->Seal(out.nonce, plaintext, p.aad);
    if (!ct.ok()) return ct.status();
    const size_t t = (*aead)->tag_size();
    out.tag = ct->substr(ct->size() - t);
    ct->resize(ct->size() - t);
    out.ciphertext = *std::move(ct);
  } else {
    absl::StatusOr<std::unique_ptr<Cipher>> cipher =
        NewCipher(p.algorithm, *key, p.padding.value_or(Padding::kPkcs7));
    if (!cipher.ok()) return cipher.status();
    if (p.nonce.has_value()) {
      out.nonce = std::string(*p.nonce);
    } else {
      absl::StatusOr<std::string> n = RandomString((*cipher)->iv_size());
      if (!n.ok()) return n.status();
      out.nonce = *std::move(n);
    }
    absl::StatusOr<std::string> ct = (*cipher)->Encrypt(out.nonce, plaintext);
    if (!ct.ok()) return ct.status();
    out.ciphertext = *std::move(ct);
  }
  Record(p.algorithm, Operation::kEncrypt, plaintext.size());
  return out;
}

absl::StatusOr<std::string> CryptoEngine::Decrypt(const SymmetricParams& p,
                                                  absl::string_view ciphertext,
                                                  absl::string_view tag) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> key = SymmetricKey(*ring, p.algorithm, p.key);
  if (!key.ok()) return key.status();
  const absl::string_view nonce = p.nonce.value_or("");
  absl::StatusOr<std::string> pt;
  if (IsAeadAlgorithm(p.algorithm)) {
    if (tag.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tag is required for ", AlgorithmName(p.algorithm)));
    }
    std::shared_ptr<const Aead> cached;
    if (p.key.kind == KeyInput::Kind::kKeyId && tag.size() == 16) {
      cached = FindPrimitive(ring->aeads, p.algorithm, "", p.key);
    }
    absl::StatusOr<std::shared_ptr<const Aead>> aead =
        cached != nullptr ? cached : Shared(NewAead(p.algorithm, *key, tag.size()));
    if (!aead.ok()) return aead.status();
    pt = (*aead)->Open(nonce, absl::StrCat(ciphertext, tag), p.aad);
  } else {
    if (!tag.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tag must be empty for ", AlgorithmName(p.algorithm)));
    }
    absl::StatusOr<std::unique_ptr<Cipher>> cipher =
        NewCipher(p.algorithm, *key, p.padding.value_or(Padding::kPkcs7));
    if (!cipher.ok()) return cipher.status();
    pt = (*cipher)->Decrypt(nonce, ciphertext);
  }
  if (pt.ok()) Record(p.algorithm, Operation::kDecrypt, ciphertext.size());
  RecordDecryptResult(observer_, p.algorithm, pt.status());
  return pt;
}

// ---- Public-key encryption ---------------------------------------------------------

absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> CryptoEngine::EncrypterFor(
    const Ring& ring, Algorithm alg, const KeyInput& key, Sm2CiphertextFormat format) const {
  if (!IsPublicKeyEncryptionAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, RSA-2048-OAEP or RSA-3072-OAEP");
  }
  absl::StatusOr<absl::string_view> k = PublicKey(ring, alg, key);
  if (!k.ok()) return k.status();
  PublicKeyEncryptionOptions options;
  options.sm2_format = format;
  if (key.kind == KeyInput::Kind::kKeyId) {
    std::shared_ptr<const smcrypt::PublicKeyEncrypt> cached =
        FindPrimitive(ring.encrypters, alg, FormatVariant(format), key);
    if (cached != nullptr) return cached;
  }
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> enc =
      CachedPublic(encrypter_cache_, PublicCacheKey(alg, FormatVariant(format), *k),
                   [&] { return NewPublicKeyEncrypt(alg, *k, options); });
  if (!enc.ok()) return NameInlineKey(enc.status(), key);
  return enc;
}

absl::StatusOr<std::string> CryptoEngine::PublicKeyEncrypt(Algorithm alg, const KeyInput& key,
                                                           absl::string_view plaintext,
                                                           Sm2CiphertextFormat format) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> enc =
      EncrypterFor(*ring, alg, key, format);
  if (!enc.ok()) return enc.status();
  absl::StatusOr<std::string> ct = (*enc)->Encrypt(plaintext);
  if (ct.ok()) Record(alg, Operation::kEncrypt, plaintext.size());
  return ct;
}

absl::StatusOr<std::string> CryptoEngine::PublicKeyDecrypt(Algorithm alg, const KeyInput& key,
                                                           absl::string_view ciphertext,
                                                           Sm2CiphertextFormat format) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  if (!IsPublicKeyEncryptionAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, RSA-2048-OAEP or RSA-3072-OAEP");
  }
  absl::StatusOr<absl::string_view> k = PrivateKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  PublicKeyEncryptionOptions options;
  options.sm2_format = format;
  std::shared_ptr<const smcrypt::PublicKeyDecrypt> cached;
  if (key.kind == KeyInput::Kind::kKeyId) {
    cached = FindPrimitive(ring->decrypters, alg, FormatVariant(format), key);
  }
  // An inline private key is parsed for this request only and never cached.
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyDecrypt>> dec =
      cached != nullptr ? cached : Shared(NewPublicKeyDecrypt(alg, *k, options));
  if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, key), key);
  absl::StatusOr<std::string> pt = (*dec)->Decrypt(ciphertext);
  if (pt.ok()) Record(alg, Operation::kDecrypt, ciphertext.size());
  RecordDecryptResult(observer_, alg, pt.status());
  return pt;
}

// ---- Hybrid encryption -------------------------------------------------------------

absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> CryptoEngine::HybridEncrypterFor(
    const Ring& ring, Algorithm alg, const KeyInput& key) const {
  absl::Status s = CheckHybridAlgorithm(alg);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PublicKey(ring, alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const smcrypt::HybridEncrypt> cached;
  if (key.kind == KeyInput::Kind::kKeyId) {
    cached = FindPrimitive(ring.hybrid_encrypters, alg, "", key);
  }
  if (cached != nullptr) return cached;
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> enc =
      CachedPublic(hybrid_encrypter_cache_, PublicCacheKey(alg, "", *k),
                   [&] { return NewHybridEncrypt(alg, *k); });
  if (!enc.ok()) return NameInlineKey(enc.status(), key);
  return enc;
}

absl::StatusOr<std::string> CryptoEngine::HybridEncrypt(Algorithm alg, const KeyInput& key,
                                                        absl::string_view plaintext,
                                                        absl::string_view info) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> enc = HybridEncrypterFor(*ring, alg, key);
  if (!enc.ok()) return enc.status();
  absl::StatusOr<std::string> ct = (*enc)->Encrypt(plaintext, info);
  if (ct.ok()) Record(alg, Operation::kEncrypt, plaintext.size());
  return ct;
}

absl::StatusOr<std::string> CryptoEngine::HybridDecrypt(Algorithm alg, const KeyInput& key,
                                                        absl::string_view ciphertext,
                                                        absl::string_view info) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  absl::Status s = CheckHybridAlgorithm(alg);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PrivateKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const smcrypt::HybridDecrypt> cached;
  if (key.kind == KeyInput::Kind::kKeyId) {
    cached = FindPrimitive(ring->hybrid_decrypters, alg, "", key);
  }
  // An inline private key is parsed for this request only and never cached.
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridDecrypt>> dec =
      cached != nullptr ? cached : Shared(NewHybridDecrypt(alg, *k));
  if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, key), key);
  absl::StatusOr<std::string> pt = (*dec)->Decrypt(ciphertext, info);
  if (pt.ok()) Record(alg, Operation::kDecrypt, ciphertext.size());
  RecordDecryptResult(observer_, alg, pt.status());
  return pt;
}

// ---- Keys, randomness --------------------------------------------------------------

absl::StatusOr<GeneratedKeyPair> CryptoEngine::GenerateKeyPair(Algorithm alg,
                                                               bool omit_private_key) const {
  if (!IsSignatureAlgorithm(alg) && !IsPublicKeyEncryptionAlgorithm(alg) &&
      !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "a public-key algorithm (SM2, ECDSA-*, RSA-*, HPKE-*)");
  }
  absl::StatusOr<KeyPair> pair = smcrypt::GenerateKeyPair(alg);
  if (!pair.ok()) return pair.status();
  GeneratedKeyPair out;
  out.public_key_der = std::move(pair->public_key_der);
  if (!options_.allow_inline_private_keys) {
    out.private_key_withheld = true;
  } else if (!omit_private_key) {
    out.private_key_der = std::move(pair->private_key_der);
  }
  return out;
}

absl::StatusOr<std::string> CryptoEngine::GetPublicKey(Algorithm alg, const KeyInput& key) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  if (!IsSignatureAlgorithm(alg) && !IsPublicKeyEncryptionAlgorithm(alg) &&
      !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "a public-key algorithm (SM2, ECDSA-*, RSA-*, HPKE-*)");
  }
  if (key.kind == KeyInput::Kind::kKeyId) {
    absl::StatusOr<const StoredKey*> entry = KeyringEntry(*ring, alg, key);
    if (!entry.ok()) return entry.status();
    return (*entry)->public_key_der;
  }
  absl::StatusOr<absl::string_view> k = PrivateKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  absl::StatusOr<std::string> pub = PublicKeyFromPrivate(alg, *k);
  if (!pub.ok()) return NameInlineKey(ExplainPrivateKeyError(pub.status(), alg, key), key);
  return pub;
}

absl::StatusOr<std::vector<std::pair<uint32_t, std::string>>> CryptoEngine::PublicKeyVersions(
    Algorithm alg, const KeyInput& key) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  std::vector<std::pair<uint32_t, std::string>> out;
  if (key.kind != KeyInput::Kind::kKeyId) return out;
  if (!IsSignatureAlgorithm(alg) && !IsPublicKeyEncryptionAlgorithm(alg) &&
      !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "a public-key algorithm (SM2, ECDSA-*, RSA-*, HPKE-*)");
  }
  // The newest version answers the family check (all versions are of one family).
  absl::StatusOr<const StoredKey*> newest = KeyringEntry(*ring, alg, KeyInput::Id(key.value));
  if (!newest.ok()) return newest.status();
  for (const StoredKey* e : ring->keys->Versions(key.value)) {
    out.emplace_back(e->version, e->public_key_der);
  }
  return out;
}

absl::StatusOr<std::string> CryptoEngine::GenerateRandom(size_t length) const {
  if (length == 0 || length > kMaxRandomBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("length must be 1 to ", kMaxRandomBytes, " bytes, got ", length));
  }
  return RandomString(length);
}

}  // namespace smcrypt::server
