// sm2_field_mulx_adx_avx2.cc — the `mulx_adx_avx2` SM2 back end (x86-64 only).
//
// Instructions: the MULX/ADCX/ADOX field arithmetic of sm2_field_mulx.inc; masked table
// selects with 256-bit AVX2 loads and VPCMPEQD-built masks. CPU features: bmi2, adx,
// avx2. Every function in this file carries __attribute__((target("bmi2,adx,avx2"))),
// those of sm2_point_impl.inc included, or target("bmi2,adx") (sm2_field_mulx.inc, a
// subset that inlines into the point code); all with internal linkage.
// Technique: as `mulx_adx` (sm2_field_mulx_adx.cc); only the comb-row selects of
// sm2_point_impl.inc differ (SM2_SELECT_AVX2).
// Constant time: fe_*, mul_comb and mul_point (masked selects, no branch or index on
// secret data); mul_two_vartime is variable time, for verification (public data) only.
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_modinv.h"

#include <immintrin.h>
#include <x86intrin.h>

#include <cstdint>
#include <cstring>

#include "crypto/common/constant_time.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::internal {
namespace {

#include "crypto/sm2/sm2_field_mulx.inc"

#define SM2_ATTR __attribute__((target("bmi2,adx,avx2")))
#define SM2_SELECT_AVX2 1
#include "crypto/sm2/sm2_point_impl.inc"
#undef SM2_SELECT_AVX2
#undef SM2_ATTR

}  // namespace

const Sm2Kernels kSm2KernelsMulxAdxAvx2 = {
    "mulx_adx_avx2", kCpuBmi2 | kCpuAdx | kCpuAvx2, FeMulMulx,      FeSqrMulx,
    KernelFeInv,     KernelMulComb,                 KernelMulPoint, KernelMulTwoVt};

}  // namespace smcrypt::internal
