// sm4_dispatch.cc — the generic SM4 table entry, the one-time choice from this
// architecture's priority-ordered table (sm4_table_<arch>.cc), the testing override, and
// the multi-buffer entry points over the active back end.
#include <algorithm>
#include <atomic>
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"

namespace smcrypt {

extern const Sm4Kernels kSm4Generic = {
    /*name=*/"generic",
    /*required_features=*/0,
    /*parallel_blocks=*/16,
    /*encrypt_blocks=*/Sm4GenericEncryptBlocks,
    /*ctr32_encrypt_blocks=*/Sm4GenericCtr32EncryptBlocks,
    /*ctr128_encrypt_blocks=*/Sm4GenericCtr128EncryptBlocks,
    /*cbc_decrypt_blocks=*/Sm4GenericCbcDecryptBlocks,
    /*cbc_encrypt_blocks=*/Sm4GenericCbcEncryptBlocks,
    /*cbc_mac_blocks=*/Sm4GenericCbcMacBlocks,
    /*cbc_encrypt_multi=*/nullptr,
    /*cbc_mac_multi=*/nullptr,
    /*gcm_crypt_fused=*/nullptr,
    /*gcm_fused_ghash=*/nullptr,
};

namespace {

const Sm4Kernels& ChooseSm4Kernels() {
  const absl::Span<const internal::BackendChoice<Sm4Kernels>> table = Sm4DispatchTable();
  const Sm4Kernels* k = internal::FirstCapable(table.data(), table.size(), GetCpuFeatures(),
                                               GetCpuIdentity());
  return k != nullptr ? *k : kSm4Generic;
}

std::atomic<const Sm4Kernels*> g_override{nullptr};

}  // namespace

const Sm4Kernels& Sm4DispatchedKernels() {
  static const Sm4Kernels& active = ChooseSm4Kernels();
  return active;
}

const Sm4Kernels& Sm4ActiveKernels() {
  const Sm4Kernels* k = g_override.load(std::memory_order_relaxed);
  return k != nullptr ? *k : Sm4DispatchedKernels();
}

void Sm4SetKernelsForTesting(const Sm4Kernels* k) {
  g_override.store(k, std::memory_order_relaxed);
}

std::vector<const Sm4Kernels*> Sm4AllKernelsForTesting() {
  std::vector<const Sm4Kernels*> all;
  for (const auto& c : Sm4DispatchTable()) all.push_back(c.kernels);
  return all;
}

absl::Span<const internal::BackendChoice<Sm4Kernels>> Sm4DispatchTableForTesting() {
  return Sm4DispatchTable();
}

void Sm4CbcEncryptMulti(const Sm4MultiJob* jobs, size_t num_jobs) {
  const Sm4Kernels& k = Sm4ActiveKernels();
  if (k.cbc_encrypt_multi == nullptr) {
    for (size_t j = 0; j < num_jobs; ++j) {
      k.cbc_encrypt_blocks(jobs[j].rk, jobs[j].iv, jobs[j].in, jobs[j].out, jobs[j].num_blocks);
    }
    return;
  }
  for (size_t j = 0; j < num_jobs; j += kSm4MaxMultiJobs) {
    const size_t n = std::min(kSm4MaxMultiJobs, num_jobs - j);
    if (n == 1) {  // one lane: the latency-bound single-stream path is as fast
      k.cbc_encrypt_blocks(jobs[j].rk, jobs[j].iv, jobs[j].in, jobs[j].out, jobs[j].num_blocks);
    } else {
      k.cbc_encrypt_multi(jobs + j, n);
    }
  }
}

void Sm4CbcMacMulti(const Sm4MultiJob* jobs, size_t num_jobs) {
  const Sm4Kernels& k = Sm4ActiveKernels();
  if (k.cbc_mac_multi == nullptr) {
    for (size_t j = 0; j < num_jobs; ++j) {
      k.cbc_mac_blocks(jobs[j].rk, jobs[j].iv, jobs[j].in, jobs[j].num_blocks);
    }
    return;
  }
  for (size_t j = 0; j < num_jobs; j += kSm4MaxMultiJobs) {
    const size_t n = std::min(kSm4MaxMultiJobs, num_jobs - j);
    if (n == 1) {
      k.cbc_mac_blocks(jobs[j].rk, jobs[j].iv, jobs[j].in, jobs[j].num_blocks);
    } else {
      k.cbc_mac_multi(jobs + j, n);
    }
  }
}

namespace internal {
const char* Sm4ActiveKernelName() { return Sm4DispatchedKernels().name; }
}  // namespace internal

}  // namespace smcrypt
