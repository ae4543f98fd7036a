// sm2_field_generic.cc — the `generic` SM2 back end.
//
// Instructions: portable C++ with unsigned __int128 64×64→128 products (MUL on x86-64;
// SSE2 masked selects on x86-64, plain 64-bit masks elsewhere). CPU features: none.
// Technique: CIOS Montgomery multiplication in 4×64-bit limbs with −p⁻¹ mod 2^64 = 1,
// final reduction by masked select; point formulas and scalar multiplications from
// sm2_point_impl.inc compiled here so that the field operations inline.
// Constant time: yes for fe_*, mul_comb and mul_point (no branches or memory indices on
// operands); mul_two_vartime is variable time, for verification (public data) only.
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "crypto/common/constant_time.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_modinv.h"
#include "crypto/sm2/sm2_montgomery.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::internal {
namespace {

#define SM2_ATTR

inline void FMul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  MontMul(r, a, b, kSm2P, 1);
}
inline void FSqr(uint64_t r[4], const uint64_t a[4]) { MontMul(r, a, a, kSm2P, 1); }
inline void FAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  ModAdd(r, a, b, kSm2P);
}
inline void FSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  ModSub(r, a, b, kSm2P);
}

#include "crypto/sm2/sm2_point_impl.inc"

#undef SM2_ATTR

void FeMulGeneric(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) { FMul(r, a, b); }
void FeSqrGeneric(uint64_t r[4], const uint64_t a[4]) { FSqr(r, a); }

static_assert(MontNegInv64(0xFFFFFFFFFFFFFFFFull) == 1, "-p^-1 mod 2^64 must be 1");

}  // namespace

const Sm2Kernels kSm2KernelsGeneric = {"generic",      0,          FeMulGeneric,  FeSqrGeneric,
                                       KernelFeInv,    KernelMulComb, KernelMulPoint,
                                       KernelMulTwoVt};

}  // namespace smcrypt::internal
