// hpke.cc — HPKE contexts (RFC 9180 §5.1–§5.3), the wire format and the HybridEncrypt /
// HybridDecrypt primitives of smcrypt/hpke.h.
#include "smcrypt/hpke.h"

#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/key_errors.h"
#include "crypto/common/random.h"
#include "crypto/common/status_macros.h"
#include "crypto/hpke/hpke_internal.h"
#include "crypto/openssl/hkdf_openssl.h"
#include "crypto/openssl/p256_kem_openssl.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_key_cache.h"
#include "smcrypt/pem.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

struct HpkeContext::State {
  const internal::HpkeSuiteDesc* desc;
  std::unique_ptr<Aead> aead;
  SecretData base_nonce;
  SecretData exporter_secret;
};

namespace {

absl::Status DecryptionFailed() { return absl::InvalidArgumentError("decryption failed"); }

absl::string_view View(const SecretData& s) { return SecretDataAsStringView(s); }

}  // namespace

// ---- Suites ------------------------------------------------------------------------

HpkeSuiteIds GetHpkeSuiteIds(HpkeSuite suite) {
  const internal::HpkeSuiteDesc& d = internal::GetHpkeSuiteDesc(suite);
  return {d.kem->id, d.kdf->id, d.aead->id};
}

absl::string_view HpkeSuiteName(HpkeSuite suite) {
  return internal::GetHpkeSuiteDesc(suite).name;
}

// ---- Contexts ----------------------------------------------------------------------

HpkeContext::HpkeContext(std::unique_ptr<State> state)
    : suite_(state->desc->suite), state_(std::move(state)) {}

HpkeContext::~HpkeContext() = default;

absl::StatusOr<std::string> HpkeContext::ComputeNonce() const {
  if (seq_ == std::numeric_limits<uint64_t>::max()) {
    return absl::ResourceExhaustedError("HPKE sequence number overflow");
  }
  // base_nonce XOR I2OSP(seq, Nn); seq fits in the last 8 bytes.
  std::string nonce(state_->base_nonce.begin(), state_->base_nonce.end());
  const size_t nn = nonce.size();
  for (size_t i = 0; i < 8; ++i) {
    nonce[nn - 1 - i] = static_cast<char>(static_cast<uint8_t>(nonce[nn - 1 - i]) ^
                                          static_cast<uint8_t>(seq_ >> (8 * i)));
  }
  return nonce;
}

absl::StatusOr<std::string> HpkeContext::Seal(absl::string_view aad,
                                              absl::string_view plaintext) {
  SMCRYPT_ASSIGN_OR_RETURN(std::string nonce, ComputeNonce());
  auto ct = state_->aead->Seal(nonce, plaintext, aad);
  SecureZero(&nonce[0], nonce.size());
  if (!ct.ok()) return ct.status();
  ++seq_;
  return ct;
}

absl::StatusOr<std::string> HpkeContext::Open(absl::string_view aad,
                                              absl::string_view ciphertext) {
  SMCRYPT_ASSIGN_OR_RETURN(std::string nonce, ComputeNonce());
  auto pt = state_->aead->Open(nonce, ciphertext, aad);
  SecureZero(&nonce[0], nonce.size());
  if (!pt.ok()) {
    // Too-short input and a bad tag are the same failure to the caller.
    if (pt.status().code() == absl::StatusCode::kInvalidArgument) return DecryptionFailed();
    return pt.status();
  }
  ++seq_;
  return pt;
}

absl::StatusOr<SecretData> HpkeContext::Export(absl::string_view exporter_context,
                                               size_t length) const {
  const internal::HpkeSuiteDesc& desc = *state_->desc;
  if (length == 0 || length > 255 * desc.kdf->nh) {
    return absl::InvalidArgumentError(absl::StrCat("HPKE export: length must be 1 to ",
                                                   255 * desc.kdf->nh, ", got ", length));
  }
  return internal::LabeledExpand(*desc.kdf, internal::HpkeSuiteId(desc),
                                 View(state_->exporter_secret), "sec", exporter_context,
                                 length);
}

