// aead_stream.cc — the segmented AEAD stream (STREAM, Hoang–Reyhanitabar–Rogaway–Vizár)
// of smcrypt/streaming.h.
#include <utility>

#include "absl/strings/str_cat.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/streaming.h"

namespace smcrypt {
namespace {

constexpr char kTooManySegments[] = "stream has more than 2^32 - 1 segments";

class AeadStreamEncryptor final : public StreamEncryptor {
 public:
  AeadStreamEncryptor(std::unique_ptr<Aead> aead, std::string nonce, std::string aad)
      : aead_(std::move(aead)), nonce_(std::move(nonce)), aad_(std::move(aad)) {}

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
        aead_->Seal(AeadStreamSegmentNonce(nonce_, index_, last), plaintext, aad_);
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
  const std::string aad_;
  std::optional<std::string> pending_;  // the last non-empty chunk, not yet sealed
  uint32_t index_ = 0;
};

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
    if (index_ == kAeadStreamMaxSegments) return absl::InvalidArgumentError(kTooManySegments);
    absl::StatusOr<std::string> pt =
        aead_->Open(AeadStreamSegmentNonce(nonce_, index_, last), segment, aad_);
    if (!pt.ok()) return pt.status();
    ++index_;
    return StreamChunk{*std::move(pt), ""};
  }

  AeadFactory factory_;
  std::unique_ptr<Aead> aead_;  // made from the first segment's tag size
  const std::string nonce_;
  const std::string aad_;
  std::optional<std::string> pending_;  // ciphertext ‖ tag of the last segment received
  uint32_t index_ = 0;
};

}  // namespace

absl::Status CheckAeadStreamNonce(absl::string_view nonce) {
  if (nonce.size() == kAeadStreamNonceSize) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("GCM/CCM stream nonce must be 12 bytes, got ", nonce.size()));
}

std::string AeadStreamSegmentNonce(absl::string_view nonce, uint32_t index, bool last) {
  std::string n(nonce);
  n[7] ^= static_cast<char>(index >> 24);
  n[8] ^= static_cast<char>(index >> 16);
  n[9] ^= static_cast<char>(index >> 8);
  n[10] ^= static_cast<char>(index);
  n[11] ^= static_cast<char>(last ? 1 : 0);
  return n;
}

absl::StatusOr<std::unique_ptr<StreamEncryptor>> NewAeadStreamEncryptor(
    std::unique_ptr<Aead> aead, absl::string_view nonce, absl::string_view aad) {
  if (absl::Status s = CheckAeadStreamNonce(nonce); !s.ok()) return s;
  if (aead == nullptr) return absl::InvalidArgumentError("AEAD stream: no Aead");
  return std::unique_ptr<StreamEncryptor>(
      new AeadStreamEncryptor(std::move(aead), std::string(nonce), std::string(aad)));
}

absl::StatusOr<std::unique_ptr<StreamDecryptor>> NewAeadStreamDecryptor(
    AeadFactory factory, absl::string_view nonce, absl::string_view aad) {
  if (absl::Status s = CheckAeadStreamNonce(nonce); !s.ok()) return s;
  if (!factory) return absl::InvalidArgumentError("AEAD stream: no Aead factory");
  return std::unique_ptr<StreamDecryptor>(
      new AeadStreamDecryptor(std::move(factory), std::string(nonce), std::string(aad)));
}

}  // namespace smcrypt
