// cases_gcrypt.cc — libgcrypt as a user calls it: gcry_md_hash_buffer for hashes, a
// keyed gcry_mac handle for HMAC, one keyed gcry_cipher handle per mode with the IV,
// counter or nonce set per message. Built only when CMake finds libgcrypt.
#include "bench/smcrypt_bench/bench_util.h"

#if SMCRYPT_BENCH_HAVE_GCRYPT
#include <gcrypt.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"
#endif

namespace smcrypt::bench {

#if SMCRYPT_BENCH_HAVE_GCRYPT
namespace {

const std::string kImpl = "libgcrypt";

const std::string& Key16() {
  static const std::string k = TestBytes(16, 1);
  return k;
}
const std::string& Iv16() {
  static const std::string iv = TestBytes(16, 2);
  return iv;
}
const std::string& Nonce12() {
  static const std::string n = TestBytes(12, 3);
  return n;
}

void RegisterHashes() {
  const struct {
    const char* alg;
    int md;
  } hashes[] = {{"SM3", GCRY_MD_SM3}, {"SHA-256", GCRY_MD_SHA256}};
  for (const auto& h : hashes) {
    const int md = h.md;
    const bool sm3 = md == GCRY_MD_SM3;
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 10));
      Register(
          CaseName(kImpl, h.alg, "hash", n), n, true,
          [md, msg] {
            unsigned char out[32];
            gcry_md_hash_buffer(md, out, msg->data(), msg->size());
            benchmark::DoNotOptimize(out);
            return true;
          },
          [md, msg, sm3]() -> std::string {
            if (!sm3) return "";
            unsigned char out[32];
            gcry_md_hash_buffer(md, out, msg->data(), msg->size());
            const auto want = Sm3Digest(*msg);
            return std::memcmp(out, want.data(), 32) == 0 ? "" : "libgcrypt SM3 differs from smcrypt's";
          });
    }
  }
  const std::string key = TestBytes(32, 4);
  const struct {
    const char* alg;
    int mac;
  } macs[] = {{"HMAC-SM3", GCRY_MAC_HMAC_SM3}, {"HMAC-SHA-256", GCRY_MAC_HMAC_SHA256}};
  for (const auto& m : macs) {
    gcry_mac_hd_t raw = nullptr;
    if (gcry_mac_open(&raw, m.mac, 0, nullptr) != 0) continue;
    auto h = std::shared_ptr<gcry_mac_handle>(raw, gcry_mac_close);
    if (gcry_mac_setkey(h.get(), key.data(), key.size()) != 0) continue;
    auto mac = [h](const std::string& msg, unsigned char out[32]) {
      size_t len = 32;
      return gcry_mac_reset(h.get()) == 0 && gcry_mac_write(h.get(), msg.data(), msg.size()) == 0 &&
             gcry_mac_read(h.get(), out, &len) == 0;
    };
    const bool sm3 = m.mac == GCRY_MAC_HMAC_SM3;
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 11));
      Register(
          CaseName(kImpl, m.alg, "mac", n), n, true,
          [mac, msg] {
            unsigned char out[32];
            const bool ok = mac(*msg, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          [mac, msg, key, sm3]() -> std::string {
            unsigned char out[32];
            if (!mac(*msg, out)) return "gcry_mac failed";
            if (!sm3) return "";
            auto want = HmacSm3::New(key).value()->ComputeMac(*msg).value();
            return std::string(reinterpret_cast<char*>(out), 32) == want
                       ? ""
                       : "libgcrypt HMAC-SM3 differs from smcrypt's";
          });
    }
  }
}

using CipherHandle = std::shared_ptr<gcry_cipher_handle>;

CipherHandle OpenCipher(int algo, int mode) {
  gcry_cipher_hd_t raw = nullptr;
  if (gcry_cipher_open(&raw, algo, mode, 0) != 0) return nullptr;
  CipherHandle h(raw, gcry_cipher_close);
  if (gcry_cipher_setkey(h.get(), Key16().data(), Key16().size()) != 0) return nullptr;
  return h;
}

// Crypt runs one message through `h` in `mode` (12-byte nonce and 16-byte tag appended
// or checked for GCM/CCM). Returns false on any error, including a wrong tag.
bool Crypt(gcry_cipher_hd_t h, int mode, bool encrypt, const std::string& in, std::string& out) {
  const bool aead = mode == GCRY_CIPHER_MODE_GCM || mode == GCRY_CIPHER_MODE_CCM;
  size_t n = in.size();
  if (aead && !encrypt) {
    if (n < 16) return false;
    n -= 16;
  }
  out.resize(aead && encrypt ? n + 16 : n);
  gcry_error_t err = 0;
  if (mode == GCRY_CIPHER_MODE_CBC) err = gcry_cipher_setiv(h, Iv16().data(), 16);
  if (mode == GCRY_CIPHER_MODE_CTR) err = gcry_cipher_setctr(h, Iv16().data(), 16);
  if (aead) err = gcry_cipher_setiv(h, Nonce12().data(), 12);
  if (err == 0 && mode == GCRY_CIPHER_MODE_CCM) {
    uint64_t lengths[3] = {n, 0, 16};
    err = gcry_cipher_ctl(h, GCRYCTL_SET_CCM_LENGTHS, lengths, sizeof(lengths));
  }
  if (err != 0) return false;
  err = encrypt ? gcry_cipher_encrypt(h, out.data(), n, in.data(), n)
                : gcry_cipher_decrypt(h, out.data(), n, in.data(), n);
  if (err != 0) return false;
  if (!aead) return true;
  return encrypt ? gcry_cipher_gettag(h, out.data() + n, 16) == 0
                 : gcry_cipher_checktag(h, in.data() + n, 16) == 0;
}

