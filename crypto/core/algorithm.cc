// algorithm.cc — the one table of algorithm names, kinds and symmetric key sizes
// (DESIGN.md, "Names used everywhere").
#include "smcrypt/algorithm.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace smcrypt {
namespace {

struct AlgorithmInfo {
  Algorithm alg;
  absl::string_view name;
  AlgorithmKind kind;
  size_t key_size;  // symmetric key bytes for cipher/AEAD, else 0
};

// kSm2 serves both signatures (GB/T 32918.2) and public-key encryption (GB/T 32918.4);
// its kind is listed as kSignature, and the registry's encryption factories accept it
// as well.
constexpr AlgorithmInfo kAlgorithms[] = {
    {Algorithm::kSm3, "SM3", AlgorithmKind::kHash, 0},
    {Algorithm::kSha256, "SHA-256", AlgorithmKind::kHash, 0},
    {Algorithm::kHmacSm3, "HMAC-SM3", AlgorithmKind::kMac, 0},
    {Algorithm::kHmacSha256, "HMAC-SHA-256", AlgorithmKind::kMac, 0},
    {Algorithm::kSm4Ecb, "SM4-ECB", AlgorithmKind::kCipher, 16},
    {Algorithm::kSm4Cbc, "SM4-CBC", AlgorithmKind::kCipher, 16},
    {Algorithm::kSm4Ctr, "SM4-CTR", AlgorithmKind::kCipher, 16},
    {Algorithm::kSm4Gcm, "SM4-GCM", AlgorithmKind::kAead, 16},
    {Algorithm::kSm4Ccm, "SM4-CCM", AlgorithmKind::kAead, 16},
    {Algorithm::kAes128Ecb, "AES-128-ECB", AlgorithmKind::kCipher, 16},
    {Algorithm::kAes128Cbc, "AES-128-CBC", AlgorithmKind::kCipher, 16},
    {Algorithm::kAes128Ctr, "AES-128-CTR", AlgorithmKind::kCipher, 16},
    {Algorithm::kAes128Gcm, "AES-128-GCM", AlgorithmKind::kAead, 16},
    {Algorithm::kAes256Ecb, "AES-256-ECB", AlgorithmKind::kCipher, 32},
    {Algorithm::kAes256Cbc, "AES-256-CBC", AlgorithmKind::kCipher, 32},
    {Algorithm::kAes256Ctr, "AES-256-CTR", AlgorithmKind::kCipher, 32},
    {Algorithm::kAes256Gcm, "AES-256-GCM", AlgorithmKind::kAead, 32},
    {Algorithm::kSm2, "SM2", AlgorithmKind::kSignature, 0},
    {Algorithm::kEcdsaP256, "ECDSA-P256", AlgorithmKind::kSignature, 0},
    {Algorithm::kEcdsaSecp256k1, "ECDSA-SECP256K1", AlgorithmKind::kSignature, 0},
    {Algorithm::kRsa2048Pss, "RSA-2048-PSS", AlgorithmKind::kSignature, 0},
    {Algorithm::kRsa3072Pss, "RSA-3072-PSS", AlgorithmKind::kSignature, 0},
    {Algorithm::kRsa2048Oaep, "RSA-2048-OAEP", AlgorithmKind::kPublicKeyEncryption, 0},
    {Algorithm::kRsa3072Oaep, "RSA-3072-OAEP", AlgorithmKind::kPublicKeyEncryption, 0},
    {Algorithm::kHpkeSm2Sm3Sm4Gcm, "HPKE-SM2-SM3-SM4GCM", AlgorithmKind::kHybrid, 0},
    {Algorithm::kHpkeP256Sha256Aes128Gcm, "HPKE-P256-SHA256-AES128GCM", AlgorithmKind::kHybrid,
     0},
};

// The table is indexed by the enum value; this keeps the two in step.
constexpr bool TableInEnumOrder() {
  for (size_t i = 0; i < sizeof(kAlgorithms) / sizeof(kAlgorithms[0]); ++i) {
    if (static_cast<size_t>(kAlgorithms[i].alg) != i) return false;
  }
  return true;
}
static_assert(TableInEnumOrder(), "kAlgorithms must list Algorithm values in enum order");
static_assert(static_cast<size_t>(Algorithm::kHpkeP256Sha256Aes128Gcm) + 1 ==
                  sizeof(kAlgorithms) / sizeof(kAlgorithms[0]),
              "every Algorithm needs a row in kAlgorithms");

const AlgorithmInfo* Find(Algorithm alg) {
  const size_t i = static_cast<size_t>(alg);
  if (i >= sizeof(kAlgorithms) / sizeof(kAlgorithms[0])) return nullptr;
  return &kAlgorithms[i];
}

}  // namespace

absl::string_view AlgorithmName(Algorithm alg) {
  const AlgorithmInfo* info = Find(alg);
  return info != nullptr ? info->name : absl::string_view("UNKNOWN");
}

absl::StatusOr<Algorithm> ParseAlgorithm(absl::string_view name) {
  for (const AlgorithmInfo& info : kAlgorithms) {
    if (absl::EqualsIgnoreCase(info.name, name)) return info.alg;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown algorithm \"", name, "\""));
}

AlgorithmKind KindOf(Algorithm alg) {
  const AlgorithmInfo* info = Find(alg);
  return info != nullptr ? info->kind : AlgorithmKind::kHash;
}

size_t SymmetricKeySize(Algorithm alg) {
  const AlgorithmInfo* info = Find(alg);
  return info != nullptr ? info->key_size : 0;
}

}  // namespace smcrypt
