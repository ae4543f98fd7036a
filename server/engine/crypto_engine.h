// crypto_engine.h — smcryptd's business logic, with no gRPC or protobuf types.
//
// CryptoEngine resolves keys (keyring or inline, under the inline-private-key policy),
// checks each request's parameters against its algorithm, calls the crypto core
// (smcrypt/registry.h) and reports the bytes it processed. The gRPC service only
// translates messages and statuses (docs/contributing.md, "House style").
//
// Status meanings (docs/service.md "Errors"): InvalidArgument for malformed input, with the
// field and the expected and actual values; NotFound for an unknown key_id;
// FailedPrecondition for a key of another algorithm family; PermissionDenied for an
// inline private key under --inline_private_keys=deny; InvalidArgument "decryption
// failed" for every authentication failure. A signature that does not verify is not an
// error: Verify returns false.
//
// Thread safety: all methods may run concurrently (SetKeyStore too). Stream objects
// are used by one RPC at a time.
#ifndef SMCRYPT_SERVER_CRYPTO_ENGINE_H_
#define SMCRYPT_SERVER_CRYPTO_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/engine/key_store.h"
#include "server/engine/primitive_cache.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/primitives/cipher.h"
#include "smcrypt/registry.h"
#include "smcrypt/secret_data.h"
#include "smcrypt/sm2_key_exchange.h"
#include "smcrypt/streaming.h"

namespace smcrypt::server {

// Operation is the `operation` label of smcrypt_bytes_processed_total.
enum class Operation { kHash, kMac, kSign, kVerify, kEncrypt, kDecrypt };
inline constexpr int kNumOperations = 6;
absl::string_view OperationName(Operation op);  // "hash", "mac", "sign", ...

// EngineObserver receives the number of input bytes of each completed operation, and
// each decryption that failed authentication and each signature or MAC that did not
// verify (the metrics layer implements it). Must be thread-safe.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void OnBytesProcessed(Algorithm alg, Operation op, uint64_t bytes) = 0;
  // OnDecryptFailure: Decrypt, PublicKeyDecrypt, HybridDecrypt or a decrypting stream
  // returned InvalidArgument "decryption failed" (the one error of every authentication
  // or padding failure); malformed requests are not counted.
  virtual void OnDecryptFailure(Algorithm alg) { (void)alg; }
  // OnVerifyFailure: Verify, a VerifyBatch item or VerifyHmac answered false.
  virtual void OnVerifyFailure(Algorithm alg) { (void)alg; }
  // OnKeyVersionTrials: a check (`op`: kDecrypt, kVerify or kMac) with a keyring key named
  // without a version tried `extra` versions beyond the first (KeyTrial); `authenticated`:
  // one of them authenticated. Not called when only one version was tried.
  virtual void OnKeyVersionTrials(Operation op, bool authenticated, uint32_t extra) {
    (void)op, (void)authenticated, (void)extra;
  }
};

// kMaxTrialVersions: the most versions of one key a check tries (crypto.proto, KeyRef
// "Key versions"; docs/keys.md, "Versions"): the primary and the 15 newest others.
inline constexpr size_t kMaxTrialVersions = 16;
// kMinTrialTagSize: the shortest GCM/CCM tag a check tries under several versions; a
// shorter one needs a named version (each version tried adds a forger's chance of
// 2^-(8 × tag bytes); docs/keys.md, "Versions").
inline constexpr size_t kMinTrialTagSize = 12;

// KeyTrial is what a check with a keyring key named without a version did: the versions
// it tried, in order (the primary first, then the other retained versions newest first),
// and the one that authenticated (0: none did, or the call failed before a check).
struct KeyTrial {
  std::vector<uint32_t> tried;
  uint32_t version = 0;
  // version_required: the check refused to pick a version (KEY_VERSION_REQUIRED), so no
  // version was used.
  bool version_required = false;
};

// Keyring is one immutable keyring: the KeyStore with the primitives built from its keys
// (crypto_engine_internal.h). CryptoEngine::SetKeyStore replaces the current one; a call
// keeps the one it started with (CryptoEngine, "Keyring replacement").
struct Keyring;

