// hpke_stream.cc — the HPKE stream framing of smcrypt/streaming.h (RFC 9180 base mode,
// one context per stream, chunk i sealed at sequence number i).
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/readable_count.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/streaming.h"

namespace smcrypt {
namespace {

absl::Status TooManyChunks() {
  return absl::InvalidArgumentError(
      absl::StrCat("hybrid stream: more than ", ReadableCount(kHpkeStreamMaxChunks), " chunks"));
}

uint32_t LoadBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

std::string HpkeStreamChunkAad(absl::string_view header, uint8_t flag, absl::string_view aad) {
  std::string out;
  out.reserve(header.size() + 1 + aad.size());
  out.append(header.data(), header.size());
  out.push_back(static_cast<char>(flag));
  out.append(aad.data(), aad.size());
  return out;
}

absl::Status CheckHpkeStreamHeader(HpkeSuite suite, absl::string_view header) {
  if (header.size() != kHpkeWireHeaderSize) {
    return absl::InvalidArgumentError(absl::StrCat("hybrid stream: header: expected ",
                                                   kHpkeWireHeaderSize, " bytes, got ",
                                                   header.size()));
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(header.data());
  if (p[0] != kHpkeWireFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrFormat("hybrid stream: format version: expected 0x%02x, got 0x%02x",
                        kHpkeWireFormatVersion, p[0]));
  }
  const HpkeSuiteIds ids = GetHpkeSuiteIds(suite);
  const uint16_t want[3] = {ids.kem_id, ids.kdf_id, ids.aead_id};
  const char* names[3] = {"kem_id", "kdf_id", "aead_id"};
  for (int i = 0; i < 3; ++i) {
    const uint16_t v = static_cast<uint16_t>((p[1 + 2 * i] << 8) | p[2 + 2 * i]);
    if (v != want[i]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("hybrid stream: %s: expected 0x%04x (%s), got 0x%04x", names[i],
                          want[i], HpkeSuiteName(suite), v));
    }
  }
  return absl::OkStatus();
}

// ---- Encryptor ---------------------------------------------------------------------

HpkeStreamEncryptor::HpkeStreamEncryptor(std::string prefix, std::unique_ptr<HpkeContext> ctx,
                                         std::string aad)
    : prefix_(std::move(prefix)), ctx_(std::move(ctx)), aad_(std::move(aad)) {}

absl::StatusOr<std::unique_ptr<HpkeStreamEncryptor>> HpkeStreamEncryptor::New(
    HpkeSuite suite, absl::string_view recipient_public_key, absl::string_view info,
    absl::string_view aad) {
  absl::StatusOr<std::string> pk_r = HpkeParsePublicKey(suite, recipient_public_key);
  if (!pk_r.ok()) return pk_r.status();
  absl::StatusOr<HpkeContext::Sender> sender = HpkeContext::SetupBaseS(suite, *pk_r, info);
  if (!sender.ok()) return sender.status();
  std::string prefix = absl::StrCat(HpkeWireHeader(suite), sender->enc);
  return std::unique_ptr<HpkeStreamEncryptor>(new HpkeStreamEncryptor(
      std::move(prefix), std::move(sender->context), std::string(aad)));
}

absl::StatusOr<std::string> HpkeStreamEncryptor::Update(absl::string_view plaintext) {
  if (plaintext.size() > kHpkeStreamMaxChunkSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hybrid stream chunk: expected at most ", kHpkeStreamMaxChunkSize,
        " bytes of plaintext per message, got ", plaintext.size()));
  }
  if (plaintext.empty()) return std::string();
  return Seal(kHpkeStreamFlagMore, plaintext);
}

absl::StatusOr<std::string> HpkeStreamEncryptor::Finish() {
  return Seal(kHpkeStreamFlagFinal, "");
}

absl::StatusOr<std::string> HpkeStreamEncryptor::Seal(uint8_t flag, absl::string_view plaintext) {
  // Room is always kept for the final chunk.
  if (flag == kHpkeStreamFlagMore && ctx_->sequence_number() + 1 >= kHpkeStreamMaxChunks) {
    return TooManyChunks();
  }
  absl::StatusOr<std::string> ct = ctx_->Seal(
      HpkeStreamChunkAad(absl::string_view(prefix_).substr(0, kHpkeWireHeaderSize), flag, aad_),
      plaintext);
  if (!ct.ok()) return ct.status();
  std::string out;
  out.reserve(kHpkeStreamChunkHeaderSize + ct->size());
  out.push_back(static_cast<char>(flag));
  const uint32_t n = static_cast<uint32_t>(ct->size());
  out.push_back(static_cast<char>(n >> 24));
  out.push_back(static_cast<char>(n >> 16));
  out.push_back(static_cast<char>(n >> 8));
  out.push_back(static_cast<char>(n));
  out.append(*ct);
  return out;
}

