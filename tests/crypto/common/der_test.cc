// der_test.cc — the strict DER reader/writer and the ECDSA signature conversions,
// checked by hand-written encodings, a bad-input table, and OpenSSL's ECDSA_SIG codec.
#include "crypto/common/der.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/objects.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/secret_data.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt::der {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

std::string Str(const SecretData& s) { return std::string(s.begin(), s.end()); }

// ---- Writer -------------------------------------------------------------------------

TEST(DerWriterTest, LengthForms) {
  struct Row {
    size_t len;
    const char* header_hex;
  };
  const Row rows[] = {{0, "0400"},         {1, "0401"},         {127, "047f"},
                      {128, "048180"},     {255, "0481ff"},     {256, "04820100"},
                      {65535, "0482ffff"}, {65536, "0483010000"}};
  for (const Row& row : rows) {
    Writer w;
    const std::string body(row.len, 'x');
    w.AddOctetString(body);
    const std::string der = std::move(w).Finish();
    const std::string header = HexToBytes(row.header_hex);
    ASSERT_EQ(der.size(), header.size() + row.len) << row.len;
    EXPECT_EQ(BytesToHex(der.substr(0, header.size())), row.header_hex) << row.len;
    Reader r(der);
    auto got = r.ReadOctetString();
    ASSERT_THAT(got, IsOk());
    EXPECT_EQ(got->size(), row.len);
    EXPECT_THAT(r.Done(), IsOk());
  }
}

TEST(DerWriterTest, NestedElementsGetTheirLengthsPatched) {
  Writer w;
  w.BeginSequence();
  w.AddSmallUnsigned(1);
  w.BeginExplicit(1);
  w.AddBitString(std::string(130, '\x01'));  // 131 content bytes: long-form lengths
  w.End();
  w.BeginSequence();
  w.End();
  w.AddNull();
  w.End();
  const std::string der = std::move(w).Finish();
  // 30 | len | 02 01 01 | a1 81 86 03 81 83 00 <130 x 01> | 30 00 | 05 00
  const std::string inner = HexToBytes("020101") + HexToBytes("a18186038183 00") +
                            std::string(130, '\x01') + HexToBytes("3000 0500");
  ASSERT_EQ(inner.size(), 3 + 7 + 130 + 4u);
  EXPECT_EQ(BytesToHex(der), BytesToHex(HexToBytes("308190") + inner));
}

TEST(DerWriterTest, UnsignedIntegersAreMinimal) {
  struct Row {
    const char* magnitude;
    const char* der;
  };
  const Row rows[] = {
      {"", "020100"},         {"00", "020100"},         {"0000", "020100"},
      {"01", "020101"},       {"7f", "02017f"},         {"80", "02020080"},
      {"00ff", "020200ff"},   {"000080", "02020080"},   {"0100", "02020100"},
      {"ffffffff", "020500ffffffff"},
  };
  for (const Row& row : rows) {
    Writer w;
    w.AddUnsignedInteger(HexToBytes(row.magnitude));
    EXPECT_EQ(BytesToHex(std::move(w).Finish()), row.der) << row.magnitude;
  }
  Writer w;
  w.AddSmallUnsigned(0);
  w.AddSmallUnsigned(128);
  w.AddSmallUnsigned(0x0102030405060708ull);
  EXPECT_EQ(BytesToHex(std::move(w).Finish()), "020100" "02020080" "02080102030405060708");
}

TEST(DerWriterTest, SecretOutputMatchesPublicOutput) {
  Writer a, b;
  for (Writer* w : {&a, &b}) {
    w->BeginSequence();
    w->AddOctetString("secret");
    w->End();
  }
  EXPECT_EQ(Str(std::move(a).FinishSecret()), std::move(b).Finish());
}

// ---- Reader -------------------------------------------------------------------------

