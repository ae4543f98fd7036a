// CPU feature detection, the one place for every architecture.
//
// x86-64, after BoringSSL's crypto/cpu_intel.cc: Intel SDM vol. 1 §13.2 / §15.2: before trusting AVX, AVX2 or AVX-512 CPUID bits, check
// CPUID.1:ECX.OSXSAVE[bit 27] and read XCR0 with XGETBV; YMM state needs XCR0[2:1] = 11b
// and ZMM state needs XCR0[7:5] = 111b as well.
#include <atomic>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "smcrypt/cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
// arm64: the kernel reports the features in the auxiliary vector (Linux
// Documentation/arch/arm64/elf_hwcaps.rst), which is what user space may rely on: the ID
// registers themselves are only readable through the kernel's emulation.
#include <asm/hwcap.h>
#include <sys/auxv.h>

#include <fstream>
#endif

namespace smcrypt {
namespace {

constexpr const char* kFeatureNames[kNumCpuFeatures] = {
    "aesni", "pclmul", "avx",  "avx2", "bmi2", "adx",
    "avx512", "vaes",  "vpclmulqdq", "gfni", "ifma", "sha",
    "asimd", "pmull", "sha2", "sm3", "sm4", "sve"};

#if defined(__x86_64__)
uint64_t ReadXcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (uint64_t{edx} << 32) | eax;
}

uint32_t Detect() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return 0;
  const unsigned max_leaf = a;
  unsigned ecx1 = 0, edx1 = 0;
  __cpuid(1, a, b, ecx1, edx1);
  unsigned ebx7 = 0, ecx7 = 0, edx7 = 0;
  if (max_leaf >= 7) __cpuid_count(7, 0, a, ebx7, ecx7, edx7);

  uint32_t f = 0;
  if (ecx1 & (1u << 25)) f |= kCpuAesni;
  if (ecx1 & (1u << 1)) f |= kCpuPclmul;
  // BMI1 (leaf 7 EBX bit 3) and BMI2 (bit 8) together; ADX is bit 19; SHA is bit 29.
  if ((ebx7 & (1u << 3)) && (ebx7 & (1u << 8))) f |= kCpuBmi2;
  if (ebx7 & (1u << 19)) f |= kCpuAdx;
  if (ebx7 & (1u << 29)) f |= kCpuSha;
  const bool gfni = ecx7 & (1u << 8);

  const bool osxsave = ecx1 & (1u << 27);
  const uint64_t xcr0 = osxsave ? ReadXcr0() : 0;
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = ymm_state && (xcr0 & 0xe0) == 0xe0;
  // GFNI's SSE form needs no OS state; smcrypt only uses its VEX/EVEX forms.
  if (ymm_state && (ecx1 & (1u << 28))) {
    f |= kCpuAvx;
    if (ebx7 & (1u << 5)) f |= kCpuAvx2;
    if (ecx7 & (1u << 9)) f |= kCpuVaes;
    if (ecx7 & (1u << 10)) f |= kCpuVpclmulqdq;
    if (gfni) f |= kCpuGfni;
  }
  // AVX-512 F (EBX bit 16), DQ (17), BW (30), VL (31); IFMA is EBX bit 21.
  constexpr unsigned kAvx512Bits = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31);
  if (zmm_state && (f & kCpuAvx2) && (ebx7 & kAvx512Bits) == kAvx512Bits) {
    f |= kCpuAvx512;
    if (ebx7 & (1u << 21)) f |= kCpuIfma;
  }
  return f;
}

CpuIdentity DetectIdentity() {
  CpuIdentity id;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return id;
  char vendor[13];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  vendor[12] = '\0';
  id.vendor = vendor;
  __cpuid(1, a, b, c, d);
  const uint32_t base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
  id.family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
  id.model = (base_family == 0x6 || base_family == 0xf) ? (((a >> 16) & 0xf) << 4) | base_model
                                                         : base_model;
  return id;
}
#elif defined(__aarch64__)
uint32_t Detect() {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  uint32_t f = 0;
  if (hwcap & HWCAP_ASIMD) f |= kCpuAsimd;
  if (hwcap & HWCAP_PMULL) f |= kCpuPmull;
  if (hwcap & HWCAP_SHA2) f |= kCpuSha2;
  if (hwcap & HWCAP_SM3) f |= kCpuSm3;
  if (hwcap & HWCAP_SM4) f |= kCpuSm4;
  if (hwcap & HWCAP_SVE) f |= kCpuSve;
  return f;
}

