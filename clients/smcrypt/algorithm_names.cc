#include "clients/smcrypt/algorithm_names.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "google/protobuf/descriptor.h"

namespace smcrypt::cli {
namespace {

using smcrypt::v1::Algorithm;

// EnumName is the proto spelling (SM4_GCM).
std::string EnumName(Algorithm alg) { return smcrypt::v1::Algorithm_Name(alg); }

bool IsHash(Algorithm alg) { return alg == smcrypt::v1::SM3 || alg == smcrypt::v1::SHA_256; }
bool IsMac(Algorithm alg) { return absl::StartsWith(EnumName(alg), "HMAC_"); }
bool IsSymmetric(Algorithm alg) {
  std::string n = EnumName(alg);
  return absl::StartsWith(n, "SM4_") || absl::StartsWith(n, "AES_");
}
bool IsSignature(Algorithm alg) {
  std::string n = EnumName(alg);
  return alg == smcrypt::v1::SM2 || absl::StartsWith(n, "ECDSA_") ||
         (absl::StartsWith(n, "RSA_") && absl::EndsWith(n, "_PSS"));
}
bool IsPublicKeyEncrypt(Algorithm alg) {
  std::string n = EnumName(alg);
  return alg == smcrypt::v1::SM2 || (absl::StartsWith(n, "RSA_") && absl::EndsWith(n, "_OAEP"));
}
bool IsHybrid(Algorithm alg) { return absl::StartsWith(EnumName(alg), "HPKE_"); }

absl::string_view FamilyNoun(AlgorithmFamily family) {
  switch (family) {
    case AlgorithmFamily::kHash: return "hash";
    case AlgorithmFamily::kMac: return "MAC";
    case AlgorithmFamily::kSymmetric: return "symmetric cipher";
    case AlgorithmFamily::kSignature: return "signature";
    case AlgorithmFamily::kPublicKeyEncrypt: return "public-key encryption";
    case AlgorithmFamily::kHybrid: return "hybrid encryption";
    case AlgorithmFamily::kKeyPair: return "key-pair";
    case AlgorithmFamily::kKeyGen: return "key generation";
    case AlgorithmFamily::kAny: return "known";
  }
  return "";
}

}  // namespace

std::string AlgorithmName(Algorithm alg) {
  return absl::StrReplaceAll(EnumName(alg), {{"_", "-"}});
}

bool InFamily(Algorithm alg, AlgorithmFamily family) {
  if (alg == smcrypt::v1::ALGORITHM_UNSPECIFIED) return false;
  switch (family) {
    case AlgorithmFamily::kHash: return IsHash(alg);
    case AlgorithmFamily::kMac: return IsMac(alg);
    case AlgorithmFamily::kSymmetric: return IsSymmetric(alg);
    case AlgorithmFamily::kSignature: return IsSignature(alg);
    case AlgorithmFamily::kPublicKeyEncrypt: return IsPublicKeyEncrypt(alg);
    case AlgorithmFamily::kHybrid: return IsHybrid(alg);
    case AlgorithmFamily::kKeyPair:
      return IsSignature(alg) || IsPublicKeyEncrypt(alg) || IsHybrid(alg);
    case AlgorithmFamily::kKeyGen:
      return InFamily(alg, AlgorithmFamily::kKeyPair) || IsSymmetric(alg) || IsMac(alg);
    case AlgorithmFamily::kAny:
      return true;
  }
  return false;
}

std::vector<std::string> AlgorithmsOf(AlgorithmFamily family) {
  std::vector<std::string> names;
  const google::protobuf::EnumDescriptor* desc = smcrypt::v1::Algorithm_descriptor();
  for (int i = 0; i < desc->value_count(); ++i) {
    auto alg = static_cast<Algorithm>(desc->value(i)->number());
    if (InFamily(alg, family)) names.push_back(AlgorithmName(alg));
  }
  return names;
}

absl::StatusOr<Algorithm> ParseAlgorithm(absl::string_view name, AlgorithmFamily family) {
  std::string upper = absl::AsciiStrToUpper(name);
  std::string accepted = absl::StrJoin(AlgorithmsOf(family), ", ");
  Algorithm alg;
  if (!absl::StrContains(upper, '_') &&
      smcrypt::v1::Algorithm_Parse(absl::StrReplaceAll(upper, {{"-", "_"}}), &alg) &&
      alg != smcrypt::v1::ALGORITHM_UNSPECIFIED) {
    if (InFamily(alg, family)) return alg;
    return absl::InvalidArgumentError(
        absl::StrCat("--alg ", name, " is not a ", FamilyNoun(family),
                     " algorithm; expected one of: ", accepted));
  }
  std::string hint;
  if (smcrypt::v1::Algorithm_Parse(upper, &alg) && alg != smcrypt::v1::ALGORITHM_UNSPECIFIED) {
    hint = absl::StrCat(" (did you mean ", AlgorithmName(alg), "?)");
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown algorithm \"", name, "\"", hint,
                                                 "; expected one of: ", accepted));
}

bool IsAead(Algorithm alg) {
  std::string n = EnumName(alg);
  return IsSymmetric(alg) && (absl::EndsWith(n, "_GCM") || absl::EndsWith(n, "_CCM"));
}

bool UsesPadding(Algorithm alg) {
  std::string n = EnumName(alg);
  return IsSymmetric(alg) && (absl::EndsWith(n, "_ECB") || absl::EndsWith(n, "_CBC"));
}

size_t DefaultNonceSize(Algorithm alg) {
  std::string n = EnumName(alg);
  if (absl::EndsWith(n, "_ECB")) return 0;
  if (IsAead(alg)) return 12;
  return 16;
}

size_t SymmetricKeySize(Algorithm alg) {
  if (IsMac(alg)) return 32;
  if (!IsSymmetric(alg)) return 0;
  const std::string n = EnumName(alg);
  return absl::StartsWith(n, "AES_256_") || absl::StartsWith(n, "SM4_XTS") ? 32 : 16;
}

absl::string_view SymmetricPemType(Algorithm alg) {
  if (IsMac(alg)) return "HMAC KEY";
  return absl::StartsWith(EnumName(alg), "SM4_") ? "SM4 KEY" : "AES KEY";
}

}  // namespace smcrypt::cli
