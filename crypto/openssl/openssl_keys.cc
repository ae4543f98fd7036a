#include "crypto/openssl/openssl_keys.h"

#include <climits>
#include <cstdint>
#include <cstring>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/key_errors.h"
#include "crypto/openssl/ssl_errors.h"
#include "smcrypt/pem.h"

namespace smcrypt {
namespace {

// Malformed is a parser's InvalidArgument `detail`, the reason ParsePrivateKey and
// ParsePublicKey put in parentheses after the accepted forms (UnparsableKeyError).
absl::Status Malformed(absl::string_view detail) {
  ClearSslErrors();
  return absl::InvalidArgumentError(detail);
}

// InvalidKey is InvalidArgument "<spec.name> public key: <detail>" (or private) for key
// bytes in an accepted form that are not a valid key.
absl::Status InvalidKey(const KeySpec& spec, KeyRole role, absl::string_view detail) {
  ClearSslErrors();
  return absl::InvalidArgumentError(absl::StrCat(
      spec.name, role == KeyRole::kPublic ? " public key: " : " private key: ", detail));
}

// PemToDer decodes the one PEM block in `in`, which must have type `expected_type`, no
// encryption headers, and nothing but whitespace after it. The DER is returned in wiped
// storage; OpenSSL's copy is wiped too.
absl::StatusOr<SecretData> PemToDer(absl::string_view in, const char* expected_type) {
  if (in.size() > INT_MAX) return Malformed("input too large");
  SslUniquePtr<BIO> bio(BIO_new_mem_buf(in.data(), static_cast<int>(in.size())));
  if (bio == nullptr) return SslInternalError("BIO_new_mem_buf");
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  const int ok = PEM_read_bio(bio.get(), &name, &header, &data, &len);
  absl::Cleanup free_pem = [&] {
    OPENSSL_free(name);
    OPENSSL_free(header);
    if (data != nullptr) OPENSSL_clear_free(data, static_cast<size_t>(len));
  };
  if (ok != 1) return Malformed("malformed PEM");
  if (std::strcmp(name, expected_type) != 0) {
    return Malformed(absl::StrCat("PEM type \"", name, "\", expected \"", expected_type, "\""));
  }
  if (header != nullptr && *header != '\0') {
    return Malformed("PEM headers (encrypted keys) are not supported");
  }
  char* rest = nullptr;
  const long rest_len = BIO_get_mem_data(bio.get(), &rest);
  if (rest_len > 0 &&
      !absl::StripAsciiWhitespace(absl::string_view(rest, static_cast<size_t>(rest_len)))
           .empty()) {
    return Malformed("data after the PEM block");
  }
  return SecretData(data, data + len);
}

absl::StatusOr<SslUniquePtr<EVP_PKEY>> Pkcs8DerToKey(absl::string_view der) {
  if (der.size() > LONG_MAX) return Malformed("input too large");
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  const unsigned char* const end = p + der.size();
  SslUniquePtr<PKCS8_PRIV_KEY_INFO> p8(
      d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der.size())));
  if (p8 == nullptr) return Malformed("not PKCS#8 PrivateKeyInfo DER");
  if (p != end) {
    return Malformed(absl::StrCat(end - p, " trailing bytes after PrivateKeyInfo"));
  }
  SslUniquePtr<EVP_PKEY> pkey(EVP_PKCS82PKEY_ex(p8.get(), nullptr, nullptr));
  if (pkey == nullptr) return Malformed("unsupported or malformed key in PKCS#8");
  return pkey;
}

absl::StatusOr<SslUniquePtr<EVP_PKEY>> SpkiDerToKey(absl::string_view der) {
  if (der.size() > LONG_MAX) return Malformed("input too large");
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  const unsigned char* const end = p + der.size();
  SslUniquePtr<EVP_PKEY> pkey(
      d2i_PUBKEY_ex(nullptr, &p, static_cast<long>(der.size()), nullptr, nullptr));
  if (pkey == nullptr) return Malformed("not SubjectPublicKeyInfo DER");
  if (p != end) {
    return Malformed(absl::StrCat(end - p, " trailing bytes after SubjectPublicKeyInfo"));
  }
  return pkey;
}

