#include "crypto/common/der.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/common/status_macros.h"

namespace smcrypt::der {
namespace {

absl::Status DerError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("DER: ", what));
}

}  // namespace

std::string TagName(uint8_t tag) {
  switch (tag) {
    case kInteger: return "INTEGER";
    case kBitString: return "BIT STRING";
    case kOctetString: return "OCTET STRING";
    case kNull: return "NULL";
    case kObjectIdentifier: return "OBJECT IDENTIFIER";
    case kSequence: return "SEQUENCE";
    case 0x31: return "SET";
    default: break;
  }
  if ((tag & 0xe0) == 0xa0) return absl::StrCat("[", tag & 0x1f, "]");
  if ((tag & 0xe0) == 0x80) return absl::StrCat("[", tag & 0x1f, "] IMPLICIT");
  return absl::StrFormat("tag 0x%02x", tag);
}

// ---- Reader ------------------------------------------------------------------------

bool Reader::PeekTag(uint8_t tag) const {
  return !in_.empty() && static_cast<uint8_t>(in_[0]) == tag;
}

absl::Status Reader::ReadAny(uint8_t* tag, absl::string_view* contents) {
  if (in_.empty()) return DerError(absl::StrCat("unexpected end of ", container_));
  const uint8_t id = static_cast<uint8_t>(in_[0]);
  if ((id & 0x1f) == 0x1f) {
    return DerError(absl::StrFormat("high tag number form (identifier 0x%02x) not supported", id));
  }
  if (in_.size() < 2) return DerError(absl::StrCat("truncated length after ", TagName(id)));
  const uint8_t first = static_cast<uint8_t>(in_[1]);
  size_t header = 2;
  size_t len = 0;
  if (first < 0x80) {
    len = first;
  } else if (first == 0x80) {
    return DerError(absl::StrCat("indefinite length in ", TagName(id)));
  } else {
    const size_t num = first & 0x7f;
    if (num > 4) {
      return DerError(absl::StrCat("length of ", TagName(id), " too large (", num, " length octets)"));
    }
    if (in_.size() < 2 + num) {
      return DerError(absl::StrCat("truncated length after ", TagName(id)));
    }
    if (in_[2] == 0) {
      return DerError(absl::StrCat("non-minimal length (leading zero octet) in ", TagName(id)));
    }
    for (size_t i = 0; i < num; ++i) len = (len << 8) | static_cast<uint8_t>(in_[2 + i]);
    if (len < 0x80) {
      return DerError(absl::StrCat("long-form length ", len, " below 128 in ", TagName(id)));
    }
    header += num;
  }
  if (len > in_.size() - header) {
    return DerError(absl::StrCat("length ", len, " of ", TagName(id), " exceeds the remaining ",
                                 in_.size() - header, " bytes of ", container_));
  }
  *tag = id;
  *contents = in_.substr(header, len);
  in_.remove_prefix(header + len);
  last_tag_ = id;
  read_any_ = true;
  return absl::OkStatus();
}

absl::StatusOr<absl::string_view> Reader::ReadElement(uint8_t tag) {
  if (in_.empty()) {
    return DerError(absl::StrCat("expected ", TagName(tag), ", got end of ", container_));
  }
  const uint8_t next = static_cast<uint8_t>(in_[0]);
  if (next != tag) {
    return DerError(absl::StrCat("expected ", TagName(tag), ", got ", TagName(next)));
  }
  uint8_t got;
  absl::string_view contents;
  SMCRYPT_RETURN_IF_ERROR(ReadAny(&got, &contents));
  return contents;
}

absl::StatusOr<Reader> Reader::ReadSequence() {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view contents, ReadElement(kSequence));
  return Reader(contents, "SEQUENCE");
}

absl::StatusOr<Reader> Reader::ReadExplicit(unsigned n) {
  const uint8_t tag = ContextConstructed(n);
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view contents, ReadElement(tag));
  Reader r(contents, "explicit tag");
  return r;
}

absl::StatusOr<std::optional<Reader>> Reader::ReadOptionalExplicit(unsigned n) {
  if (!PeekTag(ContextConstructed(n))) return std::optional<Reader>();
  SMCRYPT_ASSIGN_OR_RETURN(Reader r, ReadExplicit(n));
  return std::optional<Reader>(std::move(r));
}

