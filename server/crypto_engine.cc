#include "server/crypto_engine.h"

#include <algorithm>
#include <functional>
#include <array>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/random.h"
#include "crypto/common/readable_count.h"
#include "crypto/core/key_family.h"
#include "crypto/core/sm2_primitives.h"
#include "crypto/openssl/hkdf_openssl.h"
#include "smcrypt/hpke.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"

namespace smcrypt::server {
namespace {

constexpr size_t kBlockSize = 16;
constexpr size_t kStreamNonceSize = 12;

constexpr Algorithm kAllAlgorithms[] = {
    Algorithm::kSm3,        Algorithm::kSha256,         Algorithm::kHmacSm3,
    Algorithm::kHmacSha256, Algorithm::kSm4Ecb,         Algorithm::kSm4Cbc,
    Algorithm::kSm4Ctr,     Algorithm::kSm4Gcm,         Algorithm::kSm4Ccm,
    Algorithm::kAes128Ecb,  Algorithm::kAes128Cbc,      Algorithm::kAes128Ctr,
    Algorithm::kAes128Gcm,  Algorithm::kAes256Ecb,      Algorithm::kAes256Cbc,
    Algorithm::kAes256Ctr,  Algorithm::kAes256Gcm,      Algorithm::kSm2,
    Algorithm::kEcdsaP256,  Algorithm::kEcdsaSecp256k1, Algorithm::kRsa2048Pss,
    Algorithm::kRsa3072Pss, Algorithm::kRsa2048Oaep,    Algorithm::kRsa3072Oaep,
    Algorithm::kHpkeSm2Sm3Sm4Gcm, Algorithm::kHpkeP256Sha256Aes128Gcm,
};

enum class BlockMode { kEcb, kCbc, kCtr };

BlockMode BlockModeOf(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSm4Ecb:
    case Algorithm::kAes128Ecb:
    case Algorithm::kAes256Ecb:
      return BlockMode::kEcb;
    case Algorithm::kSm4Cbc:
    case Algorithm::kAes128Cbc:
    case Algorithm::kAes256Cbc:
      return BlockMode::kCbc;
    default:
      return BlockMode::kCtr;
  }
}

absl::Status WrongAlgorithm(Algorithm alg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("algorithm ", AlgorithmName(alg), " cannot be used here: expected ", what));
}

// IsPublicKeyEncoding: whether `bytes` is a SubjectPublicKeyInfo (RFC 5280 §4.1), DER or
// PEM "PUBLIC KEY", rather than PKCS#8 (RFC 5208 §5). Reads only the outer structure —
// the PEM label, or the DER tags of the outer SEQUENCE and its first element (PKCS#8:
// INTEGER version; SPKI: SEQUENCE AlgorithmIdentifier) — which is public layout, never
// key material.
bool IsPublicKeyEncoding(absl::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size() && i < 64 &&
         (bytes[i] == ' ' || bytes[i] == '\t' || bytes[i] == '\r' || bytes[i] == '\n')) {
    ++i;
  }
  if (absl::StartsWith(bytes.substr(i), "-----BEGIN PUBLIC KEY-----")) return true;
  if (bytes.size() < 4 || static_cast<uint8_t>(bytes[0]) != 0x30) return false;
  const uint8_t len0 = static_cast<uint8_t>(bytes[1]);
  const size_t first = len0 < 0x80 ? 2 : 2 + (len0 & 0x7f);
  return first < bytes.size() && static_cast<uint8_t>(bytes[first]) == 0x30;
}

// ExplainPrivateKeyError turns the parse error of an inline private key that is in
// fact a public key into FailedPrecondition saying so (as for a keyring public key).
// Only called after parsing failed, so a valid key is never examined here.
absl::Status ExplainPrivateKeyError(absl::Status s, Algorithm alg, const KeyInput& key) {
  if (s.ok() || s.code() != absl::StatusCode::kInvalidArgument ||
      key.kind != KeyInput::Kind::kInline || !IsPublicKeyEncoding(key.value)) {
    return s;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "inline key is a public key (SubjectPublicKeyInfo); ", AlgorithmName(alg),
      " needs the private key here (PKCS#8 DER or PEM)"));
}

// NameInlineKey prefixes "key.inline_key: " to the InvalidArgument a factory returns for
// an inline asymmetric key (the algorithm and options are checked before the factory
// runs, so that error is about the key bytes), so the caller sees which field it was.
absl::Status NameInlineKey(absl::Status s, const KeyInput& key) {
  if (s.code() != absl::StatusCode::kInvalidArgument || key.kind != KeyInput::Kind::kInline) {
    return s;
  }
  return absl::InvalidArgumentError(absl::StrCat("key.inline_key: ", s.message()));
}

absl::StatusOr<std::string> DrawRandom(size_t len) {
  std::string out(len, '\0');
  if (len > 0) {
    absl::Status s = RandomBytes(reinterpret_cast<uint8_t*>(out.data()), len);
    if (!s.ok()) return s;
  }
  return out;
}

// AddToCounter adds `blocks` to the 128-bit big-endian counter `ctr` (CTR mode: the
// whole block is one counter, as OpenSSL does).
void AddToCounter(std::string& ctr, uint64_t blocks) {
  uint64_t carry = blocks;
  for (size_t i = ctr.size(); i-- > 0 && carry != 0;) {
    uint64_t v = static_cast<uint8_t>(ctr[i]) + (carry & 0xFF);
    ctr[i] = static_cast<char>(v & 0xFF);
    carry = (carry >> 8) + (v >> 8);
  }
}

// SegmentNonce: N_i = nonce XOR (0^7 ‖ BE32(i) ‖ last) for a 12-byte stream nonce.
std::string SegmentNonce(absl::string_view nonce, uint32_t index, bool last) {
  std::string n(nonce);
  n[7] ^= static_cast<char>(index >> 24);
  n[8] ^= static_cast<char>(index >> 16);
  n[9] ^= static_cast<char>(index >> 8);
  n[10] ^= static_cast<char>(index);
  n[11] ^= static_cast<char>(last ? 1 : 0);
  return n;
}

// ---- Block-mode streams (ECB, CBC, CTR) -----------------------------------------------

class BlockStreamEncryptor final : public StreamEncryptor {
 public:
  BlockStreamEncryptor(BlockMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
                       std::string iv, bool padded)
      : mode_(mode), bulk_(std::move(bulk)), last_(std::move(last)), nonce_(iv),
        iv_(std::move(iv)), padded_(padded) {}

  absl::string_view nonce() const override { return nonce_; }

  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view plaintext) override {
    buffer_.append(plaintext.data(), plaintext.size());
    const size_t n = buffer_.size() / kBlockSize * kBlockSize;
    if (n == 0) return std::nullopt;
    absl::StatusOr<std::string> out = Process(absl::string_view(buffer_).substr(0, n));
    SecureZero(buffer_.data(), n);
    buffer_.erase(0, n);
    if (!out.ok()) return out.status();
    return StreamChunk{*std::move(out), ""};
  }

  absl::StatusOr<StreamChunk> Finish() override {
    StreamChunk chunk;
    if (mode_ == BlockMode::kCtr) {
      absl::StatusOr<std::string> out = Process(buffer_);
      if (!out.ok()) return out.status();
      chunk.data = *std::move(out);
    } else if (padded_) {
      absl::StatusOr<std::string> out = last_->Encrypt(mode_ == BlockMode::kCbc ? iv_ : "", buffer_);
      if (!out.ok()) return out.status();
      chunk.data = *std::move(out);
    } else if (!buffer_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "plaintext length must be a multiple of 16 bytes without padding; ", buffer_.size(),
          " bytes are left over"));
    }
    SecureZero(buffer_.data(), buffer_.size());
    buffer_.clear();
    return chunk;
  }

  ~BlockStreamEncryptor() override { SecureZero(buffer_.data(), buffer_.size()); }

 private:
  // Process encrypts whole blocks (or, for CTR at the end, a final partial block).
  absl::StatusOr<std::string> Process(absl::string_view in) {
    if (in.empty()) return std::string();
    absl::StatusOr<std::string> out = bulk_->Encrypt(mode_ == BlockMode::kEcb ? "" : iv_, in);
    if (!out.ok()) return out.status();
    if (mode_ == BlockMode::kCbc) {
      iv_ = out->substr(out->size() - kBlockSize);
    } else if (mode_ == BlockMode::kCtr) {
      AddToCounter(iv_, in.size() / kBlockSize);
    }
    return out;
  }

  BlockMode mode_;
  std::unique_ptr<Cipher> bulk_;  // Padding::kNone
  std::unique_ptr<Cipher> last_;  // PKCS#7, for the final block of padded ECB/CBC
  std::string nonce_;
  std::string iv_;  // CBC: previous ciphertext block; CTR: current counter
  bool padded_;
  std::string buffer_;  // < 16 bytes between calls
};

