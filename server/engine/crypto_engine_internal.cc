// crypto_engine_internal.cc — the checks, error texts and cache keys that the
// CryptoEngine's files share (crypto_engine_internal.h).
#include "server/engine/crypto_engine_internal.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/error_reason.h"

namespace smcrypt::server {
namespace engine_internal {

absl::Status WrongAlgorithm(Algorithm alg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("algorithm ", AlgorithmName(alg), " cannot be used here: expected ", what));
}

// ExplainPrivateKeyError turns the parse error of an inline private key that is in
// fact a public key into FailedPrecondition saying so (as for a keyring public key).
// Only called after parsing failed, so a valid key is never examined here.
absl::Status ExplainPrivateKeyError(absl::Status s, Algorithm alg, const KeyInput& key) {
  if (s.ok() || s.code() != absl::StatusCode::kInvalidArgument ||
      key.kind != KeyInput::Kind::kInline || !IsPublicKeyEncoding(key.value)) {
    return s;
  }
  return WithReason(absl::FailedPreconditionError(absl::StrCat(
                        "inline key is a public key (SubjectPublicKeyInfo); ", AlgorithmName(alg),
                        " needs the private key here (PKCS#8 DER or PEM)")),
                    reason::kPrivateKeyRequired, {{"algorithm", AlgorithmName(alg)}});
}

// NameInlineKey prefixes "key.inline_key: " to the InvalidArgument a factory returns for
// an inline asymmetric key (the algorithm and options are checked before the factory
// runs, so that error is about the key bytes), so the caller sees which field it was.
// A FailedPrecondition from the factory is a well-formed key of another family
// (WRONG_KEY_FAMILY) unless it already carries a reason.
absl::Status NameInlineKey(absl::Status s, const KeyInput& key) {
  if (key.kind != KeyInput::Kind::kInline) return s;
  if (s.code() == absl::StatusCode::kFailedPrecondition &&
      ReasonOf(s).reason == absl::StatusCodeToString(s.code())) {
    return WithReason(std::move(s), reason::kWrongKeyFamily);
  }
  if (s.code() != absl::StatusCode::kInvalidArgument) return s;
  return WithReason(absl::InvalidArgumentError(absl::StrCat("key.inline_key: ", s.message())),
                    reason::kInvalidKey, {{"field", "key.inline_key"}});
}


absl::Status CheckSignatureOptions(Algorithm alg, const SignatureOptions& options,
                                   bool user_id_set) {
  if (!IsSignatureAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, ECDSA-P256, ECDSA-SECP256K1, RSA-2048-PSS or RSA-3072-PSS");
  }
  if (user_id_set && alg != Algorithm::kSm2) {
    return absl::InvalidArgumentError(
        absl::StrCat("options.user_id is for SM2 only, not ", AlgorithmName(alg)));
  }
  // With prehashed, data is e = SM3(Z || M) and Z already holds the ID (GB/T 32918.2
  // 5.5, 6.1 A1-A2): an ID given here would be silently ignored, so a caller who expects
  // it to be bound gets a signature that is not bound to it.
  if (user_id_set && options.prehashed) {
    return absl::InvalidArgumentError(
        "options.user_id has no effect with options.prehashed: the digest e = SM3(Z || M) "
        "already contains Z, computed from the ID; send the message instead, or leave "
        "user_id unset");
  }
  if (user_id_set && options.user_id.size() > kSm2MaxUserIdSize) {
    return absl::InvalidArgumentError(absl::StrCat("options.user_id must be at most ",
                                                   kSm2MaxUserIdSize, " bytes, got ",
                                                   options.user_id.size()));
  }
  if (options.encoding == SignatureEncoding::kRaw &&
      (alg == Algorithm::kRsa2048Pss || alg == Algorithm::kRsa3072Pss)) {
    return absl::InvalidArgumentError("options.encoding RAW is for SM2 and ECDSA, not RSA-PSS");
  }
  return absl::OkStatus();
}


absl::Status CheckSymmetricParams(const SymmetricParams& p) {
  if (!IsSymmetricAlgorithm(p.algorithm)) {
    return WrongAlgorithm(p.algorithm,
                          "an SM4 or AES mode (ECB, CBC, CTR, CFB, OFB, XTS, GCM, CCM)");
  }
  const bool aead = IsAeadAlgorithm(p.algorithm);
  if (!aead) {
    if (!p.aad.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("aad is for GCM and CCM only, not ", AlgorithmName(p.algorithm)));
    }
    if (p.tag_length != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("tag_length is for GCM and CCM only, not ", AlgorithmName(p.algorithm)));
    }
    if (CipherModeOf(p.algorithm) == CipherMode::kEcb && p.nonce.has_value() && !p.nonce->empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ECB takes no nonce/IV, got ", p.nonce->size(), " bytes"));
    }
    const CipherMode mode = CipherModeOf(p.algorithm);
    if (mode != CipherMode::kEcb && mode != CipherMode::kCbc && p.padding.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("padding is for ECB and CBC only, not ", AlgorithmName(p.algorithm)));
    }
  } else if (p.padding.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding is for ECB and CBC only, not ", AlgorithmName(p.algorithm)));
  }
  return absl::OkStatus();
}


absl::Status CheckHybridAlgorithm(Algorithm alg) {
  if (!IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "HPKE-SM2-SM3-SM4GCM or HPKE-P256-SHA256-AES128GCM");
  }
  return absl::OkStatus();
}

std::string KeyringPrimitiveKey(Algorithm alg, absl::string_view variant,
                                absl::string_view key_id, uint32_t version) {
  return absl::StrCat(AlgorithmName(alg), "|", variant, "|", key_id, "|", version);
}

// PublicCacheKey is the LRU key of a primitive parsed from public key bytes: algorithm,
// the length-prefixed options that shape the primitive, then the exact key bytes.
std::string PublicCacheKey(Algorithm alg, absl::string_view variant, absl::string_view key) {
  return absl::StrCat(AlgorithmName(alg), "|", variant.size(), ":", variant, "|", key);
}

std::string SignatureVariant(const SignatureOptions& o) {
  return absl::StrCat(static_cast<int>(o.encoding), o.prehashed ? "d" : "m", o.user_id);
}

std::string FormatVariant(Sm2CiphertextFormat f) { return absl::StrCat(static_cast<int>(f)); }

bool IsDefaultSignatureOptions(const SignatureOptions& o) {
  const SignatureOptions d;
  return o.user_id == d.user_id && o.encoding == d.encoding && o.prehashed == d.prehashed;
}

}  // namespace engine_internal

}  // namespace smcrypt::server
