// algorithm.h — the algorithms smcrypt offers, with one spelling each (docs/design.md,
// "Names used everywhere"). The names are the metric label values, the bench names and
// the CLI's --alg values.
#ifndef SMCRYPT_ALGORITHM_H_
#define SMCRYPT_ALGORITHM_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace smcrypt {

enum class Algorithm {
  kSm3,
  kSha256,
  kHmacSm3,
  kHmacSha256,
  kSm4Ecb,
  kSm4Cbc,
  kSm4Ctr,
  kSm4Gcm,
  kSm4Ccm,
  kAes128Ecb,
  kAes128Cbc,
  kAes128Ctr,
  kAes128Gcm,
  kAes256Ecb,
  kAes256Cbc,
  kAes256Ctr,
  kAes256Gcm,
  kSm2,
  kEcdsaP256,
  kEcdsaSecp256k1,
  kRsa2048Pss,
  kRsa3072Pss,
  kRsa2048Oaep,
  kRsa3072Oaep,
  kHpkeSm2Sm3Sm4Gcm,
  kHpkeP256Sha256Aes128Gcm,
  kSm4Cfb,
  kSm4Ofb,
  kSm4Xts,
  kSm4XtsGb,
};

// Kind groups algorithms by the primitive that serves them.
enum class AlgorithmKind { kHash, kMac, kCipher, kAead, kSignature, kPublicKeyEncryption, kHybrid };

// CipherMode is the mode of a cipher (kCipher) or AEAD (kAead) algorithm: ECB, CBC, CTR,
// CFB (128-bit feedback) or OFB (NIST SP 800-38A), GCM (SP 800-38D), CCM (SP 800-38C) or
// XTS (IEEE 1619 / GB/T 17964, one data unit per message); kNone for every other kind.
enum class CipherMode { kNone, kEcb, kCbc, kCtr, kGcm, kCcm, kCfb, kOfb, kXts };

// AlgorithmName returns the canonical name ("SM4-GCM", "ECDSA-P256", ...).
absl::string_view AlgorithmName(Algorithm alg);
// ParseAlgorithm accepts a canonical name in any letter case; also "SM2" for both SM2
// signatures and encryption. Errors: InvalidArgument naming the unknown algorithm.
absl::StatusOr<Algorithm> ParseAlgorithm(absl::string_view name);
// KindOf is the algorithm's primary kind (kSignature for SM2).
AlgorithmKind KindOf(Algorithm alg);
// HasKind: whether a primitive of `kind` serves `alg` (KindOf, and for SM2 also
// kPublicKeyEncryption).
bool HasKind(Algorithm alg, AlgorithmKind kind);
// CipherModeOf is the mode of a cipher or AEAD algorithm, else CipherMode::kNone.
CipherMode CipherModeOf(Algorithm alg);
// AllAlgorithms lists every Algorithm value in declaration order.
absl::Span<const Algorithm> AllAlgorithms();
// KeySize is the symmetric key length in bytes for cipher/AEAD algorithms, else 0.
size_t SymmetricKeySize(Algorithm alg);

}  // namespace smcrypt

#endif  // SMCRYPT_ALGORITHM_H_
