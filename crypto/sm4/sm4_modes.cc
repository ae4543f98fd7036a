// sm4_modes.cc — SM4-ECB, SM4-CBC and SM4-CTR (GB/T 17964-2021 §5, §6, §10; PKCS#7
// padding per RFC 5652 §6.3). Each mode is written once over the active back end's
// kernels: ECB, CBC decryption and CTR hand the whole message to the widest path, and
// CBC encryption (serial by nature) runs on the back end's single-block path.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

absl::Status CheckIvSize(const char* mode, absl::string_view iv, size_t expected) {
  if (iv.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s IV: expected %d bytes, got %d", mode, expected, iv.size()));
  }
  return absl::OkStatus();
}

// PadInput copies `in` into a new string, adding PKCS#7 padding (1–16 bytes of value
// 1–16) or, for Padding::kNone, checking that the length is a multiple of 16.
absl::StatusOr<std::string> PadInput(const char* mode, Padding padding, absl::string_view in) {
  if (padding == Padding::kNone) {
    if (in.size() % kSm4BlockSize != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s plaintext: expected a multiple of 16 bytes without padding, got %d", mode,
          in.size()));
    }
    return std::string(in);
  }
  const size_t pad = kSm4BlockSize - in.size() % kSm4BlockSize;
  std::string out(in.size() + pad, static_cast<char>(pad));
  if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
  return out;
}

absl::Status CheckCiphertextSize(const char* mode, Padding padding, size_t len) {
  if (len % kSm4BlockSize != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s ciphertext: expected a multiple of 16 bytes, got %d", mode, len));
  }
  if (padding == Padding::kPkcs7 && len == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s ciphertext: expected at least 16 bytes with PKCS#7 padding, got 0", mode));
  }
  return absl::OkStatus();
}

// RemovePadding checks and strips PKCS#7 padding from the decrypted `buf` (a non-empty
// multiple of 16 bytes) in constant time: all 16 trailing bytes are examined with mask
// arithmetic whatever the padding value, so timing does not reveal which byte was wrong.
// On failure `buf` is wiped and one generic error is returned.
absl::Status RemovePadding(Padding padding, std::string& buf) {
  if (padding == Padding::kNone) return absl::OkStatus();
  const uint8_t* last = BytePtr(buf.data()) + buf.size() - kSm4BlockSize;
  const uint32_t pad = last[kSm4BlockSize - 1];
  // good = (1 <= pad <= 16) and last[15 - i] == pad for every i < pad.
  uint32_t good = ~CtIsZero32(pad) & ~static_cast<uint32_t>(CtLt64(16, pad));
  for (uint32_t i = 0; i < kSm4BlockSize; ++i) {
    const uint32_t in_pad = static_cast<uint32_t>(CtLt64(i, pad));
    const uint32_t matches = CtEq32(last[kSm4BlockSize - 1 - i], pad);
    good &= ~in_pad | matches;
  }
  // Public: the verdict is what Decrypt returns, and on success the padding length is
  // the difference between the ciphertext and plaintext lengths. (Unauthenticated CBC
  // decryption is a padding oracle whatever its timing; the AEAD modes are not.)
  if (CtDeclassify(ValueBarrier(good)) == 0) {
    SecureZero(buf.data(), buf.size());
    return absl::InvalidArgumentError("decryption failed");
  }
  buf.resize(buf.size() - CtDeclassify(pad));
  return absl::OkStatus();
}

// --- SM4-ECB --------------------------------------------------------------------------

class Sm4EcbCipher final : public Cipher {
 public:
  Sm4EcbCipher(const Sm4Key& key, Padding padding) : key_(key), padding_(padding) {}

  absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                      absl::string_view plaintext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIvSize("SM4-ECB", iv, 0));
    SMCRYPT_ASSIGN_OR_RETURN(std::string out, PadInput("SM4-ECB", padding_, plaintext));
    uint8_t* p = BytePtr(out.data());
    Sm4EncryptBlocks(key_, p, p, out.size() / kSm4BlockSize);
    return out;
  }

  absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                      absl::string_view ciphertext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIvSize("SM4-ECB", iv, 0));
    SMCRYPT_RETURN_IF_ERROR(CheckCiphertextSize("SM4-ECB", padding_, ciphertext.size()));
    std::string out(ciphertext.size(), '\0');
    Sm4DecryptBlocks(key_, BytePtr(ciphertext.data()), BytePtr(out.data()),
                     out.size() / kSm4BlockSize);
    SMCRYPT_RETURN_IF_ERROR(RemovePadding(padding_, out));
    return out;
  }

  size_t iv_size() const override { return 0; }

 private:
  const Sm4Key key_;  // wiped by ~Sm4Key
  const Padding padding_;
};

