// Segmented AEAD stream fuzzer (smcrypt/streaming.h, STREAM): a fixed key, nonce and aad
// for AES-128-GCM, SM4-GCM, SM4-CCM or AES-256-GCM (first byte).
//  - Arbitrary segments go to the decryptor: no crash, and it never accepts a stream it
//    did not produce: when Finish succeeds, sealing the plaintexts it released must give
//    back exactly the segments it was fed (the AEAD is deterministic for a fixed nonce).
//  - Round trip: the fuzzed plaintext, cut where the fuzzed lengths say, seals and opens
//    back; one flipped bit, a dropped, swapped or repeated segment, or a cut stream fails.
// Aborts on any mismatch.
//
// Input: alg byte ‖ pos (2) ‖ plaintext field ‖ chunk lengths field (one byte each) ‖
//        segments: { ciphertext field ‖ tag length (1) ‖ tag }*.
#include <memory>
#include <string>
#include <vector>

#include "smcrypt/registry.h"
#include "smcrypt/streaming.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using smcrypt::Algorithm;
using smcrypt::StreamChunk;

constexpr char kKey32[] =
    "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
    "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f";
constexpr absl::string_view kNonce("\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b", 12);
constexpr absl::string_view kAad = "stream-aad";

struct Setup {
  Algorithm alg;
  absl::string_view key;
};

std::vector<StreamChunk> Seal(const Setup& s, size_t tag_size,
                              const std::vector<std::string>& chunks) {
  auto enc = smcrypt::NewAeadStreamEncryptor(s.alg, s.key, tag_size, kNonce, kAad);
  FUZZ_CHECK(enc.ok());
  std::vector<StreamChunk> out;
  for (const std::string& c : chunks) {
    auto seg = (*enc)->Update(c);
    FUZZ_CHECK(seg.ok());
    if (seg->has_value()) out.push_back(**seg);
  }
  auto last = (*enc)->Finish();
  FUZZ_CHECK(last.ok());
  out.push_back(*last);
  return out;
}

// Open returns the plaintext of each segment, or nullopt when the stream is rejected.
std::optional<std::vector<std::string>> Open(const Setup& s,
                                             const std::vector<StreamChunk>& segments) {
  auto dec = smcrypt::NewAeadStreamDecryptor(s.alg, s.key, kNonce, kAad);
  FUZZ_CHECK(dec.ok());
  std::vector<std::string> pts;
  for (const StreamChunk& seg : segments) {
    auto out = (*dec)->Update(seg.data, seg.tag);
    if (!out.ok()) return std::nullopt;
    if (out->has_value()) pts.push_back((*out)->data);
  }
  auto last = (*dec)->Finish();
  if (!last.ok()) return std::nullopt;
  pts.push_back(last->data);
  return pts;
}

bool SameSegments(const std::vector<StreamChunk>& a, const std::vector<StreamChunk>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].data != b[i].data || a[i].tag != b[i].tag) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  smcrypt::fuzz::FuzzReader in(data, size);
  const uint8_t sel = in.Byte();
  static const Setup kSetups[4] = {
      {Algorithm::kAes128Gcm, absl::string_view(kKey32, 16)},
      {Algorithm::kSm4Gcm, absl::string_view(kKey32, 16)},
      {Algorithm::kSm4Ccm, absl::string_view(kKey32, 16)},
      {Algorithm::kAes256Gcm, absl::string_view(kKey32, 32)},
  };
  const Setup& setup = kSetups[sel % 4];
  const size_t tag_size = (sel & 4) != 0 ? 12 : 16;
  const uint16_t pos = in.U16();
  const std::string plaintext = in.Field();
  const std::string lengths = in.Field();
  std::vector<StreamChunk> fed;
  while (in.remaining() > 0 && fed.size() < 64) {
    StreamChunk seg;
    seg.data = in.Field();
    seg.tag = in.Bytes(in.Byte());
    fed.push_back(std::move(seg));
  }

  // Arbitrary segments: accepted only if they are exactly what sealing the released
  // plaintexts gives.
  if (std::optional<std::vector<std::string>> pts = Open(setup, fed)) {
    FUZZ_CHECK(!fed.empty() && !fed[0].tag.empty());
    std::vector<StreamChunk> resealed = Seal(setup, fed[0].tag.size(), *pts);
    FUZZ_CHECK(SameSegments(resealed, fed));
  }

  // Round trip, then one tampering.
  std::vector<std::string> chunks;
  size_t at = 0;
  for (char c : lengths) {
    const size_t n = std::min<size_t>(static_cast<uint8_t>(c), plaintext.size() - at);
    chunks.push_back(plaintext.substr(at, n));
    at += n;
  }
  chunks.push_back(plaintext.substr(at));
  const std::vector<StreamChunk> sealed = Seal(setup, tag_size, chunks);
  std::optional<std::vector<std::string>> opened = Open(setup, sealed);
  FUZZ_CHECK(opened.has_value());
  std::string joined;
  for (const std::string& p : *opened) joined += p;
  FUZZ_CHECK(joined == plaintext);

  std::vector<StreamChunk> t = sealed;
  const size_t i = (pos >> 2) % t.size();
  switch (pos & 3) {
    case 0: {  // one flipped bit in segment i (ciphertext or tag)
      std::string& b = t[i].data.empty() || (pos & 0x100) != 0 ? t[i].tag : t[i].data;
      const size_t bit = (pos >> 3) % (b.size() * 8);
      b[bit / 8] = static_cast<char>(b[bit / 8] ^ (1 << (bit % 8)));
      break;
    }
    case 1:  // segment i dropped
      t.erase(t.begin() + static_cast<ptrdiff_t>(i));
      break;
    case 2:  // segment i repeated
      t.insert(t.begin() + static_cast<ptrdiff_t>(i), t[i]);
      break;
    case 3:  // segments i and i + 1 swapped, or the stream cut before its final segment
      if (i + 1 < t.size()) {
        std::swap(t[i], t[i + 1]);
      } else {
        t.pop_back();
      }
      break;
  }
  FUZZ_CHECK(!Open(setup, t).has_value());
  return 0;
}
