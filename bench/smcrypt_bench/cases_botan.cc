// cases_botan.cc — Botan 2 as a user calls it: HashFunction, HMAC, BlockCipher for ECB,
// Cipher_Mode (start + finish per message) for CBC/GCM/CCM, CTR-BE as a StreamCipher,
// and PK_Signer/PK_Verifier/PK_Encryptor_EME/PK_Decryptor_EME. Built only when CMake
// finds Botan 2.
#include "bench/smcrypt_bench/bench_util.h"

#if SMCRYPT_BENCH_HAVE_BOTAN
#include <botan/auto_rng.h>
#include <botan/block_cipher.h>
#include <botan/cipher_mode.h>
#include <botan/ec_group.h>
#include <botan/ecdsa.h>
#include <botan/hash.h>
#include <botan/mac.h>
#include <botan/pubkey.h>
#include <botan/rsa.h>
#include <botan/sm2.h>
#include <botan/stream_cipher.h>
#include <botan/version.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"
#endif

namespace smcrypt::bench {

#if SMCRYPT_BENCH_HAVE_BOTAN
namespace {

const std::string kImpl = "botan";

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
uint8_t* Bytes(std::string& s) { return reinterpret_cast<uint8_t*>(s.data()); }

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
  for (const char* alg : {"SM3", "SHA-256"}) {
    std::shared_ptr<Botan::HashFunction> h(Botan::HashFunction::create(alg).release());
    if (h == nullptr) continue;
    const bool sm3 = std::string(alg) == "SM3";
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 10));
      Register(
          CaseName(kImpl, alg, "hash", n), n, true,
          [h, msg] {
            uint8_t out[32];
            h->update(Bytes(*msg), msg->size());
            h->final(out);
            benchmark::DoNotOptimize(out);
            return true;
          },
          [h, msg, sm3]() -> std::string {
            if (!sm3) return "";
            uint8_t out[32];
            h->update(Bytes(*msg), msg->size());
            h->final(out);
            return std::memcmp(out, Sm3Digest(*msg).data(), 32) == 0
                       ? ""
                       : "Botan SM3 differs from smcrypt's";
          });
    }
  }
  const std::string key = TestBytes(32, 4);
  for (const char* alg : {"HMAC-SM3", "HMAC-SHA-256"}) {
    const bool sm3 = std::string(alg) == "HMAC-SM3";
    std::shared_ptr<Botan::MessageAuthenticationCode> mac(
        Botan::MessageAuthenticationCode::create(sm3 ? "HMAC(SM3)" : "HMAC(SHA-256)").release());
    if (mac == nullptr) continue;
    mac->set_key(Bytes(key), key.size());
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 11));
      Register(
          CaseName(kImpl, alg, "mac", n), n, true,
          [mac, msg] {
            uint8_t out[32];
            mac->update(Bytes(*msg), msg->size());
            mac->final(out);
            benchmark::DoNotOptimize(out);
            return true;
          },
          [mac, msg, key, sm3]() -> std::string {
            if (!sm3) return "";
            uint8_t out[32];
            mac->update(Bytes(*msg), msg->size());
            mac->final(out);
            const auto want = HmacSm3::New(key).value()->ComputeMac(*msg).value();
            return std::string(reinterpret_cast<char*>(out), 32) == want
                       ? ""
                       : "Botan HMAC-SM3 differs from smcrypt's";
          });
    }
  }
}

// SymCase runs one message one way. ECB: BlockCipher; CTR: StreamCipher CTR-BE;
// the rest: Cipher_Mode with start(iv or nonce) + finish.
struct SymCase {
  std::shared_ptr<Botan::BlockCipher> block;
  std::shared_ptr<Botan::StreamCipher> stream;
  std::shared_ptr<Botan::Cipher_Mode> mode;
  const std::string* iv = nullptr;

  bool Run(const std::string& in, std::string& out, bool encrypt) const {
    if (block) {
      out.resize(in.size());
      if (encrypt) block->encrypt_n(Bytes(in), Bytes(out), in.size() / 16);
      else block->decrypt_n(Bytes(in), Bytes(out), in.size() / 16);
      return true;
    }
    if (stream) {
      out.resize(in.size());
      stream->set_iv(Bytes(*iv), iv->size());
      stream->cipher(Bytes(in), Bytes(out), in.size());
      return true;
    }
    try {
      Botan::secure_vector<uint8_t> buf(Bytes(in), Bytes(in) + in.size());
      mode->start(Bytes(*iv), iv->size());
      mode->finish(buf);
      out.assign(reinterpret_cast<const char*>(buf.data()), buf.size());
      return true;
    } catch (const std::exception&) {
      return false;  // Integrity_Failure on a wrong tag
    }
  }
};