// Pkcs8ToKey reads PKCS#8 PrivateKeyInfo as PEM "PRIVATE KEY" or DER. Errors: the
// parser's reason (Malformed, CheckKeyDerStart).
absl::StatusOr<SslUniquePtr<EVP_PKEY>> Pkcs8ToKey(absl::string_view in) {
  SecretData pem_der;
  absl::string_view der = in;
  if (LooksLikePem(in)) {
    absl::StatusOr<SecretData> decoded = PemToDer(in, "PRIVATE KEY");
    if (!decoded.ok()) return decoded.status();
    pem_der = *std::move(decoded);
    der = SecretDataAsStringView(pem_der);
  }
  absl::Status start = CheckKeyDerStart(der, KeyRole::kPrivate);
  if (!start.ok()) return start;
  return Pkcs8DerToKey(der);
}

// SpkiToKey reads SubjectPublicKeyInfo as PEM "PUBLIC KEY" or DER. Errors as Pkcs8ToKey.
absl::StatusOr<SslUniquePtr<EVP_PKEY>> SpkiToKey(absl::string_view in) {
  SecretData pem_der;
  absl::string_view der = in;
  if (LooksLikePem(in)) {
    absl::StatusOr<SecretData> decoded = PemToDer(in, "PUBLIC KEY");
    if (!decoded.ok()) return decoded.status();
    pem_der = *std::move(decoded);
    der = SecretDataAsStringView(pem_der);
  }
  absl::Status start = CheckKeyDerStart(der, KeyRole::kPublic);
  if (!start.ok()) return start;
  return SpkiDerToKey(der);
}

absl::StatusOr<SslUniquePtr<EVP_PKEY>> EcKeyFromData(const KeySpec& spec, const BIGNUM* d,
                                                     absl::string_view point, int selection) {
  SslUniquePtr<OSSL_PARAM_BLD> bld(OSSL_PARAM_BLD_new());
  if (bld == nullptr ||
      OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, spec.ec_group,
                                      0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1 ||
      (d != nullptr && OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_PRIV_KEY, d) != 1)) {
    return SslInternalError("OSSL_PARAM_BLD");
  }
  SslUniquePtr<OSSL_PARAM> params(OSSL_PARAM_BLD_to_param(bld.get()));
  if (params == nullptr) return SslInternalError("OSSL_PARAM_BLD_to_param");
  SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  if (ctx == nullptr || EVP_PKEY_fromdata_init(ctx.get()) != 1) {
    return SslInternalError("EVP_PKEY_fromdata_init");
  }
  EVP_PKEY* raw = nullptr;
  if (EVP_PKEY_fromdata(ctx.get(), &raw, selection, params.get()) != 1) {
    // For public keys this is how OpenSSL reports a point that is not on the curve.
    return InvalidKey(spec, d != nullptr ? KeyRole::kPrivate : KeyRole::kPublic,
                      "not a valid point on the curve");
  }
  return SslUniquePtr<EVP_PKEY>(raw);
}

