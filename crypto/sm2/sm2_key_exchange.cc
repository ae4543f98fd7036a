// sm2_key_exchange.cc — the SM2 key exchange protocol (GB/T 32918.3-2016 §6.1) on
// sm2p256v1; the contract is in smcrypt/sm2_key_exchange.h.
//
// Constant-time review: [r]G is the back end's constant-time comb (ScalarMulBase); t =
// (d + x̄·r) mod n uses the masked scalar arithmetic of sm2_field.h (x̄ comes from the
// public R); Q = P_peer + [x̄_peer]R_peer involves public points only but is computed with
// the same constant-time routines; U = [t]Q is ScalarMulPoint (fixed signed windows,
// masked table reads); the affine conversion is the constant-time safegcd inversion; the
// KDF and SM3 are constant time in their data; S is compared with CtMemEq. The branches
// on secrets are on failure verdicts only (U = O, which needs t = 0 for a valid Q, and a
// confirmation mismatch), each declassified with a comment; a failure ends the exchange.
#include "smcrypt/sm2_key_exchange.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_point.h"
#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm3.h"

namespace smcrypt {
namespace {

using internal::Sm2Affine;
using internal::Sm2Jacobian;
using internal::Sm2Kernels;

constexpr absl::string_view kPrefix = "SM2 key exchange: ";

absl::Status OutOfOrder(absl::string_view call, absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat(kPrefix, call, ": ", why));
}

// XBar sets r = x̄ = 2^w + (x mod 2^w) for w = ⌈⌈log2 n⌉/2⌉ − 1 = 127 (§6.1 A4/B3), from
// the 32-byte big-endian x coordinate: the low 127 bits of x and bit 127 set.
void XBar(uint64_t r[4], const uint8_t x[32]) {
  uint64_t limbs[4];
  internal::LimbsFromBytes(limbs, x);
  r[0] = limbs[0];
  r[1] = (limbs[1] & 0x7FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  r[2] = 0;
  r[3] = 0;
}

}  // namespace

Sm2KeyExchange::Sm2KeyExchange(const Sm2PrivateKey& own_key, const Sm2PublicKey& peer_key,
                               const Sm2KeyExchangeParams& params)
    : params_(params), d_(Sm2PrivateKeyAccess::d(own_key)), peer_key_(peer_key) {}

Sm2KeyExchange::Sm2KeyExchange(Sm2KeyExchange&& o) noexcept
    : state_(o.state_),
      params_(std::move(o.params_)),
      d_(std::move(o.d_)),
      peer_key_(o.peer_key_),
      r_(std::move(o.r_)),
      own_r_(std::move(o.own_r_)),
      key_(std::move(o.key_)) {
  std::memcpy(z_a_, o.z_a_, sizeof(z_a_));
  std::memcpy(z_b_, o.z_b_, sizeof(z_b_));
  std::memcpy(expected_s_a_, o.expected_s_a_, sizeof(expected_s_a_));
  o.Fail();
}

Sm2KeyExchange& Sm2KeyExchange::operator=(Sm2KeyExchange&& o) noexcept {
  if (this == &o) return *this;
  Fail();
  state_ = o.state_;
  params_ = std::move(o.params_);
  d_ = std::move(o.d_);
  peer_key_ = o.peer_key_;
  r_ = std::move(o.r_);
  own_r_ = std::move(o.own_r_);
  key_ = std::move(o.key_);
  std::memcpy(z_a_, o.z_a_, sizeof(z_a_));
  std::memcpy(z_b_, o.z_b_, sizeof(z_b_));
  std::memcpy(expected_s_a_, o.expected_s_a_, sizeof(expected_s_a_));
  o.Fail();
  return *this;
}

Sm2KeyExchange::~Sm2KeyExchange() { Fail(); }

void Sm2KeyExchange::Fail() {
  state_ = State::kFailed;
  // SecretData wipes its storage when released.
  d_ = SecretData();
  r_ = SecretData();
  key_ = SecretData();
  SecureZero(expected_s_a_, sizeof(expected_s_a_));
}

absl::StatusOr<Sm2KeyExchange> Sm2KeyExchange::New(const Sm2PrivateKey& own_key,
                                                   const Sm2PublicKey& peer_key,
                                                   const Sm2KeyExchangeParams& params) {
  if (params.key_size < 1 || params.key_size > kSm2KeyExchangeMaxKeySize) {
    return absl::InvalidArgumentError(absl::StrCat(kPrefix, "key size must be 1 to ",
                                                   kSm2KeyExchangeMaxKeySize, " bytes, got ",
                                                   params.key_size));
  }
  absl::StatusOr<std::array<uint8_t, 32>> z_own =
      Sm2ComputeZ(own_key.public_key(), params.own_id);
  if (!z_own.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPrefix, "own ID: ", z_own.status().message()));
  }
  absl::StatusOr<std::array<uint8_t, 32>> z_peer = Sm2ComputeZ(peer_key, params.peer_id);
  if (!z_peer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPrefix, "peer ID: ", z_peer.status().message()));
  }
  Sm2KeyExchange kx(own_key, peer_key, params);
  const bool initiator = params.role == Sm2KeyExchangeRole::kInitiator;
  std::memcpy(kx.z_a_, (initiator ? *z_own : *z_peer).data(), 32);
  std::memcpy(kx.z_b_, (initiator ? *z_peer : *z_own).data(), 32);
  kx.state_ = State::kNew;
  return kx;
}

