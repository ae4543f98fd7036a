// sm3_table_x86_64.cc — the SM3 dispatch tables of x86-64 builds (crypto/CMakeLists.txt
// compiles this file and the back ends it names only when CMAKE_SYSTEM_PROCESSOR is
// x86-64; sm3_dispatch.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm3/sm3_internal.h"

namespace smcrypt {
namespace {

using internal::BackendChoice;
using internal::HasRequiredFeatures;

// Single-stream back ends, strongest first; generic is last and needs nothing, so the
// search always succeeds. Multi-buffer back ends, widest first. Capability: each back
// end's required features; no CPU-specific preference. Measured (bench.sh
// --check-dispatch, two interleaved runs of 9 repetitions, 2026-12-01) on AMD EPYC
// family 25 model 17: avx_bmi2 2.4–2.9× generic (hash at 64 B, 8 KiB and 1 MiB, HMAC at
// 1 KiB); for a batch of 16 × 1 KiB, mb16_avx512 1.8–2.0× mb8_avx2. Not yet measured on
// Intel.
constexpr BackendChoice<Sm3Kernels> kSm3SingleTable[] = {
    {&kSm3AvxBmi2, HasRequiredFeatures<&kSm3AvxBmi2>},
    {&kSm3Generic, HasRequiredFeatures<&kSm3Generic>},
};

constexpr BackendChoice<Sm3Kernels> kSm3MultiTable[] = {
    {&kSm3Mb16Avx512, HasRequiredFeatures<&kSm3Mb16Avx512>},
    {&kSm3Mb8Avx2, HasRequiredFeatures<&kSm3Mb8Avx2>},
};

}  // namespace

absl::Span<const BackendChoice<Sm3Kernels>> Sm3SingleTable() { return kSm3SingleTable; }
absl::Span<const BackendChoice<Sm3Kernels>> Sm3MultiTable() { return kSm3MultiTable; }

}  // namespace smcrypt