namespace internal {

absl::StatusOr<std::unique_ptr<HpkeContext>> NewHpkeContext(const HpkeSuiteDesc& desc,
                                                            const HpkeKeySchedule& ks) {
  auto state = std::make_unique<HpkeContext::State>();
  state->desc = &desc;
  SMCRYPT_ASSIGN_OR_RETURN(state->aead, desc.aead->new_aead(View(ks.key)));
  state->base_nonce = ks.base_nonce;
  state->exporter_secret = ks.exporter_secret;
  return std::make_unique<HpkeContext>(std::move(state));
}

absl::StatusOr<std::unique_ptr<HpkeContext>> NewHpkeContextFromDh(const HpkeSuiteDesc& desc,
                                                                  absl::string_view dh,
                                                                  absl::string_view enc,
                                                                  absl::string_view pk_r,
                                                                  absl::string_view info) {
  const std::string kem_context = absl::StrCat(enc, pk_r);
  SMCRYPT_ASSIGN_OR_RETURN(SecretData shared_secret,
                           ExtractAndExpand(*desc.kem, dh, kem_context));
  SMCRYPT_ASSIGN_OR_RETURN(HpkeKeySchedule ks, KeyScheduleBase(desc, View(shared_secret), info,
                                                               /*with_exporter=*/false));
  return NewHpkeContext(desc, ks);
}

absl::StatusOr<HpkeContext::Sender> SetupBaseSWithEphemeral(HpkeSuite suite,
                                                            absl::string_view pk_r,
                                                            absl::string_view info,
                                                            const HpkeKeyPair& ephemeral) {
  const HpkeSuiteDesc& desc = GetHpkeSuiteDesc(suite);
  SMCRYPT_ASSIGN_OR_RETURN(HpkeEncapResult encap,
                           EncapWithEphemeral(*desc.kem, pk_r, ephemeral));
  SMCRYPT_ASSIGN_OR_RETURN(HpkeKeySchedule ks,
                           KeyScheduleBase(desc, View(encap.shared_secret), info));
  HpkeContext::Sender sender;
  sender.enc = std::move(encap.enc);
  SMCRYPT_ASSIGN_OR_RETURN(sender.context, NewHpkeContext(desc, ks));
  return sender;
}

absl::StatusOr<std::unique_ptr<HpkeContext>> SetupBaseRWithPublicKey(
    HpkeSuite suite, absl::string_view enc, absl::string_view sk_r, absl::string_view pk_r,
    absl::string_view info) {
  const HpkeSuiteDesc& desc = GetHpkeSuiteDesc(suite);
  SMCRYPT_ASSIGN_OR_RETURN(SecretData shared_secret, Decap(*desc.kem, enc, sk_r, pk_r));
  SMCRYPT_ASSIGN_OR_RETURN(HpkeKeySchedule ks, KeyScheduleBase(desc, View(shared_secret), info));
  return NewHpkeContext(desc, ks);
}

}  // namespace internal

absl::StatusOr<HpkeContext::Sender> HpkeContext::SetupBaseS(
    HpkeSuite suite, absl::string_view recipient_public_key, absl::string_view info) {
  SMCRYPT_ASSIGN_OR_RETURN(HpkeKeyPair ephemeral, HpkeGenerateKeyPair(suite));
  return internal::SetupBaseSWithEphemeral(suite, recipient_public_key, info, ephemeral);
}

absl::StatusOr<std::unique_ptr<HpkeContext>> HpkeContext::SetupBaseR(
    HpkeSuite suite, absl::string_view enc, absl::string_view recipient_private_key,
    absl::string_view info) {
  const internal::HpkeKem& kem = *internal::GetHpkeSuiteDesc(suite).kem;
  if (recipient_private_key.size() != kem.nsk) {
    return absl::InvalidArgumentError(absl::StrCat(kem.name, " private key: expected ",
                                                   kem.nsk, " bytes, got ",
                                                   recipient_private_key.size()));
  }
  SMCRYPT_ASSIGN_OR_RETURN(std::string pk_r, kem.public_key(recipient_private_key));
  return internal::SetupBaseRWithPublicKey(suite, enc, recipient_private_key, pk_r, info);
}

// ---- Keys --------------------------------------------------------------------------

