// SM2 signature fuzzer, differential against OpenSSL 3 (EVP_PKEY "SM2", EVP_DigestVerify
// with the user ID), on a back end this CPU supports chosen by the first input byte.
//  - A signature made by smcrypt with a fuzz-chosen key d and nonce k over a fuzzed user
//    ID and message verifies on both; one flipped bit of r ‖ s fails on both.
//  - The fuzzed bytes as a DER signature, and the valid DER signature with one fuzzed
//    byte changed: smcrypt (Sm2SignatureFromDer + Sm2VerifyDigest) and OpenSSL must
//    reach the same valid/invalid decision; DER that smcrypt parses re-encodes to itself.
// Aborts on any mismatch.
//
// Input: selector ‖ d (32) ‖ k (32) ‖ pos (2) ‖ xor byte ‖ id field ‖ msg field ‖ sig.
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>

#include "crypto/sm2/sm2_testing.h"
#include "smcrypt/sm2.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

PkeyPtr OpenSslPublicKey(const smcrypt::Sm2PublicKey& key) {
  const std::string der = smcrypt::Sm2PublicKeyToSpki(key);
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  PkeyPtr pkey(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
  FUZZ_CHECK(pkey != nullptr);
  return pkey;
}

bool OpenSslVerify(EVP_PKEY* pkey, const std::string& id, const std::string& msg,
                   const std::string& der) {
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> pctx(
      EVP_PKEY_CTX_new(pkey, nullptr), EVP_PKEY_CTX_free);
  FUZZ_CHECK(EVP_PKEY_CTX_set1_id(pctx.get(), id.data(), id.size()) == 1);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> mctx(EVP_MD_CTX_new(),
                                                               EVP_MD_CTX_free);
  EVP_MD_CTX_set_pkey_ctx(mctx.get(), pctx.get());
  FUZZ_CHECK(EVP_DigestVerifyInit(mctx.get(), nullptr, EVP_sm3(), nullptr, pkey) == 1);
  const int rc = EVP_DigestVerify(mctx.get(), reinterpret_cast<const uint8_t*>(der.data()),
                                  der.size(), reinterpret_cast<const uint8_t*>(msg.data()),
                                  msg.size());
  ERR_clear_error();
  return rc == 1;
}

// OursVerifyDer is the service's DER path: strict parse, then verification of e.
bool OursVerifyDer(const smcrypt::Sm2PublicKey& key, const std::array<uint8_t, 32>& e,
                   const std::string& der) {
  auto raw = smcrypt::Sm2SignatureFromDer(der);
  if (!raw.ok()) return false;
  auto back = smcrypt::Sm2SignatureToDer(*raw);
  FUZZ_CHECK(back.ok() && *back == der);  // strict DER: one encoding per signature
  return smcrypt::Sm2VerifyDigest(
             key, absl::string_view(reinterpret_cast<const char*>(e.data()), 32), *raw)
      .ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smcrypt;
  static const std::vector<const internal::Sm2Kernels*> kernels = fuzz::SupportedSm2Kernels();
  fuzz::FuzzReader in(data, size);
  const internal::Sm2Kernels* kern = fuzz::PickKernel(kernels, in.Byte());
  const std::string d = in.Bytes(32);
  const std::string k = in.Bytes(32);
  const uint16_t pos = in.U16();
  const uint8_t xor_byte = in.Byte();
  std::string id = in.Field();
  const std::string msg = in.Field();
  const std::string fuzzed_sig = in.Rest();
  if (id.size() > 8191) id.resize(8191);  // ENTL is 16 bits of bit length
  auto key = Sm2PrivateKey::FromScalar(d);
  if (!key.ok()) return 0;
  internal::Sm2SetKernelsForTesting(kern);

  const Sm2PublicKey& pub = key->public_key();
  PkeyPtr pkey = OpenSslPublicKey(pub);
  auto e = Sm2ComputeE(pub, id, msg);
  FUZZ_CHECK(e.ok());
  const absl::string_view es(reinterpret_cast<const char*>(e->data()), 32);

  // A valid signature with the fuzzed k, and one with a random k.
  auto sig = testing::Sm2SignDigestWithKForTesting(*key, es, k);
  if (!sig.ok()) sig = Sm2SignDigest(*key, es);
  FUZZ_CHECK(sig.ok() && sig->size() == 64);
  FUZZ_CHECK(Sm2VerifyDigest(pub, es, *sig).ok());
  auto der = Sm2SignatureToDer(*sig);
  FUZZ_CHECK(der.ok());
  FUZZ_CHECK(OpenSslVerify(pkey.get(), id, msg, *der));
  FUZZ_CHECK(OursVerifyDer(pub, *e, *der));

  // One flipped bit of r ‖ s.
  std::string bad = *sig;
  bad[(pos / 8) % 64] = static_cast<char>(bad[(pos / 8) % 64] ^ (1 << (pos % 8)));
  auto bad_der = Sm2SignatureToDer(bad);
  FUZZ_CHECK(!Sm2VerifyDigest(pub, es, bad).ok());
  if (bad_der.ok()) FUZZ_CHECK(!OpenSslVerify(pkey.get(), id, msg, *bad_der));

  // The valid DER with one byte changed (or truncated / extended), and the fuzzed bytes.
  std::string mutated = *der;
  if (xor_byte == 0) {
    mutated.resize(pos % (mutated.size() + 2));
  } else {
    mutated[pos % mutated.size()] = static_cast<char>(mutated[pos % mutated.size()] ^ xor_byte);
  }
  for (const std::string& candidate : {mutated, fuzzed_sig}) {
    FUZZ_CHECK(OursVerifyDer(pub, *e, candidate) ==
               OpenSslVerify(pkey.get(), id, msg, candidate));
  }
  internal::Sm2SetKernelsForTesting(nullptr);
  return 0;
}
