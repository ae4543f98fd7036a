// p256_kem_openssl.h — the P-256 keys of DHKEM(P-256, HKDF-SHA256) (RFC 9180 §4.1, §7.1)
// held as OpenSSL key objects, parsed and validated once per key and reused for every
// message: what NewHpkeEncrypt / NewHpkeDecrypt keep for HPKE-P256-SHA256-AES128GCM.
//
// Internal header (crypto/hpke and tests). It includes no OpenSSL header, so callers
// outside crypto/openssl can use it.
#ifndef SMCRYPT_CRYPTO_OPENSSL_P256_KEM_OPENSSL_H_
#define SMCRYPT_CRYPTO_OPENSSL_P256_KEM_OPENSSL_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

// P256KemPublicKey is a recipient's public key pkR, validated once (on the curve, not
// infinity; P-256 has cofactor 1) when it is made.
// Thread safety: immutable after New; EphemeralDh may run concurrently on one object.
class P256KemPublicKey {
 public:
  // New takes the 65-byte uncompressed point (04 ‖ x ‖ y). Errors: InvalidArgument for
  // another length or prefix, or a point not on the curve.
  static absl::StatusOr<std::unique_ptr<const P256KemPublicKey>> New(absl::string_view point);
  ~P256KemPublicKey();
  P256KemPublicKey(const P256KemPublicKey&) = delete;
  P256KemPublicKey& operator=(const P256KemPublicKey&) = delete;

  // point is pkR as given, 65 bytes.
  const std::string& point() const { return point_; }

  // EphemeralDh is the first half of Encap (§4.1): GenerateKeyPair (a fresh key from
  // OpenSSL's CSPRNG, skE uniform in [1, n − 1], one fixed-base multiplication), then
  // DH(skE, pkR) = x(skE·pkR). `enc` receives SerializePublicKey(pkE), 65 bytes; `dh` the
  // 32-byte x-coordinate. skE never leaves OpenSSL and is freed (cleared) before return.
  absl::Status EphemeralDh(std::string* enc, SecretData* dh) const;

  struct Key;  // the OpenSSL key object (p256_kem_openssl.cc)

 private:
  P256KemPublicKey(std::unique_ptr<Key> key, std::string point);
  const std::unique_ptr<Key> key_;
  const std::string point_;
};

// P256KemPrivateKey is a recipient's private key skR with its public key pkR.
// Thread safety: immutable after New; Dh may run concurrently on one object.
class P256KemPrivateKey {
 public:
  // New takes the 32-byte big-endian scalar, 1 ≤ sk < n. Errors: InvalidArgument for a
  // wrong length or a scalar out of range.
  static absl::StatusOr<std::unique_ptr<const P256KemPrivateKey>> New(absl::string_view sk);
  ~P256KemPrivateKey();
  P256KemPrivateKey(const P256KemPrivateKey&) = delete;
  P256KemPrivateKey& operator=(const P256KemPrivateKey&) = delete;

  // public_point is pkR = skR·G, 65 bytes uncompressed.
  const std::string& public_point() const { return public_point_; }

  // Dh is DH(skR, pkE) = x(skR·pkE) for the 65-byte uncompressed point `peer_point`,
  // which is validated (on the curve, not infinity). Errors: InvalidArgument for a wrong
  // length or prefix, or a point not on the curve.
  absl::StatusOr<SecretData> Dh(absl::string_view peer_point) const;

 private:
  P256KemPrivateKey(std::unique_ptr<P256KemPublicKey::Key> key,
                    std::unique_ptr<P256KemPublicKey::Key> public_template,
                    std::string public_point);
  const std::unique_ptr<P256KemPublicKey::Key> key_;              // skR (and pkR)
  const std::unique_ptr<P256KemPublicKey::Key> public_template_;  // pkR only
  const std::string public_point_;
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_OPENSSL_P256_KEM_OPENSSL_H_