absl::StatusOr<HpkeKeyPair> HpkeDeriveKeyPair(HpkeSuite suite, absl::string_view ikm) {
  return internal::DeriveKeyPair(*internal::GetHpkeSuiteDesc(suite).kem, ikm);
}

absl::StatusOr<HpkeKeyPair> HpkeGenerateKeyPair(HpkeSuite suite) {
  SecretData ikm(kHpkePrivateKeySize);
  SMCRYPT_RETURN_IF_ERROR(RandomBytes(ikm.data(), ikm.size()));
  return HpkeDeriveKeyPair(suite, View(ikm));
}

// ---- Wire format -------------------------------------------------------------------

std::string HpkeWireHeader(HpkeSuite suite) {
  const HpkeSuiteIds ids = GetHpkeSuiteIds(suite);
  std::string h(kHpkeWireHeaderSize, '\0');
  h[0] = static_cast<char>(kHpkeWireFormatVersion);
  const uint16_t v[3] = {ids.kem_id, ids.kdf_id, ids.aead_id};
  for (int i = 0; i < 3; ++i) {
    h[1 + 2 * i] = static_cast<char>(v[i] >> 8);
    h[2 + 2 * i] = static_cast<char>(v[i] & 0xff);
  }
  return h;
}

absl::StatusOr<HpkeWireMessage> ParseHpkeWireMessage(HpkeSuite suite, absl::string_view in) {
  if (in.size() < kHpkeWireOverhead) {
    return absl::InvalidArgumentError(absl::StrCat("HPKE ciphertext: expected at least ",
                                                   kHpkeWireOverhead, " bytes, got ",
                                                   in.size()));
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(in.data());
  if (p[0] != kHpkeWireFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrFormat("HPKE ciphertext: format version: expected 0x%02x, got 0x%02x",
                        kHpkeWireFormatVersion, p[0]));
  }
  const HpkeSuiteIds ids = GetHpkeSuiteIds(suite);
  const uint16_t want[3] = {ids.kem_id, ids.kdf_id, ids.aead_id};
  const char* names[3] = {"kem_id", "kdf_id", "aead_id"};
  for (int i = 0; i < 3; ++i) {
    const uint16_t got = static_cast<uint16_t>((p[1 + 2 * i] << 8) | p[2 + 2 * i]);
    if (got != want[i]) {
      return absl::InvalidArgumentError(
          absl::StrFormat("HPKE ciphertext: %s: expected 0x%04x (%s), got 0x%04x", names[i],
                          want[i], HpkeSuiteName(suite), got));
    }
  }
  HpkeWireMessage m;
  m.header = in.substr(0, kHpkeWireHeaderSize);
  m.enc = in.substr(kHpkeWireHeaderSize, kHpkeEncSize);
  m.ciphertext = in.substr(kHpkeWireHeaderSize + kHpkeEncSize);
  return m;
}

