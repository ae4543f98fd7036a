// public_key_verify.h — signature verification: SM2, ECDSA (P-256, secp256k1), RSA-PSS.
#ifndef SMCRYPT_PRIMITIVES_PUBLIC_KEY_VERIFY_H_
#define SMCRYPT_PRIMITIVES_PUBLIC_KEY_VERIFY_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace smcrypt {

// VerifyInput is one signature of PublicKeyVerify::VerifyMany.
struct VerifyInput {
  absl::string_view signature;
  absl::string_view data;
};

// PublicKeyVerify checks signatures with a public key held by the object.
//
// Returns OK for a valid signature. A signature that is well encoded but does not
// verify — including r or s outside [1, n-1] (GB/T 32918.2 §7.1 B1–B2) — returns
// kUnauthenticated "signature invalid". A malformed input returns InvalidArgument with
// the reason: a DER signature with trailing bytes or non-minimal INTEGERs, a raw
// signature that is not 2×32 bytes, a digest of the wrong length.
//
// Thread safety: const methods, safe to call concurrently on one object.
class PublicKeyVerify {
 public:
  virtual ~PublicKeyVerify() = default;
  virtual absl::Status Verify(absl::string_view signature, absl::string_view data) const = 0;

  // VerifyMany checks every input with this key: one status per input, in order, each
  // what Verify(signature, data) returns. Implementations may share work across the
  // inputs (SM2: 8 verifications at a time in AVX-512 IFMA lanes once the key's comb
  // table exists); this default calls Verify on each.
  virtual std::vector<absl::Status> VerifyMany(absl::Span<const VerifyInput> inputs) const {
    std::vector<absl::Status> out;
    out.reserve(inputs.size());
    for (const VerifyInput& in : inputs) out.push_back(Verify(in.signature, in.data));
    return out;
  }
};

}  // namespace smcrypt

#endif  // SMCRYPT_PRIMITIVES_PUBLIC_KEY_VERIFY_H_
