// sm2_table_aarch64.cc — the SM2 field back-end table of arm64 builds
// (crypto/CMakeLists.txt compiles this file only when CMAKE_SYSTEM_PROCESSOR is aarch64;
// sm2_dispatch.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_field.h"

namespace smcrypt::internal {
namespace {

// Only the generic field (unsigned __int128 products: MUL and UMULH on arm64) exists on
// arm64; it needs nothing, so the search always succeeds.
constexpr BackendChoice<Sm2Kernels> kSm2Backends[] = {
    {&kSm2KernelsGeneric, HasRequiredFeatures<&kSm2KernelsGeneric>},
};

}  // namespace

absl::Span<const BackendChoice<Sm2Kernels>> Sm2DispatchTable() { return kSm2Backends; }

}  // namespace smcrypt::internal