// KeyInput is a request's KeyRef: nothing, a keyring key_id (with a version: 0 is the
// key's primary), or inline key bytes. The views must outlive the call.
struct KeyInput {
  enum class Kind { kNone, kKeyId, kInline };
  Kind kind = Kind::kNone;
  absl::string_view value;
  uint32_t version = 0;  // kKeyId only (KeyStore::Find)
  // report_version: the service reports `version` in its response (crypto.proto, KeyRef
  // "Key versions"); set by the service when it fixes the version. The engine's error
  // messages name the version of a key that is versioned or whose version is reported.
  bool report_version = false;
  // keyring / entry: set once per call by CryptoEngine::Resolve (kKeyId only): the
  // keyring the whole call uses, and the entry of `value` at `version` in it, or
  // KeyStore::Find's error. Every later step (access-policy audit, version, engine,
  // response) reads these instead of looking the key up again. A null `keyring`: the
  // engine resolves the key in its current keyring when the call starts.
  std::shared_ptr<const Keyring> keyring;
  absl::StatusOr<const StoredKey*> entry = absl::FailedPreconditionError("key not resolved");
  // trial: set (by the service, when the request names no version) to make the checks
  // that authenticate (Decrypt with GCM/CCM, PublicKeyDecrypt, HybridDecrypt, Verify,
  // VerifyHmac, the decrypting streams) try every retained version of the key, the
  // primary (`version`, or Find's version 0) first, and record in *trial what they tried;
  // unauthenticated modes then need the key to have one retained version
  // (FailedPrecondition KEY_VERSION_REQUIRED). Null: only `version` is used. Shared by the
  // copies of this input; one call writes it, and reads it after the engine returns.
  std::shared_ptr<KeyTrial> trial;

  static KeyInput Id(absl::string_view id, uint32_t version = 0) {
    KeyInput k;
    k.kind = Kind::kKeyId;
    k.value = id;
    k.version = version;
    return k;
  }
  static KeyInput Inline(absl::string_view bytes) {
    KeyInput k;
    k.kind = Kind::kInline;
    k.value = bytes;
    return k;
  }
};

struct EngineOptions {
  // allow_inline_private_keys: --inline_private_keys=allow (true, the default) or deny.
  bool allow_inline_private_keys = true;
  // public_key_cache_size: entries of each LRU of primitives parsed from public keys
  // (verifiers, public-key encrypters, hybrid encrypters; primitive_cache.h). 0 disables.
  size_t public_key_cache_size = 1024;
};

// kMaxBatchedHashSize: the largest SM3 message of a unary Hash that is batched with
// concurrent ones (dynamic_batcher.h); longer ones gain nothing from the SM3 lanes.
inline constexpr size_t kMaxBatchedHashSize = 4096;

// SymmetricParams: the parameters of Encrypt/Decrypt and their streams.
struct SymmetricParams {
  Algorithm algorithm = Algorithm::kSm4Gcm;
  KeyInput key;
  // nonce: absent → drawn from the CSPRNG (encryption only).
  std::optional<absl::string_view> nonce;
  absl::string_view aad;
  // tag_length: 0 → 16. AEAD only.
  uint32_t tag_length = 0;
  // padding: absent → PKCS#7. ECB/CBC only.
  std::optional<Padding> padding;
};

// SymmetricCiphertext: what Encrypt returns, with the tag apart from the ciphertext.
struct SymmetricCiphertext {
  std::string nonce;
  std::string ciphertext;
  std::string tag;
};

// Symmetric streams (EncryptStream / DecryptStream) are the library's
// (smcrypt/streaming.h): block modes give the one-shot ciphertext; GCM/CCM give one
// sealed segment per non-empty chunk, STREAM construction.
using smcrypt::StreamChunk;
using smcrypt::StreamDecryptor;
using smcrypt::StreamEncryptor;

// HashStream hashes data of any size.
class HashStream {
 public:
  virtual ~HashStream() = default;
  virtual void Update(absl::string_view data) = 0;
  virtual std::string Finish() = 0;
};

// GeneratedKeyPair: DER keys; private_key_der is empty when withheld or omitted.
struct GeneratedKeyPair {
  SecretData private_key_der;
  std::string public_key_der;
  bool private_key_withheld = false;
};

