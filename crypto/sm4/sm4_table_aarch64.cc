// sm4_table_aarch64.cc — the SM4 dispatch table of arm64 builds (crypto/CMakeLists.txt
// compiles this file and the back ends it names only when CMAKE_SYSTEM_PROCESSOR is
// aarch64; sm4_dispatch.cc makes the choice).
#include "absl/types/span.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm4/sm4_internal.h"

namespace smcrypt {
namespace {

using internal::BackendChoice;
using internal::HasRequiredFeatures;

// Strongest first; generic is last and needs nothing, so the search always succeeds.
// ce (SM4E, FEAT_SM4: Yitian 710, Graviton3-class cores) before neon (TBL/TBX S-box,
// every arm64 CPU: Kunpeng 920, Phytium).
constexpr BackendChoice<Sm4Kernels> kSm4Table[] = {
    {&kSm4Ce, HasRequiredFeatures<&kSm4Ce>},
    {&kSm4Neon, HasRequiredFeatures<&kSm4Neon>},
    {&kSm4Generic, HasRequiredFeatures<&kSm4Generic>},
};

}  // namespace

absl::Span<const BackendChoice<Sm4Kernels>> Sm4DispatchTable() { return kSm4Table; }

}  // namespace smcrypt