absl::StatusOr<std::string> Sm2KeyExchange::Start() {
  uint64_t r[4];
  SMCRYPT_RETURN_IF_ERROR(internal::Sm2RandomNonce(r));
  return StartWithScalar(r);
}

absl::StatusOr<std::string> Sm2KeyExchange::StartWithScalar(uint64_t r[4]) {
  if (state_ != State::kNew) {
    SecureZero(r, 4 * sizeof(uint64_t));
    return OutOfOrder("Start", state_ == State::kFailed ? "the exchange has ended"
                                                        : "already started");
  }
  // Public: the CSPRNG source only yields r in range; a test scalar out of range is
  // rejected here.
  if (!CtDeclassify(internal::LtN(r) & ~internal::ScIsZero(r))) {
    SecureZero(r, 4 * sizeof(uint64_t));
    Fail();
    return absl::InvalidArgumentError(
        absl::StrCat(kPrefix, "ephemeral scalar r out of range [1, n-1]"));
  }
  const Sm2Kernels& kern = internal::Sm2ActiveKernels();
  Sm2Jacobian rj;
  internal::ScalarMulBase(kern, &rj, r);  // A2/B2: R = [r]G
  Sm2Affine ra;
  internal::PointToAffine(kern, &ra, rj);  // r ∈ [1, n − 1]: never infinity
  std::string point(kSm2PointSize, '\0');
  point[0] = 0x04;
  internal::FeToBytes(kern, BytePtr(&point[1]), ra.x);
  internal::FeToBytes(kern, BytePtr(&point[33]), ra.y);
  r_.assign(kSm2ScalarSize, 0);
  internal::LimbsToBytes(r_.data(), r);
  SecureZero(r, 4 * sizeof(uint64_t));
  SecureZero(&rj, sizeof(rj));
  own_r_ = point;
  state_ = State::kStarted;
  return point;
}

