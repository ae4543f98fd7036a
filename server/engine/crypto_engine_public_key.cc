// crypto_engine_public_key.cc — the CryptoEngine's public-key and hybrid encryption,
// key pairs, public keys and randomness.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/crypto_engine_internal.h"
#include "server/engine/error_reason.h"
#include "smcrypt/random.h"

namespace smcrypt::server {

using engine_internal::WrongAlgorithm;
using engine_internal::ExplainPrivateKeyError;
using engine_internal::NameInlineKey;
using engine_internal::CheckSignatureOptions;
using engine_internal::CheckSymmetricParams;
using engine_internal::CheckHybridAlgorithm;
using engine_internal::KeyringPrimitiveKey;
using engine_internal::PublicCacheKey;
using engine_internal::SignatureVariant;
using engine_internal::FormatVariant;
using engine_internal::IsDefaultSignatureOptions;
using engine_internal::CountsAsVerified;
using engine_internal::RecordDecryptResult;
using engine_internal::KeyedPrimitive;
using engine_internal::Shared;
using engine_internal::CachedPublic;
using engine_internal::IsDecryptionFailure;
using engine_internal::TryKeys;
using engine_internal::VersionsFailed;

// ---- Public-key encryption ---------------------------------------------------------

absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> CryptoEngine::EncrypterFor(
    const Ring& ring, Algorithm alg, const KeyInput& key, Sm2CiphertextFormat format) const {
  if (!IsPublicKeyEncryptionAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, RSA-2048-OAEP or RSA-3072-OAEP");
  }
  absl::StatusOr<absl::string_view> k = PublicKey(ring, alg, key);
  if (!k.ok()) return k.status();
  PublicKeyEncryptionOptions options;
  options.sm2_format = format;
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> enc =
      KeyedPrimitive(ring.encrypters, alg, FormatVariant(format), key, /*filed_fits=*/true, [&] {
        return CachedPublic(encrypter_cache_, PublicCacheKey(alg, FormatVariant(format), *k),
                            [&] { return NewPublicKeyEncrypt(alg, *k, options); });
      });
  if (!enc.ok()) return NameInlineKey(enc.status(), key);
  return enc;
}

absl::StatusOr<std::string> CryptoEngine::PublicKeyEncrypt(Algorithm alg, const KeyInput& key,
                                                           absl::string_view plaintext,
                                                           Sm2CiphertextFormat format) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> enc =
      EncrypterFor(*ring, alg, key, format);
  if (!enc.ok()) return enc.status();
  absl::StatusOr<std::string> ct = (*enc)->Encrypt(plaintext);
  if (ct.ok()) Record(alg, Operation::kEncrypt, plaintext.size());
  return ct;
}

absl::StatusOr<std::string> CryptoEngine::PublicKeyDecrypt(Algorithm alg, const KeyInput& key,
                                                           absl::string_view ciphertext,
                                                           Sm2CiphertextFormat format) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
  if (!IsPublicKeyEncryptionAlgorithm(alg)) {
    return WrongAlgorithm(alg, "SM2, RSA-2048-OAEP or RSA-3072-OAEP");
  }
  PublicKeyEncryptionOptions options;
  options.sm2_format = format;
  // Each version of the key in turn (TrialKeys: one unless the request named none).
  KeyTrial t;
  absl::StatusOr<std::string> pt = TryKeys<absl::StatusOr<std::string>>(
      TrialKeys(*ring, key, /*private_only=*/true), &t,
      [&](const KeyInput& k) -> absl::StatusOr<std::string> {
        absl::StatusOr<absl::string_view> kb = PrivateKey(*ring, alg, k);
        if (!kb.ok()) return kb.status();
        // An inline private key is parsed for this request only and never cached.
        absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyDecrypt>> dec =
            KeyedPrimitive(ring->decrypters, alg, FormatVariant(format), k, /*filed_fits=*/true,
                           [&] { return Shared(NewPublicKeyDecrypt(alg, *kb, options)); });
        if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, k), k);
        return (*dec)->Decrypt(ciphertext);
      },
      [](const absl::StatusOr<std::string>& r) { return IsDecryptionFailure(r.status()); });
  return EndDecryption(alg, key, t, ciphertext.size(), std::move(pt));
}

absl::StatusOr<std::string> CryptoEngine::EndDecryption(Algorithm alg, const KeyInput& key,
                                                        const KeyTrial& t, size_t bytes,
                                                        absl::StatusOr<std::string> pt) const {
  EndTrial(Operation::kDecrypt, key, t, pt.ok());
  if (t.tried.size() > 1 && IsDecryptionFailure(pt.status())) {
    pt = VersionsFailed(key.value, t.tried);
  }
  if (pt.ok()) Record(alg, Operation::kDecrypt, bytes);
  RecordDecryptResult(observer_, alg, pt.status());
  return pt;
}

// ---- Hybrid encryption -------------------------------------------------------------

absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> CryptoEngine::HybridEncrypterFor(
    const Ring& ring, Algorithm alg, const KeyInput& key) const {
  absl::Status s = CheckHybridAlgorithm(alg);
  if (!s.ok()) return s;
  absl::StatusOr<absl::string_view> k = PublicKey(ring, alg, key);
  if (!k.ok()) return k.status();
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> enc =
      KeyedPrimitive(ring.hybrid_encrypters, alg, "", key, /*filed_fits=*/true, [&] {
        return CachedPublic(hybrid_encrypter_cache_, PublicCacheKey(alg, "", *k),
                            [&] { return NewHybridEncrypt(alg, *k); });
      });
  if (!enc.ok()) return NameInlineKey(enc.status(), key);
  return enc;
}

