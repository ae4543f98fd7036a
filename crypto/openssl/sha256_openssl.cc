#include "crypto/openssl/sha256_openssl.h"

#include "crypto/common/status_macros.h"
#include "crypto/openssl/openssl_util.h"
#include "crypto/openssl/ssl_errors.h"

namespace smcrypt {

absl::StatusOr<std::unique_ptr<Sha256OpenSsl>> Sha256OpenSsl::New() {
  SMCRYPT_ASSIGN_OR_RETURN(EVP_MD * md, FetchedSha256());
  SslUniquePtr<EVP_MD_CTX> ctx(EVP_MD_CTX_new());
  if (ctx == nullptr || EVP_DigestInit_ex2(ctx.get(), md, nullptr) != 1) {
    return SslInternalError("EVP_DigestInit_ex2(SHA-256)");
  }
  return std::unique_ptr<Sha256OpenSsl>(new Sha256OpenSsl(std::move(ctx)));
}

void Sha256OpenSsl::Update(absl::string_view data) {
  SslCheckOrDie(EVP_DigestUpdate(ctx_.get(), data.data(), data.size()) == 1,
                "EVP_DigestUpdate(SHA-256)");
}

std::string Sha256OpenSsl::Finish() {
  std::string out(kSha256DigestSize, '\0');
  unsigned int len = 0;
  SslCheckOrDie(
      EVP_DigestFinal_ex(ctx_.get(), reinterpret_cast<unsigned char*>(out.data()), &len) == 1 &&
          len == kSha256DigestSize,
      "EVP_DigestFinal_ex(SHA-256)");
  // Reset to the empty-message state; the context keeps its fetched SHA-256.
  SslCheckOrDie(EVP_DigestInit_ex2(ctx_.get(), nullptr, nullptr) == 1,
                "EVP_DigestInit_ex2(SHA-256)");
  return out;
}

size_t Sha256OpenSsl::digest_size() const { return kSha256DigestSize; }
size_t Sha256OpenSsl::block_size() const { return kSha256BlockSize; }

}  // namespace smcrypt