absl::StatusOr<Sm2KeyExchangeOutput> Sm2KeyExchange::ComputeKey(
    absl::string_view peer_ephemeral, absl::string_view peer_confirmation) {
  if (state_ != State::kStarted) {
    return OutOfOrder("ComputeKey", state_ == State::kNew ? "Start has not been called"
                                                          : "the key has been computed or "
                                                            "the exchange has ended");
  }
  const bool initiator = params_.role == Sm2KeyExchangeRole::kInitiator;
  const bool expects_s_b = initiator && params_.confirmation;
  if (expects_s_b && peer_confirmation.size() != kSm2KeyExchangeConfirmationSize) {
    Fail();
    return absl::InvalidArgumentError(absl::StrCat(
        kPrefix, "S_B: expected ", kSm2KeyExchangeConfirmationSize, " bytes, got ",
        peer_confirmation.size()));
  }
  if (!expects_s_b && !peer_confirmation.empty()) {
    Fail();
    return absl::InvalidArgumentError(absl::StrCat(
        kPrefix, initiator ? "S_B given, but confirmation is off"
                           : "the responder receives no confirmation value in ComputeKey "
                             "(S_A goes to ConfirmPeer)"));
  }
  // A6/B4 (GB/T 32918.1 §6.2.1 validation of the received point): public data.
  if (peer_ephemeral.size() == 1 && peer_ephemeral[0] == '\0') {
    Fail();
    return absl::InvalidArgumentError(absl::StrCat(kPrefix, "peer R: point at infinity"));
  }
  absl::StatusOr<Sm2PublicKey> peer_r =
      internal::Sm2PointFromBytes(peer_ephemeral, absl::StrCat(kPrefix, "peer R"));
  if (!peer_r.ok()) {
    Fail();
    return peer_r.status();
  }

  const Sm2Kernels& kern = internal::Sm2ActiveKernels();
  const uint8_t* own_x = BytePtr(own_r_.data() + 1);
  uint64_t d[4], r[4], xbar[4], xbar_peer[4], t[4];
  internal::LimbsFromBytes(d, d_.data());
  internal::LimbsFromBytes(r, r_.data());
  XBar(xbar, own_x);             // A4/B3: x̄ of own R (< 2^128 < n)
  XBar(xbar_peer, peer_r->x());  // A6/B5: x̄ of the peer's R
  // A5/B4: t = (d + x̄·r) mod n.
  internal::ScMul(t, xbar, r);
  internal::ScAdd(t, d, t);

  // A7/B5: U = [h·t](P_peer + [x̄_peer]R_peer), h = 1.
  Sm2Affine p_peer, r_peer, q_affine;
  internal::Sm2PublicKeyToAffine(kern, peer_key_, &p_peer);
  internal::Sm2PublicKeyToAffine(kern, *peer_r, &r_peer);
  Sm2Jacobian q;
  internal::ScalarMulPoint(kern, &q, r_peer, xbar_peer);
  internal::PointAddMixed(kern, &q, q, p_peer, 0);
  // Public: Q is computed from public values only.
  const uint64_t q_inf = internal::PointToAffine(kern, &q_affine, q);
  Sm2Jacobian u;
  internal::ScalarMulPoint(kern, &u, q_affine, t);
  Sm2Affine ua;
  const uint64_t u_inf = internal::PointToAffine(kern, &ua, u) | q_inf;
  // z = x_U ‖ y_U ‖ Z_A ‖ Z_B: the KDF input.
  uint8_t z[128];
  internal::FeToBytes(kern, z, ua.x);
  internal::FeToBytes(kern, z + 32, ua.y);
  std::memcpy(z + 64, z_a_, 32);
  std::memcpy(z + 96, z_b_, 32);
  SecureZero(d, sizeof(d));
  SecureZero(r, sizeof(r));
  SecureZero(t, sizeof(t));
  SecureZero(&u, sizeof(u));
  SecureZero(&ua, sizeof(ua));
  r_ = SecretData();
  // Public: U = O means the exchange fails (t = 0, probability 2^-256, or an invalid
  // combination of the peer's points); the branch reveals only that failure.
  if (CtDeclassify(u_inf)) {
    SecureZero(z, sizeof(z));
    Fail();
    return absl::InvalidArgumentError(
        absl::StrCat(kPrefix, initiator ? "U" : "V", " is the point at infinity"));
  }

  // A8/B6: K = KDF(x_U ‖ y_U ‖ Z_A ‖ Z_B, klen).
  Sm2KeyExchangeOutput out;
  out.key.resize(params_.key_size);
  Sm3Kdf(z, sizeof(z), nullptr, out.key.data(), out.key.size());

  if (params_.confirmation) {
    // H = SM3(x_U ‖ Z_A ‖ Z_B ‖ x_1 ‖ y_1 ‖ x_2 ‖ y_2), (x_1, y_1) = R_A, (x_2, y_2) = R_B.
    // A received compressed R is hashed as its coordinates: the parsed point's.
    uint8_t peer_xy[64];
    std::memcpy(peer_xy, peer_r->x(), 32);
    std::memcpy(peer_xy + 32, peer_r->y(), 32);
    const uint8_t* own_xy = BytePtr(own_r_.data() + 1);
    const uint8_t* a_xy = initiator ? own_xy : peer_xy;
    const uint8_t* b_xy = initiator ? peer_xy : own_xy;
    uint8_t inner[32], s02[32], s03[32];
    Sm3 h;
    h.Update(z, 32);
    h.Update(z_a_, 32);
    h.Update(z_b_, 32);
    h.Update(a_xy, 64);
    h.Update(b_xy, 64);
    h.FinishTo(inner);
    const uint8_t tag02 = 0x02, tag03 = 0x03;
    Sm3 h2;  // S_B = S_1 = SM3(0x02 ‖ y_U ‖ H)
    h2.Update(&tag02, 1);
    h2.Update(z + 32, 32);
    h2.Update(inner, 32);
    h2.FinishTo(s02);
    Sm3 h3;  // S_A = S_2 = SM3(0x03 ‖ y_U ‖ H)
    h3.Update(&tag03, 1);
    h3.Update(z + 32, 32);
    h3.Update(inner, 32);
    h3.FinishTo(s03);
    SecureZero(inner, sizeof(inner));
    SecureZero(z, sizeof(z));
    if (initiator) {
      // A10: S_1 = S_B. Public: the verdict is the result returned to the caller.
      const bool match = CtDeclassify(CtMemEq(s02, peer_confirmation.data(), 32));
      SecureZero(s02, sizeof(s02));
      if (!match) {
        SecureZero(s03, sizeof(s03));
        Fail();
        return absl::UnauthenticatedError(
            absl::StrCat(kPrefix, "key confirmation failed: S_B does not match"));
      }
      out.confirmation.assign(reinterpret_cast<const char*>(s03), 32);  // S_A
      SecureZero(s03, sizeof(s03));
      d_ = SecretData();
      state_ = State::kDone;
      return out;
    }
    // B9: send S_B; keep S_2 and K until S_A arrives (B10).
    out.confirmation.assign(reinterpret_cast<const char*>(s02), 32);
    std::memcpy(expected_s_a_, s03, 32);
    SecureZero(s02, sizeof(s02));
    SecureZero(s03, sizeof(s03));
    key_ = std::move(out.key);
    out.key = SecretData();
    d_ = SecretData();
    state_ = State::kAwaitingConfirmation;
    return out;
  }
  SecureZero(z, sizeof(z));
  d_ = SecretData();
  state_ = State::kDone;
  return out;
}

