// streaming_test.cc — smcrypt/streaming.h: known wire bytes (AES-128-GCM and AES-128-CTR
// values computed independently with Python's `cryptography` over OpenSSL), round trips
// over many chunk sizes, and tampering (truncation, reordering, dropping, repetition,
// flipped last-segment flags, wrong key / nonce / aad / info) with the expected codes.
#include "smcrypt/streaming.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "smcrypt/registry.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

const std::string kKey = HexToBytes("000102030405060708090a0b0c0d0e0f");
const std::string kNonce = HexToBytes("101112131415161718191a1b");
constexpr absl::string_view kAad = "stream-aad";

// Seal: the segments of `chunks` (empty chunks give none).
std::vector<StreamChunk> Seal(Algorithm alg, absl::string_view key, absl::string_view nonce,
                              absl::string_view aad, const std::vector<std::string>& chunks,
                              size_t tag_size = 16) {
  std::vector<StreamChunk> out;
  auto enc = NewAeadStreamEncryptor(alg, key, tag_size, nonce, aad);
  EXPECT_THAT(enc.status(), IsOk());
  if (!enc.ok()) return out;
  for (const std::string& c : chunks) {
    absl::StatusOr<std::optional<StreamChunk>> s = (*enc)->Update(c);
    EXPECT_THAT(s.status(), IsOk());
    if (s.ok() && s->has_value()) out.push_back(**s);
  }
  absl::StatusOr<StreamChunk> last = (*enc)->Finish();
  EXPECT_THAT(last.status(), IsOk());
  if (last.ok()) out.push_back(*last);
  return out;
}

// Open: the plaintext of `segments`, or the first error.
absl::StatusOr<std::string> Open(Algorithm alg, absl::string_view key, absl::string_view nonce,
                                 absl::string_view aad, const std::vector<StreamChunk>& segments) {
  absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec =
      NewAeadStreamDecryptor(alg, key, nonce, aad);
  if (!dec.ok()) return dec.status();
  std::string pt;
  for (const StreamChunk& s : segments) {
    absl::StatusOr<std::optional<StreamChunk>> c = (*dec)->Update(s.data, s.tag);
    if (!c.ok()) return c.status();
    if (c->has_value()) pt += (*c)->data;
  }
  absl::StatusOr<StreamChunk> f = (*dec)->Finish();
  if (!f.ok()) return f.status();
  return pt + f->data;
}

// ---- Segmented AEAD stream ---------------------------------------------------------

TEST(AeadStreamTest, SegmentNonceIsIndexAndLastFlag) {
  EXPECT_EQ(AeadStreamSegmentNonce(0, false), std::string(12, '\0'));
  EXPECT_EQ(AeadStreamSegmentNonce(0, true), HexToBytes("000000000000000000000001"));
  EXPECT_EQ(AeadStreamSegmentNonce(0x01020304, false), HexToBytes("000000000000000102030400"));
  EXPECT_EQ(AeadStreamSegmentNonce(0xffffffff, true), HexToBytes("00000000000000ffffffff01"));
}

// K_N, segments and tags computed independently with Python's cryptography (HKDF,
// AESGCM) from the format in streaming.h.
TEST(AeadStreamTest, StreamKeyIsHkdfOfKeyNonceAndAad) {
  ASSERT_OK_AND_ASSIGN(SecretData k_aes, AeadStreamKey(Algorithm::kAes128Gcm, kKey, kNonce, kAad));
  EXPECT_EQ(SecretDataAsStringView(k_aes), HexToBytes("9bc6fca862cd90b6b994e7ba7c321cf5"));
  ASSERT_OK_AND_ASSIGN(SecretData k_sm4, AeadStreamKey(Algorithm::kSm4Gcm, kKey, kNonce, kAad));
  EXPECT_EQ(SecretDataAsStringView(k_sm4), HexToBytes("74ad115f40e12286f4ab651289cfed09"));
  EXPECT_THAT(AeadStreamKey(Algorithm::kSm4Cbc, kKey, kNonce, kAad).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not GCM or CCM")));
}

TEST(AeadStreamTest, KnownWireBytesAes128Gcm) {
  const std::vector<StreamChunk> segments =
      Seal(Algorithm::kAes128Gcm, kKey, kNonce, kAad, {"hello, ", "", "segmented ", "world"});
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].data, HexToBytes("38c61782d1af76"));
  EXPECT_EQ(segments[0].tag, HexToBytes("697c45328c788d319a174f3ca02eeb4c"));
  EXPECT_EQ(segments[1].data, HexToBytes("a3ca7386ea7c504cfb38"));
  EXPECT_EQ(segments[1].tag, HexToBytes("00069a9cd42c7360f6eeca04d59404d2"));
  EXPECT_EQ(segments[2].data, HexToBytes("65ea39888d"));
  EXPECT_EQ(segments[2].tag, HexToBytes("d3894bc57073c8c26a003a734e8243fa"));
  absl::StatusOr<std::string> pt = Open(Algorithm::kAes128Gcm, kKey, kNonce, kAad, segments);
  ASSERT_THAT(pt.status(), IsOk());
  EXPECT_EQ(*pt, "hello, segmented world");
}