TEST(DerReaderTest, ReadsAStructure) {
  // SEQUENCE { INTEGER 0x0080, OID 1.2.840.10045.2.1, NULL, [0] { OCTET STRING "ab" },
  //            BIT STRING 00 c0ff }
  const std::string der = HexToBytes(
      "301a"
      "02020080"
      "06072a8648ce3d0201"
      "0500"
      "a004" "04026162"
      "030300c0ff");
  Reader top(der);
  auto seq = top.ReadSequence();
  ASSERT_THAT(seq, IsOk());
  EXPECT_THAT(top.Done(), IsOk());
  uint8_t v[4];
  ASSERT_THAT(seq->ReadUnsignedInteger(v, 4), IsOk());
  EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(v), 4)), "00000080");
  auto oid = seq->ReadOid();
  ASSERT_THAT(oid, IsOk());
  EXPECT_EQ(*oid, kOidEcPublicKey);
  EXPECT_EQ(OidToString(*oid), "1.2.840.10045.2.1");
  EXPECT_THAT(seq->ReadNull(), IsOk());
  EXPECT_TRUE(seq->PeekTag(ContextConstructed(0)));
  auto absent = seq->ReadOptionalExplicit(1);
  ASSERT_THAT(absent, IsOk());
  EXPECT_FALSE(absent->has_value());
  auto ctx = seq->ReadOptionalExplicit(0);
  ASSERT_THAT(ctx, IsOk());
  ASSERT_TRUE(ctx->has_value());
  auto os = (*ctx)->ReadOctetString();
  ASSERT_THAT(os, IsOk());
  EXPECT_EQ(*os, "ab");
  EXPECT_THAT((*ctx)->Done(), IsOk());
  auto bits = seq->ReadBitStringBytes();
  ASSERT_THAT(bits, IsOk());
  EXPECT_EQ(BytesToHex(*bits), "c0ff");
  EXPECT_THAT(seq->Done(), IsOk());
}

TEST(DerReaderTest, IntegerValues) {
  struct Row {
    const char* der;
    const char* padded4;  // nullptr: error
  };
  const Row rows[] = {
      {"020100", "00000000"},   {"02017f", "0000007f"},     {"02020080", "00000080"},
      {"0202ff7f", nullptr},    {"020400ffffff", "00ffffff"}, {"020500ffffffff", "ffffffff"},
      {"02050100000000", nullptr},  // 2^32 does not fit 4 bytes
  };
  for (const Row& row : rows) {
    const std::string in = HexToBytes(row.der);
    Reader r(in);
    uint8_t v[4];
    absl::Status s = r.ReadUnsignedInteger(v, 4);
    if (row.padded4 == nullptr) {
      EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument)) << row.der;
    } else {
      ASSERT_THAT(s, IsOk()) << row.der;
      EXPECT_EQ(BytesToHex(std::string(reinterpret_cast<char*>(v), 4)), row.padded4);
    }
  }
  const std::string big_in = HexToBytes("02050100000000");
  Reader big(big_in);
  uint8_t v[4];
  EXPECT_THAT(big.ReadUnsignedInteger(v, 4),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("DER: INTEGER too large: 5 bytes, at most 4")));
  const std::string small_in = HexToBytes("020203e8");
  Reader small(small_in);
  auto n = small.ReadSmallUnsigned();
  ASSERT_THAT(n, IsOk());
  EXPECT_EQ(*n, 1000u);
  const std::string zero_in = HexToBytes("020100");
  Reader zero(zero_in);
  auto mag = zero.ReadUnsignedIntegerMagnitude();
  ASSERT_THAT(mag, IsOk());
  EXPECT_TRUE(mag->empty());
}

// One row per defect: the input, what is read, and the message the error must carry.
enum class Op { kSequenceDone, kInteger32, kOctetString, kBitString, kOid, kNull, kExplicit0 };

struct BadRow {
  const char* name;
  const char* hex;
  Op op;
  const char* message;
};

