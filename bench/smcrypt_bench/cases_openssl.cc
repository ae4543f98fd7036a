// cases_openssl.cc — OpenSSL 3 libcrypto as a user calls it: EVP directly, not through
// smcrypt's wrappers. Contexts and keys are set up once; each operation is what a caller
// does per message (re-initialise with the IV or nonce, update, final, tag).
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/smcrypt_bench/bench_util.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"

namespace smcrypt::bench {
namespace {

const std::string kImpl = "openssl";

struct EvpMdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
struct EvpCipherCtxFree {
  void operator()(EVP_CIPHER_CTX* p) const { EVP_CIPHER_CTX_free(p); }
};
struct EvpPkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct EvpPkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct EvpMacCtxFree {
  void operator()(EVP_MAC_CTX* p) const { EVP_MAC_CTX_free(p); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, EvpMdCtxFree>;
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, EvpCipherCtxFree>;
using Pkey = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, EvpPkeyCtxFree>;
using MacCtx = std::unique_ptr<EVP_MAC_CTX, EvpMacCtxFree>;

uint8_t* Bytes(std::string& s) { return reinterpret_cast<uint8_t*>(s.data()); }
const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

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

// --- Hashes and HMAC ------------------------------------------------------------------

void RegisterHashes(const BenchOptions& options) {
  for (const char* alg : {"SM3", "SHA-256"}) {
    EVP_MD* md = EVP_MD_fetch(nullptr, alg[0] == 'S' && alg[1] == 'M' ? "SM3" : "SHA256", nullptr);
    if (md == nullptr) continue;  // kept for the life of the process
    auto ctx = std::shared_ptr<EVP_MD_CTX>(EVP_MD_CTX_new(), EvpMdCtxFree());
    auto digest = [md, ctx](const std::string& msg, uint8_t out[EVP_MAX_MD_SIZE]) {
      unsigned int len = 0;
      return EVP_DigestInit_ex2(ctx.get(), md, nullptr) == 1 &&
             EVP_DigestUpdate(ctx.get(), msg.data(), msg.size()) == 1 &&
             EVP_DigestFinal_ex(ctx.get(), out, &len) == 1;
    };
    const bool is_sm3 = std::string(alg) == "SM3";
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 10));
      Register(
          CaseName(kImpl, alg, "hash", n), n, true,
          [digest, msg] {
            uint8_t out[EVP_MAX_MD_SIZE];
            const bool ok = digest(*msg, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          [digest, msg, is_sm3]() -> std::string {
            uint8_t out[EVP_MAX_MD_SIZE];
            if (!digest(*msg, out)) return "EVP digest failed";
            if (!is_sm3) return "";
            const auto want = Sm3Digest(*msg);
            return std::string(reinterpret_cast<char*>(out), 32) ==
                           std::string(reinterpret_cast<const char*>(want.data()), 32)
                       ? ""
                       : "OpenSSL SM3 differs from smcrypt's";
          });
    }
    if (options.large) {
      auto chunk = std::make_shared<std::string>(TestBytes(kLargeChunkSize, 12));
      Register(
          CaseName(kImpl, alg, "hash", kLargeStreamSize), kLargeStreamSize, true,
          [md, ctx, chunk] {
            uint8_t out[EVP_MAX_MD_SIZE];
            unsigned int len = 0;
            if (EVP_DigestInit_ex2(ctx.get(), md, nullptr) != 1) return false;
            for (size_t done = 0; done < kLargeStreamSize; done += chunk->size()) {
              if (EVP_DigestUpdate(ctx.get(), chunk->data(), chunk->size()) != 1) return false;
            }
            return EVP_DigestFinal_ex(ctx.get(), out, &len) == 1;
          },
          nullptr, "streamed in 1 MiB updates");
    }
  }

  EVP_MAC* hmac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (hmac == nullptr) return;
  const std::string key = TestBytes(32, 4);
  for (const char* alg : {"HMAC-SM3", "HMAC-SHA-256"}) {
    const std::string digest_name = std::string(alg) == "HMAC-SM3" ? "SM3" : "SHA256";
    auto ctx = std::shared_ptr<EVP_MAC_CTX>(EVP_MAC_CTX_new(hmac), EvpMacCtxFree());
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                         const_cast<char*>(digest_name.c_str()), 0),
        OSSL_PARAM_construct_end()};
    if (EVP_MAC_init(ctx.get(), Bytes(key), key.size(), params) != 1) continue;
    // Re-initialising with a null key keeps the key (HMAC's midstates), as a caller
    // that reuses one context does.
    auto mac = [ctx](const std::string& msg, uint8_t out[EVP_MAX_MD_SIZE]) {
      size_t len = 0;
      return EVP_MAC_init(ctx.get(), nullptr, 0, nullptr) == 1 &&
             EVP_MAC_update(ctx.get(), Bytes(msg), msg.size()) == 1 &&
             EVP_MAC_final(ctx.get(), out, &len, EVP_MAX_MD_SIZE) == 1;
    };
    const bool is_sm3 = std::string(alg) == "HMAC-SM3";
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 11));
      Register(
          CaseName(kImpl, alg, "mac", n), n, true,
          [mac, msg] {
            uint8_t out[EVP_MAX_MD_SIZE];
            const bool ok = mac(*msg, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          [mac, msg, key, is_sm3]() -> std::string {
            uint8_t out[EVP_MAX_MD_SIZE];
            if (!mac(*msg, out)) return "EVP_MAC failed";
            if (!is_sm3) return "";
            auto want = HmacSm3::New(key).value()->ComputeMac(*msg).value();
            return std::string(reinterpret_cast<char*>(out), 32) == want
                       ? ""
                       : "OpenSSL HMAC-SM3 differs from smcrypt's";
          });
    }
  }
}

