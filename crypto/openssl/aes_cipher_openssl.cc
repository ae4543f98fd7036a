#include "crypto/openssl/aes_cipher_openssl.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <openssl/crypto.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {
namespace {

struct AesModeInfo {
  Algorithm alg;
  const char* cipher_name;
  size_t key_size;
  int mode;  // 0 ECB, 1 CBC, 2 CTR
};

constexpr AesModeInfo kModes[] = {
    {Algorithm::kAes128Ecb, "AES-128-ECB", 16, 0}, {Algorithm::kAes128Cbc, "AES-128-CBC", 16, 1},
    {Algorithm::kAes128Ctr, "AES-128-CTR", 16, 2}, {Algorithm::kAes256Ecb, "AES-256-ECB", 32, 0},
    {Algorithm::kAes256Cbc, "AES-256-CBC", 32, 1}, {Algorithm::kAes256Ctr, "AES-256-CTR", 32, 2},
};

absl::StatusOr<SslUniquePtr<EVP_CIPHER_CTX>> KeyedContext(EVP_CIPHER* cipher,
                                                          absl::string_view key, int enc) {
  SslUniquePtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr ||
      EVP_CipherInit_ex2(ctx.get(), cipher, reinterpret_cast<const unsigned char*>(key.data()),
                         nullptr, enc, nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1) {
    return SslInternalError("EVP_CipherInit_ex2(AES)");
  }
  return ctx;
}

// Pkcs7PaddingMask returns ~0 when the last block of `buf` (len ≥ 16, a multiple of 16)
// ends in valid PKCS#7 padding (1 ≤ p ≤ 16, the last p bytes all equal p), else 0.
// Runs in time independent of the plaintext: every test is a mask.
uint32_t Pkcs7PaddingMask(const uint8_t* buf, size_t len) {
  const uint32_t pad = buf[len - 1];
  // pad ≠ 0, and pad ≤ 16: (16 − pad) has its top bit clear exactly when pad ≤ 16.
  uint32_t good = ~CtIsZero32(pad) & ~(0u - ((static_cast<uint32_t>(kAesBlockSize) - pad) >> 31));
  for (uint32_t i = 0; i < kAesBlockSize; ++i) {
    const uint32_t in_pad = 0u - ((i - pad) >> 31);  // ~0 when i < pad
    const uint32_t matches = CtEq32(buf[len - 1 - i], pad);
    good &= ~in_pad | matches;
  }
  return ValueBarrier(good);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AesCipherOpenSsl>> AesCipherOpenSsl::New(Algorithm alg,
                                                                         absl::string_view key,
                                                                         Padding padding) {
  const AesModeInfo* info = nullptr;
  for (const AesModeInfo& m : kModes) {
    if (m.alg == alg) info = &m;
  }
  if (info == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpenSslAlgorithmName(alg), " is not an AES-ECB/CBC/CTR algorithm"));
  }
  if (key.size() != info->key_size) {
    return absl::InvalidArgumentError(absl::StrCat(info->cipher_name, " key must be ",
                                                   info->key_size, " bytes, got ", key.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(EVP_CIPHER * cipher, FetchedCipher(info->cipher_name));
  const Mode mode = info->mode == 0 ? Mode::kEcb : info->mode == 1 ? Mode::kCbc : Mode::kCtr;
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_CIPHER_CTX> enc, KeyedContext(cipher, key, 1));
  SslUniquePtr<EVP_CIPHER_CTX> dec;
  if (mode != Mode::kCtr) {
    SMCRYPT_ASSIGN_OR_RETURN(dec, KeyedContext(cipher, key, 0));
  }
  return std::unique_ptr<AesCipherOpenSsl>(
      new AesCipherOpenSsl(alg, mode, mode == Mode::kCtr ? Padding::kNone : padding,
                           std::move(enc), std::move(dec)));
}

size_t AesCipherOpenSsl::iv_size() const { return mode_ == Mode::kEcb ? 0 : kAesBlockSize; }

absl::Status AesCipherOpenSsl::CheckIv(absl::string_view iv) const {
  if (iv.size() != iv_size()) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_), " IV must be ",
                                                   iv_size(), " bytes, got ", iv.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> AesCipherOpenSsl::Run(const EVP_CIPHER_CTX* keyed,
                                                  absl::string_view iv, absl::string_view in,
                                                  size_t out_capacity) const {
  SslUniquePtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr || EVP_CIPHER_CTX_copy(ctx.get(), keyed) != 1) {
    return SslInternalError("EVP_CIPHER_CTX_copy(AES)");
  }
  if (!iv.empty() &&
      EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr,
                         reinterpret_cast<const unsigned char*>(iv.data()), -1, nullptr) != 1) {
    return SslInternalError("setting the AES IV");
  }
  std::string out(out_capacity, '\0');
  absl::Cleanup wipe = [&out] { OPENSSL_cleanse(out.data(), out.size()); };
  unsigned char* o = reinterpret_cast<unsigned char*>(out.data());
  size_t written = 0;
  for (size_t off = 0; off < in.size(); off += kMaxSslChunk) {
    const size_t n = std::min(kMaxSslChunk, in.size() - off);
    int len = 0;
    if (EVP_CipherUpdate(ctx.get(), o + written, &len,
                         reinterpret_cast<const unsigned char*>(in.data() + off),
                         static_cast<int>(n)) != 1) {
      return SslInternalError("EVP_CipherUpdate(AES)");
    }
    written += static_cast<size_t>(len);
  }
  int len = 0;
  if (EVP_CipherFinal_ex(ctx.get(), o + written, &len) != 1) {
    return SslInternalError("EVP_CipherFinal_ex(AES)");
  }
  written += static_cast<size_t>(len);
  if (written != in.size()) return absl::InternalError("AES: unexpected output length");
  std::move(wipe).Cancel();
  out.resize(written);
  return out;
}