absl::Status RunBadRow(const BadRow& row) {
  const std::string in = HexToBytes(row.hex);
  Reader r(in);
  switch (row.op) {
    case Op::kSequenceDone: {
      auto seq = r.ReadSequence();
      if (!seq.ok()) return seq.status();
      while (!seq->empty()) {
        uint8_t tag;
        absl::string_view contents;
        absl::Status s = seq->ReadAny(&tag, &contents);
        if (!s.ok()) return s;
      }
      return r.Done();
    }
    case Op::kInteger32: {
      uint8_t v[32];
      absl::Status s = r.ReadUnsignedInteger(v, 32);
      if (!s.ok()) return s;
      return r.Done();
    }
    case Op::kOctetString: {
      auto v = r.ReadOctetString();
      if (!v.ok()) return v.status();
      return r.Done();
    }
    case Op::kBitString: {
      auto v = r.ReadBitStringBytes();
      if (!v.ok()) return v.status();
      return r.Done();
    }
    case Op::kOid: {
      auto v = r.ReadOid();
      if (!v.ok()) return v.status();
      return r.Done();
    }
    case Op::kNull: {
      absl::Status s = r.ReadNull();
      if (!s.ok()) return s;
      return r.Done();
    }
    case Op::kExplicit0: {
      auto v = r.ReadExplicit(0);
      if (!v.ok()) return v.status();
      return r.Done();
    }
  }
  return absl::InternalError("unreachable");
}

TEST(DerReaderTest, BadInputTable) {
  const BadRow rows[] = {
      {"trailing bytes after SEQUENCE", "3003020101" "00", Op::kSequenceDone,
       "DER: trailing bytes after SEQUENCE (1 bytes)"},
      {"trailing bytes after INTEGER", "02010100", Op::kInteger32,
       "DER: trailing bytes after INTEGER"},
      {"non-minimal long length", "0482000100", Op::kOctetString,
       "DER: non-minimal length (leading zero octet) in OCTET STRING"},
      {"long form for short length", "04810100", Op::kOctetString,
       "DER: long-form length 1 below 128 in OCTET STRING"},
      {"indefinite length", "30800201010000", Op::kSequenceDone,
       "DER: indefinite length in SEQUENCE"},
      {"non-minimal INTEGER 00 7f", "0202007f", Op::kInteger32, "DER: non-minimal INTEGER"},
      {"non-minimal INTEGER ff 80", "0202ff80", Op::kInteger32, "DER: non-minimal INTEGER"},
      {"non-minimal INTEGER 00 00", "02020000", Op::kInteger32, "DER: non-minimal INTEGER"},
      {"negative INTEGER", "020180", Op::kInteger32, "DER: negative INTEGER"},
      {"negative INTEGER -1", "0201ff", Op::kInteger32, "DER: negative INTEGER"},
      {"empty INTEGER", "0200", Op::kInteger32, "DER: empty INTEGER"},
      {"INTEGER ≥ 2^256", "022101" "0000000000000000000000000000000000000000000000000000000000000000",
       Op::kInteger32, "DER: INTEGER too large: 33 bytes, at most 32"},
      {"length beyond input", "040501020304", Op::kOctetString,
       "DER: length 5 of OCTET STRING exceeds the remaining 4 bytes of input"},
      {"length beyond SEQUENCE", "3004020501020304", Op::kSequenceDone,
       "DER: length 5 of INTEGER exceeds the remaining 2 bytes of SEQUENCE"},
      {"wrong tag", "0401ff", Op::kInteger32, "DER: expected INTEGER, got OCTET STRING"},
      {"wrong tag (primitive SEQUENCE)", "1000", Op::kSequenceDone,
       "DER: expected SEQUENCE, got tag 0x10"},
      {"empty input", "", Op::kInteger32, "DER: expected INTEGER, got end of input"},
      {"truncated header", "04", Op::kOctetString, "DER: truncated length after OCTET STRING"},
      {"truncated long length", "048201", Op::kOctetString,
       "DER: truncated length after OCTET STRING"},
      {"too many length octets", "04850100000000", Op::kOctetString,
       "DER: length of OCTET STRING too large (5 length octets)"},
      {"high tag number form", "3003" "1f2200", Op::kSequenceDone,
       "DER: high tag number form (identifier 0x1f) not supported"},
      {"BIT STRING with unused bits", "030204f0", Op::kBitString,
       "DER: BIT STRING with 4 unused bits, expected 0"},
      {"empty BIT STRING", "0300", Op::kBitString, "DER: empty BIT STRING"},
      {"NULL with contents", "050100", Op::kNull, "DER: NULL with 1 content bytes"},
      {"empty OID", "0600", Op::kOid, "DER: empty OBJECT IDENTIFIER"},
      {"non-minimal OID arc", "0603 2a8001", Op::kOid,
       "DER: non-minimal subidentifier in OBJECT IDENTIFIER"},
      {"truncated OID arc", "0602 2a86", Op::kOid,
       "DER: truncated subidentifier in OBJECT IDENTIFIER"},
      {"wrong explicit tag", "a1020500", Op::kExplicit0, "DER: expected [0], got [1]"},
  };
  for (const BadRow& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_THAT(RunBadRow(row), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(row.message)));
  }
}

