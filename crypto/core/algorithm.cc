// algorithm.cc — the one table of algorithm names, kinds, cipher modes and symmetric key
// sizes (docs/design.md, "Names used everywhere").
#include "smcrypt/algorithm.h"

#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace smcrypt {
namespace {

struct AlgorithmInfo {
  Algorithm alg;
  absl::string_view name;
  AlgorithmKind kind;
  size_t key_size;  // symmetric key bytes for cipher/AEAD, else 0
  CipherMode mode;  // kNone unless kind is kCipher or kAead
  bool also_public_key_encryption;  // SM2: a signature and an encryption algorithm
};

// kSm2 serves both signatures (GB/T 32918.2) and public-key encryption (GB/T 32918.4);
// its kind is listed as kSignature, with also_public_key_encryption set, and the
// registry's encryption factories accept it as well.
using K = AlgorithmKind;
using M = CipherMode;
constexpr AlgorithmInfo kAlgorithms[] = {
    {Algorithm::kSm3, "SM3", K::kHash, 0, M::kNone, false},
    {Algorithm::kSha256, "SHA-256", K::kHash, 0, M::kNone, false},
    {Algorithm::kHmacSm3, "HMAC-SM3", K::kMac, 0, M::kNone, false},
    {Algorithm::kHmacSha256, "HMAC-SHA-256", K::kMac, 0, M::kNone, false},
    {Algorithm::kSm4Ecb, "SM4-ECB", K::kCipher, 16, M::kEcb, false},
    {Algorithm::kSm4Cbc, "SM4-CBC", K::kCipher, 16, M::kCbc, false},
    {Algorithm::kSm4Ctr, "SM4-CTR", K::kCipher, 16, M::kCtr, false},
    {Algorithm::kSm4Gcm, "SM4-GCM", K::kAead, 16, M::kGcm, false},
    {Algorithm::kSm4Ccm, "SM4-CCM", K::kAead, 16, M::kCcm, false},
    {Algorithm::kAes128Ecb, "AES-128-ECB", K::kCipher, 16, M::kEcb, false},
    {Algorithm::kAes128Cbc, "AES-128-CBC", K::kCipher, 16, M::kCbc, false},
    {Algorithm::kAes128Ctr, "AES-128-CTR", K::kCipher, 16, M::kCtr, false},
    {Algorithm::kAes128Gcm, "AES-128-GCM", K::kAead, 16, M::kGcm, false},
    {Algorithm::kAes256Ecb, "AES-256-ECB", K::kCipher, 32, M::kEcb, false},
    {Algorithm::kAes256Cbc, "AES-256-CBC", K::kCipher, 32, M::kCbc, false},
    {Algorithm::kAes256Ctr, "AES-256-CTR", K::kCipher, 32, M::kCtr, false},
    {Algorithm::kAes256Gcm, "AES-256-GCM", K::kAead, 32, M::kGcm, false},
    {Algorithm::kSm2, "SM2", K::kSignature, 0, M::kNone, true},
    {Algorithm::kEcdsaP256, "ECDSA-P256", K::kSignature, 0, M::kNone, false},
    {Algorithm::kEcdsaSecp256k1, "ECDSA-SECP256K1", K::kSignature, 0, M::kNone, false},
    {Algorithm::kRsa2048Pss, "RSA-2048-PSS", K::kSignature, 0, M::kNone, false},
    {Algorithm::kRsa3072Pss, "RSA-3072-PSS", K::kSignature, 0, M::kNone, false},
    {Algorithm::kRsa2048Oaep, "RSA-2048-OAEP", K::kPublicKeyEncryption, 0, M::kNone, false},
    {Algorithm::kRsa3072Oaep, "RSA-3072-OAEP", K::kPublicKeyEncryption, 0, M::kNone, false},
    {Algorithm::kHpkeSm2Sm3Sm4Gcm, "HPKE-SM2-SM3-SM4GCM", K::kHybrid, 0, M::kNone, false},
    {Algorithm::kHpkeP256Sha256Aes128Gcm, "HPKE-P256-SHA256-AES128GCM", K::kHybrid, 0, M::kNone,
     false},
    {Algorithm::kSm4Cfb, "SM4-CFB", K::kCipher, 16, M::kCfb, false},
    {Algorithm::kSm4Ofb, "SM4-OFB", K::kCipher, 16, M::kOfb, false},
    // SM4-XTS: K1 ‖ K2. "SM4-XTS" is IEEE 1619's tweak order, "SM4-XTS-GB" GB/T 17964's.
    {Algorithm::kSm4Xts, "SM4-XTS", K::kCipher, 32, M::kXts, false},
    {Algorithm::kSm4XtsGb, "SM4-XTS-GB", K::kCipher, 32, M::kXts, false},
};

// The table is indexed by the enum value; this keeps the two in step.
constexpr bool TableInEnumOrder() {
  for (size_t i = 0; i < sizeof(kAlgorithms) / sizeof(kAlgorithms[0]); ++i) {
    if (static_cast<size_t>(kAlgorithms[i].alg) != i) return false;
  }
  return true;
}
static_assert(TableInEnumOrder(), "kAlgorithms must list Algorithm values in enum order");
static_assert(static_cast<size_t>(Algorithm::kSm4XtsGb) + 1 ==
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

absl::Span<const Algorithm> AllAlgorithms() {
  static constexpr auto kAll = [] {
    std::array<Algorithm, sizeof(kAlgorithms) / sizeof(kAlgorithms[0])> all{};
    for (size_t i = 0; i < all.size(); ++i) all[i] = kAlgorithms[i].alg;
    return all;
  }();
  return kAll;
}

bool HasKind(Algorithm alg, AlgorithmKind kind) {
  const AlgorithmInfo* info = Find(alg);
  if (info == nullptr) return false;
  return info->kind == kind ||
         (kind == AlgorithmKind::kPublicKeyEncryption && info->also_public_key_encryption);
}

CipherMode CipherModeOf(Algorithm alg) {
  const AlgorithmInfo* info = Find(alg);
  return info != nullptr ? info->mode : CipherMode::kNone;
}

size_t SymmetricKeySize(Algorithm alg) {
  const AlgorithmInfo* info = Find(alg);
  return info != nullptr ? info->key_size : 0;
}

}  // namespace smcrypt