class BlockStreamDecryptor final : public StreamDecryptor {
 public:
  BlockStreamDecryptor(BlockMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
                       std::string iv, bool padded)
      : mode_(mode), bulk_(std::move(bulk)), last_(std::move(last)), iv_(std::move(iv)),
        padded_(padded) {}

  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view ciphertext,
                                                    absl::string_view tag) override {
    if (!tag.empty()) {
      return absl::InvalidArgumentError("tag must be empty for ECB, CBC and CTR streams");
    }
    total_ += ciphertext.size();
    buffer_.append(ciphertext.data(), ciphertext.size());
    size_t n = buffer_.size() / kBlockSize * kBlockSize;
    // Padded ECB/CBC: keep the last whole block back; it carries the padding.
    if (padded_ && mode_ != BlockMode::kCtr && n == buffer_.size() && n > 0) n -= kBlockSize;
    if (n == 0) return std::nullopt;
    absl::StatusOr<std::string> out = Process(absl::string_view(buffer_).substr(0, n));
    buffer_.erase(0, n);
    if (!out.ok()) return out.status();
    return StreamChunk{*std::move(out), ""};
  }

  absl::StatusOr<StreamChunk> Finish() override {
    StreamChunk chunk;
    if (mode_ == BlockMode::kCtr) {
      absl::StatusOr<std::string> out = Process(buffer_);
      if (!out.ok()) return out.status();
      chunk.data = *std::move(out);
      return chunk;
    }
    if (total_ % kBlockSize != 0 || (padded_ && total_ == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ciphertext length must be a ", padded_ ? "non-zero " : "",
          "multiple of 16 bytes, got ", total_));
    }
    if (padded_) {
      absl::StatusOr<std::string> out = last_->Decrypt(mode_ == BlockMode::kCbc ? iv_ : "", buffer_);
      if (!out.ok()) return out.status();
      chunk.data = *std::move(out);
    }
    return chunk;
  }

 private:
  absl::StatusOr<std::string> Process(absl::string_view in) {
    if (in.empty()) return std::string();
    absl::StatusOr<std::string> out = bulk_->Decrypt(mode_ == BlockMode::kEcb ? "" : iv_, in);
    if (!out.ok()) return out.status();
    if (mode_ == BlockMode::kCbc) {
      iv_ = std::string(in.substr(in.size() - kBlockSize));
    } else if (mode_ == BlockMode::kCtr) {
      AddToCounter(iv_, in.size() / kBlockSize);
    }
    return out;
  }

  BlockMode mode_;
  std::unique_ptr<Cipher> bulk_;
  std::unique_ptr<Cipher> last_;
  std::string iv_;
  bool padded_;
  std::string buffer_;
  uint64_t total_ = 0;
};

// ---- AEAD streams (GCM, CCM): STREAM construction -----------------------------------

class AeadStreamEncryptor final : public StreamEncryptor {
 public:
  AeadStreamEncryptor(std::unique_ptr<Aead> aead, std::string nonce, std::string aad)
      : aead_(std::move(aead)), nonce_(std::move(nonce)), aad_(std::move(aad)) {}

  absl::string_view nonce() const override { return nonce_; }

  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view plaintext) override {
    if (plaintext.empty()) return std::nullopt;
    std::optional<StreamChunk> out;
    if (pending_.has_value()) {
      absl::StatusOr<StreamChunk> sealed = Seal(*pending_, /*last=*/false);
      SecureZero(pending_->data(), pending_->size());
      if (!sealed.ok()) return sealed.status();
      out = *std::move(sealed);
    }
    pending_ = std::string(plaintext);
    return out;
  }

  absl::StatusOr<StreamChunk> Finish() override {
    std::string last = pending_.has_value() ? *std::move(pending_) : std::string();
    pending_.reset();
    absl::StatusOr<StreamChunk> sealed = Seal(last, /*last=*/true);
    SecureZero(last.data(), last.size());
    return sealed;
  }

  ~AeadStreamEncryptor() override {
    if (pending_.has_value()) SecureZero(pending_->data(), pending_->size());
  }

 private:
  absl::StatusOr<StreamChunk> Seal(absl::string_view plaintext, bool last) {
    if (index_ == UINT32_MAX) {
      return absl::InvalidArgumentError("stream has more than 2^32 - 1 segments");
    }
    absl::StatusOr<std::string> ct = aead_->Seal(SegmentNonce(nonce_, index_, last), plaintext, aad_);
    if (!ct.ok()) return ct.status();
    ++index_;
    const size_t t = aead_->tag_size();
    StreamChunk chunk;
    chunk.tag = ct->substr(ct->size() - t);
    ct->resize(ct->size() - t);
    chunk.data = *std::move(ct);
    return chunk;
  }

  std::unique_ptr<Aead> aead_;
  std::string nonce_;
  std::string aad_;
  std::optional<std::string> pending_;
  uint32_t index_ = 0;
};

// AeadFactory makes the Aead once the tag length is known (from the first segment).
using AeadFactory = std::function<absl::StatusOr<std::unique_ptr<Aead>>(size_t tag_size)>;

class AeadStreamDecryptor final : public StreamDecryptor {
 public:
  AeadStreamDecryptor(AeadFactory factory, std::string nonce, std::string aad)
      : factory_(std::move(factory)), nonce_(std::move(nonce)), aad_(std::move(aad)) {}

  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view ciphertext,
                                                    absl::string_view tag) override {
    if (ciphertext.empty() && tag.empty()) return std::nullopt;
    if (tag.empty()) {
      return absl::InvalidArgumentError("every GCM/CCM stream segment needs its tag");
    }
    if (aead_ == nullptr) {
      absl::StatusOr<std::unique_ptr<Aead>> aead = factory_(tag.size());
      if (!aead.ok()) return aead.status();
      aead_ = *std::move(aead);
    } else if (tag.size() != aead_->tag_size()) {
      return absl::InvalidArgumentError(absl::StrCat("segment tag must be ", aead_->tag_size(),
                                                     " bytes like the first, got ", tag.size()));
    }
    std::optional<StreamChunk> out;
    if (pending_.has_value()) {
      absl::StatusOr<StreamChunk> opened = Open(*pending_, /*last=*/false);
      if (!opened.ok()) return opened.status();
      out = *std::move(opened);
    }
    pending_ = absl::StrCat(ciphertext, tag);
    return out;
  }

  absl::StatusOr<StreamChunk> Finish() override {
    if (!pending_.has_value()) {
      return absl::InvalidArgumentError("GCM/CCM stream has no segment (at least the final one)");
    }
    std::string last = *std::move(pending_);
    pending_.reset();
    return Open(last, /*last=*/true);
  }

 private:
  absl::StatusOr<StreamChunk> Open(absl::string_view segment, bool last) {
    if (index_ == UINT32_MAX) {
      return absl::InvalidArgumentError("stream has more than 2^32 - 1 segments");
    }
    absl::StatusOr<std::string> pt = aead_->Open(SegmentNonce(nonce_, index_, last), segment, aad_);
    if (!pt.ok()) return pt.status();
    ++index_;
    return StreamChunk{*std::move(pt), ""};
  }

  AeadFactory factory_;
  std::unique_ptr<Aead> aead_;
  std::string nonce_;
  std::string aad_;
  std::optional<std::string> pending_;
  uint32_t index_ = 0;
};

// CountingStreamEncryptor / CountingStreamDecryptor record the bytes a symmetric stream
// processes (plaintext in, ciphertext in), as the unary Encrypt/Decrypt do.
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
    return out;
  }
  absl::StatusOr<StreamChunk> Finish() override { return inner_->Finish(); }

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

absl::Span<const Algorithm> AllAlgorithms() { return kAllAlgorithms; }