// ---- Hybrid encryption (HPKE, RFC 9180 base mode; smcrypt/hpke.h) --------------------
//
// HybridEncrypt/HybridDecrypt use the one-shot wire format of smcrypt/hpke.h:
// header (7 bytes: version 0x01, kem_id, kdf_id, aead_id) ‖ enc (65) ‖ ct ‖ tag (16),
// sealed at sequence number 0 with the header as aad. The hybrid streams use the HPKE
// stream framing of smcrypt/streaming.h (HpkeStreamEncryptor / HpkeStreamDecryptor):
// one context per stream, one flagged, length-prefixed chunk per message.
struct HybridStreamParams {
  Algorithm algorithm = Algorithm::kHpkeSm2Sm3Sm4Gcm;
  KeyInput key;
  absl::string_view info;
  absl::string_view aad;
};

inline constexpr size_t kHybridMaxChunkSize = kHpkeStreamMaxChunkSize;  // plaintext bytes
inline constexpr uint64_t kHybridMaxChunks = kHpkeStreamMaxChunks;       // final chunk included

// HybridStreamEncryptor seals a stream chunk by chunk.
class HybridStreamEncryptor {
 public:
  virtual ~HybridStreamEncryptor() = default;
  // prefix, Update and Finish are smcrypt::HpkeStreamEncryptor's.
  virtual absl::string_view prefix() const = 0;
  virtual absl::StatusOr<std::string> Update(absl::string_view plaintext) = 0;
  virtual absl::StatusOr<std::string> Finish() = 0;
};

// HybridStreamDecryptor opens a stream given in pieces of any size; Update and Finish
// (contracts and errors) are smcrypt::HpkeStreamDecryptor's.
class HybridStreamDecryptor {
 public:
  virtual ~HybridStreamDecryptor() = default;
  virtual absl::StatusOr<std::string> Update(absl::string_view data) = 0;
  virtual absl::Status Finish() = 0;
  // buffered_size: the bytes given to Update that have not completed a chunk yet (each
  // version's decryptor keeps a copy while the stream still tries versions).
  virtual uint64_t buffered_size() const = 0;
};

// ---- SM2 key exchange (GB/T 32918.3-2016 §6; smcrypt/sm2_key_exchange.h) -------------
//
// KeyExchangeInput: the caller's side of one exchange. `params` carries the role, both
// IDs, klen and whether confirmation is used.
struct KeyExchangeInput {
  Algorithm algorithm = Algorithm::kSm2;
  KeyInput key;       // own long-term SM2 private key
  KeyInput peer_key;  // the peer's long-term SM2 public key
  Sm2KeyExchangeParams params;
};

// HashItem is one HashBatch item.
struct HashItem {
  Algorithm algorithm;
  absl::string_view data;
};

// SignItem / VerifyItem: one SignBatch / VerifyBatch item, the arguments of Sign / Verify.
struct SignItem {
  Algorithm algorithm;
  KeyInput key;
  absl::string_view data;
  SignatureOptions options;
  bool user_id_set = false;
};
struct VerifyItem {
  Algorithm algorithm;
  KeyInput key;
  absl::string_view data;
  absl::string_view signature;
  SignatureOptions options;
  bool user_id_set = false;
};

// PublicKeyEncryptItem: one PublicKeyEncryptBatch item, the arguments of
// PublicKeyEncrypt.
struct PublicKeyEncryptItem {
  Algorithm algorithm;
  KeyInput key;
  absl::string_view plaintext;
  Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2;
};

// HybridEncryptItem: one HybridEncryptBatch item, the arguments of HybridEncrypt.
struct HybridEncryptItem {
  Algorithm algorithm;
  KeyInput key;
  absl::string_view plaintext;
  absl::string_view info;
};

// ---- Key management: Rewrap and data keys (crypto_engine_envelope.cc) ----------------
//
// RewrapInput: one Rewrap (or RewrapBatch item): a ciphertext as Decrypt (SM4-*, AES-*),
// PublicKeyDecrypt (SM2, RSA-*-OAEP) or HybridDecrypt (HPKE-*) take it, under the keyring
// key `key` (a key_id; its version: the one named, or as the service fixed it). Fields
// by algorithm: symmetric `nonce`, `tag` (GCM/CCM), `aad` (GCM/CCM), `padding` (ECB/CBC);
// SM2 `format`; HPKE `info`. The views must outlive the call.
struct RewrapInput {
  Algorithm algorithm = Algorithm::kSm4Gcm;
  KeyInput key;
  absl::string_view ciphertext;
  absl::string_view nonce;
  absl::string_view tag;
  absl::string_view aad;
  std::optional<Padding> padding;
  Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2;
  absl::string_view info;
};