std::string SmcryptSm4(const std::string& mode, const std::string& pt) {
  if (mode == "ECB") return NewSm4Ecb(Key16(), Padding::kNone).value()->Encrypt("", pt).value();
  if (mode == "CBC") return NewSm4Cbc(Key16(), Padding::kNone).value()->Encrypt(Iv16(), pt).value();
  if (mode == "CTR") return NewSm4Ctr(Key16()).value()->Encrypt(Iv16(), pt).value();
  if (mode == "GCM") return NewSm4Gcm(Key16()).value()->Seal(Nonce12(), pt, "").value();
  if (mode == "CCM") return NewSm4Ccm(Key16()).value()->Seal(Nonce12(), pt, "").value();
  if (mode == "CFB") return NewSm4Cfb(Key16()).value()->Encrypt(Iv16(), pt).value();
  if (mode == "OFB") return NewSm4Ofb(Key16()).value()->Encrypt(Iv16(), pt).value();
  if (mode == "XTS") {
    return NewSm4Xts(XtsKey32(), Sm4XtsVariant::kIeee1619).value()->Encrypt(Iv16(), pt).value();
  }
  return "";
}

std::shared_ptr<SymCase> MakeSymCase(const std::string& cipher, const std::string& mode,
                                     bool encrypt) {
  auto c = std::make_shared<SymCase>();
  if (mode == "ECB") {
    c->block.reset(Botan::BlockCipher::create(cipher).release());
    if (!c->block) return nullptr;
    c->block->set_key(Bytes(Key16()), 16);
    return c;
  }
  if (mode == "CTR" || mode == "OFB") {
    c->stream.reset(
        Botan::StreamCipher::create((mode == "CTR" ? "CTR-BE(" : "OFB(") + cipher + ")").release());
    if (!c->stream) return nullptr;
    c->stream->set_key(Bytes(Key16()), 16);
    c->iv = &Iv16();
    return c;
  }
  const std::string spec = mode == "CBC"   ? cipher + "/CBC/NoPadding"
                           : mode == "GCM" ? cipher + "/GCM"
                           : mode == "CFB" ? cipher + "/CFB"  // full 128-bit feedback
                           : mode == "XTS" ? cipher + "/XTS"
                                           : cipher + "/CCM(16,3)";  // L = 3: 12-byte nonce
  c->mode.reset(Botan::Cipher_Mode::create(spec, encrypt ? Botan::ENCRYPTION : Botan::DECRYPTION)
                    .release());
  if (!c->mode) return nullptr;
  if (mode == "XTS") {
    c->mode->set_key(Bytes(XtsKey32()), 32);
  } else {
    c->mode->set_key(Bytes(Key16()), 16);
  }
  c->iv = mode == "GCM" || mode == "CCM" ? &Nonce12() : &Iv16();
  return c;
}

void RegisterCiphers() {
  for (const std::string cipher : {"SM4", "AES-128"}) {
    for (const std::string mode : {"ECB", "CBC", "CTR", "CFB", "OFB", "XTS", "GCM", "CCM"}) {
      auto enc = MakeSymCase(cipher, mode, true);
      auto dec = MakeSymCase(cipher, mode, false);
      if (enc == nullptr || dec == nullptr) continue;
      const std::string alg = cipher + "-" + mode;
      const bool aead = mode == "GCM" || mode == "CCM";
      const std::string label = aead ? "12-byte nonce, 16-byte tag, no AAD" : "";
      for (size_t n : CipherSizes()) {
        auto pt = std::make_shared<std::string>(TestBytes(n, aead ? 22 : 20));
        auto ct = std::make_shared<std::string>();
        const bool sm4 = cipher == "SM4";
        auto check = [enc, dec, pt, ct, sm4, mode, alg]() -> std::string {
          std::string back;
          if (!enc->Run(*pt, *ct, true) || !dec->Run(*ct, back, false)) return "Botan failed";
          if (back != *pt) return "decryption does not invert encryption";
          if (sm4 && SmcryptSm4(mode, *pt) != *ct) return "Botan " + alg + " differs from smcrypt's";
          return "";
        };
        Register(
            CaseName(kImpl, alg, "encrypt", n), n, true,
            [enc, pt] {
              std::string out;
              const bool ok = enc->Run(*pt, out, true);
              benchmark::DoNotOptimize(out);
              return ok;
            },
            check, label);
        if (mode == "CTR" || mode == "OFB") continue;
        Register(
            CaseName(kImpl, alg, "decrypt", n), n, true,
            [dec, ct] {
              std::string out;
              const bool ok = dec->Run(*ct, out, false);
              benchmark::DoNotOptimize(out);
              return ok;
            },
            check, label);
      }
    }
  }
}

