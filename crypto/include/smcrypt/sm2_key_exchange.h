// sm2_key_exchange.h — the SM2 key exchange protocol of GB/T 32918.3-2016 §6 (GM/T 0003.3)
// on sm2p256v1: two parties, each with a long-term SM2 key pair and a user ID, agree on a
// shared key K of klen bytes from one ephemeral key pair each, with optional key
// confirmation (S_B from B to A, S_A from A to B).
//
// The protocol (A is the initiator, B the responder; h = 1, w = 127):
//
//   A                                              B
//   r_A ∈ [1, n − 1], R_A = [r_A]G   ── R_A ──▶
//                                                  r_B ∈ [1, n − 1], R_B = [r_B]G
//                                                  t_B = (d_B + x̄_2·r_B) mod n
//                                                  V = [t_B](P_A + [x̄_1]R_A) ≠ O
//                                                  K_B = KDF(x_V ‖ y_V ‖ Z_A ‖ Z_B, klen)
//                                   ◀── R_B, (S_B) ──
//   t_A = (d_A + x̄_1·r_A) mod n
//   U = [t_A](P_B + [x̄_2]R_B) ≠ O
//   K_A = KDF(x_U ‖ y_U ‖ Z_A ‖ Z_B, klen)
//   check S_1 = S_B
//                                    ── (S_A) ──▶  check S_2 = S_A
//
// with (x_1, y_1) = R_A, (x_2, y_2) = R_B, x̄ = 2^127 + (x mod 2^127), Z_A and Z_B as in
// Sm2ComputeZ (smcrypt/sm2.h; Z_A is always the initiator's), KDF the SM3 KDF of
// GB/T 32918.3 §5.4.3 (32-bit big-endian counter from 1), and, writing
// H = SM3(x ‖ Z_A ‖ Z_B ‖ x_1 ‖ y_1 ‖ x_2 ‖ y_2) for (x, y) = U on A's side and V on B's:
//
//   S_B = S_1 = SM3(0x02 ‖ y ‖ H)    (B → A: B knows K)
//   S_A = S_2 = SM3(0x03 ‖ y ‖ H)    (A → B: A knows K)
//
// BouncyCastle's SM2KeyExchange (1.72) computes the same values: its responder's
// calculateKeyWithConfirmation returns { K, S_B, expected S_A } and its initiator's takes
// S_B and returns { K, S_A } (tests/interop/sm2_key_exchange_bc checks both directions).
//
// Usage: one Sm2KeyExchange per exchange and per party. Each party calls Start() and
// sends R; on receiving the peer's R (and, for the initiator with confirmation, S_B) it
// calls ComputeKey(); the responder with confirmation then calls ConfirmPeer(S_A), which
// releases the key. The object holds everything between the messages (its own copy of d,
// so the caller's key may be dropped or reloaded), so the party that runs it (one
// bidirectional stream, say) keeps nothing else; it is movable (the moved-from object is
// ended), not copyable, and not thread-safe (one caller at a time). A call that fails with
// InvalidArgument or Unauthenticated ends the exchange: the secrets are wiped and every
// later call returns FailedPrecondition. A call out of order (FailedPrecondition) changes
// nothing.
//
// Errors (absl::Status codes):
//   InvalidArgument   bad parameters to New (key size out of range, an ID over 8191
//                     bytes);
//                     a received R that is not a valid point ("SM2 key exchange: peer R:
//                     point not on the curve", "... point at infinity", "... expected 65
//                     (uncompressed) or 33 (compressed) bytes, got N"); a confirmation
//                     value of the wrong length; U or V the point at infinity.
//   Unauthenticated   key confirmation failed: "SM2 key exchange: key confirmation
//                     failed: S_B does not match" (initiator) or "... S_A does not match"
//                     (responder), as Sm2VerifyDigest reports a bad signature. No key is
//                     returned.
//   FailedPrecondition  a call out of order (ComputeKey before Start, a second Start,
//                     ConfirmPeer without confirmation or before ComputeKey), or any
//                     call after the exchange finished or failed.
//
// Constant time: r, t = (d + x̄·r) mod n, U/V, K and the confirmation hashes are handled
// in time independent of their values (masked scalar arithmetic mod n, the constant-time
// comb for [r]G and the fixed-window ScalarMulPoint for [t]Q, constant-time comparison of
// S). Received points are public and validated with data-dependent branches. The key
// length and the IDs are public. The ephemeral scalar is kept in SecretData and wiped when
// the exchange finishes, fails or is destroyed.
//
// WARNING: without key confirmation, neither party learns whether the other derived the
// same K (GB/T 32918.3 §6.2 makes confirmation optional); use K only through a protocol
// that authenticates it (an AEAD whose first message the peer must open). Never reuse an
// Sm2KeyExchange for a second exchange: a fresh object draws a fresh r.
#ifndef SMCRYPT_SM2_KEY_EXCHANGE_H_
#define SMCRYPT_SM2_KEY_EXCHANGE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"
#include "smcrypt/sm2.h"

