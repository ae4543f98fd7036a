// hpke_internal.h — the RFC 9180 framework behind smcrypt/hpke.h: small descriptors for
// a KEM, a KDF and an AEAD (ids, sizes, function pointers), and the generic code that
// every suite shares (LabeledExtract/LabeledExpand §4, DHKEM §4.1, DeriveKeyPair §7.1.3,
// the base-mode key schedule §5.1). Not part of the public API; tests include it to
// check intermediate values and the DeriveKeyPair rejection path.
#ifndef SMCRYPT_CRYPTO_HPKE_HPKE_INTERNAL_H_
#define SMCRYPT_CRYPTO_HPKE_HPKE_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "smcrypt/hpke.h"
#include "smcrypt/primitives/aead.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

namespace internal {

// HpkeKdf: a KDF (§7.2). extract(salt, ikm) returns Nh bytes (an empty salt means Nh zero
// bytes, RFC 5869 §2.2); expand(prk, info, L) returns L ≤ 255·Nh bytes.
struct HpkeKdf {
  uint16_t id;
  const char* name;
  size_t nh;
  absl::StatusOr<SecretData> (*extract)(absl::string_view salt, absl::string_view ikm);
  absl::StatusOr<SecretData> (*expand)(absl::string_view prk, absl::string_view info,
                                       size_t length);
};

// HpkeAead: an AEAD (§7.3) and a factory for a keyed instance (tag Nt bytes).
struct HpkeAead {
  uint16_t id;
  const char* name;
  size_t nk, nn, nt;
  absl::StatusOr<std::unique_ptr<Aead>> (*new_aead)(absl::string_view key);
};

// HpkeKem: a DHKEM (§4.1) over a prime-order curve with 32-byte scalars.
//   public_key(sk): SerializePublicKey(pk(sk)), Npk bytes; InvalidArgument for a scalar
//                   out of range.
//   dh(sk, pk):     x(sk·pk), Ndh = 32 bytes; validates pk (on the curve, not infinity).
//   sk_limit:       DeriveKeyPair keeps a candidate sk iff 0 < sk < sk_limit (32 bytes,
//                   big-endian): the order n for P-256, n − 1 for SM2.
struct HpkeKem {
  uint16_t id;
  const char* name;
  size_t nsecret, nenc, npk, nsk;
  uint8_t bitmask;
  const uint8_t* sk_limit;
  const HpkeKdf* kdf;
  absl::StatusOr<std::string> (*public_key)(absl::string_view sk);
  absl::StatusOr<SecretData> (*dh)(absl::string_view sk, absl::string_view pk);
};

// HpkeSuiteDesc ties the three together.
struct HpkeSuiteDesc {
  HpkeSuite suite;
  const char* name;
  const HpkeKem* kem;
  const HpkeKdf* kdf;
  const HpkeAead* aead;
};

const HpkeSuiteDesc& GetHpkeSuiteDesc(HpkeSuite suite);

// The building blocks of the SM suite, exposed for the independent cross-checks.
extern const HpkeKdf kHpkeKdfHkdfSm3Desc;
extern const HpkeAead kHpkeAeadSm4GcmDesc;
extern const HpkeKem kHpkeKemSm2Desc;
extern const HpkeKem kHpkeKemP256Desc;

// KemSuiteId = "KEM" ‖ I2OSP(kem_id, 2) (§4.1); HpkeSuiteId = "HPKE" ‖ kem ‖ kdf ‖ aead (§5.1).
std::string KemSuiteId(const HpkeKem& kem);
std::string HpkeSuiteId(const HpkeSuiteDesc& desc);

// LabeledExtract / LabeledExpand (§4) with the version label "HPKE-v1".
absl::StatusOr<SecretData> LabeledExtract(const HpkeKdf& kdf, absl::string_view suite_id,
                                          absl::string_view salt, absl::string_view label,
                                          absl::string_view ikm);
absl::StatusOr<SecretData> LabeledExpand(const HpkeKdf& kdf, absl::string_view suite_id,
                                         absl::string_view prk, absl::string_view label,
                                         absl::string_view info, size_t length);

// HpkeScalarInRange returns true iff 0 < sk < kem.sk_limit (sk: Nsk bytes, big-endian),
// computed without branches on sk's bytes.
bool HpkeScalarInRange(const HpkeKem& kem, const uint8_t* sk);

// DeriveKeyPairFromCandidates is the loop of §7.1.3 over a candidate source: candidate
// `counter` (0, 1, …, 255) is Nsk bytes; its first byte is masked with kem.bitmask and it
// is kept if HpkeScalarInRange. `*attempts` (if set) receives the number of candidates
// drawn. Errors: Internal "DeriveKeyPairError" after 256 rejections; the source's errors.
using HpkeCandidateSource = absl::FunctionRef<absl::StatusOr<SecretData>(uint8_t counter)>;
absl::StatusOr<HpkeKeyPair> DeriveKeyPairFromCandidates(const HpkeKem& kem,
                                                        HpkeCandidateSource candidate,
                                                        int* attempts = nullptr);
// DeriveKeyPair (§7.1.3): candidates LabeledExpand(dkp_prk, "candidate", I2OSP(c, 1), Nsk).
absl::StatusOr<HpkeKeyPair> DeriveKeyPair(const HpkeKem& kem, absl::string_view ikm);

// ExtractAndExpand (§4.1): shared_secret from dh and kem_context.
absl::StatusOr<SecretData> ExtractAndExpand(const HpkeKem& kem, absl::string_view dh,
                                            absl::string_view kem_context);

// Encap with a given ephemeral key pair (§4.1 Encap after GenerateKeyPair), and Decap
// with the recipient's public key pkRm already known.
struct HpkeEncapResult {
  SecretData shared_secret;
  std::string enc;
};
absl::StatusOr<HpkeEncapResult> EncapWithEphemeral(const HpkeKem& kem,
                                                   absl::string_view pk_r,
                                                   const HpkeKeyPair& ephemeral);
absl::StatusOr<SecretData> Decap(const HpkeKem& kem, absl::string_view enc,
                                 absl::string_view sk_r, absl::string_view pk_r);

// KeyScheduleBase (§5.1, mode_base, empty psk and psk_id): every intermediate; with
// `with_exporter` false, exporter_secret is left empty (one-shot messages never export,
// and Export then fails rather than using it).
struct HpkeKeySchedule {
  std::string key_schedule_context;
  SecretData secret;
  SecretData key;
  SecretData base_nonce;
  SecretData exporter_secret;
};
absl::StatusOr<HpkeKeySchedule> KeyScheduleBase(const HpkeSuiteDesc& desc,
                                                absl::string_view shared_secret,
                                                absl::string_view info,
                                                bool with_exporter = true);

// EncapKeyScheduleManyHkdfSm3 is ExtractAndExpand (§4.1, the shared_secret of Encap)
// followed by KeyScheduleBase (§5.1) for many messages of a suite whose KEM and KDF are
// HKDF-SM3: out[i] from dh[i] (Ndh bytes), kem_context[i] (enc ‖ pkRm) and info[i], with
// the HMAC-SM3 computations of all messages run together in SM3 lanes
// (internal::HmacSm3Batch). out[i] equals KeyScheduleBase's except that exporter_secret
// is left empty (one-shot encryption never exports). Spans of one length. Errors:
// Internal for a suite without HKDF-SM3 or spans of different lengths.
absl::Status EncapKeyScheduleManyHkdfSm3(const HpkeSuiteDesc& desc,
                                         absl::Span<const absl::string_view> dh,
                                         absl::Span<const absl::string_view> kem_context,
                                         absl::Span<const absl::string_view> info,
                                         absl::Span<HpkeKeySchedule> out);

// NewHpkeContext builds a context from a key schedule.
absl::StatusOr<std::unique_ptr<HpkeContext>> NewHpkeContext(const HpkeSuiteDesc& desc,
                                                            const HpkeKeySchedule& ks);

// NewHpkeContextFromDh is what Encap and Decap leave once DH is known (§4.1):
// shared_secret = ExtractAndExpand(dh, enc ‖ pk_r), then KeyScheduleBase with `info`
// (§5.1) and the context, for one message: no exporter_secret, so Export fails.
absl::StatusOr<std::unique_ptr<HpkeContext>> NewHpkeContextFromDh(const HpkeSuiteDesc& desc,
                                                                  absl::string_view dh,
                                                                  absl::string_view enc,
                                                                  absl::string_view pk_r,
                                                                  absl::string_view info);

// SetupBaseSWithEphemeral is SetupBaseS with the ephemeral key pair given (RFC 9180's
// test vectors fix it through ikmE). Production code passes a fresh random pair.
absl::StatusOr<HpkeContext::Sender> SetupBaseSWithEphemeral(HpkeSuite suite,
                                                            absl::string_view pk_r,
                                                            absl::string_view info,
                                                            const HpkeKeyPair& ephemeral);
// SetupBaseRWithPublicKey is SetupBaseR when the recipient's pkRm is already known.
absl::StatusOr<std::unique_ptr<HpkeContext>> SetupBaseRWithPublicKey(
    HpkeSuite suite, absl::string_view enc, absl::string_view sk_r, absl::string_view pk_r,
    absl::string_view info);

}  // namespace internal

// HpkeContextAccess lets tests place the sequence number near its limit.
struct HpkeContextAccess {
  static void SetSequenceNumber(HpkeContext& context, uint64_t seq) { context.seq_ = seq; }
};

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_HPKE_HPKE_INTERNAL_H_