bool IsHashAlgorithm(Algorithm alg) { return alg == Algorithm::kSm3 || alg == Algorithm::kSha256; }
bool IsMacAlgorithm(Algorithm alg) {
  return alg == Algorithm::kHmacSm3 || alg == Algorithm::kHmacSha256;
}
bool IsAeadAlgorithm(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSm4Gcm:
    case Algorithm::kSm4Ccm:
    case Algorithm::kAes128Gcm:
    case Algorithm::kAes256Gcm:
      return true;
    default:
      return false;
  }
}
bool IsSymmetricAlgorithm(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSm4Ecb:
    case Algorithm::kSm4Cbc:
    case Algorithm::kSm4Ctr:
    case Algorithm::kAes128Ecb:
    case Algorithm::kAes128Cbc:
    case Algorithm::kAes128Ctr:
    case Algorithm::kAes256Ecb:
    case Algorithm::kAes256Cbc:
    case Algorithm::kAes256Ctr:
      return true;
    default:
      return IsAeadAlgorithm(alg);
  }
}
bool IsSignatureAlgorithm(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSm2:
    case Algorithm::kEcdsaP256:
    case Algorithm::kEcdsaSecp256k1:
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa3072Pss:
      return true;
    default:
      return false;
  }
}
bool IsPublicKeyEncryptionAlgorithm(Algorithm alg) {
  return alg == Algorithm::kSm2 || alg == Algorithm::kRsa2048Oaep ||
         alg == Algorithm::kRsa3072Oaep;
}
bool IsHybridAlgorithm(Algorithm alg) {
  return alg == Algorithm::kHpkeSm2Sm3Sm4Gcm || alg == Algorithm::kHpkeP256Sha256Aes128Gcm;
}

// ---- Parsed-key caches ---------------------------------------------------------------