// --- Block modes ----------------------------------------------------------------------

// One EVP cipher context per (algorithm, direction), keyed once.
struct CipherCase {
  std::shared_ptr<EVP_CIPHER_CTX> ctx;
  bool has_iv;
  // Run re-initialises with the IV and encrypts or decrypts `in` into `out` (no padding).
  bool Run(const std::string& in, std::string& out) const {
    int len1 = 0, len2 = 0;
    if (EVP_CipherInit_ex2(ctx.get(), nullptr, nullptr, has_iv ? Bytes(Iv16()) : nullptr,
                           -1, nullptr) != 1) {
      return false;
    }
    EVP_CIPHER_CTX_set_padding(ctx.get(), 0);
    if (EVP_CipherUpdate(ctx.get(), Bytes(out), &len1, Bytes(in), static_cast<int>(in.size())) !=
        1) {
      return false;
    }
    if (EVP_CipherFinal_ex(ctx.get(), Bytes(out) + len1, &len2) != 1) return false;
    return static_cast<size_t>(len1 + len2) == in.size();
  }
};

std::shared_ptr<CipherCase> MakeCipherCase(const char* evp_name, bool encrypt, bool has_iv) {
  EVP_CIPHER* cipher = EVP_CIPHER_fetch(nullptr, evp_name, nullptr);
  if (cipher == nullptr) return nullptr;
  auto c = std::make_shared<CipherCase>();
  c->ctx = std::shared_ptr<EVP_CIPHER_CTX>(EVP_CIPHER_CTX_new(), EvpCipherCtxFree());
  c->has_iv = has_iv;
  const bool ok = EVP_CipherInit_ex2(c->ctx.get(), cipher, Bytes(Key16()),
                                     has_iv ? Bytes(Iv16()) : nullptr, encrypt ? 1 : 0,
                                     nullptr) == 1;
  EVP_CIPHER_free(cipher);
  return ok ? c : nullptr;
}

// smcrypt's output for the SM4 modes, to check OpenSSL computes the same thing.
std::string SmcryptSm4(const std::string& alg, const std::string& pt) {
  if (alg == "SM4-ECB") return NewSm4Ecb(Key16(), Padding::kNone).value()->Encrypt("", pt).value();
  if (alg == "SM4-CBC") return NewSm4Cbc(Key16(), Padding::kNone).value()->Encrypt(Iv16(), pt).value();
  if (alg == "SM4-CTR") return NewSm4Ctr(Key16()).value()->Encrypt(Iv16(), pt).value();
  if (alg == "SM4-CFB") return NewSm4Cfb(Key16()).value()->Encrypt(Iv16(), pt).value();
  if (alg == "SM4-OFB") return NewSm4Ofb(Key16()).value()->Encrypt(Iv16(), pt).value();
  return "";
}

