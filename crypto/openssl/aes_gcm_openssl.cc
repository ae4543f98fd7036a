#include "crypto/openssl/aes_gcm_openssl.h"

#include <algorithm>
#include <cstring>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "crypto/common/readable_count.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {
namespace {

const unsigned char* U8(const char* p) { return reinterpret_cast<const unsigned char*>(p); }

// Feed passes `in` through EVP_CipherUpdate in int-sized pieces; `out` null means AAD.
absl::Status Feed(EVP_CIPHER_CTX* ctx, absl::string_view in, unsigned char* out) {
  for (size_t off = 0; off < in.size(); off += kMaxSslChunk) {
    const size_t n = std::min(kMaxSslChunk, in.size() - off);
    int len = 0;
    if (EVP_CipherUpdate(ctx, out == nullptr ? nullptr : out + off, &len, U8(in.data() + off),
                         static_cast<int>(n)) != 1 ||
        static_cast<size_t>(len) != n) {
      return SslInternalError("EVP_CipherUpdate(AES-GCM)");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<AesGcmOpenSsl>> AesGcmOpenSsl::New(Algorithm alg,
                                                                  absl::string_view key,
                                                                  size_t tag_size) {
  const char* name = nullptr;
  size_t key_size = 0;
  if (alg == Algorithm::kAes128Gcm) {
    name = "AES-128-GCM";
    key_size = 16;
  } else if (alg == Algorithm::kAes256Gcm) {
    name = "AES-256-GCM";
    key_size = 32;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(OpenSslAlgorithmName(alg), " is not an AES-GCM algorithm"));
  }
  if (key.size() != key_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " key must be ", key_size, " bytes, got ", key.size()));
  }
  if (tag_size == 0) tag_size = kGcmMaxTagSize;
  if (tag_size < kGcmMinTagSize || tag_size > kGcmMaxTagSize) {
    return absl::InvalidArgumentError(absl::StrCat(name, " tag must be 12 to 16 bytes, got ",
                                                   tag_size));
  }
  SMCRYPT_ASSIGN_OR_RETURN(EVP_CIPHER * cipher, FetchedCipher(name));
  SslUniquePtr<EVP_CIPHER_CTX> enc(EVP_CIPHER_CTX_new());
  SslUniquePtr<EVP_CIPHER_CTX> dec(EVP_CIPHER_CTX_new());
  if (enc == nullptr || dec == nullptr ||
      EVP_EncryptInit_ex2(enc.get(), cipher, U8(key.data()), nullptr, nullptr) != 1 ||
      EVP_DecryptInit_ex2(dec.get(), cipher, U8(key.data()), nullptr, nullptr) != 1) {
    return SslInternalError("EVP_CipherInit_ex2(AES-GCM)");
  }
  return std::unique_ptr<AesGcmOpenSsl>(
      new AesGcmOpenSsl(alg, tag_size, std::move(enc), std::move(dec)));
}

absl::Status AesGcmOpenSsl::CheckNonce(absl::string_view nonce) const {
  if (nonce.empty() || nonce.size() > kGcmMaxNonceSize) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_),
                                                   " nonce must be 1 to 128 bytes, got ",
                                                   nonce.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<SslUniquePtr<EVP_CIPHER_CTX>> AesGcmOpenSsl::Start(const EVP_CIPHER_CTX* keyed,
                                                                  absl::string_view nonce,
                                                                  absl::string_view aad) const {
  if (aad.size() > kGcmMaxPlaintextSize) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_), " AAD of ", aad.size(),
                                                   " bytes is over the limit of ",
                                                   ReadableCount(kGcmMaxPlaintextSize), " bytes"));
  }
  SslUniquePtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr || EVP_CIPHER_CTX_copy(ctx.get(), keyed) != 1) {
    return SslInternalError("EVP_CIPHER_CTX_copy(AES-GCM)");
  }
  // The IV length must be set before the IV itself (SP 800-38D §7.1 step 2 then hashes
  // any length other than 96 bits).
  size_t iv_len = nonce.size();
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, &iv_len),
      OSSL_PARAM_construct_end(),
  };
  if (EVP_CIPHER_CTX_set_params(ctx.get(), params) != 1 ||
      EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr, U8(nonce.data()), -1, nullptr) != 1) {
    return SslInternalError("setting the AES-GCM nonce");
  }
  SMCRYPT_RETURN_IF_ERROR(Feed(ctx.get(), aad, nullptr));
  return ctx;
}