absl::StatusOr<absl::string_view> Reader::ReadUnsignedIntegerMagnitude() {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view v, ReadElement(kInteger));
  if (v.empty()) return DerError("empty INTEGER");
  const uint8_t b0 = static_cast<uint8_t>(v[0]);
  if (v.size() > 1) {
    const uint8_t b1 = static_cast<uint8_t>(v[1]);
    if ((b0 == 0x00 && b1 < 0x80) || (b0 == 0xff && b1 >= 0x80)) {
      return DerError("non-minimal INTEGER");
    }
  }
  if (b0 >= 0x80) return DerError("negative INTEGER");
  if (b0 == 0x00) v.remove_prefix(1);  // sign octet, or the value 0
  return v;
}

absl::Status Reader::ReadUnsignedInteger(uint8_t* out, size_t width) {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view v, ReadUnsignedIntegerMagnitude());
  if (v.size() > width) {
    return DerError(absl::StrCat("INTEGER too large: ", v.size(), " bytes, at most ", width));
  }
  std::memset(out, 0, width - v.size());
  if (!v.empty()) std::memcpy(out + (width - v.size()), v.data(), v.size());
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Reader::ReadSmallUnsigned() {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view v, ReadUnsignedIntegerMagnitude());
  if (v.size() > 8 || (v.size() == 8 && static_cast<uint8_t>(v[0]) >= 0x80)) {
    return DerError(absl::StrCat("INTEGER too large: ", v.size(), " bytes, expected a small value"));
  }
  uint64_t x = 0;
  for (char c : v) x = (x << 8) | static_cast<uint8_t>(c);
  return x;
}

absl::StatusOr<absl::string_view> Reader::ReadOctetString() { return ReadElement(kOctetString); }

absl::StatusOr<absl::string_view> Reader::ReadBitStringBytes() {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view v, ReadElement(kBitString));
  if (v.empty()) return DerError("empty BIT STRING (no unused-bits octet)");
  const uint8_t unused = static_cast<uint8_t>(v[0]);
  if (unused != 0) {
    return DerError(absl::StrCat("BIT STRING with ", unused, " unused bits, expected 0"));
  }
  return v.substr(1);
}

absl::StatusOr<absl::string_view> Reader::ReadOid() {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view v, ReadElement(kObjectIdentifier));
  if (v.empty()) return DerError("empty OBJECT IDENTIFIER");
  if (static_cast<uint8_t>(v.back()) & 0x80) {
    return DerError("truncated subidentifier in OBJECT IDENTIFIER");
  }
  bool at_start = true;
  for (char c : v) {
    const uint8_t b = static_cast<uint8_t>(c);
    if (at_start && b == 0x80) return DerError("non-minimal subidentifier in OBJECT IDENTIFIER");
    at_start = (b & 0x80) == 0;
  }
  return v;
}

absl::Status Reader::ReadNull() {
  SMCRYPT_ASSIGN_OR_RETURN(absl::string_view v, ReadElement(kNull));
  if (!v.empty()) return DerError(absl::StrCat("NULL with ", v.size(), " content bytes"));
  return absl::OkStatus();
}

absl::Status Reader::Done() const {
  if (in_.empty()) return absl::OkStatus();
  if (!read_any_) {
    return DerError(absl::StrCat(in_.size(), " unexpected bytes in ", container_));
  }
  if (container_ == "input") {
    return DerError(absl::StrCat("trailing bytes after ", TagName(last_tag_), " (", in_.size(),
                                 " bytes)"));
  }
  return DerError(absl::StrCat("trailing bytes after ", TagName(last_tag_), " in ", container_,
                               " (", in_.size(), " bytes)"));
}

// ---- Writer ------------------------------------------------------------------------

void AppendLength(size_t len, SecretData& out) {
  if (len < 0x80) {
    out.push_back(static_cast<uint8_t>(len));
    return;
  }
  uint8_t buf[sizeof(size_t)];
  size_t n = 0;
  for (size_t v = len; v != 0; v >>= 8) buf[n++] = static_cast<uint8_t>(v);
  out.push_back(static_cast<uint8_t>(0x80 | n));
  while (n > 0) out.push_back(buf[--n]);
}

void Writer::AddTlv(uint8_t tag, absl::string_view contents) {
  out_.push_back(tag);
  AppendLength(contents.size(), out_);
  out_.insert(out_.end(), contents.begin(), contents.end());
}

