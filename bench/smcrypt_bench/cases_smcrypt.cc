// cases_smcrypt.cc — smcrypt's own cases, one implementation name per back end.
//
// Back-end selection. Every case runs on every back end this CPU supports, chosen
// explicitly and named after it: SM4-ECB calls that back end's encrypt_blocks directly
// (checked against NewSm4Ecb); everything else (SM3, HMAC-SM3, the SM3 batch and KDF,
// the SM4 modes, SM2) goes through the public API with the back end selected by the
// *SetKernelsForTesting seams of crypto/sm{2,3,4} around the case's check and timing
// loop, dispatch restored after. SM3 single-stream back ends (avx_bmi2, generic) run
// hashes and MACs; multi-buffer ones (mb16_avx512, mb8_avx2) run batches and the
// lane-parallel KDF. Hybrid encryption and the 1 GiB stream run on the dispatched back ends.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "bench/smcrypt_bench/bench_util.h"
#include "crypto/core/sm2_primitives.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_key_cache.h"
#include "crypto/sm3/sm3_internal.h"
#include "crypto/sm4/ghash.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/cpu.h"
#include "smcrypt/primitives/hybrid_encrypt.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"
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

// The sizes of the SM3 KDF cases (bytes of KDF output, Z = 64 bytes as in SM2 encryption).
const std::vector<size_t>& KdfSizes() {
  static const std::vector<size_t> kSizes = {32, 256, 1024, 16384};
  return kSizes;
}

