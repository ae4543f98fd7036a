// cases_smcrypt.cc — smcrypt's own cases, one implementation name per back end.
//
// Back-end selection. SM3 hashing, the SM3 batch function and SM4-ECB run on every back
// end this CPU supports, chosen explicitly: each case calls the function pointers of one
// Sm3Kernels / Sm4Kernels table entry, through the same code path the public API uses
// (Sm3DigestWithKernel for Sm3Digest; the batch pointer, else one digest per message, for
// Sm3Batch; encrypt_blocks into a fresh output string for SM4-ECB without padding). Each
// such case first checks that its output equals the public API's. The other modes
// (SM4-CBC/CTR/GCM/CCM, HMAC-SM3, the 1 GiB stream) and SM2 run through the public API,
// so on the back end dispatch chose; they are named after that back end. To measure them
// on another back end, hide features with SMCRYPT_CPU_DISABLE (see bench/README.md).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "bench/smcrypt_bench/bench_util.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm3/sm3_internal.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/cpu.h"
#include "smcrypt/primitives/hybrid_encrypt.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"

namespace smcrypt::bench {
namespace {

std::vector<std::string>& ImplNames() {
  static std::vector<std::string> names;
  return names;
}

void NoteImpl(const std::string& impl) {
  for (const std::string& n : ImplNames()) {
    if (n == impl) return;
  }
  ImplNames().push_back(impl);
}

uint8_t* Bytes(std::string& s) { return reinterpret_cast<uint8_t*>(s.data()); }
const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// The key, IV and nonce every implementation uses (not secrets: test values).
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

// The number of messages one SM3 batch call hashes (the widest multi-buffer back end).
constexpr size_t kBatchMessages = 16;

void RegisterSm3(const BenchOptions& options) {
  const uint32_t features = GetCpuFeatures();
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (!internal::HasFeatures(features, k->required_features)) continue;
    const std::string impl = absl::StrCat("smcrypt.", k->name);
    NoteImpl(impl);
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 10));
      Register(
          CaseName(impl, "SM3", "hash", n), n, true,
          [k, msg] {
            uint8_t out[kSm3DigestSize];
            Sm3DigestWithKernel(*k, *msg, out);
            benchmark::DoNotOptimize(out);
            return true;
          },
          [k, msg]() -> std::string {
            uint8_t out[kSm3DigestSize];
            Sm3DigestWithKernel(*k, *msg, out);
            const auto want = Sm3Digest(*msg);
            return std::memcmp(out, want.data(), kSm3DigestSize) == 0
                       ? ""
                       : "digest differs from Sm3Digest";
          });
      // Sm3Batch's path with this back end: its batch function, else one digest each.
      auto batch_in = std::make_shared<std::vector<std::string>>();
      for (size_t i = 0; i < kBatchMessages; ++i) batch_in->push_back(TestBytes(n, 100 + i));
      auto run_batch = [k, batch_in](uint8_t* out) {
        absl::string_view views[kBatchMessages];
        for (size_t i = 0; i < kBatchMessages; ++i) views[i] = (*batch_in)[i];
        if (k->batch != nullptr) {
          k->batch(views, kBatchMessages, out);
        } else {
          for (size_t i = 0; i < kBatchMessages; ++i) {
            Sm3DigestWithKernel(*k, views[i], out + kSm3DigestSize * i);
          }
        }
      };
      Register(
          CaseName(impl, "SM3", "batch16", n), n * kBatchMessages, true,
          [run_batch] {
            uint8_t out[kSm3DigestSize * kBatchMessages];
            run_batch(out);
            benchmark::DoNotOptimize(out);
            return true;
          },
          [run_batch, batch_in]() -> std::string {
            uint8_t out[kSm3DigestSize * kBatchMessages];
            run_batch(out);
            for (size_t i = 0; i < kBatchMessages; ++i) {
              const auto want = Sm3Digest((*batch_in)[i]);
              if (std::memcmp(out + kSm3DigestSize * i, want.data(), kSm3DigestSize) != 0) {
                return "batch digest differs from Sm3Digest";
              }
            }
            return "";
          },
          absl::StrCat(kBatchMessages, " messages of ", n, " B"));
    }
  }

  const std::string active = absl::StrCat("smcrypt.", Sm3ActiveKernels().name);
  NoteImpl(active);
  const std::string mac_key = TestBytes(32, 4);
  for (size_t n : HashSizes()) {
    auto msg = std::make_shared<std::string>(TestBytes(n, 11));
    std::shared_ptr<HmacSm3> mac(HmacSm3::New(mac_key).value().release());
    Register(
        CaseName(active, "HMAC-SM3", "mac", n), n, true,
        [mac, msg] {
          auto tag = mac->ComputeMac(*msg);
          benchmark::DoNotOptimize(tag);
          return tag.ok();
        },
        [mac, msg]() -> std::string {
          auto tag = mac->ComputeMac(*msg);
          if (!tag.ok()) return std::string(tag.status().message());
          return mac->VerifyMac(*tag, *msg).ok() ? "" : "HMAC-SM3 tag does not verify";
        });
  }
  if (options.large) {
    auto chunk = std::make_shared<std::string>(TestBytes(kLargeChunkSize, 12));
    Register(
        CaseName(active, "SM3", "hash", kLargeStreamSize), kLargeStreamSize, true,
        [chunk] {
          Sm3 h;
          for (size_t done = 0; done < kLargeStreamSize; done += chunk->size()) h.Update(*chunk);
          auto d = h.Finish();
          benchmark::DoNotOptimize(d);
          return true;
        },
        nullptr, "streamed in 1 MiB updates");
  }
}

