#include "server/engine/crypto_engine.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/engine/crypto_engine_internal.h"
#include "server/engine/error_reason.h"
#include "smcrypt/random.h"

namespace smcrypt::server {

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
using engine_internal::KeyedPrimitive;
using engine_internal::Shared;
using engine_internal::CachedPublic;
using engine_internal::IsDecryptionFailure;
using engine_internal::TryKeys;
using engine_internal::VersionsFailed;

namespace {

// Put files one primitive under each of `names` (a version, and 0 for the primary).
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

std::shared_ptr<const Keyring> CryptoEngine::keyring() const { return ring(); }

void CryptoEngine::Resolve(KeyInput* key, std::shared_ptr<const Keyring> keyring) const {
  if (key->kind != KeyInput::Kind::kKeyId || key->keyring != nullptr) return;
  key->keyring = keyring != nullptr ? std::move(keyring) : ring();
  key->entry = key->keyring->keys->Find(key->value, key->version);
}

std::shared_ptr<const CryptoEngine::Ring> CryptoEngine::RingFor(const KeyInput& key) const {
  return key.keyring != nullptr ? key.keyring : ring();
}

size_t CryptoEngine::keyring_size() const { return ring()->keys->size(); }

std::shared_ptr<const Keyring> Keyring::Build(
    std::shared_ptr<const KeyStore> keys) {
  auto ring = std::make_shared<Keyring>();
  ring->keys = std::move(keys);
  for (const StoredKey* e : ring->keys->entries()) {
    const absl::string_view secret = SecretDataAsStringView(e->material);
    const absl::string_view id = e->key_id;
    // A version's primitives are filed under its number, the primary's under 0 as well
    // (a request naming no version).
    const bool primary = ring->keys->PrimaryVersion(id) == e->version;
    auto names = [&](Algorithm alg, absl::string_view variant) {
      std::vector<std::string> out = {KeyringPrimitiveKey(alg, variant, id, e->version)};
      if (primary) out.push_back(KeyringPrimitiveKey(alg, variant, id, 0));
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

size_t Keyring::num_primitives() const {
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
  // A key resolved for its call (CryptoEngine::Resolve) is not looked up again.
  absl::StatusOr<const StoredKey*> entry =
      key.keyring != nullptr ? key.entry : ring.keys->Find(key.value, key.version);
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
  const std::shared_ptr<const Ring> ring = RingFor(key);
  if (!IsMacAlgorithm(alg)) return WrongAlgorithm(alg, "HMAC-SM3 or HMAC-SHA-256");
  absl::StatusOr<absl::string_view> k = SymmetricKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  absl::StatusOr<std::shared_ptr<const Mac>> mac = KeyedPrimitive(
      ring->macs, alg, "", key, /*filed_fits=*/true, [&] { return Shared(NewMac(alg, *k)); });
  if (!mac.ok()) return mac.status();
  absl::StatusOr<std::string> tag = (*mac)->ComputeMac(data);
  if (tag.ok()) Record(alg, Operation::kMac, data.size());
  return tag;
}

absl::StatusOr<bool> CryptoEngine::VerifyHmac(Algorithm alg, const KeyInput& key,
                                              absl::string_view data,
                                              absl::string_view expected) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
  if (!IsMacAlgorithm(alg)) return WrongAlgorithm(alg, "HMAC-SM3 or HMAC-SHA-256");
  const std::vector<KeyInput> keys = TrialKeys(*ring, key);
  // Each version of the key in turn (TrialKeys: one unless the request named none); the
  // MACs checked are 16 bytes or more.
  KeyTrial t;
  absl::StatusOr<bool> equal = TryKeys<absl::StatusOr<bool>>(
      keys, &t,
      [&](const KeyInput& k) -> absl::StatusOr<bool> {
        absl::StatusOr<absl::string_view> kb = SymmetricKey(*ring, alg, k);
        if (!kb.ok()) return kb.status();
        absl::StatusOr<std::shared_ptr<const Mac>> mac = KeyedPrimitive(
            ring->macs, alg, "", k, /*filed_fits=*/true, [&] { return Shared(NewMac(alg, *kb)); });
        if (!mac.ok()) return mac.status();
        return VerifyTruncatedMac(**mac, data, expected);
      },
      [](const absl::StatusOr<bool>& r) { return r.ok() && !*r; });
  if (!equal.ok()) return equal.status();
  EndTrial(Operation::kMac, key, t, *equal);
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
  // An inline private key is parsed for this request only and never cached.
  absl::StatusOr<std::shared_ptr<const PublicKeySign>> signer =
      KeyedPrimitive(ring.signers, alg, "", key, IsDefaultSignatureOptions(options),
                     [&] { return Shared(NewPublicKeySign(alg, *k, options)); });
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
  absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> verifier =
      KeyedPrimitive(ring.verifiers, alg, "", key, IsDefaultSignatureOptions(options), [&] {
        return CachedPublic(verifier_cache_, PublicCacheKey(alg, SignatureVariant(options), *k),
                            [&] { return NewPublicKeyVerify(alg, *k, options); });
      });
  if (!verifier.ok()) return NameInlineKey(verifier.status(), key);
  return verifier;
}

absl::StatusOr<std::string> CryptoEngine::Sign(Algorithm alg, const KeyInput& key,
                                               absl::string_view data,
                                               const SignatureOptions& options,
                                               bool user_id_set) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
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
  const std::shared_ptr<const Ring> ring = RingFor(key);
  const std::vector<KeyInput> keys = TrialKeys(*ring, key);
  // Each version of the key in turn (TrialKeys: one unless the request named none).
  KeyTrial t;
  absl::StatusOr<bool> valid = TryKeys<absl::StatusOr<bool>>(
      keys, &t,
      [&](const KeyInput& k) -> absl::StatusOr<bool> {
        absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> verifier =
            VerifierFor(*ring, alg, k, options, user_id_set);
        if (!verifier.ok()) return verifier.status();
        absl::Status v = (*verifier)->Verify(signature, data);
        if (!CountsAsVerified(v)) return v;
        return v.ok();
      },
      [](const absl::StatusOr<bool>& r) { return r.ok() && !*r; });
  if (!valid.ok()) return valid.status();
  EndTrial(Operation::kVerify, key, t, *valid);
  RecordVerified(alg, data.size(), *valid);
  return *valid;
}

// ---- Symmetric encryption ----------------------------------------------------------

absl::StatusOr<SymmetricCiphertext> CryptoEngine::Encrypt(const SymmetricParams& p,
                                                          absl::string_view plaintext) const {
  return EncryptWith(*RingFor(p.key), p, plaintext);
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
    absl::StatusOr<std::shared_ptr<const Aead>> aead = KeyedPrimitive(
        ring.aeads, p.algorithm, "", p.key, p.tag_length == 0 || p.tag_length == 16,
        [&] { return Shared(NewAead(p.algorithm, *key, p.tag_length)); });
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
  const std::shared_ptr<const Ring> ring = RingFor(p.key);
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  // The primary's errors (unknown key, wrong family) answer before any version is tried.
  const std::vector<KeyInput> keys = TrialKeys(*ring, p.key);
  absl::StatusOr<absl::string_view> key = SymmetricKey(*ring, p.algorithm, keys[0]);
  if (!key.ok()) return key.status();
  const absl::string_view nonce = p.nonce.value_or("");
  absl::StatusOr<std::string> pt;
  if (IsAeadAlgorithm(p.algorithm)) {
    if (tag.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tag is required for ", AlgorithmName(p.algorithm)));
    }
    if (tag.size() < kMinTrialTagSize) {
      s = RequireOneVersion(*ring, p.key,
                            absl::StrCat("a ", tag.size(), "-byte tag is under ",
                                         kMinTrialTagSize, " bytes"));
      if (!s.ok()) return s;
    }
    // Each version of the key in turn (TrialKeys: one unless the request named none).
    KeyTrial t;
    pt = TryKeys<absl::StatusOr<std::string>>(
        keys, &t,
        [&](const KeyInput& k) -> absl::StatusOr<std::string> {
          absl::StatusOr<absl::string_view> kb = SymmetricKey(*ring, p.algorithm, k);
          if (!kb.ok()) return kb.status();
          absl::StatusOr<std::shared_ptr<const Aead>> aead =
              KeyedPrimitive(ring->aeads, p.algorithm, "", k, tag.size() == 16,
                             [&] { return Shared(NewAead(p.algorithm, *kb, tag.size())); });
          if (!aead.ok()) return aead.status();
          return (*aead)->OpenDetached(nonce, ciphertext, tag, p.aad);
        },
        [](const absl::StatusOr<std::string>& r) { return IsDecryptionFailure(r.status()); });
    EndTrial(Operation::kDecrypt, p.key, t, pt.ok());
    if (t.tried.size() > 1 && IsDecryptionFailure(pt.status())) {
      pt = VersionsFailed(p.key.value, t.tried);
    }
  } else {
    if (!tag.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tag must be empty for ", AlgorithmName(p.algorithm)));
    }
    s = RequireOneVersion(*ring, p.key,
                          absl::StrCat(AlgorithmName(p.algorithm), " is unauthenticated"));
    if (!s.ok()) return s;
    absl::StatusOr<std::unique_ptr<Cipher>> cipher =
        NewCipher(p.algorithm, *key, p.padding.value_or(Padding::kPkcs7));
    if (!cipher.ok()) return cipher.status();
    pt = (*cipher)->Decrypt(nonce, ciphertext);
  }
  if (pt.ok()) Record(p.algorithm, Operation::kDecrypt, ciphertext.size());
  RecordDecryptResult(observer_, p.algorithm, pt.status());
  return pt;
}

}  // namespace smcrypt::server