void RegisterBlockModes() {
  struct Mode {
    const char* alg;
    const char* evp;
    bool has_iv;
    bool decrypt;
  };
  const Mode modes[] = {
      {"SM4-ECB", "SM4-ECB", false, true},          {"SM4-CBC", "SM4-CBC", true, true},
      {"SM4-CTR", "SM4-CTR", true, false},          {"AES-128-ECB", "AES-128-ECB", false, true},
      {"AES-128-CBC", "AES-128-CBC", true, true},   {"AES-128-CTR", "AES-128-CTR", true, false},
      {"SM4-CFB", "SM4-CFB", true, true},           {"SM4-OFB", "SM4-OFB", true, false},
      {"AES-128-CFB", "AES-128-CFB", true, true},   {"AES-128-OFB", "AES-128-OFB", true, false},
  };
  for (const Mode& m : modes) {
    auto enc = MakeCipherCase(m.evp, true, m.has_iv);
    auto dec = MakeCipherCase(m.evp, false, m.has_iv);
    if (enc == nullptr || dec == nullptr) continue;
    const std::string alg = m.alg;
    for (size_t n : CipherSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 20));
      auto ct = std::make_shared<std::string>(n, '\0');
      auto check = [enc, dec, pt, ct, alg]() -> std::string {
        std::string back(pt->size(), '\0');
        if (!enc->Run(*pt, *ct) || !dec->Run(*ct, back)) return "EVP cipher failed";
        if (back != *pt) return "decryption does not invert encryption";
        if (alg.rfind("SM4", 0) == 0 && SmcryptSm4(alg, *pt) != *ct) {
          return "OpenSSL " + alg + " differs from smcrypt's";
        }
        return "";
      };
      Register(
          CaseName(kImpl, alg, "encrypt", n), n, true,
          [enc, pt] {
            std::string out(pt->size(), '\0');
            const bool ok = enc->Run(*pt, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check);
      if (!m.decrypt) continue;
      Register(
          CaseName(kImpl, alg, "decrypt", n), n, true,
          [dec, ct] {
            std::string out(ct->size(), '\0');
            const bool ok = dec->Run(*ct, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check);
    }
  }
}

// --- AES-128-GCM and AES-128-CCM --------------------------------------------------------

// AeadCase seals or opens one message with a 12-byte nonce and a 16-byte tag, no AAD.
struct AeadCase {
  std::shared_ptr<EVP_CIPHER_CTX> enc;
  std::shared_ptr<EVP_CIPHER_CTX> dec;
  bool ccm;

  bool Seal(const std::string& pt, std::string& out) const {
    EVP_CIPHER_CTX* c = enc.get();
    int len = 0, len2 = 0;
    out.resize(pt.size() + 16);
    if (EVP_EncryptInit_ex(c, nullptr, nullptr, nullptr, Bytes(Nonce12())) != 1) return false;
    if (ccm && EVP_EncryptUpdate(c, nullptr, &len, nullptr, static_cast<int>(pt.size())) != 1) {
      return false;
    }
    if (EVP_EncryptUpdate(c, Bytes(out), &len, Bytes(pt), static_cast<int>(pt.size())) != 1) {
      return false;
    }
    if (EVP_EncryptFinal_ex(c, Bytes(out) + len, &len2) != 1) return false;
    return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, Bytes(out) + pt.size()) == 1;
  }

  bool Open(const std::string& ct, std::string& out) const {
    EVP_CIPHER_CTX* c = dec.get();
    if (ct.size() < 16) return false;
    const size_t n = ct.size() - 16;
    int len = 0, len2 = 0;
    out.resize(n);
    if (EVP_DecryptInit_ex(c, nullptr, nullptr, nullptr, Bytes(Nonce12())) != 1) return false;
    if (ccm) {
      // CCM takes the tag before the data and verifies it in the one update.
      if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16,
                              const_cast<uint8_t*>(Bytes(ct)) + n) != 1 ||
          EVP_DecryptUpdate(c, nullptr, &len, nullptr, static_cast<int>(n)) != 1) {
        return false;
      }
      return EVP_DecryptUpdate(c, Bytes(out), &len, Bytes(ct), static_cast<int>(n)) == 1;
    }
    if (EVP_DecryptUpdate(c, Bytes(out), &len, Bytes(ct), static_cast<int>(n)) != 1) return false;
    if (EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<uint8_t*>(Bytes(ct)) + n) !=
        1) {
      return false;
    }
    return EVP_DecryptFinal_ex(c, Bytes(out) + len, &len2) == 1;
  }
};