TEST(AeadStreamTest, EmptyStreamIsOneEmptyFinalSegment) {
  const std::vector<StreamChunk> segments = Seal(Algorithm::kAes128Gcm, kKey, kNonce, kAad, {});
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].data, "");
  EXPECT_EQ(segments[0].tag, HexToBytes("92e8512d4b32f4239568204e3a186091"));
  absl::StatusOr<std::string> pt = Open(Algorithm::kAes128Gcm, kKey, kNonce, kAad, segments);
  ASSERT_THAT(pt.status(), IsOk());
  EXPECT_EQ(*pt, "");
}

class AeadStreamRoundTripTest : public ::testing::TestWithParam<Algorithm> {};

TEST_P(AeadStreamRoundTripTest, ManySegmentSizes) {
  const Algorithm alg = GetParam();
  std::mt19937_64 rng(testing::TestSeed());
  const std::string key = testing::RandomBytes(rng, SymmetricKeySize(alg));
  for (size_t tag_size : {16, 12}) {
    for (size_t size : {1, 15, 16, 17, 255, 4096, 65537}) {
      for (size_t count : {0, 1, 2, 5}) {
        std::vector<std::string> chunks;
        std::string all;
        for (size_t i = 0; i < count; ++i) {
          chunks.push_back(testing::RandomBytes(rng, size + i));
          all += chunks.back();
        }
        const std::vector<StreamChunk> segments = Seal(alg, key, kNonce, kAad, chunks, tag_size);
        ASSERT_EQ(segments.size(), std::max<size_t>(count, 1));
        for (const StreamChunk& s : segments) EXPECT_EQ(s.tag.size(), tag_size);
        absl::StatusOr<std::string> pt = Open(alg, key, kNonce, kAad, segments);
        ASSERT_THAT(pt.status(), IsOk()) << "size " << size << " count " << count;
        EXPECT_EQ(*pt, all);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Aeads, AeadStreamRoundTripTest,
                         ::testing::Values(Algorithm::kSm4Gcm, Algorithm::kSm4Ccm,
                                           Algorithm::kAes128Gcm, Algorithm::kAes256Gcm),
                         [](const auto& info) {
                           std::string name(AlgorithmName(info.param));
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

TEST(AeadStreamTest, TamperingFailsWithOneGenericError) {
  const Algorithm alg = Algorithm::kSm4Gcm;
  const std::vector<StreamChunk> s = Seal(alg, kKey, kNonce, kAad, {"one", "two", "three"});
  ASSERT_EQ(s.size(), 3u);
  const auto failed = StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed");
  ASSERT_THAT(Open(alg, kKey, kNonce, kAad, s).status(), IsOk());
  // Truncated: the last non-final segment is opened as final.
  EXPECT_THAT(Open(alg, kKey, kNonce, kAad, {s[0], s[1]}).status(), failed);
  EXPECT_THAT(Open(alg, kKey, kNonce, kAad, {s[0]}).status(), failed);
  // Final segment presented early (flag flipped the other way), dropped, reordered, repeated.
  EXPECT_THAT(Open(alg, kKey, kNonce, kAad, {s[0], s[2]}).status(), failed);
  EXPECT_THAT(Open(alg, kKey, kNonce, kAad, {s[1], s[0], s[2]}).status(), failed);
  EXPECT_THAT(Open(alg, kKey, kNonce, kAad, {s[0], s[0], s[1], s[2]}).status(), failed);
  EXPECT_THAT(Open(alg, kKey, kNonce, kAad, {s[0], s[1], s[2], s[2]}).status(), failed);
  // Wrong key, nonce or aad.
  std::string other_key = kKey;
  other_key[0] ^= 1;
  std::string other_nonce = kNonce;
  other_nonce[11] ^= 1;  // the last-segment flag position
  EXPECT_THAT(Open(alg, other_key, kNonce, kAad, s).status(), failed);
  EXPECT_THAT(Open(alg, kKey, other_nonce, kAad, s).status(), failed);
  EXPECT_THAT(Open(alg, kKey, kNonce, "other", s).status(), failed);
  // A nonce edited to move the index or the last flag: segment k alone, or the first
  // segments, never pass as a whole stream.
  for (uint32_t k = 0; k < 3; ++k) {
    for (int byte = 0; byte < 12; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::string n = kNonce;
        n[byte] = static_cast<char>(n[byte] ^ (1 << bit));
        EXPECT_THAT(Open(alg, kKey, n, kAad, {s[k]}).status(), failed) << k << " " << byte;
        EXPECT_THAT(Open(alg, kKey, n, kAad, {s[0], s[1]}).status(), failed) << byte;
      }
    }
  }
  // Every flipped bit of every ciphertext and tag.
  for (size_t i = 0; i < s.size(); ++i) {
    for (int field = 0; field < 2; ++field) {
      const size_t len = field == 0 ? s[i].data.size() : s[i].tag.size();
      for (size_t bit = 0; bit < len * 8; ++bit) {
        std::vector<StreamChunk> t = s;
        std::string& b = field == 0 ? t[i].data : t[i].tag;
        b[bit / 8] = static_cast<char>(b[bit / 8] ^ (1 << (bit % 8)));
        EXPECT_THAT(Open(alg, kKey, kNonce, kAad, t).status(), failed) << i << " " << bit;
      }
    }
  }
}

TEST(AeadStreamTest, MisuseIsInvalidArgument) {
  EXPECT_THAT(
      NewAeadStreamEncryptor(Algorithm::kSm4Gcm, kKey, 16, "short", "").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "GCM/CCM stream nonce must be 12 bytes, got 5"));
  EXPECT_THAT(NewAeadStreamEncryptor(Algorithm::kSm4Gcm, "short key", 16, kNonce, "").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewAeadStreamEncryptor(Algorithm::kSm4Cbc, kKey, 16, kNonce, "").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(NewAeadStreamDecryptor(Algorithm::kSm4Gcm, kKey, std::string(13, 'n'), "")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("12 bytes, got 13")));
  const std::vector<StreamChunk> s = Seal(Algorithm::kSm4Gcm, kKey, kNonce, "", {"ab", "cd"});
  ASSERT_EQ(s.size(), 2u);
  // No segment at all, a segment without its tag, a tag size that changes.
  EXPECT_THAT(Open(Algorithm::kSm4Gcm, kKey, kNonce, "", {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no segment")));
  EXPECT_THAT(Open(Algorithm::kSm4Gcm, kKey, kNonce, "", {{s[0].data, ""}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs its tag")));
  EXPECT_THAT(
      Open(Algorithm::kSm4Gcm, kKey, kNonce, "", {s[0], {s[1].data, s[1].tag.substr(0, 12)}})
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("like the first")));
  // A wrong key size reaches the factory on the first segment.
  EXPECT_THAT(Open(Algorithm::kSm4Gcm, "short key", kNonce, "", s).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// ---- Block-mode streams ------------------------------------------------------------

TEST(CtrAddBlocksTest, BigEndianWithCarryModuloTheBlock) {
  std::string c = HexToBytes("000000000000000000000000000000ff");
  CtrAddBlocks(c, 1);
  EXPECT_EQ(c, HexToBytes("00000000000000000000000000000100"));
  c = HexToBytes("0000000000000000ffffffffffffffff");
  CtrAddBlocks(c, 2);
  EXPECT_EQ(c, HexToBytes("00000000000000010000000000000001"));
  c = HexToBytes("ffffffffffffffffffffffffffffffff");
  CtrAddBlocks(c, 1);
  EXPECT_EQ(c, std::string(16, '\0'));
  c = HexToBytes("00000000000000000000000000000000");
  CtrAddBlocks(c, UINT64_MAX);
  EXPECT_EQ(c, HexToBytes("0000000000000000ffffffffffffffff"));
  c = HexToBytes("000000000000000000000000000000ff");
  CtrAddBlocks(c, 0);
  EXPECT_EQ(c, HexToBytes("000000000000000000000000000000ff"));
}

struct BlockCase {
  Algorithm alg;
  Padding padding;
};

std::unique_ptr<Cipher> MakeCipher(Algorithm alg, absl::string_view key, Padding padding) {
  absl::StatusOr<std::unique_ptr<Cipher>> c = NewCipher(alg, key, padding);
  EXPECT_THAT(c.status(), IsOk());
  return c.ok() ? *std::move(c) : nullptr;
}

absl::StatusOr<std::string> BlockEncrypt(Algorithm alg, absl::string_view key, absl::string_view iv,
                                         Padding padding, const std::vector<std::string>& chunks) {
  absl::StatusOr<std::unique_ptr<StreamEncryptor>> enc = NewBlockStreamEncryptor(
      CipherModeOf(alg), MakeCipher(alg, key, Padding::kNone),
      MakeCipher(alg, key, Padding::kPkcs7), iv, padding == Padding::kPkcs7, AlgorithmName(alg));
  if (!enc.ok()) return enc.status();
  std::string out;
  for (const std::string& c : chunks) {
    absl::StatusOr<std::optional<StreamChunk>> o = (*enc)->Update(c);
    if (!o.ok()) return o.status();
    if (o->has_value()) out += (*o)->data;
  }
  absl::StatusOr<StreamChunk> f = (*enc)->Finish();
  if (!f.ok()) return f.status();
  return out + f->data;
}

absl::StatusOr<std::string> BlockDecrypt(Algorithm alg, absl::string_view key, absl::string_view iv,
                                         Padding padding, absl::string_view ct, size_t piece) {
  absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec = NewBlockStreamDecryptor(
      CipherModeOf(alg), MakeCipher(alg, key, Padding::kNone),
      MakeCipher(alg, key, Padding::kPkcs7), iv, padding == Padding::kPkcs7, AlgorithmName(alg));
  if (!dec.ok()) return dec.status();
  std::string out;
  for (size_t pos = 0; pos < ct.size(); pos += piece) {
    absl::StatusOr<std::optional<StreamChunk>> o = (*dec)->Update(ct.substr(pos, piece), "");
    if (!o.ok()) return o.status();
    if (o->has_value()) out += (*o)->data;
  }
  absl::StatusOr<StreamChunk> f = (*dec)->Finish();
  if (!f.ok()) return f.status();
  return out + f->data;
}

TEST(BlockStreamTest, KnownWireBytesAes128CtrCounterWraps) {
  const std::string iv = HexToBytes("fffffffffffffffffffffffffffffffe");
  std::string pt;
  for (int i = 0; i < 40; ++i) pt.push_back(static_cast<char>(i));
  absl::StatusOr<std::string> ct = BlockEncrypt(Algorithm::kAes128Ctr, kKey, iv, Padding::kNone,
                                                {pt.substr(0, 7), pt.substr(7, 20), pt.substr(27)});
  ASSERT_THAT(ct.status(), IsOk());
  EXPECT_EQ(*ct, HexToBytes("b6b4c0db298ed208c747d2ffa26399e12c550d21da1294347cceb882124da50c"
                            "e6801914a3aa7da5"));
  absl::StatusOr<std::string> back =
      BlockDecrypt(Algorithm::kAes128Ctr, kKey, iv, Padding::kNone, *ct, 5);
  ASSERT_THAT(back.status(), IsOk());
  EXPECT_EQ(*back, pt);
}

TEST(BlockStreamTest, EqualsTheOneShotCipherForEveryChunking) {
  std::mt19937_64 rng(testing::TestSeed());
  const BlockCase cases[] = {
      {Algorithm::kSm4Ecb, Padding::kPkcs7},   {Algorithm::kSm4Ecb, Padding::kNone},
      {Algorithm::kSm4Cbc, Padding::kPkcs7},   {Algorithm::kSm4Cbc, Padding::kNone},
      {Algorithm::kSm4Ctr, Padding::kNone},    {Algorithm::kAes128Cbc, Padding::kPkcs7},
      {Algorithm::kAes256Ctr, Padding::kNone}, {Algorithm::kAes128Ecb, Padding::kPkcs7},
  };
  for (const BlockCase& c : cases) {
    const std::string key = testing::RandomBytes(rng, SymmetricKeySize(c.alg));
    const std::string iv =
        CipherModeOf(c.alg) == CipherMode::kEcb ? "" : testing::RandomBytes(rng, 16);
    const bool whole_blocks =
        c.padding == Padding::kNone && CipherModeOf(c.alg) != CipherMode::kCtr;
    for (size_t total : {0, 1, 16, 31, 32, 100, 4096}) {
      if (whole_blocks && total % 16 != 0) continue;
      const std::string pt = testing::RandomBytes(rng, total);
      absl::StatusOr<std::string> one_shot = MakeCipher(c.alg, key, c.padding)->Encrypt(iv, pt);
      ASSERT_THAT(one_shot.status(), IsOk());
      for (size_t piece : {1, 5, 16, 17, 1000}) {
        std::vector<std::string> chunks;
        for (size_t pos = 0; pos < pt.size(); pos += piece) chunks.push_back(pt.substr(pos, piece));
        absl::StatusOr<std::string> ct = BlockEncrypt(c.alg, key, iv, c.padding, chunks);
        ASSERT_THAT(ct.status(), IsOk()) << AlgorithmName(c.alg) << " " << total << " " << piece;
        EXPECT_EQ(*ct, *one_shot) << AlgorithmName(c.alg) << " " << total << " " << piece;
        if (c.padding == Padding::kPkcs7 && ct->empty()) continue;
        absl::StatusOr<std::string> back = BlockDecrypt(c.alg, key, iv, c.padding, *ct, piece);
        ASSERT_THAT(back.status(), IsOk()) << AlgorithmName(c.alg) << " " << total << " " << piece;
        EXPECT_EQ(*back, pt);
      }
    }
  }
}

TEST(BlockStreamTest, BadLengthsAndPaddingAreInvalidArgument) {
  EXPECT_THAT(
      BlockEncrypt(Algorithm::kSm4Cbc, kKey, "short", Padding::kPkcs7, {}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, "nonce must be 16 bytes for SM4-CBC, got 5"));
  EXPECT_THAT(
      BlockEncrypt(Algorithm::kSm4Cbc, kKey, std::string(16, 'i'), Padding::kNone, {"not whole"})
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("9 bytes are left over")));
  EXPECT_THAT(BlockDecrypt(Algorithm::kSm4Cbc, kKey, std::string(16, 'i'), Padding::kPkcs7,
                           std::string(20, 'c'), 7)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ciphertext length must be a non-zero multiple of 16 bytes, got 20"));
  EXPECT_THAT(BlockDecrypt(Algorithm::kSm4Ecb, kKey, "", Padding::kPkcs7, "", 1).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("got 0")));
  // Bad padding is the one generic error.
  absl::StatusOr<std::string> ct =
      BlockEncrypt(Algorithm::kSm4Cbc, kKey, std::string(16, 'i'), Padding::kPkcs7, {"abc"});
  ASSERT_THAT(ct.status(), IsOk());
  // Another IV changes every byte of the one-block message, its padding included.
  EXPECT_THAT(BlockDecrypt(Algorithm::kSm4Cbc, kKey, std::string(16, 'j'), Padding::kPkcs7, *ct, 16)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed"));
  absl::StatusOr<std::unique_ptr<StreamDecryptor>> dec = NewBlockStreamDecryptor(
      CipherMode::kCtr, MakeCipher(Algorithm::kSm4Ctr, kKey, Padding::kNone), nullptr,
      std::string(16, 'i'), false, "SM4-CTR");
  ASSERT_THAT(dec.status(), IsOk());
  EXPECT_THAT((*dec)->Update("x", "tag").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tag must be empty")));
  EXPECT_THAT(NewBlockStreamEncryptor(CipherMode::kGcm,
                                      MakeCipher(Algorithm::kSm4Ctr, kKey, Padding::kNone), nullptr,
                                      std::string(16, 'i'), false, "SM4-GCM")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// ---- HPKE stream -------------------------------------------------------------------

// ChunkCiphertextSize: the ct ‖ tag bytes of the chunks of a well-formed stream.
uint64_t ChunkCiphertextSize(absl::string_view stream) {
  uint64_t total = 0;
  for (size_t pos = kHpkeStreamPrefixSize; pos + kHpkeStreamChunkHeaderSize <= stream.size();) {
    uint32_t n = 0;
    for (int i = 1; i <= 4; ++i) n = n << 8 | static_cast<uint8_t>(stream[pos + i]);
    total += n;
    pos += kHpkeStreamChunkHeaderSize + n;
  }
  return total;
}

class HpkeStreamTest : public ::testing::TestWithParam<HpkeSuite> {
 protected:
  void SetUp() override { ASSERT_OK_AND_ASSIGN(kp_, HpkeGenerateKeyPair(GetParam())); }
  absl::string_view Sk() const { return SecretDataAsStringView(kp_.private_key); }

  // SealStream: prefix ‖ chunks ‖ final chunk.
  std::string SealStream(const std::vector<std::string>& chunks, absl::string_view info,
                         absl::string_view aad, std::vector<size_t>* chunk_starts = nullptr) {
    auto enc = HpkeStreamEncryptor::New(GetParam(), kp_.public_key, info, aad);
    EXPECT_THAT(enc.status(), IsOk());
    if (!enc.ok()) return "";
    std::string out((*enc)->prefix());
    for (const std::string& c : chunks) {
      absl::StatusOr<std::string> chunk = (*enc)->Update(c);
      EXPECT_THAT(chunk.status(), IsOk());
      if (chunk.ok() && !chunk->empty()) {
        if (chunk_starts != nullptr) chunk_starts->push_back(out.size());
        out += *chunk;
      }
    }
    absl::StatusOr<std::string> last = (*enc)->Finish();
    EXPECT_THAT(last.status(), IsOk());
    if (chunk_starts != nullptr) chunk_starts->push_back(out.size());
    return out + last.value_or("");
  }

  absl::StatusOr<std::string> OpenStream(absl::string_view stream, absl::string_view info,
                                         absl::string_view aad, size_t piece,
                                         absl::string_view sk = {}) {
    auto dec = HpkeStreamDecryptor::New(GetParam(), sk.empty() ? Sk() : sk, info, aad);
    if (!dec.ok()) return dec.status();
    std::string pt;
    for (size_t pos = 0; pos < stream.size(); pos += piece) {
      absl::StatusOr<std::string> p = (*dec)->Update(stream.substr(pos, piece));
      if (!p.ok()) return p.status();
      pt += *p;
    }
    absl::Status f = (*dec)->Finish();
    if (!f.ok()) return f;
    EXPECT_EQ((*dec)->opened_ciphertext_size(), ChunkCiphertextSize(stream));
    return pt;
  }

  HpkeKeyPair kp_;
};

TEST_P(HpkeStreamTest, WireLayoutOpensWithAPlainHpkeContext) {
  std::vector<size_t> starts;
  const std::string stream = SealStream({"first", "", "second chunk"}, "info", "aad", &starts);
  ASSERT_EQ(starts.size(), 3u);
  const std::string header = HpkeWireHeader(GetParam());
  ASSERT_EQ(header.size(), kHpkeWireHeaderSize);
  EXPECT_EQ(stream.substr(0, 7), header);
  EXPECT_EQ(static_cast<uint8_t>(header[0]), kHpkeWireFormatVersion);
  EXPECT_THAT(CheckHpkeStreamHeader(GetParam(), header), IsOk());
  // Open each chunk by hand: flag ‖ BE32(|ct| + 16) ‖ ct ‖ tag at sequence numbers 0, 1, 2
  // with aad = header ‖ flag ‖ caller aad.
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<HpkeContext> ctx,
      HpkeContext::SetupBaseR(GetParam(), stream.substr(7, kHpkeEncSize), Sk(), "info"));
  const std::string want[3] = {"first", "second chunk", ""};
  size_t pos = kHpkeStreamPrefixSize;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(pos, starts[i]);
    const uint8_t flag = static_cast<uint8_t>(stream[pos]);
    EXPECT_EQ(flag, i == 2 ? kHpkeStreamFlagFinal : kHpkeStreamFlagMore);
    const uint32_t n = (uint32_t{static_cast<uint8_t>(stream[pos + 1])} << 24) |
                       (uint32_t{static_cast<uint8_t>(stream[pos + 2])} << 16) |
                       (uint32_t{static_cast<uint8_t>(stream[pos + 3])} << 8) |
                       uint32_t{static_cast<uint8_t>(stream[pos + 4])};
    EXPECT_EQ(n, want[i].size() + kHpkeTagSize);
    ASSERT_OK_AND_ASSIGN(std::string pt, ctx->Open(HpkeStreamChunkAad(header, flag, "aad"),
                                                   absl::string_view(stream).substr(pos + 5, n)));
    EXPECT_EQ(pt, want[i]);
    pos += 5 + n;
  }
  EXPECT_EQ(pos, stream.size());
  EXPECT_EQ(HpkeStreamChunkAad("HDR", 0x01, "x"), std::string("HDR\x01x", 5));
}

TEST_P(HpkeStreamTest, RoundTripsInPiecesOfAnySize) {
  std::mt19937_64 rng(testing::TestSeed());
  for (size_t size : {1, 100, 4096, 70000}) {
    std::vector<std::string> chunks;
    std::string all;
    for (int i = 0; i < 3; ++i) {
      chunks.push_back(testing::RandomBytes(rng, size + i));
      all += chunks.back();
    }
    const std::string stream = SealStream(chunks, "info", "aad");
    for (size_t piece :
         {size_t{1}, size_t{7}, size_t{72}, size_t{77}, size_t{1000}, stream.size()}) {
      if (piece == 1 && size > 100) continue;  // slow and adds nothing
      absl::StatusOr<std::string> pt = OpenStream(stream, "info", "aad", piece);
      ASSERT_THAT(pt.status(), IsOk()) << size << " " << piece;
      EXPECT_EQ(*pt, all);
    }
  }
  absl::StatusOr<std::string> empty = OpenStream(SealStream({}, "", ""), "", "", 3);
  ASSERT_THAT(empty.status(), IsOk());
  EXPECT_EQ(*empty, "");
}

TEST_P(HpkeStreamTest, TamperingIsDetected) {
  std::vector<size_t> starts;
  const std::string stream = SealStream({"aaaa", "bbbbbb"}, "info", "aad", &starts);
  ASSERT_EQ(starts.size(), 3u);
  const auto failed = StatusIs(absl::StatusCode::kInvalidArgument, "decryption failed");
  const std::string prefix = stream.substr(0, starts[0]);
  const std::string c0 = stream.substr(starts[0], starts[1] - starts[0]);
  const std::string c1 = stream.substr(starts[1], starts[2] - starts[1]);
  const std::string fin = stream.substr(starts[2]);
  ASSERT_THAT(OpenStream(prefix + c0 + c1 + fin, "info", "aad", 9).status(), IsOk());
  // Reordered, dropped, repeated chunks.
  EXPECT_THAT(OpenStream(prefix + c1 + c0 + fin, "info", "aad", 9).status(), failed);
  EXPECT_THAT(OpenStream(prefix + c0 + fin, "info", "aad", 9).status(), failed);
  EXPECT_THAT(OpenStream(prefix + c0 + c0 + c1 + fin, "info", "aad", 9).status(), failed);
  // Flipped flags: a non-final chunk marked final, the final one marked non-final.
  std::string t = prefix + c0 + c1 + fin;
  t[starts[0]] = static_cast<char>(kHpkeStreamFlagFinal);
  EXPECT_THAT(OpenStream(t, "info", "aad", 9).status(), failed);
  t = prefix + c0 + c1 + fin;
  t[starts[2]] = static_cast<char>(kHpkeStreamFlagMore);
  EXPECT_THAT(OpenStream(t, "info", "aad", 9).status(), failed);
  // Truncated: before the final chunk, inside a chunk, inside the prefix.
  EXPECT_THAT(OpenStream(prefix + c0 + c1, "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("truncated")));
  EXPECT_THAT(OpenStream(stream.substr(0, stream.size() - 1), "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("truncated")));
  EXPECT_THAT(OpenStream(prefix.substr(0, 71), "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("header and enc")));
  // Wrong key, info or aad; a flipped bit in enc or in a ciphertext.
  ASSERT_OK_AND_ASSIGN(HpkeKeyPair other, HpkeGenerateKeyPair(GetParam()));
  EXPECT_THAT(
      OpenStream(stream, "info", "aad", 9, SecretDataAsStringView(other.private_key)).status(),
      failed);
  EXPECT_THAT(OpenStream(stream, "other", "aad", 9).status(), failed);
  EXPECT_THAT(OpenStream(stream, "info", "other", 9).status(), failed);
  for (size_t at : {size_t{7}, size_t{40}, starts[0] + 5, starts[1] + 8, stream.size() - 1}) {
    t = stream;
    t[at] ^= 0x01;
    EXPECT_THAT(OpenStream(t, "info", "aad", 9).status(), failed) << at;
  }
  // Framing errors name the field.
  t = stream;
  t[0] = 0x02;
  EXPECT_THAT(OpenStream(t, "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("format version")));
  t = stream;
  t[2] ^= 0x01;
  EXPECT_THAT(OpenStream(t, "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kem_id")));
  t = stream;
  t[starts[0]] = 0x02;
  EXPECT_THAT(OpenStream(t, "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("flag")));
  t = stream;
  t[starts[0] + 4] = 0x03;  // length 3 < 16
  EXPECT_THAT(OpenStream(t, "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("length")));
  EXPECT_THAT(OpenStream(stream + "x", "info", "aad", 9).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("after the final chunk")));
  EXPECT_THAT(CheckHpkeStreamHeader(GetParam(), "short"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_P(HpkeStreamTest, LimitsAndKeysAreChecked) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<HpkeStreamEncryptor> enc,
                       HpkeStreamEncryptor::New(GetParam(), kp_.public_key, "", ""));
  EXPECT_EQ(enc->prefix().size(), kHpkeStreamPrefixSize);
  EXPECT_THAT(enc->Update(std::string(kHpkeStreamMaxChunkSize + 1, 'x')).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 1048576")));
  ASSERT_OK_AND_ASSIGN(std::string max_chunk,
                       enc->Update(std::string(kHpkeStreamMaxChunkSize, 'x')));
  EXPECT_EQ(max_chunk.size(), kHpkeStreamChunkHeaderSize + kHpkeStreamMaxChunkSize + kHpkeTagSize);
  ASSERT_OK_AND_ASSIGN(std::string empty, enc->Update(""));
  EXPECT_EQ(empty, "");
  // Keys: the same errors as NewHpkeEncrypt / NewHpkeDecrypt.
  EXPECT_EQ(HpkeStreamEncryptor::New(GetParam(), "garbage", "", "").status().code(),
            NewHpkeEncrypt(GetParam(), "garbage").status().code());
  EXPECT_EQ(HpkeStreamDecryptor::New(GetParam(), "garbage", "", "").status().code(),
            NewHpkeDecrypt(GetParam(), "garbage").status().code());
  EXPECT_FALSE(HpkeStreamDecryptor::New(GetParam(), std::string(32, '\0'), "", "").ok());
  ASSERT_OK_AND_ASSIGN(std::string pk, HpkeParsePublicKey(GetParam(), kp_.public_key));
  EXPECT_EQ(pk, kp_.public_key);
  ASSERT_OK_AND_ASSIGN(SecretData sk, HpkeParsePrivateKey(GetParam(), Sk()));
  EXPECT_EQ(SecretDataAsStringView(sk), Sk());
}

INSTANTIATE_TEST_SUITE_P(Suites, HpkeStreamTest,
                         ::testing::Values(HpkeSuite::kSm2Sm3Sm4Gcm,
                                           HpkeSuite::kP256Sha256Aes128Gcm),
                         [](const auto& info) {
                           return info.param == HpkeSuite::kSm2Sm3Sm4Gcm ? "Sm2Sm3Sm4Gcm"
                                                                         : "P256Sha256Aes128Gcm";
                         });

}  // namespace
}  // namespace smcrypt