// --- SM4-CBC --------------------------------------------------------------------------

class Sm4CbcCipher final : public Cipher {
 public:
  Sm4CbcCipher(const Sm4Key& key, Padding padding) : key_(key), padding_(padding) {}

  absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                      absl::string_view plaintext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIvSize("SM4-CBC", iv, kSm4BlockSize));
    SMCRYPT_ASSIGN_OR_RETURN(std::string out, PadInput("SM4-CBC", padding_, plaintext));
    // C_i = E(P_i ⊕ C_{i-1}), C_{-1} = IV: serial, on the back end's single-block path.
    uint8_t chain[kSm4BlockSize];
    std::memcpy(chain, iv.data(), kSm4BlockSize);
    uint8_t* p = BytePtr(out.data());
    Sm4ActiveKernels().cbc_encrypt_blocks(key_.rk_enc, chain, p, p, out.size() / kSm4BlockSize);
    return out;
  }

  absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                      absl::string_view ciphertext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIvSize("SM4-CBC", iv, kSm4BlockSize));
    SMCRYPT_RETURN_IF_ERROR(CheckCiphertextSize("SM4-CBC", padding_, ciphertext.size()));
    // P_i = D(C_i) ⊕ C_{i-1}: parallel, on the back end's widest path.
    std::string out(ciphertext.size(), '\0');
    uint8_t chain[kSm4BlockSize];
    std::memcpy(chain, iv.data(), kSm4BlockSize);
    Sm4ActiveKernels().cbc_decrypt_blocks(key_.rk_dec, chain, BytePtr(ciphertext.data()),
                                          BytePtr(out.data()), out.size() / kSm4BlockSize);
    SMCRYPT_RETURN_IF_ERROR(RemovePadding(padding_, out));
    return out;
  }

  size_t iv_size() const override { return kSm4BlockSize; }

 private:
  const Sm4Key key_;  // wiped by ~Sm4Key
  const Padding padding_;
};

// --- SM4-CTR --------------------------------------------------------------------------

class Sm4CtrCipher final : public Cipher {
 public:
  explicit Sm4CtrCipher(const Sm4Key& key) : key_(key) {}

  absl::StatusOr<std::string> Encrypt(absl::string_view iv,
                                      absl::string_view plaintext) const override {
    SMCRYPT_RETURN_IF_ERROR(CheckIvSize("SM4-CTR", iv, kSm4BlockSize));
    std::string out(plaintext.size(), '\0');
    Crypt(BytePtr(iv.data()), BytePtr(plaintext.data()), BytePtr(out.data()), out.size());
    return out;
  }

  absl::StatusOr<std::string> Decrypt(absl::string_view iv,
                                      absl::string_view ciphertext) const override {
    return Encrypt(iv, ciphertext);  // CTR is its own inverse
  }

  size_t iv_size() const override { return kSm4BlockSize; }

 private:
  // Crypt XORs the keystream E(K, T_0) ‖ E(K, T_1) ‖ … into `len` bytes, where T_0 = iv
  // and T_{i+1} = T_i + 1 mod 2^128 (big-endian). The back end's ctr128 kernel carries
  // through all 128 bits without branches; a final partial block runs through a
  // zero-padded copy.
  void Crypt(const uint8_t iv[kSm4BlockSize], const uint8_t* in, uint8_t* out,
             size_t len) const {
    const Sm4Kernels& k = Sm4ActiveKernels();
    const size_t full = len / kSm4BlockSize;
    k.ctr128_encrypt_blocks(key_.rk_enc, iv, in, out, full);
    const size_t rest = len % kSm4BlockSize;
    if (rest == 0) return;
    // T_full = iv + full (mod 2^128), with ADD/ADC.
    const unsigned __int128 t =
        ((static_cast<unsigned __int128>(LoadBe64(iv)) << 64) | LoadBe64(iv + 8)) + full;
    uint8_t block[kSm4BlockSize] = {};
    uint8_t ctr[kSm4BlockSize];
    StoreBe64(ctr, static_cast<uint64_t>(t >> 64));
    StoreBe64(ctr + 8, static_cast<uint64_t>(t));
    std::memcpy(block, in + full * kSm4BlockSize, rest);
    k.ctr128_encrypt_blocks(key_.rk_enc, ctr, block, block, 1);
    std::memcpy(out + full * kSm4BlockSize, block, rest);
    SecureZero(block, sizeof(block));
    SecureZero(ctr, sizeof(ctr));
  }

