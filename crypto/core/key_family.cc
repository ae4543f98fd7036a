#include "crypto/core/key_family.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "crypto/common/der.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"

namespace smcrypt {
namespace {

// 1.2.840.113549.1.1.1 rsaEncryption and 1.2.840.113549.1.1.10 RSASSA-PSS (RFC 8017).
constexpr absl::string_view kOidRsaEncryption{"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01", 9};
constexpr absl::string_view kOidRsaPss{"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0a", 9};

KeyFamily FromAlgorithmIdentifier(der::Reader alg) {
  auto oid = alg.ReadOid();
  if (!oid.ok()) return KeyFamily::kUnknown;
  if (*oid == kOidRsaEncryption || *oid == kOidRsaPss) return KeyFamily::kRsa;
  if (*oid == der::kOidSm2p256v1) return KeyFamily::kSm2;
  if (*oid != der::kOidEcPublicKey) return KeyFamily::kOther;
  auto curve = alg.ReadOid();
  if (!curve.ok()) return KeyFamily::kEcOther;
  if (*curve == der::kOidSm2p256v1) return KeyFamily::kSm2;
  if (*curve == der::kOidPrime256v1) return KeyFamily::kEcP256;
  if (*curve == der::kOidSecp256k1) return KeyFamily::kEcSecp256k1;
  return KeyFamily::kEcOther;
}

}  // namespace

absl::string_view KeyFamilyName(KeyFamily family) {
  switch (family) {
    case KeyFamily::kSm2: return "SM2";
    case KeyFamily::kEcP256: return "EC P-256";
    case KeyFamily::kEcSecp256k1: return "EC secp256k1";
    case KeyFamily::kEcOther: return "EC (other curve)";
    case KeyFamily::kRsa: return "RSA";
    case KeyFamily::kOther: return "another key type";
    case KeyFamily::kUnknown: break;
  }
  return "unknown";
}

KeyFamily DetectKeyFamily(absl::string_view in) {
  der::Reader top(in);
  auto outer = top.ReadSequence();
  if (!outer.ok()) return KeyFamily::kUnknown;
  // PKCS#8 starts with INTEGER version; SubjectPublicKeyInfo with the AlgorithmIdentifier.
  if (outer->PeekTag(der::kInteger)) {
    if (!outer->ReadSmallUnsigned().ok()) return KeyFamily::kUnknown;
  }
  auto alg = outer->ReadSequence();
  if (!alg.ok()) return KeyFamily::kUnknown;
  return FromAlgorithmIdentifier(*alg);
}

absl::StatusOr<KeyBytes> UnwrapKey(absl::string_view in) {
  KeyBytes out;
  if (!LooksLikePem(in)) {
    out.bytes = SecretDataFromStringView(in);
    return out;
  }
  auto block = PemDecode(in);
  if (!block.ok()) return block.status();
  out.bytes = std::move(block->der);
  out.pem_label = std::move(block->label);
  return out;
}

bool IsPublicKeyEncoding(absl::string_view bytes) {
  absl::StatusOr<KeyBytes> key = UnwrapKey(bytes);
  if (!key.ok()) return false;
  if (!key->pem_label.empty() && key->pem_label != "PUBLIC KEY") return false;
  der::Reader top(SecretDataAsStringView(key->bytes));
  auto spki = top.ReadSequence();
  if (!spki.ok() || !top.empty()) return false;
  auto alg = spki->ReadSequence();
  if (!alg.ok() || !spki->PeekTag(der::kBitString)) return false;
  return FromAlgorithmIdentifier(*alg) != KeyFamily::kUnknown;
}

}  // namespace smcrypt
