// pkcs8_pbes2.cc — EncryptedPrivateKeyInfo with PBES2 (smcrypt/pkcs8.h): the DER parser
// and writer (crypto/common/der.h), PBKDF2 through OpenSSL's PKCS5_PBKDF2_HMAC, AES-CBC
// through EVP and SM4-CBC through smcrypt's SM4 block functions, with one constant-time
// PKCS#7 check for both.
#include "smcrypt/pkcs8.h"

#include <climits>
#include <cstring>
#include <optional>
#include <utility>

#include <openssl/evp.h>

#include "absl/strings/str_cat.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/der.h"
#include "crypto/common/status_macros.h"
#include "crypto/openssl/ssl_errors.h"
#include "crypto/openssl/ssl_unique_ptr.h"
#include "smcrypt/pem.h"
#include "smcrypt/random.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

constexpr absl::string_view kPemLabel = "ENCRYPTED PRIVATE KEY";
constexpr size_t kBlockSize = 16;  // AES and SM4
constexpr size_t kIvSize = 16;

// Encoded contents of the OIDs (X.690 §8.19).
// 1.2.840.113549.1.5.13 (RFC 8018 §A.4) and 1.2.840.113549.1.5.12 (§A.2).
constexpr absl::string_view kOidPbes2{"\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d", 9};
constexpr absl::string_view kOidPbkdf2{"\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0c", 9};

enum class Prf { kSha1, kSha224, kSha256, kSha384, kSha512, kSm3 };
struct PrfInfo {
  Prf prf;
  absl::string_view oid;
  const char* name;
  const EVP_MD* (*md)();
};
const PrfInfo kPrfs[] = {
    {Prf::kSha1, {"\x2a\x86\x48\x86\xf7\x0d\x02\x07", 8}, "hmacWithSHA1", EVP_sha1},
    {Prf::kSha224, {"\x2a\x86\x48\x86\xf7\x0d\x02\x08", 8}, "hmacWithSHA224", EVP_sha224},
    {Prf::kSha256, {"\x2a\x86\x48\x86\xf7\x0d\x02\x09", 8}, "hmacWithSHA256", EVP_sha256},
    {Prf::kSha384, {"\x2a\x86\x48\x86\xf7\x0d\x02\x0a", 8}, "hmacWithSHA384", EVP_sha384},
    {Prf::kSha512, {"\x2a\x86\x48\x86\xf7\x0d\x02\x0b", 8}, "hmacWithSHA512", EVP_sha512},
    // 1.2.156.10197.1.401.2: SM3 is 1.2.156.10197.1.401 (GM/T 0006), HMAC-SM3 its arc 2,
    // as GmSSL 3 writes it (src/pkcs8.c, oid_hmac_sm3 = { oid_sm_algors, 401, 2 }).
    {Prf::kSm3, {"\x2a\x81\x1c\xcf\x55\x01\x83\x11\x02", 9}, "hmacWithSM3", EVP_sm3},
};

enum class CipherKind { kAes, kSm4 };
struct CipherInfo {
  absl::string_view oid;
  const char* name;
  size_t key_size;
  CipherKind kind;
  const EVP_CIPHER* (*evp)();  // AES only
};
const CipherInfo kCiphers[] = {
    {{"\x60\x86\x48\x01\x65\x03\x04\x01\x02", 9}, "AES-128-CBC", 16, CipherKind::kAes,
     EVP_aes_128_cbc},
    {{"\x60\x86\x48\x01\x65\x03\x04\x01\x16", 9}, "AES-192-CBC", 24, CipherKind::kAes,
     EVP_aes_192_cbc},
    {{"\x60\x86\x48\x01\x65\x03\x04\x01\x2a", 9}, "AES-256-CBC", 32, CipherKind::kAes,
     EVP_aes_256_cbc},
    // 1.2.156.10197.1.104.2 (GM/T 0006: SM4 is 1.2.156.10197.1.104, CBC its mode 2).
    {{"\x2a\x81\x1c\xcf\x55\x01\x68\x02", 8}, "SM4-CBC", kSm4KeySize, CipherKind::kSm4,
     nullptr},
};

