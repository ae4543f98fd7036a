// kernel_insns: runs one arm64 back end's entry once over a given number of blocks, so
// that count_instructions.py can count the instructions it executes under qemu
// (-singlestep -d exec,nochain) at two sizes and report the difference per block.
//
//   kernel_insns sm4 <neon|ce|generic> <ecb|ctr32|cbc_dec|cbc_enc> <blocks>
//   kernel_insns ghash <pmull|generic> update <blocks>
//   kernel_insns sm3 <ce|generic> compress <blocks>
//   kernel_insns sm3 mb4_neon batch <blocks>  (one message per lane, <blocks>/lanes blocks
//                                             each, plus one padding block each)
//   kernel_insns sm2 <generic> <sign|verify> <operations>
//   kernel_insns text-range         (prints the program's own code range, for qemu -dfilter)
//
// <count> is 0–65,536. Exit 0 after the run; 2 on a usage error or an unknown back end; 3
// when this CPU lacks the back end's features (it would die of SIGILL).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "crypto/sm3/sm3_internal.h"
#include "crypto/sm4/ghash.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm2.h"

// The program's code, from the GNU linker's default script.
extern "C" const char __executable_start[];
extern "C" const char etext[];

namespace smcrypt {
namespace {

int Usage() {
  std::fprintf(stderr, "usage: kernel_insns <sm4|ghash|sm3|sm2> <kernel> <op> <count 0-65536> | text-range\n");
  return 2;
}

template <typename K>
const K* Find(const std::vector<const K*>& all, const std::string& name) {
  for (const K* k : all) {
    if (name == k->name) return k;
  }
  return nullptr;
}

// Lacks reports (and returns true) when this CPU does not have `required`.
bool Lacks(const char* name, uint32_t required) {
  const uint32_t missing = required & ~GetCpuFeatures();
  if (missing == 0) return false;
  std::fprintf(stderr, "kernel_insns: back end %s needs CPU features %s\n", name,
               FormatCpuFeatureList(missing).c_str());
  return true;
}

int Run(const std::string& alg, const std::string& kernel, const std::string& op, size_t n) {
  std::vector<uint8_t> in(64 * n + 64, 0x5a), out(in.size());
  if (alg == "sm4") {
    const Sm4Kernels* k = Find(Sm4AllKernelsForTesting(), kernel);
    if (k == nullptr) return Usage();
    if (Lacks(k->name, k->required_features)) return 3;
    uint32_t rk[32];
    for (int i = 0; i < 32; ++i) rk[i] = 0x01234567u * (i + 1);
    uint8_t iv[16] = {1, 2, 3};
    if (op == "ecb") {
      k->encrypt_blocks(rk, in.data(), out.data(), n);
    } else if (op == "ctr32") {
      k->ctr32_encrypt_blocks(rk, iv, in.data(), out.data(), n);
    } else if (op == "cbc_dec") {
      k->cbc_decrypt_blocks(rk, iv, in.data(), out.data(), n);
    } else if (op == "cbc_enc") {
      k->cbc_encrypt_blocks(rk, iv, in.data(), out.data(), n);
    } else {
      return Usage();
    }
  } else if (alg == "ghash") {
    const internal::GhashKernels* k = nullptr;
    for (const internal::GhashKernels* g : internal::GhashAllKernelsForTesting()) {
      if (kernel == g->name) k = g;
    }
    if (k == nullptr || op != "update") return Usage();
    if (Lacks(k->name, k->required_features)) return 3;
    internal::GhashKey key;
    const uint8_t h[16] = {0x66, 0xe9, 0x4b, 0xd4};
    k->init(&key, h);
    uint8_t y[16] = {};
    k->update(y, key, in.data(), n);
  } else if (alg == "sm3") {
    const Sm3Kernels* k = Find(Sm3AllKernelsForTesting(), kernel);
    if (k == nullptr) return Usage();
    if (Lacks(k->name, k->required_features)) return 3;
    if (op == "compress") {
      uint32_t state[8] = {1, 2, 3, 4, 5, 6, 7, 8};
      k->compress_blocks(state, in.data(), n);
    } else if (op == "batch" && k->lanes > 0 && n % k->lanes == 0) {
      const size_t len = 64 * (n / k->lanes);
      std::vector<absl::string_view> messages;
      for (size_t i = 0; i < k->lanes; ++i) {
        messages.emplace_back(reinterpret_cast<const char*>(in.data()), len);
      }
      out.resize(32 * k->lanes);
      k->batch(messages.data(), messages.size(), out.data());
    } else {
      return Usage();
    }
  } else if (alg == "sm2") {
    if (kernel != "generic") return Usage();
    // The digest-level operations (GB/T 32918.2 §6.1 A3–A7, §7.1 B3–B7): the SM2 field
    // and point arithmetic, without Z and the SM3 of the message.
    const Sm2PrivateKey key = *Sm2PrivateKey::Generate();
    const std::string e(32, '\x42');
    std::string sig = *Sm2SignDigest(key, e);
    for (size_t i = 0; i < n; ++i) {
      if (op == "sign") {
        sig = *Sm2SignDigest(key, e);
      } else if (op == "verify") {
        if (!Sm2VerifyDigest(key.public_key(), e, sig).ok()) return 1;
      } else {
        return Usage();
      }
    }
  } else {
    return Usage();
  }
  return out[0] == 0x42 ? 3 : 0;  // keeps the outputs live
}

}  // namespace
}  // namespace smcrypt

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "text-range") == 0) {
    std::printf("%p %p\n", static_cast<const void*>(__executable_start),
                static_cast<const void*>(etext));
    return 0;
  }
  size_t n = 0;
  if (argc != 5 || !absl::SimpleAtoi(argv[4], &n) || n > 65536) return smcrypt::Usage();
  return smcrypt::Run(argv[1], argv[2], argv[3], n);
}