// ---- Decryptor ---------------------------------------------------------------------

HpkeStreamDecryptor::HpkeStreamDecryptor(HpkeSuite suite, SecretData sk, std::string info,
                                         std::string aad)
    : suite_(suite), header_(HpkeWireHeader(suite)), sk_(std::move(sk)), info_(std::move(info)),
      aad_(std::move(aad)) {}

absl::StatusOr<std::unique_ptr<HpkeStreamDecryptor>> HpkeStreamDecryptor::New(
    HpkeSuite suite, absl::string_view recipient_private_key, absl::string_view info,
    absl::string_view aad) {
  absl::StatusOr<SecretData> sk = HpkeParsePrivateKey(suite, recipient_private_key);
  if (!sk.ok()) return sk.status();
  return std::unique_ptr<HpkeStreamDecryptor>(
      new HpkeStreamDecryptor(suite, *std::move(sk), std::string(info), std::string(aad)));
}

absl::StatusOr<std::string> HpkeStreamDecryptor::Update(absl::string_view data) {
  if (done_ && !data.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("hybrid stream: ", data.size(), " bytes after the final chunk"));
  }
  buffer_.append(data.data(), data.size());
  std::string plaintext;
  size_t pos = 0;
  if (ctx_ == nullptr) {
    if (buffer_.size() < kHpkeStreamPrefixSize) return plaintext;
    absl::Status s =
        CheckHpkeStreamHeader(suite_, absl::string_view(buffer_).substr(0, kHpkeWireHeaderSize));
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
    pos = kHpkeStreamPrefixSize;
  }
  while (!done_ && buffer_.size() - pos >= kHpkeStreamChunkHeaderSize) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(buffer_.data()) + pos;
    const uint8_t flag = p[0];
    const uint32_t n = LoadBe32(p + 1);
    if (flag != kHpkeStreamFlagMore && flag != kHpkeStreamFlagFinal) {
      return absl::InvalidArgumentError(
          absl::StrFormat("hybrid stream chunk %d: flag: expected 0x00 or 0x01, got 0x%02x",
                          ctx_->sequence_number(), flag));
    }
    if (n < kHpkeTagSize || n > kHpkeStreamMaxChunkSize + kHpkeTagSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hybrid stream chunk ", ctx_->sequence_number(), ": length: expected ", kHpkeTagSize,
          " to ", kHpkeStreamMaxChunkSize + kHpkeTagSize, ", got ", n));
    }
    if (buffer_.size() - pos - kHpkeStreamChunkHeaderSize < n) break;
    if (flag == kHpkeStreamFlagMore && ctx_->sequence_number() + 1 >= kHpkeStreamMaxChunks) {
      return TooManyChunks();
    }
    absl::StatusOr<std::string> pt =
        ctx_->Open(HpkeStreamChunkAad(header_, flag, aad_),
                   absl::string_view(buffer_).substr(pos + kHpkeStreamChunkHeaderSize, n));
    if (!pt.ok()) {
      SecureZero(plaintext.data(), plaintext.size());
      return pt.status();
    }
    opened_ += n;
    plaintext.append(*pt);
    SecureZero(pt->data(), pt->size());
    pos += kHpkeStreamChunkHeaderSize + n;
    if (flag == kHpkeStreamFlagFinal) done_ = true;
  }
  buffer_.erase(0, pos);
  if (done_ && !buffer_.empty()) {
    SecureZero(plaintext.data(), plaintext.size());
    return absl::InvalidArgumentError(
        absl::StrCat("hybrid stream: ", buffer_.size(), " bytes after the final chunk"));
  }
  return plaintext;
}

absl::Status HpkeStreamDecryptor::Finish() {
  if (done_) return absl::OkStatus();
  if (ctx_ == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("hybrid stream: expected at least ",
                                                   kHpkeStreamPrefixSize,
                                                   " bytes (header and enc), got ",
                                                   buffer_.size()));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "hybrid stream truncated: ended after ", ctx_->sequence_number(),
      " chunks without the final chunk (", buffer_.size(), " bytes of an incomplete chunk)"));
}

}  // namespace smcrypt
