// sm2_testing.cc — fixed-k SM2 signing and encryption for known-answer tests. Built into
// smcrypt_testing only (the *_testing.cc rule of crypto/CMakeLists.txt).
#include "crypto/sm2/sm2_testing.h"

#include "absl/strings/str_cat.h"
#include "crypto/common/bytes.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"

namespace smcrypt::testing {
namespace {

// FixedNonce yields k once; a second request means §6.1 or §6.1 of part 4 rejected it.
class FixedNonce {
 public:
  explicit FixedNonce(absl::string_view k) : k_(k) {}
  absl::Status operator()(uint64_t out[4]) const {
    if (k_.size() != kSm2ScalarSize) {
      return absl::InvalidArgumentError(
          absl::StrCat("SM2 test nonce: expected 32 bytes, got ", k_.size()));
    }
    if (used_) return absl::InvalidArgumentError("SM2 test nonce rejected by the algorithm");
    used_ = true;
    internal::LimbsFromBytes(out, BytePtr(k_.data()));
    return absl::OkStatus();
  }

 private:
  absl::string_view k_;
  mutable bool used_ = false;
};

}  // namespace

absl::StatusOr<std::string> Sm2SignDigestWithKForTesting(const Sm2PrivateKey& key,
                                                         absl::string_view e,
                                                         absl::string_view k) {
  FixedNonce nonce(k);
  return internal::Sm2SignDigestCore(key, e, nonce);
}

absl::StatusOr<std::string> Sm2EncryptWithKForTesting(const Sm2PublicKey& key,
                                                      absl::string_view message,
                                                      absl::string_view k,
                                                      Sm2CiphertextFormat format,
                                                      bool compress_c1) {
  FixedNonce nonce(k);
  return internal::Sm2EncryptCore(key, message, format, compress_c1, nonce);
}

absl::StatusOr<std::string> Sm2KeyExchangeStartWithRForTesting(Sm2KeyExchange& kx,
                                                               absl::string_view r) {
  if (r.size() != kSm2ScalarSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("SM2 key exchange test scalar r: expected 32 bytes, got ", r.size()));
  }
  uint64_t limbs[4];
  internal::LimbsFromBytes(limbs, BytePtr(r.data()));
  return Sm2KeyExchangeAccess::StartWithScalar(kx, limbs);
}

}  // namespace smcrypt::testing