// Arm ARM (DDI 0487) D19.2, MIDR_EL1: Implementer [31:24], PartNum [15:4]. The kernel
// exports it per CPU in sysfs; without it (containers, qemu user mode) the identity is
// unknown.
CpuIdentity DetectIdentity() {
  CpuIdentity id;
  std::ifstream f("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
  std::string text;
  if (!(f >> text)) return id;
  uint64_t midr = 0;
  if (!absl::SimpleHexAtoi(text, &midr)) return id;
  const uint32_t implementer = static_cast<uint32_t>(midr >> 24) & 0xff;
  id.family = implementer;
  id.model = static_cast<uint32_t>(midr >> 4) & 0xfff;
  switch (implementer) {
    case 0x41: id.vendor = "Arm"; break;
    case 0x48: id.vendor = "HiSilicon"; break;
    case 0x61: id.vendor = "Apple"; break;
    case 0x70: id.vendor = "Phytium"; break;
    case 0xc0: id.vendor = "Ampere"; break;
    default: id.vendor = absl::StrCat("implementer 0x", absl::Hex(implementer)); break;
  }
  return id;
}
#else
uint32_t Detect() { return 0; }
CpuIdentity DetectIdentity() { return CpuIdentity(); }
#endif

struct MaskState {
  std::mutex mu;
  uint32_t extra_disabled = 0;  // from SetCpuDisable
  bool fixed = false;
};
MaskState& State() {
  static MaskState* s = new MaskState;
  return *s;
}

absl::StatusOr<uint32_t>& EnvMask() {
  static auto* m = new absl::StatusOr<uint32_t>([] {
    const char* env = std::getenv("SMCRYPT_CPU_DISABLE");
    return ParseCpuFeatureList(env ? env : "");
  }());
  return *m;
}

// Valid names only, so a bad env var still hides what it can name correctly.
uint32_t EnvMaskBestEffort() {
  const char* env = std::getenv("SMCRYPT_CPU_DISABLE");
  if (env == nullptr) return 0;
  uint32_t mask = 0;
  for (absl::string_view item : absl::StrSplit(env, ',')) {
    auto bits = ParseCpuFeatureList(item);
    if (bits.ok()) mask |= *bits;
  }
  return mask;
}

}  // namespace

absl::string_view CpuFeatureName(uint32_t f) {
  for (int i = 0; i < kNumCpuFeatures; ++i) {
    if (f == (1u << i)) return kFeatureNames[i];
  }
  return "";
}

const CpuIdentity& GetCpuIdentity() {
  static const CpuIdentity* const id = new CpuIdentity(DetectIdentity());
  return *id;
}

std::string FormatCpuIdentity(const CpuIdentity& id) {
  if (id.vendor.empty()) return "unknown";
#if defined(__aarch64__)
  return absl::StrCat(id.vendor, " implementer 0x", absl::Hex(id.family, absl::kZeroPad2),
                      " part 0x", absl::Hex(id.model, absl::kZeroPad3));
#else
  return absl::StrCat(id.vendor, " family ", id.family, " model ", id.model);
#endif
}

uint32_t DetectCpuFeatures() {
  static const uint32_t features = Detect();
  return features;
}

absl::StatusOr<uint32_t> ParseCpuFeatureList(absl::string_view list) {
  uint32_t mask = 0;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    std::string name = absl::AsciiStrToLower(absl::StripAsciiWhitespace(item));
    if (name.empty()) continue;
    bool found = false;
    for (int i = 0; i < kNumCpuFeatures; ++i) {
      if (name == kFeatureNames[i]) {
        mask |= 1u << i;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown CPU feature \"", name, "\"; valid names: ",
          absl::StrJoin(kFeatureNames, kFeatureNames + kNumCpuFeatures, ",")));
    }
  }
  return mask;
}

std::string FormatCpuFeatureList(uint32_t features) {
  std::string out;
  for (int i = 0; i < kNumCpuFeatures; ++i) {
    if (features & (1u << i)) {
      if (!out.empty()) out += ',';
      out += kFeatureNames[i];
    }
  }
  return out;
}

absl::Status CpuFeatureEnvStatus() { return EnvMask().status(); }

absl::Status SetCpuDisable(absl::string_view list) {
  auto bits = ParseCpuFeatureList(list);
  if (!bits.ok()) return bits.status();
  MaskState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.fixed) {
    return absl::FailedPreconditionError(
        "SetCpuDisable called after the CPU feature set was fixed by a first use");
  }
  s.extra_disabled |= *bits;
  return absl::OkStatus();
}

uint32_t GetCpuFeatures() {
  static const uint32_t features = [] {
    MaskState& s = State();
    std::lock_guard<std::mutex> lock(s.mu);
    s.fixed = true;
    return DetectCpuFeatures() & ~(EnvMaskBestEffort() | s.extra_disabled);
  }();
  return features;
}

}  // namespace smcrypt
