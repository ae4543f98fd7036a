// block_stream.cc — chunked ECB, CBC, CTR, CFB and OFB streams of smcrypt/streaming.h:
// the concatenated output equals the one-shot Cipher's.
#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/streaming.h"

namespace smcrypt {
namespace {

// AnyLength: CTR, CFB and OFB take data of any length (no padding); the bytes after the
// last whole block are processed by Finish.
bool AnyLength(CipherMode mode) {
  return mode == CipherMode::kCtr || mode == CipherMode::kCfb || mode == CipherMode::kOfb;
}

// BlockChain carries the state between chunks: the CBC/CFB feedback block, the CTR
// counter or the OFB output block.
struct BlockChain {
  CipherMode mode;
  // CBC, CFB: previous ciphertext block; CTR: current counter; OFB: previous output
  // block O_{i−1}; ECB: empty.
  std::string iv;

  ~BlockChain() { SecureZero(iv.data(), iv.size()); }

  absl::string_view Iv() const { return mode == CipherMode::kEcb ? "" : absl::string_view(iv); }
  // Advance moves past whole blocks of `plaintext` ↔ `ciphertext` (equal lengths).
  void Advance(absl::string_view plaintext, absl::string_view ciphertext) {
    if (mode == CipherMode::kCbc || mode == CipherMode::kCfb) {
      iv = std::string(ciphertext.substr(ciphertext.size() - kStreamBlockSize));
    } else if (mode == CipherMode::kCtr) {
      CtrAddBlocks(iv, plaintext.size() / kStreamBlockSize);
    } else if (mode == CipherMode::kOfb) {
      // C_i = P_i ⊕ O_i, so the last output block is the XOR of the last blocks.
      const size_t last = plaintext.size() - kStreamBlockSize;
      for (size_t i = 0; i < kStreamBlockSize; ++i) {
        iv[i] = static_cast<char>(plaintext[last + i] ^ ciphertext[last + i]);
      }
    }
  }
};

class BlockStreamEncryptor final : public StreamEncryptor {
 public:
  BlockStreamEncryptor(CipherMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
                       std::string iv, bool padded)
      : bulk_(std::move(bulk)), last_(std::move(last)), nonce_(iv),
        chain_{mode, std::move(iv)}, padded_(padded) {}

  ~BlockStreamEncryptor() override { SecureZero(buffer_.data(), buffer_.size()); }

  absl::string_view nonce() const override { return nonce_; }

  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view plaintext) override {
    buffer_.append(plaintext.data(), plaintext.size());
    const size_t n = buffer_.size() / kStreamBlockSize * kStreamBlockSize;
    if (n == 0) return std::nullopt;
    absl::StatusOr<std::string> out = Process(absl::string_view(buffer_).substr(0, n));
    SecureZero(buffer_.data(), n);
    buffer_.erase(0, n);
    if (!out.ok()) return out.status();
    return StreamChunk{*std::move(out), ""};
  }