// ---- Key loading -------------------------------------------------------------------
namespace {

absl::Status WrongFamilyOr(absl::string_view key, absl::string_view needs,
                           absl::Status parse_error) {
  const std::string family = DescribeEncodedKey(key);
  if (!family.empty() && family != needs) {
    return absl::FailedPreconditionError(
        absl::StrCat("key is ", family, ", algorithm needs ", needs));
  }
  return parse_error;
}

// DerOf removes PEM armour (checking the label) or returns the input as is.
absl::StatusOr<SecretData> DerOf(absl::string_view in, absl::string_view label) {
  if (!LooksLikePem(in)) return SecretDataFromStringView(in);
  SMCRYPT_ASSIGN_OR_RETURN(PemBlock block, PemDecode(in));
  if (block.label != label) {
    return absl::InvalidArgumentError(absl::StrCat("expected PEM \"", label, "\", got \"",
                                                   block.label, "\""));
  }
  return std::move(block.der);
}

absl::StatusOr<std::string> LoadSm2PublicPoint(absl::string_view in) {
  if ((in.size() == kSm2PointSize && in[0] == 0x04) ||
      (in.size() == kSm2CompressedPointSize && (in[0] == 0x02 || in[0] == 0x03))) {
    SMCRYPT_ASSIGN_OR_RETURN(Sm2PublicKey key, Sm2PublicKey::FromPoint(in));
    return key.ToPoint();
  }
  SMCRYPT_ASSIGN_OR_RETURN(SecretData der, DerOf(in, "PUBLIC KEY"));
  auto key = Sm2PublicKeyFromSpki(View(der));
  if (!key.ok()) {
    return WrongFamilyOr(in, "SM2",
                         AsUnparsableKeyError(key.status(), "SM2", KeyRole::kPublic,
                                              /*raw_forms=*/true, in.size()));
  }
  return key->ToPoint();
}

absl::StatusOr<SecretData> LoadSm2PrivateScalar(absl::string_view in) {
  if (!LooksLikePem(in) && in.size() == kSm2ScalarSize) {
    SMCRYPT_ASSIGN_OR_RETURN(Sm2PrivateKey key, Sm2PrivateKey::FromScalar(in));
    return key.ToScalar();
  }
  SMCRYPT_ASSIGN_OR_RETURN(SecretData der, DerOf(in, "PRIVATE KEY"));
  absl::Status start = CheckKeyDerStart(View(der), KeyRole::kPrivate);
  absl::StatusOr<Sm2PrivateKey> key =
      start.ok() ? Sm2PrivateKeyFromPkcs8(View(der)) : absl::StatusOr<Sm2PrivateKey>(start);
  if (!key.ok()) {
    return WrongFamilyOr(in, "SM2",
                         AsUnparsableKeyError(key.status(), "SM2", KeyRole::kPrivate,
                                              /*raw_forms=*/true, in.size()));
  }
  return key->ToScalar();
}

}  // namespace

absl::StatusOr<std::string> HpkeParsePublicKey(HpkeSuite suite,
                                               absl::string_view recipient_public_key) {
  if (suite == HpkeSuite::kSm2Sm3Sm4Gcm) return LoadSm2PublicPoint(recipient_public_key);
  return P256PublicPointFromKey(recipient_public_key);
}

absl::StatusOr<SecretData> HpkeParsePrivateKey(HpkeSuite suite,
                                               absl::string_view recipient_private_key) {
  if (suite == HpkeSuite::kSm2Sm3Sm4Gcm) return LoadSm2PrivateScalar(recipient_private_key);
  return P256PrivateScalarFromKey(recipient_private_key);
}

namespace {

// ---- HybridEncrypt / HybridDecrypt -------------------------------------------------

class HpkeHybridEncrypt final : public HybridEncrypt {
 public:
  // `sm2` (HPKE-SM2-SM3-SM4GCM only): the recipient's key with its lazily built comb
  // table, for the ephemeral Diffie–Hellman of Sm2EphemeralDhBatch. `p256`
  // (HPKE-P256-SHA256-AES128GCM only): the recipient's key as an OpenSSL key object,
  // parsed and validated once, for every message's EphemeralDh.
  HpkeHybridEncrypt(HpkeSuite suite, std::string pk_r, std::unique_ptr<Sm2PublicKeyCache> sm2,
                    std::unique_ptr<const P256KemPublicKey> p256)
      : suite_(suite),
        header_(HpkeWireHeader(suite)),
        pk_r_(std::move(pk_r)),
        sm2_(std::move(sm2)),
        p256_(std::move(p256)) {}

  absl::StatusOr<std::string> Encrypt(absl::string_view plaintext,
                                      absl::string_view context_info) const override {
    if (sm2_ != nullptr) {
      const HybridEncryptInput in{plaintext, context_info};
      return std::move(EncryptMany(absl::MakeConstSpan(&in, 1))[0]);
    }
    if (p256_ != nullptr) {
      // SetupBaseS (§5.1.1): GenerateKeyPair and DH(skE, pkR) (§4.1 Encap) on the kept
      // key, then ExtractAndExpand and the key schedule; then Seal (§5.2).
      std::string enc;
      SecretData dh;
      SMCRYPT_RETURN_IF_ERROR(p256_->EphemeralDh(&enc, &dh));
      SMCRYPT_ASSIGN_OR_RETURN(
          std::unique_ptr<HpkeContext> context,
          internal::NewHpkeContextFromDh(internal::GetHpkeSuiteDesc(suite_), View(dh), enc,
                                         pk_r_, context_info));
      return Frame(enc, *context, plaintext);
    }
    SMCRYPT_ASSIGN_OR_RETURN(HpkeContext::Sender sender,
                             HpkeContext::SetupBaseS(suite_, pk_r_, context_info));
    return Frame(sender.enc, *sender.context, plaintext);
  }