Botan::RandomNumberGenerator& Rng() {
  static Botan::AutoSeeded_RNG* rng = new Botan::AutoSeeded_RNG;
  return *rng;
}

// Signature keys and objects, made on first use.
struct SignState {
  std::unique_ptr<Botan::Private_Key> key;
  std::unique_ptr<Botan::PK_Signer> signer;
  std::unique_ptr<Botan::PK_Verifier> verifier;
  std::string message = TestBytes(kSignMessageSize, 30);
  std::vector<uint8_t> signature;
};

const SignState& GetSignState(int which) {  // 0 SM2, 1 P-256, 2 secp256k1
  auto make = [](int w) {
    auto* s = new SignState;
    const char* group = w == 0 ? "sm2p256v1" : w == 1 ? "secp256r1" : "secp256k1";
    Botan::EC_Group g(group);
    if (w == 0) s->key = std::make_unique<Botan::SM2_PrivateKey>(Rng(), g);
    else s->key = std::make_unique<Botan::ECDSA_PrivateKey>(Rng(), g);
    const std::string padding = w == 0 ? "SM3" : "EMSA1(SHA-256)";
    s->signer = std::make_unique<Botan::PK_Signer>(*s->key, Rng(), padding, Botan::DER_SEQUENCE);
    s->verifier = std::make_unique<Botan::PK_Verifier>(*s->key, padding, Botan::DER_SEQUENCE);
    s->signature = s->signer->sign_message(Bytes(s->message), s->message.size(), Rng());
    return s;
  };
  static const SignState* const states[3] = {make(0), make(1), make(2)};
  return *states[which];
}

void RegisterSignatures() {
  const struct {
    const char* alg;
    int which;
    const char* label;
  } algs[] = {{"SM2", 0, "DER signature, default user ID, SM3"},
              {"ECDSA-P256", 1, "DER signature, EMSA1(SHA-256)"},
              {"ECDSA-SECP256K1", 2, "DER signature, EMSA1(SHA-256)"}};
  for (const auto& a : algs) {
    const int which = a.which;
    auto check = [which]() -> std::string {
      const SignState& s = GetSignState(which);
      return s.verifier->verify_message(Bytes(s.message), s.message.size(), s.signature.data(),
                                         s.signature.size())
                 ? ""
                 : "Botan signature does not verify";
    };
    Register(
        CaseName(kImpl, a.alg, "sign", kSignMessageSize), 0, false,
        [which] {
          const SignState& s = GetSignState(which);
          auto sig = s.signer->sign_message(Bytes(s.message), s.message.size(), Rng());
          benchmark::DoNotOptimize(sig);
          return !sig.empty();
        },
        check, a.label);
    Register(
        CaseName(kImpl, a.alg, "verify", kSignMessageSize), 0, false,
        [which] {
          const SignState& s = GetSignState(which);
          return s.verifier->verify_message(Bytes(s.message), s.message.size(),
                                            s.signature.data(), s.signature.size());
        },
        check, a.label);
  }
}

// Public-key encryption: SM2 (SM3 KDF/C3) and RSA-OAEP(SHA-256); RSA beyond one block is
// sent as consecutive maximum-size blocks.
struct PkeState {
  std::unique_ptr<Botan::Private_Key> key;
  std::unique_ptr<Botan::PK_Encryptor_EME> enc;
  std::unique_ptr<Botan::PK_Decryptor_EME> dec;
  size_t block = 0;     // maximum plaintext per operation; 0 = unlimited
  size_t ct_block = 0;  // RSA ciphertext block

