// sm3_dispatch.cc — the priority-ordered SM3 back-end table and the one-time choice.
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

namespace smcrypt {
namespace {

constexpr Sm3Kernels kSm3Generic = {
    /*name=*/"generic",
    /*required_features=*/0,
    /*compress_blocks=*/Sm3GenericCompressBlocks,
    /*batch=*/nullptr,
};

// Strongest first; generic is last and needs nothing, so the search always succeeds.
constexpr const Sm3Kernels* kSm3Table[] = {
    &kSm3Generic,
};

const Sm3Kernels& ChooseSm3Kernels() {
  const uint32_t features = GetCpuFeatures();
  for (const Sm3Kernels* k : kSm3Table) {
    if (internal::HasFeatures(features, k->required_features)) return *k;
  }
  return kSm3Generic;
}

}  // namespace

const Sm3Kernels& Sm3ActiveKernels() {
  static const Sm3Kernels& active = ChooseSm3Kernels();
  return active;
}

std::vector<const Sm3Kernels*> Sm3AllKernelsForTesting() {
  return std::vector<const Sm3Kernels*>(std::begin(kSm3Table), std::end(kSm3Table));
}

namespace internal {
const char* Sm3ActiveKernelName() { return Sm3ActiveKernels().name; }
}  // namespace internal

}  // namespace smcrypt