const PrfInfo& PrfFor(Prf prf) {
  for (const PrfInfo& p : kPrfs) {
    if (p.prf == prf) return p;
  }
  return kPrfs[0];  // unreachable: every Prf is in the table
}

absl::Status Error(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("EncryptedPrivateKeyInfo: ", what));
}

// InElement prefixes a DER reader's error with the element it was reading.
// An empty `element` is the outer SEQUENCE: "EncryptedPrivateKeyInfo: DER: ...".
absl::Status InElement(absl::string_view element, const absl::Status& s) {
  if (s.ok()) return s;
  if (element.empty()) return Error(s.message());
  return Error(absl::StrCat(element, ": ", s.message()));
}

absl::Status WrongPassword() { return Error("wrong password or corrupt key"); }

// Parsed is one EncryptedPrivateKeyInfo, its views into the DER.
struct Parsed {
  const PrfInfo* prf = nullptr;
  const CipherInfo* cipher = nullptr;
  absl::string_view salt;
  uint32_t iterations = 0;
  std::optional<uint64_t> key_length;  // PBKDF2-params keyLength, when present
  absl::string_view iv;
  absl::string_view encrypted_data;
};

// ParsePrf reads the optional prf AlgorithmIdentifier (RFC 8018 §A.2: DEFAULT
// algid-hmacWithSHA1). Parameters may be NULL (RFC 8018 §B.1, OpenSSL) or absent (GmSSL 3).
absl::StatusOr<const PrfInfo*> ParsePrf(der::Reader& params) {
  if (params.empty()) return &PrfFor(Prf::kSha1);
  auto seq = params.ReadSequence();
  if (!seq.ok()) return InElement("PBKDF2-params prf", seq.status());
  auto oid = seq->ReadOid();
  if (!oid.ok()) return InElement("PBKDF2-params prf", oid.status());
  if (seq->PeekTag(der::kNull)) {
    SMCRYPT_RETURN_IF_ERROR(InElement("PBKDF2-params prf", seq->ReadNull()));
  }
  SMCRYPT_RETURN_IF_ERROR(InElement("PBKDF2-params prf", seq->Done()));
  for (const PrfInfo& p : kPrfs) {
    if (*oid == p.oid) return &p;
  }
  return Error(absl::StrCat("PBKDF2 PRF ", der::OidToString(*oid),
                            " is not supported (hmacWithSHA1/SHA224/SHA256/SHA384/SHA512 "
                            "1.2.840.113549.2.7-11 and hmacWithSM3 1.2.156.10197.1.401.2 are)"));
}