// Rewrapped: the plaintext sealed under the key's primary version, in the shape Encrypt
// (fresh nonce: none for ECB; tag of the source tag's length for GCM/CCM),
// PublicKeyEncrypt or HybridEncrypt give it; `key_version` the primary,
// `source_key_version` the version that opened the input.
struct Rewrapped {
  std::string ciphertext;
  std::string nonce;
  std::string tag;
  uint32_t key_version = 0;
  uint32_t source_key_version = 0;
};

// DataKeySpec: the data key GenerateDataKey draws: 16 bytes (SM4-128, AES-128) or 32
// (AES-256).
enum class DataKeySpec { kSm4_128, kAes128, kAes256 };
size_t DataKeySize(DataKeySpec spec);

// DataKeyInput: the wrapping of a data key: SM4-GCM / AES-128-GCM / AES-256-GCM with a
// keyring secret key (`aad` the encryption context), SM2 / RSA-*-OAEP (`format`) or
// HPKE-* (`info`) with a keyring or inline public key.
struct DataKeyInput {
  DataKeySpec spec = DataKeySpec::kSm4_128;
  Algorithm algorithm = Algorithm::kSm4Gcm;
  KeyInput key;
  absl::string_view aad;
  absl::string_view info;
  Sm2CiphertextFormat format = Sm2CiphertextFormat::kC1C3C2;
};

// DataKey: the data key (wiped when freed) and its wrapping exactly as Encrypt (12-byte
// nonce, 16-byte tag), PublicKeyEncrypt or HybridEncrypt return it.
struct DataKey {
  SecretData plaintext_key;
  std::string ciphertext;
  std::string nonce;
  std::string tag;
};

// Parsed keys. Keyring keys are parsed when the keyring is set (at construction and by
// SetKeyStore) into the primitives their algorithms use with the default options
// (signer, verifier, public-key encrypter/decrypter per SM2 ciphertext format, hybrid
// encrypter/decrypter, MAC, AEAD with a 16-byte tag); a request with other options
// parses the key itself.
// Inline public keys go through a bounded LRU (EngineOptions::public_key_cache_size)
// keyed by algorithm, options and key bytes. Inline private and symmetric keys are
// parsed per request and never kept (primitive_cache.h says why).
//
// Keyring replacement: each call takes the current keyring (the KeyStore with its
// primitives) once, at its start, and uses only that one; a batch uses one keyring for
// all its items, and a stream resolves its key when it is created and keeps what it
// built from it. SetKeyStore swaps the keyring atomically: calls that start afterwards
// see only the new one, calls and streams already running finish with the old one,
// which is freed (its secrets wiped) when the last of them ends.
class CryptoEngine {
 public:
  // `keys` must outlive the engine (or its replacement by SetKeyStore); `observer` may
  // be null, else must outlive the engine.
  CryptoEngine(const KeyStore* keys, EngineOptions options, EngineObserver* observer);
  // The engine shares ownership of `keys` (not null).
  CryptoEngine(std::shared_ptr<const KeyStore> keys, EngineOptions options,
               EngineObserver* observer);
  ~CryptoEngine();

  // SetKeyStore builds the primitives of `keys` (not null) and then makes it the
  // current keyring (see "Keyring replacement" above). Thread-safe; of concurrent
  // SetKeyStore calls the last to swap wins (KeyringReloader serializes its reloads).
  void SetKeyStore(std::shared_ptr<const KeyStore> keys);
  // key_store is the current keyring, kept alive by the returned pointer.
  std::shared_ptr<const KeyStore> key_store() const;
  // keyring is the current keyring, kept alive by the returned pointer: what a call with
  // several keys (a batch) resolves them all in.
  std::shared_ptr<const Keyring> keyring() const;
  // Resolve looks a kKeyId `key` up once for its whole call: in `keyring` when given (the
  // call's, for a second key or a batch item), else in the current keyring, and records
  // both in `key`
  // (KeyInput::keyring, KeyInput::entry). Other kinds, and a key already resolved, are
  // left as they are. Never fails: a lookup error is kept in `key->entry` and answers the
  // call where the key is used.
  void Resolve(KeyInput* key, std::shared_ptr<const Keyring> keyring = nullptr) const;
  // TrialWidth: how many versions a check with `key` tries at most (KeyInput::trial): 1
  // unless `trial` is set and the key has several retained versions; kMaxTrialVersions at
  // most. A decrypting stream keeps one decryptor, and its pending input, per version.
  size_t TrialWidth(const KeyInput& key) const;

