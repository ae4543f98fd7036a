// sm2_encoding.cc — DER encodings of SM2 signatures (GM/T 0009-2012 §7.3), ciphertexts
// (GB/T 32918.4-2016 §6.1 C1‖C3‖C2, the legacy C1‖C2‖C3, GM/T 0009-2012 §7.2 SM2Cipher)
// and keys (RFC 5280 §4.1.2.7 / RFC 5480 SubjectPublicKeyInfo, RFC 5208 PKCS#8 with the
// RFC 5915 ECPrivateKey), byte-identical to what OpenSSL 3 writes.
//
// Private keys: the scalar d is copied only into SecretData (wiped on release) and is
// never inspected by the parser (it travels in an OCTET STRING); range checks are
// Sm2PrivateKey::FromScalar's.
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/der.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm2/sm2_internal.h"
#include "smcrypt/sm2.h"

namespace smcrypt {
namespace {

absl::string_view View(const uint8_t* p, size_t n) {
  return absl::string_view(reinterpret_cast<const char*>(p), n);
}

// The parts of a ciphertext, as views into the input (c1 is uncompressed, validated).
struct Sm2CiphertextParts {
  std::string c1;  // 65 bytes: 04 ‖ x1 ‖ y1
  absl::string_view c3;
  absl::string_view c2;
};

// ValidatedC1 checks that C1 is a point on the curve (GB/T 32918.4 §7.1 B1) and returns
// it uncompressed; errors name C1 as `name` ("SM2 ciphertext: C1: point not on the curve").
absl::StatusOr<std::string> ValidatedC1(absl::string_view c1, absl::string_view name) {
  SMCRYPT_ASSIGN_OR_RETURN(Sm2PublicKey point, internal::Sm2PointFromBytes(c1, name));
  return point.ToPoint(/*compressed=*/false);
}

absl::StatusOr<Sm2CiphertextParts> SplitRaw(absl::string_view in, bool c3_first) {
  if (in.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("SM2 ciphertext too short: expected at least ",
                                                   kSm2PointSize + kSm2C3Size, " bytes, got 0"));
  }
  // An unprefixed C1 (x1 ‖ y1, 64 bytes), as in Sm2Decrypt.
  if (in.size() >= 2 * kSm2ScalarSize + kSm2C3Size) {
    std::string c1 = absl::StrCat("\x04", in.substr(0, 2 * kSm2ScalarSize));
    if (Sm2PublicKey::FromPoint(c1).ok()) {
      Sm2CiphertextParts parts;
      parts.c1 = std::move(c1);
      absl::string_view rest = in.substr(2 * kSm2ScalarSize);
      parts.c3 = c3_first ? rest.substr(0, kSm2C3Size) : rest.substr(rest.size() - kSm2C3Size);
      parts.c2 = c3_first ? rest.substr(kSm2C3Size) : rest.substr(0, rest.size() - kSm2C3Size);
      return parts;
    }
  }
  const uint8_t prefix = static_cast<uint8_t>(in[0]);
  size_t c1_size;
  if (prefix == 0x04) {
    c1_size = kSm2PointSize;
  } else if (prefix == 0x02 || prefix == 0x03) {
    c1_size = kSm2CompressedPointSize;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SM2 ciphertext: C1 prefix byte 0x%02x is not 04 (uncompressed) or 02/03 (compressed)",
        prefix));
  }
  if (in.size() < c1_size + kSm2C3Size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SM2 ciphertext too short: expected at least ", c1_size + kSm2C3Size, " bytes (",
        c1_size == kSm2PointSize ? "uncompressed" : "compressed", " C1 + C3), got ",
        in.size()));
  }
  Sm2CiphertextParts parts;
  SMCRYPT_ASSIGN_OR_RETURN(parts.c1, ValidatedC1(in.substr(0, c1_size), "SM2 ciphertext: C1"));
  absl::string_view rest = in.substr(c1_size);
  if (c3_first) {
    parts.c3 = rest.substr(0, kSm2C3Size);
    parts.c2 = rest.substr(kSm2C3Size);
  } else {
    parts.c2 = rest.substr(0, rest.size() - kSm2C3Size);
    parts.c3 = rest.substr(rest.size() - kSm2C3Size);
  }
  return parts;
}