absl::Status ParsePbkdf2(der::Reader& kdf, Parsed* out) {
  auto oid = kdf.ReadOid();
  if (!oid.ok()) return InElement("keyDerivationFunc", oid.status());
  if (*oid != kOidPbkdf2) {
    return Error(absl::StrCat("key derivation function ", der::OidToString(*oid),
                              " is not supported (PBKDF2 1.2.840.113549.1.5.12 is)"));
  }
  auto params = kdf.ReadSequence();
  if (!params.ok()) return InElement("PBKDF2-params", params.status());
  SMCRYPT_RETURN_IF_ERROR(InElement("keyDerivationFunc", kdf.Done()));
  // salt CHOICE { specified OCTET STRING, otherSource AlgorithmIdentifier }: only the
  // first is defined for use (RFC 8018 §A.2).
  auto salt = params->ReadOctetString();
  if (!salt.ok()) return InElement("PBKDF2-params salt", salt.status());
  if (salt->empty() || salt->size() > kMaxPbes2SaltSize) {
    return Error(absl::StrCat("PBKDF2 salt is ", salt->size(), " bytes, expected 1 to ",
                              kMaxPbes2SaltSize));
  }
  auto magnitude = params->ReadUnsignedIntegerMagnitude();
  if (!magnitude.ok()) return InElement("PBKDF2-params iterationCount", magnitude.status());
  uint64_t iterations = 0;
  if (magnitude->size() > 4) {
    iterations = UINT64_MAX;
  } else {
    for (char c : *magnitude) iterations = (iterations << 8) | static_cast<uint8_t>(c);
  }
  if (iterations == 0) {
    return Error("PBKDF2 iteration count 0 (RFC 8018 §5.2: a positive integer)");
  }
  if (iterations > kMaxPbkdf2Iterations) {
    return Error(absl::StrCat(
        "PBKDF2 iteration count ",
        magnitude->size() > 4 ? absl::StrCat("of ", magnitude->size(), " bytes")
                              : absl::StrCat(iterations),
        " exceeds the limit of ", kMaxPbkdf2Iterations));
  }
  out->salt = *salt;
  out->iterations = static_cast<uint32_t>(iterations);
  if (params->PeekTag(der::kInteger)) {
    auto v = params->ReadSmallUnsigned();
    if (!v.ok()) return InElement("PBKDF2-params keyLength", v.status());
    out->key_length = *v;
  }
  SMCRYPT_ASSIGN_OR_RETURN(out->prf, ParsePrf(*params));
  return InElement("PBKDF2-params", params->Done());
}

// ParseEncryptionScheme reads encryptionScheme: SEQUENCE { OID, IV OCTET STRING }
// (RFC 8018 §B.2.5 for AES-CBC; the same shape for SM4-CBC, GM/T 0006 and GmSSL 3).
absl::Status ParseEncryptionScheme(der::Reader& scheme, Parsed* out) {
  auto oid = scheme.ReadOid();
  if (!oid.ok()) return InElement("encryptionScheme", oid.status());
  for (const CipherInfo& c : kCiphers) {
    if (*oid == c.oid) out->cipher = &c;
  }
  if (out->cipher == nullptr) {
    return Error(absl::StrCat("encryption scheme ", der::OidToString(*oid),
                              " is not supported (AES-128-CBC, AES-192-CBC, AES-256-CBC "
                              "2.16.840.1.101.3.4.1.2/22/42 and SM4-CBC 1.2.156.10197.1.104.2 "
                              "are)"));
  }
  auto iv = scheme.ReadOctetString();
  if (!iv.ok()) return InElement("encryptionScheme IV", iv.status());
  SMCRYPT_RETURN_IF_ERROR(InElement("encryptionScheme", scheme.Done()));
  if (iv->size() != kIvSize) {
    return Error(absl::StrCat(out->cipher->name, " IV is ", iv->size(), " bytes, expected ",
                              kIvSize));
  }
  out->iv = *iv;
  return absl::OkStatus();
}

