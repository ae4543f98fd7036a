// cpu.h — CPU feature detection, the feature mask, and the back end chosen per algorithm.
//
// Features are detected once (CPUID leaves 1 and 7 plus XGETBV on x86-64) and then
// masked by SMCRYPT_CPU_DISABLE and by SetCpuDisable(); each algorithm picks its back
// end from the masked set the first time it is used, and keeps it for the life of the
// process (docs/backends.md, "CPU dispatch").
#ifndef SMCRYPT_CPU_H_
#define SMCRYPT_CPU_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace smcrypt {

// CpuFeature is one bit of a feature set. Names (for masks, logs and GetServerInfo)
// come from CpuFeatureName(): on x86-64 aesni, pclmul, avx, avx2, bmi2, adx, avx512,
// vaes, vpclmulqdq, gfni, ifma, sha; on arm64 asimd, pmull, sha2, sm3, sm4, sve. Every
// name parses on every architecture; a CPU of the other architecture never has it. `kBmi2` means BMI1 and BMI2 together; `kAvx512`
// means AVX-512 F, BW, VL and DQ together, with the OS saving ZMM state.
enum CpuFeature : uint32_t {
  kCpuAesni = 1u << 0,
  kCpuPclmul = 1u << 1,
  kCpuAvx = 1u << 2,
  kCpuAvx2 = 1u << 3,
  kCpuBmi2 = 1u << 4,
  kCpuAdx = 1u << 5,
  kCpuAvx512 = 1u << 6,
  kCpuVaes = 1u << 7,
  kCpuVpclmulqdq = 1u << 8,
  kCpuGfni = 1u << 9,
  kCpuIfma = 1u << 10,
  kCpuSha = 1u << 11,
  // arm64 (Linux getauxval(AT_HWCAP)/AT_HWCAP2 bits; Arm ARM, FEAT_* names).
  kCpuAsimd = 1u << 12,  // Advanced SIMD (NEON): HWCAP_ASIMD
  kCpuPmull = 1u << 13,  // FEAT_PMULL, PMULL/PMULL2 on 64-bit lanes: HWCAP_PMULL
  kCpuSha2 = 1u << 14,   // FEAT_SHA256: HWCAP_SHA2
  kCpuSm3 = 1u << 15,    // FEAT_SM3 (SM3SS1, SM3TT1A/B, SM3TT2A/B, SM3PARTW1/2): HWCAP_SM3
  kCpuSm4 = 1u << 16,    // FEAT_SM4 (SM4E, SM4EKEY): HWCAP_SM4
  kCpuSve = 1u << 17,    // FEAT_SVE: HWCAP_SVE
};
inline constexpr int kNumCpuFeatures = 18;

// CpuFeatureName returns the mask name of the single feature bit `f` ("" if unknown).
absl::string_view CpuFeatureName(uint32_t f);

// DetectCpuFeatures returns what this CPU and OS support, before any mask.
// AVX/AVX2/VAES/VPCLMULQDQ/GFNI-on-YMM need XCR0 bits 1–2 (SSE, YMM state); AVX-512
// needs XCR0 bits 5–7 too. Computed once; thread-safe. 0 on non-x86-64 builds.
uint32_t DetectCpuFeatures();

// ParseCpuFeatureList parses a comma-separated list of feature names ("gfni,avx512";
// spaces and empty items are ignored, names are case-insensitive) into a bit set.
// Errors: InvalidArgument naming the unknown feature and listing the valid names.
absl::StatusOr<uint32_t> ParseCpuFeatureList(absl::string_view list);

// FormatCpuFeatureList is the inverse of ParseCpuFeatureList ("aesni,pclmul,...").
std::string FormatCpuFeatureList(uint32_t features);

// SetCpuDisable hides the features in `list` (the server's --cpu_disable), in addition
// to those of the SMCRYPT_CPU_DISABLE environment variable. It must be called before
// the first use of any algorithm.
// Errors: InvalidArgument for an unknown name; FailedPrecondition when the feature set
// was already fixed by an earlier use.
absl::Status SetCpuDisable(absl::string_view list);

// CpuFeatureEnvStatus reports whether SMCRYPT_CPU_DISABLE parsed; an unknown name there
// is an InvalidArgument that a server must treat as a start-up error. (A library user
// that ignores it gets the valid names applied.)
absl::Status CpuFeatureEnvStatus();

// GetCpuFeatures returns DetectCpuFeatures() minus the disabled features. The first
// call fixes the set for the life of the process. Thread-safe.
uint32_t GetCpuFeatures();

// CpuIdentity is which CPU this is, as dispatch's CPU-specific preferences read it:
// CPUID leaf 0's vendor string and leaf 1's display family and model (Intel SDM vol. 2A,
// CPUID, "Processor Version Information"; AMD APM vol. 3, CPUID Fn0000_0001_EAX). On
// arm64 they are MIDR_EL1's (Arm ARM D19.2, read from sysfs): the vendor is the
// implementer's name ("Arm", "HiSilicon", "Phytium", "Ampere", "Apple", else
// "implementer 0x<hex>"), family the Implementer code and model the PartNum, e.g. 0x48
// and 0xd01 for Kunpeng 920. Where the identity cannot be read (qemu user mode, some
// containers, other architectures) the vendor is "" and family and model are 0.
struct CpuIdentity {
  std::string vendor;   // "GenuineIntel", "AuthenticAMD", ...
  uint32_t family = 0;  // base family, plus the extended family when the base is 0xF
  uint32_t model = 0;   // base model, plus extended model << 4 for families 6 and ≥ 0xF
  bool IsIntel() const { return vendor == "GenuineIntel"; }
  bool IsAmd() const { return vendor == "AuthenticAMD"; }
};

// GetCpuIdentity returns this CPU's identity, read once. Thread-safe.
const CpuIdentity& GetCpuIdentity();

// FormatCpuIdentity renders it as "<vendor> family <F> model <M>" (decimal), e.g.
// "AuthenticAMD family 25 model 17"; on arm64 "<vendor> implementer 0x<II> part 0x<PPP>",
// e.g. "HiSilicon implementer 0x48 part 0xd01"; "unknown" when there is no vendor.
std::string FormatCpuIdentity(const CpuIdentity& id);

// KernelChoice names the back end dispatch chose for one algorithm.
struct KernelChoice {
  std::string algorithm;  // "SM2", "SM3", "SM4"
  std::string kernel;     // "generic", "gfni_avx512", ... (docs/design.md, "Names used everywhere")
};

// ActiveKernels lists the back end in use for each SM algorithm, choosing them now if
// no algorithm has been used yet.
std::vector<KernelChoice> ActiveKernels();

}  // namespace smcrypt

#endif  // SMCRYPT_CPU_H_
