// hpke_kem.cc — the suite-independent parts of RFC 9180: labeled KDF calls (§4), DHKEM
// (§4.1), DeriveKeyPair (§7.1.3) and the base-mode key schedule (§5.1).
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/status_macros.h"
#include "crypto/hpke/hpke_internal.h"
#include "smcrypt/sm3.h"

namespace smcrypt::internal {
namespace {

constexpr absl::string_view kVersionLabel = "HPKE-v1";
constexpr uint8_t kModeBase = 0x00;

void AppendU16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v & 0xff));
}

// Concat joins byte strings into wiped storage (labeled inputs may carry secrets).
SecretData Concat(std::initializer_list<absl::string_view> parts) {
  size_t n = 0;
  for (absl::string_view p : parts) n += p.size();
  SecretData out;
  out.reserve(n);
  for (absl::string_view p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

absl::string_view View(const SecretData& s) { return SecretDataAsStringView(s); }

}  // namespace

std::string KemSuiteId(const HpkeKem& kem) {
  std::string id = "KEM";
  AppendU16(&id, kem.id);
  return id;
}

std::string HpkeSuiteId(const HpkeSuiteDesc& desc) {
  std::string id = "HPKE";
  AppendU16(&id, desc.kem->id);
  AppendU16(&id, desc.kdf->id);
  AppendU16(&id, desc.aead->id);
  return id;
}

absl::StatusOr<SecretData> LabeledExtract(const HpkeKdf& kdf, absl::string_view suite_id,
                                          absl::string_view salt, absl::string_view label,
                                          absl::string_view ikm) {
  const SecretData labeled_ikm = Concat({kVersionLabel, suite_id, label, ikm});
  return kdf.extract(salt, View(labeled_ikm));
}

absl::StatusOr<SecretData> LabeledExpand(const HpkeKdf& kdf, absl::string_view suite_id,
                                         absl::string_view prk, absl::string_view label,
                                         absl::string_view info, size_t length) {
  if (length == 0 || length > 255 * kdf.nh) {
    return absl::InvalidArgumentError(absl::StrCat("HPKE: expand length must be 1 to ",
                                                   255 * kdf.nh, ", got ", length));
  }
  std::string l;
  AppendU16(&l, static_cast<uint16_t>(length));
  const SecretData labeled_info = Concat({l, kVersionLabel, suite_id, label, info});
  return kdf.expand(prk, View(labeled_info), length);
}

bool HpkeScalarInRange(const HpkeKem& kem, const uint8_t* sk) {
  // sk − limit over big-endian bytes, least significant first: the final borrow is 1 iff
  // sk < limit. Straight-line code over every byte.
  uint32_t borrow = 0;
  uint32_t any = 0;
  for (size_t i = kem.nsk; i-- > 0;) {
    const uint32_t t = static_cast<uint32_t>(sk[i]) - kem.sk_limit[i] - borrow;
    borrow = (t >> 8) & 1;
    any |= sk[i];
  }
  const uint32_t nonzero = (any | (0u - any)) >> 31;  // 1 iff any ≠ 0
  return (borrow & nonzero) != 0;
}

absl::StatusOr<HpkeKeyPair> DeriveKeyPairFromCandidates(const HpkeKem& kem,
                                                        HpkeCandidateSource candidate,
                                                        int* attempts) {
  // Rejection sampling: only whether a candidate was rejected is visible, and rejected
  // candidates are discarded.
  for (int counter = 0; counter <= 255; ++counter) {
    if (attempts != nullptr) *attempts = counter + 1;
    SMCRYPT_ASSIGN_OR_RETURN(SecretData sk, candidate(static_cast<uint8_t>(counter)));
    if (sk.size() != kem.nsk) {
      return absl::InternalError(absl::StrCat("HPKE DeriveKeyPair: candidate of ", sk.size(),
                                              " bytes, expected ", kem.nsk));
    }
    sk[0] &= kem.bitmask;
    // Public: a rejected candidate is discarded (probability 2^-32 for SM2), so the
    // verdict says nothing about the key that is kept.
    if (!CtDeclassify(HpkeScalarInRange(kem, sk.data()))) continue;
    HpkeKeyPair pair;
    SMCRYPT_ASSIGN_OR_RETURN(pair.public_key, kem.public_key(View(sk)));
    pair.private_key = std::move(sk);
    return pair;
  }
  return absl::InternalError("HPKE DeriveKeyPairError: 256 candidates rejected");
}

absl::StatusOr<HpkeKeyPair> DeriveKeyPair(const HpkeKem& kem, absl::string_view ikm) {
  if (ikm.size() < kem.nsk) {
    return absl::InvalidArgumentError(absl::StrCat(
        "HPKE DeriveKeyPair: ikm of at least ", kem.nsk, " bytes, got ", ikm.size()));
  }
  const std::string suite_id = KemSuiteId(kem);
  SMCRYPT_ASSIGN_OR_RETURN(SecretData dkp_prk,
                           LabeledExtract(*kem.kdf, suite_id, "", "dkp_prk", ikm));
  return DeriveKeyPairFromCandidates(
      kem, [&](uint8_t counter) -> absl::StatusOr<SecretData> {
        const char c = static_cast<char>(counter);
        return LabeledExpand(*kem.kdf, suite_id, View(dkp_prk), "candidate",
                             absl::string_view(&c, 1), kem.nsk);
      });
}

absl::StatusOr<SecretData> ExtractAndExpand(const HpkeKem& kem, absl::string_view dh,
                                            absl::string_view kem_context) {
  const std::string suite_id = KemSuiteId(kem);
  SMCRYPT_ASSIGN_OR_RETURN(SecretData eae_prk,
                           LabeledExtract(*kem.kdf, suite_id, "", "eae_prk", dh));
  return LabeledExpand(*kem.kdf, suite_id, View(eae_prk), "shared_secret", kem_context,
                       kem.nsecret);
}

absl::StatusOr<HpkeEncapResult> EncapWithEphemeral(const HpkeKem& kem,
                                                   absl::string_view pk_r,
                                                   const HpkeKeyPair& ephemeral) {
  if (pk_r.size() != kem.npk || pk_r[0] != 0x04) {
    return absl::InvalidArgumentError(absl::StrCat(
        kem.name, " public key: expected a ", kem.npk,
        "-byte uncompressed point (04 || x || y), got ", pk_r.size(), " bytes"));
  }
  SMCRYPT_ASSIGN_OR_RETURN(SecretData dh, kem.dh(View(ephemeral.private_key), pk_r));
  HpkeEncapResult out;
  out.enc = ephemeral.public_key;
  const std::string kem_context = absl::StrCat(out.enc, pk_r);
  SMCRYPT_ASSIGN_OR_RETURN(out.shared_secret, ExtractAndExpand(kem, View(dh), kem_context));
  return out;
}

absl::StatusOr<SecretData> Decap(const HpkeKem& kem, absl::string_view enc,
                                 absl::string_view sk_r, absl::string_view pk_r) {
  if (enc.size() != kem.nenc || enc[0] != 0x04) {
    return absl::InvalidArgumentError(
        absl::StrCat(kem.name, " enc: expected a ", kem.nenc,
                     "-byte uncompressed point (04 || x || y), got ", enc.size(), " bytes"));
  }
  SMCRYPT_ASSIGN_OR_RETURN(SecretData dh, kem.dh(sk_r, enc));
  const std::string kem_context = absl::StrCat(enc, pk_r);
  return ExtractAndExpand(kem, View(dh), kem_context);
}

namespace {

// PskIdHash is LabeledExtract("", "psk_id_hash", psk_id) with psk_id empty (mode_base,
// §5.1): a constant of the suite, computed once for each of the two suites.
absl::StatusOr<SecretData> PskIdHash(const HpkeSuiteDesc& desc, absl::string_view suite_id) {
  auto compute = [&] { return LabeledExtract(*desc.kdf, suite_id, "", "psk_id_hash", ""); };
  if (&desc == &GetHpkeSuiteDesc(HpkeSuite::kP256Sha256Aes128Gcm)) {
    static const absl::StatusOr<SecretData>* const p256 =
        new absl::StatusOr<SecretData>(compute());
    return *p256;
  }
  if (&desc == &GetHpkeSuiteDesc(HpkeSuite::kSm2Sm3Sm4Gcm)) {
    static const absl::StatusOr<SecretData>* const sm = new absl::StatusOr<SecretData>(compute());
    return *sm;
  }
  return compute();  // a descriptor made elsewhere (tests)
}

}  // namespace

absl::StatusOr<HpkeKeySchedule> KeyScheduleBase(const HpkeSuiteDesc& desc,
                                                absl::string_view shared_secret,
                                                absl::string_view info, bool with_exporter) {
  const HpkeKdf& kdf = *desc.kdf;
  const std::string suite_id = HpkeSuiteId(desc);
  SMCRYPT_ASSIGN_OR_RETURN(SecretData psk_id_hash, PskIdHash(desc, suite_id));
  SMCRYPT_ASSIGN_OR_RETURN(SecretData info_hash,
                           LabeledExtract(kdf, suite_id, "", "info_hash", info));
  HpkeKeySchedule ks;
  ks.key_schedule_context.push_back(static_cast<char>(kModeBase));
  ks.key_schedule_context.append(psk_id_hash.begin(), psk_id_hash.end());
  ks.key_schedule_context.append(info_hash.begin(), info_hash.end());
  SMCRYPT_ASSIGN_OR_RETURN(ks.secret, LabeledExtract(kdf, suite_id, shared_secret, "secret", ""));
  SMCRYPT_ASSIGN_OR_RETURN(ks.key, LabeledExpand(kdf, suite_id, View(ks.secret), "key",
                                                 ks.key_schedule_context, desc.aead->nk));
  SMCRYPT_ASSIGN_OR_RETURN(ks.base_nonce,
                           LabeledExpand(kdf, suite_id, View(ks.secret), "base_nonce",
                                         ks.key_schedule_context, desc.aead->nn));
  if (with_exporter) {
    SMCRYPT_ASSIGN_OR_RETURN(ks.exporter_secret,
                             LabeledExpand(kdf, suite_id, View(ks.secret), "exp",
                                           ks.key_schedule_context, kdf.nh));
  }
  return ks;
}

namespace {

// HmacMany computes HMAC-SM3(*keys[i], msgs[i]) of every i into one buffer (32 bytes
// each), the messages in SM3 lanes (internal::HmacSm3Batch).
SecretData HmacMany(const std::vector<const HmacSm3*>& keys, const std::vector<SecretData>& msgs) {
  std::vector<absl::string_view> views;
  views.reserve(msgs.size());
  for (const SecretData& m : msgs) views.push_back(View(m));
  SecretData out(kSm3DigestSize * msgs.size());
  internal::HmacSm3Batch(keys.data(), views.data(), views.size(), out.data());
  return out;
}

absl::string_view Slice(const SecretData& buf, size_t i, size_t len = kSm3DigestSize) {
  return View(buf).substr(kSm3DigestSize * i, len);
}

// Keys makes an HMAC-SM3 key (midstates) of each 32-byte slice of `buf`.
absl::Status Keys(const SecretData& buf, size_t count,
                  std::vector<std::unique_ptr<HmacSm3>>* keys) {
  keys->clear();
  keys->reserve(count);
  for (size_t i = 0; i < count; ++i) {
    SMCRYPT_ASSIGN_OR_RETURN(std::unique_ptr<HmacSm3> k, HmacSm3::New(Slice(buf, i)));
    keys->push_back(std::move(k));
  }
  return absl::OkStatus();
}

std::string U16(uint16_t v) {
  std::string s;
  AppendU16(&s, v);
  return s;
}

}  // namespace

absl::Status EncapKeyScheduleManyHkdfSm3(const HpkeSuiteDesc& desc,
                                         absl::Span<const absl::string_view> dh,
                                         absl::Span<const absl::string_view> kem_context,
                                         absl::Span<const absl::string_view> info,
                                         absl::Span<HpkeKeySchedule> out) {
  const size_t m = out.size();
  if (desc.kdf != &kHpkeKdfHkdfSm3Desc || desc.kem->kdf != &kHpkeKdfHkdfSm3Desc ||
      desc.kem->nsecret != kSm3DigestSize || desc.aead->nk > kSm3DigestSize ||
      desc.aead->nn > kSm3DigestSize || dh.size() != m || kem_context.size() != m ||
      info.size() != m) {
    return absl::InternalError("EncapKeyScheduleManyHkdfSm3: not an HKDF-SM3 suite or sizes differ");
  }
  if (m == 0) return absl::OkStatus();
  const std::string kem_id = KemSuiteId(*desc.kem);
  const std::string suite_id = HpkeSuiteId(desc);
  // RFC 5869 §2.2: no salt means Nh zero bytes; the key's midstates are computed once.
  static const HmacSm3* const zero = [] {
    static constexpr char kZeroSalt[kSm3DigestSize] = {};
    absl::StatusOr<std::unique_ptr<HmacSm3>> k =
        HmacSm3::New(absl::string_view(kZeroSalt, sizeof(kZeroSalt)));
    return k.ok() ? k->release() : nullptr;  // a 32-byte key cannot be refused
  }();
  if (zero == nullptr) return absl::InternalError("HMAC-SM3 refused the zero salt");
  // 1. Extracts under the zero salt: eae_prk (§4.1 ExtractAndExpand), info_hash and
  //    psk_id_hash (§5.1; psk_id is empty in mode_base).
  std::vector<SecretData> msgs;
  msgs.reserve(2 * m + 1);
  for (size_t i = 0; i < m; ++i) msgs.push_back(Concat({kVersionLabel, kem_id, "eae_prk", dh[i]}));
  for (size_t i = 0; i < m; ++i) {
    msgs.push_back(Concat({kVersionLabel, suite_id, "info_hash", info[i]}));
  }
  msgs.push_back(Concat({kVersionLabel, suite_id, "psk_id_hash", ""}));
  const SecretData extracted = HmacMany(std::vector<const HmacSm3*>(msgs.size(), zero), msgs);
  // 2. shared_secret = LabeledExpand(eae_prk, "shared_secret", kem_context, Nsecret).
  std::vector<std::unique_ptr<HmacSm3>> keys;
  SMCRYPT_RETURN_IF_ERROR(Keys(extracted, m, &keys));
  std::vector<const HmacSm3*> kp;
  for (const auto& k : keys) kp.push_back(k.get());
  msgs.clear();
  for (size_t i = 0; i < m; ++i) {
    msgs.push_back(Concat({U16(static_cast<uint16_t>(desc.kem->nsecret)), kVersionLabel, kem_id,
                           "shared_secret", kem_context[i], "\x01"}));
  }
  const SecretData shared_secret = HmacMany(kp, msgs);
  // 3. secret = LabeledExtract(shared_secret, "secret", psk = "").
  SMCRYPT_RETURN_IF_ERROR(Keys(shared_secret, m, &keys));
  kp.clear();
  for (const auto& k : keys) kp.push_back(k.get());
  msgs.assign(m, Concat({kVersionLabel, suite_id, "secret", ""}));
  const SecretData secret = HmacMany(kp, msgs);
  // 4. key and base_nonce = LabeledExpand(secret, "key" / "base_nonce",
  //    key_schedule_context, Nk / Nn): one HMAC block each, as Nk, Nn ≤ Nh.
  SMCRYPT_RETURN_IF_ERROR(Keys(secret, m, &keys));
  kp.clear();
  msgs.clear();
  for (size_t i = 0; i < m; ++i) {
    HpkeKeySchedule& ks = out[i];
    ks.key_schedule_context.assign(1, static_cast<char>(kModeBase));
    ks.key_schedule_context.append(Slice(extracted, 2 * m).data(), kSm3DigestSize);
    ks.key_schedule_context.append(Slice(extracted, m + i).data(), kSm3DigestSize);
    ks.secret = SecretDataFromStringView(Slice(secret, i));
    ks.exporter_secret.clear();
    msgs.push_back(Concat({U16(static_cast<uint16_t>(desc.aead->nk)), kVersionLabel, suite_id,
                           "key", ks.key_schedule_context, "\x01"}));
    msgs.push_back(Concat({U16(static_cast<uint16_t>(desc.aead->nn)), kVersionLabel, suite_id,
                           "base_nonce", ks.key_schedule_context, "\x01"}));
    kp.push_back(keys[i].get());
    kp.push_back(keys[i].get());
  }
  const SecretData expanded = HmacMany(kp, msgs);
  for (size_t i = 0; i < m; ++i) {
    out[i].key = SecretDataFromStringView(Slice(expanded, 2 * i, desc.aead->nk));
    out[i].base_nonce = SecretDataFromStringView(Slice(expanded, 2 * i + 1, desc.aead->nn));
  }
  return absl::OkStatus();
}

}  // namespace smcrypt::internal
