// ct_dudect_test.cc — statistical constant-time test (dudect: Reparaz, Balasch and
// Verbauwhede, "Dude, is my code constant time?", DATE 2017) for the back ends that
// valgrind 3.19 cannot run (AVX-512, GFNI, VAES, VPCLMULQDQ, IFMA), so ct_valgrind cannot
// check them.
//
// For each target, every measurement gets its own input slot and a random class:
// "fixed" (one constant secret input: the all-zero SM4 key and block, a low-Hamming-
// weight scalar, ...) or "random" (fresh secret input). Both classes are laid out the
// same way in memory, so only the values differ. Each call is timed with RDTSC/RDTSCP
// fenced by LFENCE. Welch's t statistic between the two classes is computed on all
// measurements and on the measurements below 20 percentile thresholds (cropping, as
// dudect does, removes the long tail that interrupts and the other tenants of this
// machine add). A target fails when max |t| > 10 (dudect's threshold for a leak) after
// all its measurements. The first target is a calibration: an early-exit comparison
// that must be detected (|t| > 10), so the harness itself is shown able to fail.
//
// A pass is statistical evidence, not a proof: it bounds the leak that this many
// measurements on this CPU can see. Run it on a quiet machine:
//   build/tests/ct/ct_dudect_test                 # the back ends valgrind cannot run
//   build/tests/ct/ct_dudect_test --all           # every back end this CPU has
//   build/tests/ct/ct_dudect_test --batches=N     # N × 10,000 measurements per target
//   build/tests/ct/ct_dudect_test --sensitivity   # also time synthetic leaks of 3–192
//                                                 # cycles (what this run could see)
// ctest runs it with label `slow` (not in CI): ctest -R ct_dudect.
#include <x86intrin.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_point.h"
#include "crypto/sm3/sm3_internal.h"
#include "crypto/sm4/ghash.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

// The instructions valgrind 3.19 translates (see ct_valgrind_test.cc): a back end that
// needs only these is checked there; the others are checked here.
constexpr uint32_t kValgrindDecodes =
    kCpuAesni | kCpuPclmul | kCpuAvx | kCpuAvx2 | kCpuBmi2 | kCpuAdx;

constexpr size_t kBatch = 10000;        // measurements per batch (dudect's default)
constexpr int kPercentiles = 20;        // cropping thresholds
constexpr double kThreshold = 10.0;     // dudect: |t| > 10 is a leak
constexpr size_t kMinPerClass = 2000;   // a cropped test counts with this many per class

// Welch's t-test, online (Welford).
struct TTest {
  double n[2] = {0, 0}, mean[2] = {0, 0}, m2[2] = {0, 0};
  void Push(double x, int c) {
    n[c] += 1;
    const double d = x - mean[c];
    mean[c] += d / n[c];
    m2[c] += d * (x - mean[c]);
  }
  double T() const {
    if (n[0] < 2 || n[1] < 2) return 0;
    const double v0 = m2[0] / (n[0] - 1), v1 = m2[1] / (n[1] - 1);
    const double den = std::sqrt(v0 / n[0] + v1 / n[1]);
    return den == 0 ? 0 : (mean[0] - mean[1]) / den;
  }
};

