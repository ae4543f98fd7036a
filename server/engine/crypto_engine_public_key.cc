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
  absl::StatusOr<absl::string_view> k = PrivateKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  PublicKeyEncryptionOptions options;
  options.sm2_format = format;
  // An inline private key is parsed for this request only and never cached.
  absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyDecrypt>> dec =
      KeyedPrimitive(ring->decrypters, alg, FormatVariant(format), key, /*filed_fits=*/true,
                     [&] { return Shared(NewPublicKeyDecrypt(alg, *k, options)); });
  if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, key), key);
  absl::StatusOr<std::string> pt = (*dec)->Decrypt(ciphertext);
  if (pt.ok()) Record(alg, Operation::kDecrypt, ciphertext.size());
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
  absl::StatusOr<absl::string_view> k = PrivateKey(*ring, alg, key);
  if (!k.ok()) return k.status();
  // An inline private key is parsed for this request only and never cached.
  absl::StatusOr<std::shared_ptr<const smcrypt::HybridDecrypt>> dec =
      KeyedPrimitive(ring->hybrid_decrypters, alg, "", key, /*filed_fits=*/true,
                     [&] { return Shared(NewHybridDecrypt(alg, *k)); });
  if (!dec.ok()) return NameInlineKey(ExplainPrivateKeyError(dec.status(), alg, key), key);
  absl::StatusOr<std::string> pt = (*dec)->Decrypt(ciphertext, info);
  if (pt.ok()) Record(alg, Operation::kDecrypt, ciphertext.size());
  RecordDecryptResult(observer_, alg, pt.status());
  return pt;
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