namespace {

// KeyringPrimitiveKey names a keyring primitive: algorithm, variant (the SM2 ciphertext
// format, or empty) and key_id (key_ids hold no '|').
std::string KeyringPrimitiveKey(Algorithm alg, absl::string_view variant,
                                absl::string_view key_id) {
  return absl::StrCat(AlgorithmName(alg), "|", variant, "|", key_id);
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

template <typename T>
std::shared_ptr<const T> FindPrimitive(
    const absl::flat_hash_map<std::string, std::shared_ptr<const T>>& map, Algorithm alg,
    absl::string_view variant, absl::string_view key_id) {
  if (map.empty()) return nullptr;
  auto it = map.find(KeyringPrimitiveKey(alg, variant, key_id));
  return it == map.end() ? nullptr : it->second;
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

template <typename T>
void Put(absl::flat_hash_map<std::string, std::shared_ptr<const T>>* map, std::string key,
         absl::StatusOr<std::unique_ptr<T>> p) {
  // A key a factory refuses is left out; requests using it get the factory's error.
  if (p.ok()) map->emplace(std::move(key), *std::move(p));
}

}  // namespace

CryptoEngine::CryptoEngine(const KeyStore* keys, EngineOptions options, EngineObserver* observer)
    : keys_(keys),
      options_(options),
      observer_(observer),
      verifier_cache_(options.public_key_cache_size),
      encrypter_cache_(options.public_key_cache_size),
      hybrid_encrypter_cache_(options.public_key_cache_size) {
  BuildKeyringPrimitives();
}

void CryptoEngine::BuildKeyringPrimitives() {
  for (const StoredKey* e : keys_->entries()) {
    const absl::string_view secret = SecretDataAsStringView(e->material);
    const absl::string_view id = e->key_id;
    for (Algorithm alg : AllAlgorithms()) {
      if (!FamilyServes(e->family, alg)) continue;
      if (e->is_symmetric) {
        if (IsMacAlgorithm(alg)) Put(&keyring_macs_, KeyringPrimitiveKey(alg, "", id), NewMac(alg, secret));
        if (IsAeadAlgorithm(alg)) {
          Put(&keyring_aeads_, KeyringPrimitiveKey(alg, "", id), NewAead(alg, secret, 16));
        }
        continue;
      }
      if (IsSignatureAlgorithm(alg)) {
        Put(&keyring_verifiers_, KeyringPrimitiveKey(alg, "", id),
            NewPublicKeyVerify(alg, e->public_key_der));
        if (e->is_private) {
          Put(&keyring_signers_, KeyringPrimitiveKey(alg, "", id), NewPublicKeySign(alg, secret));
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
          Put(&keyring_encrypters_, KeyringPrimitiveKey(alg, FormatVariant(f), id),
              NewPublicKeyEncrypt(alg, e->public_key_der, o));
          if (e->is_private) {
            Put(&keyring_decrypters_, KeyringPrimitiveKey(alg, FormatVariant(f), id),
                NewPublicKeyDecrypt(alg, secret, o));
          }
        }
      }
      if (IsHybridAlgorithm(alg)) {
        Put(&keyring_hybrid_encrypters_, KeyringPrimitiveKey(alg, "", id),
            NewHybridEncrypt(alg, e->public_key_der));
        if (e->is_private) {
          Put(&keyring_hybrid_decrypters_, KeyringPrimitiveKey(alg, "", id),
              NewHybridDecrypt(alg, secret));
        }
      }
    }
  }
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

size_t CryptoEngine::keyring_primitives() const {
  return keyring_signers_.size() + keyring_verifiers_.size() + keyring_encrypters_.size() +
         keyring_decrypters_.size() + keyring_hybrid_encrypters_.size() +
         keyring_hybrid_decrypters_.size() + keyring_macs_.size() + keyring_aeads_.size();
}

void CryptoEngine::Record(Algorithm alg, Operation op, size_t bytes) const {
  if (observer_ != nullptr) observer_->OnBytesProcessed(alg, op, bytes);
}

// ---- Keys --------------------------------------------------------------------------

absl::StatusOr<const StoredKey*> CryptoEngine::KeyringEntry(Algorithm alg,
                                                            absl::string_view key_id) const {
  absl::StatusOr<const StoredKey*> entry = keys_->Find(key_id);
  if (!entry.ok()) return entry.status();
  if (!FamilyServes((*entry)->family, alg)) {
    return absl::FailedPreconditionError(absl::StrCat(
        // Every family name (SM2, SM4, EC ..., RSA-..., AES-..., HMAC) takes "an".
        "key '", key_id, "' is an ", KeyFamilyName((*entry)->family), " key; ",
        AlgorithmName(alg), " needs an ", KeyFamilyName(KeyFamilyForAlgorithm(alg)), " key"));
  }
  return entry;
}

absl::StatusOr<absl::string_view> CryptoEngine::SymmetricKey(Algorithm alg,
                                                             const KeyInput& key) const {
  switch (key.kind) {
    case KeyInput::Kind::kNone:
      return absl::InvalidArgumentError("key is required (key_id or inline_key)");
    case KeyInput::Kind::kInline:
      return key.value;
    case KeyInput::Kind::kKeyId: {
      absl::StatusOr<const StoredKey*> entry = KeyringEntry(alg, key.value);
      if (!entry.ok()) return entry.status();
      return SecretDataAsStringView((*entry)->material);
    }
  }
  return absl::InternalError("bad key kind");
}

absl::StatusOr<absl::string_view> CryptoEngine::PrivateKey(Algorithm alg,
                                                           const KeyInput& key) const {
  switch (key.kind) {
    case KeyInput::Kind::kNone:
      return absl::InvalidArgumentError("key is required (key_id or inline_key)");
    case KeyInput::Kind::kInline:
      if (!options_.allow_inline_private_keys) {
        return absl::PermissionDeniedError(
            "inline private keys are denied on this server (--inline_private_keys=deny); "
            "use a key_id from the keyring");
      }
      return key.value;
    case KeyInput::Kind::kKeyId: {
      absl::StatusOr<const StoredKey*> entry = KeyringEntry(alg, key.value);
      if (!entry.ok()) return entry.status();
      if (!(*entry)->is_private) {
        return absl::FailedPreconditionError(absl::StrCat(
            "key '", key.value, "' is a public key; this operation needs a private key"));
      }
      return SecretDataAsStringView((*entry)->material);
    }
  }
  return absl::InternalError("bad key kind");
}

absl::StatusOr<absl::string_view> CryptoEngine::PublicKey(Algorithm alg,
                                                          const KeyInput& key) const {
  switch (key.kind) {
    case KeyInput::Kind::kNone:
      return absl::InvalidArgumentError("key is required (key_id or inline_key)");
    case KeyInput::Kind::kInline:
      return key.value;
    case KeyInput::Kind::kKeyId: {
      absl::StatusOr<const StoredKey*> entry = KeyringEntry(alg, key.value);
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

absl::StatusOr<std::unique_ptr<HashStream>> CryptoEngine::NewHashStream(Algorithm alg) const {
  if (!IsHashAlgorithm(alg)) return WrongAlgorithm(alg, "SM3 or SHA-256");
  absl::StatusOr<std::unique_ptr<smcrypt::Hash>> h = NewHash(alg);
  if (!h.ok()) return h.status();
  return std::unique_ptr<HashStream>(
      new CountingHashStream(*std::move(h), alg, this, observer_));
}

std::vector<absl::StatusOr<std::string>> CryptoEngine::HashBatch(
    absl::Span<const HashItem> items) const {
  std::vector<absl::StatusOr<std::string>> results(items.size(), std::string());
  std::vector<size_t> sm3_index;
  std::vector<absl::string_view> sm3_messages;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].algorithm == Algorithm::kSm3) {
      sm3_index.push_back(i);
      sm3_messages.push_back(items[i].data);
    } else {
      results[i] = Hash(items[i].algorithm, items[i].data);
    }
  }
  if (!sm3_messages.empty()) {
    std::string out(kSm3DigestSize * sm3_messages.size(), '\0');
    Sm3Batch(sm3_messages, reinterpret_cast<uint8_t*>(out.data()));
    size_t total = 0;
    for (size_t j = 0; j < sm3_index.size(); ++j) {
      results[sm3_index[j]] = out.substr(j * kSm3DigestSize, kSm3DigestSize);
      total += sm3_messages[j].size();
    }
    Record(Algorithm::kSm3, Operation::kHash, total);
  }
  return results;
}

absl::StatusOr<std::string> CryptoEngine::Hmac(Algorithm alg, const KeyInput& key,
                                               absl::string_view data) const {
  if (!IsMacAlgorithm(alg)) return WrongAlgorithm(alg, "HMAC-SM3 or HMAC-SHA-256");
  absl::StatusOr<absl::string_view> k = SymmetricKey(alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const Mac> cached;
  if (key.kind == KeyInput::Kind::kKeyId) cached = FindPrimitive(keyring_macs_, alg, "", key.value);
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
  if (!IsMacAlgorithm(alg)) return WrongAlgorithm(alg, "HMAC-SM3 or HMAC-SHA-256");
  absl::StatusOr<absl::string_view> k = SymmetricKey(alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const Mac> cached;
  if (key.kind == KeyInput::Kind::kKeyId) cached = FindPrimitive(keyring_macs_, alg, "", key.value);
  absl::StatusOr<std::shared_ptr<const Mac>> mac =
      cached != nullptr ? cached : Shared(NewMac(alg, *k));
  if (!mac.ok()) return mac.status();
  // RFC 2104 §5: a tag may be truncated to its leftmost t bytes, t ≥ max(L/2, 10).
  const size_t full_size = (*mac)->mac_size();
  const size_t min_size = std::max<size_t>(full_size / 2, 10);
  if (expected.size() < min_size || expected.size() > full_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected_mac must be ", min_size, " to ", full_size,
        " bytes (a tag truncated to its leftmost bytes, RFC 2104 §5), got ", expected.size()));
  }
  absl::StatusOr<std::string> tag = (*mac)->ComputeMac(data);
  if (!tag.ok()) return tag.status();
  // The length is public; the leftmost expected.size() bytes are compared in constant time,
  // and only the verdict is declassified.
  const bool equal = CtDeclassify(CtMemEq(tag->data(), expected.data(), expected.size()));
  SecureZero(tag->data(), tag->size());
  Record(alg, Operation::kMac, data.size());
  return equal;
}

// ---- Signatures --------------------------------------------------------------------

absl::StatusOr<std::shared_ptr<const PublicKeySign>> CryptoEngine::SignerFor(
    Algorithm alg, const KeyInput& key, const SignatureOptions& options,
    bool user_id_set) const {
  absl::Status s = CheckSignatureOptions(alg, options, user_id_set);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PrivateKey(alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const PublicKeySign> cached;
  if (key.kind == KeyInput::Kind::kKeyId && IsDefaultSignatureOptions(options)) {
    cached = FindPrimitive(keyring_signers_, alg, "", key.value);
  }
  // An inline private key is parsed for this request only and never cached.
  if (cached != nullptr) return cached;
  absl::StatusOr<std::shared_ptr<const PublicKeySign>> signer =
      Shared(NewPublicKeySign(alg, *k, options));
  if (!signer.ok()) return NameInlineKey(ExplainPrivateKeyError(signer.status(), alg, key), key);
  return signer;
}

absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> CryptoEngine::VerifierFor(
    Algorithm alg, const KeyInput& key, const SignatureOptions& options,
    bool user_id_set) const {
  absl::Status s = CheckSignatureOptions(alg, options, user_id_set);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PublicKey(alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const PublicKeyVerify> cached;
  if (key.kind == KeyInput::Kind::kKeyId && IsDefaultSignatureOptions(options)) {
    cached = FindPrimitive(keyring_verifiers_, alg, "", key.value);
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
  absl::StatusOr<std::shared_ptr<const PublicKeySign>> signer =
      SignerFor(alg, key, options, user_id_set);
  if (!signer.ok()) return signer.status();
  absl::StatusOr<std::string> sig = (*signer)->Sign(data);
  if (sig.ok()) Record(alg, Operation::kSign, data.size());
  return sig;
}

namespace {

// Verify's mapping: OK → true, Unauthenticated (a wrong signature) → false, else the error.
bool CountsAsVerified(const absl::Status& v) {
  return v.ok() || v.code() == absl::StatusCode::kUnauthenticated;
}

}  // namespace

absl::StatusOr<bool> CryptoEngine::Verify(Algorithm alg, const KeyInput& key,
                                          absl::string_view data, absl::string_view signature,
                                          const SignatureOptions& options,
                                          bool user_id_set) const {
  absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> verifier =
      VerifierFor(alg, key, options, user_id_set);
  if (!verifier.ok()) return verifier.status();
  absl::Status v = (*verifier)->Verify(signature, data);
  if (CountsAsVerified(v)) {
    Record(alg, Operation::kVerify, data.size());
    return v.ok();
  }
  return v;
}

namespace {

// Groups of batch items that one primitive serves: same algorithm, key (kind and value:
// a key_id or the inline key bytes) and options; positions in order of first appearance.
// The views point into the items, which outlive the groups.
template <typename Item, typename KeyOf>
std::vector<std::vector<size_t>> GroupItems(absl::Span<const Item> items, KeyOf key_of) {
  using GroupKey = decltype(key_of(items[0]));
  absl::flat_hash_map<GroupKey, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < items.size(); ++i) {
    auto [pos, inserted] = group_of.try_emplace(key_of(items[i]), groups.size());
    if (inserted) groups.emplace_back();
    groups[pos->second].push_back(i);
  }
  return groups;
}

template <typename Item>
auto SignatureGroupKey(const Item& it) {
  return std::make_tuple(it.algorithm, it.key.kind, it.key.value,
                         absl::string_view(it.options.user_id), it.options.encoding,
                         it.options.prehashed, it.user_id_set);
}

absl::Status ManyMismatch(absl::string_view what, size_t got, size_t want) {
  return absl::InternalError(absl::StrCat(what, " returned ", got, " results for ", want,
                                          " inputs"));
}

}  // namespace

std::vector<absl::StatusOr<std::string>> CryptoEngine::SignBatch(
    absl::Span<const SignItem> items) const {
  std::vector<absl::StatusOr<std::string>> out(items.size(),
                                               absl::InternalError("SignBatch item not run"));
  // Items one signer serves are signed by its PublicKeySign::SignMany in one call (SM2:
  // the IFMA lanes); the signer is resolved once per group, so its error is Sign's.
  std::vector<absl::string_view> data;
  for (const std::vector<size_t>& group :
       GroupItems(items, [](const SignItem& it) { return SignatureGroupKey(it); })) {
    const SignItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const PublicKeySign>> signer =
        SignerFor(first.algorithm, first.key, first.options, first.user_id_set);
    if (!signer.ok()) {
      for (size_t i : group) out[i] = signer.status();
      continue;
    }
    data.clear();
    for (size_t i : group) data.push_back(items[i].data);
    std::vector<absl::StatusOr<std::string>> sigs =
        group.size() == 1 ? std::vector<absl::StatusOr<std::string>>{(*signer)->Sign(data[0])}
                          : (*signer)->SignMany(data);
    if (sigs.size() != group.size()) {  // a broken SignMany must not shift results
      for (size_t i : group) out[i] = ManyMismatch("PublicKeySign::SignMany", sigs.size(), group.size());
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      if (sigs[j].ok()) Record(first.algorithm, Operation::kSign, data[j].size());
      out[group[j]] = std::move(sigs[j]);
    }
  }
  return out;
}

std::vector<absl::StatusOr<bool>> CryptoEngine::VerifyBatch(
    absl::Span<const VerifyItem> items) const {
  std::vector<absl::StatusOr<bool>> out(items.size(),
                                        absl::InternalError("VerifyBatch item not run"));
  std::vector<VerifyInput> inputs;
  for (const std::vector<size_t>& group :
       GroupItems(items, [](const VerifyItem& it) { return SignatureGroupKey(it); })) {
    const VerifyItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> verifier =
        VerifierFor(first.algorithm, first.key, first.options, first.user_id_set);
    if (!verifier.ok()) {
      for (size_t i : group) out[i] = verifier.status();
      continue;
    }
    inputs.clear();
    for (size_t i : group) inputs.push_back({items[i].signature, items[i].data});
    std::vector<absl::Status> res =
        group.size() == 1
            ? std::vector<absl::Status>{(*verifier)->Verify(inputs[0].signature, inputs[0].data)}
            : (*verifier)->VerifyMany(inputs);
    if (res.size() != group.size()) {
      for (size_t i : group) {
        out[i] = ManyMismatch("PublicKeyVerify::VerifyMany", res.size(), group.size());
      }
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      if (CountsAsVerified(res[j])) {
        Record(first.algorithm, Operation::kVerify, inputs[j].data.size());
        out[group[j]] = res[j].ok();
      } else {
        out[group[j]] = res[j];
      }
    }
  }
  return out;
}

// ---- Symmetric encryption ----------------------------------------------------------

namespace {

absl::Status CheckSymmetricParams(const SymmetricParams& p) {
  if (!IsSymmetricAlgorithm(p.algorithm)) {
    return WrongAlgorithm(p.algorithm, "an SM4 or AES mode (ECB, CBC, CTR, GCM, CCM)");
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
    if (BlockModeOf(p.algorithm) == BlockMode::kEcb && p.nonce.has_value() && !p.nonce->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ECB takes no nonce/IV, got ", p.nonce->size(), " bytes"));
    }
    if (BlockModeOf(p.algorithm) == BlockMode::kCtr && p.padding.has_value()) {
      return absl::InvalidArgumentError("padding is for ECB and CBC only, not CTR");
    }
  } else if (p.padding.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding is for ECB and CBC only, not ", AlgorithmName(p.algorithm)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SymmetricCiphertext> CryptoEngine::Encrypt(const SymmetricParams& p,
                                                          absl::string_view plaintext) const {
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> key = SymmetricKey(p.algorithm, p.key);
  if (!key.ok()) return key.status();
  SymmetricCiphertext out;
  if (IsAeadAlgorithm(p.algorithm)) {
    std::shared_ptr<const Aead> cached;
    if (p.key.kind == KeyInput::Kind::kKeyId && (p.tag_length == 0 || p.tag_length == 16)) {
      cached = FindPrimitive(keyring_aeads_, p.algorithm, "", p.key.value);
    }
    absl::StatusOr<std::shared_ptr<const Aead>> aead =
        cached != nullptr ? cached : Shared(NewAead(p.algorithm, *key, p.tag_length));
    if (!aead.ok()) return aead.status();
    if (p.nonce.has_value()) {
      out.nonce = std::string(*p.nonce);
    } else {
      absl::StatusOr<std::string> n = DrawRandom((*aead)->nonce_size());
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
      absl::StatusOr<std::string> n = DrawRandom((*cipher)->iv_size());
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

std::vector<absl::StatusOr<SymmetricCiphertext>> CryptoEngine::EncryptBatch(
    absl::Span<const SymmetricParams> params,
    absl::Span<const absl::string_view> plaintexts) const {
  std::vector<absl::StatusOr<SymmetricCiphertext>> results(params.size());
  // SM4-CBC items whose parameters and key check out gather here for the multi-buffer
  // path; the rest (and every error) go through Encrypt.
  std::vector<size_t> cbc;
  std::vector<absl::string_view> cbc_keys;
  for (size_t i = 0; i < params.size(); ++i) {
    const SymmetricParams& p = params[i];
    if (p.algorithm != Algorithm::kSm4Cbc || !CheckSymmetricParams(p).ok()) {
      results[i] = Encrypt(p, plaintexts[i]);
      continue;
    }
    absl::StatusOr<absl::string_view> key = SymmetricKey(p.algorithm, p.key);
    if (!key.ok()) {
      results[i] = key.status();
      continue;
    }
    SymmetricCiphertext out;
    if (p.nonce.has_value()) {
      out.nonce = std::string(*p.nonce);
    } else {
      absl::StatusOr<std::string> n = DrawRandom(kSm4BlockSize);
      if (!n.ok()) {
        results[i] = n.status();
        continue;
      }
      out.nonce = *std::move(n);
    }
    results[i] = std::move(out);
    cbc.push_back(i);
    cbc_keys.push_back(*key);
  }
  std::vector<Sm4CbcBatchItem> items;
  items.reserve(cbc.size());
  for (size_t j = 0; j < cbc.size(); ++j) {
    const size_t i = cbc[j];
    items.push_back(Sm4CbcBatchItem{cbc_keys[j], results[i]->nonce, plaintexts[i],
                                    params[i].padding.value_or(Padding::kPkcs7)});
  }
  std::vector<absl::StatusOr<std::string>> cts = Sm4CbcEncryptBatch(items);
  for (size_t j = 0; j < cbc.size(); ++j) {
    const size_t i = cbc[j];
    if (!cts[j].ok()) {
      results[i] = cts[j].status();
      continue;
    }
    results[i]->ciphertext = *std::move(cts[j]);
    Record(Algorithm::kSm4Cbc, Operation::kEncrypt, plaintexts[i].size());
  }
  return results;
}

absl::StatusOr<std::string> CryptoEngine::Decrypt(const SymmetricParams& p,
                                                  absl::string_view ciphertext,
                                                  absl::string_view tag) const {
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> key = SymmetricKey(p.algorithm, p.key);
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
      cached = FindPrimitive(keyring_aeads_, p.algorithm, "", p.key.value);
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
  return pt;
}

absl::StatusOr<std::unique_ptr<StreamEncryptor>> CryptoEngine::NewStreamEncryptor(
    const SymmetricParams& p) const {
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> key = SymmetricKey(p.algorithm, p.key);
  if (!key.ok()) return key.status();
  if (IsAeadAlgorithm(p.algorithm)) {
    if (p.nonce.has_value() && p.nonce->size() != kStreamNonceSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "GCM/CCM stream nonce must be 12 bytes, got ", p.nonce->size()));
    }
    absl::StatusOr<std::unique_ptr<Aead>> aead = NewAead(p.algorithm, *key, p.tag_length);
    if (!aead.ok()) return aead.status();
    std::string nonce;
    if (p.nonce.has_value()) {
      nonce = std::string(*p.nonce);
    } else {
      absl::StatusOr<std::string> n = DrawRandom(kStreamNonceSize);
      if (!n.ok()) return n.status();
      nonce = *std::move(n);
    }
    return std::unique_ptr<StreamEncryptor>(new CountingStreamEncryptor(
        std::make_unique<AeadStreamEncryptor>(*std::move(aead), std::move(nonce),
                                              std::string(p.aad)),
        p.algorithm, observer_));
  }
  const BlockMode mode = BlockModeOf(p.algorithm);
  const bool padded = mode != BlockMode::kCtr && p.padding.value_or(Padding::kPkcs7) == Padding::kPkcs7;
  absl::StatusOr<std::unique_ptr<Cipher>> bulk = NewCipher(p.algorithm, *key, Padding::kNone);
  if (!bulk.ok()) return bulk.status();
  absl::StatusOr<std::unique_ptr<Cipher>> last = NewCipher(p.algorithm, *key, Padding::kPkcs7);
  if (!last.ok()) return last.status();
  std::string iv;
  if (p.nonce.has_value()) {
    iv = std::string(*p.nonce);
  } else {
    absl::StatusOr<std::string> n = DrawRandom((*bulk)->iv_size());
    if (!n.ok()) return n.status();
    iv = *std::move(n);
  }
  if (iv.size() != (*bulk)->iv_size()) {
    return absl::InvalidArgumentError(absl::StrCat("nonce must be ", (*bulk)->iv_size(),
                                                   " bytes for ", AlgorithmName(p.algorithm),
                                                   ", got ", iv.size()));
  }
  return std::unique_ptr<StreamEncryptor>(new CountingStreamEncryptor(
      std::make_unique<BlockStreamEncryptor>(mode, *std::move(bulk), *std::move(last),
                                             std::move(iv), padded),
      p.algorithm, observer_));
}

absl::StatusOr<std::unique_ptr<StreamDecryptor>> CryptoEngine::NewStreamDecryptor(
    const SymmetricParams& p) const {
  absl::Status s = CheckSymmetricParams(p);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> key = SymmetricKey(p.algorithm, p.key);
  if (!key.ok()) return key.status();
  const std::string nonce(p.nonce.value_or(""));
  if (IsAeadAlgorithm(p.algorithm)) {
    if (nonce.size() != kStreamNonceSize) {
      return absl::InvalidArgumentError(
          absl::StrCat("GCM/CCM stream nonce must be 12 bytes, got ", nonce.size()));
    }
    const Algorithm alg = p.algorithm;
    SecretData key_copy = SecretDataFromStringView(*key);
    AeadFactory factory = [alg, key_copy = std::move(key_copy)](size_t tag_size) {
      return NewAead(alg, SecretDataAsStringView(key_copy), tag_size);
    };
    return std::unique_ptr<StreamDecryptor>(new CountingStreamDecryptor(
        std::make_unique<AeadStreamDecryptor>(std::move(factory), nonce, std::string(p.aad)),
        alg, observer_));
  }
  const BlockMode mode = BlockModeOf(p.algorithm);
  const bool padded = mode != BlockMode::kCtr && p.padding.value_or(Padding::kPkcs7) == Padding::kPkcs7;
  absl::StatusOr<std::unique_ptr<Cipher>> bulk = NewCipher(p.algorithm, *key, Padding::kNone);
  if (!bulk.ok()) return bulk.status();
  absl::StatusOr<std::unique_ptr<Cipher>> last = NewCipher(p.algorithm, *key, Padding::kPkcs7);
  if (!last.ok()) return last.status();
  if (nonce.size() != (*bulk)->iv_size()) {
    return absl::InvalidArgumentError(absl::StrCat("nonce must be ", (*bulk)->iv_size(),
                                                   " bytes for ", AlgorithmName(p.algorithm),
                                                   ", got ", nonce.size()));
  }
  return std::unique_ptr<StreamDecryptor>(new CountingStreamDecryptor(
      std::make_unique<BlockStreamDecryptor>(mode, *std::move(bulk), *std::move(last), nonce,
                                             padded),
      p.algorithm, observer_));
}

// ---- Public-key encryption ---------------------------------------------------------

absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> CryptoEngine::EncrypterFor(
    Algorithm alg, const KeyInput& key, Sm2CiphertextFormat format) const {
  if (!IsPublicKeyEncryptionAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, RSA-2048-OAEP or RSA-3072-OAEP");
  }
  absl::StatusOr<absl::string_view> k = PublicKey(alg, key);
  if (!k.ok()) return k.status();
  PublicKeyEncryptionOptions options;
  options.sm2_format = format;
  if (key.kind == KeyInput::Kind::kKeyId) {
    std::shared_ptr<const smcrypt::PublicKeyEncrypt> cached =
        FindPrimitive(keyring_encrypters_, alg, FormatVariant(format), key.value);
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
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> enc =
      EncrypterFor(alg, key, format);
  if (!enc.ok()) return enc.status();
  absl::StatusOr<std::string> ct = (*enc)->Encrypt(plaintext);
  if (ct.ok()) Record(alg, Operation::kEncrypt, plaintext.size());
  return ct;
}

std::vector<absl::StatusOr<std::string>> CryptoEngine::PublicKeyEncryptBatch(
    absl::Span<const PublicKeyEncryptItem> items) const {
  std::vector<absl::StatusOr<std::string>> out(
      items.size(), absl::InternalError("PublicKeyEncryptBatch item not run"));
  std::vector<absl::string_view> plaintexts;
  for (const std::vector<size_t>& group :
       GroupItems(items, [](const PublicKeyEncryptItem& it) {
         return std::make_tuple(it.algorithm, it.key.kind, it.key.value, it.format);
       })) {
    const PublicKeyEncryptItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> enc =
        EncrypterFor(first.algorithm, first.key, first.format);
    if (!enc.ok()) {
      for (size_t i : group) out[i] = enc.status();
      continue;
    }
    plaintexts.clear();
    for (size_t i : group) plaintexts.push_back(items[i].plaintext);
    std::vector<absl::StatusOr<std::string>> cts =
        group.size() == 1
            ? std::vector<absl::StatusOr<std::string>>{(*enc)->Encrypt(plaintexts[0])}
            : (*enc)->EncryptMany(plaintexts);
    if (cts.size() != group.size()) {
      for (size_t i : group) {
        out[i] = ManyMismatch("PublicKeyEncrypt::EncryptMany", cts.size(), group.size());
      }
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      if (cts[j].ok()) Record(first.algorithm, Operation::kEncrypt, plaintexts[j].size());
      out[group[j]] = std::move(cts[j]);
    }
  }
  return out;
}

absl::StatusOr<std::string> CryptoEngine::PublicKeyDecrypt(Algorithm alg, const KeyInput& key,
                                                           absl::string_view ciphertext,
                                                           Sm2CiphertextFormat format) const {
  if (!IsPublicKeyEncryptionAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, RSA-2048-OAEP or RSA-3072-OAEP");
  }
  absl::StatusOr<absl::string_view> k = PrivateKey(alg, key);
  if (!k.ok()) return k.status();
  PublicKeyEncryptionOptions options;
  options.sm2_format = format;
  std::shared_ptr<const smcrypt::PublicKeyDecrypt> cached;
  if (key.kind == KeyInput::Kind::kKeyId) {
    cached = FindPrimitive(keyring_decrypters_, alg, FormatVariant(format), key.value);
  }
  // An inline private key is parsed for this request only and never cached.
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyDecrypt>> dec =
      cached != nullptr ? cached : Shared(NewPublicKeyDecrypt(alg, *k, options));
  if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, key), key);
  absl::StatusOr<std::string> pt = (*dec)->Decrypt(ciphertext);
  if (pt.ok()) Record(alg, Operation::kDecrypt, ciphertext.size());
  return pt;
}

// ---- Hybrid encryption -------------------------------------------------------------

namespace {

HpkeSuite SuiteOf(Algorithm alg) {
  return alg == Algorithm::kHpkeP256Sha256Aes128Gcm ? HpkeSuite::kP256Sha256Aes128Gcm
                                                   : HpkeSuite::kSm2Sm3Sm4Gcm;
}

absl::Status CheckHybridAlgorithm(Algorithm alg) {
  if (!IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "HPKE-SM2-SM3-SM4GCM or HPKE-P256-SHA256-AES128GCM");
  }
  return absl::OkStatus();
}

// HpkePublicPoint returns the 65-byte point of a recipient key already accepted by
// NewHybridEncrypt (which gives the errors for bad keys).
absl::StatusOr<std::string> HpkePublicPoint(HpkeSuite suite, absl::string_view key) {
  if (suite == HpkeSuite::kP256Sha256Aes128Gcm) return P256PublicPointFromKey(key);
  if ((key.size() == kSm2PointSize && key[0] == 0x04) ||
      (key.size() == kSm2CompressedPointSize && (key[0] == 0x02 || key[0] == 0x03))) {
    absl::StatusOr<Sm2PublicKey> pk = Sm2PublicKey::FromPoint(key);
    if (!pk.ok()) return pk.status();
    return pk->ToPoint();
  }
  absl::StatusOr<KeyBytes> der = UnwrapKey(key);
  if (!der.ok()) return der.status();
  absl::StatusOr<Sm2PublicKey> pk = Sm2PublicKeyFromSpki(SecretDataAsStringView(der->bytes));
  if (!pk.ok()) return pk.status();
  return pk->ToPoint();
}

// HpkePrivateScalar returns the 32-byte scalar of a private key already accepted by
// NewHybridDecrypt. A 32-byte input is the raw scalar (decided by length alone).
absl::StatusOr<SecretData> HpkePrivateScalar(HpkeSuite suite, absl::string_view key) {
  if (suite == HpkeSuite::kP256Sha256Aes128Gcm) return P256PrivateScalarFromKey(key);
  if (key.size() == kSm2ScalarSize) {
    absl::StatusOr<Sm2PrivateKey> sk = Sm2PrivateKey::FromScalar(key);
    if (!sk.ok()) return sk.status();
    return sk->ToScalar();
  }
  absl::StatusOr<KeyBytes> der = UnwrapKey(key);
  if (!der.ok()) return der.status();
  absl::StatusOr<Sm2PrivateKey> sk = Sm2PrivateKeyFromPkcs8(SecretDataAsStringView(der->bytes));
  if (!sk.ok()) return sk.status();
  return sk->ToScalar();
}

std::string ChunkAad(absl::string_view header, uint8_t flag, absl::string_view aad) {
  std::string out;
  out.reserve(header.size() + 1 + aad.size());
  out.append(header.data(), header.size());
  out.push_back(static_cast<char>(flag));
  out.append(aad.data(), aad.size());
  return out;
}

class HpkeStreamEncryptor final : public HybridStreamEncryptor {
 public:
  HpkeStreamEncryptor(Algorithm alg, std::string prefix, std::unique_ptr<HpkeContext> ctx,
                      std::string aad, EngineObserver* observer)
      : alg_(alg), prefix_(std::move(prefix)), ctx_(std::move(ctx)), aad_(std::move(aad)),
        observer_(observer) {}

  absl::string_view prefix() const override { return prefix_; }

  absl::StatusOr<std::string> Update(absl::string_view plaintext) override {
    if (plaintext.size() > kHybridMaxChunkSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hybrid stream chunk: expected at most ", kHybridMaxChunkSize,
          " bytes of plaintext per message, got ", plaintext.size()));
    }
    if (plaintext.empty()) return std::string();
    return Seal(kHybridChunkFlagMore, plaintext);
  }

  absl::StatusOr<std::string> Finish() override { return Seal(kHybridChunkFlagFinal, ""); }

 private:
  absl::StatusOr<std::string> Seal(uint8_t flag, absl::string_view plaintext) {
    // Room is always kept for the final chunk.
    if (flag == kHybridChunkFlagMore && ctx_->sequence_number() + 1 >= kHybridMaxChunks) {
      return absl::InvalidArgumentError(
          absl::StrCat("hybrid stream: more than ", ReadableCount(kHybridMaxChunks), " chunks"));
    }
    absl::StatusOr<std::string> ct = ctx_->Seal(
        ChunkAad(absl::string_view(prefix_).substr(0, kHpkeWireHeaderSize), flag, aad_),
        plaintext);
    if (!ct.ok()) return ct.status();
    std::string out;
    out.reserve(kHybridChunkHeaderSize + ct->size());
    out.push_back(static_cast<char>(flag));
    const uint32_t n = static_cast<uint32_t>(ct->size());
    out.push_back(static_cast<char>(n >> 24));
    out.push_back(static_cast<char>(n >> 16));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n));
    out.append(*ct);
    if (observer_ != nullptr && !plaintext.empty()) {
      observer_->OnBytesProcessed(alg_, Operation::kEncrypt, plaintext.size());
    }
    return out;
  }

  const Algorithm alg_;
  const std::string prefix_;  // header ‖ enc
  std::unique_ptr<HpkeContext> ctx_;
  const std::string aad_;
  EngineObserver* observer_;
};

class HpkeStreamDecryptor final : public HybridStreamDecryptor {
 public:
  HpkeStreamDecryptor(Algorithm alg, SecretData sk, std::string info, std::string aad,
                      EngineObserver* observer)
      : alg_(alg), suite_(SuiteOf(alg)), header_(HpkeWireHeader(suite_)), sk_(std::move(sk)),
        info_(std::move(info)), aad_(std::move(aad)), observer_(observer) {}

  absl::StatusOr<std::string> Update(absl::string_view data) override {
    if (done_ && !data.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hybrid stream: ", data.size(), " bytes after the final chunk"));
    }
    buffer_.append(data.data(), data.size());
    std::string plaintext;
    size_t pos = 0;
    if (ctx_ == nullptr) {
      if (buffer_.size() < kHpkeWireHeaderSize + kHpkeEncSize) return plaintext;
      absl::Status s = CheckHeader(absl::string_view(buffer_).substr(0, kHpkeWireHeaderSize));
      if (!s.ok()) return s;
      absl::StatusOr<std::unique_ptr<HpkeContext>> ctx = HpkeContext::SetupBaseR(
          suite_, absl::string_view(buffer_).substr(kHpkeWireHeaderSize, kHpkeEncSize),
          SecretDataAsStringView(sk_), info_);
      if (!ctx.ok()) {
        // An enc that is not a valid point is tampering like any other.
        if (ctx.status().code() == absl::StatusCode::kInvalidArgument) {
          return absl::InvalidArgumentError("decryption failed");
        }
        return ctx.status();
      }
      ctx_ = *std::move(ctx);
      pos = kHpkeWireHeaderSize + kHpkeEncSize;
    }
    while (!done_ && buffer_.size() - pos >= kHybridChunkHeaderSize) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(buffer_.data()) + pos;
      const uint8_t flag = p[0];
      const uint32_t n = (uint32_t{p[1]} << 24) | (uint32_t{p[2]} << 16) |
                         (uint32_t{p[3]} << 8) | uint32_t{p[4]};
      if (flag != kHybridChunkFlagMore && flag != kHybridChunkFlagFinal) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "hybrid stream chunk %d: flag: expected 0x00 or 0x01, got 0x%02x",
            ctx_->sequence_number(), flag));
      }
      if (n < kHpkeTagSize || n > kHybridMaxChunkSize + kHpkeTagSize) {
        return absl::InvalidArgumentError(absl::StrCat(
            "hybrid stream chunk ", ctx_->sequence_number(), ": length: expected ",
            kHpkeTagSize, " to ", kHybridMaxChunkSize + kHpkeTagSize, ", got ", n));
      }
      if (buffer_.size() - pos - kHybridChunkHeaderSize < n) break;
      if (flag == kHybridChunkFlagMore && ctx_->sequence_number() + 1 >= kHybridMaxChunks) {
        return absl::InvalidArgumentError(
            absl::StrCat("hybrid stream: more than ", ReadableCount(kHybridMaxChunks), " chunks"));
      }
      absl::StatusOr<std::string> pt = ctx_->Open(
          ChunkAad(header_, flag, aad_),
          absl::string_view(buffer_).substr(pos + kHybridChunkHeaderSize, n));
      if (!pt.ok()) return pt.status();
      if (observer_ != nullptr) observer_->OnBytesProcessed(alg_, Operation::kDecrypt, n);
      plaintext.append(*pt);
      SecureZero(pt->data(), pt->size());
      pos += kHybridChunkHeaderSize + n;
      if (flag == kHybridChunkFlagFinal) done_ = true;
    }
    buffer_.erase(0, pos);
    if (done_ && !buffer_.empty()) {
      SecureZero(plaintext.data(), plaintext.size());
      return absl::InvalidArgumentError(absl::StrCat(
          "hybrid stream: ", buffer_.size(), " bytes after the final chunk"));
    }
    return plaintext;
  }

  absl::Status Finish() override {
    if (done_) return absl::OkStatus();
    if (ctx_ == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hybrid stream: expected at least ", kHpkeWireHeaderSize + kHpkeEncSize,
          " bytes (header and enc), got ", buffer_.size()));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "hybrid stream truncated: ended after ", ctx_->sequence_number(),
        " chunks without the final chunk (", buffer_.size(), " bytes of an incomplete chunk)"));
  }

 private:
  absl::Status CheckHeader(absl::string_view got) const {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(got.data());
    if (p[0] != kHpkeWireFormatVersion) {
      return absl::InvalidArgumentError(
          absl::StrFormat("hybrid stream: format version: expected 0x%02x, got 0x%02x",
                          kHpkeWireFormatVersion, p[0]));
    }
    const HpkeSuiteIds ids = GetHpkeSuiteIds(suite_);
    const uint16_t want[3] = {ids.kem_id, ids.kdf_id, ids.aead_id};
    const char* names[3] = {"kem_id", "kdf_id", "aead_id"};
    for (int i = 0; i < 3; ++i) {
      const uint16_t v = static_cast<uint16_t>((p[1 + 2 * i] << 8) | p[2 + 2 * i]);
      if (v != want[i]) {
        return absl::InvalidArgumentError(
            absl::StrFormat("hybrid stream: %s: expected 0x%04x (%s), got 0x%04x", names[i],
                            want[i], HpkeSuiteName(suite_), v));
      }
    }
    return absl::OkStatus();
  }

  const Algorithm alg_;
  const HpkeSuite suite_;
  const std::string header_;
  const SecretData sk_;
  const std::string info_;
  const std::string aad_;
  EngineObserver* observer_;
  std::unique_ptr<HpkeContext> ctx_;
  std::string buffer_;  // ciphertext not yet opened
  bool done_ = false;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> CryptoEngine::HybridEncrypterFor(
    Algorithm alg, const KeyInput& key) const {
  absl::Status s = CheckHybridAlgorithm(alg);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PublicKey(alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const smcrypt::HybridEncrypt> cached;
  if (key.kind == KeyInput::Kind::kKeyId) {
    cached = FindPrimitive(keyring_hybrid_encrypters_, alg, "", key.value);
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
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> enc = HybridEncrypterFor(alg, key);
  if (!enc.ok()) return enc.status();
  absl::StatusOr<std::string> ct = (*enc)->Encrypt(plaintext, info);
  if (ct.ok()) Record(alg, Operation::kEncrypt, plaintext.size());
  return ct;
}

std::vector<absl::StatusOr<std::string>> CryptoEngine::HybridEncryptBatch(
    absl::Span<const HybridEncryptItem> items) const {
  std::vector<absl::StatusOr<std::string>> out(
      items.size(), absl::InternalError("HybridEncryptBatch item not run"));
  // Groups of items with the same algorithm and key (kind and value: a key_id or the
  // inline key bytes), in order of first appearance; the key is resolved once per group,
  // so its error (the same for every item of the group) is HybridEncrypt's.
  using GroupKey = std::tuple<Algorithm, KeyInput::Kind, absl::string_view>;
  absl::flat_hash_map<GroupKey, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < items.size(); ++i) {
    const HybridEncryptItem& it = items[i];
    auto [pos, inserted] =
        group_of.try_emplace(GroupKey(it.algorithm, it.key.kind, it.key.value), groups.size());
    if (inserted) groups.emplace_back();
    groups[pos->second].push_back(i);
  }
  std::vector<HybridEncryptInput> inputs;
  for (const std::vector<size_t>& group : groups) {
    const HybridEncryptItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> enc =
        HybridEncrypterFor(first.algorithm, first.key);
    if (!enc.ok()) {
      for (size_t i : group) out[i] = enc.status();
      continue;
    }
    inputs.clear();
    for (size_t i : group) inputs.push_back({items[i].plaintext, items[i].info});
    std::vector<absl::StatusOr<std::string>> cts = (*enc)->EncryptMany(inputs);
    if (cts.size() != group.size()) {  // a broken EncryptMany must not shift results
      for (size_t i : group) {
        out[i] = absl::InternalError(absl::StrCat("HybridEncrypt::EncryptMany returned ",
                                                  cts.size(), " results for ", group.size(),
                                                  " inputs"));
      }
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      const HybridEncryptItem& it = items[group[j]];
      if (cts[j].ok()) Record(it.algorithm, Operation::kEncrypt, it.plaintext.size());
      out[group[j]] = std::move(cts[j]);
    }
  }
  return out;
}

absl::StatusOr<std::string> CryptoEngine::HybridDecrypt(Algorithm alg, const KeyInput& key,
                                                        absl::string_view ciphertext,
                                                        absl::string_view info) const {
  absl::Status s = CheckHybridAlgorithm(alg);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PrivateKey(alg, key);
  if (!k.ok()) return k.status();
  std::shared_ptr<const smcrypt::HybridDecrypt> cached;
  if (key.kind == KeyInput::Kind::kKeyId) {
    cached = FindPrimitive(keyring_hybrid_decrypters_, alg, "", key.value);
  }
  // An inline private key is parsed for this request only and never cached.
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridDecrypt>> dec =
      cached != nullptr ? cached : Shared(NewHybridDecrypt(alg, *k));
  if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, key), key);
  absl::StatusOr<std::string> pt = (*dec)->Decrypt(ciphertext, info);
  if (pt.ok()) Record(alg, Operation::kDecrypt, ciphertext.size());
  return pt;
}