absl::StatusOr<std::string> AesGcmOpenSsl::Seal(absl::string_view nonce,
                                                absl::string_view plaintext,
                                                absl::string_view aad) const {
  SMCRYPT_RETURN_IF_ERROR(CheckNonce(nonce));
  if (plaintext.size() > kGcmMaxPlaintextSize) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_), " plaintext of ",
                                                   plaintext.size(),
                                                   " bytes is over the limit of ",
                                                   ReadableCount(kGcmMaxPlaintextSize), " bytes"));
  }
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_CIPHER_CTX> ctx, Start(enc_.get(), nonce, aad));
  std::string out(plaintext.size() + tag_size_, '\0');
  unsigned char* o = reinterpret_cast<unsigned char*>(out.data());
  SMCRYPT_RETURN_IF_ERROR(Feed(ctx.get(), plaintext, o));
  int len = 0;
  if (EVP_EncryptFinal_ex(ctx.get(), o + plaintext.size(), &len) != 1 || len != 0 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, static_cast<int>(tag_size_),
                          o + plaintext.size()) != 1) {
    return SslInternalError("EVP_EncryptFinal_ex(AES-GCM)");
  }
  return out;
}

absl::StatusOr<std::string> AesGcmOpenSsl::Open(absl::string_view nonce,
                                                absl::string_view ciphertext_and_tag,
                                                absl::string_view aad) const {
  SMCRYPT_RETURN_IF_ERROR(CheckNonce(nonce));
  if (ciphertext_and_tag.size() < tag_size_) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpenSslAlgorithmName(alg_), " ciphertext too short: expected at least ",
                     tag_size_, " bytes, got ", ciphertext_and_tag.size()));
  }
  const size_t ct_size = ciphertext_and_tag.size() - tag_size_;
  return OpenDetached(nonce, ciphertext_and_tag.substr(0, ct_size),
                      ciphertext_and_tag.substr(ct_size), aad);
}

absl::StatusOr<std::string> AesGcmOpenSsl::OpenDetached(absl::string_view nonce,
                                                        absl::string_view ciphertext,
                                                        absl::string_view tag,
                                                        absl::string_view aad) const {
  SMCRYPT_RETURN_IF_ERROR(CheckNonce(nonce));
  if (tag.size() != tag_size_) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_), " tag must be ",
                                                   tag_size_, " bytes, got ", tag.size()));
  }
  const size_t ct_size = ciphertext.size();
  if (ct_size > kGcmMaxPlaintextSize) {
    return absl::InvalidArgumentError(absl::StrCat(OpenSslAlgorithmName(alg_), " ciphertext of ",
                                                   ct_size, " bytes is over the limit of ",
                                                   ReadableCount(kGcmMaxPlaintextSize), " bytes"));
  }
  SMCRYPT_ASSIGN_OR_RETURN(SslUniquePtr<EVP_CIPHER_CTX> ctx, Start(dec_.get(), nonce, aad));
  unsigned char tag_copy[kGcmMaxTagSize];
  std::memcpy(tag_copy, tag.data(), tag_size_);
  if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, static_cast<int>(tag_size_),
                          tag_copy) != 1) {
    return SslInternalError("setting the AES-GCM tag");
  }
  std::string out(ct_size, '\0');
  absl::Cleanup wipe = [&out] { OPENSSL_cleanse(out.data(), out.size()); };
  unsigned char* o = reinterpret_cast<unsigned char*>(out.data());
  SMCRYPT_RETURN_IF_ERROR(Feed(ctx.get(), ciphertext, o));
  int len = 0;
  // EVP_DecryptFinal_ex compares the computed tag's first tag_size_ bytes with `tag`
  // using CRYPTO_memcmp.
  if (EVP_DecryptFinal_ex(ctx.get(), o + ct_size, &len) != 1 || len != 0) {
    ClearSslErrors();
    return absl::InvalidArgumentError("decryption failed");
  }
  std::move(wipe).Cancel();
  return out;
}

}  // namespace smcrypt
