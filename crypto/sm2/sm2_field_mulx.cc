// sm2_field_mulx.cc — the `mulx_adx` and `mulx_adx_avx2` SM2 back ends (x86-64 only).
//
// Instructions: MULX (BMI2) with two independent carry chains ADCX/ADOX (ADX) for the
// 4×64-bit products, ADD/ADC/SUB/SBB and CMOV for the reduction; masked table selects
// with SSE2 (`mulx_adx`) or with 256-bit AVX2 loads and VPCMPEQD-built masks
// (`mulx_adx_avx2`). CPU features: bmi2, adx (+ avx2). Every function in this file
// carries __attribute__((target("bmi2,adx"))) or target("bmi2,adx,avx2") (through
// SM2_ATTR), including those of sm2_point_impl.inc, which is compiled here twice with
// internal linkage, once per back end.
// Technique: Montgomery multiplication mod p = 2^256 − 2^224 − 2^96 + 2^64 − 1 with
// R = 2^256. Because −p⁻¹ mod 2^64 = 1 the quotient digit u is the low limb itself and
// (x + u·p)/2^64 = x/2^64 + u·(1 + 2^192) − (u·2^32)·(1 + 2^128): one reduction round is
// two shifts and two 4-limb carry chains, no multiplication. The 512-bit product (or
// the square, 10 MULX instead of 16) is computed first; four rounds reduce its low half
// to a value ≤ p that fits in 4 limbs after every round, the high half is added and one
// masked (CMOV) subtraction of p gives the fully reduced result.
// FAdd/FSub: ADD/ADC (SUB/SBB) chains with CMOV or an SBB-made mask, in inline asm.
// Constant time: straight-line code, CMOV on the carry only; mul_comb / mul_point as in
// sm2_point_impl.inc (masked selects, no secret branches or indices); mul_two_vartime is
// variable time, for verification (public data) only.
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_modinv.h"

#if defined(__x86_64__)

#include <immintrin.h>
#include <x86intrin.h>

#include <cstring>

#include "crypto/common/constant_time.h"
#include "crypto/cpu/backends.h"
#include "smcrypt/cpu.h"
#include "smcrypt/secure_zero.h"

