// sm2_primitives.h — SM2 behind the primitive interfaces (PublicKeySign, PublicKeyVerify,
// PublicKeyEncrypt, PublicKeyDecrypt), with the options of smcrypt/registry.h.
#ifndef SMCRYPT_CRYPTO_CORE_SM2_PRIMITIVES_H_
#define SMCRYPT_CRYPTO_CORE_SM2_PRIMITIVES_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "crypto/sm2/sm2_key_cache.h"
#include "smcrypt/primitives/public_key_encrypt.h"
#include "smcrypt/primitives/public_key_sign.h"
#include "smcrypt/primitives/public_key_verify.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

// Sm2Sign signs with SM2 (GB/T 32918.2 §6.1). Z for the key and user ID is computed once
// at construction (§5.5), so each Sign hashes only Z ‖ M. With `prehashed`, `data` is e.
class Sm2Sign final : public PublicKeySign {
 public:
  // Errors: InvalidArgument for a user ID over 8191 bytes.
  static absl::StatusOr<std::unique_ptr<PublicKeySign>> New(Sm2PrivateKey key,
                                                            const SignatureOptions& options);
  absl::StatusOr<std::string> Sign(absl::string_view data) const override;
  // SignMany(data): the static SignMany below with this signer for every item.
  std::vector<absl::StatusOr<std::string>> SignMany(
      absl::Span<const absl::string_view> data) const override;

  // SignMany signs data[i] with *signers[i] into out[i] (spans of one length; signers may
  // repeat or differ): each item's e as Sign computes it, then the batch path of
  // crypto/sm2/sm2_batch.h (8 lanes on AVX-512 IFMA, one inversion for the batch), then
  // each signer's encoding. out[i] is what signers[i]->Sign(data[i]) returns.
  static void SignMany(absl::Span<const Sm2Sign* const> signers,
                       absl::Span<const absl::string_view> data,
                       absl::Span<absl::StatusOr<std::string>> out);

 private:
  Sm2Sign(Sm2PrivateKey key, std::array<uint8_t, 32> z, SignatureEncoding encoding,
          bool prehashed)
      : key_(std::move(key)), z_(z), encoding_(encoding), prehashed_(prehashed) {}
  Sm2PrivateKey key_;
  std::array<uint8_t, 32> z_;
  SignatureEncoding encoding_;
  bool prehashed_;
};

// Sm2Verify verifies SM2 signatures (§7.1); Z is precomputed as in Sm2Sign, and the
// key's comb table is built after a few uses (Sm2PublicKeyCache).
class Sm2Verify final : public PublicKeyVerify {
 public:
  static absl::StatusOr<std::unique_ptr<PublicKeyVerify>> New(Sm2PublicKey key,
                                                              const SignatureOptions& options);
  absl::Status Verify(absl::string_view signature, absl::string_view data) const override;
  // VerifyMany(inputs): the static VerifyMany below with this verifier for every item.
  std::vector<absl::Status> VerifyMany(absl::Span<const VerifyInput> inputs) const override;

  // VerifyMany verifies signatures[i] over data[i] with *verifiers[i] into out[i] (spans
  // of one length) through the batch path of crypto/sm2/sm2_batch.h (keys whose comb table
  // is built run in the 8 IFMA lanes). out[i] is what verifiers[i]->Verify(signatures[i],
  // data[i]) returns.
  static void VerifyMany(absl::Span<const Sm2Verify* const> verifiers,
                         absl::Span<const absl::string_view> signatures,
                         absl::Span<const absl::string_view> data, absl::Span<absl::Status> out);

 private:
  Sm2Verify(Sm2PublicKey key, std::array<uint8_t, 32> z, SignatureEncoding encoding,
            bool prehashed)
      : cache_(key), z_(z), encoding_(encoding), prehashed_(prehashed) {}
  Sm2PublicKeyCache cache_;
  std::array<uint8_t, 32> z_;
  SignatureEncoding encoding_;
  bool prehashed_;
};

// Sm2PublicKeyEncrypt / Sm2PublicKeyDecrypt: GB/T 32918.4 in the chosen format. The
// encrypter builds the recipient key's comb table after a few uses (Sm2PublicKeyCache).
class Sm2PublicKeyEncrypt final : public PublicKeyEncrypt {
 public:
  Sm2PublicKeyEncrypt(Sm2PublicKey key, Sm2CiphertextFormat format)
      : cache_(key), format_(format) {}
  absl::StatusOr<std::string> Encrypt(absl::string_view plaintext) const override;
  // EncryptMany: Sm2EncryptManyCached (crypto/sm2/sm2_key_cache.h).
  std::vector<absl::StatusOr<std::string>> EncryptMany(
      absl::Span<const absl::string_view> plaintexts) const override;

 private:
  Sm2PublicKeyCache cache_;
  Sm2CiphertextFormat format_;
};

class Sm2PublicKeyDecrypt final : public PublicKeyDecrypt {
 public:
  Sm2PublicKeyDecrypt(Sm2PrivateKey key, Sm2CiphertextFormat format)
      : key_(std::move(key)), format_(format) {}
  absl::StatusOr<std::string> Decrypt(absl::string_view ciphertext) const override;

 private:
  Sm2PrivateKey key_;
  Sm2CiphertextFormat format_;
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_CORE_SM2_PRIMITIVES_H_