absl::StatusOr<std::unique_ptr<HybridStreamEncryptor>> CryptoEngine::NewHybridStreamEncryptor(
    const HybridStreamParams& p) const {
  absl::Status s = CheckHybridAlgorithm(p.algorithm);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PublicKey(p.algorithm, p.key);
  if (!k.ok()) return k.status();
  // NewHybridEncrypt validates the key and gives the errors for bad ones.
  absl::StatusOr<std::unique_ptr<smcrypt::HybridEncrypt>> check = NewHybridEncrypt(p.algorithm, *k);
  if (!check.ok()) return NameInlineKey(check.status(), p.key);
  const HpkeSuite suite = SuiteOf(p.algorithm);
  absl::StatusOr<std::string> point = HpkePublicPoint(suite, *k);
  if (!point.ok()) return point.status();
  absl::StatusOr<HpkeContext::Sender> sender = HpkeContext::SetupBaseS(suite, *point, p.info);
  if (!sender.ok()) return sender.status();
  std::string prefix = absl::StrCat(HpkeWireHeader(suite), sender->enc);
  return std::unique_ptr<HybridStreamEncryptor>(
      new HpkeStreamEncryptor(p.algorithm, std::move(prefix), std::move(sender->context),
                              std::string(p.aad), observer_));
}

