// Encrypted PKCS#8 fuzzer (smcrypt/pkcs8.h).
//  - mode 0: the rest as an EncryptedPrivateKeyInfo (DER or PEM) with the given password:
//    IsEncryptedPrivateKeyInfo, GetPbes2Params and, when the parameters ask for at most
//    64 PBKDF2 iterations (so one input stays fast), DecryptPrivateKeyInfo. A parameter
//    error from GetPbes2Params is the error DecryptPrivateKeyInfo returns; what decrypts
//    is PrivateKeyInfo DER, which encrypts again and decrypts back to itself.
//  - mode 1: the rest as PrivateKeyInfo DER: what EncryptPrivateKeyInfo accepts (one
//    iteration, either scheme) decrypts back to the same bytes.
// Errors, never crashes; aborts on any mismatch.
//
// Input: mode byte ‖ password Field (u16 length ‖ bytes) ‖ rest.
#include <string>

#include "smcrypt/pkcs8.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using smcrypt::Pbes2Scheme;

void RoundTrip(const std::string& pki, const std::string& password, Pbes2Scheme scheme) {
  auto enc = smcrypt::EncryptPrivateKeyInfo(pki, password, scheme, 1);
  if (!enc.ok()) return;
  FUZZ_CHECK(smcrypt::IsEncryptedPrivateKeyInfo(*enc));
  auto params = smcrypt::GetPbes2Params(*enc);
  FUZZ_CHECK(params.ok() && params->iterations == 1 && params->scheme == scheme);
  auto dec = smcrypt::DecryptPrivateKeyInfo(*enc, password);
  FUZZ_CHECK(dec.ok() && smcrypt::SecretDataAsStringView(*dec) == pki);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  smcrypt::fuzz::FuzzReader in(data, size);
  const uint8_t mode = in.Byte() & 1;
  std::string password = in.Field();
  const std::string rest = in.Rest();
  if (password.empty()) password = "p";
  if (mode == 1) {
    RoundTrip(rest, password, Pbes2Scheme::kPbkdf2HmacSha256Aes256Cbc);
    RoundTrip(rest, password, Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc);
    return 0;
  }
  const bool looks_encrypted = smcrypt::IsEncryptedPrivateKeyInfo(rest);
  auto params = smcrypt::GetPbes2Params(rest);
  if (!params.ok()) {
    FUZZ_CHECK(params.status().code() == absl::StatusCode::kInvalidArgument);
    auto dec = smcrypt::DecryptPrivateKeyInfo(rest, password);
    FUZZ_CHECK(dec.status() == params.status());
    return 0;
  }
  // Valid parameters come only in an EncryptedPrivateKeyInfo (of 66 bytes or more).
  FUZZ_CHECK(looks_encrypted);
  if (params->iterations > 64) return 0;
  auto dec = smcrypt::DecryptPrivateKeyInfo(rest, password);
  if (!dec.ok()) {
    FUZZ_CHECK(dec.status().message() ==
               "EncryptedPrivateKeyInfo: wrong password or corrupt key");
    return 0;
  }
  const std::string pki(smcrypt::SecretDataAsStringView(*dec));
  RoundTrip(pki, password, Pbes2Scheme::kPbkdf2HmacSm3Sm4Cbc);
  return 0;
}