void RegisterSm4() {
  Sm4Key key;
  if (!Sm4ExpandKey(Key16(), &key).ok()) return;
  auto shared_key = std::make_shared<Sm4Key>(key);
  std::shared_ptr<Cipher> lib_ecb(NewSm4Ecb(Key16(), Padding::kNone).value().release());

  const uint32_t features = GetCpuFeatures();
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) {
    if (!internal::HasFeatures(features, k->required_features)) continue;
    const std::string impl = absl::StrCat("smcrypt.", k->name);
    NoteImpl(impl);
    for (size_t n : CipherSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 20));
      auto ct = std::make_shared<std::string>(lib_ecb->Encrypt("", *pt).value());
      // What NewSm4Ecb(key, Padding::kNone) does per call, on this back end.
      auto ecb = [k, shared_key](const uint32_t* rk, const std::string& in) {
        std::string out(in.size(), '\0');
        k->encrypt_blocks(rk, Bytes(in), Bytes(out), in.size() / kSm4BlockSize);
        return out;
      };
      Register(
          CaseName(impl, "SM4-ECB", "encrypt", n), n, true,
          [ecb, shared_key, pt] {
            auto out = ecb(shared_key->rk_enc, *pt);
            benchmark::DoNotOptimize(out);
            return true;
          },
          [ecb, shared_key, pt, ct]() -> std::string {
            return ecb(shared_key->rk_enc, *pt) == *ct ? "" : "differs from NewSm4Ecb";
          });
      Register(
          CaseName(impl, "SM4-ECB", "decrypt", n), n, true,
          [ecb, shared_key, ct] {
            auto out = ecb(shared_key->rk_dec, *ct);
            benchmark::DoNotOptimize(out);
            return true;
          },
          [ecb, shared_key, pt, ct]() -> std::string {
            return ecb(shared_key->rk_dec, *ct) == *pt ? "" : "does not invert NewSm4Ecb";
          });
    }
  }

  // The modes through the public API, on the dispatched back end.
  const std::string active = absl::StrCat("smcrypt.", Sm4ActiveKernels().name);
  NoteImpl(active);
  struct CipherMode {
    const char* alg;
    std::shared_ptr<Cipher> cipher;
    bool decrypt;  // CTR decryption is encryption
  };
  const CipherMode modes[] = {
      {"SM4-CBC", std::shared_ptr<Cipher>(NewSm4Cbc(Key16(), Padding::kNone).value().release()),
       true},
      {"SM4-CTR", std::shared_ptr<Cipher>(NewSm4Ctr(Key16()).value().release()), false},
  };
  for (const CipherMode& m : modes) {
    for (size_t n : CipherSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 21));
      auto c = m.cipher;
      auto ct = std::make_shared<std::string>(c->Encrypt(Iv16(), *pt).value());
      auto round_trip = [c, pt, ct]() -> std::string {
        auto back = c->Decrypt(Iv16(), *ct);
        return back.ok() && *back == *pt ? "" : "decryption does not invert encryption";
      };
      Register(
          CaseName(active, m.alg, "encrypt", n), n, true,
          [c, pt] {
            auto out = c->Encrypt(Iv16(), *pt);
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip);
      if (!m.decrypt) continue;
      Register(
          CaseName(active, m.alg, "decrypt", n), n, true,
          [c, ct] {
            auto out = c->Decrypt(Iv16(), *ct);
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip);
    }
  }
  struct AeadMode {
    const char* alg;
    std::shared_ptr<Aead> aead;
  };
  const AeadMode aeads[] = {
      {"SM4-GCM", std::shared_ptr<Aead>(NewSm4Gcm(Key16()).value().release())},
      {"SM4-CCM", std::shared_ptr<Aead>(NewSm4Ccm(Key16()).value().release())},
  };
  for (const AeadMode& m : aeads) {
    for (size_t n : CipherSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 22));
      auto a = m.aead;
      auto ct = std::make_shared<std::string>(a->Seal(Nonce12(), *pt, "").value());
      auto round_trip = [a, pt, ct]() -> std::string {
        auto back = a->Open(Nonce12(), *ct, "");
        return back.ok() && *back == *pt ? "" : "Open does not invert Seal";
      };
      Register(
          CaseName(active, m.alg, "encrypt", n), n, true,
          [a, pt] {
            auto out = a->Seal(Nonce12(), *pt, "");
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip, "12-byte nonce, 16-byte tag, no AAD");
      Register(
          CaseName(active, m.alg, "decrypt", n), n, true,
          [a, ct] {
            auto out = a->Open(Nonce12(), *ct, "");
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip, "12-byte nonce, 16-byte tag, no AAD");
    }
  }
}