TEST(DerReaderTest, TrailingElementInsideSequence) {
  const std::string in = HexToBytes("3006020101020102");
  Reader top(in);
  auto seq = top.ReadSequence();
  ASSERT_THAT(seq, IsOk());
  uint8_t v[1];
  ASSERT_THAT(seq->ReadUnsignedInteger(v, 1), IsOk());
  EXPECT_THAT(seq->Done(), StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("DER: trailing bytes after INTEGER in SEQUENCE")));
}

TEST(DerReaderTest, OidToString) {
  EXPECT_EQ(OidToString(kOidSm2p256v1), "1.2.156.10197.1.301");
  EXPECT_EQ(OidToString(kOidPrime256v1), "1.2.840.10045.3.1.7");
  EXPECT_EQ(OidToString(kOidSecp256k1), "1.3.132.0.10");
  EXPECT_EQ(OidToString(HexToBytes("8837")), "2.999");
  EXPECT_EQ(OidToString(HexToBytes("2a86")), "<malformed OID>");
  EXPECT_EQ(OidToString(""), "<malformed OID>");
  // The constants agree with OpenSSL's OID table.
  for (auto [nid, enc] : {std::pair{NID_X9_62_id_ecPublicKey, kOidEcPublicKey},
                          std::pair{NID_sm2, kOidSm2p256v1},
                          std::pair{NID_X9_62_prime256v1, kOidPrime256v1},
                          std::pair{NID_secp256k1, kOidSecp256k1}}) {
    const ASN1_OBJECT* obj = OBJ_nid2obj(nid);
    ASSERT_NE(obj, nullptr);
    const unsigned char* data = OBJ_get0_data(obj);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(data), OBJ_length(obj)), enc) << nid;
  }
}

TEST(DerReaderTest, EveryTruncationFails) {
  // A well-formed PKCS#8-shaped value; every proper prefix must be rejected.
  Writer w;
  w.BeginSequence();
  w.AddSmallUnsigned(0);
  w.BeginSequence();
  w.AddOid(kOidEcPublicKey);
  w.AddOid(kOidSm2p256v1);
  w.End();
  w.AddOctetString(std::string(200, 'k'));
  w.AddBitString(std::string(65, '\x04'));
  w.End();
  const std::string good = std::move(w).Finish();
  auto parse = [](absl::string_view in) -> absl::Status {
    Reader top(in);
    auto seq = top.ReadSequence();
    if (!seq.ok()) return seq.status();
    if (absl::Status s = top.Done(); !s.ok()) return s;
    auto version = seq->ReadSmallUnsigned();
    if (!version.ok()) return version.status();
    auto alg = seq->ReadSequence();
    if (!alg.ok()) return alg.status();
    if (auto o = alg->ReadOid(); !o.ok()) return o.status();
    if (auto o = alg->ReadOid(); !o.ok()) return o.status();
    if (absl::Status s = alg->Done(); !s.ok()) return s;
    if (auto o = seq->ReadOctetString(); !o.ok()) return o.status();
    if (auto b = seq->ReadBitStringBytes(); !b.ok()) return b.status();
    return seq->Done();
  };
  ASSERT_THAT(parse(good), IsOk());
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_THAT(parse(good.substr(0, n)), StatusIs(absl::StatusCode::kInvalidArgument))
        << "prefix " << n;
  }
}

