// sm2_dispatch.cc — every SM2 back-end choice, each made from GetCpuFeatures() (so
// SMCRYPT_CPU_DISABLE and --cpu_disable apply):
//   field back end  Sm2ActiveKernels(): the first entry of kSm2Backends whose features
//                   the CPU has, chosen once; tests and benchmarks may override it.
//   IFMA lanes      Sm2IfmaSupported() / Sm2BatchUsesIfma(): whether the batch paths of
//                   sm2_batch.cc run on the ifma_avx512 kernels; tests may turn them off.
#include <atomic>

#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "smcrypt/cpu.h"

namespace smcrypt::internal {
namespace {

using internal::BackendChoice;
using internal::HasRequiredFeatures;

// Priority order: the first capable entry wins; generic is last and needs nothing.
// Capability: each back end's required features; no CPU-specific preference.
// mulx_adx_avx2 differs from mulx_adx only in its table selects (AVX2 loads and masks
// instead of 64-bit CMOV-style masks). Measured (bench.sh --check-dispatch, two
// interleaved runs of 9 repetitions, 2026-12-01) on AMD EPYC family 25 model 17: no
// difference beyond the noise; mulx_adx/mulx_adx_avx2 medians 0.90 (sign, verify) and
// 1.04 (encrypt, decrypt), every range spanning 1. (Sequential runs there had put
// mulx_adx 18–26 % ahead: drift between cases run minutes apart.) Not yet measured on
// Intel, where a sequential run favoured mulx_adx and an interleaved one mulx_adx_avx2.
constexpr BackendChoice<Sm2Kernels> kSm2Backends[] = {
#if defined(__x86_64__)
    {&kSm2KernelsMulxAdxAvx2, HasRequiredFeatures<&kSm2KernelsMulxAdxAvx2>},
    {&kSm2KernelsMulxAdx, HasRequiredFeatures<&kSm2KernelsMulxAdx>},
#endif
    {&kSm2KernelsGeneric, HasRequiredFeatures<&kSm2KernelsGeneric>},
};
constexpr size_t kSm2NumBackends = sizeof(kSm2Backends) / sizeof(kSm2Backends[0]);

const Sm2Kernels& Dispatched() {
  static const Sm2Kernels* const chosen = [] {
    const Sm2Kernels* k =
        FirstCapable(kSm2Backends, kSm2NumBackends, GetCpuFeatures(), GetCpuIdentity());
    return k != nullptr ? k : &kSm2KernelsGeneric;
  }();
  return *chosen;
}

std::atomic<const Sm2Kernels*> g_override{nullptr};
std::atomic<bool> g_ifma_enabled{true};

}  // namespace

const Sm2Kernels& Sm2ActiveKernels() {
  const Sm2Kernels* o = g_override.load(std::memory_order_acquire);
  if (o != nullptr) return *o;
  return Dispatched();
}

void Sm2SetKernelsForTesting(const Sm2Kernels* k) {
  g_override.store(k, std::memory_order_release);
}

const Sm2Kernels* const* Sm2AllKernelsForTesting(size_t* count) {
  static const Sm2Kernels* const* const all = [] {
    auto* v = new const Sm2Kernels*[kSm2NumBackends];
    for (size_t i = 0; i < kSm2NumBackends; ++i) v[i] = kSm2Backends[i].kernels;
    return v;
  }();
  *count = kSm2NumBackends;
  return all;
}

absl::Span<const BackendChoice<Sm2Kernels>> Sm2DispatchTableForTesting() {
  return kSm2Backends;
}

const char* Sm2ActiveKernelName() { return Dispatched().name; }

bool Sm2IfmaSupported() {
#if defined(SMCRYPT_SM2_HAVE_IFMA)
  return HasFeatures(GetCpuFeatures(), kSm2IfmaRequiredFeatures);
#else
  return false;
#endif
}

bool Sm2BatchUsesIfma() {
  return g_ifma_enabled.load(std::memory_order_acquire) && Sm2IfmaSupported();
}

void Sm2SetBatchIfmaForTesting(bool enabled) {
  g_ifma_enabled.store(enabled, std::memory_order_release);
}

}  // namespace smcrypt::internal