std::string SmcryptSm4(int mode, const std::string& pt) {
  switch (mode) {
    case GCRY_CIPHER_MODE_ECB:
      return NewSm4Ecb(Key16(), Padding::kNone).value()->Encrypt("", pt).value();
    case GCRY_CIPHER_MODE_CBC:
      return NewSm4Cbc(Key16(), Padding::kNone).value()->Encrypt(Iv16(), pt).value();
    case GCRY_CIPHER_MODE_CTR:
      return NewSm4Ctr(Key16()).value()->Encrypt(Iv16(), pt).value();
    case GCRY_CIPHER_MODE_GCM:
      return NewSm4Gcm(Key16()).value()->Seal(Nonce12(), pt, "").value();
    case GCRY_CIPHER_MODE_CCM:
      return NewSm4Ccm(Key16()).value()->Seal(Nonce12(), pt, "").value();
  }
  return "";
}

void RegisterCiphers() {
  const struct {
    const char* name;
    int mode;
    bool decrypt;
  } modes[] = {{"ECB", GCRY_CIPHER_MODE_ECB, true},
               {"CBC", GCRY_CIPHER_MODE_CBC, true},
               {"CTR", GCRY_CIPHER_MODE_CTR, false},
               {"GCM", GCRY_CIPHER_MODE_GCM, true},
               {"CCM", GCRY_CIPHER_MODE_CCM, true}};
  for (const bool sm4 : {true, false}) {
    for (const auto& m : modes) {
      const int mode = m.mode;
      auto enc = OpenCipher(sm4 ? GCRY_CIPHER_SM4 : GCRY_CIPHER_AES128, mode);
      auto dec = OpenCipher(sm4 ? GCRY_CIPHER_SM4 : GCRY_CIPHER_AES128, mode);
      if (enc == nullptr || dec == nullptr) continue;
      const std::string alg = absl::StrCat(sm4 ? "SM4-" : "AES-128-", m.name);
      const bool aead = mode == GCRY_CIPHER_MODE_GCM || mode == GCRY_CIPHER_MODE_CCM;
      const std::string label = aead ? "12-byte nonce, 16-byte tag, no AAD" : "";
      for (size_t n : CipherSizes()) {
        auto pt = std::make_shared<std::string>(TestBytes(n, aead ? 22 : 20));
        auto ct = std::make_shared<std::string>();
        auto check = [enc, dec, mode, pt, ct, sm4, alg]() -> std::string {
          std::string back;
          if (!Crypt(enc.get(), mode, true, *pt, *ct) || !Crypt(dec.get(), mode, false, *ct, back)) {
            return "gcry_cipher failed";
          }
          if (back != *pt) return "decryption does not invert encryption";
          if (sm4 && SmcryptSm4(mode, *pt) != *ct) return "libgcrypt " + alg + " differs from smcrypt's";
          return "";
        };
        Register(
            CaseName(kImpl, alg, "encrypt", n), n, true,
            [enc, mode, pt] {
              std::string out;
              const bool ok = Crypt(enc.get(), mode, true, *pt, out);
              benchmark::DoNotOptimize(out);
              return ok;
            },
            check, label);
        if (!m.decrypt) continue;
        Register(
            CaseName(kImpl, alg, "decrypt", n), n, true,
            [dec, mode, ct] {
              std::string out;
              const bool ok = Crypt(dec.get(), mode, false, *ct, out);
              benchmark::DoNotOptimize(out);
              return ok;
            },
            check, label);
      }
    }
  }
}

}  // namespace

std::string GcryptPeer() { return absl::StrCat("libgcrypt ", gcry_check_version(nullptr)); }

void RegisterGcryptCases(const BenchOptions& options) {
  if (gcry_check_version(GCRYPT_VERSION) == nullptr) return;
  gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
  gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
  RegisterHashes();
  RegisterCiphers();
}

#else  // !SMCRYPT_BENCH_HAVE_GCRYPT

std::string GcryptPeer() { return ""; }
void RegisterGcryptCases(const BenchOptions&) {}

#endif

}  // namespace smcrypt::bench
