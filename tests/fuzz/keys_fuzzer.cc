// Key parsing fuzzer: the fuzzed bytes as every kind of key the service accepts.
//  - SM2 points (FromPoint): 65-byte uncompressed / 33-byte compressed encodings are
//    accepted exactly when OpenSSL's EC_POINT_oct2point accepts them on sm2p256v1, and
//    re-encode to OpenSSL's encoding; other lengths are refused.
//  - SM2 SubjectPublicKeyInfo and PKCS#8 DER (Sm2PublicKeyFromSpki, Sm2PrivateKeyFromPkcs8):
//    what parses re-encodes and parses back to the same key.
//  - PEM (PemDecodeAll, UnwrapKey), DetectKeyFamily, and the registry factories that
//    take public or private keys of every asymmetric algorithm (SM2, ECDSA, RSA, HPKE),
//    DER, PEM or raw, as the engine passes inline keys: errors, never crashes.
// Aborts on any mismatch.
//
// Input: algorithm byte ‖ key bytes.
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>

#include <memory>

#include "crypto/core/key_family.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// OpenSslPoint re-encodes `point` uncompressed, or nullopt when OpenSSL rejects it.
std::optional<std::string> OpenSslPoint(const std::string& point) {
  static EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_sm2);
  std::unique_ptr<EC_POINT, decltype(&EC_POINT_free)> p(EC_POINT_new(group), EC_POINT_free);
  std::optional<std::string> out;
  if (EC_POINT_oct2point(group, p.get(), reinterpret_cast<const uint8_t*>(point.data()),
                         point.size(), nullptr) == 1 &&
      EC_POINT_is_at_infinity(group, p.get()) == 0) {
    uint8_t buf[65];
    const size_t len = EC_POINT_point2oct(group, p.get(), POINT_CONVERSION_UNCOMPRESSED, buf,
                                          sizeof(buf), nullptr);
    FUZZ_CHECK(len == 65);
    out = std::string(reinterpret_cast<char*>(buf), len);
  }
  ERR_clear_error();
  return out;
}

constexpr smcrypt::Algorithm kAsymmetric[] = {
    smcrypt::Algorithm::kSm2,          smcrypt::Algorithm::kEcdsaP256,
    smcrypt::Algorithm::kEcdsaSecp256k1, smcrypt::Algorithm::kRsa2048Pss,
    smcrypt::Algorithm::kRsa3072Pss,   smcrypt::Algorithm::kRsa2048Oaep,
    smcrypt::Algorithm::kRsa3072Oaep,  smcrypt::Algorithm::kHpkeSm2Sm3Sm4Gcm,
    smcrypt::Algorithm::kHpkeP256Sha256Aes128Gcm};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smcrypt;
  if (size > 8192) return 0;  // keys are small; RSA checks on huge inputs only cost time
  fuzz::FuzzReader in(data, size);
  const uint8_t sel = in.Byte();
  const std::string bytes = in.Rest();

  // SM2 point decoding, differential.
  auto point = Sm2PublicKey::FromPoint(bytes);
  const bool sec1_shape = (bytes.size() == 65 && bytes[0] == 0x04) ||
                          (bytes.size() == 33 && (bytes[0] == 0x02 || bytes[0] == 0x03));
  if (sec1_shape) {
    auto theirs = OpenSslPoint(bytes);
    FUZZ_CHECK(point.ok() == theirs.has_value());
    if (point.ok()) {
      FUZZ_CHECK(point->ToPoint(false) == *theirs);
      auto again = Sm2PublicKey::FromPoint(point->ToPoint(true));
      FUZZ_CHECK(again.ok() && *again == *point);
    }
  } else {
    FUZZ_CHECK(!point.ok());
  }

  // SM2 DER keys: parse, re-encode, parse back.
  if (auto spki = Sm2PublicKeyFromSpki(bytes); spki.ok()) {
    auto back = Sm2PublicKeyFromSpki(Sm2PublicKeyToSpki(*spki));
    FUZZ_CHECK(back.ok() && *back == *spki);
  }
  if (auto priv = Sm2PrivateKeyFromPkcs8(bytes); priv.ok()) {
    const SecretData der = Sm2PrivateKeyToPkcs8(*priv);
    auto back = Sm2PrivateKeyFromPkcs8(
        absl::string_view(reinterpret_cast<const char*>(der.data()), der.size()));
    FUZZ_CHECK(back.ok() && back->public_key() == priv->public_key());
    FUZZ_CHECK(back->ToScalar() == priv->ToScalar());
  }

  // PEM and the key-family sniffing the engine uses.
  (void)PemDecodeAll(bytes);
  (void)LooksLikePem(bytes);
  (void)DetectKeyFamily(bytes);
  if (auto unwrapped = UnwrapKey(bytes); unwrapped.ok()) {
    (void)DetectKeyFamily(absl::string_view(
        reinterpret_cast<const char*>(unwrapped->bytes.data()), unwrapped->bytes.size()));
  }

  // Every factory that takes an encoded key, for one algorithm.
  const Algorithm alg = kAsymmetric[sel % std::size(kAsymmetric)];
  // (Each factory refuses an algorithm of another kind; SM2 serves two kinds.)
  (void)NewPublicKeyVerify(alg, bytes);
  (void)NewPublicKeySign(alg, bytes);
  (void)NewPublicKeyEncrypt(alg, bytes);
  (void)NewPublicKeyDecrypt(alg, bytes);
  (void)NewHybridEncrypt(alg, bytes);
  (void)NewHybridDecrypt(alg, bytes);
  (void)PublicKeyFromPrivate(alg, bytes);
  return 0;
}
