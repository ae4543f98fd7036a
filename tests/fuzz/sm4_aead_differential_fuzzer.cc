// SM4-GCM / SM4-CCM fuzzer: seal with fuzzed key, nonce, AAD, tag length and plaintext,
// compared with Botan 2 (the second oracle of docs/design.md; OpenSSL 3.0 has no SM4-GCM/CCM)
// when it is built in; open the result back; open it again with one fuzz-chosen bit
// flipped (must fail); and open the raw fuzzed bytes as ciphertext ‖ tag (must fail
// unless Botan accepts them too). Runs on a back end this CPU supports chosen by the
// first input byte. Aborts on any mismatch.
//
// Input: selector ‖ mode (bit 0: CCM) ‖ tag byte ‖ flip (2 bytes) ‖ key (16) ‖
//        nonce field ‖ aad field ‖ plaintext.
#include <memory>

#include "smcrypt/sm4.h"
#include "tests/fuzz/fuzz_util.h"

#if defined(SMCRYPT_HAVE_BOTAN)
#include <botan/aead.h>
#include <botan/exceptn.h>
#endif

namespace {

#if defined(SMCRYPT_HAVE_BOTAN)
std::string BotanName(bool ccm, size_t tag, size_t nonce_size) {
  if (ccm) return "SM4/CCM(" + std::to_string(tag) + "," + std::to_string(15 - nonce_size) + ")";
  return "SM4/GCM(" + std::to_string(tag) + ")";
}

// BotanCrypt seals or opens with Botan; nullopt when Botan rejects the tag.
std::optional<std::string> BotanCrypt(bool ccm, size_t tag, bool encrypt,
                                      const std::string& key, const std::string& nonce,
                                      const std::string& aad, const std::string& in) {
  auto mode = Botan::AEAD_Mode::create_or_throw(
      BotanName(ccm, tag, nonce.size()), encrypt ? Botan::ENCRYPTION : Botan::DECRYPTION);
  mode->set_key(reinterpret_cast<const uint8_t*>(key.data()), key.size());
  mode->set_associated_data(reinterpret_cast<const uint8_t*>(aad.data()), aad.size());
  mode->start(reinterpret_cast<const uint8_t*>(nonce.data()), nonce.size());
  Botan::secure_vector<uint8_t> buf(in.begin(), in.end());
  try {
    mode->finish(buf);
  } catch (const Botan::Invalid_Authentication_Tag&) {
    return std::nullopt;
  }
  return std::string(buf.begin(), buf.end());
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smcrypt;
  static const std::vector<const Sm4Kernels*> kernels = fuzz::SupportedSm4Kernels();
  fuzz::FuzzReader in(data, size);
  const Sm4Kernels* k = fuzz::PickKernel(kernels, in.Byte());
  const bool ccm = in.Byte() & 1;
  const uint8_t tag_byte = in.Byte();
  const uint16_t flip = in.U16();
  const std::string key = in.Bytes(16);
  std::string nonce = in.Field();
  const std::string aad = in.Field();
  const std::string msg = in.Rest();
  if (key.size() != 16) return 0;
  Sm4SetKernelsForTesting(k);

  // Tag lengths: GCM 12–16, CCM 4–16 even; anything else must be refused.
  const size_t tag = tag_byte % 18;
  const bool tag_ok = ccm ? (tag >= 4 && tag <= 16 && tag % 2 == 0) : (tag >= 12 && tag <= 16);
  auto aead = ccm ? NewSm4Ccm(key, tag) : NewSm4Gcm(key, tag);
  FUZZ_CHECK(aead.ok() == tag_ok);
  if (!aead.ok()) {
    Sm4SetKernelsForTesting(nullptr);
    return 0;
  }
  if (ccm) nonce.resize(std::min<size_t>(nonce.size(), 13));
  const bool nonce_ok = ccm ? (nonce.size() >= 7) : !nonce.empty();

  auto sealed = (*aead)->Seal(nonce, msg, aad);
  if (!nonce_ok) {
    FUZZ_CHECK(!sealed.ok());
    Sm4SetKernelsForTesting(nullptr);
    return 0;
  }
  FUZZ_CHECK(sealed.ok());
  FUZZ_CHECK(sealed->size() == msg.size() + tag);
#if defined(SMCRYPT_HAVE_BOTAN)
  auto botan_sealed = BotanCrypt(ccm, tag, true, key, nonce, aad, msg);
  FUZZ_CHECK(botan_sealed.has_value() && *botan_sealed == *sealed);
#endif
  auto opened = (*aead)->Open(nonce, *sealed, aad);
  FUZZ_CHECK(opened.ok() && *opened == msg);

  // One flipped bit anywhere in ciphertext ‖ tag: rejected.
  std::string tampered = *sealed;
  const size_t bit = flip % (tampered.size() * 8);
  tampered[bit / 8] = static_cast<char>(tampered[bit / 8] ^ (1 << (bit % 8)));
  FUZZ_CHECK(!(*aead)->Open(nonce, tampered, aad).ok());

  // The fuzzed bytes themselves as ciphertext ‖ tag.
  auto forged = (*aead)->Open(nonce, msg, aad);
  if (msg.size() < tag) FUZZ_CHECK(!forged.ok());
#if defined(SMCRYPT_HAVE_BOTAN)
  if (msg.size() >= tag) {
    auto botan_forged = BotanCrypt(ccm, tag, false, key, nonce, aad, msg);
    FUZZ_CHECK(forged.ok() == botan_forged.has_value());
    if (forged.ok()) FUZZ_CHECK(*forged == *botan_forged);
  }
#endif
  Sm4SetKernelsForTesting(nullptr);
  return 0;
}
