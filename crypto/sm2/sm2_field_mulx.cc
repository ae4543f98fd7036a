// sm2_field_mulx.cc — the `mulx_adx` SM2 back end (x86-64 only).
//
// Instructions: MULX (BMI2) with two independent carry chains ADCX/ADOX (ADX) for the
// 4×64-bit products, ADD/ADC/SUB/SBB and CMOV for the reduction; SSE2 masked selects.
// CPU features: bmi2, adx. Every function in this file carries
// __attribute__((target("bmi2,adx"))) (through SM2_ATTR), including those of
// sm2_point_impl.inc, which is compiled here with internal linkage.
// Technique: Montgomery multiplication mod p = 2^256 − 2^224 − 2^96 + 2^64 − 1 with
// R = 2^256. Because −p⁻¹ mod 2^64 = 1 the quotient digit u is the low limb itself and
// (x + u·p)/2^64 = x/2^64 + u·(1 + 2^192) − (u·2^32)·(1 + 2^128): one reduction round is
// two shifts and two 4-limb carry chains, no multiplication. The 512-bit product (or
// the square, 10 MULX instead of 16) is computed first; four rounds reduce its low half
// to a value ≤ p that fits in 4 limbs after every round, the high half is added and one
// masked (CMOV) subtraction of p gives the fully reduced result.
// Constant time: straight-line code, CMOV on the carry only; mul_comb / mul_point as in
// sm2_point_impl.inc (masked selects, no secret branches or indices); mul_two_vartime is
// variable time, for verification (public data) only.
#include "crypto/sm2/sm2_field.h"

#if defined(__x86_64__)

#include <emmintrin.h>
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

SM2_ATTR inline void FMul(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
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

SM2_ATTR inline void FSqr(uint64_t r[4], const uint64_t a[4]) {
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

// FAdd: r = a + b mod p (a, b < p): add, subtract p, keep the sum if that borrowed past
// the carry. Masks only.
SM2_ATTR inline void FAdd(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  unsigned long long s0, s1, s2, s3, t0, t1, t2, t3, top;
  unsigned char c = _addcarry_u64(0, a[0], b[0], &s0);
  c = _addcarry_u64(c, a[1], b[1], &s1);
  c = _addcarry_u64(c, a[2], b[2], &s2);
  c = _addcarry_u64(c, a[3], b[3], &s3);
  const unsigned long long carry = c;
  unsigned char br = _subborrow_u64(0, s0, ~0ull, &t0);
  br = _subborrow_u64(br, s1, kP1, &t1);
  br = _subborrow_u64(br, s2, ~0ull, &t2);
  br = _subborrow_u64(br, s3, kP3, &t3);
  br = _subborrow_u64(br, carry, 0, &top);
  const uint64_t keep = 0 - static_cast<uint64_t>(br);  // ~0: sum < p, keep it
  r[0] = (s0 & keep) | (t0 & ~keep);
  r[1] = (s1 & keep) | (t1 & ~keep);
  r[2] = (s2 & keep) | (t2 & ~keep);
  r[3] = (s3 & keep) | (t3 & ~keep);
}

// FSub: r = a − b mod p (a, b < p): subtract, add p back under the borrow mask.
SM2_ATTR inline void FSub(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
  unsigned long long t0, t1, t2, t3;
  unsigned char br = _subborrow_u64(0, a[0], b[0], &t0);
  br = _subborrow_u64(br, a[1], b[1], &t1);
  br = _subborrow_u64(br, a[2], b[2], &t2);
  br = _subborrow_u64(br, a[3], b[3], &t3);
  const uint64_t m = 0 - static_cast<uint64_t>(br);
  unsigned long long r0, r1, r2, r3;
  unsigned char c = _addcarry_u64(0, t0, m, &r0);
  c = _addcarry_u64(c, t1, kP1 & m, &r1);
  c = _addcarry_u64(c, t2, m, &r2);
  _addcarry_u64(c, t3, kP3 & m, &r3);
  r[0] = r0;
  r[1] = r1;
  r[2] = r2;
  r[3] = r3;
}

#include "crypto/sm2/sm2_point_impl.inc"

#undef SM2_ATTR

__attribute__((target("bmi2,adx"))) void FeMulMulx(uint64_t r[4], const uint64_t a[4],
                                                   const uint64_t b[4]) {
  FMul(r, a, b);
}
__attribute__((target("bmi2,adx"))) void FeSqrMulx(uint64_t r[4], const uint64_t a[4]) {
  FSqr(r, a);
}

}  // namespace

const Sm2Kernels kSm2KernelsMulxAdx = {"mulx_adx",    kCpuBmi2 | kCpuAdx, FeMulMulx,
                                       FeSqrMulx,     KernelFeInv,        KernelMulComb,
                                       KernelMulPoint, KernelMulTwoVt};

}  // namespace smcrypt::internal

#endif  // defined(__x86_64__)
