#include "crypto/cpu/backends.h"
#include "smcrypt/cpu.h"

namespace smcrypt {

std::vector<KernelChoice> ActiveKernels() {
  return {
      {"SM2", internal::Sm2ActiveKernelName()},
      {"SM3", internal::Sm3ActiveKernelName()},
      {"SM4", internal::Sm4ActiveKernelName()},
  };
}

}  // namespace smcrypt