std::shared_ptr<EVP_CIPHER_CTX> MakeAeadCtx(const char* evp_name, bool encrypt, bool ccm) {
  EVP_CIPHER* cipher = EVP_CIPHER_fetch(nullptr, evp_name, nullptr);
  if (cipher == nullptr) return nullptr;
  auto ctx = std::shared_ptr<EVP_CIPHER_CTX>(EVP_CIPHER_CTX_new(), EvpCipherCtxFree());
  bool ok = EVP_CipherInit_ex(ctx.get(), cipher, nullptr, nullptr, nullptr, encrypt ? 1 : 0) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_IVLEN, 12, nullptr) == 1;
  // CCM's tag length M goes into B0, so it is fixed before the key, in both directions.
  if (ok && ccm) ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, 16, nullptr) == 1;
  if (ok) ok = EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, Bytes(Key16()), nullptr, -1) == 1;
  EVP_CIPHER_free(cipher);
  return ok ? ctx : nullptr;
}

void RegisterAeads() {
  for (const bool ccm : {false, true}) {
    const char* evp = ccm ? "AES-128-CCM" : "AES-128-GCM";
    auto a = std::make_shared<AeadCase>();
    a->enc = MakeAeadCtx(evp, true, ccm);
    a->dec = MakeAeadCtx(evp, false, ccm);
    a->ccm = ccm;
    if (a->enc == nullptr || a->dec == nullptr) continue;
    for (size_t n : CipherSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 22));
      auto ct = std::make_shared<std::string>();
      auto check = [a, pt, ct]() -> std::string {
        std::string back;
        if (!a->Seal(*pt, *ct)) return "EVP seal failed";
        if (!a->Open(*ct, back) || back != *pt) return "open does not invert seal";
        std::string bad = *ct;
        bad[bad.size() - 1] ^= 1;
        if (a->Open(bad, back)) return "a wrong tag was accepted";
        return "";
      };
      const char* label = "12-byte nonce, 16-byte tag, no AAD";
      Register(
          CaseName(kImpl, evp, "encrypt", n), n, true,
          [a, pt] {
            std::string out;
            const bool ok = a->Seal(*pt, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check, label);
      Register(
          CaseName(kImpl, evp, "decrypt", n), n, true,
          [a, ct] {
            std::string out;
            const bool ok = a->Open(*ct, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check, label);
    }
  }
}

// --- Signatures -----------------------------------------------------------------------

Pkey GenerateEc(const char* group, bool sm2) {
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, sm2 ? "SM2" : "EC", nullptr));
  if (ctx == nullptr || EVP_PKEY_keygen_init(ctx.get()) != 1) return nullptr;
  if (!sm2 && EVP_PKEY_CTX_set_group_name(ctx.get(), group) != 1) return nullptr;
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_keygen(ctx.get(), &key) != 1) return nullptr;
  return Pkey(key);
}

Pkey GenerateRsa(unsigned bits) {
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  if (ctx == nullptr || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), static_cast<int>(bits)) != 1) {
    return nullptr;
  }
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_keygen(ctx.get(), &key) != 1) return nullptr;
  return Pkey(key);
}

// SignCase: EVP_DigestSign / EVP_DigestVerify over the message, a fresh digest context
// per operation (for SM2 that includes Z = SM3(ID ‖ curve ‖ key), as `openssl speed`).
struct SignCase {
  Pkey key;
  bool sm2 = false;
  std::string message = TestBytes(kSignMessageSize, 30);
  std::string signature;

