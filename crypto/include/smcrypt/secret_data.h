// secret_data.h — a byte container for key material that is wiped when freed.
#ifndef SMCRYPT_SECRET_DATA_H_
#define SMCRYPT_SECRET_DATA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt {

// ZeroingAllocator wipes every block it frees (and every block a vector moves away from).
template <typename T>
struct ZeroingAllocator {
  using value_type = T;
  ZeroingAllocator() noexcept = default;
  template <typename U>
  ZeroingAllocator(const ZeroingAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, size_t n) noexcept {
    SecureZero(p, n * sizeof(T));
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const ZeroingAllocator<U>&) const noexcept { return true; }
};

// SecretData holds secret bytes (private scalars, symmetric keys). Its storage is
// always on the heap (no small-buffer inline copy) and is zeroized when released.
using SecretData = std::vector<uint8_t, ZeroingAllocator<uint8_t>>;

// SecretDataFromStringView copies `s` into a new SecretData.
inline SecretData SecretDataFromStringView(absl::string_view s) {
  return SecretData(s.begin(), s.end());
}

// SecretDataAsStringView views `s` as bytes in a string_view (valid while `s` lives).
inline absl::string_view SecretDataAsStringView(const SecretData& s) {
  return absl::string_view(reinterpret_cast<const char*>(s.data()), s.size());
}

}  // namespace smcrypt

#endif  // SMCRYPT_SECRET_DATA_H_
