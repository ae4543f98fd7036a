// crypto_engine_envelope.cc — the CryptoEngine's key management operations: Rewrap
// (open under any retained version of a keyring key, seal under its primary) and
// GenerateDataKey (a fresh data key, wrapped). Both go through the engine's own
// Decrypt / PublicKeyDecrypt / HybridDecrypt and Encrypt / PublicKeyEncrypt /
// HybridEncrypt, so their checks, errors, metrics and keyring primitives are those.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/crypto_engine_internal.h"
#include "smcrypt/random.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::server {
namespace {

using engine_internal::WrongAlgorithm;

constexpr absl::string_view kRewrapAlgorithms =
    "an algorithm of Decrypt (SM4-*, AES-*), PublicKeyDecrypt (SM2, RSA-*-OAEP) or "
    "HybridDecrypt (HPKE-*)";

// TakeSecret moves a plaintext the engine returned into SecretData and wipes the string.
SecretData TakeSecret(std::string* s) {
  SecretData out = SecretDataFromStringView(*s);
  SecureZero(s->data(), s->size());
  s->clear();
  return out;
}

// NotFor: InvalidArgument for a request field `field` set for an algorithm that does not
// take it.
absl::Status NotFor(absl::string_view field, Algorithm alg) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is not a field of ", AlgorithmName(alg), " (must be empty)"));
}

// CheckRewrapFields: the fields of `in` that its algorithm takes (crypto.proto,
// RewrapRequest); the symmetric ones are Decrypt's to check.
absl::Status CheckRewrapFields(const RewrapInput& in) {
  const Algorithm alg = in.algorithm;
  if (IsSymmetricAlgorithm(alg)) {
    if (!in.info.empty()) return NotFor("info", alg);
    // A PKCS#7 padding check that fails is an answer about the plaintext: Rewrap would be a
    // padding oracle (a chosen ciphertext block by block) for a client allowed rewrap but
    // not decrypt. Such data is re-encrypted with Decrypt and Encrypt.
    const CipherMode mode = CipherModeOf(alg);
    if (!IsAeadAlgorithm(alg) && (mode == CipherMode::kEcb || mode == CipherMode::kCbc) &&
        in.padding.value_or(Padding::kPkcs7) == Padding::kPkcs7) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Rewrap does not take ", AlgorithmName(alg),
          " with PKCS#7 padding: whether the padding checks would tell a caller without "
          "decrypt about the plaintext (a padding oracle); re-encrypt such data with Decrypt "
          "and Encrypt, or rewrap data made with padding NONE"));
    }
    return absl::OkStatus();
  }
  if (!IsPublicKeyEncryptionAlgorithm(alg) && !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, kRewrapAlgorithms);
  }
  if (!in.nonce.empty()) return NotFor("nonce", alg);
  if (!in.tag.empty()) return NotFor("tag", alg);
  if (!in.aad.empty()) return NotFor("aad", alg);
  if (in.padding.has_value()) return NotFor("padding", alg);
  if (IsPublicKeyEncryptionAlgorithm(alg) && !in.info.empty()) return NotFor("info", alg);
  return absl::OkStatus();
}

// KeyringOnly: Rewrap takes keyring keys only (a key_id).
absl::Status KeyringOnly(const KeyInput& key, absl::string_view what) {
  switch (key.kind) {
    case KeyInput::Kind::kKeyId:
      return absl::OkStatus();
    case KeyInput::Kind::kNone:
      return absl::InvalidArgumentError("key is required (key_id)");
    case KeyInput::Kind::kInline:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "key.inline_key: ", what, " takes a keyring key (key.key_id), not an inline key"));
}

// OpenedForRewrap: the plaintext of a Rewrap input and the version of the key that
// opened it.
struct OpenedForRewrap {
  SecretData plaintext;
  uint32_t version = 0;
};

}  // namespace

size_t DataKeySize(DataKeySpec spec) { return spec == DataKeySpec::kAes256 ? 32 : 16; }

