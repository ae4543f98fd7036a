// sm3_dispatch.cc — the generic SM3 table entry, the one-time choice from this
// architecture's priority-ordered tables (sm3_table_<arch>.cc), and the testing override.
//
// Two tables (sm3_internal.h): single-stream back ends (compress_blocks) and
// multi-buffer back ends (hash_jobs). Dispatch takes the first entry of each whose
// features are present and combines them into one Sm3Kernels, named
// "<single>+<multi>" ("avx_bmi2+mb16_avx512"), or "<single>" when no multi-buffer
// back end fits.
#include <atomic>
#include <cstring>
#include <iterator>
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm3/sm3_internal.h"
#include "smcrypt/cpu.h"

namespace smcrypt {

extern const Sm3Kernels kSm3Generic = {
    /*name=*/"generic",
    /*required_features=*/0,
    /*compress_blocks=*/Sm3GenericCompressBlocks,
    /*batch=*/nullptr,
    /*lanes=*/0,
    /*hash_jobs=*/nullptr,
};

namespace {

using internal::BackendChoice;

const Sm3Kernels& ChooseSingle() {
  const absl::Span<const BackendChoice<Sm3Kernels>> table = Sm3SingleTable();
  const Sm3Kernels* k = internal::FirstCapable(table.data(), table.size(), GetCpuFeatures(),
                                               GetCpuIdentity());
  return k != nullptr ? *k : kSm3Generic;
}

const Sm3Kernels* ChooseMulti() {
  const absl::Span<const BackendChoice<Sm3Kernels>> table = Sm3MultiTable();
  return internal::FirstCapable(table.data(), table.size(), GetCpuFeatures(), GetCpuIdentity());
}

const Sm3Kernels& DispatchedSingle() {
  static const Sm3Kernels& single = ChooseSingle();
  return single;
}

// Combined holds the dispatched back end: built once, then read-only.
struct Combined {
  char name[48];
  Sm3Kernels kernels;
};

Combined MakeCombined() {
  Combined c{};
  const Sm3Kernels& single = DispatchedSingle();
  const Sm3Kernels* multi = ChooseMulti();
  std::strncat(c.name, single.name, sizeof(c.name) - 1);
  c.kernels = single;
  if (multi != nullptr) {
    std::strncat(c.name, "+", sizeof(c.name) - 1 - std::strlen(c.name));
    std::strncat(c.name, multi->name, sizeof(c.name) - 1 - std::strlen(c.name));
    c.kernels.required_features |= multi->required_features;
    c.kernels.batch = multi->batch;
    c.kernels.lanes = multi->lanes;
    c.kernels.hash_jobs = multi->hash_jobs;
  }
  return c;
}

const Sm3Kernels& Dispatched() {
  static const Combined combined = [] {
    Combined c = MakeCombined();
    return c;
  }();
  // The name points into the static object itself, so it is fixed up after the copy.
  static const Sm3Kernels kernels = [] {
    Sm3Kernels k = combined.kernels;
    k.name = combined.name;
    return k;
  }();
  return kernels;
}

std::atomic<const Sm3Kernels*> g_override{nullptr};

}  // namespace

void Sm3DispatchedCompressBlocks(uint32_t state[8], const uint8_t* data, size_t num_blocks) {
  DispatchedSingle().compress_blocks(state, data, num_blocks);
}

const Sm3Kernels& Sm3ActiveKernels() {
  const Sm3Kernels* o = g_override.load(std::memory_order_acquire);
  if (o != nullptr) return *o;
  return Dispatched();
}

void Sm3SetKernelsForTesting(const Sm3Kernels* k) {
  g_override.store(k, std::memory_order_release);
}

std::vector<const Sm3Kernels*> Sm3AllKernelsForTesting() {
  std::vector<const Sm3Kernels*> all;
  for (const auto& c : Sm3DispatchTableForTesting()) all.push_back(c.kernels);
  return all;
}

std::vector<internal::BackendChoice<Sm3Kernels>> Sm3DispatchTableForTesting() {
  std::vector<BackendChoice<Sm3Kernels>> all;
  for (const auto& c : Sm3MultiTable()) all.push_back(c);
  for (const auto& c : Sm3SingleTable()) all.push_back(c);
  return all;
}

namespace internal {
const char* Sm3ActiveKernelName() { return Dispatched().name; }
}  // namespace internal

}  // namespace smcrypt