// SM3: single-stream back ends (avx_bmi2, generic) run the hash, HMAC-SM3, a batch of 16
// one after another, and the KDF serially; multi-buffer back ends (mb16_avx512,
// mb8_avx2) run the batch, the HMAC batch and the lane-parallel KDF. Each case selects
// its back end with Sm3SetKernelsForTesting around its check and loop.
void RegisterSm3(const BenchOptions& options) {
  const uint32_t features = GetCpuFeatures();
  const std::string mac_key = TestBytes(32, 4);
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (!internal::HasFeatures(features, k->required_features)) continue;
    const std::string impl = absl::StrCat("smcrypt.", k->name);
    NoteImpl(impl);
    auto select = [k](bool on) { Sm3SetKernelsForTesting(on ? k : nullptr); };
    const bool multi = k->lanes > 0;
    for (size_t n : HashSizes()) {
      auto msg = std::make_shared<std::string>(TestBytes(n, 10));
      if (!multi) {
        Register(
            CaseName(impl, "SM3", "hash", n), n, true,
            [msg] {
              auto d = Sm3Digest(*msg);
              benchmark::DoNotOptimize(d);
              return true;
            },
            [k, msg]() -> std::string {
              uint8_t want[kSm3DigestSize];
              Sm3DigestWithKernel(*k, *msg, want);
              const auto got = Sm3Digest(*msg);
              return std::memcmp(got.data(), want, kSm3DigestSize) == 0
                         ? ""
                         : "Sm3Digest differs from this back end's CF";
            },
            "", select);
        std::shared_ptr<HmacSm3> mac(HmacSm3::New(mac_key).value().release());
        Register(
            CaseName(impl, "HMAC-SM3", "mac", n), n, true,
            [mac, msg] {
              auto tag = mac->ComputeMac(*msg);
              benchmark::DoNotOptimize(tag);
              return tag.ok();
            },
            [mac, msg]() -> std::string {
              auto tag = mac->ComputeMac(*msg);
              if (!tag.ok()) return std::string(tag.status().message());
              return mac->VerifyMac(*tag, *msg).ok() ? "" : "HMAC-SM3 tag does not verify";
            },
            "key midstates cached by the key object", select);
      }
      // Sm3Batch of 16 messages: lanes on a multi-buffer back end, one after another on
      // a single-stream one.
      auto batch_in = std::make_shared<std::vector<std::string>>();
      for (size_t i = 0; i < kBatchMessages; ++i) batch_in->push_back(TestBytes(n, 100 + i));
      auto views = std::make_shared<std::vector<absl::string_view>>(batch_in->begin(),
                                                                    batch_in->end());
      Register(
          CaseName(impl, "SM3", "batch16", n), n * kBatchMessages, true,
          [views] {
            uint8_t out[kSm3DigestSize * kBatchMessages];
            Sm3Batch(*views, out);
            benchmark::DoNotOptimize(out);
            return true;
          },
          [views, batch_in]() -> std::string {
            uint8_t out[kSm3DigestSize * kBatchMessages];
            Sm3Batch(*views, out);
            for (size_t i = 0; i < kBatchMessages; ++i) {
              uint8_t want[kSm3DigestSize];
              Sm3DigestWithKernel(*Sm3AllKernelsForTesting().back(), (*batch_in)[i], want);
              if (std::memcmp(out + kSm3DigestSize * i, want, kSm3DigestSize) != 0) {
                return "batch digest differs from the generic back end";
              }
            }
            return "";
          },
          absl::StrCat(kBatchMessages, " messages of ", n, " B"), select);
      if (multi) {
        // HMAC-SM3 of 16 messages under one key, in lanes (internal::HmacSm3Batch).
        std::shared_ptr<HmacSm3> mac(HmacSm3::New(mac_key).value().release());
        Register(
            CaseName(impl, "HMAC-SM3", "batch16", n), n * kBatchMessages, true,
            [mac, views] {
              const HmacSm3* keys[kBatchMessages];
              for (auto& key : keys) key = mac.get();
              uint8_t out[kSm3DigestSize * kBatchMessages];
              internal::HmacSm3Batch(keys, views->data(), kBatchMessages, out);
              benchmark::DoNotOptimize(out);
              return true;
            },
            [mac, views]() -> std::string {
              const HmacSm3* keys[kBatchMessages];
              for (auto& key : keys) key = mac.get();
              uint8_t out[kSm3DigestSize * kBatchMessages];
              internal::HmacSm3Batch(keys, views->data(), kBatchMessages, out);
              for (size_t i = 0; i < kBatchMessages; ++i) {
                auto want = mac->ComputeMac((*views)[i]);
                if (!want.ok() || std::memcmp(out + kSm3DigestSize * i, want->data(),
                                              kSm3DigestSize) != 0) {
                  return "HMAC batch differs from ComputeMac";
                }
              }
              return "";
            },
            absl::StrCat(kBatchMessages, " messages of ", n, " B, one key"), select);
      }
    }
    // The SM2 KDF (GB/T 32918.4 §5.4.3) over Z = 64 bytes: counter blocks in lanes on a
    // multi-buffer back end, one after another on a single-stream one.
    auto z = std::make_shared<std::string>(TestBytes(64, 13));
    for (size_t n : KdfSizes()) {
      Register(
          CaseName(impl, "SM3-KDF", "derive", n), n, true,
          [z, n] {
            std::string out(n, '\0');
            const uint64_t zero = Sm3Kdf(Bytes(*z), z->size(), nullptr, Bytes(out), n);
            benchmark::DoNotOptimize(out);
            return zero == 0;
          },
          [z, n]() -> std::string {
            std::string out(n, '\0'), want;
            Sm3Kdf(Bytes(*z), z->size(), nullptr, Bytes(out), n);
            for (uint32_t ct = 1; want.size() < n; ++ct) {
              const uint8_t c[4] = {uint8_t(ct >> 24), uint8_t(ct >> 16), uint8_t(ct >> 8),
                                    uint8_t(ct)};
              uint8_t d[kSm3DigestSize];
              Sm3DigestWithKernel(*Sm3AllKernelsForTesting().back(),
                                  *z + std::string(reinterpret_cast<const char*>(c), 4), d);
              want.append(reinterpret_cast<const char*>(d), kSm3DigestSize);
            }
            want.resize(n);
            return out == want ? "" : "KDF output differs from SM3(Z || ct) on generic";
          },
          "Z = 64 bytes (x2 || y2)", select);
    }
  }

  if (options.large) {
    // The 1 GiB stream on the dispatched single-stream back end.
    std::string single = Sm3ActiveKernels().name;
    single = single.substr(0, single.find('+'));
    const std::string active = absl::StrCat("smcrypt.", single);
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

void RegisterSm4Modes(const Sm4Kernels* k, uint32_t features);

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

  // The modes through the public API, on each back end this CPU supports: each case
  // selects its back end (Sm4SetKernelsForTesting, and for GCM the GHASH back end that CPU
  // class would get) around its check and its timing loop, and restores dispatch after.
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) {
    if (!internal::HasFeatures(features, k->required_features)) continue;
    RegisterSm4Modes(k, features);
  }
}

