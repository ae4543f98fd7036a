// sm2_dispatch.cc — chooses the SM2 field back end once, in priority order.
#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_field.h"
#include "smcrypt/cpu.h"

namespace smcrypt::internal {
namespace {

// Priority order: the first entry whose features the CPU has wins; generic is last.
const Sm2Kernels* const kSm2Backends[] = {
    &kSm2KernelsGeneric,
};

}  // namespace

const Sm2Kernels& Sm2ActiveKernels() {
  static const Sm2Kernels* const chosen = [] {
    const uint32_t features = GetCpuFeatures();
    for (const Sm2Kernels* k : kSm2Backends) {
      if (HasFeatures(features, k->required_features)) return k;
    }
    return &kSm2KernelsGeneric;
  }();
  return *chosen;
}

const Sm2Kernels* const* Sm2AllKernelsForTesting(size_t* count) {
  *count = sizeof(kSm2Backends) / sizeof(kSm2Backends[0]);
  return kSm2Backends;
}

const char* Sm2ActiveKernelName() { return Sm2ActiveKernels().name; }

}  // namespace smcrypt::internal