inline uint64_t CyclesBefore() {
  _mm_lfence();
  const uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
inline uint64_t CyclesAfter() {
  unsigned aux;
  const uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  return t;
}

struct Result {
  std::string name;
  double max_t = 0;
  std::string where;  // which test gave max |t|
  size_t n_fixed = 0, n_random = 0;
  double mean_fixed = 0, mean_random = 0;
};

// Measure runs `batches` batches of kBatch measurements. `fill(slot, fixed, rng)`
// prepares a slot (not timed); `run(slot)` is timed.
template <typename Slot, typename Fill, typename Run>
Result Measure(const std::string& name, size_t batches, Fill fill, Run run) {
  std::mt19937_64 rng(0x5eed ^ std::hash<std::string>()(name));
  std::vector<Slot> slots(kBatch);
  std::vector<uint8_t> cls(kBatch);
  std::vector<uint64_t> cycles(kBatch);
  TTest raw;
  TTest cropped[kPercentiles];
  double cut[kPercentiles] = {};
  for (size_t b = 0; b <= batches; ++b) {  // batch 0: warm-up and percentiles
    for (size_t i = 0; i < kBatch; ++i) {
      cls[i] = static_cast<uint8_t>(rng() & 1);
      fill(slots[i], cls[i] == 0, rng);
    }
    for (size_t i = 0; i < kBatch; ++i) {
      const uint64_t t0 = CyclesBefore();
      run(slots[i]);
      const uint64_t t1 = CyclesAfter();
      cycles[i] = t1 - t0;
    }
    if (b == 0) {
      std::vector<uint64_t> sorted(cycles);
      std::sort(sorted.begin(), sorted.end());
      for (int p = 0; p < kPercentiles; ++p) {
        // dudect's thresholds: 1 − 0.5^(10·(p+1)/P), dense near the top.
        const double q = 1.0 - std::pow(0.5, 10.0 * (p + 1) / kPercentiles);
        cut[p] = static_cast<double>(sorted[static_cast<size_t>(q * (kBatch - 1))]);
      }
      continue;
    }
    for (size_t i = 0; i < kBatch; ++i) {
      const double x = static_cast<double>(cycles[i]);
      raw.Push(x, cls[i]);
      for (int p = 0; p < kPercentiles; ++p) {
        if (x < cut[p]) cropped[p].Push(x, cls[i]);
      }
    }
  }
  Result r;
  r.name = name;
  r.max_t = std::fabs(raw.T());
  r.where = "all";
  for (int p = 0; p < kPercentiles; ++p) {
    if (cropped[p].n[0] < kMinPerClass || cropped[p].n[1] < kMinPerClass) continue;
    const double t = std::fabs(cropped[p].T());
    if (t > r.max_t) {
      r.max_t = t;
      r.where = absl::StrCat("< ", static_cast<uint64_t>(cut[p]), " cycles");
    }
  }
  r.n_fixed = static_cast<size_t>(raw.n[0]);
  r.n_random = static_cast<size_t>(raw.n[1]);
  r.mean_fixed = raw.mean[0];
  r.mean_random = raw.mean[1];
  return r;
}

void RandomBytes(std::mt19937_64& rng, void* p, size_t n) {
  uint8_t* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(rng());
}

// Fixed class inputs: zero bytes (the lowest Hamming weight) unless stated.
void FixedOrRandom(bool fixed, std::mt19937_64& rng, void* p, size_t n) {
  if (fixed) {
    std::memset(p, 0, n);
  } else {
    RandomBytes(rng, p, n);
  }
}

void ExpandRk(bool fixed, std::mt19937_64& rng, uint32_t rk[32]) {
  uint8_t key[16];
  FixedOrRandom(fixed, rng, key, 16);
  Sm4Key k;
  (void)Sm4ExpandKey(absl::string_view(reinterpret_cast<const char*>(key), 16), &k);
  std::memcpy(rk, k.rk_enc, sizeof(k.rk_enc));
}

uint8_t g_sink[4096];

// ---- Targets ------------------------------------------------------------------------

std::vector<Result> Calibration(size_t batches) {
  // An early-exit comparison of a 64-byte secret with a reference: the fixed class
  // equals the reference (full loop), the random class differs early. Must be caught.
  struct Slot {
    uint8_t secret[64];
  };
  static uint8_t reference[64] = {};
  return {Measure<Slot>(
      "calibration: early-exit compare (must be detected)", batches,
      [](Slot& s, bool fixed, std::mt19937_64& rng) {
        FixedOrRandom(fixed, rng, s.secret, sizeof(s.secret));
      },
      [](Slot& s) {
        size_t i = 0;
        while (i < 64 && s.secret[i] == reference[i]) ++i;
        g_sink[0] = static_cast<uint8_t>(i);
        __asm__ volatile("" ::: "memory");
      })};
}

// Sensitivity (--sensitivity, informational, no verdict): synthetic leaks of `extra`
// dependent 64-bit multiplications (about 3 cycles each) in the fixed class only, to see
// how small a leak a run of this length detects on this machine at this load.
std::vector<Result> Sensitivity(size_t batches) {
  struct Slot {
    uint64_t iterations;
    uint64_t x;
  };
  std::vector<Result> out;
  for (uint64_t extra : {1, 4, 16, 64}) {
    out.push_back(Measure<Slot>(
        absl::StrCat("sensitivity: ", extra, " extra dependent multiplications (~",
                     3 * extra, " cycles)"),
        batches,
        [extra](Slot& s, bool fixed, std::mt19937_64& rng) {
          s.iterations = 64 + (fixed ? extra : 0);
          s.x = rng() | 1;
        },
        [](Slot& s) {
          uint64_t x = s.x;
          for (uint64_t i = 0; i < s.iterations; ++i) {
            x *= 0x9E3779B97F4A7C15ull;
            __asm__("" : "+r"(x));
          }
          g_sink[0] = static_cast<uint8_t>(x);
        }));
  }
  return out;
}

std::vector<Result> Sm4Targets(const Sm4Kernels& k, size_t batches) {
  std::vector<Result> out;
  const std::string p = absl::StrCat("SM4 ", k.name, " ");
  struct Slot {
    uint32_t rk[32];
    uint8_t data[16 * 8];
    uint8_t iv[16];
  };
  auto fill = [](Slot& s, bool fixed, std::mt19937_64& rng) {
    ExpandRk(fixed, rng, s.rk);
    FixedOrRandom(fixed, rng, s.data, sizeof(s.data));
    FixedOrRandom(fixed, rng, s.iv, sizeof(s.iv));
  };
  // Key and plaintext secret; 8 blocks (a wide batch and masked tails in one call).
  out.push_back(Measure<Slot>(p + "ECB 8 blocks (key, plaintext)", batches, fill,
                              [&k](Slot& s) { k.encrypt_blocks(s.rk, s.data, g_sink, 8); }));
  out.push_back(Measure<Slot>(p + "ECB 3 blocks (key, plaintext)", batches, fill,
                              [&k](Slot& s) { k.encrypt_blocks(s.rk, s.data, g_sink, 3); }));
  out.push_back(Measure<Slot>(p + "CTR-32 8 blocks (key, counter)", batches, fill,
                              [&k](Slot& s) {
                                k.ctr32_encrypt_blocks(s.rk, s.iv, s.data, g_sink, 8);
                              }));
  out.push_back(Measure<Slot>(p + "CBC encrypt 4 blocks (key, iv, plaintext)", batches, fill,
                              [&k](Slot& s) {
                                uint8_t iv[16];
                                std::memcpy(iv, s.iv, 16);
                                k.cbc_encrypt_blocks(s.rk, iv, s.data, g_sink, 4);
                              }));
  if (k.cbc_encrypt_multi != nullptr) {
    struct MultiSlot {
      uint32_t rk[16][32];
      uint8_t iv[16][16];
      uint8_t data[16][32];
    };
    out.push_back(Measure<MultiSlot>(
        p + "CBC multi-buffer 16 jobs (keys, ivs, plaintext)", batches,
        [](MultiSlot& s, bool fixed, std::mt19937_64& rng) {
          for (int j = 0; j < 16; ++j) ExpandRk(fixed, rng, s.rk[j]);
          FixedOrRandom(fixed, rng, s.iv, sizeof(s.iv));
          FixedOrRandom(fixed, rng, s.data, sizeof(s.data));
        },
        [&k](MultiSlot& s) {
          Sm4MultiJob jobs[16];
          uint8_t ivs[16][16];
          std::memcpy(ivs, s.iv, sizeof(ivs));
          for (int j = 0; j < 16; ++j) {
            jobs[j] = {s.rk[j], ivs[j], s.data[j], g_sink + 32 * j, 2};
          }
          k.cbc_encrypt_multi(jobs, 16);
        }));
  }
  if (k.gcm_crypt_fused != nullptr && k.gcm_fused_ghash != nullptr &&
      internal::HasFeatures(GetCpuFeatures(), k.gcm_fused_ghash->required_features)) {
    const internal::GhashKernels* g = k.gcm_fused_ghash;
    struct GcmSlot {
      internal::GhashKey hkey;
      uint32_t rk[32];
      uint8_t ctr[16];
      uint8_t data[64 * 16];
    };
    out.push_back(Measure<GcmSlot>(
        p + "GCM fused 64 blocks (key, H, plaintext)", batches,
        [g](GcmSlot& s, bool fixed, std::mt19937_64& rng) {
          ExpandRk(fixed, rng, s.rk);
          uint8_t h[16];
          FixedOrRandom(fixed, rng, h, 16);
          g->init(&s.hkey, h);
          FixedOrRandom(fixed, rng, s.ctr, 12);
          std::memset(s.ctr + 12, 0, 3);
          s.ctr[15] = 2;
          FixedOrRandom(fixed, rng, s.data, sizeof(s.data));
        },
        [&k](GcmSlot& s) {
          uint8_t ctr[16], y[16] = {};
          std::memcpy(ctr, s.ctr, 16);
          static uint8_t out[64 * 16];
          k.gcm_crypt_fused(s.rk, s.hkey, ctr, y, s.data, out, 64, /*encrypt=*/true);
        }));
  }
  return out;
}

std::vector<Result> GhashTargets(const internal::GhashKernels& g, size_t batches) {
  struct Slot {
    internal::GhashKey key;
    uint8_t y[16];
    uint8_t data[16 * 16];
  };
  return {Measure<Slot>(
      absl::StrCat("GHASH ", g.name, " 16 blocks (H, state, data)"), batches,
      [&g](Slot& s, bool fixed, std::mt19937_64& rng) {
        uint8_t h[16];
        FixedOrRandom(fixed, rng, h, 16);
        g.init(&s.key, h);
        FixedOrRandom(fixed, rng, s.y, sizeof(s.y));
        FixedOrRandom(fixed, rng, s.data, sizeof(s.data));
      },
      [&g](Slot& s) {
        uint8_t y[16];
        std::memcpy(y, s.y, 16);
        g.update(y, s.key, s.data, 16);
      })};
}

std::vector<Result> Sm3Targets(const Sm3Kernels& k, size_t batches) {
  struct Slot {
    uint32_t state[16][8];
    uint8_t data[16][128];
  };
  // The chaining values stand for HMAC key midstates (secret); the data is secret too.
  auto fill = [](Slot& s, bool fixed, std::mt19937_64& rng) {
    FixedOrRandom(fixed, rng, s.state, sizeof(s.state));
    FixedOrRandom(fixed, rng, s.data, sizeof(s.data));
  };
  std::vector<Result> out;
  if (k.hash_jobs != nullptr) {
    out.push_back(Measure<Slot>(
        absl::StrCat("SM3 ", k.name, " hash_jobs 16 × 128 bytes (midstate, data)"), batches,
        fill, [&k](Slot& s) {
          Sm3Job jobs[16];
          for (int j = 0; j < 16; ++j) {
            std::memcpy(jobs[j].state, s.state[j], 32);
            jobs[j].data = s.data[j];
            jobs[j].len = 128;
            jobs[j].prefix_len = 64;
            jobs[j].out = g_sink + 32 * j;
          }
          k.hash_jobs(jobs, 16);
        }));
  } else {
    out.push_back(Measure<Slot>(
        absl::StrCat("SM3 ", k.name, " compress 2 blocks (state, data)"), batches, fill,
        [&k](Slot& s) {
          uint32_t st[8];
          std::memcpy(st, s.state[0], 32);
          k.compress_blocks(st, s.data[0], 2);
        }));
  }
  return out;
}

std::vector<Result> Sm2Targets(const internal::Sm2Kernels& k, size_t batches) {
  // Scalar secret: fixed = 1 (the lowest Hamming weight; Booth digits mostly 0) vs
  // random 256-bit scalars; fewer measurements (a multiplication is ~10^5 cycles).
  struct Slot {
    uint64_t scalar[4];
  };
  auto fill = [](Slot& s, bool fixed, std::mt19937_64& rng) {
    if (fixed) {
      s.scalar[0] = 1;
      s.scalar[1] = s.scalar[2] = s.scalar[3] = 0;
    } else {
      RandomBytes(rng, s.scalar, sizeof(s.scalar));
      s.scalar[3] &= 0x7fffffffffffffffull;
    }
  };
  const size_t n = std::max<size_t>(1, batches / 5);
  std::vector<Result> out;
  const internal::Sm2CombTable& base = internal::Sm2BaseCombTable();
  out.push_back(Measure<Slot>(absl::StrCat("SM2 ", k.name, " k·G comb (scalar)"), n, fill,
                              [&k, &base](Slot& s) {
                                internal::Sm2Jacobian r;
                                k.mul_comb(&r, base, s.scalar);
                                g_sink[0] = static_cast<uint8_t>(r.X[0]);
                              }));
  out.push_back(Measure<Slot>(absl::StrCat("SM2 ", k.name, " d·P windows (scalar)"), n, fill,
                              [&k](Slot& s) {
                                internal::Sm2Jacobian r;
                                k.mul_point(&r, internal::Sm2Generator(), s.scalar);
                                g_sink[0] = static_cast<uint8_t>(r.X[0]);
                              }));
  out.push_back(Measure<Slot>(absl::StrCat("SM2 ", k.name, " field inversion (value)"), n,
                              fill, [&k](Slot& s) {
                                uint64_t r[4];
                                k.fe_inv(r, s.scalar);
                                g_sink[0] = static_cast<uint8_t>(r[0]);
                              }));
  return out;
}

// The 8-lane IFMA batch back end (sm2_batch.h): the k·G kernel alone, and whole batch
// signatures (d and k secret; the digests public) through Sm2SignDigestBatchCore, which
// adds the batch inversion and the scalar arithmetic around the lanes.
std::vector<Result> Sm2IfmaTargets(size_t batches) {
  const size_t n = std::max<size_t>(1, batches / 5);
  std::vector<Result> out;
  struct MulSlot {
    uint64_t k[internal::kSm2IfmaLanes][4];
  };
  out.push_back(Measure<MulSlot>(
      "SM2 ifma_avx512 k·G 8 lanes (scalars)", n,
      [](MulSlot& s, bool fixed, std::mt19937_64& rng) {
        for (auto& k : s.k) {
          if (fixed) {
            k[0] = 1;
            k[1] = k[2] = k[3] = 0;
          } else {
            RandomBytes(rng, k, sizeof(k));
            k[3] &= 0x7fffffffffffffffull;  // below n
            k[0] |= 1;                        // not zero
          }
        }
      },
      [](MulSlot& s) {
        internal::Sm2Jacobian r[internal::kSm2IfmaLanes];
        internal::Sm2IfmaMulBase8(r, s.k);
        g_sink[0] = static_cast<uint8_t>(r[0].X[0]);
      }));
  // k·P over a public key's comb table (ephemeral Diffie–Hellman: HPKE Encap), same
  // scalars as above; the key and its table are public and shared by both classes.
  static const std::unique_ptr<internal::Sm2PointTable> p_table = [] {
    const Sm2PrivateKey key = *Sm2PrivateKey::FromScalar(std::string(31, '\0') + '\x07');
    internal::Sm2Affine p;
    internal::Sm2PublicKeyToAffine(internal::Sm2ActiveKernels(), key.public_key(), &p);
    return internal::Sm2PointTable::Build(internal::Sm2ActiveKernels(), p);
  }();
  out.push_back(Measure<MulSlot>(
      "SM2 ifma_avx512 k·P 8 lanes over a key's table (scalars)", n,
      [](MulSlot& s, bool fixed, std::mt19937_64& rng) {
        for (auto& k : s.k) {
          if (fixed) {
            k[0] = 1;
            k[1] = k[2] = k[3] = 0;
          } else {
            RandomBytes(rng, k, sizeof(k));
            k[3] &= 0x7fffffffffffffffull;  // below n
            k[0] |= 1;                        // not zero
          }
        }
      },
      [](MulSlot& s) {
        internal::Sm2Jacobian r[internal::kSm2IfmaLanes];
        internal::Sm2IfmaMulPointTable8(r, s.k, p_table->points52());
        g_sink[0] = static_cast<uint8_t>(r[0].X[0]);
      }));
  // Every slot owns its keys (the fixed class holds copies of one key), so both classes
  // touch the same amount of memory.
  const auto fixed_key = *Sm2PrivateKey::FromScalar(std::string(31, '\0') + '\x01');  // d = 1
  struct SignSlot {
    std::vector<Sm2PrivateKey> keys;
    uint64_t k[internal::kSm2IfmaLanes][4];
  };
  static const std::string digest(32, '\x5a');
  out.push_back(Measure<SignSlot>(
      "SM2 ifma_avx512 batch sign 8 items (d, k)", n,
      [&fixed_key](SignSlot& s, bool fixed, std::mt19937_64& rng) {
        s.keys.clear();
        for (int i = 0; i < internal::kSm2IfmaLanes; ++i) {
          if (fixed) {
            s.keys.push_back(fixed_key);
          } else {
            std::string d(32, '\0');
            RandomBytes(rng, &d[0], 32);
            d[0] &= 0x7f;
            d[31] |= 1;
            s.keys.push_back(*Sm2PrivateKey::FromScalar(d));
          }
          uint64_t* k = s.k[i];
          if (fixed) {
            k[0] = 1;
            k[1] = k[2] = k[3] = 0;
          } else {
            RandomBytes(rng, k, 32);
            k[3] &= 0x7fffffffffffffffull;
            k[0] |= 1;
          }
        }
      },
      [](SignSlot& s) {
        const Sm2PrivateKey* keys[internal::kSm2IfmaLanes];
        absl::string_view digests[internal::kSm2IfmaLanes];
        for (int i = 0; i < internal::kSm2IfmaLanes; ++i) {
          keys[i] = &s.keys[i];
          digests[i] = digest;
        }
        int next = 0;
        auto next_k = [&s, &next](uint64_t k[4]) {
          std::memcpy(k, s.k[next++ % internal::kSm2IfmaLanes], 32);
          return absl::OkStatus();
        };
        absl::StatusOr<std::string> sigs[internal::kSm2IfmaLanes];
        internal::Sm2SignDigestBatchCore(keys, digests, next_k, absl::MakeSpan(sigs));
        g_sink[0] = static_cast<uint8_t>(sigs[0].ok());
      }));
  return out;
}

}  // namespace
}  // namespace smcrypt

