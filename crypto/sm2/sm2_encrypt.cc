// sm2_encrypt.cc — SM2 public-key encryption (GB/T 32918.4-2016): encryption (§6.1),
// decryption (§7.1); the SM3 key derivation function (§5.4.3) is Sm3Kdf of crypto/sm3
// (lane-parallel counter blocks, XOR fused).
//
// Constant-time review: k, d, the shared point (x2, y2), t and the plaintext never steer
// a branch or an index: C1 = [k]G by the back end's constant-time comb, [k]P_B by the
// constant-time comb over the recipient's cached table (or fixed windows), [d]C1 by
// fixed windows with complete additions (C1 is public); C3 is compared with CtMemEq;
// the all-zero test on t ORs every byte into one accumulator and only its final mask
// decides whether to draw a new k or to fail, as the standard requires (A5/B4).
//
// Empty messages: klen = 0 gives an empty t, and the all-zero test of A5/B4 does not
// apply (there is no derived key to be weak); C2 is empty and C3 = SM3(x2 ‖ y2).
// OpenSSL 3.0 refuses to encrypt or decrypt an empty message (pinned in
// tests/crypto/sm2/sm2_openssl_test.cc), so that case is checked against EC_POINT_mul
// and EVP SM3 instead (tests/crypto/sm2/sm2_contract_test.cc).
//
// Output formats: C1 ‖ C3 ‖ C2 (2016 standard), C1 ‖ C2 ‖ C3 (2010 draft), or DER
// SM2Cipher via Sm2CiphertextConvert. DER carries C1 as two INTEGERs, so `compress_c1`
// has no effect there.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/common/readable_count.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_point.h"
#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm3.h"

