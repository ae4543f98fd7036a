// sm2_field_generic.cc — the `generic` SM2 field back end.
//
// Instructions: portable C++ with unsigned __int128 64×64→128 products (MUL on x86-64).
// CPU features: none. Technique: CIOS Montgomery multiplication in 4×64-bit limbs with
// −p⁻¹ mod 2^64 = 1, final reduction by masked select. Constant time: yes (no branches
// or memory indices on operands).
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_montgomery.h"

namespace smcrypt::internal {
namespace {

void FeMulGeneric(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  MontMul(r, a, b, kSm2P, 1);
}

void FeSqrGeneric(uint64_t r[4], const uint64_t a[4]) { MontMul(r, a, a, kSm2P, 1); }

static_assert(MontNegInv64(0xFFFFFFFFFFFFFFFFull) == 1, "-p^-1 mod 2^64 must be 1");

}  // namespace

const Sm2Kernels kSm2KernelsGeneric = {"generic", 0, FeMulGeneric, FeSqrGeneric};

}  // namespace smcrypt::internal
