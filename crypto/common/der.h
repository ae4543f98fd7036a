// der.h — a small strict DER reader and writer (ITU-T X.690 §8 and §10) for the key,
// signature and ciphertext encodings smcrypt reads and writes: SubjectPublicKeyInfo
// (RFC 5280), PKCS#8 (RFC 5208) with ECPrivateKey (RFC 5915), ECDSA/SM2 signatures
// (RFC 3279 §2.2.3, GM/T 0009-2012 §7.3) and SM2Cipher (GM/T 0009-2012 §7.2).
//
// Internal header (namespace smcrypt::der); not part of the public API.
//
// The reader accepts DER only, never BER: definite lengths in the shortest form
// (X.690 §10.1), tag numbers below 31 (single identifier octet), minimal INTEGERs
// (§8.3.2), BIT STRINGs whose unused-bit count is zero where keys are read, and no
// bytes after the last element. Every defect is reported as InvalidArgument
// "DER: <defect>". Reading never copies: element contents are views into the input.
//
// Constant time: parsing branches on the structure (tags, lengths, INTEGER signs and
// leading octets), never on the contents of OCTET STRINGs, so a private scalar carried
// in an OCTET STRING (RFC 5915) is only copied, never inspected. The writer's Secret
// output keeps every intermediate buffer in wiped storage.
#ifndef SMCRYPT_CRYPTO_COMMON_DER_H_
#define SMCRYPT_CRYPTO_COMMON_DER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::der {

// Identifier octets (X.690 §8.1.2) of the universal types used here.
inline constexpr uint8_t kInteger = 0x02;
inline constexpr uint8_t kBitString = 0x03;
inline constexpr uint8_t kOctetString = 0x04;
inline constexpr uint8_t kNull = 0x05;
inline constexpr uint8_t kObjectIdentifier = 0x06;
inline constexpr uint8_t kSequence = 0x30;  // constructed
// ContextConstructed(n) is the identifier of an explicit context tag [n] (0 ≤ n < 31).
inline constexpr uint8_t ContextConstructed(unsigned n) {
  return static_cast<uint8_t>(0xa0 | (n & 0x1f));
}
// ContextPrimitive(n) is the identifier of an implicit primitive context tag [n].
inline constexpr uint8_t ContextPrimitive(unsigned n) {
  return static_cast<uint8_t>(0x80 | (n & 0x1f));
}

// TagName returns a printable name for an identifier octet ("INTEGER", "[1]", "tag 0x13").
std::string TagName(uint8_t tag);

// Reader walks the elements of one DER value (the whole input, or the contents of a
// constructed element) from left to right. Each Read* consumes one element; on error
// the reader's position is unspecified and it should be dropped. Not thread-safe.
class Reader {
 public:
  // `in` must outlive the reader and every view it returns. `container` names what
  // the bytes are the contents of, for error messages ("input", "SEQUENCE", "[1]").
  explicit Reader(absl::string_view in, absl::string_view container = "input")
      : in_(in), container_(container) {}
  // A temporary string would leave the reader's views dangling.
  explicit Reader(std::string&& in, absl::string_view container = "input") = delete;

  bool empty() const { return in_.empty(); }
  absl::string_view remaining() const { return in_; }

  // PeekTag returns true when the next element's identifier octet is `tag`; false at
  // the end of the input or for another tag. It does not validate the element.
  bool PeekTag(uint8_t tag) const;

  // ReadAny reads one TLV of any tag: the identifier octet into `*tag` and the contents
  // into `*contents`. Errors: truncated header, high tag number form (tag ≥ 31),
  // indefinite length, long form for a length below 128, leading zero length octets,
  // length above 2^32 − 1 or beyond the remaining input.
  absl::Status ReadAny(uint8_t* tag, absl::string_view* contents);

  // ReadElement reads one TLV whose identifier must be `tag` and returns its contents.
  // Errors: as ReadAny, plus "DER: expected <tag>, got <tag>" and "DER: expected <tag>,
  // got end of <container>".
  absl::StatusOr<absl::string_view> ReadElement(uint8_t tag);

  // ReadSequence reads a SEQUENCE and returns a reader over its contents.
  absl::StatusOr<Reader> ReadSequence();
  // ReadExplicit reads an explicit context tag [n] and returns a reader over its contents.
  absl::StatusOr<Reader> ReadExplicit(unsigned n);
  // ReadOptionalExplicit returns nullopt when the next element is not [n].
  absl::StatusOr<std::optional<Reader>> ReadOptionalExplicit(unsigned n);

  // ReadUnsignedInteger reads an INTEGER that must be minimal (X.690 §8.3.2: non-empty;
  // no leading 00 before a byte below 0x80, no leading FF before a byte from 0x80) and
  // non-negative, and writes its value to `out` as `width` big-endian bytes, left-padded
  // with zeros. Errors: "DER: empty INTEGER", "DER: non-minimal INTEGER", "DER: negative
  // INTEGER", "DER: INTEGER too large: N bytes, at most <width>".
  absl::Status ReadUnsignedInteger(uint8_t* out, size_t width);
  // ReadUnsignedIntegerMagnitude reads a minimal non-negative INTEGER and returns its
  // magnitude without leading zero bytes (empty for the value 0).
  absl::StatusOr<absl::string_view> ReadUnsignedIntegerMagnitude();
  // ReadSmallUnsigned reads a minimal non-negative INTEGER below 2^63 (versions).
  absl::StatusOr<uint64_t> ReadSmallUnsigned();

