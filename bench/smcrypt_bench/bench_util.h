// bench_util.h — shared pieces of smcrypt-bench: case names, message sizes, registration
// and the checks every case makes once before it is timed.
//
// Every case is named `<implementation>/<algorithm>/<operation>/<bytes>` (docs/design.md,
// "Names used everywhere"): `smcrypt.generic/SM4-CTR/encrypt/16384`,
// `openssl/AES-128-GCM/encrypt/16384`. Symmetric cases and hashes set bytes processed
// (Google Benchmark's bytes_per_second); every case sets items processed (one item = one
// operation, items_per_second).
#ifndef SMCRYPT_BENCH_SMCRYPT_BENCH_BENCH_UTIL_H_
#define SMCRYPT_BENCH_SMCRYPT_BENCH_BENCH_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

namespace smcrypt::bench {

// Message sizes in bytes. They cover the sizes of the SM-versus-international study
// (SM3/SHA-256 8 B–1 MiB; SM4/AES ECB and CBC 32 B–1 MiB; SM2 vs RSA 16 B–32 KiB) and
// the sizes of the measured anchors (16 B, 64 B, 1 KiB, 8 KiB, 1 MiB).
inline const std::vector<size_t>& HashSizes() {
  static const std::vector<size_t> kSizes = {8,    16,    64,     256,    1024,
                                             8192, 16384, 524288, 1048576};
  return kSizes;
}
inline const std::vector<size_t>& CipherSizes() {
  static const std::vector<size_t> kSizes = {16,   32,    64,    128,    512,    1024,
                                             4096, 8192,  16384, 65536,  262144, 1048576};
  return kSizes;
}
inline const std::vector<size_t>& PkEncryptSizes() {
  static const std::vector<size_t> kSizes = {16, 32, 64, 256, 1024, 4096, 16384, 32768};
  return kSizes;
}
// The payload sizes of the blockchain study's "ECC" vs "ECC+AES" scenarios (512 B to
// 1 MiB): hybrid encryption in both HPKE suites and SM2 public-key encryption beside it.
inline const std::vector<size_t>& HybridSizes() {
  static const std::vector<size_t> kSizes = {512,   1024,  2048,   10240,
                                             20480, 30720, 524288, 1048576};
  return kSizes;
}
// PkEncryptAndHybridSizes is PkEncryptSizes() ∪ HybridSizes(), ascending: the sizes of
// the SM2 public-key encryption cases, so SM2 sits beside RSA and beside hybrid.
std::vector<size_t> PkEncryptAndHybridSizes();
// The message signed by the signature cases (bytes); the SM2 signer hashes Z ‖ M.
inline constexpr size_t kSignMessageSize = 32;
// 1 GiB, hashed in 1 MiB pieces, only under --large.
inline constexpr size_t kLargeStreamSize = size_t{1} << 30;
inline constexpr size_t kLargeChunkSize = size_t{1} << 20;

// Options that the command line sets before the cases are registered.
struct BenchOptions {
  bool large = false;  // register the 1 GiB streamed hash cases
};

// CaseName builds `impl/alg/op/bytes`.
std::string CaseName(const std::string& impl, const std::string& alg, const std::string& op,
                     size_t bytes);

// Register adds one case. `op` is one operation, run inside the timing loop; it returns
// false when the operation failed, which stops the case with an error. `check`, if set,
// runs before the loop (untimed) and returns "" or an error message: it proves that the
// timed operation computes the right thing (a decryption round trip, a signature that
// verifies, output equal to another implementation's) — a case whose check fails reports
// the error and is not timed. `bytes` is what one operation processes; when
// `count_bytes` is false (public-key cases) only operations are counted. `label` is
// shown beside the case and kept in the JSON.
// `select`, if set, is called with true before the check and the loop and with false
// after them: it selects a back end for the case (and restores dispatch).
// `items_per_op` is how many items (signatures, ...) one operation handles: batch cases
// report items_per_second per item, comparable with the single-item cases.
void Register(const std::string& name, size_t bytes, bool count_bytes,
              std::function<bool()> op, std::function<std::string()> check = nullptr,
              const std::string& label = "", std::function<void(bool)> select = nullptr,
              int64_t items_per_op = 1);

// TestBytes returns `n` deterministic pseudo-random bytes (not secret; the same for
// every implementation so outputs can be compared).
std::string TestBytes(size_t n, uint32_t seed);
// XtsKey32 is the 32-byte XTS key K1 || K2 of every implementation's XTS cases.
const std::string& XtsKey32();

// Registration per implementation (one translation unit each).
void RegisterSmcryptCases(const BenchOptions& options);
void RegisterOpensslCases(const BenchOptions& options);
void RegisterGcryptCases(const BenchOptions& options);  // no-op without libgcrypt
void RegisterBotanCases(const BenchOptions& options);   // no-op without Botan 2

// Each peer's name and version ("openssl 3.0.19"), or "" when not built in.
std::string OpensslPeer();
std::string GcryptPeer();
std::string BotanPeer();
// Peers lists the peer libraries built in, with versions ("openssl 3.0.19", ...).
std::vector<std::string> Peers();

// The smcrypt implementation names registered (e.g. {"smcrypt.generic"}), best first,
// for the summary.
std::vector<std::string> SmcryptImplementations();

}  // namespace smcrypt::bench

#endif  // SMCRYPT_BENCH_SMCRYPT_BENCH_BENCH_UTIL_H_