namespace smcrypt::internal {
namespace {

#define SM2_ATTR __attribute__((target("bmi2,adx")))

// Row i ≥ 1 of the product: (T0..T4) += a·b[i] with T4 fresh; CF chain for the low
// words, OF chain for the high words. No carry leaves T4 (the partial product of
// i + 1 rows is below 2^(64(i+5))).
#define SM2_MUL_ROW(OFF, T0, T1, T2, T3, T4) \
  "movq " OFF "+%[b], %%rdx\n\t"            \
  "xorl %%" T4 "d, %%" T4 "d\n\t"                \
  "mulxq 0+%[a], %%rax, %%rbx\n\t"          \
  "adcxq %%rax, %%" T0 "\n\t"                \
  "adoxq %%rbx, %%" T1 "\n\t"                \
  "mulxq 8+%[a], %%rax, %%rbx\n\t"          \
  "adcxq %%rax, %%" T1 "\n\t"                \
  "adoxq %%rbx, %%" T2 "\n\t"                \
  "mulxq 16+%[a], %%rax, %%rbx\n\t"         \
  "adcxq %%rax, %%" T2 "\n\t"                \
  "adoxq %%rbx, %%" T3 "\n\t"                \
  "mulxq 24+%[a], %%rax, %%rbx\n\t"         \
  "adcxq %%rax, %%" T3 "\n\t"                \
  "adoxq %%rbx, %%" T4 "\n\t"                \
  "movl $0, %%eax\n\t"                       \
  "adcxq %%rax, %%" T4 "\n\t"

// One Montgomery round on the 4-limb value (U, X1, X2, X3) (U lowest): the result
// (X1, X2, X3, U) = (x + u·p)/2^64 < 2^192 + p < 2^256, computed mod 2^256.
#define SM2_RED(U, X1, X2, X3)  \
  "movq %%" U ", %%rax\n\t"     \
  "shlq $32, %%rax\n\t"         \
  "movq %%" U ", %%rbx\n\t"     \
  "shrq $32, %%rbx\n\t"         \
  "addq %%" U ", %%" X1 "\n\t"  \
  "adcq $0, %%" X2 "\n\t"       \
  "adcq $0, %%" X3 "\n\t"       \
  "adcq $0, %%" U "\n\t"        \
  "subq %%rax, %%" X1 "\n\t"    \
  "sbbq %%rbx, %%" X2 "\n\t"    \
  "sbbq %%rax, %%" X3 "\n\t"    \
  "sbbq %%rbx, %%" U "\n\t"

// Reduce the low half r8..r11 (result ≤ p back in r8..r11), add the high half r12..r15
// (sum < 2p), subtract p once under CMOV and store to [r].
#define SM2_REDUCE_AND_STORE                                    \
  SM2_RED("r8", "r9", "r10", "r11")                             \
  SM2_RED("r9", "r10", "r11", "r8")                             \
  SM2_RED("r10", "r11", "r8", "r9")                             \
  SM2_RED("r11", "r8", "r9", "r10")                             \
  "xorl %%eax, %%eax\n\t"                                       \
  "addq %%r12, %%r8\n\t"                                        \
  "adcq %%r13, %%r9\n\t"                                        \
  "adcq %%r14, %%r10\n\t"                                       \
  "adcq %%r15, %%r11\n\t"                                       \
  "adcq $0, %%rax\n\t"                                          \
  "movq %%r8, %%r12\n\t"                                        \
  "movq %%r9, %%r13\n\t"                                        \
  "movq %%r10, %%r14\n\t"                                       \
  "movq %%r11, %%r15\n\t"                                       \
  "movabsq $0xFFFFFFFF00000000, %%rbx\n\t"                      \
  "movabsq $0xFFFFFFFEFFFFFFFF, %%rdx\n\t"                      \
  "subq $-1, %%r12\n\t"                                         \
  "sbbq %%rbx, %%r13\n\t"                                       \
  "sbbq $-1, %%r14\n\t"                                         \
  "sbbq %%rdx, %%r15\n\t"                                       \
  "sbbq $0, %%rax\n\t"                                          \
  "cmovncq %%r12, %%r8\n\t"                                     \
  "cmovncq %%r13, %%r9\n\t"                                     \
  "cmovncq %%r14, %%r10\n\t"                                    \
  "cmovncq %%r15, %%r11\n\t"                                    \
  "movq %%r8, 0+%[r]\n\t"                                      \
  "movq %%r9, 8+%[r]\n\t"                                      \
  "movq %%r10, 16+%[r]\n\t"                                    \
  "movq %%r11, 24+%[r]\n\t"

SM2_ATTR __attribute__((always_inline)) inline void FMul(uint64_t r[4], const uint64_t a[4],
                                                       const uint64_t b[4]) {
  __asm__(
      // Row 0: r8..r12 = a·b[0].
      "movq 0+%[b], %%rdx\n\t"
      "mulxq 0+%[a], %%r8, %%r9\n\t"
      "mulxq 8+%[a], %%rax, %%r10\n\t"
      "addq %%rax, %%r9\n\t"
      "mulxq 16+%[a], %%rax, %%r11\n\t"
      "adcq %%rax, %%r10\n\t"
      "mulxq 24+%[a], %%rax, %%r12\n\t"
      "adcq %%rax, %%r11\n\t"
      "adcq $0, %%r12\n\t"
      SM2_MUL_ROW("8", "r9", "r10", "r11", "r12", "r13")
      SM2_MUL_ROW("16", "r10", "r11", "r12", "r13", "r14")
      SM2_MUL_ROW("24", "r11", "r12", "r13", "r14", "r15")
      SM2_REDUCE_AND_STORE
      : [r] "=m"(*reinterpret_cast<uint64_t(*)[4]>(r))
      : [a] "m"(*reinterpret_cast<const uint64_t(*)[4]>(a)),
        [b] "m"(*reinterpret_cast<const uint64_t(*)[4]>(b))
      : "rax", "rbx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc");
}

SM2_ATTR __attribute__((always_inline)) inline void FSqr(uint64_t r[4], const uint64_t a[4]) {
  __asm__(
      // Off-diagonal products a_i·a_j (i < j) into r9..r14.
      "movq 0+%[a], %%rdx\n\t"
      "mulxq 8+%[a], %%r9, %%r10\n\t"
      "mulxq 16+%[a], %%rax, %%r11\n\t"
      "addq %%rax, %%r10\n\t"
      "mulxq 24+%[a], %%rax, %%r12\n\t"
      "adcq %%rax, %%r11\n\t"
      "adcq $0, %%r12\n\t"
      "movq 8+%[a], %%rdx\n\t"
      "mulxq 16+%[a], %%rax, %%rbx\n\t"
      "mulxq 24+%[a], %%r8, %%r13\n\t"
      "addq %%rax, %%r11\n\t"
      "adcq %%rbx, %%r12\n\t"
      "adcq $0, %%r13\n\t"
      "addq %%r8, %%r12\n\t"
      "adcq $0, %%r13\n\t"
      "movq 16+%[a], %%rdx\n\t"
      "mulxq 24+%[a], %%rax, %%r14\n\t"
      "addq %%rax, %%r13\n\t"
      "adcq $0, %%r14\n\t"
      // Double them (r15 takes the carry).
      "xorl %%r15d, %%r15d\n\t"
      "addq %%r9, %%r9\n\t"
      "adcq %%r10, %%r10\n\t"
      "adcq %%r11, %%r11\n\t"
      "adcq %%r12, %%r12\n\t"
      "adcq %%r13, %%r13\n\t"
      "adcq %%r14, %%r14\n\t"
      "adcq $0, %%r15\n\t"
      // Add the squares a_i² at limb 2i (MULX and MOV leave the flags alone).
      "movq 0+%[a], %%rdx\n\t"
      "mulxq %%rdx, %%r8, %%rax\n\t"
      "movq 8+%[a], %%rdx\n\t"
      "mulxq %%rdx, %%rbx, %%rdx\n\t"
      "addq %%rax, %%r9\n\t"
      "adcq %%rbx, %%r10\n\t"
      "adcq %%rdx, %%r11\n\t"
      "movq 16+%[a], %%rdx\n\t"
      "mulxq %%rdx, %%rax, %%rbx\n\t"
      "adcq %%rax, %%r12\n\t"
      "adcq %%rbx, %%r13\n\t"
      "movq 24+%[a], %%rdx\n\t"
      "mulxq %%rdx, %%rax, %%rbx\n\t"
      "adcq %%rax, %%r14\n\t"
      "adcq %%rbx, %%r15\n\t"
      SM2_REDUCE_AND_STORE
      : [r] "=m"(*reinterpret_cast<uint64_t(*)[4]>(r))
      : [a] "m"(*reinterpret_cast<const uint64_t(*)[4]>(a))
      : "rax", "rbx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "cc");
}

constexpr uint64_t kP1 = 0xFFFFFFFF00000000ull;
constexpr uint64_t kP3 = 0xFFFFFFFEFFFFFFFFull;

// FAdd: r = a + b mod p (a, b < p): add (carry into `top`), subtract p, and CMOV the
// sum back when that borrowed past the carry. Inline asm: written with _addcarry_u64
// and masks, GCC 12 moves the limbs through XMM registers to combine the masks, which
// costs about three times as much on the point formulas' dependency chains.
SM2_ATTR inline void FAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  uint64_t s0, s1, s2, s3, t0, t1, t2, t3, top;
  __asm__(
      "movq 0+%[a], %[s0]\n\t"
      "movq 8+%[a], %[s1]\n\t"
      "movq 16+%[a], %[s2]\n\t"
      "movq 24+%[a], %[s3]\n\t"
      "xorl %k[top], %k[top]\n\t"
      "addq 0+%[b], %[s0]\n\t"
      "adcq 8+%[b], %[s1]\n\t"
      "adcq 16+%[b], %[s2]\n\t"
      "adcq 24+%[b], %[s3]\n\t"
      "adcq $0, %[top]\n\t"
      "movq %[s0], %[t0]\n\t"
      "movq %[s1], %[t1]\n\t"
      "movq %[s2], %[t2]\n\t"
      "movq %[s3], %[t3]\n\t"
      "subq $-1, %[t0]\n\t"
      "sbbq %[p1], %[t1]\n\t"
      "sbbq $-1, %[t2]\n\t"
      "sbbq %[p3], %[t3]\n\t"
      "sbbq $0, %[top]\n\t"
      "cmovcq %[s0], %[t0]\n\t"
      "cmovcq %[s1], %[t1]\n\t"
      "cmovcq %[s2], %[t2]\n\t"
      "cmovcq %[s3], %[t3]\n\t"
      "movq %[t0], 0+%[r]\n\t"
      "movq %[t1], 8+%[r]\n\t"
      "movq %[t2], 16+%[r]\n\t"
      "movq %[t3], 24+%[r]\n\t"
      : [r] "=m"(*reinterpret_cast<uint64_t(*)[4]>(r)), [s0] "=&r"(s0), [s1] "=&r"(s1),
        [s2] "=&r"(s2), [s3] "=&r"(s3), [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2),
        [t3] "=&r"(t3), [top] "=&r"(top)
      : [a] "m"(*reinterpret_cast<const uint64_t(*)[4]>(a)),
        [b] "m"(*reinterpret_cast<const uint64_t(*)[4]>(b)), [p1] "r"(kP1), [p3] "r"(kP3)
      : "cc");
}

// FSub: r = a − b mod p (a, b < p): subtract, turn the borrow into a mask with SBB, and
// add p & mask back.
SM2_ATTR inline void FSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  uint64_t t0, t1, t2, t3, m, m1, m3;
  __asm__(
      "movq 0+%[a], %[t0]\n\t"
      "movq 8+%[a], %[t1]\n\t"
      "movq 16+%[a], %[t2]\n\t"
      "movq 24+%[a], %[t3]\n\t"
      "subq 0+%[b], %[t0]\n\t"
      "sbbq 8+%[b], %[t1]\n\t"
      "sbbq 16+%[b], %[t2]\n\t"
      "sbbq 24+%[b], %[t3]\n\t"
      "sbbq %[m], %[m]\n\t"
      "movq %[m], %[m1]\n\t"
      "movq %[m], %[m3]\n\t"
      "andq %[p1], %[m1]\n\t"
      "andq %[p3], %[m3]\n\t"
      "addq %[m], %[t0]\n\t"
      "adcq %[m1], %[t1]\n\t"
      "adcq %[m], %[t2]\n\t"
      "adcq %[m3], %[t3]\n\t"
      "movq %[t0], 0+%[r]\n\t"
      "movq %[t1], 8+%[r]\n\t"
      "movq %[t2], 16+%[r]\n\t"
      "movq %[t3], 24+%[r]\n\t"
      : [r] "=m"(*reinterpret_cast<uint64_t(*)[4]>(r)), [t0] "=&r"(t0), [t1] "=&r"(t1),
        [t2] "=&r"(t2), [t3] "=&r"(t3), [m] "=&r"(m), [m1] "=&r"(m1), [m3] "=&r"(m3)
      : [a] "m"(*reinterpret_cast<const uint64_t(*)[4]>(a)),
        [b] "m"(*reinterpret_cast<const uint64_t(*)[4]>(b)), [p1] "r"(kP1), [p3] "r"(kP3)
      : "cc");
}

// The point formulas, compiled twice: `mulx_adx` (SSE2 table selects) and
// `mulx_adx_avx2` (AVX2 table selects). The field functions above carry
// target("bmi2,adx"), a subset of both targets, so they inline into either copy.
namespace base {
#include "crypto/sm2/sm2_point_impl.inc"
}  // namespace base

#undef SM2_ATTR
#define SM2_ATTR __attribute__((target("bmi2,adx,avx2")))
#define SM2_SELECT_AVX2 1
namespace avx2 {
#include "crypto/sm2/sm2_point_impl.inc"
}  // namespace avx2
#undef SM2_SELECT_AVX2
#undef SM2_ATTR

__attribute__((target("bmi2,adx"))) void FeMulMulx(uint64_t r[4], const uint64_t a[4],
                                                   const uint64_t b[4]) {
  FMul(r, a, b);
}
__attribute__((target("bmi2,adx"))) void FeSqrMulx(uint64_t r[4], const uint64_t a[4]) {
  FSqr(r, a);
}

}  // namespace

const Sm2Kernels kSm2KernelsMulxAdx = {
    "mulx_adx",          kCpuBmi2 | kCpuAdx,  FeMulMulx,           FeSqrMulx,
    base::KernelFeInv,   base::KernelMulComb, base::KernelMulPoint, base::KernelMulTwoVt};

const Sm2Kernels kSm2KernelsMulxAdxAvx2 = {
    "mulx_adx_avx2",     kCpuBmi2 | kCpuAdx | kCpuAvx2, FeMulMulx,           FeSqrMulx,
    avx2::KernelFeInv,   avx2::KernelMulComb,           avx2::KernelMulPoint, avx2::KernelMulTwoVt};

}  // namespace smcrypt::internal

#endif  // defined(__x86_64__)
