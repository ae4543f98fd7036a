// aead.h — authenticated encryption with associated data, with an explicit nonce.
#ifndef SMCRYPT_PRIMITIVES_AEAD_H_
#define SMCRYPT_PRIMITIVES_AEAD_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

// Aead seals and opens messages under one key: SM4-GCM and SM4-CCM (RFC 8998),
// AES-128/256-GCM. The plaintext is kept secret and authenticated; the associated data
// `aad` is authenticated only. Secure against adaptive chosen-ciphertext attacks as long
// as a (key, nonce) pair is never used for two messages.
//
// Output of Seal is ciphertext ‖ tag (tag_size() bytes); Open takes the same layout, and
// OpenDetached the ciphertext and the tag as two spans (no copy to join them).
//
// Errors: InvalidArgument for a nonce of the wrong length or a message over the
// mode's limit (with expected and actual sizes), and InvalidArgument "decryption failed"
// for any authentication failure — the message never says which check failed.
//
// WARNING: reusing a nonce under one key breaks GCM and CCM completely (for GCM it
// reveals the GHASH key). Let the service draw nonces, or use a counter.
//
// Thread safety: const methods, safe to call concurrently on one object.
class Aead {
 public:
  virtual ~Aead() = default;

  // Seal encrypts `plaintext` with `nonce` and authenticates it with `aad`.
  virtual absl::StatusOr<std::string> Seal(absl::string_view nonce, absl::string_view plaintext,
                                           absl::string_view aad) const = 0;

  // Open checks the tag at the end of `ciphertext_and_tag` in constant time and returns
  // the plaintext; nothing is returned when the tag is wrong.
  virtual absl::StatusOr<std::string> Open(absl::string_view nonce,
                                           absl::string_view ciphertext_and_tag,
                                           absl::string_view aad) const = 0;

  // OpenDetached is Open with the tag apart: `ciphertext` without the tag, and `tag` of
  // exactly tag_size() bytes (else InvalidArgument naming both sizes). Same checks, same
  // errors and the same constant-time tag comparison as Open.
  virtual absl::StatusOr<std::string> OpenDetached(absl::string_view nonce,
                                                   absl::string_view ciphertext,
                                                   absl::string_view tag,
                                                   absl::string_view aad) const = 0;

  // tag_size is the tag length in bytes (GCM 12–16, CCM 4–16 even).
  virtual size_t tag_size() const = 0;
  // nonce_size is the recommended nonce length in bytes (12 for GCM and RFC 8998 CCM);
  // the service draws nonces of this length.
  virtual size_t nonce_size() const = 0;
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_AEAD_H_