absl::StatusOr<std::string> CryptoEngine::HybridEncrypt(Algorithm alg, const KeyInput& key,
                                                        absl::string_view plaintext,
                                                        absl::string_view info) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> enc = HybridEncrypterFor(*ring, alg, key);
  if (!enc.ok()) return enc.status();
  absl::StatusOr<std::string> ct = (*enc)->Encrypt(plaintext, info);
  if (ct.ok()) Record(alg, Operation::kEncrypt, plaintext.size());
  return ct;
}

absl::StatusOr<std::string> CryptoEngine::HybridDecrypt(Algorithm alg, const KeyInput& key,
                                                        absl::string_view ciphertext,
                                                        absl::string_view info) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
  absl::Status s = CheckHybridAlgorithm(alg);
  if (!s.ok()) return s;
  // Each version of the key in turn (TrialKeys: one unless the request named none).
  KeyTrial t;
  absl::StatusOr<std::string> pt = TryKeys<absl::StatusOr<std::string>>(
      TrialKeys(*ring, key, /*private_only=*/true), &t,
      [&](const KeyInput& k) -> absl::StatusOr<std::string> {
        absl::StatusOr<absl::string_view> kb = PrivateKey(*ring, alg, k);
        if (!kb.ok()) return kb.status();
        // An inline private key is parsed for this request only and never cached.
        absl::StatusOr<std::shared_ptr<const smcrypt::HybridDecrypt>> dec =
            KeyedPrimitive(ring->hybrid_decrypters, alg, "", k, /*filed_fits=*/true,
                           [&] { return Shared(NewHybridDecrypt(alg, *kb)); });
        if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, k), k);
        return (*dec)->Decrypt(ciphertext, info);
      },
      [](const absl::StatusOr<std::string>& r) { return IsDecryptionFailure(r.status()); });
  return EndDecryption(alg, key, t, ciphertext.size(), std::move(pt));
}

// ---- Keys, randomness --------------------------------------------------------------

absl::StatusOr<GeneratedKeyPair> CryptoEngine::GenerateKeyPair(Algorithm alg,
                                                               bool omit_private_key) const {
  if (!IsSignatureAlgorithm(alg) && !IsPublicKeyEncryptionAlgorithm(alg) &&
      !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "a public-key algorithm (SM2, ECDSA-*, RSA-*, HPKE-*)");
  }
  absl::StatusOr<KeyPair> pair = smcrypt::GenerateKeyPair(alg);
  if (!pair.ok()) return pair.status();
  GeneratedKeyPair out;
  out.public_key_der = std::move(pair->public_key_der);
  if (!options_.allow_inline_private_keys) {
    out.private_key_withheld = true;
  } else if (!omit_private_key) {
    out.private_key_der = std::move(pair->private_key_der);
  }
  return out;
}

absl::StatusOr<std::string> CryptoEngine::GetPublicKey(Algorithm alg, const KeyInput& key) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
  if (!IsSignatureAlgorithm(alg) && !IsPublicKeyEncryptionAlgorithm(alg) &&
      !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "a public-key algorithm (SM2, ECDSA-*, RSA-*, HPKE-*)");
  }
  if (key.kind == KeyInput::Kind::kKeyId) {
    absl::StatusOr<const StoredKey*> entry = KeyringEntry(*ring, alg, key);
    if (!entry.ok()) return entry.status();
    return (*entry)->public_key_der;
  }
  absl::StatusOr<absl::string_view> k = PrivateKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  absl::StatusOr<std::string> pub = PublicKeyFromPrivate(alg, *k);
  if (!pub.ok()) return NameInlineKey(ExplainPrivateKeyError(pub.status(), alg, key), key);
  return pub;
}

absl::StatusOr<std::vector<std::pair<uint32_t, std::string>>> CryptoEngine::PublicKeyVersions(
    Algorithm alg, const KeyInput& key) const {
  const std::shared_ptr<const Ring> ring = RingFor(key);
  std::vector<std::pair<uint32_t, std::string>> out;
  if (key.kind != KeyInput::Kind::kKeyId) return out;
  if (!IsSignatureAlgorithm(alg) && !IsPublicKeyEncryptionAlgorithm(alg) &&
      !IsHybridAlgorithm(alg)) {
    return WrongAlgorithm(alg, "a public-key algorithm (SM2, ECDSA-*, RSA-*, HPKE-*)");
  }
  // The primary version answers the family check (all versions are of one family).
  absl::StatusOr<const StoredKey*> primary = KeyringEntry(*ring, alg, KeyInput::Id(key.value));
  if (!primary.ok()) return primary.status();
  for (const StoredKey* e : ring->keys->Versions(key.value)) {
    out.emplace_back(e->version, e->public_key_der);
  }
  return out;
}

absl::StatusOr<std::string> CryptoEngine::GenerateRandom(size_t length) const {
  if (length == 0 || length > kMaxRandomBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("length must be 1 to ", kMaxRandomBytes, " bytes, got ", length));
  }
  return RandomString(length);
}

}  // namespace smcrypt::server
