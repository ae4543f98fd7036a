// block_stream.cc — chunked ECB, CBC and CTR streams of smcrypt/streaming.h: the
// concatenated output equals the one-shot Cipher's.
#include <utility>

#include "absl/strings/str_cat.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/streaming.h"

namespace smcrypt {
namespace {

// BlockChain carries the state between chunks: the CBC chaining block or the CTR counter.
struct BlockChain {
  CipherMode mode;
  std::string iv;  // CBC: previous ciphertext block; CTR: current counter; ECB: empty

  absl::string_view Iv() const { return mode == CipherMode::kEcb ? "" : absl::string_view(iv); }
  // Advance moves past `in` (plaintext for CTR) → `ciphertext`.
  void Advance(absl::string_view in, absl::string_view ciphertext) {
    if (mode == CipherMode::kCbc) {
      iv = std::string(ciphertext.substr(ciphertext.size() - kStreamBlockSize));
    } else if (mode == CipherMode::kCtr) {
      CtrAddBlocks(iv, in.size() / kStreamBlockSize);
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
    if (chain_.mode == CipherMode::kCtr) {
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
  // Process encrypts whole blocks (or, for CTR at the end, a final partial block).
  absl::StatusOr<std::string> Process(absl::string_view in) {
    if (in.empty()) return std::string();
    absl::StatusOr<std::string> out = bulk_->Encrypt(chain_.Iv(), in);
    if (!out.ok()) return out.status();
    chain_.Advance(in, *out);
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
      return absl::InvalidArgumentError("tag must be empty for ECB, CBC and CTR streams");
    }
    total_ += ciphertext.size();
    buffer_.append(ciphertext.data(), ciphertext.size());
    size_t n = buffer_.size() / kStreamBlockSize * kStreamBlockSize;
    // Padded ECB/CBC: keep the last whole block back; it carries the padding.
    if (padded_ && chain_.mode != CipherMode::kCtr && n == buffer_.size() && n > 0) {
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
    if (chain_.mode == CipherMode::kCtr) {
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
    chain_.Advance(in, in);  // CBC chains through the ciphertext it was given
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
  if (mode != CipherMode::kEcb && mode != CipherMode::kCbc && mode != CipherMode::kCtr) {
    return absl::InvalidArgumentError(
        absl::StrCat("block stream: ", alg_name, " is not ECB, CBC or CTR"));
  }
  if (bulk == nullptr || (padded && mode != CipherMode::kCtr && last == nullptr)) {
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
      mode, std::move(bulk), std::move(last), std::string(iv), padded && mode != CipherMode::kCtr));
}

absl::StatusOr<std::unique_ptr<StreamDecryptor>> NewBlockStreamDecryptor(
    CipherMode mode, std::unique_ptr<Cipher> bulk, std::unique_ptr<Cipher> last,
    absl::string_view iv, bool padded, absl::string_view alg_name) {
  absl::Status s = CheckBlockStream(mode, bulk, last, iv, padded, alg_name);
  if (!s.ok()) return s;
  return std::unique_ptr<StreamDecryptor>(new BlockStreamDecryptor(
      mode, std::move(bulk), std::move(last), std::string(iv), padded && mode != CipherMode::kCtr));
}

}  // namespace smcrypt