void Writer::AddUnsignedInteger(absl::string_view magnitude) {
  while (!magnitude.empty() && magnitude[0] == 0) magnitude.remove_prefix(1);
  out_.push_back(kInteger);
  if (magnitude.empty()) {
    out_.push_back(1);
    out_.push_back(0);
    return;
  }
  const bool pad = static_cast<uint8_t>(magnitude[0]) >= 0x80;
  AppendLength(magnitude.size() + (pad ? 1 : 0), out_);
  if (pad) out_.push_back(0);
  out_.insert(out_.end(), magnitude.begin(), magnitude.end());
}

void Writer::AddSmallUnsigned(uint64_t v) {
  char buf[8];
  for (int i = 7; i >= 0; --i, v >>= 8) buf[i] = static_cast<char>(v & 0xff);
  AddUnsignedInteger(absl::string_view(buf, 8));
}

void Writer::AddBitString(absl::string_view bytes) {
  out_.push_back(kBitString);
  AppendLength(bytes.size() + 1, out_);
  out_.push_back(0);
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

void Writer::AddRaw(absl::string_view bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }

void Writer::Begin(uint8_t tag) {
  out_.push_back(tag);
  open_.push_back(out_.size());
}

void Writer::End() {
  const size_t start = open_.back();
  open_.pop_back();
  SecretData len;
  AppendLength(out_.size() - start, len);
  out_.insert(out_.begin() + static_cast<std::ptrdiff_t>(start), len.begin(), len.end());
}

std::string Writer::Finish() && {
  std::string s(out_.begin(), out_.end());
  return s;
}

SecretData Writer::FinishSecret() && { return std::move(out_); }

// ---- OIDs --------------------------------------------------------------------------

std::string OidToString(absl::string_view encoded) {
  std::string out;
  uint64_t v = 0;
  bool first = true;
  bool at_start = true;
  if (encoded.empty() || (static_cast<uint8_t>(encoded.back()) & 0x80)) return "<malformed OID>";
  for (char c : encoded) {
    const uint8_t b = static_cast<uint8_t>(c);
    if (at_start && b == 0x80) return "<malformed OID>";
    if (v > (UINT64_MAX >> 7)) return "<malformed OID>";
    v = (v << 7) | (b & 0x7f);
    at_start = (b & 0x80) == 0;
    if (!at_start) continue;
    if (first) {
      const uint64_t arc0 = v < 40 ? 0 : (v < 80 ? 1 : 2);
      absl::StrAppend(&out, arc0, ".", v - 40 * arc0);
      first = false;
    } else {
      absl::StrAppend(&out, ".", v);
    }
    v = 0;
  }
  return out;
}

// ---- ECDSA / SM2 signatures ----------------------------------------------------------

absl::StatusOr<std::string> EcdsaSignatureRawToDer(absl::string_view raw, size_t scalar_size) {
  if (scalar_size == 0 || raw.size() != 2 * scalar_size) {
    return absl::InvalidArgumentError(absl::StrCat("signature: expected ", 2 * scalar_size,
                                                   " bytes (r ‖ s), got ", raw.size()));
  }
  Writer w;
  w.BeginSequence();
  w.AddUnsignedInteger(raw.substr(0, scalar_size));
  w.AddUnsignedInteger(raw.substr(scalar_size));
  w.End();
  return std::move(w).Finish();
}

absl::StatusOr<std::string> EcdsaSignatureDerToRaw(absl::string_view der, size_t scalar_size) {
  if (scalar_size == 0) return absl::InvalidArgumentError("signature: scalar size 0");
  Reader top(der);
  SMCRYPT_ASSIGN_OR_RETURN(Reader seq, top.ReadSequence());
  SMCRYPT_RETURN_IF_ERROR(top.Done());
  std::string raw(2 * scalar_size, '\0');
  uint8_t* out = reinterpret_cast<uint8_t*>(raw.data());
  SMCRYPT_RETURN_IF_ERROR(seq.ReadUnsignedInteger(out, scalar_size));
  SMCRYPT_RETURN_IF_ERROR(seq.ReadUnsignedInteger(out + scalar_size, scalar_size));
  SMCRYPT_RETURN_IF_ERROR(seq.Done());
  return raw;
}

}  // namespace smcrypt::der