// ReadCoordinate reads the SM2Cipher coordinate `name` ("x" or "y") of C1 into 32
// big-endian bytes. It is a DER INTEGER, read as the r and s of a signature are
// (der::Reader::ReadUnsignedInteger): minimal and non-negative (X.690 §8.3.2), at most 32
// bytes of magnitude; anything else is InvalidArgument "SM2Cipher C1 <name>: DER: ...".
absl::Status ReadCoordinate(der::Reader& seq, absl::string_view name, uint8_t out[kSm2ScalarSize]) {
  absl::Status s = seq.ReadUnsignedInteger(out, kSm2ScalarSize);
  if (s.ok()) return s;
  return absl::InvalidArgumentError(absl::StrCat("SM2Cipher C1 ", name, ": ", s.message()));
}

absl::StatusOr<Sm2CiphertextParts> SplitDer(absl::string_view in) {
  der::Reader top(in);
  SMCRYPT_ASSIGN_OR_RETURN(der::Reader seq, top.ReadSequence());
  SMCRYPT_RETURN_IF_ERROR(top.Done());
  uint8_t c1[kSm2PointSize];
  c1[0] = 0x04;
  SMCRYPT_RETURN_IF_ERROR(ReadCoordinate(seq, "x", c1 + 1));
  SMCRYPT_RETURN_IF_ERROR(ReadCoordinate(seq, "y", c1 + 1 + kSm2ScalarSize));
  Sm2CiphertextParts parts;
  SMCRYPT_ASSIGN_OR_RETURN(parts.c3, seq.ReadOctetString());
  if (parts.c3.size() != kSm2C3Size) {
    return absl::InvalidArgumentError(absl::StrCat("SM2Cipher: HASH must be ", kSm2C3Size,
                                                   " bytes, got ", parts.c3.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(parts.c2, seq.ReadOctetString());
  SMCRYPT_RETURN_IF_ERROR(seq.Done());
  SMCRYPT_ASSIGN_OR_RETURN(parts.c1, ValidatedC1(View(c1, sizeof(c1)), "SM2Cipher C1"));
  return parts;
}

// ReadSm2Algorithm reads an AlgorithmIdentifier (RFC 5280 §4.1.1.2) and accepts
// {id-ecPublicKey, sm2p256v1} (RFC 5480 §2.1.1, as OpenSSL 3 writes) and the older
// {sm2p256v1} or {sm2p256v1, sm2p256v1}.
absl::Status ReadSm2Algorithm(der::Reader& parent) {
  SMCRYPT_ASSIGN_OR_RETURN(der::Reader alg, parent.ReadSequence());
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view oid, alg.ReadOid());
  if (oid == der::kOidEcPublicKey) {
    if (alg.empty()) {
      return absl::InvalidArgumentError(
          "not an SM2 key: id-ecPublicKey without curve parameters");
    }
    if (!alg.PeekTag(der::kObjectIdentifier)) {
      uint8_t tag = static_cast<uint8_t>(alg.remaining()[0]);
      return absl::InvalidArgumentError(absl::StrCat(
          "not an SM2 key: EC parameters are ", der::TagName(tag),
          ", expected the named curve sm2p256v1 (explicit or implicit curves are not supported)"));
    }
    SMCRYPT_ASSIGN_OR_RETURN(absl::string_view curve, alg.ReadOid());
    if (curve != der::kOidSm2p256v1) {
      return absl::InvalidArgumentError(absl::StrCat("not an SM2 key: curve OID ",
                                                     der::OidToString(curve),
                                                     ", expected 1.2.156.10197.1.301"));
    }
  } else if (oid == der::kOidSm2p256v1) {
    if (!alg.empty()) {
      SMCRYPT_ASSIGN_OR_RETURN(absl::string_view curve, alg.ReadOid());
      if (curve != der::kOidSm2p256v1) {
        return absl::InvalidArgumentError(absl::StrCat("not an SM2 key: curve OID ",
                                                       der::OidToString(curve),
                                                       ", expected 1.2.156.10197.1.301"));
      }
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("not an SM2 key: algorithm OID ",
                                                   der::OidToString(oid)));
  }
  return alg.Done();
}

void WriteSm2Algorithm(der::Writer& w) {
  w.BeginSequence();
  w.AddOid(der::kOidEcPublicKey);
  w.AddOid(der::kOidSm2p256v1);
  w.End();
}

}  // namespace

// ---- Signatures ------------------------------------------------------------------------

absl::StatusOr<std::string> Sm2SignatureToDer(absl::string_view raw) {
  if (raw.size() != kSm2RawSignatureSize) {
    return absl::InvalidArgumentError(absl::StrCat("SM2 signature: expected ",
                                                   kSm2RawSignatureSize,
                                                   " bytes (r ‖ s), got ", raw.size()));
  }
  return der::EcdsaSignatureRawToDer(raw, kSm2ScalarSize);
}

absl::StatusOr<std::string> Sm2SignatureFromDer(absl::string_view der) {
  return der::EcdsaSignatureDerToRaw(der, kSm2ScalarSize);
}

// ---- Ciphertexts -----------------------------------------------------------------------

absl::StatusOr<std::string> Sm2CiphertextConvert(absl::string_view ciphertext,
                                                 Sm2CiphertextFormat from,
                                                 Sm2CiphertextFormat to) {
  Sm2CiphertextParts parts;
  switch (from) {
    case Sm2CiphertextFormat::kC1C3C2: {
      SMCRYPT_ASSIGN_OR_RETURN(parts, SplitRaw(ciphertext, /*c3_first=*/true));
      break;
    }
    case Sm2CiphertextFormat::kC1C2C3: {
      SMCRYPT_ASSIGN_OR_RETURN(parts, SplitRaw(ciphertext, /*c3_first=*/false));
      break;
    }
    case Sm2CiphertextFormat::kDer: {
      SMCRYPT_ASSIGN_OR_RETURN(parts, SplitDer(ciphertext));
      break;
    }
    default:
      return absl::InvalidArgumentError("SM2 ciphertext: unknown source format");
  }
  switch (to) {
    case Sm2CiphertextFormat::kC1C3C2:
      return absl::StrCat(parts.c1, parts.c3, parts.c2);
    case Sm2CiphertextFormat::kC1C2C3:
      return absl::StrCat(parts.c1, parts.c2, parts.c3);
    case Sm2CiphertextFormat::kDer: {
      der::Writer w;
      w.BeginSequence();
      w.AddUnsignedInteger(absl::string_view(parts.c1).substr(1, kSm2ScalarSize));
      w.AddUnsignedInteger(absl::string_view(parts.c1).substr(1 + kSm2ScalarSize));
      w.AddOctetString(parts.c3);
      w.AddOctetString(parts.c2);
      w.End();
      return std::move(w).Finish();
    }
    default:
      return absl::InvalidArgumentError("SM2 ciphertext: unknown target format");
  }
}

// ---- Public keys -----------------------------------------------------------------------

std::string Sm2PublicKeyToSpki(const Sm2PublicKey& key) {
  der::Writer w;
  w.BeginSequence();
  WriteSm2Algorithm(w);
  w.AddBitString(key.ToPoint(/*compressed=*/false));
  w.End();
  return std::move(w).Finish();
}

absl::StatusOr<Sm2PublicKey> Sm2PublicKeyFromSpki(absl::string_view der) {
  der::Reader top(der);
  SMCRYPT_ASSIGN_OR_RETURN(der::Reader spki, top.ReadSequence());
  SMCRYPT_RETURN_IF_ERROR(top.Done());
  SMCRYPT_RETURN_IF_ERROR(ReadSm2Algorithm(spki));
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view point, spki.ReadBitStringBytes());
  SMCRYPT_RETURN_IF_ERROR(spki.Done());
  return Sm2PublicKey::FromPoint(point);
}

