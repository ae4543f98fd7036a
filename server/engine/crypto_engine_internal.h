// crypto_engine_internal.h — helpers shared by the CryptoEngine's source files
// (crypto_engine.cc, crypto_engine_public_key.cc, crypto_engine_batch.cc,
// crypto_engine_stream.cc; defined in crypto_engine_internal.cc). Not for other users.
#ifndef SMCRYPT_SERVER_CRYPTO_ENGINE_INTERNAL_H_
#define SMCRYPT_SERVER_CRYPTO_ENGINE_INTERNAL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/primitive_cache.h"

namespace smcrypt::server {

template <typename T>
using PrimitiveMap = absl::flat_hash_map<std::string, std::shared_ptr<const T>>;

// Keyring (CryptoEngine::Ring): the KeyStore and the primitives built from its keys, keyed by
// KeyringPrimitiveKey(algorithm, variant, key_id, version); each key's primary version
// also under version 0. Immutable once built.
struct Keyring {
  // Build parses every key of `keys` into the primitives its algorithms use (a key a
  // factory refuses is left out; requests using it get the factory's error).
  static std::shared_ptr<const Keyring> Build(std::shared_ptr<const KeyStore> keys);
  size_t num_primitives() const;

  std::shared_ptr<const KeyStore> keys;
  PrimitiveMap<PublicKeySign> signers;
  PrimitiveMap<PublicKeyVerify> verifiers;
  PrimitiveMap<smcrypt::PublicKeyEncrypt> encrypters;
  PrimitiveMap<smcrypt::PublicKeyDecrypt> decrypters;
  PrimitiveMap<smcrypt::HybridEncrypt> hybrid_encrypters;
  PrimitiveMap<smcrypt::HybridDecrypt> hybrid_decrypters;
  PrimitiveMap<Mac> macs;
  PrimitiveMap<Aead> aeads;  // 16-byte tags
};

}  // namespace smcrypt::server

