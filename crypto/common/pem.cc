// pem.cc — RFC 7468 PEM with a constant-time base64 codec (RFC 4648 §4).
#include "smcrypt/pem.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"

namespace smcrypt {
namespace {

constexpr absl::string_view kBegin = "-----BEGIN ";
constexpr absl::string_view kEnd = "-----END ";
constexpr absl::string_view kDashes = "-----";
constexpr size_t kLineChars = 64;

absl::Status PemError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("PEM: ", what));
}

// Masks over small non-negative values (< 2^31): all-ones or zero.
inline uint32_t LtMask(uint32_t a, uint32_t b) { return ValueBarrier(0u - ((a - b) >> 31)); }
inline uint32_t InRangeMask(uint32_t c, uint32_t lo, uint32_t hi) {
  return ~LtMask(c, lo) & ~LtMask(hi, c);
}
inline uint32_t EqMask(uint32_t a, uint32_t b) { return CtEq32(a, b); }

// Layout, not content: the parser below branches on whether a character is a line
// feed, whitespace, '=' padding or a '-' of a BEGIN/END line, never on which base64
// character it is. Those class bits are the text's public layout (line lengths, where
// the body ends) — a base64 body character is never in any of these classes — so each
// is computed with masks and declassified on its own (CtDeclassify, for the
// valgrind constant-time check in tests/ct); the character itself stays secret.
inline bool Is(uint32_t mask) { return CtDeclassify(mask) != 0; }
inline uint32_t SpaceMask(uint8_t ch) {
  const uint32_t c = ch;
  return EqMask(c, ' ') | InRangeMask(c, '\t', '\r');
}

// IsSpace is true for the six ASCII whitespace characters (SP, HT, LF, VT, FF, CR), by
// comparisons rather than absl::ascii_isspace's 256-entry table, which a base64 body
// (a private key) would index with its secret characters.
inline bool IsSpace(uint8_t ch) { return Is(SpaceMask(ch)); }
inline bool IsChar(uint8_t ch, char c) { return Is(EqMask(ch, static_cast<uint8_t>(c))); }

// LineStartsWith is absl::StartsWith for a line that may be base64 body: the bytes are
// compared with masks and only the verdict is declassified (a body line never starts
// with '-').
bool LineStartsWith(absl::string_view line, absl::string_view prefix) {
  if (line.size() < prefix.size()) return false;  // lengths are public
  uint32_t diff = 0;
  for (size_t i = 0; i < prefix.size(); ++i) {
    diff |= static_cast<uint8_t>(line[i]) ^ static_cast<uint8_t>(prefix[i]);
  }
  return Is(CtIsZero32(diff));
}

// StripSpace removes leading and trailing whitespace (IsSpace) from `line`.
absl::string_view StripSpace(absl::string_view line) {
  while (!line.empty() && IsSpace(static_cast<uint8_t>(line.front()))) line.remove_prefix(1);
  while (!line.empty() && IsSpace(static_cast<uint8_t>(line.back()))) line.remove_suffix(1);
  return line;
}

// Base64Value maps a base64 character to 0..63, or returns 0x100 when it is not one.
inline uint32_t Base64Value(uint8_t ch) {
  const uint32_t c = ch;
  const uint32_t upper = InRangeMask(c, 'A', 'Z');
  const uint32_t lower = InRangeMask(c, 'a', 'z');
  const uint32_t digit = InRangeMask(c, '0', '9');
  const uint32_t plus = EqMask(c, '+');
  const uint32_t slash = EqMask(c, '/');
  const uint32_t value = (upper & (c - 'A')) | (lower & (c - 'a' + 26)) |
                         (digit & (c - '0' + 52)) | (plus & 62) | (slash & 63);
  const uint32_t valid = upper | lower | digit | plus | slash;
  return (valid & value) | (~valid & 0x100);
}

// Base64Char maps 0..63 to its character.
inline char Base64Char(uint32_t v) {
  const uint32_t c = (LtMask(v, 26) & (v + 'A')) | (InRangeMask(v, 26, 51) & (v - 26 + 'a')) |
                     (InRangeMask(v, 52, 61) & (v - 52 + '0')) | (EqMask(v, 62) & '+') |
                     (EqMask(v, 63) & '/');
  return static_cast<char>(c);
}

// ValidLabel checks RFC 7468 §3's label grammar: labelchar *( ["-" / SP] labelchar ),
// labelchar = %x21-2C / %x2E-7E. The empty label is allowed by the grammar.
bool ValidLabel(absl::string_view label) {
  for (size_t i = 0; i < label.size(); ++i) {
    const char c = label[i];
    const bool labelchar = c >= 0x21 && c <= 0x7e && c != '-';
    if (labelchar) continue;
    if ((c == '-' || c == ' ') && i > 0 && i + 1 < label.size()) {
      const char prev = label[i - 1];
      if (prev != '-' && prev != ' ') continue;
    }
    return false;
  }
  return true;
}