// GhashFor is the GHASH back end a CPU offering only `k`'s class of features would get:
// generic beside generic SM4; otherwise the best this CPU has among those needing nothing
// beyond k's features plus the carry-less multiply extensions of its generation.
const internal::GhashKernels* GhashFor(const Sm4Kernels* k, uint32_t features) {
  uint32_t allowed = 0;
  if (k->required_features != 0) {
    allowed = k->required_features | kCpuPclmul | kCpuAvx;
    if (k->required_features & kCpuAvx512) allowed |= kCpuVpclmulqdq | kCpuAvx512;
  }
  for (const internal::GhashKernels* g : internal::GhashAllKernelsForTesting()) {
    if (internal::HasFeatures(features & allowed, g->required_features)) return g;
  }
  return &internal::kGhashGeneric;
}

void RegisterSm4Modes(const Sm4Kernels* k, uint32_t features) {
  const std::string impl = absl::StrCat("smcrypt.", k->name);
  NoteImpl(impl);
  const internal::GhashKernels* ghash = GhashFor(k, features);
  // Select this back end while the case runs: `on` true before the check and the loop,
  // false after (dispatch restored).
  auto select = [k, ghash](bool on) {
    Sm4SetKernelsForTesting(on ? k : nullptr);
    internal::GhashSetKernelsForTesting(on ? ghash : nullptr);
  };
  // Objects built with this back end selected (an Sm4Gcm keeps the GHASH of its creation).
  select(true);
  struct CipherMode {
    const char* alg;
    std::shared_ptr<Cipher> cipher;
    bool decrypt;  // CTR decryption is encryption
  };
  const CipherMode modes[] = {
      {"SM4-CBC", std::shared_ptr<Cipher>(NewSm4Cbc(Key16(), Padding::kNone).value().release()),
       true},
      {"SM4-CTR", std::shared_ptr<Cipher>(NewSm4Ctr(Key16()).value().release()), false},
      // CFB encryption is serial, its decryption parallel; OFB is one keystream both ways.
      {"SM4-CFB", std::shared_ptr<Cipher>(NewSm4Cfb(Key16()).value().release()), true},
      {"SM4-OFB", std::shared_ptr<Cipher>(NewSm4Ofb(Key16()).value().release()), false},
      // One message is one data unit (16 B to 16 MiB); the 32-byte key is K1 || K2.
      {"SM4-XTS",
       std::shared_ptr<Cipher>(NewSm4Xts(XtsKey32(), Sm4XtsVariant::kIeee1619).value().release()),
       true},
  };
  struct AeadMode {
    const char* alg;
    std::shared_ptr<Aead> aead;
  };
  const AeadMode aeads[] = {
      {"SM4-GCM", std::shared_ptr<Aead>(NewSm4Gcm(Key16()).value().release())},
      {"SM4-CCM", std::shared_ptr<Aead>(NewSm4Ccm(Key16()).value().release())},
  };
  select(false);

  for (const CipherMode& m : modes) {
    for (size_t n : CipherSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 21));
      auto c = m.cipher;
      select(true);
      auto ct = std::make_shared<std::string>(c->Encrypt(Iv16(), *pt).value());
      select(false);
      auto round_trip = [c, pt, ct]() -> std::string {
        auto back = c->Decrypt(Iv16(), *ct);
        return back.ok() && *back == *pt ? "" : "decryption does not invert encryption";
      };
      Register(
          CaseName(impl, m.alg, "encrypt", n), n, true,
          [c, pt] {
            auto out = c->Encrypt(Iv16(), *pt);
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip, "", select);
      if (!m.decrypt) continue;
      Register(
          CaseName(impl, m.alg, "decrypt", n), n, true,
          [c, ct] {
            auto out = c->Decrypt(Iv16(), *ct);
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip, "", select);
    }
  }
  // Multi-buffer CBC encryption: 16 independent messages, each with its own key and IV,
  // in one Sm4CbcEncryptMulti call (lanes on back ends that have them, else one after
  // another), checked against NewSm4Cbc per message.
  constexpr size_t kMulti = 16;
  for (size_t n : CipherSizes()) {
    struct MultiState {
      std::vector<Sm4Key> keys;
      std::vector<std::string> keys_raw, ivs, pts;
    };
    auto st = std::make_shared<MultiState>();
    for (size_t i = 0; i < kMulti; ++i) {
      st->keys_raw.push_back(TestBytes(16, 200 + i));
      st->ivs.push_back(TestBytes(16, 300 + i));
      st->pts.push_back(TestBytes(n, 400 + i));
      Sm4Key key;
      if (!Sm4ExpandKey(st->keys_raw.back(), &key).ok()) return;
      st->keys.push_back(key);
    }
    auto run = [st, n](std::vector<std::string>* outs) {
      Sm4MultiJob jobs[kMulti];
      uint8_t ivs[kMulti][16];
      outs->assign(kMulti, std::string(n, '\0'));
      for (size_t i = 0; i < kMulti; ++i) {
        std::memcpy(ivs[i], st->ivs[i].data(), 16);
        jobs[i] = {st->keys[i].rk_enc, ivs[i], Bytes(st->pts[i]), Bytes((*outs)[i]),
                   n / kSm4BlockSize};
      }
      Sm4CbcEncryptMulti(jobs, kMulti);
    };
    Register(
        CaseName(impl, "SM4-CBC", "encrypt16", n), n * kMulti, true,
        [run] {
          std::vector<std::string> outs;
          run(&outs);
          benchmark::DoNotOptimize(outs);
          return true;
        },
        [run, st]() -> std::string {
          std::vector<std::string> outs;
          run(&outs);
          for (size_t i = 0; i < kMulti; ++i) {
            auto c = NewSm4Cbc(st->keys_raw[i], Padding::kNone);
            if (!c.ok()) return std::string(c.status().message());
            auto want = (*c)->Encrypt(st->ivs[i], st->pts[i]);
            if (!want.ok() || *want != outs[i]) return "multi-buffer CBC differs from NewSm4Cbc";
          }
          return "";
        },
        absl::StrCat(kMulti, " messages of ", n, " B, each with its own key"), select);
    if (n > 4096) continue;
    // The service's EncryptBatch path: Sm4CbcEncryptBatch from raw keys, IVs and
    // messages (key expansion, PKCS#7 padding and output strings included).
    auto batch = [st] {
      std::vector<Sm4CbcBatchItem> items;
      for (size_t i = 0; i < kMulti; ++i) {
        items.push_back({st->keys_raw[i], st->ivs[i], st->pts[i], Padding::kPkcs7});
      }
      return Sm4CbcEncryptBatch(items);
    };
    Register(
        CaseName(impl, "SM4-CBC", "batch16", n), n * kMulti, true,
        [batch] {
          auto outs = batch();
          benchmark::DoNotOptimize(outs);
          return outs.back().ok();
        },
        [batch, st]() -> std::string {
          auto outs = batch();
          for (size_t i = 0; i < kMulti; ++i) {
            auto c = NewSm4Cbc(st->keys_raw[i]);
            if (!c.ok()) return std::string(c.status().message());
            auto want = (*c)->Encrypt(st->ivs[i], st->pts[i]);
            if (!want.ok() || !outs[i].ok() || *want != *outs[i]) {
              return "Sm4CbcEncryptBatch differs from NewSm4Cbc";
            }
          }
          return "";
        },
        absl::StrCat(kMulti, " messages of ", n,
                     " B through Sm4CbcEncryptBatch (key expansion, PKCS#7)"),
        select);
  }

  const std::string aead_label = "12-byte nonce, 16-byte tag, no AAD";
  for (const AeadMode& m : aeads) {
    const std::string label = std::string(m.alg) == "SM4-GCM"
                                  ? absl::StrCat(aead_label, "; GHASH ", ghash->name)
                                  : aead_label;
    for (size_t n : CipherSizes()) {
      auto pt = std::make_shared<std::string>(TestBytes(n, 22));
      auto a = m.aead;
      select(true);
      auto ct = std::make_shared<std::string>(a->Seal(Nonce12(), *pt, "").value());
      select(false);
      auto round_trip = [a, pt, ct]() -> std::string {
        auto back = a->Open(Nonce12(), *ct, "");
        return back.ok() && *back == *pt ? "" : "Open does not invert Seal";
      };
      Register(
          CaseName(impl, m.alg, "encrypt", n), n, true,
          [a, pt] {
            auto out = a->Seal(Nonce12(), *pt, "");
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip, label, select);
      Register(
          CaseName(impl, m.alg, "decrypt", n), n, true,
          [a, ct] {
            auto out = a->Open(Nonce12(), *ct, "");
            benchmark::DoNotOptimize(out);
            return out.ok();
          },
          round_trip, label, select);
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

void RegisterSm2On(const internal::Sm2Kernels* k);

// SM2 on every back end this CPU supports, each case selecting its back end with
// Sm2SetKernelsForTesting around its check and loop. The key objects are shared; their
// caches (Z, (1+d)^-1, the public key's table) hold plain values, not back-end state.
void RegisterSm2() {
  size_t count = 0;
  const internal::Sm2Kernels* const* all = internal::Sm2AllKernelsForTesting(&count);
  for (size_t i = 0; i < count; ++i) {
    if (internal::HasFeatures(GetCpuFeatures(), all[i]->required_features)) {
      RegisterSm2On(all[i]);
    }
  }
}

void RegisterSm2On(const internal::Sm2Kernels* k) {
  const std::string impl = absl::StrCat("smcrypt.", k->name);
  NoteImpl(impl);
  auto select = [k](bool on) { internal::Sm2SetKernelsForTesting(on ? k : nullptr); };
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
      check_sig, label, select);
  Register(
      CaseName(impl, "SM2", "verify", kSignMessageSize), 0, false,
      [] {
        const Sm2State& s = GetSm2State();
        return s.verifier->Verify(s.signature, s.message).ok();
      },
      check_sig, label, select);
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
        check, "C1C3C2", select);
    Register(
        CaseName(impl, "SM2", "decrypt", n), n, true,
        [ct] {
          auto p = GetSm2State().decrypter->Decrypt(*ct);
          benchmark::DoNotOptimize(p);
          return p.ok();
        },
        check, "C1C3C2", select);
  }
}

// SM2 batches of 64 signatures over 32-byte messages through Sm2Sign::SignMany and
// Sm2Verify::VerifyMany (what smcryptd's SignBatch and VerifyBatch call), one key, DER,
// default user ID: the IFMA lanes for the point arithmetic, the dispatched SM2 back end
// for the rest. items_per_second counts signatures, so the rate compares directly with
// the single sign/verify cases of the same run. Registered where the CPU has AVX-512 IFMA.
constexpr size_t kSm2Batch = 64;

void RegisterSm2Batch() {
  if (!internal::Sm2IfmaSupported()) return;
  const std::string impl = "smcrypt.ifma_avx512";
  NoteImpl(impl);
  auto msgs = std::make_shared<std::vector<std::string>>();
  for (size_t i = 0; i < kSm2Batch; ++i) msgs->push_back(TestBytes(kSignMessageSize, 200 + i));
  auto views = std::make_shared<std::vector<absl::string_view>>(msgs->begin(), msgs->end());
  auto sigs = std::make_shared<std::vector<std::string>>(kSm2Batch);
  auto sig_views = std::make_shared<std::vector<absl::string_view>>(kSm2Batch);
  auto signers = [] {
    return std::vector<const Sm2Sign*>(
        kSm2Batch, dynamic_cast<const Sm2Sign*>(GetSm2State().signer.get()));
  };
  auto verifiers = [] {
    return std::vector<const Sm2Verify*>(
        kSm2Batch, dynamic_cast<const Sm2Verify*>(GetSm2State().verifier.get()));
  };
  // Signs the batch, checks every signature with the single verifier, keeps them.
  auto check = [msgs, views, sigs, sig_views, signers]() -> std::string {
    const Sm2State& s = GetSm2State();
    if (!s.error.empty()) return s.error;
    if (!internal::Sm2BatchUsesIfma()) return "the SM2 batch path is not on IFMA";
    const auto sg = signers();
    if (sg[0] == nullptr) return "the SM2 signer is not an Sm2Sign";
    std::vector<absl::StatusOr<std::string>> out(kSm2Batch);
    Sm2Sign::SignMany(sg, *views, absl::MakeSpan(out));
    for (size_t i = 0; i < kSm2Batch; ++i) {
      if (!out[i].ok()) return std::string(out[i].status().message());
      if (!s.verifier->Verify(*out[i], (*msgs)[i]).ok()) return "batch signature does not verify";
      (*sigs)[i] = *out[i];
      (*sig_views)[i] = (*sigs)[i];
    }
    return "";
  };
  const std::string label = absl::StrCat(kSm2Batch, " signatures per call, one key, DER, SM2 ",
                                         internal::Sm2ActiveKernelName(), " + IFMA lanes");
  Register(
      CaseName(impl, "SM2", "sign_batch", kSm2Batch), kSignMessageSize, false,
      [views, signers] {
        std::vector<absl::StatusOr<std::string>> out(kSm2Batch);
        Sm2Sign::SignMany(signers(), *views, absl::MakeSpan(out));
        benchmark::DoNotOptimize(out);
        for (const auto& o : out) {
          if (!o.ok()) return false;
        }
        return true;
      },
      check, label, nullptr, kSm2Batch);
  Register(
      CaseName(impl, "SM2", "verify_batch", kSm2Batch), kSignMessageSize, false,
      [views, sig_views, verifiers] {
        std::vector<absl::Status> out(kSm2Batch);
        Sm2Verify::VerifyMany(verifiers(), *sig_views, *views, absl::MakeSpan(out));
        for (const auto& o : out) {
          if (!o.ok()) return false;
        }
        return true;
      },
      [check, verifiers, views, sig_views]() -> std::string {
        std::string err = check();
        if (!err.empty()) return err;
        std::vector<absl::Status> out(kSm2Batch);
        Sm2Verify::VerifyMany(verifiers(), *sig_views, *views, absl::MakeSpan(out));
        for (const auto& o : out) {
          if (!o.ok()) return "VerifyMany rejects a valid signature";
        }
        std::string bad = (*sig_views)[5].empty() ? "" : std::string((*sig_views)[5]);
        bad[bad.size() - 1] ^= 1;
        std::vector<absl::string_view> tampered = *sig_views;
        tampered[5] = bad;
        Sm2Verify::VerifyMany(verifiers(), tampered, *views, absl::MakeSpan(out));
        for (size_t i = 0; i < kSm2Batch; ++i) {
          if (out[i].ok() != (i != 5)) return "VerifyMany misjudges a tampered signature";
        }
        return "";
      },
      label, nullptr, kSm2Batch);
}

// Verification with keys seen for the first time (no per-key comb table, so t·P needs
// doublings): 64 digests under 64 distinct keys through Sm2VerifyDigestBatch (fresh key
// caches every call), beside Sm2VerifyDigest one key at a time (no cache) on the
// dispatched back end. Registered where the CPU has AVX-512 IFMA.
void RegisterSm2UncachedVerify() {
  if (!internal::Sm2IfmaSupported()) return;
  struct State {
    std::vector<Sm2PublicKey> keys;
    std::vector<std::string> es, sigs;
    std::string error;
  };
  auto st = std::make_shared<State>();
  auto init = [st]() -> std::string {
    if (!st->keys.empty() || !st->error.empty()) return st->error;
    for (size_t i = 0; i < kSm2Batch; ++i) {
      auto k = Sm2PrivateKey::Generate();
      if (!k.ok()) return st->error = std::string(k.status().message());
      st->es.push_back(TestBytes(32, 300 + i));
      auto sig = Sm2SignDigest(*k, st->es.back());
      if (!sig.ok()) return st->error = std::string(sig.status().message());
      st->sigs.push_back(*sig);
      st->keys.push_back(k->public_key());
    }
    return "";
  };
  auto batch = [st]() {
    std::vector<std::unique_ptr<Sm2PublicKeyCache>> caches;
    std::vector<internal::Sm2VerifyBatchItem> items;
    for (size_t i = 0; i < kSm2Batch; ++i) {
      caches.push_back(std::make_unique<Sm2PublicKeyCache>(st->keys[i]));
      items.push_back({caches.back().get(), st->es[i], st->sigs[i]});
    }
    std::vector<absl::Status> out(kSm2Batch);
    internal::Sm2VerifyDigestBatch(items, absl::MakeSpan(out));
    for (const auto& o : out) {
      if (!o.ok()) return false;
    }
    return true;
  };
  const std::string label = "64 distinct keys without comb tables, digests, raw r || s";
  Register(
      CaseName("smcrypt.ifma_avx512", "SM2", "verify_uncached_batch", kSm2Batch),
      kSignMessageSize, false, batch,
      [init, batch]() -> std::string {
        std::string err = init();
        if (!err.empty()) return err;
        return batch() ? "" : "batch verification rejects a valid signature";
      },
      label, nullptr, kSm2Batch);
  auto index = std::make_shared<size_t>(0);
  Register(
      CaseName(absl::StrCat("smcrypt.", internal::Sm2ActiveKernelName()), "SM2",
               "verify_uncached", kSignMessageSize),
      kSignMessageSize, false,
      [st, index] {
        const size_t i = (*index)++ % kSm2Batch;
        return Sm2VerifyDigest(st->keys[i], st->es[i], st->sigs[i]).ok();
      },
      [init]() { return init(); }, "one key at a time without comb table, digest, raw r || s");
}

// SM2 encryption of 1 KiB with the SM3 KDF on the dispatched multi-buffer back end
// (counter blocks in lanes) and on the single-stream back end (one block after another),
// everything else equal: the pair measures what the lane-parallel KDF buys.
void RegisterSm2KdfPair() {
  const Sm3Kernels& active = Sm3ActiveKernels();
  if (active.lanes == 0) return;  // no multi-buffer SM3 here: nothing to compare
  const Sm3Kernels* serial = nullptr;
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (k->lanes == 0 && internal::HasFeatures(GetCpuFeatures(), k->required_features)) {
      serial = k;
      break;
    }
  }
  if (serial == nullptr) return;
  const std::string impl = absl::StrCat("smcrypt.", internal::Sm2ActiveKernelName());
  constexpr size_t kSize = 1024;
  auto pt = std::make_shared<std::string>(TestBytes(kSize, 31));
  for (const Sm3Kernels* k : {&active, serial}) {
    const bool lanes = k->lanes > 0;
    auto select = [k, lanes](bool on) { Sm3SetKernelsForTesting(on && !lanes ? k : nullptr); };
    Register(
        CaseName(impl, "SM2", lanes ? "encrypt_kdf_lanes" : "encrypt_kdf_serial", kSize), kSize,
        true,
        [pt] {
          auto c = GetSm2State().encrypter->Encrypt(*pt);
          benchmark::DoNotOptimize(c);
          return c.ok();
        },
        [pt]() -> std::string {
          const Sm2State& s = GetSm2State();
          if (!s.error.empty()) return s.error;
          auto c = s.encrypter->Encrypt(*pt);
          if (!c.ok()) return std::string(c.status().message());
          auto back = s.decrypter->Decrypt(*c);
          return back.ok() && *back == *pt ? "" : "SM2 decryption does not invert encryption";
        },
        absl::StrCat("C1C3C2, SM3 KDF on ", k->name), select);
  }
}

