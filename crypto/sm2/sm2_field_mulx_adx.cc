// sm2_field_mulx_adx.cc — the `mulx_adx` SM2 back end (x86-64 only).
//
// Instructions: the MULX/ADCX/ADOX field arithmetic of sm2_field_mulx.inc; SSE2 masked
// table selects. CPU features: bmi2, adx. Every function in this file carries
// __attribute__((target("bmi2,adx"))), those of sm2_field_mulx.inc and
// sm2_point_impl.inc included (internal linkage).
// Technique: Montgomery arithmetic mod p with R = 2^256 and reduction rounds without
// multiplications (sm2_field_mulx.inc); point formulas and scalar multiplications of
// sm2_point_impl.inc with those field operations inlined.
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

#define SM2_ATTR __attribute__((target("bmi2,adx")))
#include "crypto/sm2/sm2_point_impl.inc"
#undef SM2_ATTR

}  // namespace

const Sm2Kernels kSm2KernelsMulxAdx = {
    "mulx_adx",  kCpuBmi2 | kCpuAdx, FeMulMulx,      FeSqrMulx,
    KernelFeInv, KernelMulComb,      KernelMulPoint, KernelMulTwoVt};

}  // namespace smcrypt::internal