// EcKeyFromScalar builds a key pair from the raw scalar d (32 bytes), computing
// Q = d·G with OpenSSL's constant-time ladder. The range check 1 ≤ d < n is done with
// masks so that it does not branch on d's bytes.
absl::StatusOr<SslUniquePtr<EVP_PKEY>> EcKeyFromScalar(absl::string_view d_bytes,
                                                       const KeySpec& spec) {
  SslUniquePtr<EC_GROUP> group(EC_GROUP_new_by_curve_name(spec.ec_nid));
  SslUniquePtr<BN_CTX> bn_ctx(BN_CTX_secure_new());
  if (group == nullptr || bn_ctx == nullptr) return SslInternalError("EC_GROUP_new_by_curve_name");
  uint8_t order[kEcScalarSize];
  if (BN_bn2binpad(EC_GROUP_get0_order(group.get()), order, sizeof(order)) != kEcScalarSize) {
    return SslInternalError("EC group order");
  }
  const uint8_t* d = reinterpret_cast<const uint8_t*>(d_bytes.data());
  uint32_t borrow = 0;  // borrow out of d − n: 1 exactly when d < n
  uint32_t any = 0;     // OR of d's bytes: 0 exactly when d = 0
  for (size_t i = kEcScalarSize; i-- > 0;) {
    const uint32_t diff = uint32_t{d[i]} - uint32_t{order[i]} - borrow;
    borrow = (diff >> 8) & 1;
    any |= d[i];
  }
  const uint32_t in_range = (0u - borrow) & ~CtIsZero32(any);
  if (ValueBarrier(in_range) == 0) {
    return InvalidKey(spec, KeyRole::kPrivate, "scalar out of range [1, n-1]");
  }
  SslUniquePtr<BIGNUM> bn_d(BN_secure_new());
  if (bn_d == nullptr) return SslInternalError("BN_secure_new");
  BN_set_flags(bn_d.get(), BN_FLG_CONSTTIME);
  if (BN_bin2bn(d, kEcScalarSize, bn_d.get()) == nullptr) return SslInternalError("BN_bin2bn");
  SslUniquePtr<EC_POINT> q(EC_POINT_new(group.get()));
  uint8_t point[kEcPointSize];
  if (q == nullptr ||
      EC_POINT_mul(group.get(), q.get(), bn_d.get(), nullptr, nullptr, bn_ctx.get()) != 1 ||
      EC_POINT_point2oct(group.get(), q.get(), POINT_CONVERSION_UNCOMPRESSED, point,
                         sizeof(point), bn_ctx.get()) != sizeof(point)) {
    return SslInternalError("EC_POINT_mul");
  }
  return EcKeyFromData(spec, bn_d.get(),
                       absl::string_view(reinterpret_cast<const char*>(point), sizeof(point)),
                       EVP_PKEY_KEYPAIR);
}

int EcGroupNid(const EVP_PKEY* pkey, std::string* name_out) {
  char name[80];
  size_t len = 0;
  if (EVP_PKEY_get_group_name(pkey, name, sizeof(name), &len) != 1) {
    ClearSslErrors();
    return NID_undef;
  }
  if (name_out != nullptr) *name_out = name;
  int nid = OBJ_sn2nid(name);
  if (nid == NID_undef) nid = EC_curve_nist2nid(name);
  return nid;
}

bool IsEcLike(const EVP_PKEY* pkey) {
  return EVP_PKEY_is_a(pkey, "EC") || EVP_PKEY_is_a(pkey, "SM2");
}

}  // namespace

const KeySpec& EcP256KeySpec() {
  static constexpr KeySpec kSpec{KeySpec::Type::kEc, "prime256v1", NID_X9_62_prime256v1, 0,
                                 "EC P-256"};
  return kSpec;
}
const KeySpec& EcSecp256k1KeySpec() {
  static constexpr KeySpec kSpec{KeySpec::Type::kEc, "secp256k1", NID_secp256k1, 0,
                                 "EC secp256k1"};
  return kSpec;
}
const KeySpec& Rsa2048KeySpec() {
  static constexpr KeySpec kSpec{KeySpec::Type::kRsa, nullptr, 0, 2048, "RSA-2048"};
  return kSpec;
}
const KeySpec& Rsa3072KeySpec() {
  static constexpr KeySpec kSpec{KeySpec::Type::kRsa, nullptr, 0, 3072, "RSA-3072"};
  return kSpec;
}

