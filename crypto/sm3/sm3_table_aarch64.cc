// sm3_table_aarch64.cc — the SM3 dispatch tables of arm64 builds (crypto/CMakeLists.txt
// compiles this file and the back ends it names only when CMAKE_SYSTEM_PROCESSOR is
// aarch64; sm3_dispatch.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm3/sm3_internal.h"

namespace smcrypt {
namespace {

using internal::BackendChoice;
using internal::HasRequiredFeatures;

// Single-stream back ends, strongest first; generic is last and needs nothing, so the
// search always succeeds.
constexpr BackendChoice<Sm3Kernels> kSm3SingleTable[] = {
    {&kSm3Ce, HasRequiredFeatures<&kSm3Ce>},
    {&kSm3Generic, HasRequiredFeatures<&kSm3Generic>},
};

// Mb4NeonPreferred: mb4_neon serves batches (and the SM2 KDF, through Sm3Batch) on CPUs
// without the SM3 instructions. Where FEAT_SM3 exists, batches stay on ce, one message
// at a time: the counts of bench/ARM64.md give ce 339 instructions per block and
// mb4_neon 2,843 per four blocks (711 per block), so on a core with two 128-bit vector
// pipes the two come out about even (an estimate from instruction counts, not a
// measurement), and ce keeps each message's latency short.
bool Mb4NeonPreferred(uint32_t features, const CpuIdentity& /*cpu*/) {
  return internal::HasFeatures(features, kSm3Mb4Neon.required_features) &&
         !internal::HasFeatures(features, kCpuSm3);
}

// Multi-buffer back ends, widest first.
constexpr BackendChoice<Sm3Kernels> kSm3MultiTable[] = {
    {&kSm3Mb4Neon, Mb4NeonPreferred},
};

}  // namespace

absl::Span<const BackendChoice<Sm3Kernels>> Sm3SingleTable() { return kSm3SingleTable; }
absl::Span<const BackendChoice<Sm3Kernels>> Sm3MultiTable() { return kSm3MultiTable; }

}  // namespace smcrypt