// SM2 keys and primitives, made on first use (key generation is not timed).
struct Sm2State {
  std::unique_ptr<PublicKeySign> signer;
  std::unique_ptr<PublicKeyVerify> verifier;
  std::unique_ptr<PublicKeyEncrypt> encrypter;
  std::unique_ptr<PublicKeyDecrypt> decrypter;
  std::string message = TestBytes(kSignMessageSize, 30);
  std::string signature;
  std::string error;
};

const Sm2State& GetSm2State() {
  static const Sm2State* const state = [] {
    auto* s = new Sm2State;
    auto kp = GenerateKeyPair(Algorithm::kSm2);
    if (!kp.ok()) {
      s->error = std::string(kp.status().message());
      return s;
    }
    const absl::string_view priv(reinterpret_cast<const char*>(kp->private_key_der.data()),
                                 kp->private_key_der.size());
    auto sign = NewPublicKeySign(Algorithm::kSm2, priv);
    auto verify = NewPublicKeyVerify(Algorithm::kSm2, kp->public_key_der);
    auto enc = NewPublicKeyEncrypt(Algorithm::kSm2, kp->public_key_der);
    auto dec = NewPublicKeyDecrypt(Algorithm::kSm2, priv);
    if (!sign.ok() || !verify.ok() || !enc.ok() || !dec.ok()) {
      s->error = "SM2 primitive construction failed";
      return s;
    }
    s->signer = *std::move(sign);
    s->verifier = *std::move(verify);
    s->encrypter = *std::move(enc);
    s->decrypter = *std::move(dec);
    auto sig = s->signer->Sign(s->message);
    if (!sig.ok()) s->error = std::string(sig.status().message());
    else s->signature = *sig;
    return s;
  }();
  return *state;
}

void RegisterSm2() {
  const std::string impl = absl::StrCat("smcrypt.", internal::Sm2ActiveKernelName());
  NoteImpl(impl);
  auto check_sig = []() -> std::string {
    const Sm2State& s = GetSm2State();
    if (!s.error.empty()) return s.error;
    return s.verifier->Verify(s.signature, s.message).ok() ? "" : "SM2 signature does not verify";
  };
  const std::string label = "DER signature, default user ID, Z precomputed by the key object";
  Register(
      CaseName(impl, "SM2", "sign", kSignMessageSize), 0, false,
      [] {
        auto sig = GetSm2State().signer->Sign(GetSm2State().message);
        benchmark::DoNotOptimize(sig);
        return sig.ok();
      },
      check_sig, label);
  Register(
      CaseName(impl, "SM2", "verify", kSignMessageSize), 0, false,
      [] {
        const Sm2State& s = GetSm2State();
        return s.verifier->Verify(s.signature, s.message).ok();
      },
      check_sig, label);
  for (size_t n : PkEncryptAndHybridSizes()) {
    auto pt = std::make_shared<std::string>(TestBytes(n, 31));
    auto ct = std::make_shared<std::string>();
    auto check = [pt, ct]() -> std::string {
      const Sm2State& s = GetSm2State();
      if (!s.error.empty()) return s.error;
      auto c = s.encrypter->Encrypt(*pt);
      if (!c.ok()) return std::string(c.status().message());
      *ct = *c;
      auto back = s.decrypter->Decrypt(*ct);
      return back.ok() && *back == *pt ? "" : "SM2 decryption does not invert encryption";
    };
    Register(
        CaseName(impl, "SM2", "encrypt", n), n, true,
        [pt] {
          auto c = GetSm2State().encrypter->Encrypt(*pt);
          benchmark::DoNotOptimize(c);
          return c.ok();
        },
        check, "C1C3C2");
    Register(
        CaseName(impl, "SM2", "decrypt", n), n, true,
        [ct] {
          auto p = GetSm2State().decrypter->Decrypt(*ct);
          benchmark::DoNotOptimize(p);
          return p.ok();
        },
        check, "C1C3C2");
  }
}

