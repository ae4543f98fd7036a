// sm4_dispatch.cc — the priority-ordered SM4 back-end table and the one-time choice.
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"

namespace smcrypt {
namespace {

constexpr Sm4Kernels kSm4Generic = {
    /*name=*/"generic",
    /*required_features=*/0,
    /*parallel_blocks=*/16,
    /*encrypt_blocks=*/Sm4GenericEncryptBlocks,
    /*ctr32_encrypt_blocks=*/Sm4GenericCtr32EncryptBlocks,
};

// Strongest first; generic is last and needs nothing, so the search always succeeds.
constexpr const Sm4Kernels* kSm4Table[] = {
    &kSm4Generic,
};

const Sm4Kernels& ChooseSm4Kernels() {
  const uint32_t features = GetCpuFeatures();
  for (const Sm4Kernels* k : kSm4Table) {
    if (internal::HasFeatures(features, k->required_features)) return *k;
  }
  return kSm4Generic;
}

}  // namespace

const Sm4Kernels& Sm4ActiveKernels() {
  static const Sm4Kernels& active = ChooseSm4Kernels();
  return active;
}

std::vector<const Sm4Kernels*> Sm4AllKernelsForTesting() {
  return std::vector<const Sm4Kernels*>(std::begin(kSm4Table), std::end(kSm4Table));
}

namespace internal {
const char* Sm4ActiveKernelName() { return Sm4ActiveKernels().name; }
}  // namespace internal

}  // namespace smcrypt