namespace smcrypt {
namespace {

using internal::Sm2Affine;
using internal::Sm2Jacobian;
using internal::Sm2Kernels;

absl::Status DecryptionFailed() { return absl::InvalidArgumentError("decryption failed"); }

// KdfXor sets out[i] = in[i] ⊕ t[i] for t = KDF(x2 ‖ y2, len) (§5.4.3: SM3 over Z ‖ ct,
// ct a 32-bit big-endian counter from 1), through Sm3Kdf, which runs the independent
// counter blocks in the lanes of the active multi-buffer SM3 back end and fuses the XOR.
// Returns a non-zero mask if t is all zero (len > 0), 0 if not or if len = 0; the
// caller tests it only as zero / non-zero, after the whole message is processed. `in`
// may equal `out`. len ≤ kMaxMessageSize keeps the 32-bit counter from wrapping.
uint64_t KdfXor(const uint8_t x2y2[64], const uint8_t* in, uint8_t* out, size_t len) {
  return Sm3Kdf(x2y2, 64, in, out, len);
}

void ComputeC3(const uint8_t x2y2[64], const uint8_t* m, size_t len, uint8_t c3[32]) {
  Sm3 h;
  h.Update(x2y2, 32);
  h.Update(m, len);
  h.Update(x2y2 + 32, 32);
  h.FinishTo(c3);
}

// SharedPoint writes x2 ‖ y2 of [scalar]P (affine, big-endian) by the constant-time
// fixed-window multiplication (decryption: P = C1, scalar = d). Returns ~0 at infinity.
uint64_t SharedPoint(const Sm2Kernels& kern, const Sm2Affine& p, const uint64_t scalar[4],
                     uint8_t x2y2[64]) {
  Sm2Jacobian j;
  Sm2Affine a;
  internal::ScalarMulPoint(kern, &j, p, scalar);
  const uint64_t inf = internal::PointToAffine(kern, &a, j);
  internal::FeToBytes(kern, x2y2, a.x);
  internal::FeToBytes(kern, x2y2 + 32, a.y);
  SecureZero(&j, sizeof(j));
  SecureZero(&a, sizeof(a));
  return inf;
}

constexpr uint64_t kMaxMessageSize = uint64_t{0xFFFFFFFF} * kSm3DigestSize;

}  // namespace

namespace internal {

bool Sm2EncryptFromEphemeral(const Sm2EphemeralDh& eph, absl::string_view message,
                             Sm2CiphertextFormat format, bool compress_c1, std::string* out) {
  if (format == Sm2CiphertextFormat::kDer) compress_c1 = false;
  const size_t c1_len = compress_c1 ? kSm2CompressedPointSize : kSm2PointSize;
  const size_t mlen = message.size();
  out->assign(c1_len + kSm2C3Size + mlen, '\0');
  uint8_t* c1 = BytePtr(&(*out)[0]);
  uint8_t* c3;
  uint8_t* c2;
  if (format == Sm2CiphertextFormat::kC1C2C3) {
    c2 = c1 + c1_len;
    c3 = c2 + mlen;
  } else {
    c3 = c1 + c1_len;
    c2 = c3 + kSm2C3Size;
  }
  // A5, A6: t = KDF(x2 ‖ y2, klen); C2 = M ⊕ t. An all-zero t means a new k.
  // Public: an all-zero t (probability 2^-8·klen) discards this k for a fresh one.
  const uint64_t t_zero = KdfXor(eph.shared, BytePtr(message.data()), c2, mlen);
  if (CtDeclassify(ValueBarrier(t_zero))) {
    SecureZero(out->data(), out->size());
    out->clear();
    return false;
  }
  // C1 = [k]G is public: it is the first part of the ciphertext (its encoding
  // branches on the parity of y1).
  std::memcpy(c1 + 1, eph.c1 + 1, kSm2ScalarSize);
  if (compress_c1) {
    c1[0] = static_cast<uint8_t>(0x02 | (eph.c1[kSm2PointSize - 1] & 1));
  } else {
    c1[0] = 0x04;
    std::memcpy(c1 + 1 + kSm2ScalarSize, eph.c1 + 1 + kSm2ScalarSize, kSm2ScalarSize);
  }
  ComputeC3(eph.shared, BytePtr(message.data()), mlen, c3);  // A7: C3 = SM3(x2 ‖ M ‖ y2)
  return true;
}

absl::Status CheckSm2MessageSize(size_t size) {
  if (size > kMaxMessageSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SM2 message: at most ", ReadableCount(kMaxMessageSize), " bytes, got ", size));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Sm2FinishCiphertext(std::string c1c3c2_or_c1c2c3,
                                                Sm2CiphertextFormat format) {
  if (format == Sm2CiphertextFormat::kDer) {
    return Sm2CiphertextConvert(c1c3c2_or_c1c2c3, Sm2CiphertextFormat::kC1C3C2,
                                Sm2CiphertextFormat::kDer);
  }
  return c1c3c2_or_c1c2c3;
}

absl::StatusOr<std::string> Sm2EncryptCore(const Sm2PublicKey& key, absl::string_view message,
                                           Sm2CiphertextFormat format, bool compress_c1,
                                           Sm2NonceSource next_k, const Sm2PointTable* table) {
  SMCRYPT_RETURN_IF_ERROR(CheckSm2MessageSize(message.size()));
  std::string out;
  for (;;) {
    // A1–A4: k, C1 = [k]G and (x2, y2) = [k]P_B (h = 1, so S = [h]P_B is P_B itself,
    // which is not at infinity: validated), both affine with one inversion.
    internal::Sm2EphemeralDh eph;
    SMCRYPT_RETURN_IF_ERROR(Sm2EphemeralDhCore(key, table, next_k, absl::MakeSpan(&eph, 1)));
    if (Sm2EncryptFromEphemeral(eph, message, format, compress_c1, &out)) break;
  }
  return Sm2FinishCiphertext(std::move(out), format);
}

}  // namespace internal

absl::StatusOr<std::string> Sm2Encrypt(const Sm2PublicKey& key, absl::string_view message,
                                       Sm2CiphertextFormat format, bool compress_c1) {
  return internal::Sm2EncryptCore(key, message, format, compress_c1, internal::Sm2RandomNonce);
}

absl::StatusOr<std::string> Sm2Decrypt(const Sm2PrivateKey& key, absl::string_view ciphertext,
                                       Sm2CiphertextFormat format) {
  std::string converted;
  if (format == Sm2CiphertextFormat::kDer) {
    SMCRYPT_ASSIGN_OR_RETURN(converted, Sm2CiphertextConvert(ciphertext, Sm2CiphertextFormat::kDer,
                                                             Sm2CiphertextFormat::kC1C3C2));
    ciphertext = converted;
    format = Sm2CiphertextFormat::kC1C3C2;
  }
  if (ciphertext.empty()) {
    return absl::InvalidArgumentError("SM2 ciphertext: empty");
  }
  // Some writers drop C1's 04 byte and send x1 ‖ y1 (64 bytes). Such an input is read
  // as unprefixed when x1 ‖ y1 there is a point on the curve: a prefixed C1 would pass
  // that check by chance with probability about 2^-256. C1 is public, so trying both
  // readings reveals nothing.
  std::string prefixed;
  if (ciphertext.size() >= 2 * kSm2ScalarSize + kSm2C3Size &&
      Sm2PublicKey::FromPoint(absl::StrCat("\x04", ciphertext.substr(0, 2 * kSm2ScalarSize)))
          .ok()) {
    prefixed = absl::StrCat("\x04", ciphertext);
    ciphertext = prefixed;
  }
  const uint8_t prefix = static_cast<uint8_t>(ciphertext[0]);
  size_t c1_len;
  if (prefix == 0x04) {
    c1_len = kSm2PointSize;
  } else if (prefix == 0x02 || prefix == 0x03) {
    c1_len = kSm2CompressedPointSize;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "SM2 ciphertext: bad C1 prefix byte 0x%02x (expected 0x02, 0x03 or 0x04)", prefix));
  }
  if (ciphertext.size() < c1_len + kSm2C3Size) {
    return absl::InvalidArgumentError(
        absl::StrCat("SM2 ciphertext: expected at least ", c1_len + kSm2C3Size, " bytes, got ",
                     ciphertext.size()));
  }
  const size_t mlen = ciphertext.size() - c1_len - kSm2C3Size;
  if (mlen > kMaxMessageSize) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SM2 ciphertext: C2 at most ", ReadableCount(kMaxMessageSize), " bytes, got ", mlen));
  }
  const uint8_t* c1 = BytePtr(ciphertext.data());
  const uint8_t* c2;
  const uint8_t* c3;
  if (format == Sm2CiphertextFormat::kC1C2C3) {
    c2 = c1 + c1_len;
    c3 = c2 + mlen;
  } else {
    c3 = c1 + c1_len;
    c2 = c3 + kSm2C3Size;
  }
  // B1: C1 must be a point on the curve; h = 1, so B2 (S = [h]C1 ≠ O) is implied.
  auto c1_point = internal::Sm2PointFromBytes(ciphertext.substr(0, c1_len), "SM2 ciphertext: C1");
  if (!c1_point.ok()) return c1_point.status();
  const Sm2Kernels& kern = internal::Sm2ActiveKernels();
  Sm2Affine c1a;
  internal::Sm2PublicKeyToAffine(kern, *c1_point, &c1a);
  uint64_t d[4];
  internal::LimbsFromBytes(d, Sm2PrivateKeyAccess::d(key).data());
  uint8_t x2y2[64];
  SharedPoint(kern, c1a, d, x2y2);  // B3: (x2, y2) = [d]C1
  SecureZero(d, sizeof(d));
  std::string m(mlen, '\0');
  // B4, B5: t = KDF(x2 ‖ y2, klen), M' = C2 ⊕ t.
  const uint64_t t_zero = KdfXor(x2y2, c2, BytePtr(&m[0]), mlen);
  // B6: u = SM3(x2 ‖ M' ‖ y2) must equal C3.
  uint8_t u[kSm2C3Size];
  ComputeC3(x2y2, BytePtr(m.data()), mlen, u);
  const bool c3_ok = CtMemEq(u, c3, kSm2C3Size);
  SecureZero(x2y2, sizeof(x2y2));
  SecureZero(u, sizeof(u));
  // Public: the verdict is the result returned to the caller (one generic error).
  if (CtDeclassify(t_zero | static_cast<uint64_t>(!c3_ok))) {
    SecureZero(&m[0], m.size());
    return DecryptionFailed();
  }
  return m;
}

}  // namespace smcrypt