// ParseDer parses EncryptedPrivateKeyInfo DER (RFC 5958 §3) with PBES2 (RFC 8018 §A.4).
absl::StatusOr<Parsed> ParseDer(absl::string_view der) {
  Parsed out;
  der::Reader top(der);
  auto epki = top.ReadSequence();
  if (!epki.ok()) return InElement("", epki.status());
  SMCRYPT_RETURN_IF_ERROR(InElement("", top.Done()));
  auto alg = epki->ReadSequence();
  if (!alg.ok()) return InElement("encryptionAlgorithm", alg.status());
  auto alg_oid = alg->ReadOid();
  if (!alg_oid.ok()) return InElement("encryptionAlgorithm", alg_oid.status());
  if (*alg_oid != kOidPbes2) {
    return Error(absl::StrCat("encryption algorithm ", der::OidToString(*alg_oid),
                              " is not supported (PBES2 1.2.840.113549.1.5.13 is)"));
  }
  auto pbes2 = alg->ReadSequence();
  if (!pbes2.ok()) return InElement("PBES2-params", pbes2.status());
  SMCRYPT_RETURN_IF_ERROR(InElement("encryptionAlgorithm", alg->Done()));
  auto kdf = pbes2->ReadSequence();
  if (!kdf.ok()) return InElement("PBES2-params keyDerivationFunc", kdf.status());
  SMCRYPT_RETURN_IF_ERROR(ParsePbkdf2(*kdf, &out));
  auto scheme = pbes2->ReadSequence();
  if (!scheme.ok()) return InElement("PBES2-params encryptionScheme", scheme.status());
  SMCRYPT_RETURN_IF_ERROR(ParseEncryptionScheme(*scheme, &out));
  SMCRYPT_RETURN_IF_ERROR(InElement("PBES2-params", pbes2->Done()));
  if (out.key_length.has_value() && *out.key_length != out.cipher->key_size) {
    return Error(absl::StrCat("PBKDF2 keyLength ", *out.key_length, " does not match ",
                              out.cipher->name, "'s ", out.cipher->key_size, "-byte key"));
  }
  auto data = epki->ReadOctetString();
  if (!data.ok()) return InElement("encryptedData", data.status());
  SMCRYPT_RETURN_IF_ERROR(InElement("", epki->Done()));
  if (data->empty() || data->size() % kBlockSize != 0 ||
      data->size() > kMaxPkcs8EncryptedDataSize) {
    return Error(absl::StrCat("encryptedData is ", data->size(),
                              " bytes, expected a non-zero multiple of ", kBlockSize,
                              " up to ", kMaxPkcs8EncryptedDataSize));
  }
  out.encrypted_data = *data;
  return out;
}

// ToDer returns the DER of `in`: `in` itself, or the body of its PEM block, which
// must be labelled "ENCRYPTED PRIVATE KEY". `storage` keeps the decoded PEM.
absl::StatusOr<absl::string_view> ToDer(absl::string_view in, SecretData& storage) {
  if (in.size() > kMaxEncryptedPrivateKeyInfoInput) {
    return Error(absl::StrCat("input is ", in.size(), " bytes, at most ",
                              kMaxEncryptedPrivateKeyInfoInput));
  }
  if (!LooksLikePem(in)) return in;
  SMCRYPT_ASSIGN_OR_RETURN(PemBlock block, PemDecode(in));
  if (block.label != kPemLabel) {
    return Error(absl::StrCat("PEM label \"", block.label, "\", expected \"", kPemLabel, "\""));
  }
  storage = std::move(block.der);
  return SecretDataAsStringView(storage);
}

absl::StatusOr<Parsed> Parse(absl::string_view in, SecretData& storage) {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view der, ToDer(in, storage));
  return ParseDer(der);
}

// DeriveKey is PBKDF2 (RFC 8018 §5.2) with the PRF's HMAC, `key_size` bytes.
absl::StatusOr<SecretData> DeriveKey(const PrfInfo& prf, absl::string_view password,
                                     absl::string_view salt, uint32_t iterations,
                                     size_t key_size) {
  SecretData key(key_size);
  // Sizes are bounded above (password, salt ≤ 64 KiB; iterations ≤ 10^7), so the int
  // conversions hold.
  if (PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), static_cast<int>(iterations), prf.md(),
                        static_cast<int>(key.size()), key.data()) != 1) {
    return SslInternalError(absl::StrCat("PKCS5_PBKDF2_HMAC(", prf.name, ")"));
  }
  return key;
}

// AesCbc runs AES-CBC without padding over whole blocks (`enc` 1 encrypts, 0 decrypts).
absl::StatusOr<SecretData> AesCbc(const CipherInfo& cipher, const SecretData& key,
                                  absl::string_view iv, const uint8_t* in, size_t len,
                                  int enc) {
  SslUniquePtr<EVP_CIPHER_CTX> ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr ||
      EVP_CipherInit_ex2(ctx.get(), cipher.evp(), key.data(),
                         reinterpret_cast<const unsigned char*>(iv.data()), enc,
                         nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1) {
    return SslInternalError(absl::StrCat("EVP_CipherInit_ex2(", cipher.name, ")"));
  }
  SecretData out(len + kBlockSize);
  int n = 0;
  int tail = 0;
  if (EVP_CipherUpdate(ctx.get(), out.data(), &n, in, static_cast<int>(len)) != 1 ||
      EVP_CipherFinal_ex(ctx.get(), out.data() + n, &tail) != 1 ||
      static_cast<size_t>(n) + static_cast<size_t>(tail) != len) {
    return SslInternalError(absl::StrCat("EVP_Cipher(", cipher.name, ")"));
  }
  out.resize(len);
  return out;
}

