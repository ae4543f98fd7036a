// HPKE stream fuzzer (smcrypt/streaming.h), both suites, for the recipient key of the
// test vectors (ikmR).
//  - Arbitrary bytes, fed in pieces of fuzzed sizes, go to the decryptor: no crash, and
//    Finish never succeeds (only the holder of an ephemeral key could make a stream that
//    opens; none is given here).
//  - Round trip: the fuzzed plaintext, cut into chunks at the fuzzed lengths, sealed with
//    the fuzzed info and aad, opens back from pieces of any size; one flipped bit, a cut,
//    a trailing byte, swapped chunks or a wrong info fails.
// Aborts on any mismatch.
//
// Input: suite byte ‖ pos (2) ‖ info field ‖ aad field ‖ plaintext field ‖
//        lengths field (one byte each: chunk lengths, then piece sizes) ‖ stream bytes.
#include <memory>
#include <string>
#include <vector>

#include "smcrypt/hpke.h"
#include "smcrypt/streaming.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using smcrypt::HpkeSuite;

struct Recipient {
  std::string public_key;
  smcrypt::SecretData private_key;
};

Recipient MakeRecipient(HpkeSuite suite) {
  // ikmR of RFC 9180 A.3.1 (and of tests/testdata/hpke_sm2_sm3_sm4gcm.txt).
  constexpr uint8_t kIkmR[32] = {0x66, 0x8b, 0x37, 0x17, 0x1f, 0x10, 0x72, 0xf3, 0xcf, 0x12, 0xea,
                                 0x8a, 0x23, 0x6a, 0x45, 0xdf, 0x23, 0xfc, 0x13, 0xb8, 0x2a, 0xf3,
                                 0x60, 0x9a, 0xd1, 0xe3, 0x54, 0xf6, 0xef, 0x81, 0x75, 0x50};
  auto kp = smcrypt::HpkeDeriveKeyPair(
      suite, absl::string_view(reinterpret_cast<const char*>(kIkmR), sizeof(kIkmR)));
  FUZZ_CHECK(kp.ok());
  return {kp->public_key, kp->private_key};
}

// Open feeds `stream` in pieces (sizes from `pieces`, cycling; 0 means 1 byte) and
// returns the plaintext, or nullopt when the stream is rejected.
std::optional<std::string> Open(HpkeSuite suite, const Recipient& r, absl::string_view info,
                                absl::string_view aad, absl::string_view stream,
                                absl::string_view pieces) {
  auto dec = smcrypt::HpkeStreamDecryptor::New(
      suite, smcrypt::SecretDataAsStringView(r.private_key), info, aad);
  FUZZ_CHECK(dec.ok());
  std::string pt;
  size_t k = 0;
  for (size_t pos = 0; pos < stream.size();) {
    const size_t n = pieces.empty()
                         ? stream.size()
                         : std::max<size_t>(static_cast<uint8_t>(pieces[k++ % pieces.size()]), 1);
    auto out = (*dec)->Update(stream.substr(pos, n));
    if (!out.ok()) return std::nullopt;
    pt += *out;
    pos += std::min(n, stream.size() - pos);
  }
  if (!(*dec)->Finish().ok()) return std::nullopt;
  return pt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Recipient* recipients = new Recipient[2]{
      MakeRecipient(HpkeSuite::kSm2Sm3Sm4Gcm), MakeRecipient(HpkeSuite::kP256Sha256Aes128Gcm)};
  smcrypt::fuzz::FuzzReader in(data, size);
  const int which = in.Byte() & 1;
  const HpkeSuite suite = which == 0 ? HpkeSuite::kSm2Sm3Sm4Gcm : HpkeSuite::kP256Sha256Aes128Gcm;
  const Recipient& r = recipients[which];
  const uint16_t pos = in.U16();
  const std::string info = in.Field();
  const std::string aad = in.Field();
  const std::string plaintext = in.Field();
  const std::string lengths = in.Field();
  const std::string wire = in.Rest();

  // Arbitrary bytes never open.
  FUZZ_CHECK(!Open(suite, r, info, aad, wire, lengths).has_value());

  // Round trip.
  auto enc = smcrypt::HpkeStreamEncryptor::New(suite, r.public_key, info, aad);
  FUZZ_CHECK(enc.ok());
  std::string stream((*enc)->prefix());
  std::vector<size_t> starts;
  size_t at = 0;
  for (char c : lengths) {
    const size_t n = std::min<size_t>(static_cast<uint8_t>(c), plaintext.size() - at);
    auto chunk = (*enc)->Update(absl::string_view(plaintext).substr(at, n));
    FUZZ_CHECK(chunk.ok() && chunk->empty() == (n == 0));
    if (n > 0) starts.push_back(stream.size());
    stream += *chunk;
    at += n;
  }
  auto tail = (*enc)->Update(absl::string_view(plaintext).substr(at));
  FUZZ_CHECK(tail.ok());
  if (!tail->empty()) starts.push_back(stream.size());
  stream += *tail;
  auto last = (*enc)->Finish();
  FUZZ_CHECK(last.ok() && last->size() == smcrypt::kHpkeStreamChunkHeaderSize + 16);
  starts.push_back(stream.size());
  stream += *last;
  std::optional<std::string> opened = Open(suite, r, info, aad, stream, lengths);
  FUZZ_CHECK(opened.has_value() && *opened == plaintext);

  std::string t = stream;
  switch (pos & 3) {
    case 0: {  // one flipped bit anywhere
      const size_t bit = (pos >> 2) % (t.size() * 8);
      t[bit / 8] = static_cast<char>(t[bit / 8] ^ (1 << (bit % 8)));
      break;
    }
    case 1:  // cut anywhere, or one byte too many
      if ((pos & 4) != 0) {
        t.push_back('\0');
      } else {
        t.resize((pos >> 3) % t.size());
      }
      break;
    case 2: {  // two adjacent chunks swapped (the final one included)
      if (starts.size() < 2) {
        t.resize(starts.back());  // the final chunk dropped
        break;
      }
      const size_t i = (pos >> 2) % (starts.size() - 1);
      const size_t end = i + 2 < starts.size() ? starts[i + 2] : t.size();
      const std::string a = stream.substr(starts[i], starts[i + 1] - starts[i]);
      const std::string b = stream.substr(starts[i + 1], end - starts[i + 1]);
      t = stream.substr(0, starts[i]) + b + a + stream.substr(end);
      break;
    }
    case 3:  // another info
      FUZZ_CHECK(!Open(suite, r, info + "x", aad, stream, lengths).has_value());
      t.resize(starts.back());
      break;
  }
  FUZZ_CHECK(!Open(suite, r, info, aad, t, lengths).has_value());
  return 0;
}