// ---- ECDSA signatures -----------------------------------------------------------------

struct BnDeleter {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct SigDeleter {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};

// OpenSslSigToDer encodes r ‖ s with OpenSSL's i2d_ECDSA_SIG.
std::string OpenSslSigToDer(absl::string_view raw) {
  const size_t half = raw.size() / 2;
  BIGNUM* r = BN_bin2bn(reinterpret_cast<const uint8_t*>(raw.data()), half, nullptr);
  BIGNUM* s = BN_bin2bn(reinterpret_cast<const uint8_t*>(raw.data()) + half, half, nullptr);
  std::unique_ptr<ECDSA_SIG, SigDeleter> sig(ECDSA_SIG_new());
  ECDSA_SIG_set0(sig.get(), r, s);
  uint8_t* out = nullptr;
  const int len = i2d_ECDSA_SIG(sig.get(), &out);
  std::string der(reinterpret_cast<char*>(out), len);
  OPENSSL_free(out);
  return der;
}

// OpenSslDerToSig parses with d2i_ECDSA_SIG; returns "" when OpenSSL rejects it.
std::string OpenSslDerToRaw(absl::string_view der, size_t scalar_size) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(der.data());
  std::unique_ptr<ECDSA_SIG, SigDeleter> sig(d2i_ECDSA_SIG(nullptr, &p, der.size()));
  if (sig == nullptr) return "";
  std::string raw(2 * scalar_size, '\0');
  uint8_t* out = reinterpret_cast<uint8_t*>(raw.data());
  if (BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), out, scalar_size) < 0) return "";
  if (BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), out + scalar_size, scalar_size) < 0) return "";
  return raw;
}

TEST(EcdsaSignatureTest, RandomRoundTripMatchesOpenSsl) {
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed);
  for (size_t scalar_size : {32u, 48u, 66u}) {
    for (int i = 0; i < 400; ++i) {
      std::string raw = ::smcrypt::testing::RandomBytes(rng, 2 * scalar_size);
      // Force leading zero bytes, high bits, and the values 0 and 1 in some rows.
      switch (i % 8) {
        case 0: raw[0] = 0; break;
        case 1: raw[0] = 0; raw[1] = 0; raw[scalar_size] = 0; break;
        case 2: raw[0] |= 0x80; raw[scalar_size] |= 0x80; break;
        case 3: raw[0] = 0; raw[1] |= 0x80; break;
        case 4: std::fill(raw.begin(), raw.begin() + scalar_size, 0); break;
        case 5: std::fill(raw.begin() + scalar_size, raw.end() - 1, 0); raw.back() = 1; break;
        case 6: raw[0] = 0x7f; raw[scalar_size] = 0x00; raw[scalar_size + 1] = 0x7f; break;
        default: break;
      }
      auto der = EcdsaSignatureRawToDer(raw, scalar_size);
      ASSERT_THAT(der, IsOk());
      ASSERT_EQ(BytesToHex(*der), BytesToHex(OpenSslSigToDer(raw))) << "row " << i;
      auto back = EcdsaSignatureDerToRaw(*der, scalar_size);
      ASSERT_THAT(back, IsOk());
      ASSERT_EQ(BytesToHex(*back), BytesToHex(raw));
    }
  }
}