namespace smcrypt {

// kSm2KeyExchangeMaxKeySize bounds klen (bytes). The standard allows any klen below the
// KDF's counter range (about 2^37 bytes); 64 KiB is far above any key's size and keeps
// one request from costing more than about 2,000 SM3 compressions.
inline constexpr size_t kSm2KeyExchangeMaxKeySize = 65536;
// kSm2KeyExchangeConfirmationSize is the size of S_A and S_B (one SM3 digest).
inline constexpr size_t kSm2KeyExchangeConfirmationSize = 32;

// Sm2KeyExchangeRole: A starts the exchange (GB/T 32918.3 §6.1 "user A"), B answers it.
enum class Sm2KeyExchangeRole { kInitiator, kResponder };

// Sm2KeyExchangeParams are one party's inputs.
struct Sm2KeyExchangeParams {
  Sm2KeyExchangeRole role = Sm2KeyExchangeRole::kInitiator;
  // Own user ID and the peer's (0 to 8191 bytes each; GM/T 0009's default is
  // kSm2DefaultUserId). ENTL is the 16-bit bit length.
  std::string own_id;
  std::string peer_id;
  // klen in bytes, 1 to kSm2KeyExchangeMaxKeySize.
  size_t key_size = 16;
  // Whether S_B and S_A are exchanged (§6.1 B9, A9, A10, B10). Both parties must agree.
  bool confirmation = true;
};

// Sm2KeyExchangeOutput is what ComputeKey returns.
struct Sm2KeyExchangeOutput {
  // K (key_size bytes). Empty for the responder with confirmation, which gets K from
  // ConfirmPeer once S_A has been checked.
  SecretData key;
  // The confirmation value to send to the peer: S_A (initiator) or S_B (responder), 32
  // bytes; empty without confirmation.
  std::string confirmation;
};

class Sm2KeyExchange {
 public:
  // New checks the parameters and computes Z_A and Z_B. `own_key` is d with its public
  // key P = dG (copied; the caller's object may die). Errors: InvalidArgument "SM2 key
  // exchange: key size must be 1 to 65536 bytes, got N", "SM2 key exchange: own ID: SM2
  // user ID: at most 8191 bytes, got N" (or "peer ID: ...").
  static absl::StatusOr<Sm2KeyExchange> New(const Sm2PrivateKey& own_key,
                                            const Sm2PublicKey& peer_key,
                                            const Sm2KeyExchangeParams& params);

  Sm2KeyExchange(Sm2KeyExchange&&) noexcept;
  Sm2KeyExchange& operator=(Sm2KeyExchange&&) noexcept;
  Sm2KeyExchange(const Sm2KeyExchange&) = delete;
  Sm2KeyExchange& operator=(const Sm2KeyExchange&) = delete;
  ~Sm2KeyExchange();

  // Start draws r uniformly from [1, n − 1] with the CSPRNG and returns R = [r]G as a
  // 65-byte uncompressed point (§6.1 A1–A3 / B1–B3), to send to the peer. Once only.
  absl::StatusOr<std::string> Start();

  // ComputeKey takes the peer's R (65-byte uncompressed or 33-byte compressed point) and,
  // for the initiator with confirmation, S_B (32 bytes; must be empty otherwise) and
  // computes K (§6.1 A4–A10 / B4–B9). The initiator with confirmation gets K only when
  // S_B matches (else Unauthenticated). See the errors above. After Start, once only.
  absl::StatusOr<Sm2KeyExchangeOutput> ComputeKey(absl::string_view peer_ephemeral,
                                                  absl::string_view peer_confirmation = {});

  // ConfirmPeer (responder with confirmation only, after ComputeKey) checks S_A (32
  // bytes; §6.1 B10) and returns K. Errors: Unauthenticated "SM2 key exchange: key
  // confirmation failed: S_A does not match", InvalidArgument for a wrong length,
  // FailedPrecondition out of order.
  absl::StatusOr<SecretData> ConfirmPeer(absl::string_view peer_confirmation);

  const Sm2KeyExchangeParams& params() const { return params_; }

 private:
  friend struct Sm2KeyExchangeAccess;  // crypto/sm2/sm2_internal.h
  enum class State { kNew, kStarted, kAwaitingConfirmation, kDone, kFailed };

  Sm2KeyExchange(const Sm2PrivateKey& own_key, const Sm2PublicKey& peer_key,
                 const Sm2KeyExchangeParams& params);
  // StartWithScalar is Start with r given as plain little-endian limbs (wiped here);
  // InvalidArgument when r ∉ [1, n − 1].
  absl::StatusOr<std::string> StartWithScalar(uint64_t r[4]);
  void Fail();

  State state_ = State::kNew;
  Sm2KeyExchangeParams params_;
  SecretData d_;                      // own d, 32 bytes big-endian
  Sm2PublicKey peer_key_;             // P of the peer
  uint8_t z_a_[32] = {}, z_b_[32] = {};
  SecretData r_;                      // own r, 32 bytes big-endian (empty before Start)
  std::string own_r_;                 // own R, 65 bytes
  SecretData key_;                    // K, held by a responder awaiting S_A
  uint8_t expected_s_a_[kSm2KeyExchangeConfirmationSize] = {};  // responder: S_2
};

}  // namespace smcrypt

#endif  // SMCRYPT_SM2_KEY_EXCHANGE_H_
