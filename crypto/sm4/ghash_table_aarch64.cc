// ghash_table_aarch64.cc — the GHASH dispatch table of arm64 builds (crypto/CMakeLists.txt
// compiles this file and the back ends it names only when CMAKE_SYSTEM_PROCESSOR is
// aarch64; sm4_gcm.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm4/ghash.h"

namespace smcrypt::internal {
namespace {

// Priority order, generic last (it needs nothing, so the search always succeeds).
constexpr BackendChoice<GhashKernels> kGhashTable[] = {
    {&kGhashPmull, HasRequiredFeatures<&kGhashPmull>},
    {&kGhashGeneric, HasRequiredFeatures<&kGhashGeneric>},
};

}  // namespace

absl::Span<const BackendChoice<GhashKernels>> GhashDispatchTable() { return kGhashTable; }

}  // namespace smcrypt::internal