  // Limits of one call.
  static constexpr size_t kMaxBatchItems = 65536;
  static constexpr size_t kMaxRandomBytes = 1 << 20;

  absl::StatusOr<std::string> Hash(Algorithm alg, absl::string_view data) const;
  absl::StatusOr<std::unique_ptr<HashStream>> NewHashStream(Algorithm alg) const;
  // HashBatch returns one result per item, in order; SM3 items go through Sm3Batch.
  std::vector<absl::StatusOr<std::string>> HashBatch(absl::Span<const HashItem> items) const;

  absl::StatusOr<std::string> Hmac(Algorithm alg, const KeyInput& key,
                                   absl::string_view data) const;
  // VerifyHmac checks `mac`, the whole tag or the tag truncated to its leftmost t bytes
  // (RFC 2104 §5: t from max(L/2, 10) to L, so 16 to 32 for both 32-byte MACs), against
  // the leftmost t bytes of the tag of `data`, in constant time: true when they match.
  // Another length is InvalidArgument "expected_mac must be 16 to 32 bytes ...".
  absl::StatusOr<bool> VerifyHmac(Algorithm alg, const KeyInput& key, absl::string_view data,
                                  absl::string_view mac) const;

  // Sign/Verify: `options.user_id` only for SM2 and only without `options.prehashed`
  // (InvalidArgument otherwise, when `user_id_set`: a digest e = SM3(Z || M) already
  // holds Z, so an ID given with it could not be bound).
  absl::StatusOr<std::string> Sign(Algorithm alg, const KeyInput& key, absl::string_view data,
                                   const SignatureOptions& options, bool user_id_set) const;
  absl::StatusOr<bool> Verify(Algorithm alg, const KeyInput& key, absl::string_view data,
                              absl::string_view signature, const SignatureOptions& options,
                              bool user_id_set) const;
  // SignBatch / VerifyBatch return one result per item, in order, each exactly as Sign /
  // Verify would (an item's error leaves the others alone). Items with the same
  // algorithm, key (a key_id, or the same inline key bytes) and options are resolved once
  // and handed to that primitive's PublicKeySign::SignMany / PublicKeyVerify::VerifyMany
  // in one call: for SM2 on AVX-512 IFMA, 8 at a time in the ifma_avx512 lanes with one
  // field inversion for the batch (crypto/sm2/sm2_batch.h); a group of one calls Sign /
  // Verify. A VerifyBatch item whose key has `trial` set and that fails under the primary
  // is verified again alone by Verify, trying every version. The views must outlive the
  // call.
  std::vector<absl::StatusOr<std::string>> SignBatch(absl::Span<const SignItem> items) const;
  std::vector<absl::StatusOr<bool>> VerifyBatch(absl::Span<const VerifyItem> items) const;

  absl::StatusOr<SymmetricCiphertext> Encrypt(const SymmetricParams& params,
                                              absl::string_view plaintext) const;
  // Decrypt (and NewStreamDecryptor) with a key whose `trial` is set (KeyInput::trial):
  // GCM/CCM tags of kMinTrialTagSize bytes or more try every version, the others
  // FailedPrecondition KEY_VERSION_REQUIRED when the key has several retained versions;
  // InvalidArgument "decryption failed (tried key '<id>' versions 3, 2, 1)" (reason
  // DECRYPTION_FAILED, metadata key_id and key_versions_tried) when several all fail.
  absl::StatusOr<std::string> Decrypt(const SymmetricParams& params, absl::string_view ciphertext,
                                      absl::string_view tag) const;
  // EncryptBatch returns one result per item (params[i] with plaintexts[i]; the spans
  // have the same length), in order, each exactly as Encrypt would. SM4-CBC items go
  // through Sm4CbcEncryptBatch, up to 16 messages at once in the SIMD lanes (CBC
  // encryption is serial within one message); the others one by one.
  std::vector<absl::StatusOr<SymmetricCiphertext>> EncryptBatch(
      absl::Span<const SymmetricParams> params,
      absl::Span<const absl::string_view> plaintexts) const;
  absl::StatusOr<std::unique_ptr<StreamEncryptor>> NewStreamEncryptor(
      const SymmetricParams& params) const;
  absl::StatusOr<std::unique_ptr<StreamDecryptor>> NewStreamDecryptor(
      const SymmetricParams& params) const;

