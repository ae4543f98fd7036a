#include "clients/smcrypt/codec.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "smcrypt/pem.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::cli {
namespace {

// The hex decoder stays hand-written: absl::HexStringToBytes of Debian 12's Abseil
// (20220623) does not report bad digits or an odd length, and the decoder here works
// chunk by chunk (streams) and skips whitespace (hex files with line breaks).
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

}  // namespace

absl::StatusOr<Encoding> ParseEncoding(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (lower == "hex") return Encoding::kHex;
  if (lower == "base64") return Encoding::kBase64;
  if (lower == "raw") return Encoding::kRaw;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format \"", name, "\"; expected hex, base64 or raw"));
}

std::string Encoder::Update(absl::string_view bytes) {
  switch (encoding_) {
    case Encoding::kRaw:
      return std::string(bytes);
    case Encoding::kHex:
      return absl::BytesToHexString(bytes);
    case Encoding::kBase64: {
      carry_.append(bytes.data(), bytes.size());
      size_t whole = carry_.size() - carry_.size() % 3;
      std::string out = absl::Base64Escape(absl::string_view(carry_).substr(0, whole));
      carry_.erase(0, whole);
      return out;
    }
  }
  return {};
}

std::string Encoder::Finish() {
  switch (encoding_) {
    case Encoding::kRaw:
      return {};
    case Encoding::kHex:
      return "\n";
    case Encoding::kBase64: {
      std::string out = absl::Base64Escape(carry_);
      carry_.clear();
      return out + "\n";
    }
  }
  return {};
}

absl::Status Decoder::Update(absl::string_view text, std::string* out) {
  switch (encoding_) {
    case Encoding::kRaw:
      out->append(text.data(), text.size());
      return absl::OkStatus();
    case Encoding::kHex:
      for (char c : text) {
        if (IsSpace(c)) continue;
        if (HexValue(c) < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("bad hex: unexpected character '", std::string(1, c), "'"));
        }
        pending_.push_back(c);
        if (pending_.size() == 2) {
          out->push_back(static_cast<char>(HexValue(pending_[0]) << 4 |
                                           HexValue(pending_[1])));
          pending_.clear();
        }
      }
      return absl::OkStatus();
    case Encoding::kBase64: {
      for (char c : text) {
        if (!IsSpace(c)) pending_.push_back(c);
      }
      size_t whole = pending_.size() - pending_.size() % 4;
      if (whole == 0) return absl::OkStatus();
      std::string decoded;
      if (!absl::Base64Unescape(absl::string_view(pending_).substr(0, whole), &decoded)) {
        return absl::InvalidArgumentError("bad base64");
      }
      out->append(decoded);
      pending_.erase(0, whole);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Decoder::Finish(std::string* out) {
  if (pending_.empty()) return absl::OkStatus();
  if (encoding_ == Encoding::kHex) {
    return absl::InvalidArgumentError("bad hex: odd number of digits");
  }
  std::string decoded;
  if (!absl::Base64Unescape(pending_, &decoded)) {
    return absl::InvalidArgumentError("bad base64: truncated input");
  }
  out->append(decoded);
  pending_.clear();
  return absl::OkStatus();
}

std::string EncodeAll(Encoding encoding, absl::string_view bytes) {
  Encoder encoder(encoding);
  std::string out = encoder.Update(bytes);
  out += encoder.Finish();  // after Update: the base64 tail depends on it
  return out;
}

absl::StatusOr<std::string> DecodeAll(Encoding encoding, absl::string_view text) {
  Decoder decoder(encoding);
  std::string out;
  if (absl::Status s = decoder.Update(text, &out); !s.ok()) return s;
  if (absl::Status s = decoder.Finish(&out); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::string> DecodeHexFlag(absl::string_view flag, absl::string_view hex) {
  absl::StatusOr<std::string> bytes = DecodeAll(Encoding::kHex, hex);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": ", bytes.status().message()));
  }
  return bytes;
}

absl::StatusOr<std::optional<std::string>> PemSymmetricKey(absl::string_view file,
                                                           std::string* type_out) {
  absl::string_view text = absl::StripAsciiWhitespace(file);
  for (absl::string_view type : {"SM4 KEY", "AES KEY", "HMAC KEY"}) {
    if (!absl::StartsWith(text, absl::StrCat("-----BEGIN ", type, "-----"))) continue;
    absl::StatusOr<PemBlock> block = PemDecode(text);
    if (!block.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("PEM ", type, " block: ", block.status().message()));
    }
    if (type_out != nullptr) *type_out = std::string(type);
    return std::optional<std::string>(std::string(SecretDataAsStringView(block->der)));
  }
  return std::optional<std::string>();
}

std::string ToPem(absl::string_view type, absl::string_view der) {
  return PemEncode(type, der);
}

}  // namespace smcrypt::cli
