// sm2_dispatch.cc — every SM2 back-end choice, each made from GetCpuFeatures() (so
// SMCRYPT_CPU_DISABLE and --cpu_disable apply):
//   field back end  Sm2ActiveKernels(): the first entry of this architecture's table
//                   (sm2_table_<arch>.cc) whose features the CPU has, chosen once; tests
//                   and benchmarks may override it.
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

const Sm2Kernels& Dispatched() {
  static const Sm2Kernels* const chosen = [] {
    const absl::Span<const BackendChoice<Sm2Kernels>> table = Sm2DispatchTable();
    const Sm2Kernels* k =
        FirstCapable(table.data(), table.size(), GetCpuFeatures(), GetCpuIdentity());
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
    const absl::Span<const BackendChoice<Sm2Kernels>> table = Sm2DispatchTable();
    auto* v = new const Sm2Kernels*[table.size()];
    for (size_t i = 0; i < table.size(); ++i) v[i] = table[i].kernels;
    return v;
  }();
  *count = Sm2DispatchTable().size();
  return all;
}

absl::Span<const BackendChoice<Sm2Kernels>> Sm2DispatchTableForTesting() {
  return Sm2DispatchTable();
}

const char* Sm2ActiveKernelName() { return Dispatched().name; }

bool Sm2IfmaSupported() {
  return kSm2HaveIfma && HasFeatures(GetCpuFeatures(), kSm2IfmaRequiredFeatures);
}

bool Sm2BatchUsesIfma() {
  return g_ifma_enabled.load(std::memory_order_acquire) && Sm2IfmaSupported();
}

void Sm2SetBatchIfmaForTesting(bool enabled) {
  g_ifma_enabled.store(enabled, std::memory_order_release);
}

}  // namespace smcrypt::internal