// NextLine returns the line at `*pos` (without its LF) and advances past it.
absl::string_view NextLine(absl::string_view text, size_t* pos) {
  const size_t start = *pos;
  size_t end = start;  // the line feeds' positions are public; the other bytes are not
  while (end < text.size() && !IsChar(static_cast<uint8_t>(text[end]), '\n')) ++end;
  *pos = end < text.size() ? end + 1 : end;
  return text.substr(start, end - start);
}

// DecodeBase64 decodes canonical base64 text (whitespace already removed).
absl::StatusOr<SecretData> DecodeBase64(const SecretData& b64) {
  if (b64.empty()) return PemError("empty body");
  if (b64.size() % 4 != 0) {
    return PemError(absl::StrCat("base64 length ", b64.size(), " is not a multiple of 4"));
  }
  size_t pad = 0;  // public: it follows from the length of the encoded value
  if (IsChar(b64[b64.size() - 1], '=')) pad = IsChar(b64[b64.size() - 2], '=') ? 2 : 1;
  const size_t data_chars = b64.size() - pad;
  SecretData out;
  out.reserve(b64.size() / 4 * 3);
  uint32_t invalid = 0;
  for (size_t i = 0; i < b64.size(); i += 4) {
    uint32_t v[4];
    for (size_t j = 0; j < 4; ++j) {
      v[j] = i + j < data_chars ? Base64Value(b64[i + j]) : 0;
    }
    invalid |= (v[0] | v[1] | v[2] | v[3]) & 0x100;
    const uint32_t group = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    const size_t bytes = i + 4 <= data_chars ? 3 : 3 - pad;
    out.push_back(static_cast<uint8_t>(group >> 16));
    if (bytes > 1) out.push_back(static_cast<uint8_t>(group >> 8));
    if (bytes > 2) out.push_back(static_cast<uint8_t>(group));
    if (bytes < 3) {
      // Canonical encoding: the bits below the last byte must be zero (RFC 4648 §3.5).
      const uint32_t unused = bytes == 1 ? (group & 0xffff) : (group & 0xff);
      invalid |= ~CtIsZero32(unused) & 0x200;
    }
  }
  invalid = CtDeclassify(invalid);  // public: the verdict is what is returned
  if (invalid & 0x100) {
    // Find the offending character for the message; invalid input is not secret.
    for (size_t i = 0; i < data_chars; ++i) {
      if (Base64Value(b64[i]) & 0x100) {
        const uint8_t c = b64[i];
        if (c == '=') return PemError("base64 padding '=' before the end of the body");
        return PemError(absl::StrFormat("invalid base64 character 0x%02x", c));
      }
    }
  }
  if (invalid & 0x200) return PemError("non-canonical base64 (non-zero unused bits)");
  return out;
}

// ParseBlock decodes the block whose BEGIN line is the first at or after `*pos`.
// Returns nullopt when there is no BEGIN line; advances `*pos` past the END line.
absl::StatusOr<std::optional<PemBlock>> ParseBlock(absl::string_view text, size_t* pos) {
  std::string label;
  bool found = false;
  while (*pos < text.size()) {
    absl::string_view line = StripSpace(NextLine(text, pos));
    if (!LineStartsWith(line, kBegin)) continue;
    line.remove_prefix(kBegin.size());
    if (!absl::EndsWith(line, kDashes)) return PemError("BEGIN line does not end in \"-----\"");
    line.remove_suffix(kDashes.size());
    if (!ValidLabel(line)) return PemError(absl::StrCat("malformed label \"", line, "\""));
    label = std::string(line);
    found = true;
    break;
  }
  if (!found) return std::optional<PemBlock>();

  SecretData b64;
  bool seen_padding = false;
  while (true) {
    if (*pos >= text.size()) return PemError(absl::StrCat("missing END line for \"", label, "\""));
    absl::string_view line = StripSpace(NextLine(text, pos));
    if (LineStartsWith(line, kEnd)) {
      line.remove_prefix(kEnd.size());
      if (!absl::EndsWith(line, kDashes)) return PemError("END line does not end in \"-----\"");
      line.remove_suffix(kDashes.size());
      if (line != label) {
        return PemError(absl::StrCat("END label \"", line, "\" does not match BEGIN label \"",
                                     label, "\""));
      }
      break;
    }
    if (LineStartsWith(line, kDashes)) {
      return PemError(absl::StrCat("missing END line for \"", label, "\""));
    }
    uint32_t colon = 0;
    for (char c : line) colon |= EqMask(static_cast<uint8_t>(c), ':');
    if (Is(colon)) {
      return PemError("encapsulated headers (RFC 1421, encrypted PEM) are not supported");
    }
    for (char c : line) {
      const uint8_t u = static_cast<uint8_t>(c);
      if (IsSpace(u)) continue;
      const bool is_pad = IsChar(u, '=');
      if (seen_padding && !is_pad) return PemError("base64 data after '=' padding");
      if (is_pad) seen_padding = true;
      b64.push_back(u);
    }
  }
  // At most two '=' and only at the very end; DecodeBase64 checks their placement.
  size_t pads = 0;
  for (size_t i = b64.size(); i > 0 && IsChar(b64[i - 1], '='); --i) ++pads;
  if (pads > 2) return PemError("more than two '=' padding characters");
  auto der = DecodeBase64(b64);
  if (!der.ok()) return der.status();
  PemBlock block{std::move(label), *std::move(der)};
  return std::optional<PemBlock>(std::move(block));
}

}  // namespace