std::string DescribeKey(const EVP_PKEY* pkey) {
  if (EVP_PKEY_is_a(pkey, "RSA")) return absl::StrCat("RSA-", EVP_PKEY_get_bits(pkey));
  if (EVP_PKEY_is_a(pkey, "RSA-PSS")) return absl::StrCat("RSA-PSS-", EVP_PKEY_get_bits(pkey));
  if (IsEcLike(pkey)) {
    std::string name;
    switch (EcGroupNid(pkey, &name)) {
      case NID_X9_62_prime256v1:
        return "EC P-256";
      case NID_secp256k1:
        return "EC secp256k1";
      case NID_sm2:
        return "SM2";
      default:
        return absl::StrCat("EC ", name.empty() ? "(unknown curve)" : name);
    }
  }
  const char* type = EVP_PKEY_get0_type_name(pkey);
  return type != nullptr ? std::string(type) : std::string("of unknown type");
}

absl::Status CheckKeySpec(const EVP_PKEY* pkey, const KeySpec& spec) {
  bool ok = false;
  switch (spec.type) {
    case KeySpec::Type::kRsa:
      ok = EVP_PKEY_is_a(pkey, "RSA") && EVP_PKEY_get_bits(pkey) == spec.rsa_bits;
      break;
    case KeySpec::Type::kEc:
      ok = EVP_PKEY_is_a(pkey, "EC") && EcGroupNid(pkey, nullptr) == spec.ec_nid;
      break;
  }
  if (ok) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("key is ", DescribeKey(pkey), ", algorithm needs ", spec.name));
}

absl::StatusOr<SslUniquePtr<EVP_PKEY>> ParsePrivateKey(absl::string_view in,
                                                       const KeySpec& spec) {
  const bool ec = spec.type == KeySpec::Type::kEc;
  if (!LooksLikePem(in) && ec && in.size() == kEcScalarSize) {
    return EcKeyFromScalar(in, spec);  // built for `spec`, consistent by construction
  }
  absl::StatusOr<SslUniquePtr<EVP_PKEY>> parsed = Pkcs8ToKey(in);
  if (!parsed.ok()) {
    return AsUnparsableKeyError(parsed.status(), spec.name, KeyRole::kPrivate, ec, in.size());
  }
  SslUniquePtr<EVP_PKEY> pkey = *std::move(parsed);
  absl::Status family = CheckKeySpec(pkey.get(), spec);
  if (!family.ok()) return family;
  if (ec) {
    // d in range and Q = d·G (RFC 5915 keys may carry a public key that does not match).
    SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr));
    if (ctx == nullptr) return SslInternalError("EVP_PKEY_CTX_new_from_pkey");
    if (EVP_PKEY_pairwise_check(ctx.get()) != 1) {
      return InvalidKey(spec, KeyRole::kPrivate, "does not match its public key");
    }
  }
  return pkey;
}

absl::StatusOr<SslUniquePtr<EVP_PKEY>> ParsePublicKey(absl::string_view in,
                                                      const KeySpec& spec) {
  const bool ec = spec.type == KeySpec::Type::kEc;
  const uint8_t first = in.empty() ? 0 : static_cast<uint8_t>(in[0]);
  SslUniquePtr<EVP_PKEY> pkey;
  if (ec && !LooksLikePem(in) &&
      ((in.size() == kEcPointSize && first == 0x04) ||
       (in.size() == kEcCompressedPointSize && (first == 0x02 || first == 0x03)))) {
    absl::StatusOr<SslUniquePtr<EVP_PKEY>> point =
        EcKeyFromData(spec, nullptr, in, EVP_PKEY_PUBLIC_KEY);
    if (!point.ok()) return point.status();
    pkey = *std::move(point);
  } else {
    absl::StatusOr<SslUniquePtr<EVP_PKEY>> parsed = SpkiToKey(in);
    if (!parsed.ok()) {
      return AsUnparsableKeyError(parsed.status(), spec.name, KeyRole::kPublic, ec, in.size());
    }
    pkey = *std::move(parsed);
  }
  absl::Status family = CheckKeySpec(pkey.get(), spec);
  if (!family.ok()) return family;
  if (ec) {
    // On the curve and not the point at infinity; both curves have cofactor 1, so this
    // is the full SEC 1 §3.2.2.1 validation.
    SslUniquePtr<EVP_PKEY_CTX> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr));
    if (ctx == nullptr) return SslInternalError("EVP_PKEY_CTX_new_from_pkey");
    if (EVP_PKEY_public_check_quick(ctx.get()) != 1) {
      return InvalidKey(spec, KeyRole::kPublic, "not a valid point on the curve");
    }
  }
  return pkey;
}

