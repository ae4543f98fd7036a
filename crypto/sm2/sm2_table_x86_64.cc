// sm2_table_x86_64.cc — the SM2 field back-end table of x86-64 builds
// (crypto/CMakeLists.txt compiles this file and the back ends it names only when
// CMAKE_SYSTEM_PROCESSOR is x86-64; sm2_dispatch.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_field.h"

namespace smcrypt::internal {
namespace {

// Priority order: the first capable entry wins; generic is last and needs nothing.
// Capability: each back end's required features; no CPU-specific preference.
// mulx_adx_avx2 differs from mulx_adx only in its table selects (AVX2 loads and masks
// instead of 64-bit CMOV-style masks). Measured (bench.sh --check-dispatch, two
// interleaved runs of 9 repetitions, 2026-12-01) on AMD EPYC family 25 model 17: no
// difference beyond the noise; mulx_adx/mulx_adx_avx2 medians 0.90 (sign, verify) and
// 1.04 (encrypt, decrypt), every range spanning 1. (Sequential runs there had put
// mulx_adx 18–26 % ahead: drift between cases run minutes apart.) Not yet measured on
// Intel, where a sequential run favoured mulx_adx and an interleaved one mulx_adx_avx2.
constexpr BackendChoice<Sm2Kernels> kSm2Backends[] = {
    {&kSm2KernelsMulxAdxAvx2, HasRequiredFeatures<&kSm2KernelsMulxAdxAvx2>},
    {&kSm2KernelsMulxAdx, HasRequiredFeatures<&kSm2KernelsMulxAdx>},
    {&kSm2KernelsGeneric, HasRequiredFeatures<&kSm2KernelsGeneric>},
};

}  // namespace

absl::Span<const BackendChoice<Sm2Kernels>> Sm2DispatchTable() { return kSm2Backends; }

}  // namespace smcrypt::internal