  const Sm4Key key_;  // wiped by ~Sm4Key
};

absl::StatusOr<Sm4Key> ExpandKeyForMode(absl::string_view key) {
  Sm4Key k;
  SMCRYPT_RETURN_IF_ERROR(Sm4ExpandKey(key, &k));
  return k;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Ecb(absl::string_view key, Padding padding) {
  SMCRYPT_ASSIGN_OR_RETURN(Sm4Key k, ExpandKeyForMode(key));
  return std::unique_ptr<Cipher>(new Sm4EcbCipher(k, padding));
}

absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Cbc(absl::string_view key, Padding padding) {
  SMCRYPT_ASSIGN_OR_RETURN(Sm4Key k, ExpandKeyForMode(key));
  return std::unique_ptr<Cipher>(new Sm4CbcCipher(k, padding));
}

absl::StatusOr<std::unique_ptr<Cipher>> NewSm4Ctr(absl::string_view key) {
  SMCRYPT_ASSIGN_OR_RETURN(Sm4Key k, ExpandKeyForMode(key));
  return std::unique_ptr<Cipher>(new Sm4CtrCipher(k));
}

std::vector<absl::StatusOr<std::string>> Sm4CbcEncryptBatch(
    absl::Span<const Sm4CbcBatchItem> items) {
  std::vector<absl::StatusOr<std::string>> results(items.size());
  // Per valid item: its expanded key, chaining value and padded plaintext (encrypted in
  // place in results[i]).
  std::vector<size_t> valid;
  valid.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const Sm4CbcBatchItem& item = items[i];
    if (item.key.size() != kSm4KeySize) {
      results[i] = absl::InvalidArgumentError(absl::StrFormat(
          "SM4-CBC key: expected %d bytes, got %d", kSm4KeySize, item.key.size()));
      continue;
    }
    absl::Status s = CheckIvSize("SM4-CBC", item.iv, kSm4BlockSize);
    if (!s.ok()) {
      results[i] = s;
      continue;
    }
    results[i] = PadInput("SM4-CBC", item.padding, item.plaintext);
    if (results[i].ok()) valid.push_back(i);
  }
  // Longest first, so that the messages sharing a 16-lane call have similar lengths and
  // few lanes idle. Lengths are public.
  std::stable_sort(valid.begin(), valid.end(), [&](size_t a, size_t b) {
    return results[a]->size() > results[b]->size();
  });
  std::vector<Sm4Key> keys(valid.size());  // wiped by ~Sm4Key
  std::vector<uint8_t> chains(valid.size() * kSm4BlockSize);
  std::vector<Sm4MultiJob> jobs(valid.size());
  for (size_t j = 0; j < valid.size(); ++j) {
    const Sm4CbcBatchItem& item = items[valid[j]];
    // Cannot fail: the key size was checked above.
    (void)Sm4ExpandKey(item.key, &keys[j]);
    uint8_t* chain = chains.data() + j * kSm4BlockSize;
    std::memcpy(chain, item.iv.data(), kSm4BlockSize);
    uint8_t* p = BytePtr(results[valid[j]]->data());
    jobs[j] = Sm4MultiJob{keys[j].rk_enc, chain, p, p,
                          results[valid[j]]->size() / kSm4BlockSize};
  }
  Sm4CbcEncryptMulti(jobs.data(), jobs.size());
  SecureZero(chains.data(), chains.size());
  return results;
}

}  // namespace smcrypt