  // HPKE-SM2-SM3-SM4GCM: GenerateKeyPair (§4: any randomized algorithm; a uniform
  // k ∈ [1, n − 1], pkE = k·G) and DH(skE, pkR) = x(k·pkR) of every message come from one
  // Sm2EphemeralDhBatch call (8 messages at a time in AVX-512 IFMA lanes where
  // available); Encap's ExtractAndExpand and the key schedule of every message from one
  // EncapKeyScheduleManyHkdfSm3 call (HMAC-SM3 in SM3 lanes); then Seal per message:
  // the steps of SetupBaseS (§4.1 Encap, §5.1) and Seal (§5.2).
  std::vector<absl::StatusOr<std::string>> EncryptMany(
      absl::Span<const HybridEncryptInput> inputs) const override {
    if (sm2_ == nullptr) return HybridEncrypt::EncryptMany(inputs);
    const size_t m = inputs.size();
    std::vector<internal::Sm2EphemeralDh> eph(m);
    absl::Status st = internal::Sm2EphemeralDhBatch(*sm2_, absl::MakeSpan(eph));
    std::vector<std::string> kem_context(m);
    std::vector<absl::string_view> dh(m), ctx(m), info(m);
    for (size_t i = 0; i < m; ++i) {
      kem_context[i] = absl::StrCat(Enc(eph[i]), pk_r_);
      dh[i] = absl::string_view(reinterpret_cast<const char*>(eph[i].shared), kSm2ScalarSize);
      ctx[i] = kem_context[i];
      info[i] = inputs[i].context_info;
    }
    const internal::HpkeSuiteDesc& desc = internal::GetHpkeSuiteDesc(suite_);
    std::vector<internal::HpkeKeySchedule> ks(m);
    if (st.ok()) {
      st = internal::EncapKeyScheduleManyHkdfSm3(desc, dh, ctx, info, absl::MakeSpan(ks));
    }
    std::vector<absl::StatusOr<std::string>> out;
    out.reserve(m);
    for (size_t i = 0; i < m; ++i) {
      if (!st.ok()) {
        out.push_back(st);
        continue;
      }
      absl::StatusOr<std::unique_ptr<HpkeContext>> context = internal::NewHpkeContext(desc, ks[i]);
      if (!context.ok()) {
        out.push_back(context.status());
        continue;
      }
      out.push_back(Frame(Enc(eph[i]), **context, inputs[i].plaintext));
    }
    return out;
  }

 private:
  static absl::string_view Enc(const internal::Sm2EphemeralDh& eph) {
    return absl::string_view(reinterpret_cast<const char*>(eph.c1), sizeof(eph.c1));
  }

  // header ‖ enc ‖ Seal(aad = header, plaintext): the one-shot wire format.
  absl::StatusOr<std::string> Frame(absl::string_view enc, HpkeContext& context,
                                    absl::string_view plaintext) const {
    SMCRYPT_ASSIGN_OR_RETURN(std::string ct, context.Seal(header_, plaintext));
    std::string out;
    out.reserve(header_.size() + enc.size() + ct.size());
    out.append(header_);
    out.append(enc.data(), enc.size());
    out.append(ct);
    return out;
  }

  const HpkeSuite suite_;
  const std::string header_;
  const std::string pk_r_;  // 65-byte uncompressed point, validated
  const std::unique_ptr<Sm2PublicKeyCache> sm2_;
  const std::unique_ptr<const P256KemPublicKey> p256_;
};

class HpkeHybridDecrypt final : public HybridDecrypt {
 public:
  // `p256` (HPKE-P256-SHA256-AES128GCM only): skR as an OpenSSL key object, parsed
  // once, for every message's DH(skR, pkE).
  HpkeHybridDecrypt(HpkeSuite suite, SecretData sk_r, std::string pk_r,
                    std::unique_ptr<const P256KemPrivateKey> p256)
      : suite_(suite), sk_r_(std::move(sk_r)), pk_r_(std::move(pk_r)), p256_(std::move(p256)) {}