namespace smcrypt::server::engine_internal {

// WrongAlgorithm: InvalidArgument "algorithm <alg> cannot be used here: expected <what>".
absl::Status WrongAlgorithm(Algorithm alg, absl::string_view what);

// ExplainPrivateKeyError turns the parse error of an inline private key that is in
// fact a public key into FailedPrecondition saying so (as for a keyring public key).
// Only called after parsing failed, so a valid key is never examined here.
absl::Status ExplainPrivateKeyError(absl::Status s, Algorithm alg, const KeyInput& key);

// NameInlineKey prefixes "key.inline_key: " to the InvalidArgument a factory returns for
// an inline asymmetric key (the algorithm and options are checked before the factory
// runs, so that error is about the key bytes), so the caller sees which field it was.
absl::Status NameInlineKey(absl::Status s, const KeyInput& key);

// CheckSignatureOptions / CheckSymmetricParams / CheckHybridAlgorithm: the request's
// algorithm and options, before any key is resolved (InvalidArgument).
absl::Status CheckSignatureOptions(Algorithm alg, const SignatureOptions& options,
                                   bool user_id_set);
absl::Status CheckSymmetricParams(const SymmetricParams& p);
absl::Status CheckHybridAlgorithm(Algorithm alg);

// KeyringPrimitiveKey names a keyring primitive: algorithm, variant (the SM2 ciphertext
// format, or empty), key_id (key_ids hold no '|') and version (0: the primary).
std::string KeyringPrimitiveKey(Algorithm alg, absl::string_view variant,
                                absl::string_view key_id, uint32_t version);
// PublicCacheKey is the LRU key of a primitive parsed from public key bytes: algorithm,
// the length-prefixed options that shape the primitive, then the exact key bytes.
std::string PublicCacheKey(Algorithm alg, absl::string_view variant, absl::string_view key);
std::string SignatureVariant(const SignatureOptions& o);
std::string FormatVariant(Sm2CiphertextFormat f);
bool IsDefaultSignatureOptions(const SignatureOptions& o);

// Verify's mapping: OK → true, Unauthenticated (a wrong signature) → false, else the error.
inline bool CountsAsVerified(const absl::Status& v) {
  return v.ok() || v.code() == absl::StatusCode::kUnauthenticated;
}

// IsDecryptionFailure: the single error every authentication failure of a decryption is
// reported with (InvalidArgument "decryption failed", smcrypt/primitives/aead.h), or
// VersionsFailed's after trying several key versions.
bool IsDecryptionFailure(const absl::Status& s);

// VersionsFailed: a decryption that failed under every version of `tried` (more than
// one) of key `key_id`: InvalidArgument "decryption failed (tried key '<id>' versions 3,
// 2, 1)", reason DECRYPTION_FAILED, metadata key_id and key_versions_tried ("3,2,1").
absl::Status VersionsFailed(absl::string_view key_id, absl::Span<const uint32_t> tried);

// NoteTrial records in `*trial` (may be null) and `observer` (may be null) a finished
// check that tried `t` (CryptoEngine::EndTrial, and the decrypting streams).
void NoteTrial(EngineObserver* observer, Operation op, KeyTrial* trial, const KeyTrial& t,
               bool authenticated);

// TryKeys runs attempt(k) → R for each k of `keys` (CryptoEngine::TrialKeys, not empty)
// in order until one's result is not an authentication failure (`failed(result)`),
// recording in `t` each version tried and the one whose result is OK and not failed.
// Returns that result, or the last failure.
template <typename R, typename Attempt, typename Failed>
R TryKeys(const std::vector<KeyInput>& keys, KeyTrial* t, const Attempt& attempt,
          const Failed& failed) {
  std::optional<R> r;
  for (const KeyInput& k : keys) {
    r.emplace(attempt(k));
    t->tried.push_back(k.version);
    if (!failed(*r)) {
      if (r->ok()) t->version = k.version;
      break;
    }
  }
  return *std::move(r);
}

// RecordDecryptResult tells `observer` (may be null) when `s` is a failed decryption.
inline void RecordDecryptResult(EngineObserver* observer, Algorithm alg, const absl::Status& s) {
  if (observer != nullptr && IsDecryptionFailure(s)) observer->OnDecryptFailure(alg);
}

template <typename T>
std::shared_ptr<const T> FindPrimitive(
    const absl::flat_hash_map<std::string, std::shared_ptr<const T>>& map, Algorithm alg,
    absl::string_view variant, const KeyInput& key) {
  if (map.empty()) return nullptr;
  auto it = map.find(KeyringPrimitiveKey(alg, variant, key.value, key.version));
  return it == map.end() ? nullptr : it->second;
}

// KeyedPrimitive is how a call gets the primitive of its key, once its key bytes are
// resolved: for a keyring key, when `filed_fits` (the request's options are the ones the
// keyring's primitives were built with), the primitive filed in the call's keyring under
// (`alg`, `variant`, key_id, version); otherwise, or when none is filed (a factory refused
// the key when the keyring was built), `build()`: the key bytes parsed for this call, or
// the LRU of primitives parsed from public keys (CachedPublic).
template <typename T, typename Build>
absl::StatusOr<std::shared_ptr<const T>> KeyedPrimitive(const PrimitiveMap<T>& filed,
                                                        Algorithm alg,
                                                        absl::string_view variant,
                                                        const KeyInput& key, bool filed_fits,
                                                        Build build) {
  if (filed_fits && key.kind == KeyInput::Kind::kKeyId) {
    if (std::shared_ptr<const T> p = FindPrimitive(filed, alg, variant, key)) return p;
  }
  return build();
}

// Shared wraps a factory's result for use beside cached primitives.
template <typename T>
absl::StatusOr<std::shared_ptr<const T>> Shared(absl::StatusOr<std::unique_ptr<T>> p) {
  if (!p.ok()) return p.status();
  return std::shared_ptr<const T>(*std::move(p));
}

// CachedPublic returns the primitive cached under `key`, or builds, caches and returns it.
// Only primitives built from public key material may go through here.
template <typename T, typename Build>
absl::StatusOr<std::shared_ptr<const T>> CachedPublic(LruCache<T>& cache, const std::string& key,
                                                      Build build) {
  if (std::shared_ptr<const T> hit = cache.Find(key)) return hit;
  absl::StatusOr<std::shared_ptr<const T>> built = Shared(build());
  if (built.ok()) cache.Insert(key, *built);
  return built;
}

}  // namespace smcrypt::server::engine_internal

#endif  // SMCRYPT_SERVER_CRYPTO_ENGINE_INTERNAL_H_