absl::StatusOr<SslUniquePtr<EVP_PKEY>> GenerateKey(const KeySpec& spec) {
  EVP_PKEY* raw = nullptr;
  switch (spec.type) {
    case KeySpec::Type::kEc:
      raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", spec.ec_group);
      break;
    case KeySpec::Type::kRsa:
      raw = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(spec.rsa_bits));
      break;
  }
  if (raw == nullptr) return SslInternalError(absl::StrCat("generating an ", spec.name, " key"));
  return SslUniquePtr<EVP_PKEY>(raw);
}

absl::StatusOr<SecretData> EncodePkcs8(const EVP_PKEY* pkey) {
  SslUniquePtr<PKCS8_PRIV_KEY_INFO> p8(EVP_PKEY2PKCS8(pkey));
  if (p8 == nullptr) return SslInternalError("EVP_PKEY2PKCS8");
  unsigned char* buf = nullptr;
  const int len = i2d_PKCS8_PRIV_KEY_INFO(p8.get(), &buf);
  if (len <= 0 || buf == nullptr) return SslInternalError("i2d_PKCS8_PRIV_KEY_INFO");
  SecretData out(buf, buf + len);
  OPENSSL_clear_free(buf, static_cast<size_t>(len));
  return out;
}

absl::StatusOr<std::string> EncodeSpki(const EVP_PKEY* pkey) {
  unsigned char* buf = nullptr;
  const int len = i2d_PUBKEY(pkey, &buf);
  if (len <= 0 || buf == nullptr) return SslInternalError("i2d_PUBKEY");
  std::string out(reinterpret_cast<const char*>(buf), static_cast<size_t>(len));
  OPENSSL_free(buf);
  return out;
}

absl::StatusOr<std::string> EcPublicPoint(const EVP_PKEY* pkey) {
  BIGNUM* x_raw = nullptr;
  BIGNUM* y_raw = nullptr;
  const bool got = EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_EC_PUB_X, &x_raw) == 1 &&
                   EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_EC_PUB_Y, &y_raw) == 1;
  SslUniquePtr<BIGNUM> x(x_raw), y(y_raw);
  if (!got) return SslInternalError("reading the EC public point");
  std::string out(kEcPointSize, '\0');
  out[0] = 0x04;
  unsigned char* p = reinterpret_cast<unsigned char*>(out.data());
  if (BN_bn2binpad(x.get(), p + 1, kEcScalarSize) != kEcScalarSize ||
      BN_bn2binpad(y.get(), p + 1 + kEcScalarSize, kEcScalarSize) != kEcScalarSize) {
    return SslInternalError("BN_bn2binpad");
  }
  return out;
}

absl::StatusOr<SecretData> EcPrivateScalar(const EVP_PKEY* pkey) {
  BIGNUM* d_raw = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PRIV_KEY, &d_raw) != 1) {
    return SslInternalError("reading the EC private scalar");
  }
  SslUniquePtr<BIGNUM> d(d_raw);
  SecretData out(kEcScalarSize);
  if (BN_bn2binpad(d.get(), out.data(), kEcScalarSize) != kEcScalarSize) {
    return SslInternalError("BN_bn2binpad");
  }
  return out;
}

size_t RsaModulusSize(const EVP_PKEY* pkey) {
  return static_cast<size_t>(EVP_PKEY_get_size(pkey));
}

}  // namespace smcrypt
