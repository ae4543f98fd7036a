// smcrypt-key-trial-bench: what trying key versions costs a check whose keyring key is
// named without a version (crypto.proto, KeyRef "Key versions"; docs/keys.md, "Versions").
// A key of 4 retained versions; each case opens data made under the primary (v4, tried
// first) or under v1 (tried last, after 3 failures), beside the version named:
//   Decrypt SM4-GCM 4 KiB, PublicKeyDecrypt SM2 (32-byte plaintext), HybridDecrypt
//   HPKE-SM2-SM3-SM4GCM (32-byte plaintext).
// The engine is called directly (no gRPC), so the figures are the trial's own cost.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/key_store.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"

namespace smcrypt::server {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kVersions = 4;

// Fixture: the keyring (sm4 and sm2, versions 1 to 4) and the data sealed under each end.
struct Fixture {
  Fixture() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_trial_bench_XXXXXX").string();
    dir = mkdtemp(tmpl.data());
    for (uint32_t v = 1; v <= kVersions; ++v) {
      const std::string n = ".v" + std::to_string(v) + ".pem";
      Write("sm4" + n, PemEncode("SM4 KEY", std::string(16, char('0' + v))));
      absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
      if (!kp.ok()) std::abort();
      Write("sm2" + n, PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der)));
    }
    absl::StatusOr<std::unique_ptr<KeyStore>> keys = KeyStore::LoadFromDirectory(dir);
    if (!keys.ok()) std::abort();
    engine = std::make_unique<CryptoEngine>(std::shared_ptr<const KeyStore>(*std::move(keys)),
                                            EngineOptions{}, nullptr);
    fs::remove_all(dir);
  }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(fs::path(dir) / name, std::ios::binary) << text;
    fs::permissions(fs::path(dir) / name, fs::perms::owner_read | fs::perms::owner_write);
  }
  std::string dir;
  std::unique_ptr<CryptoEngine> engine;
};

Fixture& F() {
  static Fixture* f = new Fixture();
  return *f;
}

// Key: `id` named without a version (as the service pins it: the primary, and a trial),
// or with `version` when it is not 0.
KeyInput Key(const char* id, uint32_t version) {
  KeyInput k = KeyInput::Id(id, version);
  F().engine->Resolve(&k);
  if (!k.entry.ok()) std::abort();
  k.version = (*k.entry)->version;
  if (version == 0) k.trial = std::make_shared<KeyTrial>();
  return k;
}

// Run times `op(key)` with the key named as `version` says; data made under `made_by`.
void Run(benchmark::State& state, const char* id, uint32_t version,
         const std::function<bool(const KeyInput&)>& op) {
  for (auto _ : state) {
    KeyInput k = Key(id, version);
    if (!op(k)) {
      state.SkipWithError("the check failed");
      return;
    }
  }
}

// version: 0 names none (tried: v4 first, then 3, 2, 1); made_by: the version that sealed.
void BM_DecryptSm4Gcm4K(benchmark::State& state) {
  const uint32_t made_by = static_cast<uint32_t>(state.range(0));
  const uint32_t named = static_cast<uint32_t>(state.range(1));
  SymmetricParams p;
  p.algorithm = Algorithm::kSm4Gcm;
  p.key = Key("sm4", made_by);
  absl::StatusOr<SymmetricCiphertext> ct = F().engine->Encrypt(p, std::string(4096, 'x'));
  if (!ct.ok()) std::abort();
  p.nonce = ct->nonce;
  Run(state, "sm4", named, [&](const KeyInput& k) {
    p.key = k;
    return F().engine->Decrypt(p, ct->ciphertext, ct->tag).ok();
  });
  state.SetBytesProcessed(state.iterations() * 4096);
}

void BM_PublicKeyDecryptSm2(benchmark::State& state) {
  const uint32_t made_by = static_cast<uint32_t>(state.range(0));
  const uint32_t named = static_cast<uint32_t>(state.range(1));
  absl::StatusOr<std::string> ct = F().engine->PublicKeyEncrypt(
      Algorithm::kSm2, Key("sm2", made_by), std::string(32, 's'), Sm2CiphertextFormat::kC1C3C2);
  if (!ct.ok()) std::abort();
  Run(state, "sm2", named, [&](const KeyInput& k) {
    return F().engine->PublicKeyDecrypt(Algorithm::kSm2, k, *ct, Sm2CiphertextFormat::kC1C3C2)
        .ok();
  });
}

void BM_HybridDecryptSm2(benchmark::State& state) {
  const uint32_t made_by = static_cast<uint32_t>(state.range(0));
  const uint32_t named = static_cast<uint32_t>(state.range(1));
  absl::StatusOr<std::string> ct = F().engine->HybridEncrypt(
      Algorithm::kHpkeSm2Sm3Sm4Gcm, Key("sm2", made_by), std::string(32, 'h'), "info");
  if (!ct.ok()) std::abort();
  Run(state, "sm2", named, [&](const KeyInput& k) {
    return F().engine->HybridDecrypt(Algorithm::kHpkeSm2Sm3Sm4Gcm, k, *ct, "info").ok();
  });
}

// Args: {made_by, named}: {4, 4} the version named; {4, 0} none named, the primary opens
// (first of 4); {1, 0} none named, v1 opens (last of 4).
#define TRIAL_ARGS ArgNames({"made_by", "named"})->Args({4, 4})->Args({4, 0})->Args({1, 0})
BENCHMARK(BM_DecryptSm4Gcm4K)->TRIAL_ARGS;
BENCHMARK(BM_PublicKeyDecryptSm2)->TRIAL_ARGS;
BENCHMARK(BM_HybridDecryptSm2)->TRIAL_ARGS;

}  // namespace
}  // namespace smcrypt::server

BENCHMARK_MAIN();