std::string PemEncode(absl::string_view label, absl::string_view der) {
  std::string out;
  const size_t b64_size = (der.size() + 2) / 3 * 4;
  out.reserve(2 * (label.size() + 17) + b64_size + b64_size / kLineChars + 2);
  absl::StrAppend(&out, kBegin, label, kDashes, "\n");
  size_t column = 0;
  auto put = [&](char c) {
    out.push_back(c);
    if (++column == kLineChars) {
      out.push_back('\n');
      column = 0;
    }
  };
  const uint8_t* p = reinterpret_cast<const uint8_t*>(der.data());
  size_t i = 0;
  for (; i + 3 <= der.size(); i += 3) {
    const uint32_t g = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    put(Base64Char(g >> 18));
    put(Base64Char((g >> 12) & 63));
    put(Base64Char((g >> 6) & 63));
    put(Base64Char(g & 63));
  }
  const size_t rest = der.size() - i;
  if (rest > 0) {
    uint32_t g = uint32_t{p[i]} << 16;
    if (rest == 2) g |= uint32_t{p[i + 1]} << 8;
    put(Base64Char(g >> 18));
    put(Base64Char((g >> 12) & 63));
    put(rest == 2 ? Base64Char((g >> 6) & 63) : '=');
    put('=');
  }
  if (column != 0) out.push_back('\n');
  absl::StrAppend(&out, kEnd, label, kDashes, "\n");
  return out;
}

absl::StatusOr<PemBlock> PemDecode(absl::string_view text) {
  size_t pos = 0;
  auto block = ParseBlock(text, &pos);
  if (!block.ok()) return block.status();
  if (!block->has_value()) return PemError("no BEGIN line");
  return std::move(**block);
}

absl::StatusOr<std::vector<PemBlock>> PemDecodeAll(absl::string_view text) {
  std::vector<PemBlock> blocks;
  size_t pos = 0;
  while (true) {
    auto block = ParseBlock(text, &pos);
    if (!block.ok()) return block.status();
    if (!block->has_value()) break;
    blocks.push_back(std::move(**block));
  }
  if (blocks.empty()) return PemError("no BEGIN line");
  return blocks;
}

bool LooksLikePem(absl::string_view in) {
  // Every PEM block that can hold a key (the shortest, an "SM4 KEY", is 71 bytes) is
  // longer than the raw forms: 32-byte scalars, 33- and 65-byte points.
  // A longer raw key (an HMAC key, say) is secret: every position is examined with
  // masks and only the verdict is declassified, so the time does not depend on how
  // many of its first bytes happen to be whitespace.
  constexpr size_t kMinPemSize = 66;
  if (in.size() < kMinPemSize) return false;
  constexpr absl::string_view kTag = "-----BEGIN";
  uint32_t leading = ~0u;  // every byte before i is ' ', '\t', '\r' or '\n'
  uint32_t found = 0;
  for (size_t i = 0; i + kTag.size() <= in.size(); ++i) {
    uint32_t diff = 0;
    for (size_t j = 0; j < kTag.size(); ++j) {
      diff |= static_cast<uint8_t>(in[i + j]) ^ static_cast<uint8_t>(kTag[j]);
    }
    found |= leading & CtIsZero32(diff);
    const uint32_t c = static_cast<uint8_t>(in[i]);
    leading &= EqMask(c, ' ') | EqMask(c, '\t') | EqMask(c, '\r') | EqMask(c, '\n');
  }
  return Is(found);
}

}  // namespace smcrypt
