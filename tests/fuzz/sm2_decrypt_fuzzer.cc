// SM2 decryption fuzzer: the fuzzed bytes as a C1‖C3‖C2, C1‖C2‖C3 or DER SM2Cipher
// ciphertext (format from the first byte) for the GB/T 32918.5 example key, on a back
// end this CPU supports (second byte). Malformed input must be an error, never a crash.
// A ciphertext that decrypts must decrypt to the same plaintext after conversion to the
// other formats (Sm2CiphertextConvert); and whatever OpenSSL 3 decrypts as strict DER
// SM2Cipher smcrypt must decrypt to the same plaintext. OpenSSL reads more than DER (BER
// lengths, coordinates through BN_bin2bn whatever their leading bytes or sign, bytes
// after the SM2Cipher ignored), all of which smcrypt refuses, so only inputs that are
// strict DER are compared. Aborts on any mismatch.
//
// Input: format byte ‖ selector ‖ ciphertext.
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>

#include "smcrypt/sm2.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// d of the GB/T 32918.5-2017 examples (tests/testdata/sm2_gbt32918_5_examples.txt).
constexpr uint8_t kD[32] = {0x39, 0x45, 0x20, 0x8F, 0x7B, 0x21, 0x44, 0xB1, 0x3F, 0x36, 0xE3,
                            0x8A, 0xC6, 0xD3, 0x9F, 0x95, 0x88, 0x93, 0x93, 0x69, 0x28, 0x60,
                            0xB5, 0x1A, 0x42, 0xFB, 0x81, 0xEF, 0x4D, 0xF7, 0xC5, 0xB8};

EVP_PKEY* OpenSslPrivateKey(const smcrypt::Sm2PrivateKey& key) {
  const smcrypt::SecretData der = smcrypt::Sm2PrivateKeyToPkcs8(key);
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  EVP_PKEY* pkey = d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size()));
  FUZZ_CHECK(pkey != nullptr);
  return pkey;
}

std::optional<std::string> OpenSslDecrypt(EVP_PKEY* pkey, const std::string& der) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(
      EVP_PKEY_CTX_new(pkey, nullptr), EVP_PKEY_CTX_free);
  size_t len = 0;
  std::optional<std::string> out;
  if (EVP_PKEY_decrypt_init(ctx.get()) == 1 &&
      EVP_PKEY_decrypt(ctx.get(), nullptr, &len, reinterpret_cast<const uint8_t*>(der.data()),
                       der.size()) == 1) {
    std::string buf(len, '\0');
    if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<uint8_t*>(buf.data()), &len,
                         reinterpret_cast<const uint8_t*>(der.data()), der.size()) == 1) {
      buf.resize(len);
      out = std::move(buf);
    }
  }
  ERR_clear_error();
  return out;
}

// ReadDerTlv reads one element with identifier `tag` and a minimal definite length
// (X.690 §10.1: short form below 128, else the fewest length octets, at most two here)
// from `der` at `*pos`, sets `*contents` to its contents and moves `*pos` past it.
bool ReadDerTlv(const std::string& der, size_t* pos, uint8_t tag, std::string* contents) {
  const size_t n = der.size();
  size_t p = *pos;
  if (p + 2 > n || static_cast<uint8_t>(der[p]) != tag) return false;
  size_t len = static_cast<uint8_t>(der[p + 1]);
  p += 2;
  if (len & 0x80) {
    const size_t octets = len & 0x7f;
    if (octets == 0 || octets > 2 || p + octets > n || der[p] == 0) return false;
    len = 0;
    for (size_t i = 0; i < octets; ++i) len = len << 8 | static_cast<uint8_t>(der[p + i]);
    p += octets;
    if (len < 0x80) return false;
  }
  if (len > n - p) return false;
  *contents = der.substr(p, len);
  *pos = p + len;
  return true;
}

// StrictSm2CipherDer: `der` is exactly one SM2Cipher (GM/T 0009 §7.2) in DER: SEQUENCE {
// INTEGER x, INTEGER y, OCTET STRING, OCTET STRING } with minimal lengths, x and y
// minimal non-negative INTEGERs (X.690 §8.3.2), and no byte after the SEQUENCE.
bool StrictSm2CipherDer(const std::string& der) {
  size_t pos = 0;
  std::string seq, element;
  if (!ReadDerTlv(der, &pos, 0x30, &seq) || pos != der.size()) return false;
  size_t in = 0;
  for (int i = 0; i < 2; ++i) {
    if (!ReadDerTlv(seq, &in, 0x02, &element) || element.empty()) return false;
    const uint8_t b0 = static_cast<uint8_t>(element[0]);
    if (b0 >= 0x80) return false;  // negative
    if (b0 == 0 && element.size() > 1 && static_cast<uint8_t>(element[1]) < 0x80) return false;
  }
  for (int i = 0; i < 2; ++i) {
    if (!ReadDerTlv(seq, &in, 0x04, &element)) return false;
  }
  return in == seq.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smcrypt;
  static const std::vector<const internal::Sm2Kernels*> kernels = fuzz::SupportedSm2Kernels();
  static const Sm2PrivateKey* key = new Sm2PrivateKey(
      *Sm2PrivateKey::FromScalar(absl::string_view(reinterpret_cast<const char*>(kD), 32)));
  static EVP_PKEY* pkey = OpenSslPrivateKey(*key);
  constexpr Sm2CiphertextFormat kFormats[3] = {
      Sm2CiphertextFormat::kC1C3C2, Sm2CiphertextFormat::kC1C2C3, Sm2CiphertextFormat::kDer};
  fuzz::FuzzReader in(data, size);
  const Sm2CiphertextFormat format = kFormats[in.Byte() % 3];
  internal::Sm2SetKernelsForTesting(fuzz::PickKernel(kernels, in.Byte()));
  const std::string ct = in.Rest();

  auto plain = Sm2Decrypt(*key, ct, format);
  if (plain.ok()) {
    for (Sm2CiphertextFormat to : kFormats) {
      auto converted = Sm2CiphertextConvert(ct, format, to);
      FUZZ_CHECK(converted.ok());
      auto again = Sm2Decrypt(*key, *converted, to);
      FUZZ_CHECK(again.ok() && *again == *plain);
    }
  }
  if (format == Sm2CiphertextFormat::kDer && StrictSm2CipherDer(ct)) {
    auto theirs = OpenSslDecrypt(pkey, ct);
    if (theirs.has_value()) FUZZ_CHECK(plain.ok() && *plain == *theirs);
  }
  internal::Sm2SetKernelsForTesting(nullptr);
  return 0;
}