  bool Init(EVP_MD_CTX* md, bool sign) const {
    EVP_PKEY_CTX* pctx = nullptr;
    const EVP_MD* digest = sm2 ? EVP_sm3() : EVP_sha256();
    const int rc = sign ? EVP_DigestSignInit(md, &pctx, digest, nullptr, key.get())
                        : EVP_DigestVerifyInit(md, &pctx, digest, nullptr, key.get());
    if (rc != 1) return false;
    if (sm2 && EVP_PKEY_CTX_set1_id(pctx, kSm2DefaultUserId.data(), kSm2DefaultUserId.size()) != 1) {
      return false;
    }
    return true;
  }
  bool Sign(std::string& out) const {
    MdCtx md(EVP_MD_CTX_new());
    size_t len = 0;
    if (!Init(md.get(), true) ||
        EVP_DigestSign(md.get(), nullptr, &len, Bytes(message), message.size()) != 1) {
      return false;
    }
    out.resize(len);
    if (EVP_DigestSign(md.get(), Bytes(out), &len, Bytes(message), message.size()) != 1) {
      return false;
    }
    out.resize(len);
    return true;
  }
  bool Verify(const std::string& sig) const {
    MdCtx md(EVP_MD_CTX_new());
    return Init(md.get(), false) &&
           EVP_DigestVerify(md.get(), Bytes(sig), sig.size(), Bytes(message), message.size()) == 1;
  }
};

const SignCase* GetSignCase(int which) {  // 0 SM2, 1 P-256, 2 secp256k1
  static const SignCase* const cases[3] = {
      [] {
        auto* c = new SignCase;
        c->sm2 = true;
        c->key = GenerateEc(nullptr, true);
        if (c->key) c->Sign(c->signature);
        return c;
      }(),
      [] {
        auto* c = new SignCase;
        c->key = GenerateEc("P-256", false);
        if (c->key) c->Sign(c->signature);
        return c;
      }(),
      [] {
        auto* c = new SignCase;
        c->key = GenerateEc("secp256k1", false);
        if (c->key) c->Sign(c->signature);
        return c;
      }(),
  };
  return cases[which];
}

void RegisterSignatures() {
  const struct {
    const char* alg;
    int which;
    const char* label;
  } algs[] = {
      {"SM2", 0, "DER signature, default user ID, Z computed per operation (EVP_DigestSign)"},
      {"ECDSA-P256", 1, "DER signature, SHA-256 of the message"},
      {"ECDSA-SECP256K1", 2, "DER signature, SHA-256 of the message"},
  };
  for (const auto& a : algs) {
    const int which = a.which;
    auto check = [which]() -> std::string {
      const SignCase* c = GetSignCase(which);
      if (c->key == nullptr || c->signature.empty()) return "key generation or signing failed";
      return c->Verify(c->signature) ? "" : "signature does not verify";
    };
    Register(
        CaseName(kImpl, a.alg, "sign", kSignMessageSize), 0, false,
        [which] {
          std::string sig;
          const bool ok = GetSignCase(which)->Sign(sig);
          benchmark::DoNotOptimize(sig);
          return ok;
        },
        check, a.label);
    Register(
        CaseName(kImpl, a.alg, "verify", kSignMessageSize), 0, false,
        [which] {
          const SignCase* c = GetSignCase(which);
          return c->Verify(c->signature);
        },
        check, a.label);
  }
}

// --- Public-key encryption: SM2 and RSA-OAEP -------------------------------------------

// PkeCase: one EVP_PKEY_CTX each way, initialised once. RSA-OAEP uses SHA-256 and
// MGF1-SHA-256 (as smcrypt's RSA-OAEP); a message longer than one OAEP block (k − 66
// bytes) is sent as consecutive maximum-size blocks, each encrypted separately.
struct PkeCase {
  Pkey key;
  std::shared_ptr<EVP_PKEY_CTX> enc;
  std::shared_ptr<EVP_PKEY_CTX> dec;
  size_t block = 0;  // maximum plaintext per operation; 0 = unlimited (SM2)
  size_t ct_block = 0;

  bool Encrypt(const std::string& pt, std::string& out) const {
    out.clear();
    const size_t step = block == 0 ? std::max<size_t>(pt.size(), 1) : block;
    for (size_t off = 0; off < pt.size(); off += step) {
      const size_t n = std::min(step, pt.size() - off);
      size_t len = 0;
      if (EVP_PKEY_encrypt(enc.get(), nullptr, &len, Bytes(pt) + off, n) != 1) return false;
      const size_t at = out.size();
      out.resize(at + len);
      if (EVP_PKEY_encrypt(enc.get(), Bytes(out) + at, &len, Bytes(pt) + off, n) != 1) {
        return false;
      }
      out.resize(at + len);
    }
    return true;
  }
  bool Decrypt(const std::string& ct, std::string& out) const {
    out.clear();
    const size_t step = ct_block == 0 ? ct.size() : ct_block;
    for (size_t off = 0; off < ct.size(); off += step) {
      const size_t n = std::min(step, ct.size() - off);
      size_t len = 0;
      if (EVP_PKEY_decrypt(dec.get(), nullptr, &len, Bytes(ct) + off, n) != 1) return false;
      const size_t at = out.size();
      out.resize(at + len);
      if (EVP_PKEY_decrypt(dec.get(), Bytes(out) + at, &len, Bytes(ct) + off, n) != 1) {
        return false;
      }
      out.resize(at + len);
    }
    return true;
  }
};