absl::StatusOr<Rewrapped> CryptoEngine::Rewrap(const RewrapInput& in) const {
  absl::Status s = KeyringOnly(in.key, "Rewrap");
  if (!s.ok()) return s;
  s = CheckRewrapFields(in);
  if (!s.ok()) return s;
  // The source key, looked up once (the service has done so; a direct caller has not).
  KeyInput source = in.key;
  Resolve(&source);
  const Algorithm alg = in.algorithm;
  absl::StatusOr<std::string> pt;
  if (IsSymmetricAlgorithm(alg)) {
    SymmetricParams p;
    p.algorithm = alg;
    p.key = source;
    p.nonce = in.nonce;
    p.aad = in.aad;
    p.padding = in.padding;
    pt = Decrypt(p, in.ciphertext, in.tag);
  } else if (IsPublicKeyEncryptionAlgorithm(alg)) {
    pt = PublicKeyDecrypt(alg, source, in.ciphertext, in.format);
  } else {
    pt = HybridDecrypt(alg, source, in.ciphertext, in.info);
  }
  if (!pt.ok()) return pt.status();
  OpenedForRewrap opened;
  opened.plaintext = TakeSecret(&*pt);
  // The version that opened the input: the one that authenticated when the checks tried
  // the retained versions (KeyInput::trial), else the one the call fixed for its key.
  opened.version = source.entry.ok() ? (*source.entry)->version : source.version;
  if (source.trial != nullptr && source.trial->version != 0) {
    opened.version = source.trial->version;
  }

  // The target: the key's primary version in the same keyring.
  KeyInput target = KeyInput::Id(source.value, 0);
  Resolve(&target, source.keyring);
  if (!target.entry.ok()) return target.entry.status();
  const absl::string_view plaintext = SecretDataAsStringView(opened.plaintext);
  Rewrapped out;
  out.key_version = (*target.entry)->version;
  out.source_key_version = opened.version;
  if (IsSymmetricAlgorithm(alg)) {
    SymmetricParams p;
    p.algorithm = alg;
    p.key = target;
    p.aad = in.aad;
    p.padding = in.padding;
    if (IsAeadAlgorithm(alg)) p.tag_length = static_cast<uint32_t>(in.tag.size());
    absl::StatusOr<SymmetricCiphertext> ct = Encrypt(p, plaintext);
    if (!ct.ok()) return ct.status();
    out.ciphertext = std::move(ct->ciphertext);
    out.nonce = std::move(ct->nonce);
    out.tag = std::move(ct->tag);
    return out;
  }
  absl::StatusOr<std::string> ct =
      IsPublicKeyEncryptionAlgorithm(alg)
          ? PublicKeyEncrypt(alg, target, plaintext, in.format)
          : HybridEncrypt(alg, target, plaintext, in.info);
  if (!ct.ok()) return ct.status();
  out.ciphertext = *std::move(ct);
  return out;
}

std::vector<absl::StatusOr<Rewrapped>> CryptoEngine::RewrapBatch(
    absl::Span<const RewrapInput> items) const {
  std::vector<absl::StatusOr<Rewrapped>> out;
  out.reserve(items.size());
  for (const RewrapInput& in : items) out.push_back(Rewrap(in));
  return out;
}

absl::StatusOr<DataKey> CryptoEngine::GenerateDataKey(const DataKeyInput& in) const {
  const Algorithm alg = in.algorithm;
  const bool gcm = alg == Algorithm::kSm4Gcm || alg == Algorithm::kAes128Gcm ||
                   alg == Algorithm::kAes256Gcm;
  if (!gcm && !IsPublicKeyEncryptionAlgorithm(alg) && !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg,
                          "SM4-GCM, AES-128-GCM, AES-256-GCM, SM2, RSA-2048-OAEP, "
                          "RSA-3072-OAEP or HPKE-*");
  }
  if (gcm) {
    absl::Status s = KeyringOnly(in.key, "a GCM wrapping of GenerateDataKey");
    if (!s.ok()) return s;
  } else if (!in.aad.empty()) {
    return NotFor("aad", alg);
  }
  if (!IsHybridAlgorithm(alg) && !in.info.empty()) return NotFor("info", alg);

  DataKey out;
  out.plaintext_key.resize(DataKeySize(in.spec));
  absl::Status drawn = RandomBytes(out.plaintext_key.data(), out.plaintext_key.size());
  if (!drawn.ok()) return drawn;
  const absl::string_view key = SecretDataAsStringView(out.plaintext_key);
  if (gcm) {
    SymmetricParams p;
    p.algorithm = alg;
    p.key = in.key;
    p.aad = in.aad;
    p.tag_length = 16;
    absl::StatusOr<SymmetricCiphertext> ct = Encrypt(p, key);
    if (!ct.ok()) return ct.status();
    out.ciphertext = std::move(ct->ciphertext);
    out.nonce = std::move(ct->nonce);
    out.tag = std::move(ct->tag);
    return out;
  }
  absl::StatusOr<std::string> ct = IsPublicKeyEncryptionAlgorithm(alg)
                                       ? PublicKeyEncrypt(alg, in.key, key, in.format)
                                       : HybridEncrypt(alg, in.key, key, in.info);
  if (!ct.ok()) return ct.status();
  out.ciphertext = *std::move(ct);
  return out;
}

}  // namespace smcrypt::server