  absl::StatusOr<std::string> PublicKeyEncrypt(Algorithm alg, const KeyInput& key,
                                               absl::string_view plaintext,
                                               Sm2CiphertextFormat format) const;
  // PublicKeyEncryptBatch returns one result per item, in order, each exactly as
  // PublicKeyEncrypt would; items with the same algorithm, key and format go to that
  // encrypter's PublicKeyEncrypt::EncryptMany in one call (SM2: ephemeral points in the
  // IFMA lanes, Sm2EncryptManyCached).
  std::vector<absl::StatusOr<std::string>> PublicKeyEncryptBatch(
      absl::Span<const PublicKeyEncryptItem> items) const;
  absl::StatusOr<std::string> PublicKeyDecrypt(Algorithm alg, const KeyInput& key,
                                               absl::string_view ciphertext,
                                               Sm2CiphertextFormat format) const;

  // HybridEncrypt seals `plaintext` to the recipient's public key (`key`: a keyring
  // PUBLIC KEY, the public half of a keyring PRIVATE KEY, or inline SubjectPublicKeyInfo
  // DER/PEM or a raw 65/33-byte point), binding `info`. HybridDecrypt opens it with the
  // private key (keyring PRIVATE KEY, or inline PKCS#8 DER/PEM or the raw 32-byte scalar,
  // subject to --inline_private_keys). Errors as smcrypt/hpke.h: FailedPrecondition for
  // a key of another family, InvalidArgument naming the field for a malformed header,
  // InvalidArgument "decryption failed" for any authentication failure.
  absl::StatusOr<std::string> HybridEncrypt(Algorithm alg, const KeyInput& key,
                                            absl::string_view plaintext,
                                            absl::string_view info) const;
  // HybridEncryptBatch returns one result per item, in order, each exactly as
  // HybridEncrypt would (same errors, same bytes counted; an item's error leaves the
  // others alone; each ciphertext has its own fresh ephemeral key). Items to the same
  // primitive (same algorithm and key: one keyring key_id, or the same inline key bytes)
  // are resolved once and handed to that primitive's HybridEncrypt::EncryptMany in one
  // call, which for HPKE-SM2-SM3-SM4GCM runs the ephemeral key pairs and ECDH of up to
  // 8 messages at once in AVX-512 IFMA lanes; the views must outlive the call.
  std::vector<absl::StatusOr<std::string>> HybridEncryptBatch(
      absl::Span<const HybridEncryptItem> items) const;
  absl::StatusOr<std::string> HybridDecrypt(Algorithm alg, const KeyInput& key,
                                            absl::string_view ciphertext,
                                            absl::string_view info) const;
  absl::StatusOr<std::unique_ptr<HybridStreamEncryptor>> NewHybridStreamEncryptor(
      const HybridStreamParams& params) const;
  // NewKeyExchange resolves the own key (as Sign does: a keyring PRIVATE KEY of the SM2
  // family, or an inline private key under --inline_private_keys) and the peer's public
  // key (as Verify does: a keyring entry's public key or inline SPKI / point, validated)
  // and returns the exchange, not yet started (Sm2KeyExchange::Start is the caller's).
  // Errors: InvalidArgument for an algorithm other than SM2 and for malformed keys
  // (naming key.inline_key or peer_key.inline_key), the keyring's NotFound /
  // FailedPrecondition, PermissionDenied for a denied inline private key, and
  // Sm2KeyExchange::New's.
  absl::StatusOr<std::unique_ptr<Sm2KeyExchange>> NewKeyExchange(
      const KeyExchangeInput& in) const;
  absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> NewHybridStreamDecryptor(
      const HybridStreamParams& params) const;