// Sm4Cbc runs SM4-CBC (GB/T 17964-2021 §6) without padding over whole blocks, with
// smcrypt's SM4 block functions: C_i = E(P_i ⊕ C_{i−1}), P_i = D(C_i) ⊕ C_{i−1},
// C_{−1} = IV.
absl::StatusOr<SecretData> Sm4Cbc(const SecretData& key, absl::string_view iv,
                                  const uint8_t* in, size_t len, bool encrypt) {
  Sm4Key rk;  // wiped by its destructor
  SMCRYPT_RETURN_IF_ERROR(Sm4ExpandKey(SecretDataAsStringView(key), &rk));
  SecretData out(len);
  const uint8_t* prev = reinterpret_cast<const uint8_t*>(iv.data());
  if (encrypt) {
    for (size_t off = 0; off < len; off += kBlockSize) {
      for (size_t i = 0; i < kBlockSize; ++i) out[off + i] = in[off + i] ^ prev[i];
      Sm4EncryptBlocks(rk, out.data() + off, out.data() + off, 1);
      prev = out.data() + off;
    }
  } else {
    Sm4DecryptBlocks(rk, in, out.data(), len / kBlockSize);  // ECB over all blocks at once
    for (size_t off = 0; off < len; off += kBlockSize) {
      for (size_t i = 0; i < kBlockSize; ++i) out[off + i] ^= prev[i];
      prev = in + off;
    }
  }
  return out;
}

absl::StatusOr<SecretData> RunCipher(const CipherInfo& cipher, const SecretData& key,
                                     absl::string_view iv, const uint8_t* in, size_t len,
                                     bool encrypt) {
  if (cipher.kind == CipherKind::kSm4) return Sm4Cbc(key, iv, in, len, encrypt);
  return AesCbc(cipher, key, iv, in, len, encrypt ? 1 : 0);
}

// Pkcs7PaddingMask returns ~0 when `buf` (len ≥ 16, a multiple of 16) ends in valid
// PKCS#7 padding (RFC 5652 §6.3, RFC 8018 §6.2.1 step 4: 1 ≤ p ≤ 16, the last p bytes
// all equal p), else 0. Every test is a mask: the time does not depend on the plaintext.
uint32_t Pkcs7PaddingMask(const uint8_t* buf, size_t len) {
  const uint32_t pad = buf[len - 1];
  uint32_t good = ~CtIsZero32(pad) & ~(0u - ((static_cast<uint32_t>(kBlockSize) - pad) >> 31));
  for (uint32_t i = 0; i < kBlockSize; ++i) {
    const uint32_t in_pad = 0u - ((i - pad) >> 31);  // ~0 when i < pad
    good &= ~in_pad | CtEq32(buf[len - 1 - i], pad);
  }
  return ValueBarrier(good);
}

// CheckPrivateKeyInfo checks `der` is PrivateKeyInfo / OneAsymmetricKey DER (RFC 5208
// §5, RFC 5958 §2): SEQUENCE { INTEGER version 0 or 1, AlgorithmIdentifier SEQUENCE {
// OID, ... }, OCTET STRING privateKey, ... } with nothing after it. The remaining
// optional fields ([0] attributes, [1] publicKey) are left to the key parsers. It reads
// tags and lengths only; the private key's bytes are not inspected.
absl::Status CheckPrivateKeyInfo(absl::string_view der) {
  der::Reader top(der);
  SMCRYPT_ASSIGN_OR_RETURN(der::Reader pki, top.ReadSequence());
  SMCRYPT_RETURN_IF_ERROR(top.Done());
  SMCRYPT_ASSIGN_OR_RETURN(uint64_t version, pki.ReadSmallUnsigned());
  if (version > 1) {
    return absl::InvalidArgumentError(absl::StrCat("version ", version, ", expected 0 or 1"));
  }
  SMCRYPT_ASSIGN_OR_RETURN(der::Reader alg, pki.ReadSequence());
  SMCRYPT_RETURN_IF_ERROR(alg.ReadOid().status());
  SMCRYPT_RETURN_IF_ERROR(pki.ReadOctetString().status());
  return absl::OkStatus();
}