absl::StatusOr<std::unique_ptr<HybridStreamDecryptor>> CryptoEngine::NewHybridStreamDecryptor(
    const HybridStreamParams& p) const {
  absl::Status s = CheckHybridAlgorithm(p.algorithm);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PrivateKey(p.algorithm, p.key);
  if (!k.ok()) return k.status();
  absl::StatusOr<std::unique_ptr<smcrypt::HybridDecrypt>> check =
      NewHybridDecrypt(p.algorithm, *k);
  if (!check.ok()) {
    return NameInlineKey(ExplainPrivateKeyError(check.status(), p.algorithm, p.key), p.key);
  }
  absl::StatusOr<SecretData> sk = HpkePrivateScalar(SuiteOf(p.algorithm), *k);
  if (!sk.ok()) return sk.status();
  return std::unique_ptr<HybridStreamDecryptor>(new HpkeStreamDecryptor(
      p.algorithm, *std::move(sk), std::string(p.info), std::string(p.aad), observer_));
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
  if (!IsSignatureAlgorithm(alg) && !IsPublicKeyEncryptionAlgorithm(alg) &&
      !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "a public-key algorithm (SM2, ECDSA-*, RSA-*, HPKE-*)");
  }
  if (key.kind == KeyInput::Kind::kKeyId) {
    absl::StatusOr<const StoredKey*> entry = KeyringEntry(alg, key.value);
    if (!entry.ok()) return entry.status();
    return (*entry)->public_key_der;
  }
  absl::StatusOr<absl::string_view> k = PrivateKey(alg, key);
  if (!k.ok()) return k.status();
  absl::StatusOr<std::string> pub = PublicKeyFromPrivate(alg, *k);
  if (!pub.ok()) return NameInlineKey(ExplainPrivateKeyError(pub.status(), alg, key), key);
  return pub;
}

absl::StatusOr<std::string> CryptoEngine::GenerateRandom(size_t length) const {
  if (length == 0 || length > kMaxRandomBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("length must be 1 to ", kMaxRandomBytes, " bytes, got ", length));
  }
  return DrawRandom(length);
}

}  // namespace smcrypt::server