absl::StatusOr<std::string> AesCipherOpenSsl::Encrypt(absl::string_view iv,
                                                      absl::string_view plaintext) const {
  SMCRYPT_RETURN_IF_ERROR(CheckIv(iv));
  if (mode_ == Mode::kCtr) return Run(enc_.get(), iv, plaintext, plaintext.size());
  if (padding_ == Padding::kNone) {
    if (plaintext.size() % kAesBlockSize != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpenSslAlgorithmName(alg_), " without padding: plaintext length ",
                       plaintext.size(), " is not a multiple of 16"));
    }
    return Run(enc_.get(), iv, plaintext, plaintext.size());
  }
  // PKCS#7: append p = 16 − (len mod 16) bytes of value p (RFC 5652 §6.3). The padded
  // copy holds plaintext, so it is wiped when it goes out of scope.
  const size_t pad = kAesBlockSize - plaintext.size() % kAesBlockSize;
  std::string padded;
  padded.reserve(plaintext.size() + pad);
  padded.append(plaintext.data(), plaintext.size());
  padded.append(pad, static_cast<char>(pad));
  absl::Cleanup wipe = [&padded] { OPENSSL_cleanse(padded.data(), padded.size()); };
  return Run(enc_.get(), iv, padded, padded.size());
}

absl::StatusOr<std::string> AesCipherOpenSsl::Decrypt(absl::string_view iv,
                                                      absl::string_view ciphertext) const {
  SMCRYPT_RETURN_IF_ERROR(CheckIv(iv));
  if (mode_ == Mode::kCtr) return Run(enc_.get(), iv, ciphertext, ciphertext.size());
  if (ciphertext.size() % kAesBlockSize != 0 ||
      (padding_ == Padding::kPkcs7 && ciphertext.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpenSslAlgorithmName(alg_), ": ciphertext length ", ciphertext.size(), " is not a ",
        padding_ == Padding::kPkcs7 ? "positive " : "", "multiple of 16"));
  }
  SMCRYPT_ASSIGN_OR_RETURN(std::string out, Run(dec_.get(), iv, ciphertext, ciphertext.size()));
  if (padding_ == Padding::kNone) return out;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(out.data());
  if (Pkcs7PaddingMask(p, out.size()) == 0) {
    OPENSSL_cleanse(out.data(), out.size());
    return absl::InvalidArgumentError("decryption failed");
  }
  const size_t pad = p[out.size() - 1];
  OPENSSL_cleanse(out.data() + out.size() - pad, pad);
  out.resize(out.size() - pad);
  return out;
}

}  // namespace smcrypt