Pbes2Params ToParams(const Parsed& p) {
  Pbes2Params params;
  if (p.prf->prf == Prf::kSha256 && p.cipher->key_size == 32 &&
      p.cipher->kind == CipherKind::kAes) {
    params.scheme = Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc;
  } else if (p.prf->prf == Prf::kSm3 && p.cipher->kind == CipherKind::kSm4) {
    params.scheme = Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc;
  }
  params.prf = p.prf->name;
  params.cipher = p.cipher->name;
  params.iterations = p.iterations;
  params.salt_size = p.salt.size();
  params.key_size = p.cipher->key_size;
  return params;
}

}  // namespace

bool IsEncryptedPrivateKeyInfo(absl::string_view in) {
  constexpr size_t kMinSize = 66;  // as LooksLikePem: raw scalars and points are shorter
  if (in.size() < kMinSize || in.size() > kMaxEncryptedPrivateKeyInfoInput) return false;
  SecretData storage;
  absl::string_view der = in;
  if (LooksLikePem(in)) {
    absl::StatusOr<PemBlock> block = PemDecode(in);
    if (!block.ok() || block->label != kPemLabel) return false;
    storage = std::move(block->der);
    der = SecretDataAsStringView(storage);
  }
  der::Reader top(der);
  absl::StatusOr<der::Reader> epki = top.ReadSequence();
  if (!epki.ok() || !top.Done().ok()) return false;
  absl::StatusOr<der::Reader> alg = epki->ReadSequence();
  if (!alg.ok() || !alg->ReadOid().ok()) return false;
  return epki->ReadOctetString().ok() && epki->Done().ok();
}

absl::StatusOr<Pbes2Params> GetPbes2Params(absl::string_view in) {
  SecretData storage;
  SMCRYPT_ASSIGN_OR_RETURN(Parsed parsed, Parse(in, storage));
  return ToParams(parsed);
}

absl::StatusOr<SecretData> DecryptPrivateKeyInfo(absl::string_view in,
                                                 absl::string_view password) {
  if (password.size() > kMaxPkcs8PasswordSize) {
    return Error(absl::StrCat("password is ", password.size(), " bytes, at most ",
                              kMaxPkcs8PasswordSize));
  }
  SecretData storage;
  SMCRYPT_ASSIGN_OR_RETURN(Parsed p, Parse(in, storage));
  SMCRYPT_ASSIGN_OR_RETURN(
      SecretData key, DeriveKey(*p.prf, password, p.salt, p.iterations, p.cipher->key_size));
  const uint8_t* data = reinterpret_cast<const uint8_t*>(p.encrypted_data.data());
  SMCRYPT_ASSIGN_OR_RETURN(
      SecretData plain, RunCipher(*p.cipher, key, p.iv, data, p.encrypted_data.size(), false));
  // The verdict is what the caller learns (one error for every failure); the unpadded
  // length is public once the padding is known good.
  const uint32_t good = Pkcs7PaddingMask(plain.data(), plain.size());
  if (good == 0) {
    ClearSslErrors();
    return WrongPassword();
  }
  plain.resize(plain.size() - plain.back());
  if (!CheckPrivateKeyInfo(SecretDataAsStringView(plain)).ok()) return WrongPassword();
  return plain;
}