absl::StatusOr<SecretData> Sm2KeyExchange::ConfirmPeer(absl::string_view peer_confirmation) {
  if (state_ != State::kAwaitingConfirmation) {
    if (!params_.confirmation || params_.role != Sm2KeyExchangeRole::kResponder) {
      return OutOfOrder("ConfirmPeer", "only a responder with confirmation receives S_A");
    }
    return OutOfOrder("ConfirmPeer", state_ == State::kNew || state_ == State::kStarted
                                         ? "ComputeKey has not been called"
                                         : "the exchange has ended");
  }
  if (peer_confirmation.size() != kSm2KeyExchangeConfirmationSize) {
    Fail();
    return absl::InvalidArgumentError(absl::StrCat(kPrefix, "S_A: expected ",
                                                   kSm2KeyExchangeConfirmationSize,
                                                   " bytes, got ", peer_confirmation.size()));
  }
  // B10: S_2 = S_A. Public: the verdict is the result returned to the caller.
  const bool match = CtDeclassify(CtMemEq(expected_s_a_, peer_confirmation.data(), 32));
  if (!match) {
    Fail();
    return absl::UnauthenticatedError(
        absl::StrCat(kPrefix, "key confirmation failed: S_A does not match"));
  }
  SecretData key = std::move(key_);
  Fail();  // wipes S_2; the exchange is over
  state_ = State::kDone;
  return key;
}

}  // namespace smcrypt