const PkeCase* GetPkeCase(int which) {  // 0 SM2, 1 RSA-2048, 2 RSA-3072
  auto make = [](int w) {
    auto* c = new PkeCase;
    c->key = w == 0 ? GenerateEc(nullptr, true) : GenerateRsa(w == 1 ? 2048 : 3072);
    if (c->key == nullptr) return c;
    c->enc = std::shared_ptr<EVP_PKEY_CTX>(EVP_PKEY_CTX_new(c->key.get(), nullptr), EvpPkeyCtxFree());
    c->dec = std::shared_ptr<EVP_PKEY_CTX>(EVP_PKEY_CTX_new(c->key.get(), nullptr), EvpPkeyCtxFree());
    bool ok = EVP_PKEY_encrypt_init(c->enc.get()) == 1 && EVP_PKEY_decrypt_init(c->dec.get()) == 1;
    if (ok && w != 0) {
      for (EVP_PKEY_CTX* p : {c->enc.get(), c->dec.get()}) {
        ok = ok && EVP_PKEY_CTX_set_rsa_padding(p, RSA_PKCS1_OAEP_PADDING) == 1 &&
             EVP_PKEY_CTX_set_rsa_oaep_md(p, EVP_sha256()) == 1 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(p, EVP_sha256()) == 1;
      }
      const size_t k = static_cast<size_t>(EVP_PKEY_get_size(c->key.get()));
      c->block = k - 2 * 32 - 2;
      c->ct_block = k;
    }
    if (!ok) c->key.reset();
    return c;
  };
  static const PkeCase* const cases[3] = {make(0), make(1), make(2)};
  return cases[which];
}