absl::StatusOr<std::string> EncryptPrivateKeyInfo(absl::string_view private_key_info_der,
                                                  absl::string_view password,
                                                  Pbes2Scheme scheme, uint32_t iterations) {
  if (password.empty() || password.size() > kMaxPkcs8PasswordSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EncryptedPrivateKeyInfo: password is ", password.size(), " bytes, expected 1 to ",
        kMaxPkcs8PasswordSize));
  }
  if (private_key_info_der.size() > kMaxPkcs8EncryptedDataSize - kBlockSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("PrivateKeyInfo: ", private_key_info_der.size(), " bytes, at most ",
                     kMaxPkcs8EncryptedDataSize - kBlockSize));
  }
  absl::Status pki = CheckPrivateKeyInfo(private_key_info_der);
  if (!pki.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("PrivateKeyInfo: ", pki.message()));
  }
  if (iterations > kMaxPbkdf2Iterations) {
    return absl::InvalidArgumentError(absl::StrCat("EncryptedPrivateKeyInfo: iteration count ",
                                                   iterations, " exceeds the limit of ",
                                                   kMaxPbkdf2Iterations));
  }
  const bool sm = scheme == Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc;
  const PrfInfo& prf = PrfFor(sm ? Prf::kSm3 : Prf::kSha256);
  const CipherInfo& cipher = sm ? kCiphers[3] : kCiphers[2];  // SM4-CBC, AES-256-CBC
  if (iterations == 0) {
    iterations = sm ? kPbes2DefaultIterationsSm3Sm4 : kPbes2DefaultIterationsSha256Aes256;
  }
  uint8_t salt[kPbes2SaltSize];
  uint8_t iv[kIvSize];
  SMCRYPT_RETURN_IF_ERROR(RandomBytes(salt, sizeof(salt)));
  SMCRYPT_RETURN_IF_ERROR(RandomBytes(iv, sizeof(iv)));
  const absl::string_view salt_view(reinterpret_cast<const char*>(salt), sizeof(salt));
  const absl::string_view iv_view(reinterpret_cast<const char*>(iv), sizeof(iv));
  SMCRYPT_ASSIGN_OR_RETURN(SecretData key,
                           DeriveKey(prf, password, salt_view, iterations, cipher.key_size));
  // RFC 8018 §6.2.1 step 4: pad with 1 to 16 bytes of value p (the length is public).
  SecretData padded = SecretDataFromStringView(private_key_info_der);
  const size_t pad = kBlockSize - padded.size() % kBlockSize;
  padded.insert(padded.end(), pad, static_cast<uint8_t>(pad));
  SMCRYPT_ASSIGN_OR_RETURN(
      SecretData enc, RunCipher(cipher, key, iv_view, padded.data(), padded.size(), true));

  der::Writer w;
  w.BeginSequence();  // EncryptedPrivateKeyInfo
  w.BeginSequence();  // encryptionAlgorithm
  w.AddOid(kOidPbes2);
  w.BeginSequence();  // PBES2-params
  w.BeginSequence();  // keyDerivationFunc
  w.AddOid(kOidPbkdf2);
  w.BeginSequence();  // PBKDF2-params
  w.AddOctetString(salt_view);
  w.AddSmallUnsigned(iterations);
  if (sm) w.AddSmallUnsigned(cipher.key_size);  // GmSSL 3 writes keyLength 16
  w.BeginSequence();                            // prf
  w.AddOid(prf.oid);
  if (!sm) w.AddNull();  // RFC 8018 §B.1.2: NULL; GmSSL 3 writes (and reads) none
  w.End();
  w.End();  // PBKDF2-params
  w.End();  // keyDerivationFunc
  w.BeginSequence();  // encryptionScheme
  w.AddOid(cipher.oid);
  w.AddOctetString(iv_view);
  w.End();
  w.End();  // PBES2-params
  w.End();  // encryptionAlgorithm
  w.AddOctetString(SecretDataAsStringView(enc));
  w.End();
  return std::move(w).Finish();
}

}  // namespace smcrypt
