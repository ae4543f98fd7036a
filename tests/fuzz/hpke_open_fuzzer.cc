// HPKE open fuzzer, both suites (HPKE-SM2-SM3-SM4GCM and HPKE-P256-SHA256-AES128GCM): the
// fuzzed bytes as a one-shot wire message (version, suite ids, enc, AEAD ciphertext) for
// the recipient key of the test vectors (ikmR) must be handled without a crash; a message sealed to
// that key with fuzzed plaintext and info opens back, and fails with one flipped bit
// after the header or another info. The SM suite runs on an SM2 / SM3 / SM4 back end
// this CPU supports, chosen by the second byte. Aborts on any mismatch.
//
// Input: suite byte ‖ selector ‖ pos (2) ‖ info field ‖ plaintext field ‖ wire bytes.
#include <memory>

#include "smcrypt/hpke.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

struct Recipient {
  std::unique_ptr<smcrypt::HybridEncrypt> enc;
  std::unique_ptr<smcrypt::HybridDecrypt> dec;
};

Recipient MakeRecipient(smcrypt::HpkeSuite suite) {
  // ikmR of RFC 9180 A.3.1 (and of tests/testdata/hpke_sm2_sm3_sm4gcm.txt), so the seeds'
  // enc and ciphertext are those of the test vectors.
  constexpr uint8_t kIkmR[32] = {0x66, 0x8b, 0x37, 0x17, 0x1f, 0x10, 0x72, 0xf3, 0xcf, 0x12, 0xea,
                                 0x8a, 0x23, 0x6a, 0x45, 0xdf, 0x23, 0xfc, 0x13, 0xb8, 0x2a, 0xf3,
                                 0x60, 0x9a, 0xd1, 0xe3, 0x54, 0xf6, 0xef, 0x81, 0x75, 0x50};
  auto kp = smcrypt::HpkeDeriveKeyPair(
      suite, absl::string_view(reinterpret_cast<const char*>(kIkmR), sizeof(kIkmR)));
  FUZZ_CHECK(kp.ok());
  auto enc = smcrypt::NewHpkeEncrypt(suite, kp->public_key);
  auto dec = smcrypt::NewHpkeDecrypt(
      suite, absl::string_view(reinterpret_cast<const char*>(kp->private_key.data()),
                               kp->private_key.size()));
  FUZZ_CHECK(enc.ok() && dec.ok());
  return {std::move(*enc), std::move(*dec)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smcrypt;
  static Recipient* recipients = new Recipient[2]{
      MakeRecipient(HpkeSuite::kSm2Sm3Sm4Gcm), MakeRecipient(HpkeSuite::kP256Sha256Aes128Gcm)};
  static const auto sm2 = fuzz::SupportedSm2Kernels();
  static const auto sm3 = fuzz::SupportedSm3Kernels();
  static const auto sm4 = fuzz::SupportedSm4Kernels();
  fuzz::FuzzReader in(data, size);
  const int which = in.Byte() & 1;
  const uint8_t sel = in.Byte();
  internal::Sm2SetKernelsForTesting(fuzz::PickKernel(sm2, sel));
  Sm3SetKernelsForTesting(fuzz::PickKernel(sm3, sel / 4));
  Sm4SetKernelsForTesting(fuzz::PickKernel(sm4, sel / 16));
  const uint16_t pos = in.U16();
  const std::string info = in.Field();
  const std::string plaintext = in.Field();
  const std::string wire = in.Rest();
  const Recipient& r = recipients[which];

  // Arbitrary wire bytes: parsed and rejected (or, for a sealed seed, opened); no crash.
  (void)r.dec->Decrypt(wire, info);

  auto sealed = r.enc->Encrypt(plaintext, info);
  FUZZ_CHECK(sealed.ok());
  auto opened = r.dec->Decrypt(*sealed, info);
  FUZZ_CHECK(opened.ok() && *opened == plaintext);
  std::string tampered = *sealed;
  const size_t bit = pos % ((tampered.size() - 7) * 8);  // after the 7-byte header
  tampered[7 + bit / 8] = static_cast<char>(tampered[7 + bit / 8] ^ (1 << (bit % 8)));
  FUZZ_CHECK(!r.dec->Decrypt(tampered, info).ok());
  FUZZ_CHECK(!r.dec->Decrypt(*sealed, info + "x").ok());
  // Truncated anywhere: an error.
  FUZZ_CHECK(!r.dec->Decrypt(absl::string_view(*sealed).substr(0, pos % sealed->size()), info)
                  .ok());

  internal::Sm2SetKernelsForTesting(nullptr);
  Sm3SetKernelsForTesting(nullptr);
  Sm4SetKernelsForTesting(nullptr);
  return 0;
}