// Hybrid encryption (HPKE base mode, RFC 9180) in both suites, through the registry as
// the service uses it: the ciphertext is smcrypt's wire format (7-byte header as aad, enc,
// AEAD ciphertext), info empty. One operation = one whole Encrypt or Decrypt, key
// encapsulation included. The SM suite runs on smcrypt's SM2, SM3 and SM4 back ends and
// is named after the SM2 one (the SM2 cases' name, so the two sit side by side). The P-256
// suite is smcrypt's RFC 9180 key schedule over OpenSSL EVP (P-256 ECDH, HKDF-SHA256,
// AES-128-GCM) — OpenSSL 3.0 has no HPKE of its own — and is named "openssl".
struct HybridState {
  std::unique_ptr<HybridEncrypt> encrypter;
  std::unique_ptr<HybridDecrypt> decrypter;
  std::string error;
};

const HybridState& GetHybridState(Algorithm alg) {
  auto make = [](Algorithm a) {
    auto* s = new HybridState;
    auto kp = GenerateKeyPair(a);
    if (!kp.ok()) {
      s->error = std::string(kp.status().message());
      return s;
    }
    const absl::string_view priv(reinterpret_cast<const char*>(kp->private_key_der.data()),
                                 kp->private_key_der.size());
    auto enc = NewHybridEncrypt(a, kp->public_key_der);
    auto dec = NewHybridDecrypt(a, priv);
    if (!enc.ok() || !dec.ok()) {
      s->error = "hybrid primitive construction failed";
      return s;
    }
    s->encrypter = *std::move(enc);
    s->decrypter = *std::move(dec);
    return s;
  };
  static const HybridState* const sm = make(Algorithm::kHpkeSm2Sm3Sm4Gcm);
  static const HybridState* const p256 = make(Algorithm::kHpkeP256Sha256Aes128Gcm);
  return alg == Algorithm::kHpkeSm2Sm3Sm4Gcm ? *sm : *p256;
}

void RegisterHybrid() {
  const std::string sm_impl = absl::StrCat("smcrypt.", internal::Sm2ActiveKernelName());
  NoteImpl(sm_impl);
  const std::string sm_label =
      absl::StrCat("SM2 ", internal::Sm2ActiveKernelName(), ", SM3 ", Sm3ActiveKernels().name,
                   ", SM4 ", Sm4ActiveKernels().name, "; wire format, empty info");
  const struct {
    Algorithm alg;
    const char* name;
    std::string impl;
    std::string label;
  } suites[] = {
      {Algorithm::kHpkeSm2Sm3Sm4Gcm, "HPKE-SM2-SM3-SM4GCM", sm_impl, sm_label},
      {Algorithm::kHpkeP256Sha256Aes128Gcm, "HPKE-P256-SHA256-AES128GCM", "openssl",
       "smcrypt's RFC 9180 key schedule over OpenSSL EVP; wire format, empty info"},
  };
  for (const auto& suite : suites) {
    const Algorithm alg = suite.alg;
    for (size_t n : HybridSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 32));
      auto ct = std::make_shared<std::string>();
      auto check = [alg, pt, ct]() -> std::string {
        const HybridState& s = GetHybridState(alg);
        if (!s.error.empty()) return s.error;
        auto c = s.encrypter->Encrypt(*pt, "");
        if (!c.ok()) return std::string(c.status().message());
        *ct = *c;
        auto back = s.decrypter->Decrypt(*ct, "");
        return back.ok() && *back == *pt ? "" : "hybrid decryption does not invert encryption";
      };
      Register(
          CaseName(suite.impl, suite.name, "encrypt", n), n, true,
          [alg, pt] {
            auto c = GetHybridState(alg).encrypter->Encrypt(*pt, "");
            benchmark::DoNotOptimize(c);
            return c.ok();
          },
          check, suite.label);
      Register(
          CaseName(suite.impl, suite.name, "decrypt", n), n, true,
          [alg, ct] {
            auto p = GetHybridState(alg).decrypter->Decrypt(*ct, "");
            benchmark::DoNotOptimize(p);
            return p.ok();
          },
          check, suite.label);
    }
  }
}

}  // namespace

void RegisterSmcryptCases(const BenchOptions& options) {
  RegisterSm3(options);
  RegisterSm4();
  RegisterSm2();
  RegisterHybrid();
}

std::vector<std::string> SmcryptImplementations() { return ImplNames(); }

}  // namespace smcrypt::bench
