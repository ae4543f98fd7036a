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
// search always succeeds. No multi-buffer back end exists on arm64 (Sm3MultiTable() is
// empty).
constexpr BackendChoice<Sm3Kernels> kSm3SingleTable[] = {
    {&kSm3Ce, HasRequiredFeatures<&kSm3Ce>},
    {&kSm3Generic, HasRequiredFeatures<&kSm3Generic>},
};

}  // namespace

absl::Span<const BackendChoice<Sm3Kernels>> Sm3SingleTable() { return kSm3SingleTable; }
absl::Span<const BackendChoice<Sm3Kernels>> Sm3MultiTable() { return {}; }

}  // namespace smcrypt