  // Rewrap opens `in` with its keyring key through Decrypt, PublicKeyDecrypt or
  // HybridDecrypt (their errors, "decryption failed" included, and nothing sealed), then
  // seals the plaintext, which it wipes and never returns, under the key's primary
  // version (KeyStore::Find(key_id, 0)) in the same keyring: same algorithm, aad,
  // padding, tag length, SM2 format and HPKE info, fresh nonce. InvalidArgument for an
  // inline key, an algorithm none of the three serves, or a field the algorithm does not
  // take (info for a symmetric or SM2/RSA input; nonce, tag, aad or padding for SM2, RSA
  // or HPKE). RewrapBatch: one result per item, in order, each as Rewrap gives it.
  absl::StatusOr<Rewrapped> Rewrap(const RewrapInput& in) const;
  std::vector<absl::StatusOr<Rewrapped>> RewrapBatch(absl::Span<const RewrapInput> items) const;
  // GenerateDataKey draws DataKeySize(in.spec) bytes from the CSPRNG and wraps them as
  // `in` says, through Encrypt, PublicKeyEncrypt or HybridEncrypt (their errors).
  // InvalidArgument for another algorithm, an inline key with a GCM wrapping, aad with a
  // public-key wrapping or info with a non-HPKE one.
  absl::StatusOr<DataKey> GenerateDataKey(const DataKeyInput& in) const;

  absl::StatusOr<GeneratedKeyPair> GenerateKeyPair(Algorithm alg, bool omit_private_key) const;
  // GetPublicKey returns the SubjectPublicKeyInfo DER.
  absl::StatusOr<std::string> GetPublicKey(Algorithm alg, const KeyInput& key) const;
  // PublicKeyVersions lists, for a keyring `key` (its version is ignored), each usable
  // version (KeyStore::Versions: min_version and up, oldest first) with its
  // SubjectPublicKeyInfo DER; errors as GetPublicKey. Empty for an inline key.
  absl::StatusOr<std::vector<std::pair<uint32_t, std::string>>> PublicKeyVersions(
      Algorithm alg, const KeyInput& key) const;
  absl::StatusOr<std::string> GenerateRandom(size_t length) const;

  bool allow_inline_private_keys() const { return options_.allow_inline_private_keys; }
  // keyring_size is the number of keys in the current keyring.
  size_t keyring_size() const;
  // public_key_cache_stats sums the LRUs of parsed public keys (size and capacity are
  // per-cache sums: three caches of public_key_cache_size entries each).
  CacheStats public_key_cache_stats() const;
  // keyring_primitives is the number of primitive entries of the current keyring (the
  // primary version of a key is filed twice: under its number and under 0).
  size_t keyring_primitives() const;

 private:
  template <typename T>
  using PrimitiveMap = absl::flat_hash_map<std::string, std::shared_ptr<const T>>;
  using Ring = Keyring;

  // ring is the current keyring, held by the caller for the whole call.
  std::shared_ptr<const Ring> ring() const;
  // RingFor is the keyring a call with `key` uses: the one `key` was resolved in, else
  // the current one.
  std::shared_ptr<const Ring> RingFor(const KeyInput& key) const;