  bool Encrypt(const std::string& pt, std::string& out) const {
    out.clear();
    const size_t step = block == 0 ? std::max<size_t>(pt.size(), 1) : block;
    for (size_t off = 0; off < pt.size(); off += step) {
      const size_t n = std::min(step, pt.size() - off);
      auto c = enc->encrypt(Bytes(pt) + off, n, Rng());
      out.append(reinterpret_cast<const char*>(c.data()), c.size());
    }
    return true;
  }
  bool Decrypt(const std::string& ct, std::string& out) const {
    out.clear();
    const size_t step = ct_block == 0 ? ct.size() : ct_block;
    try {
      for (size_t off = 0; off < ct.size(); off += step) {
        auto p = dec->decrypt(Bytes(ct) + off, std::min(step, ct.size() - off));
        out.append(reinterpret_cast<const char*>(p.data()), p.size());
      }
    } catch (const std::exception&) {
      return false;
    }
    return true;
  }
};

const PkeState& GetPkeState(int which) {  // 0 SM2, 1 RSA-2048, 2 RSA-3072
  auto make = [](int w) {
    auto* s = new PkeState;
    std::string padding = "SM3";
    if (w == 0) {
      s->key = std::make_unique<Botan::SM2_PrivateKey>(Rng(), Botan::EC_Group("sm2p256v1"));
    } else {
      s->key = std::make_unique<Botan::RSA_PrivateKey>(Rng(), w == 1 ? 2048 : 3072);
      padding = "OAEP(SHA-256)";
      s->ct_block = w == 1 ? 256 : 384;
      s->block = s->ct_block - 66;
    }
    s->enc = std::make_unique<Botan::PK_Encryptor_EME>(*s->key, Rng(), padding);
    s->dec = std::make_unique<Botan::PK_Decryptor_EME>(*s->key, Rng(), padding);
    return s;
  };
  static const PkeState* const states[3] = {make(0), make(1), make(2)};
  return *states[which];
}

void RegisterPublicKeyEncryption() {
  const struct {
    const char* alg;
    int which;
    size_t block;
  } algs[] = {{"SM2", 0, 0}, {"RSA-2048-OAEP", 1, 190}, {"RSA-3072-OAEP", 2, 318}};
  for (const auto& a : algs) {
    const int which = a.which;
    for (size_t n : PkEncryptSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 31));
      auto ct = std::make_shared<std::string>();
      std::string label = which == 0 ? "C1C3C2" : "OAEP SHA-256/MGF1-SHA-256";
      if (a.block != 0 && n > a.block) {
        label = absl::StrCat(label, ", ", (n + a.block - 1) / a.block, " blocks of at most ",
                             a.block, " B");
      }
      auto check = [which, pt, ct]() -> std::string {
        const PkeState& s = GetPkeState(which);
        std::string back;
        if (!s.Encrypt(*pt, *ct) || !s.Decrypt(*ct, back)) return "Botan encrypt/decrypt failed";
        return back == *pt ? "" : "decryption does not invert encryption";
      };
      Register(
          CaseName(kImpl, a.alg, "encrypt", n), n, true,
          [which, pt] {
            std::string out;
            const bool ok = GetPkeState(which).Encrypt(*pt, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check, label);
      Register(
          CaseName(kImpl, a.alg, "decrypt", n), n, true,
          [which, ct] {
            std::string out;
            const bool ok = GetPkeState(which).Decrypt(*ct, out);
            benchmark::DoNotOptimize(out);
            return ok;
          },
          check, label);
    }
  }
}

}  // namespace

std::string BotanPeer() {
  return absl::StrCat("botan ", Botan::version_major(), ".", Botan::version_minor(), ".",
                      Botan::version_patch());
}

void RegisterBotanCases(const BenchOptions& options) {
  RegisterHashes();
  RegisterCiphers();
  RegisterSignatures();
  RegisterPublicKeyEncryption();
}

#else  // !SMCRYPT_BENCH_HAVE_BOTAN

std::string BotanPeer() { return ""; }
void RegisterBotanCases(const BenchOptions&) {}

#endif

}  // namespace smcrypt::bench