  absl::StatusOr<StreamChunk> Finish() override {
    StreamChunk chunk;
    if (AnyLength(chain_.mode)) {
      absl::StatusOr<std::string> out = Process(buffer_);
      if (!out.ok()) return out.status();
      chunk.data = *std::move(out);
    } else if (padded_) {
      absl::StatusOr<std::string> out = last_->Encrypt(chain_.Iv(), buffer_);
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

 private:
  // Process encrypts whole blocks (or, for CTR, CFB and OFB at the end, the bytes
  // left, a final partial block). The chain advances only past whole blocks.
  absl::StatusOr<std::string> Process(absl::string_view in) {
    if (in.empty()) return std::string();
    absl::StatusOr<std::string> out = bulk_->Encrypt(chain_.Iv(), in);
    if (!out.ok()) return out.status();
    if (in.size() % kStreamBlockSize == 0) chain_.Advance(in, *out);
    return out;
  }

  std::unique_ptr<Cipher> bulk_;  // Padding::kNone
  std::unique_ptr<Cipher> last_;  // PKCS#7, for the final block of padded ECB/CBC
  const std::string nonce_;
  BlockChain chain_;
  const bool padded_;
  std::string buffer_;  // < 16 bytes between calls
};

class BlockStreamDecryptor final : public StreamDecryptor {
 public:
  BlockStreamDecryptor(CipherMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
                       std::string iv, bool padded)
      : bulk_(std::move(bulk)), last_(std::move(last)), chain_{mode, std::move(iv)},
        padded_(padded) {}

  absl::StatusOr<std::optional<StreamChunk>> Update(absl::string_view ciphertext,
                                                    absl::string_view tag) override {
    if (!tag.empty()) {
      return absl::InvalidArgumentError(
          "tag must be empty for ECB, CBC, CTR, CFB and OFB streams");
    }
    total_ += ciphertext.size();
    buffer_.append(ciphertext.data(), ciphertext.size());
    size_t n = buffer_.size() / kStreamBlockSize * kStreamBlockSize;
    // Padded ECB/CBC: keep the last whole block back; it carries the padding.
    if (padded_ && !AnyLength(chain_.mode) && n == buffer_.size() && n > 0) {
      n -= kStreamBlockSize;
    }
    if (n == 0) return std::nullopt;
    absl::StatusOr<std::string> out = Process(absl::string_view(buffer_).substr(0, n));
    buffer_.erase(0, n);
    if (!out.ok()) return out.status();
    return StreamChunk{*std::move(out), ""};
  }

  absl::StatusOr<StreamChunk> Finish() override {
    StreamChunk chunk;
    if (AnyLength(chain_.mode)) {
      absl::StatusOr<std::string> out = Process(buffer_);
      if (!out.ok()) return out.status();
      chunk.data = *std::move(out);
      return chunk;
    }
    if (total_ % kStreamBlockSize != 0 || (padded_ && total_ == 0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ciphertext length must be a ", padded_ ? "non-zero " : "",
          "multiple of 16 bytes, got ", total_));
    }
    if (padded_) {
      absl::StatusOr<std::string> out = last_->Decrypt(chain_.Iv(), buffer_);
      if (!out.ok()) return out.status();
      chunk.data = *std::move(out);
    }
    return chunk;
  }

 private:
  absl::StatusOr<std::string> Process(absl::string_view in) {
    if (in.empty()) return std::string();
    absl::StatusOr<std::string> out = bulk_->Decrypt(chain_.Iv(), in);
    if (!out.ok()) return out.status();
    if (in.size() % kStreamBlockSize == 0) chain_.Advance(*out, in);
    return out;
  }

  std::unique_ptr<Cipher> bulk_;
  std::unique_ptr<Cipher> last_;
  BlockChain chain_;
  const bool padded_;
  std::string buffer_;
  uint64_t total_ = 0;
};

// CheckBlockStream validates the arguments common to both directions.
absl::Status CheckBlockStream(CipherMode mode, const std::unique_ptr<Cipher>& bulk,
                              const std::unique_ptr<Cipher>& last, absl::string_view iv,
                              bool padded, absl::string_view alg_name) {
  if (mode != CipherMode::kEcb && mode != CipherMode::kCbc && !AnyLength(mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("block stream: ", alg_name, " is not ECB, CBC, CTR, CFB or OFB"));
  }
  if (bulk == nullptr || (padded && !AnyLength(mode) && last == nullptr)) {
    return absl::InvalidArgumentError("block stream: missing Cipher");
  }
  if (iv.size() != bulk->iv_size()) {
    return absl::InvalidArgumentError(absl::StrCat("nonce must be ", bulk->iv_size(),
                                                   " bytes for ", alg_name, ", got ", iv.size()));
  }
  return absl::OkStatus();
}

}  // namespace

void CtrAddBlocks(std::string& counter, uint64_t num_blocks) {
  uint64_t carry = num_blocks;
  for (size_t i = counter.size(); i-- > 0 && carry != 0;) {
    const uint64_t v = static_cast<uint8_t>(counter[i]) + (carry & 0xFF);
    counter[i] = static_cast<char>(v & 0xFF);
    carry = (carry >> 8) + (v >> 8);
  }
}

absl::StatusOr<std::unique_ptr<StreamEncryptor>> NewBlockStreamEncryptor(
    CipherMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
    absl::string_view iv, bool padded, absl::string_view alg_name) {
  absl::Status s = CheckBlockStream(mode, bulk, last, iv, padded, alg_name);
  if (!s.ok()) return s;
  return std::unique_ptr<StreamEncryptor>(new BlockStreamEncryptor(
      mode, std::move(bulk), std::move(last), std::string(iv), padded && !AnyLength(mode)));
}

absl::StatusOr<std::unique_ptr<StreamDecryptor>> NewBlockStreamDecryptor(
    CipherMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
    absl::string_view iv, bool padded, absl::string_view alg_name) {
  absl::Status s = CheckBlockStream(mode, bulk, last, iv, padded, alg_name);
  if (!s.ok()) return s;
  return std::unique_ptr<StreamDecryptor>(new BlockStreamDecryptor(
      mode, std::move(bulk), std::move(last), std::string(iv), padded && !AnyLength(mode)));
}

}  // namespace smcrypt