  // ReadOctetString returns the contents of an OCTET STRING.
  absl::StatusOr<absl::string_view> ReadOctetString();
  // ReadBitStringBytes reads a BIT STRING whose unused-bit count is 0 and returns its
  // bytes (the contents after the initial octet). Errors: "DER: empty BIT STRING",
  // "DER: BIT STRING with N unused bits".
  absl::StatusOr<absl::string_view> ReadBitStringBytes();
  // ReadOid returns the contents of an OBJECT IDENTIFIER after checking the subidentifier
  // encoding (X.690 §8.19: non-empty, minimal base-128, last octet terminates).
  absl::StatusOr<absl::string_view> ReadOid();
  // ReadNull reads NULL (contents must be empty).
  absl::Status ReadNull();

  // Done returns OK when the input is used up, else "DER: N trailing bytes after
  // <last element> in <container>" (or "... at end of input" at top level).
  absl::Status Done() const;

 private:
  absl::string_view in_;
  absl::string_view container_;
  uint8_t last_tag_ = 0;
  bool read_any_ = false;
};

// Writer builds one DER value. Primitive elements are appended with Add*; constructed
// ones are opened with Begin* and closed with End, which writes the minimal length.
// Storage is wiped when freed or grown (SecretData), so a Writer may carry private keys.
class Writer {
 public:
  // AddTlv appends one element with identifier `tag` and `contents`.
  void AddTlv(uint8_t tag, absl::string_view contents);
  // AddUnsignedInteger appends the INTEGER whose value is the big-endian unsigned
  // `magnitude` (any leading zeros allowed; empty means 0), encoded minimally. Runs in
  // time that depends on the value's leading zeros: for public values only.
  void AddUnsignedInteger(absl::string_view magnitude);
  void AddSmallUnsigned(uint64_t v);
  void AddOctetString(absl::string_view bytes) { AddTlv(kOctetString, bytes); }
  // AddBitString appends a BIT STRING of whole bytes (unused-bit count 0).
  void AddBitString(absl::string_view bytes);
  // AddOid appends an OBJECT IDENTIFIER given its encoded contents.
  void AddOid(absl::string_view encoded) { AddTlv(kObjectIdentifier, encoded); }
  void AddNull() { AddTlv(kNull, {}); }
  // AddRaw appends bytes as they are (already-encoded elements, a BIT STRING's
  // unused-bit octet inside Begin(kBitString)).
  void AddRaw(absl::string_view bytes);

  // Begin opens a constructed element (or any element built from parts, such as an
  // OCTET STRING wrapping an encoding); End closes the innermost open one.
  void Begin(uint8_t tag);
  void BeginSequence() { Begin(kSequence); }
  void BeginExplicit(unsigned n) { Begin(ContextConstructed(n)); }
  void End();

  // Finish returns the encoding; every Begin must have been closed.
  std::string Finish() &&;
  // FinishSecret returns the encoding in wiped storage.
  SecretData FinishSecret() &&;

 private:
  SecretData out_;
  std::vector<size_t> open_;  // offsets of the contents of open elements
};

// AppendLength appends the DER length octets for `len` (X.690 §8.1.3, minimal form).
void AppendLength(size_t len, SecretData& out);

// OidToString formats encoded OID contents in dotted decimal ("1.2.156.10197.1.301");
// malformed contents give "<malformed OID>".
std::string OidToString(absl::string_view encoded);

// Encoded contents of the OIDs used for EC keys.
inline constexpr absl::string_view kOidEcPublicKey{  // 1.2.840.10045.2.1 (RFC 5480)
    "\x2a\x86\x48\xce\x3d\x02\x01", 7};
inline constexpr absl::string_view kOidSm2p256v1{  // 1.2.156.10197.1.301 (GM/T 0006)
    "\x2a\x81\x1c\xcf\x55\x01\x82\x2d", 8};
inline constexpr absl::string_view kOidPrime256v1{  // 1.2.840.10045.3.1.7 (RFC 5480)
    "\x2a\x86\x48\xce\x3d\x03\x01\x07", 8};
inline constexpr absl::string_view kOidSecp256k1{  // 1.3.132.0.10 (SEC 2)
    "\x2b\x81\x04\x00\x0a", 5};

// EcdsaSignatureRawToDer converts r ‖ s, each `scalar_size` bytes big-endian, into
// DER SEQUENCE { r INTEGER, s INTEGER } with minimal INTEGERs (RFC 3279 §2.2.3,
// SEC 1 §C.5; GM/T 0009-2012 §7.3 for SM2). Values 0 and ≥ n are encoded as given.
// Errors: InvalidArgument "signature: expected 2×scalar_size bytes (r ‖ s), got N".
absl::StatusOr<std::string> EcdsaSignatureRawToDer(absl::string_view raw, size_t scalar_size);

// EcdsaSignatureDerToRaw parses DER SEQUENCE { r, s } strictly (minimal lengths and
// INTEGERs, non-negative, each < 2^(8·scalar_size), no trailing bytes, nothing else in
// the SEQUENCE) and returns r ‖ s (2·scalar_size bytes). Range checks against the group
// order are left to verification. Errors: InvalidArgument "DER: <defect>".
absl::StatusOr<std::string> EcdsaSignatureDerToRaw(absl::string_view der, size_t scalar_size);

}  // namespace smcrypt::der

#endif  // SMCRYPT_CRYPTO_COMMON_DER_H_
