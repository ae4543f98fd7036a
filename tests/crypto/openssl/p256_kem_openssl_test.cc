// p256_kem_openssl_test.cc — the kept DHKEM(P-256) keys of p256_kem_openssl.h: Encap's
// ephemeral DH against the recipient's and against the independent P256Dh path, the
// validation of every peer point (the decoding is the check), and one key object shared
// by several threads, beside a second key that must not be confused with it.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "crypto/common/status_macros.h"
#include "crypto/openssl/ecdh_p256_openssl.h"
#include "crypto/openssl/hkdf_openssl.h"
#include "crypto/openssl/p256_kem_openssl.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

// The field prime p of P-256 (SEC 2 §2.4.2), big-endian.
const std::string& P256Prime() {
  static const std::string p(
      "\xFF\xFF\xFF\xFF\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"
      "\x00\x00\x00\x00\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF",
      32);
  return p;
}

// Sub returns a − b for 32-byte big-endian a ≥ b.
std::string Sub(const std::string& a, const std::string& b) {
  std::string out(32, '\0');
  int borrow = 0;
  for (int i = 31; i >= 0; --i) {
    int d = static_cast<uint8_t>(a[i]) - static_cast<uint8_t>(b[i]) - borrow;
    borrow = d < 0;
    out[i] = static_cast<char>(d & 0xff);
  }
  return out;
}

struct Recipient {
  SecretData sk;
  std::unique_ptr<const P256KemPrivateKey> priv;
  std::unique_ptr<const P256KemPublicKey> pub;
};

absl::StatusOr<Recipient> NewRecipient() {
  Recipient r;
  SMCRYPT_ASSIGN_OR_RETURN(auto ecdh, EcdhP256OpenSsl::Generate());
  SMCRYPT_ASSIGN_OR_RETURN(r.sk, ecdh->PrivateScalar());
  SMCRYPT_ASSIGN_OR_RETURN(r.priv, P256KemPrivateKey::New(SecretDataAsStringView(r.sk)));
  SMCRYPT_ASSIGN_OR_RETURN(r.pub, P256KemPublicKey::New(r.priv->public_point()));
  if (r.priv->public_point() != ecdh->public_point()) {
    return absl::InternalError("public point differs from OpenSSL's");
  }
  return r;
}

TEST(P256KemKeyTest, EphemeralDhMatchesTheRecipientAndTheIndependentPath) {
  ASSERT_OK_AND_ASSIGN(Recipient r, NewRecipient());
  std::string last_enc;
  for (int i = 0; i < 20; ++i) {
    std::string enc;
    SecretData dh;
    ASSERT_OK(r.pub->EphemeralDh(&enc, &dh));
    ASSERT_EQ(enc.size(), 65u);
    EXPECT_EQ(enc[0], 0x04);
    EXPECT_NE(enc, last_enc);  // a fresh ephemeral key per call
    last_enc = enc;
    ASSERT_EQ(dh.size(), 32u);
    ASSERT_OK_AND_ASSIGN(SecretData back, r.priv->Dh(enc));
    EXPECT_EQ(back, dh);
    // P256Dh parses both keys from scratch and validates the peer fully.
    ASSERT_OK_AND_ASSIGN(SecretData independent, P256Dh(SecretDataAsStringView(r.sk), enc));
    EXPECT_EQ(independent, dh);
  }
}

TEST(P256KemKeyTest, EveryInvalidPeerPointIsRefused) {
  ASSERT_OK_AND_ASSIGN(Recipient r, NewRecipient());
  const std::string q = r.priv->public_point();
  const std::string x = q.substr(1, 32), y = q.substr(33, 32);
  const std::string not_on_curve = "EC P-256 public key: not a valid point on the curve";
  struct Bad {
    const char* what;
    std::string point;
    std::string error;
  };
  std::string flipped_y = q;
  flipped_y[64] ^= 1;
  const std::vector<Bad> bad = {
      {"empty", "", "expected a 65-byte uncompressed point"},
      {"infinity (SEC 1 single zero byte)", std::string(1, '\0'), "expected a 65-byte"},
      {"64 bytes", q.substr(0, 64), "got 64 bytes"},
      {"66 bytes", q + "x", "got 66 bytes"},
      {"compressed form", std::string("\x02") + x, "got 33 bytes"},
      {"prefix 0x02 on 65 bytes", std::string("\x02") + x + y, "expected a 65-byte"},
      {"prefix 0x00", std::string(1, '\0') + x + y, "expected a 65-byte"},
      {"y with one bit flipped", flipped_y, not_on_curve},
      {"x = y = 0", std::string("\x04") + std::string(64, '\0'), not_on_curve},
      {"x = p", std::string("\x04") + P256Prime() + y, not_on_curve},
      {"y + p does not fit, y = p", std::string("\x04") + x + P256Prime(), not_on_curve},
      {"all ones", std::string("\x04") + std::string(64, '\xff'), not_on_curve},
  };
  for (const Bad& b : bad) {
    EXPECT_THAT(r.priv->Dh(b.point),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(b.error)))
        << b.what;
    EXPECT_THAT(P256KemPublicKey::New(b.point), StatusIs(absl::StatusCode::kInvalidArgument))
        << b.what;
  }
  // −Q = (x, p − y) is valid, and x(d·(−Q)) = x(d·Q): validation refuses no valid point.
  ASSERT_OK_AND_ASSIGN(SecretData dh, r.priv->Dh(q));
  ASSERT_OK_AND_ASSIGN(SecretData dh_neg, r.priv->Dh(std::string("\x04") + x + Sub(P256Prime(), y)));
  EXPECT_EQ(dh_neg, dh);
  // Private scalars out of range.
  EXPECT_THAT(P256KemPrivateKey::New(std::string(32, '\0')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(P256KemPrivateKey::New(std::string(32, '\xff')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(P256KemPrivateKey::New(std::string(31, '\x01')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected 32 bytes")));
}

TEST(P256KemKeyTest, SharedKeysFromManyThreadsAndAnotherKeyIsNotConfused) {
  ASSERT_OK_AND_ASSIGN(Recipient a, NewRecipient());
  ASSERT_OK_AND_ASSIGN(Recipient b, NewRecipient());
  constexpr int kThreads = 6;
  constexpr int kIterations = 60;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Even threads seal to a, odd ones to b; each opens with both recipients.
      const Recipient& to = t % 2 == 0 ? a : b;
      const Recipient& other = t % 2 == 0 ? b : a;
      for (int i = 0; i < kIterations; ++i) {
        std::string enc;
        SecretData dh;
        if (!to.pub->EphemeralDh(&enc, &dh).ok()) {
          ++failures;
          continue;
        }
        absl::StatusOr<SecretData> mine = to.priv->Dh(enc);
        absl::StatusOr<SecretData> theirs = other.priv->Dh(enc);
        if (!mine.ok() || *mine != dh || !theirs.ok() || *theirs == dh) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace smcrypt
