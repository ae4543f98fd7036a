// bench_util.cc — case naming, registration and deterministic test data.
#include "bench/smcrypt_bench/bench_util.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace smcrypt::bench {

std::string CaseName(const std::string& impl, const std::string& alg, const std::string& op,
                     size_t bytes) {
  return absl::StrCat(impl, "/", alg, "/", op, "/", bytes);
}

void Register(const std::string& name, size_t bytes, bool count_bytes,
              std::function<bool()> op, std::function<std::string()> check,
              const std::string& label, std::function<void(bool)> select,
              int64_t items_per_op) {
  benchmark::RegisterBenchmark(
      name.c_str(),
      [bytes, count_bytes, op = std::move(op), check = std::move(check), label,
       select = std::move(select), items_per_op](benchmark::State& state) {
        if (select) select(true);
        if (check) {
          const std::string error = check();
          if (!error.empty()) {
            if (select) select(false);
            state.SkipWithError(error.c_str());
            return;
          }
        }
        for (auto _ : state) {
          if (!op()) {
            state.SkipWithError("operation failed");
            break;
          }
        }
        if (select) select(false);
        if (count_bytes) {
          state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                                  static_cast<int64_t>(bytes));
        }
        state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * items_per_op);
        if (!label.empty()) state.SetLabel(label);
      });
}

std::vector<size_t> PkEncryptAndHybridSizes() {
  std::vector<size_t> sizes = PkEncryptSizes();
  sizes.insert(sizes.end(), HybridSizes().begin(), HybridSizes().end());
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

const std::string& XtsKey32() {
  static const std::string k = TestBytes(32, 5);  // its halves differ
  return k;
}

std::string TestBytes(size_t n, uint32_t seed) {
  // xorshift32: fast, deterministic, and plainly not a secret.
  std::string out(n, '\0');
  uint32_t x = seed * 2654435761u + 1u;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out[i] = static_cast<char>(x & 0xff);
  }
  return out;
}

std::vector<std::string> Peers() {
  std::vector<std::string> out;
  for (std::string p : {OpensslPeer(), GcryptPeer(), BotanPeer()}) {
    if (!p.empty()) out.push_back(p);
  }
  return out;
}

}  // namespace smcrypt::bench
