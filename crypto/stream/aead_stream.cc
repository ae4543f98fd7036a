// aead_stream.cc — the segmented AEAD stream (STREAM, Hoang–Reyhanitabar–Rogaway–Vizár)
// of smcrypt/streaming.h.
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/openssl/hkdf_openssl.h"
#include "smcrypt/registry.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm3.h"
#include "smcrypt/streaming.h"

namespace smcrypt {
namespace {

constexpr char kTooManySegments[] = "stream has more than 2^32 - 1 segments";

class AeadStreamEncryptor final : public StreamEncryptor {
 public:
  // `aead` is keyed with the stream key K_N, which binds the nonce and the aad.
  AeadStreamEncryptor(std::unique_ptr<Aead> aead, std::string nonce)
      : aead_(std::move(aead)), nonce_(std::move(nonce)) {}

  ~AeadStreamEncryptor() override {
    if (pending_.has_value()) SecureZero(pending_->data(), pending_->size());
  }

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

 private:
  absl::StatusOr<StreamChunk> Seal(absl::string_view plaintext, bool last) {
    if (index_ == kAeadStreamMaxSegments) return absl::InvalidArgumentError(kTooManySegments);
    absl::StatusOr<std::string> ct =
        aead_->Seal(AeadStreamSegmentNonce(index_, last), plaintext, "");
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
  const std::string nonce_;
  std::optional<std::string> pending_;  // the last non-empty chunk, not yet sealed
  uint32_t index_ = 0;
};

class AeadStreamDecryptor final : public StreamDecryptor {
 public:
  AeadStreamDecryptor(Algorithm alg, SecretData stream_key)
      : alg_(alg), stream_key_(std::move(stream_key)) {}

  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view ciphertext,
                                                    absl::string_view tag) override {
    if (ciphertext.empty() && tag.empty()) return std::nullopt;
    if (tag.empty()) {
      return absl::InvalidArgumentError("every GCM/CCM stream segment needs its tag");
    }
    if (aead_ == nullptr) {
      absl::StatusOr<std::unique_ptr<Aead>> aead =
          NewAead(alg_, SecretDataAsStringView(stream_key_), tag.size());
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
    if (index_ == kAeadStreamMaxSegments) return absl::InvalidArgumentError(kTooManySegments);
    absl::StatusOr<std::string> pt =
        aead_->Open(AeadStreamSegmentNonce(index_, last), segment, "");
    if (!pt.ok()) return pt.status();
    ++index_;
    return StreamChunk{*std::move(pt), ""};
  }

  const Algorithm alg_;
  const SecretData stream_key_;  // K_N
  std::unique_ptr<Aead> aead_;   // keyed with K_N, made from the first segment's tag size
  std::optional<std::string> pending_;  // ciphertext ‖ tag of the last segment received
  uint32_t index_ = 0;
};

}  // namespace

absl::Status CheckAeadStreamNonce(absl::string_view nonce) {
  if (nonce.size() == kAeadStreamNonceSize) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("GCM/CCM stream nonce must be 12 bytes, got ", nonce.size()));
}

std::string AeadStreamSegmentNonce(uint32_t index, bool last) {
  std::string n(kAeadStreamNonceSize, '\0');
  n[7] = static_cast<char>(index >> 24);
  n[8] = static_cast<char>(index >> 16);
  n[9] = static_cast<char>(index >> 8);
  n[10] = static_cast<char>(index);
  n[11] = static_cast<char>(last ? 1 : 0);
  return n;
}

absl::StatusOr<SecretData> AeadStreamKey(Algorithm alg, absl::string_view key,
                                         absl::string_view nonce, absl::string_view aad) {
  if (absl::Status s = CheckAeadStreamNonce(nonce); !s.ok()) return s;
  const CipherMode mode = CipherModeOf(alg);
  if (mode != CipherMode::kGcm && mode != CipherMode::kCcm) {
    return absl::InvalidArgumentError(
        absl::StrCat("AEAD stream: ", AlgorithmName(alg), " is not GCM or CCM"));
  }
  // The key is checked with NewAead's errors (algorithm, size).
  if (absl::StatusOr<std::unique_ptr<Aead>> check = NewAead(alg, key); !check.ok()) {
    return check.status();
  }
  const bool sm = alg == Algorithm::kSm4Gcm || alg == Algorithm::kSm4Ccm;
  // info = "smcrypt aead stream" ‖ 0x00 ‖ name ‖ 0x00 ‖ H(aad): the aad is hashed once per
  // stream, whatever the number of segments.
  absl::StatusOr<std::unique_ptr<Hash>> h = NewHash(sm ? Algorithm::kSm3 : Algorithm::kSha256);
  if (!h.ok()) return h.status();
  (*h)->Update(aad);
  const std::string info = absl::StrCat(kAeadStreamKeyInfo, std::string(1, '\0'),
                                        AlgorithmName(alg), std::string(1, '\0'), (*h)->Finish());
  if (!sm) {
    absl::StatusOr<SecretData> prk = HkdfSha256Extract(nonce, key);
    if (!prk.ok()) return prk.status();
    return HkdfSha256Expand(SecretDataAsStringView(*prk), info, key.size());
  }
  // HKDF-SM3 (RFC 5869 with HMAC-SM3): L = |K| ≤ 32 bytes is one block T(1).
  absl::StatusOr<std::unique_ptr<HmacSm3>> extract = HmacSm3::New(nonce);
  if (!extract.ok()) return extract.status();
  absl::StatusOr<std::string> prk = (*extract)->ComputeMac(key);
  if (!prk.ok()) return prk.status();
  absl::StatusOr<std::unique_ptr<HmacSm3>> expand = HmacSm3::New(*prk);
  SecureZero(prk->data(), prk->size());
  if (!expand.ok()) return expand.status();
  absl::StatusOr<std::string> t1 = (*expand)->ComputeMac(absl::StrCat(info, "\x01"));
  if (!t1.ok()) return t1.status();
  SecretData okm(t1->begin(), t1->begin() + static_cast<std::ptrdiff_t>(key.size()));
  SecureZero(t1->data(), t1->size());
  return okm;
}

absl::StatusOr<std::unique_ptr<StreamEncryptor>> NewAeadStreamEncryptor(
    Algorithm alg, absl::string_view key, size_t tag_size, absl::string_view nonce,
    absl::string_view aad) {
  // The caller's key and tag size are checked (NewAead's errors) before deriving.
  if (absl::StatusOr<std::unique_ptr<Aead>> check = NewAead(alg, key, tag_size); !check.ok()) {
    return check.status();
  }
  absl::StatusOr<SecretData> stream_key = AeadStreamKey(alg, key, nonce, aad);
  if (!stream_key.ok()) return stream_key.status();
  absl::StatusOr<std::unique_ptr<Aead>> aead =
      NewAead(alg, SecretDataAsStringView(*stream_key), tag_size);
  if (!aead.ok()) return aead.status();
  return std::unique_ptr<StreamEncryptor>(
      new AeadStreamEncryptor(*std::move(aead), std::string(nonce)));
}

absl::StatusOr<std::unique_ptr<StreamDecryptor>> NewAeadStreamDecryptor(
    Algorithm alg, absl::string_view key, absl::string_view nonce, absl::string_view aad) {
  if (absl::Status s = CheckAeadStreamNonce(nonce); !s.ok()) return s;
  absl::StatusOr<SecretData> stream_key = AeadStreamKey(alg, key, nonce, aad);
  if (!stream_key.ok()) return stream_key.status();
  return std::unique_ptr<StreamDecryptor>(new AeadStreamDecryptor(alg, *std::move(stream_key)));
}

}  // namespace smcrypt
