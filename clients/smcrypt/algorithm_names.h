// algorithm_names.h — docs/design.md's algorithm names ("SM4-GCM") and the proto enum
// (SM4_GCM), and which algorithms each subcommand accepts.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_ALGORITHM_NAMES_H_
#define SMCRYPT_CLIENTS_SMCRYPT_ALGORITHM_NAMES_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::cli {

// AlgorithmFamily: the algorithms a subcommand accepts.
enum class AlgorithmFamily {
  kHash,              // SM3, SHA-256
  kMac,               // HMAC-*
  kSymmetric,         // SM4-*, AES-*
  kSignature,         // SM2, ECDSA-*, RSA-*-PSS
  kPublicKeyEncrypt,  // SM2, RSA-*-OAEP
  kHybrid,            // HPKE-*
  kKeyPair,           // every asymmetric algorithm (signature, encryption, hybrid)
  kKeyGen,            // kKeyPair plus the symmetric and MAC algorithms (random keys)
  kAny,               // every algorithm
};

// AlgorithmName returns docs/design.md's spelling of `alg` ("SM4-GCM" for SM4_GCM).
std::string AlgorithmName(smcrypt::v1::Algorithm alg);

// InFamily returns whether `alg` belongs to `family`.
bool InFamily(smcrypt::v1::Algorithm alg, AlgorithmFamily family);

// AlgorithmsOf lists the names of every algorithm of `family`, in enum order.
std::vector<std::string> AlgorithmsOf(AlgorithmFamily family);

// ParseAlgorithm reads a docs/design.md name, case-insensitively, and checks that the
// algorithm belongs to `family`. Errors are InvalidArgument and list the accepted names
// (with a "did you mean" for a spelling with underscores).
absl::StatusOr<smcrypt::v1::Algorithm> ParseAlgorithm(absl::string_view name,
                                                      AlgorithmFamily family);

// IsAead: SM4-GCM, SM4-CCM and AES-*-GCM (tag and aad apply).
bool IsAead(smcrypt::v1::Algorithm alg);
// UsesPadding: the ECB and CBC modes (--padding applies).
bool UsesPadding(smcrypt::v1::Algorithm alg);
// DefaultNonceSize: the size of a nonce the server draws: 0 for ECB, 16 for CBC and
// CTR, 12 for GCM and CCM.
size_t DefaultNonceSize(smcrypt::v1::Algorithm alg);
// SymmetricKeySize: 16 for SM4 and AES-128, 32 for AES-256 and the HMAC keys keygen
// draws; 0 for the asymmetric algorithms.
size_t SymmetricKeySize(smcrypt::v1::Algorithm alg);
// SymmetricPemType: "SM4 KEY", "AES KEY" or "HMAC KEY" (the keyring's PEM types).
absl::string_view SymmetricPemType(smcrypt::v1::Algorithm alg);

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_ALGORITHM_NAMES_H_