  // Key resolution in `ring`: the bytes to hand to the registry.
  absl::StatusOr<absl::string_view> SymmetricKey(const Ring& ring, Algorithm alg,
                                                 const KeyInput& key) const;
  absl::StatusOr<absl::string_view> PrivateKey(const Ring& ring, Algorithm alg,
                                               const KeyInput& key) const;
  absl::StatusOr<absl::string_view> PublicKey(const Ring& ring, Algorithm alg,
                                              const KeyInput& key) const;
  absl::StatusOr<const StoredKey*> KeyringEntry(const Ring& ring, Algorithm alg,
                                                const KeyInput& key) const;
  // TrialKeys: the keys a check with `key` tries, in order (KeyInput::trial): `key` alone
  // unless it is a keyring key with `trial` set whose entry resolves; else its primary,
  // then every other retained version newest first, at most kMaxTrialVersions.
  // `private_only`: a check that needs the private key (PublicKeyDecrypt, HybridDecrypt
  // and its stream) leaves out the versions that are PUBLIC KEY files, unless every one is.
  std::vector<KeyInput> TrialKeys(const Ring& ring, const KeyInput& key,
                                  bool private_only = false) const;
  // RequireOneVersion: FailedPrecondition KEY_VERSION_REQUIRED (metadata key_id,
  // retained_versions newest first) when `key` has `trial` set and its key has more than
  // one retained version: for a decryption that cannot tell a wrong key (`why`).
  absl::Status RequireOneVersion(const Ring& ring, const KeyInput& key,
                                 absl::string_view why) const;
  // EndTrial records a finished check that tried `t`: in `key.trial`, and in the
  // observer when it tried more than one version.
  void EndTrial(Operation op, const KeyInput& key, const KeyTrial& t, bool authenticated) const;
  // EndDecryption ends a decryption that tried `t` (EndTrial; VersionsFailed when every
  // one of several versions failed) and records its bytes and a failure.
  absl::StatusOr<std::string> EndDecryption(Algorithm alg, const KeyInput& key,
                                            const KeyTrial& t, size_t bytes,
                                            absl::StatusOr<std::string> pt) const;
  void Record(Algorithm alg, Operation op, size_t bytes) const;
  // RecordVerified records a verification that answered (bytes, and a false answer).
  void RecordVerified(Algorithm alg, size_t bytes, bool valid) const;
  // The signer / verifier Sign / Verify use (options checked, key resolved, keyring
  // primitive or a freshly parsed / cached one).
  absl::StatusOr<std::shared_ptr<const PublicKeySign>> SignerFor(
      const Ring& ring, Algorithm alg, const KeyInput& key, const SignatureOptions& options,
      bool user_id_set) const;
  absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> VerifierFor(
      const Ring& ring, Algorithm alg, const KeyInput& key, const SignatureOptions& options,
      bool user_id_set) const;
  // The public-key encrypter PublicKeyEncrypt uses (algorithm checked, key resolved,
  // keyring primitive or a cached / freshly parsed one).
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> EncrypterFor(
      const Ring& ring, Algorithm alg, const KeyInput& key, Sm2CiphertextFormat format) const;
  // Encrypt with the keys of `ring` (EncryptBatch's other items use it too).
  absl::StatusOr<SymmetricCiphertext> EncryptWith(const Ring& ring, const SymmetricParams& params,
                                                  absl::string_view plaintext) const;
  // The hybrid encrypter HybridEncrypt uses (algorithm checked, key resolved, keyring
  // primitive or a cached / freshly parsed one).
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> HybridEncrypterFor(
      const Ring& ring, Algorithm alg, const KeyInput& key) const;

  EngineOptions options_;
  EngineObserver* observer_;

  mutable absl::Mutex ring_mu_;
  std::shared_ptr<const Ring> ring_ ABSL_GUARDED_BY(ring_mu_);
  // Primitives parsed from public keys (inline, or keyring keys with other options).
  mutable LruCache<PublicKeyVerify> verifier_cache_;
  mutable LruCache<smcrypt::PublicKeyEncrypt> encrypter_cache_;
  mutable LruCache<smcrypt::HybridEncrypt> hybrid_encrypter_cache_;
};

// Algorithm groups served by each RPC: the kinds of smcrypt/algorithm.h's table.
inline bool IsHashAlgorithm(Algorithm alg) { return HasKind(alg, AlgorithmKind::kHash); }
inline bool IsMacAlgorithm(Algorithm alg) { return HasKind(alg, AlgorithmKind::kMac); }
inline bool IsAeadAlgorithm(Algorithm alg) { return HasKind(alg, AlgorithmKind::kAead); }
inline bool IsSymmetricAlgorithm(Algorithm alg) {
  return HasKind(alg, AlgorithmKind::kCipher) || IsAeadAlgorithm(alg);
}
inline bool IsSignatureAlgorithm(Algorithm alg) {
  return HasKind(alg, AlgorithmKind::kSignature);
}
inline bool IsPublicKeyEncryptionAlgorithm(Algorithm alg) {
  return HasKind(alg, AlgorithmKind::kPublicKeyEncryption);
}
inline bool IsHybridAlgorithm(Algorithm alg) { return HasKind(alg, AlgorithmKind::kHybrid); }

// AllAlgorithms lists every Algorithm value in declaration order (smcrypt/algorithm.h).
using smcrypt::AllAlgorithms;

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_CRYPTO_ENGINE_H_