  absl::StatusOr<std::string> Decrypt(absl::string_view ciphertext,
                                      absl::string_view context_info) const override {
    SMCRYPT_ASSIGN_OR_RETURN(HpkeWireMessage m, ParseHpkeWireMessage(suite_, ciphertext));
    auto context = p256_ != nullptr ? SetupBaseRP256(m.enc, context_info)
                                    : internal::SetupBaseRWithPublicKey(
                                          suite_, m.enc, View(sk_r_), pk_r_, context_info);
    if (!context.ok()) {
      // enc that is not a valid point: the same answer as any other tampering.
      if (context.status().code() == absl::StatusCode::kInvalidArgument) {
        return DecryptionFailed();
      }
      return context.status();
    }
    return (*context)->Open(m.header, m.ciphertext);
  }

 private:
  // SetupBaseR (§5.1.1) on the kept key: DH(skR, pkE) (§4.1 Decap, pkE validated),
  // ExtractAndExpand and the key schedule.
  absl::StatusOr<std::unique_ptr<HpkeContext>> SetupBaseRP256(absl::string_view enc,
                                                              absl::string_view info) const {
    SMCRYPT_ASSIGN_OR_RETURN(SecretData dh, p256_->Dh(enc));
    return internal::NewHpkeContextFromDh(internal::GetHpkeSuiteDesc(suite_), View(dh), enc,
                                          pk_r_, info);
  }

  const HpkeSuite suite_;
  const SecretData sk_r_;   // 32-byte scalar (empty for the P-256 suite: held by p256_)
  const std::string pk_r_;  // its 65-byte public point (pkRm)
  const std::unique_ptr<const P256KemPrivateKey> p256_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HybridEncrypt>> NewHpkeEncrypt(
    HpkeSuite suite, absl::string_view recipient_public_key) {
  SMCRYPT_ASSIGN_OR_RETURN(std::string pk_r, HpkeParsePublicKey(suite, recipient_public_key));
  std::unique_ptr<Sm2PublicKeyCache> sm2;
  std::unique_ptr<const P256KemPublicKey> p256;
  if (suite == HpkeSuite::kSm2Sm3Sm4Gcm) {
    SMCRYPT_ASSIGN_OR_RETURN(Sm2PublicKey key, Sm2PublicKey::FromPoint(pk_r));
    sm2 = std::make_unique<Sm2PublicKeyCache>(key);
  } else {
    SMCRYPT_ASSIGN_OR_RETURN(p256, P256KemPublicKey::New(pk_r));
  }
  return std::unique_ptr<HybridEncrypt>(
      new HpkeHybridEncrypt(suite, std::move(pk_r), std::move(sm2), std::move(p256)));
}

absl::StatusOr<std::unique_ptr<HybridDecrypt>> NewHpkeDecrypt(
    HpkeSuite suite, absl::string_view recipient_private_key) {
  SMCRYPT_ASSIGN_OR_RETURN(SecretData sk_r, HpkeParsePrivateKey(suite, recipient_private_key));
  std::string pk_r;
  std::unique_ptr<const P256KemPrivateKey> p256;
  if (suite == HpkeSuite::kP256Sha256Aes128Gcm) {
    SMCRYPT_ASSIGN_OR_RETURN(p256, P256KemPrivateKey::New(View(sk_r)));
    pk_r = p256->public_point();
    SecretData().swap(sk_r);  // skR lives in the key object only (freed storage is wiped)
  } else {
    const internal::HpkeKem& kem = *internal::GetHpkeSuiteDesc(suite).kem;
    SMCRYPT_ASSIGN_OR_RETURN(pk_r, kem.public_key(View(sk_r)));
  }
  return std::unique_ptr<HybridDecrypt>(
      new HpkeHybridDecrypt(suite, std::move(sk_r), std::move(pk_r), std::move(p256)));
}

}  // namespace smcrypt
