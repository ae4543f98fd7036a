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

// Priority order: the first entry whose features the CPU has wins; generic is last.
const Sm2Kernels* const kSm2Backends[] = {
#if defined(__x86_64__)
    &kSm2KernelsMulxAdxAvx2,
    &kSm2KernelsMulxAdx,
#endif
    &kSm2KernelsGeneric,
};

const Sm2Kernels& Dispatched() {
  static const Sm2Kernels* const chosen = [] {
    const uint32_t features = GetCpuFeatures();
    for (const Sm2Kernels* k : kSm2Backends) {
      if (HasFeatures(features, k->required_features)) return k;
    }
    return &kSm2KernelsGeneric;
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
  *count = sizeof(kSm2Backends) / sizeof(kSm2Backends[0]);
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