int main(int argc, char** argv) {
  using namespace smcrypt;
  bool all = false, sensitivity = false;
  size_t batches = 20;  // 200,000 measurements per symmetric target
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--all") {
      all = true;
    } else if (a == "--sensitivity") {
      sensitivity = true;
    } else if (a.rfind("--batches=", 0) == 0) {
      batches = std::max<long>(1, std::atol(a.c_str() + 10));
    } else {
      std::fprintf(stderr, "usage: %s [--all] [--sensitivity] [--batches=N]\n", argv[0]);
      return 2;
    }
  }
  const uint32_t cpu = GetCpuFeatures();
  std::printf("ct_dudect: CPU features %s; %zu × %zu measurements per target (SM2: %zu); "
              "fail if max |t| > %.0f\n",
              FormatCpuFeatureList(cpu).c_str(), batches, kBatch,
              std::max<size_t>(1, batches / 5) * kBatch, kThreshold);
  std::vector<std::string> covered, skipped, valgrind_side;
  // wanted: the CPU has the back end, and valgrind cannot run it (or --all).
  auto wanted = [&](const std::string& alg, const char* name, uint32_t req) {
    const std::string label = absl::StrCat(alg, " ", name);
    if (!internal::HasFeatures(cpu, req)) {
      skipped.push_back(absl::StrCat(label, " (CPU lacks ",
                                     FormatCpuFeatureList(req & ~cpu), ")"));
      return false;
    }
    if ((req & ~kValgrindDecodes) == 0 && !all) {
      valgrind_side.push_back(label);
      return false;
    }
    covered.push_back(label);
    return true;
  };
  std::vector<Result> results = Calibration(batches);
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) {
    if (!wanted("SM4", k->name, k->required_features)) continue;
    for (auto& r : Sm4Targets(*k, batches)) results.push_back(r);
  }
  for (const internal::GhashKernels* g : internal::GhashAllKernelsForTesting()) {
    if (!wanted("GHASH", g->name, g->required_features)) continue;
    for (auto& r : GhashTargets(*g, batches)) results.push_back(r);
  }
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (!wanted("SM3", k->name, k->required_features)) continue;
    for (auto& r : Sm3Targets(*k, batches)) results.push_back(r);
  }
  size_t n2 = 0;
  const internal::Sm2Kernels* const* sm2 = internal::Sm2AllKernelsForTesting(&n2);
  for (size_t i = 0; i < n2; ++i) {
    if (!wanted("SM2", sm2[i]->name, sm2[i]->required_features)) continue;
    for (auto& r : Sm2Targets(*sm2[i], batches)) results.push_back(r);
  }
  if (sensitivity) {
    for (const Result& r : Sensitivity(batches)) {
      std::printf("  info max|t| = %7.2f (%s)  fixed %.0f cycles, random %.0f  %s\n", r.max_t,
                  r.where.c_str(), r.mean_fixed, r.mean_random, r.name.c_str());
    }
  }
  // The SM2 8-lane IFMA batch back end (outside the kernel table).
  if (wanted("SM2", "ifma_avx512", kCpuAvx512 | kCpuIfma) && internal::Sm2IfmaSupported()) {
    for (auto& r : Sm2IfmaTargets(batches)) results.push_back(r);
  }
  int failures = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    const bool leak = r.max_t > kThreshold;
    const bool ok = (i == 0) ? leak : !leak;  // the calibration must be detected
    if (!ok) ++failures;
    std::printf("  %-4s max|t| = %7.2f (%s)  fixed %zu × %.0f cycles, random %zu × %.0f  %s\n",
                ok ? "ok" : "FAIL", r.max_t, r.where.c_str(), r.n_fixed, r.mean_fixed,
                r.n_random, r.mean_random, r.name.c_str());
  }
  std::printf("ct_dudect: covered by dudect: %s\n",
              covered.empty() ? "-" : absl::StrJoin(covered, ", ").c_str());
  std::printf("ct_dudect: left to ct_valgrind (rerun with --all to time them too): %s\n",
              valgrind_side.empty() ? "-" : absl::StrJoin(valgrind_side, ", ").c_str());
  std::printf("ct_dudect: not on this CPU: %s\n",
              skipped.empty() ? "-" : absl::StrJoin(skipped, ", ").c_str());
  if (failures != 0) {
    std::printf("ct_dudect: %d target(s) FAILED\n", failures);
    return 1;
  }
  std::printf("ct_dudect: no leak detected (|t| <= %.0f); calibration leak detected\n",
              kThreshold);
  return 0;
}
