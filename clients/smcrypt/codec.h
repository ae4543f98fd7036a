// codec.h — text encodings of binary values (hex, base64, raw) and PEM key blocks.
//
// The encoders and decoders work incrementally so the streaming subcommands can encode
// and decode data of any size chunk by chunk; the *All helpers are the one-shot forms.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_CODEC_H_
#define SMCRYPT_CLIENTS_SMCRYPT_CODEC_H_

#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace smcrypt::cli {

// Encoding of binary values on the command line's input and output.
enum class Encoding {
  kHex,     // lower-case hex, one line, newline-terminated; whitespace ignored on input
  kBase64,  // RFC 4648 base64 with padding, one line; whitespace ignored on input
  kRaw,     // the bytes themselves
};

// ParseEncoding reads "hex", "base64" or "raw" (case-insensitive); anything else is
// InvalidArgument listing the accepted values.
absl::StatusOr<Encoding> ParseEncoding(absl::string_view name);

// Encoder turns bytes into text incrementally. Finish() flushes the base64 tail and,
// for the text encodings, appends the final newline.
class Encoder {
 public:
  explicit Encoder(Encoding encoding) : encoding_(encoding) {}
  std::string Update(absl::string_view bytes);
  std::string Finish();

 private:
  Encoding encoding_;
  std::string carry_;  // base64: up to 2 bytes not yet forming a 3-byte group
};

// Decoder turns text into bytes incrementally; whitespace between characters is
// ignored. A character outside the alphabet, an odd number of hex digits or a
// truncated base64 group is InvalidArgument.
class Decoder {
 public:
  explicit Decoder(Encoding encoding) : encoding_(encoding) {}
  absl::Status Update(absl::string_view text, std::string* out);
  absl::Status Finish(std::string* out);

 private:
  Encoding encoding_;
  std::string pending_;  // hex: an odd digit; base64: under 4 characters
};

// EncodeAll encodes `bytes` in one go (newline-terminated for hex and base64).
std::string EncodeAll(Encoding encoding, absl::string_view bytes);

// DecodeAll decodes `text` in one go.
absl::StatusOr<std::string> DecodeAll(Encoding encoding, absl::string_view text);

// DecodeHexFlag decodes the hex value of flag `--flag`; errors name the flag.
absl::StatusOr<std::string> DecodeHexFlag(absl::string_view flag, absl::string_view hex);

// PemSymmetricKey: when `file` is one PEM block of type "SM4 KEY", "AES KEY" or
// "HMAC KEY" (the keyring's symmetric key files, docs/keys.md "The keyring"), returns the raw key
// bytes; nullopt when `file` is something else. A block of one of those types with a
// bad body is InvalidArgument.
// When `type` is not null it receives the block's type ("SM4 KEY", ...) on a match.
absl::StatusOr<std::optional<std::string>> PemSymmetricKey(absl::string_view file,
                                                           std::string* type = nullptr);

// ToPem wraps `der` in a PEM block of `type` (64-character lines, RFC 7468):
// smcrypt::PemEncode (smcrypt/pem.h), which PemSymmetricKey's PemDecode reads back.
std::string ToPem(absl::string_view type, absl::string_view der);

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_CODEC_H_
