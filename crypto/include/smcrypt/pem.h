// pem.h — PEM text encoding of DER values (RFC 7468): "-----BEGIN <label>-----",
// base64 lines, "-----END <label>-----". Used for keys (PRIVATE KEY, PUBLIC KEY) and the
// keyring's symmetric-key blocks (SM4 KEY, AES KEY, HMAC KEY).
//
// Constant time: base64 characters are mapped to values with mask arithmetic (no table
// indexed by the data), so decoding and encoding a private key do not leak its bytes
// through memory access patterns. Line structure and validity are public.
#ifndef SMCRYPT_PEM_H_
#define SMCRYPT_PEM_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/secret_data.h"

namespace smcrypt {

// PemBlock is one decoded PEM block: its label ("PRIVATE KEY") and the decoded bytes,
// kept in wiped storage because they are often private keys.
struct PemBlock {
  std::string label;
  SecretData der;
};

// PemEncode returns "-----BEGIN <label>-----\n", the base64 of `der` (RFC 4648 §4, with
// padding) in lines of 64 characters, and "-----END <label>-----\n" (RFC 7468 §2, the
// strict form of §3). `label` should follow RFC 7468's grammar (e.g. "PUBLIC KEY").
// The returned text is as sensitive as `der`; callers holding private keys wipe it.
std::string PemEncode(absl::string_view label, absl::string_view der);

// PemDecode decodes the first PEM block in `text`. Text before the BEGIN line and after
// the END line is ignored (RFC 7468 §2); lines may end in LF or CRLF, and whitespace
// around base64 lines and blank lines inside the block are tolerated. Strict on the
// rest: the BEGIN and END labels must be equal and well-formed, the body must be
// canonical base64 (alphabet of RFC 4648 §4, length a multiple of 4, '=' padding only at
// the end, unused bits zero) and non-empty, and encapsulated headers ("Proc-Type:", the
// legacy encrypted form of RFC 1421) are rejected.
// Errors: InvalidArgument "PEM: <reason>" (no BEGIN line, missing END line, label
// mismatch, bad base64 character/padding/length, empty body, headers).
absl::StatusOr<PemBlock> PemDecode(absl::string_view text);

// LooksLikePem reports whether `in` starts, after spaces, tabs and line breaks, with
// "-----BEGIN". Inputs of 65 bytes or less — too short for any PEM block that holds a
// key, and the sizes of raw 32-byte scalars and 33- or 65-byte points — are answered from
// their length alone, without reading a byte, so probing a raw secret key reveals nothing.
bool LooksLikePem(absl::string_view in);

// PemDecodeAll decodes every PEM block in `text`, in order (text between blocks is
// ignored). Errors: as PemDecode, for the first bad block; "PEM: no BEGIN line" when
// `text` holds no block at all.
absl::StatusOr<std::vector<PemBlock>> PemDecodeAll(absl::string_view text);

}  // namespace smcrypt

#endif  // SMCRYPT_PEM_H_