void RegisterPublicKeyEncryption() {
  const struct {
    const char* alg;
    int which;
    size_t block;
  } algs[] = {{"SM2", 0, 0}, {"RSA-2048-OAEP", 1, 256 - 66}, {"RSA-3072-OAEP", 2, 384 - 66}};
  for (const auto& a : algs) {
    const int which = a.which;
    // SM2 also runs at the hybrid sizes (up to 1 MiB), beside the HPKE cases; RSA in
    // blocks stops at 32 KiB as in the study.
    for (size_t n : which == 0 ? PkEncryptAndHybridSizes() : PkEncryptSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 31));
      auto ct = std::make_shared<std::string>();
      std::string label = which == 0 ? "C1C3C2" : "OAEP SHA-256/MGF1-SHA-256";
      if (a.block != 0 && n > a.block) {
        label = absl::StrCat(label, ", ", (n + a.block - 1) / a.block, " blocks of at most ",
                             a.block, " B");
      }
      auto check = [which, pt, ct]() -> std::string {
        const PkeCase* c = GetPkeCase(which);
        if (c->key == nullptr) return "key generation failed";
        std::string back;
        if (!c->Encrypt(*pt, *ct) || !c->Decrypt(*ct, back)) return "EVP_PKEY encrypt/decrypt failed";
        return back == *pt ? "" : "decryption does not invert encryption";
      };
      Register(
          CaseName(kImpl, a.alg, "encrypt", n), n, true,
          [which, pt] {
            std::string out;
            const bool ok = GetPkeCase(which)->Encrypt(*pt, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check, label);
      Register(
          CaseName(kImpl, a.alg, "decrypt", n), n, true,
          [which, ct] {
            std::string out;
            const bool ok = GetPkeCase(which)->Decrypt(*ct, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check, label);
    }
  }
}

// --- P-256 key generation and ECDH ---------------------------------------------------

// The two P-256 operations of one HPKE-P256-SHA256-AES128GCM Encap (RFC 9180 §4.1), each
// as cheap as OpenSSL offers it, so that 1 / (t_keygen + t_derive) from one run bounds
// the hybrid cases from above. keygen: EVP_PKEY_keygen on an EVP_PKEY_CTX prepared once
// (keygen_init, group P-256); the key is freed. ecdh_derive: EVP_PKEY_derive on a
// context prepared once with its own key and a kept, already validated peer key
// (derive_init, set_peer without re-validation); the 32-byte x-coordinate is wiped.
struct P256Case {
  PkeyCtx keygen;
  Pkey own, peer;
  PkeyCtx derive;
};

const P256Case* GetP256Case() {
  static const P256Case* const c = [] {
    auto* p = new P256Case;
    p->keygen.reset(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
    if (p->keygen == nullptr || EVP_PKEY_keygen_init(p->keygen.get()) != 1 ||
        EVP_PKEY_CTX_set_group_name(p->keygen.get(), "P-256") != 1) {
      p->keygen.reset();
      return p;
    }
    p->own = GenerateEc("P-256", false);
    p->peer = GenerateEc("P-256", false);
    if (p->own == nullptr || p->peer == nullptr) return p;
    p->derive.reset(EVP_PKEY_CTX_new_from_pkey(nullptr, p->own.get(), nullptr));
    if (p->derive == nullptr || EVP_PKEY_derive_init(p->derive.get()) != 1 ||
        EVP_PKEY_derive_set_peer_ex(p->derive.get(), p->peer.get(), /*validate_peer=*/0) != 1) {
      p->derive.reset();
    }
    return p;
  }();
  return c;
}

bool P256Derive(EVP_PKEY_CTX* ctx, uint8_t out[32]) {
  size_t len = 32;
  return EVP_PKEY_derive(ctx, out, &len) == 1 && len == 32;
}

void RegisterP256() {
  Register(
      CaseName(kImpl, "P-256", "keygen", 0), 0, false,
      [] {
        EVP_PKEY* key = nullptr;
        const bool ok = EVP_PKEY_keygen(GetP256Case()->keygen.get(), &key) == 1;
        benchmark::DoNotOptimize(key);
        EVP_PKEY_free(key);
        return ok;
      },
      []() -> std::string {
        const P256Case* c = GetP256Case();
        if (c->keygen == nullptr) return "preparing the P-256 keygen context failed";
        EVP_PKEY* key = nullptr;
        if (EVP_PKEY_keygen(c->keygen.get(), &key) != 1) return "EVP_PKEY_keygen failed";
        const bool p256 = EVP_PKEY_is_a(key, "EC") && EVP_PKEY_get_bits(key) == 256;
        EVP_PKEY_free(key);
        return p256 ? "" : "EVP_PKEY_keygen made something other than a P-256 key";
      },
      "EVP_PKEY_keygen on a prepared EVP_PKEY_CTX (group P-256)");
  Register(
      CaseName(kImpl, "P-256", "ecdh_derive", 0), 0, false,
      [] {
        uint8_t out[32];
        const bool ok = P256Derive(GetP256Case()->derive.get(), out);
        benchmark::DoNotOptimize(out);
        OPENSSL_cleanse(out, sizeof(out));
        return ok;
      },
      []() -> std::string {
        const P256Case* c = GetP256Case();
        if (c->derive == nullptr) return "preparing the P-256 ECDH context failed";
        // The other direction (peer's key, own public key) gives the same secret.
        PkeyCtx back(EVP_PKEY_CTX_new_from_pkey(nullptr, c->peer.get(), nullptr));
        uint8_t a[32], b[32];
        if (back == nullptr || EVP_PKEY_derive_init(back.get()) != 1 ||
            EVP_PKEY_derive_set_peer_ex(back.get(), c->own.get(), 1) != 1 ||
            !P256Derive(back.get(), b) || !P256Derive(c->derive.get(), a)) {
          return "EVP_PKEY_derive failed";
        }
        return CRYPTO_memcmp(a, b, sizeof(a)) == 0 ? "" : "ECDH is not symmetric";
      },
      "EVP_PKEY_derive on a prepared context: own key and validated peer key kept");
}

}  // namespace

std::string OpensslPeer() {
  return absl::StrCat("openssl ", OpenSSL_version(OPENSSL_VERSION_STRING));
}

void RegisterOpensslCases(const BenchOptions& options) {
  RegisterHashes(options);
  RegisterBlockModes();
  RegisterAeads();
  RegisterSignatures();
  RegisterPublicKeyEncryption();
  RegisterP256();
}

}  // namespace smcrypt::bench
