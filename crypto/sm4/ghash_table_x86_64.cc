// ghash_table_x86_64.cc — the GHASH dispatch table of x86-64 builds (crypto/CMakeLists.txt
// compiles this file and ghash_clmul.cc only when CMAKE_SYSTEM_PROCESSOR is x86-64;
// sm4_gcm.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm4/ghash.h"

namespace smcrypt::internal {
namespace {

// Priority order: wider carry-less-multiply back ends go before generic. Capability:
// each back end's required features; no CPU-specific preference. Measured through the
// SM4-GCM cases (bench.sh --check-dispatch, bench/PERFORMANCE.md) on AMD EPYC family 25
// model 17. Not yet measured on Intel.
constexpr BackendChoice<GhashKernels> kGhashTable[] = {
    {&kGhashVpclmulAvx512, HasRequiredFeatures<&kGhashVpclmulAvx512>},
    {&kGhashPclmulAvx, HasRequiredFeatures<&kGhashPclmulAvx>},
    {&kGhashGeneric, HasRequiredFeatures<&kGhashGeneric>},
};

}  // namespace

absl::Span<const BackendChoice<GhashKernels>> GhashDispatchTable() { return kGhashTable; }

}  // namespace smcrypt::internal
