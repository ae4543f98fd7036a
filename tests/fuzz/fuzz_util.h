// fuzz_util.h — helpers shared by the libFuzzer targets of tests/fuzz (test-only).
//
// FuzzReader splits a fuzz input into fields (a byte, a length-prefixed string, the
// rest); reading past the end yields zeros and empty strings, so every input is a valid
// request of some shape. The Pick*Kernels helpers choose one back end this CPU supports
// from a selector byte, through the test seams of the core, so each differential target
// covers every back end. FUZZ_CHECK aborts (a libFuzzer crash) on a mismatch.
#ifndef SMCRYPT_TESTS_FUZZ_FUZZ_UTIL_H_
#define SMCRYPT_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm3/sm3_internal.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"

#define FUZZ_CHECK(cond)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                                       \
      std::abort();                                                              \
    }                                                                            \
  } while (0)

namespace smcrypt::fuzz {

class FuzzReader {
 public:
  FuzzReader(const uint8_t* data, size_t size)
      : data_(reinterpret_cast<const char*>(data), size) {}

  uint8_t Byte() {
    if (data_.empty()) return 0;
    uint8_t b = static_cast<uint8_t>(data_[0]);
    data_.remove_prefix(1);
    return b;
  }
  uint16_t U16() { return static_cast<uint16_t>(Byte() << 8 | Byte()); }
  // Bytes returns the next `n` bytes (fewer at the end of the input).
  std::string Bytes(size_t n) {
    n = std::min(n, data_.size());
    std::string out(data_.substr(0, n));
    data_.remove_prefix(n);
    return out;
  }
  // Field returns a string whose length is the next 16-bit big-endian value.
  std::string Field() { return Bytes(U16()); }
  std::string Rest() { return Bytes(data_.size()); }
  size_t remaining() const { return data_.size(); }

 private:
  absl::string_view data_;
};

inline bool CpuHas(uint32_t features) {
  return (GetCpuFeatures() & features) == features;
}

// The back ends of each algorithm that this CPU runs, generic included.
inline std::vector<const Sm4Kernels*> SupportedSm4Kernels() {
  std::vector<const Sm4Kernels*> out;
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) {
    if (CpuHas(k->required_features)) out.push_back(k);
  }
  return out;
}
inline std::vector<const Sm3Kernels*> SupportedSm3Kernels() {
  std::vector<const Sm3Kernels*> out;
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (CpuHas(k->required_features)) out.push_back(k);
  }
  return out;
}
inline std::vector<const internal::Sm2Kernels*> SupportedSm2Kernels() {
  std::vector<const internal::Sm2Kernels*> out;
  size_t n = 0;
  const internal::Sm2Kernels* const* all = internal::Sm2AllKernelsForTesting(&n);
  for (size_t i = 0; i < n; ++i) {
    if (CpuHas(all[i]->required_features)) out.push_back(all[i]);
  }
  return out;
}

template <typename T>
const T* PickKernel(const std::vector<const T*>& kernels, uint8_t selector) {
  return kernels[selector % kernels.size()];
}

}  // namespace smcrypt::fuzz

#endif  // SMCRYPT_TESTS_FUZZ_FUZZ_UTIL_H_
