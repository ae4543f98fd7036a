// sm4_table_x86_64.cc — the SM4 dispatch table of x86-64 builds (crypto/CMakeLists.txt
// compiles this file and the back ends it names only when CMAKE_SYSTEM_PROCESSOR is
// x86-64; sm4_dispatch.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm4/sm4_internal.h"

namespace smcrypt {
namespace {

using internal::BackendChoice;
using internal::HasRequiredFeatures;

// Strongest first; generic is last and needs nothing, so the search always succeeds.
// GFNI computes the S-box in two instructions on every byte of a register, so it goes
// before AES-NI (about twenty instructions per S-box layer); at equal technique the
// wider registers go first. Capability: each back end's required features; no
// CPU-specific preference. Measured (bench.sh --check-dispatch, two interleaved runs of
// 9 repetitions, 2026-12-01) on AMD EPYC family 25 model 17: gfni_avx512 is the fastest
// in every headline case (ECB, CTR, CBC, 16-key CBC, GCM, CCM); of its throughput,
// gfni_avx2 reaches 0.36–0.79, vaes_avx512 0.47–0.56, aesni_avx2 0.19–0.46 (medians).
// Not yet measured on Intel.
constexpr BackendChoice<Sm4Kernels> kSm4Table[] = {
    {&kSm4GfniAvx512, HasRequiredFeatures<&kSm4GfniAvx512>},
    {&kSm4GfniAvx2, HasRequiredFeatures<&kSm4GfniAvx2>},
    {&kSm4VaesAvx512, HasRequiredFeatures<&kSm4VaesAvx512>},
    {&kSm4AesniAvx2, HasRequiredFeatures<&kSm4AesniAvx2>},
    {&kSm4Generic, HasRequiredFeatures<&kSm4Generic>},
};

}  // namespace

absl::Span<const BackendChoice<Sm4Kernels>> Sm4DispatchTable() { return kSm4Table; }

}  // namespace smcrypt
