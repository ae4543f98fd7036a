// backends.h — how each algorithm names the back end its dispatch chose.
//
// Every SM algorithm keeps a priority-ordered const table of back ends (name, required
// CpuFeature bits, function pointers) and picks the first whose features are all in
// GetCpuFeatures(), once, in a function-local static. These accessors expose the name.
#ifndef SMCRYPT_CRYPTO_CPU_BACKENDS_H_
#define SMCRYPT_CRYPTO_CPU_BACKENDS_H_

#include <cstdint>

namespace smcrypt::internal {

// Defined in crypto/sm3/, crypto/sm4/ and crypto/sm2/ respectively.
const char* Sm3ActiveKernelName();
const char* Sm4ActiveKernelName();
const char* Sm2ActiveKernelName();

// HasFeatures reports whether every bit of `required` is in `available`.
inline bool HasFeatures(uint32_t available, uint32_t required) {
  return (available & required) == required;
}

}  // namespace smcrypt::internal

#endif  // SMCRYPT_CRYPTO_CPU_BACKENDS_H_