// ---- Private keys ----------------------------------------------------------------------

SecretData Sm2PrivateKeyToPkcs8(const Sm2PrivateKey& key) {
  const SecretData d = key.ToScalar();
  // RFC 5915 §3 ECPrivateKey, without [0] parameters (they are in the PKCS#8
  // AlgorithmIdentifier), with [1] publicKey — the layout OpenSSL 3 writes.
  der::Writer w;
  w.BeginSequence();
  w.AddSmallUnsigned(0);  // PKCS#8 version v1(0)
  WriteSm2Algorithm(w);
  w.Begin(der::kOctetString);
  w.BeginSequence();
  w.AddSmallUnsigned(1);  // ecPrivkeyVer1
  w.AddOctetString(SecretDataAsStringView(d));
  w.BeginExplicit(1);
  w.AddBitString(key.public_key().ToPoint(/*compressed=*/false));
  w.End();
  w.End();
  w.End();
  w.End();
  return std::move(w).FinishSecret();
}

absl::StatusOr<Sm2PrivateKey> Sm2PrivateKeyFromPkcs8(absl::string_view der) {
  der::Reader top(der);
  SMCRYPT_ASSIGN_OR_RETURN(der::Reader info, top.ReadSequence());
  SMCRYPT_RETURN_IF_ERROR(top.Done());
  // RFC 5208 §5: version 0 (as OpenSSL writes; RFC 5958's v2 is not accepted).
  SMCRYPT_ASSIGN_OR_RETURN(uint64_t version, info.ReadSmallUnsigned());
  if (version != 0) {
    // A bare ECPrivateKey (what `openssl genpkey -outform DER` and "EC PRIVATE KEY" PEM
    // hold) starts with INTEGER 1 followed by an OCTET STRING.
    const bool bare = version == 1 && info.PeekTag(der::kOctetString);
    return absl::InvalidArgumentError(absl::StrCat(
        "PKCS#8: unsupported version ", version, ", expected 0",
        bare ? " (this is a bare RFC 5915 ECPrivateKey, not PKCS#8 PrivateKeyInfo)" : ""));
  }
  SMCRYPT_RETURN_IF_ERROR(ReadSm2Algorithm(info));
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view ec_private_key, info.ReadOctetString());
  if (info.PeekTag(der::ContextConstructed(0))) {  // attributes [0] IMPLICIT: ignored
    uint8_t tag;
    absl::string_view attributes;
    SMCRYPT_RETURN_IF_ERROR(info.ReadAny(&tag, &attributes));
  }
  SMCRYPT_RETURN_IF_ERROR(info.Done());

  // RFC 5915 §3: ECPrivateKey ::= SEQUENCE { version INTEGER { ecPrivkeyVer1(1) },
  //   privateKey OCTET STRING, parameters [0] ECParameters OPTIONAL,
  //   publicKey [1] BIT STRING OPTIONAL }
  der::Reader inner(ec_private_key, "PKCS#8 privateKey");
  SMCRYPT_ASSIGN_OR_RETURN(der::Reader ec, inner.ReadSequence());
  SMCRYPT_RETURN_IF_ERROR(inner.Done());
  SMCRYPT_ASSIGN_OR_RETURN(uint64_t ec_version, ec.ReadSmallUnsigned());
  if (ec_version != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("PKCS#8: ECPrivateKey version ", ec_version, ", expected 1"));
  }
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view d_bytes, ec.ReadOctetString());
  if (d_bytes.empty() || d_bytes.size() > kSm2ScalarSize) {
    return absl::InvalidArgumentError(absl::StrCat("PKCS#8: private key is ", d_bytes.size(),
                                                   " bytes, expected 1 to ", kSm2ScalarSize));
  }
  SMCRYPT_ASSIGN_OR_RETURN(std::optional<der::Reader> params, ec.ReadOptionalExplicit(0));
  if (params.has_value()) {
    SMCRYPT_ASSIGN_OR_RETURN(absl::string_view curve, params->ReadOid());
    SMCRYPT_RETURN_IF_ERROR(params->Done());
    if (curve != der::kOidSm2p256v1) {
      return absl::InvalidArgumentError(absl::StrCat("not an SM2 key: curve OID ",
                                                     der::OidToString(curve),
                                                     " in ECPrivateKey parameters"));
    }
  }
  SMCRYPT_ASSIGN_OR_RETURN(std::optional<der::Reader> pub, ec.ReadOptionalExplicit(1));
  std::optional<absl::string_view> public_point;
  if (pub.has_value()) {
    SMCRYPT_ASSIGN_OR_RETURN(public_point, pub->ReadBitStringBytes());
    SMCRYPT_RETURN_IF_ERROR(pub->Done());
  }
  SMCRYPT_RETURN_IF_ERROR(ec.Done());

  // Some writers strip leading zero bytes of d: left-pad to 32 bytes.
  SecretData d(kSm2ScalarSize, 0);
  std::memcpy(d.data() + (kSm2ScalarSize - d_bytes.size()), d_bytes.data(), d_bytes.size());
  SMCRYPT_ASSIGN_OR_RETURN(Sm2PrivateKey key,
                           Sm2PrivateKey::FromScalar(SecretDataAsStringView(d)));
  if (public_point.has_value()) {
    SMCRYPT_ASSIGN_OR_RETURN(Sm2PublicKey given, Sm2PublicKey::FromPoint(*public_point));
    if (!(given == key.public_key())) {
      return absl::InvalidArgumentError("PKCS#8: public key does not match private key");
    }
  }
  return key;
}

}  // namespace smcrypt
