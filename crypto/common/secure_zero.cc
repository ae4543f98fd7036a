#include "smcrypt/secure_zero.h"

#include <cstring>

namespace smcrypt {

void SecureZero(void* p, size_t len) {
  if (len == 0) return;
  std::memset(p, 0, len);
  // The asm takes `p` as an input and clobbers memory, so the memset is observable.
  __asm__ __volatile__("" : : "r"(p) : "memory");
}

}  // namespace smcrypt