// Hybrid encryption (HPKE base mode, RFC 9180) in both suites, through the registry as
// the service uses it: the ciphertext is smcrypt's wire format (7-byte header as aad, enc,
// AEAD ciphertext), info empty. One operation = one whole Encrypt or Decrypt, key
// encapsulation included. The SM suite runs on smcrypt's SM2, SM3 and SM4 back ends and
// is named after the SM2 one (the SM2 cases' name, so the two sit side by side). The P-256
// suite is smcrypt's RFC 9180 key schedule over OpenSSL EVP (P-256 ECDH, HKDF-SHA256,
// AES-128-GCM) — OpenSSL 3.0 has no HPKE of its own — and is named "openssl".
constexpr size_t kHybridBatch = 64;

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
    // 64 messages to one recipient per call through HybridEncrypt::EncryptMany (as
    // smcryptd's HybridEncryptBatch): the SM suite shares the ephemeral key pairs and
    // Diffie–Hellman of 8 messages at a time in AVX-512 IFMA lanes; the P-256 suite runs
    // its Encrypt per message. Sizes are per message; items_per_second counts messages.
    for (size_t n : {size_t{512}, size_t{1024}}) {
      auto pts = std::make_shared<std::vector<std::string>>();
      for (size_t i = 0; i < kHybridBatch; ++i) pts->push_back(TestBytes(n, 400 + i));
      auto inputs = std::make_shared<std::vector<HybridEncryptInput>>();
      for (const std::string& p : *pts) inputs->push_back({p, ""});
      auto check = [alg, pts, inputs]() -> std::string {
        const HybridState& s = GetHybridState(alg);
        if (!s.error.empty()) return s.error;
        std::vector<absl::StatusOr<std::string>> out = s.encrypter->EncryptMany(*inputs);
        if (out.size() != kHybridBatch) return "EncryptMany returned the wrong count";
        for (size_t i = 0; i < kHybridBatch; ++i) {
          if (!out[i].ok()) return std::string(out[i].status().message());
          auto back = s.decrypter->Decrypt(*out[i], "");
          if (!back.ok() || *back != (*pts)[i]) return "EncryptMany output does not decrypt";
        }
        return "";
      };
      Register(
          CaseName(suite.impl, suite.name, "encrypt_batch64", n), n * kHybridBatch, true,
          [alg, inputs] {
            std::vector<absl::StatusOr<std::string>> out =
                GetHybridState(alg).encrypter->EncryptMany(*inputs);
            benchmark::DoNotOptimize(out);
            for (const auto& o : out) {
              if (!o.ok()) return false;
            }
            return true;
          },
          check, absl::StrCat(suite.label, "; ", kHybridBatch, " messages per EncryptMany call"),
          nullptr, kHybridBatch);
    }
  }
}

}  // namespace

void RegisterSmcryptCases(const BenchOptions& options) {
  RegisterSm3(options);
  RegisterSm4();
  RegisterSm2();
  RegisterSm2Batch();
  RegisterSm2UncachedVerify();
  RegisterSm2KdfPair();
  RegisterHybrid();
}

std::vector<std::string> SmcryptImplementations() { return ImplNames(); }

}  // namespace smcrypt::bench