TEST(EcdsaSignatureTest, OpenSslSignaturesRoundTripByteIdentical) {
  for (const char* curve : {"P-256", "secp256k1", "SM2"}) {
    SCOPED_TRACE(curve);
    EVP_PKEY* pkey = std::string(curve) == "SM2"
                         ? EVP_PKEY_Q_keygen(nullptr, nullptr, "SM2")
                         : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", curve);
    ASSERT_NE(pkey, nullptr);
    for (int i = 0; i < 50; ++i) {
      const std::string msg = "message " + std::to_string(i);
      EVP_MD_CTX* ctx = EVP_MD_CTX_new();
      ASSERT_EQ(EVP_DigestSignInit(ctx, nullptr,
                                   std::string(curve) == "SM2" ? EVP_sm3() : EVP_sha256(),
                                   nullptr, pkey),
                1);
      size_t len = 0;
      ASSERT_EQ(EVP_DigestSign(ctx, nullptr, &len,
                               reinterpret_cast<const uint8_t*>(msg.data()), msg.size()),
                1);
      std::string sig(len, '\0');
      ASSERT_EQ(EVP_DigestSign(ctx, reinterpret_cast<uint8_t*>(sig.data()), &len,
                               reinterpret_cast<const uint8_t*>(msg.data()), msg.size()),
                1);
      sig.resize(len);
      EVP_MD_CTX_free(ctx);
      auto raw = EcdsaSignatureDerToRaw(sig, 32);
      ASSERT_THAT(raw, IsOk());
      EXPECT_EQ(BytesToHex(*raw), BytesToHex(OpenSslDerToRaw(sig, 32)));
      auto der = EcdsaSignatureRawToDer(*raw, 32);
      ASSERT_THAT(der, IsOk());
      EXPECT_EQ(BytesToHex(*der), BytesToHex(sig));
    }
    EVP_PKEY_free(pkey);
  }
}

TEST(EcdsaSignatureTest, MutatedEncodingsAcceptedOnlyWhenCanonical) {
  // Whatever the strict parser accepts, OpenSSL also parses, to the same r ‖ s, and
  // re-encodes to the same bytes: acceptance implies canonical DER.
  const uint64_t seed = ::smcrypt::testing::TestSeed();
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 rng(seed ^ 0xde5);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string raw = ::smcrypt::testing::RandomBytes(rng, 64);
    if (i % 3 == 0) raw[0] = 0;
    std::string der = *EcdsaSignatureRawToDer(raw, 32);
    const size_t pos = rng() % der.size();
    switch (rng() % 3) {
      case 0: der[pos] ^= static_cast<char>(1u << (rng() % 8)); break;
      case 1: der.insert(pos, 1, static_cast<char>(rng() & 0xff)); break;
      default: der.erase(pos, 1); break;
    }
    auto ours = EcdsaSignatureDerToRaw(der, 32);
    if (ours.ok()) {
      ++accepted;
      EXPECT_EQ(BytesToHex(*ours), BytesToHex(OpenSslDerToRaw(der, 32))) << BytesToHex(der);
      EXPECT_EQ(BytesToHex(*EcdsaSignatureRawToDer(*ours, 32)), BytesToHex(der));
    } else {
      ++rejected;
      EXPECT_THAT(ours, StatusIs(absl::StatusCode::kInvalidArgument));
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

TEST(EcdsaSignatureTest, BadInputs) {
  EXPECT_THAT(EcdsaSignatureRawToDer(std::string(63, 'a'), 32),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("signature: expected 64 bytes (r ‖ s), got 63")));
  const std::string ok = HexToBytes("3006020101020102");
  ASSERT_THAT(EcdsaSignatureDerToRaw(ok, 32), IsOk());
  struct Row {
    const char* hex;
    const char* message;
  };
  const Row rows[] = {
      {"300602010102010200", "trailing bytes after SEQUENCE"},
      {"3009020101020102020103", "trailing bytes after INTEGER in SEQUENCE"},
      {"300702020001020102", "non-minimal INTEGER"},
      {"3006020181020102", "negative INTEGER"},
      {"30820006020101020102", "non-minimal length"},
      {"3081060201010201 02", "long-form length 6 below 128"},
      {"3106020101020102", "expected SEQUENCE, got SET"},
      {"3006020101040102", "expected INTEGER, got OCTET STRING"},
      {"3003020101", "expected INTEGER, got end of SEQUENCE"},
      {"30800201010201020000", "indefinite length"},
      {"3026020101022101"
       "0000000000000000000000000000000000000000000000000000000000000000",
       "INTEGER too large: 33 bytes, at most 32"},
      {"", "expected SEQUENCE, got end of input"},
  };
  for (const Row& row : rows) {
    EXPECT_THAT(EcdsaSignatureDerToRaw(HexToBytes(row.hex), 32),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(row.message)))
        << row.hex;
  }
}

}  // namespace
}  // namespace smcrypt::der
