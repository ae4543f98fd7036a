// SM4 block-mode differential fuzzer: SM4-ECB, SM4-CBC (PKCS#7 or no padding), SM4-CTR,
// SM4-CFB and SM4-OFB against OpenSSL's EVP_sm4_ecb/cbc/ctr/cfb128/ofb, on a back end this
// CPU supports chosen by the first input byte. SM4-XTS in both tweak orders (OpenSSL 3.0
// has no SM4-XTS) is checked as the permutation it is: decrypting the fuzzed bytes and
// encrypting the result gives them back, and every length below 16 is refused. Each mode encrypts the fuzzed plaintext and decrypts it back; the
// fuzzed bytes are also decrypted as a ciphertext, so PKCS#7 unpadding must accept and
// reject exactly what OpenSSL does (and return the same plaintext). The multi-buffer
// CBC batch (Sm4CbcEncryptBatch) must equal the single-stream result. Aborts on any
// mismatch.
//
// Input: selector ‖ mode byte ‖ key (16) ‖ iv (16) ‖ data. XTS (modes 7 and 8) uses
// key ‖ iv as K1 ‖ K2 and the key bytes reversed as the tweak input.
#include <openssl/evp.h>

#include <memory>

#include "smcrypt/sm4.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// OpenSslCrypt runs one EVP cipher over `in`; nullopt when EVP reports failure (bad
// padding, or a length that is not a multiple of 16 without padding).
std::optional<std::string> OpenSslCrypt(const EVP_CIPHER* cipher, bool encrypt, bool pad,
                                        const std::string& key, const std::string& iv,
                                        const std::string& in) {
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> ctx(EVP_CIPHER_CTX_new(),
                                                                      EVP_CIPHER_CTX_free);
  FUZZ_CHECK(EVP_CipherInit_ex(ctx.get(), cipher, nullptr,
                               reinterpret_cast<const unsigned char*>(key.data()),
                               iv.empty() ? nullptr
                                          : reinterpret_cast<const unsigned char*>(iv.data()),
                               encrypt ? 1 : 0) == 1);
  EVP_CIPHER_CTX_set_padding(ctx.get(), pad ? 1 : 0);
  std::string out(in.size() + 32, '\0');
  int len1 = 0, len2 = 0;
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (EVP_CipherUpdate(ctx.get(), o, &len1, reinterpret_cast<const unsigned char*>(in.data()),
                       static_cast<int>(in.size())) != 1) {
    return std::nullopt;
  }
  if (EVP_CipherFinal_ex(ctx.get(), o + len1, &len2) != 1) return std::nullopt;
  out.resize(len1 + len2);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smcrypt;
  static const std::vector<const Sm4Kernels*> kernels = fuzz::SupportedSm4Kernels();
  fuzz::FuzzReader in(data, size);
  const Sm4Kernels* k = fuzz::PickKernel(kernels, in.Byte());
  const uint8_t mode = in.Byte() % 9;
  const std::string key = in.Bytes(16);
  const std::string iv = in.Bytes(16);
  const std::string msg = in.Rest();
  if (key.size() != 16 || iv.size() != 16) return 0;
  Sm4SetKernelsForTesting(k);

  if (mode >= 7) {
    const std::string tweak(key.rbegin(), key.rend());
    auto xts = NewSm4Xts(key + iv, mode == 7 ? Sm4XtsVariant::kIeee1619
                                              : Sm4XtsVariant::kGbT17964);
    if (!xts.ok()) {  // K1 = K2 only
      FUZZ_CHECK(key == iv);
      Sm4SetKernelsForTesting(nullptr);
      return 0;
    }
    auto dec = (*xts)->Decrypt(tweak, msg);
    FUZZ_CHECK(dec.ok() == (msg.size() >= 16 && msg.size() <= kSm4XtsMaxBlocks * 16));
    if (dec.ok()) {
      auto again = (*xts)->Encrypt(tweak, *dec);
      FUZZ_CHECK(again.ok() && *again == msg);
    }
    Sm4SetKernelsForTesting(nullptr);
    return 0;
  }

  std::unique_ptr<Cipher> cipher;
  const EVP_CIPHER* evp = nullptr;
  bool pad = false;
  std::string cipher_iv = iv;
  switch (mode) {
    case 0: cipher = *NewSm4Ecb(key, Padding::kPkcs7); evp = EVP_sm4_ecb(); pad = true;
      cipher_iv.clear(); break;
    case 1: cipher = *NewSm4Ecb(key, Padding::kNone); evp = EVP_sm4_ecb(); cipher_iv.clear();
      break;
    case 2: cipher = *NewSm4Cbc(key, Padding::kPkcs7); evp = EVP_sm4_cbc(); pad = true; break;
    case 3: cipher = *NewSm4Cbc(key, Padding::kNone); evp = EVP_sm4_cbc(); break;
    case 4: cipher = *NewSm4Ctr(key); evp = EVP_sm4_ctr(); break;
    case 5: cipher = *NewSm4Cfb(key); evp = EVP_sm4_cfb128(); break;
    default: cipher = *NewSm4Ofb(key); evp = EVP_sm4_ofb(); break;
  }

  // Encryption, then decryption back.
  auto ours = cipher->Encrypt(cipher_iv, msg);
  auto theirs = OpenSslCrypt(evp, true, pad, key, cipher_iv, msg);
  FUZZ_CHECK(ours.ok() == theirs.has_value());
  if (ours.ok()) {
    FUZZ_CHECK(*ours == *theirs);
    auto back = cipher->Decrypt(cipher_iv, *ours);
    FUZZ_CHECK(back.ok() && *back == msg);
  }

  // The fuzzed bytes as a ciphertext: the same accept/reject decision and plaintext.
  auto ours_dec = cipher->Decrypt(cipher_iv, msg);
  auto theirs_dec = OpenSslCrypt(evp, false, pad, key, cipher_iv, msg);
  FUZZ_CHECK(ours_dec.ok() == theirs_dec.has_value());
  if (ours_dec.ok()) FUZZ_CHECK(*ours_dec == *theirs_dec);

  // Multi-buffer CBC: the message and its suffixes as independent items.
  if (mode == 2 || mode == 3) {
    std::vector<Sm4CbcBatchItem> items;
    std::vector<std::string> texts;
    for (size_t i = 0; i < 5; ++i) {
      std::string t = msg.substr(std::min(msg.size(), i * 16));
      if (mode == 3) t.resize(t.size() / 16 * 16);
      texts.push_back(std::move(t));
    }
    for (const std::string& t : texts) {
      Sm4CbcBatchItem item;
      item.key = key;
      item.iv = iv;
      item.plaintext = t;
      item.padding = mode == 2 ? Padding::kPkcs7 : Padding::kNone;
      items.push_back(item);
    }
    auto results = Sm4CbcEncryptBatch(items);
    FUZZ_CHECK(results.size() == items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      auto single = cipher->Encrypt(iv, texts[i]);
      FUZZ_CHECK(results[i].ok() && single.ok() && *results[i] == *single);
    }
  }
  Sm4SetKernelsForTesting(nullptr);
  return 0;
}
