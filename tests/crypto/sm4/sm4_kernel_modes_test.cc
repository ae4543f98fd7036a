// sm4_kernel_modes_test.cc — every SM4 back end this CPU supports, through the public
// mode API (Sm4SetKernelsForTesting selects it), against OpenSSL 3 (SM4-ECB/CBC/CTR)
// and Botan 2 (SM4-GCM/CCM) for every length 0–4,096 bytes and random larger ones; the
// back ends' CTR-128, CBC and CBC-MAC entries against generic's on misaligned and
// in-place buffers, split across calls, and across counter carries; and every GHASH
// back end through SM4-GCM. Back ends this CPU lacks are skipped with the features named.
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <functional>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "crypto/cpu/backends.h"
#include "crypto/sm4/ghash.h"
#include "crypto/sm4/sm4_internal.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/sm4.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_util.h"

#if defined(SMCRYPT_HAVE_BOTAN)
#include <botan/aead.h>
#include <botan/exceptn.h>
#endif

namespace smcrypt {
namespace {

using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::SweepMaxLength;
using ::smcrypt::testing::TestSeed;

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

const Sm4Kernels& Generic() {
  const auto all = Sm4AllKernelsForTesting();
  return *all.back();
}

uint64_t PrintSeed(uint64_t salt) {
  const uint64_t seed = TestSeed();
  std::printf("%s: seed %llu (set SMCRYPT_TEST_SEED to replay)\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(),
              static_cast<unsigned long long>(seed));
  return seed + salt;
}

// OpenSslCrypt runs OpenSSL's SM4-ECB/CBC/CTR (PKCS#7 when `pad`).
std::string OpenSslCrypt(const EVP_CIPHER* c, const std::string& key, const std::string& iv,
                         bool pad, const std::string& in, bool encrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::string out(in.size() + 32, '\0');
  int len1 = 0, len2 = 0;
  bool ok = EVP_CipherInit_ex(ctx, c, nullptr, U8(key), iv.empty() ? nullptr : U8(iv),
                              encrypt ? 1 : 0) == 1;
  EVP_CIPHER_CTX_set_padding(ctx, pad ? 1 : 0);
  ok = ok && EVP_CipherUpdate(ctx, reinterpret_cast<uint8_t*>(out.data()), &len1, U8(in),
                              static_cast<int>(in.size())) == 1;
  ok = ok && EVP_CipherFinal_ex(ctx, reinterpret_cast<uint8_t*>(out.data()) + len1, &len2) == 1;
  EVP_CIPHER_CTX_free(ctx);
  EXPECT_TRUE(ok) << "OpenSSL rejected the input";
  out.resize(ok ? len1 + len2 : 0);
  return out;
}

// RefMul multiplies two GCM field elements bit by bit (SP 800-38D §6.3, Algorithm 1).
std::string RefMul(const std::string& x, const std::string& y) {
  uint8_t z[16] = {}, v[16];
  std::memcpy(v, y.data(), 16);
  for (int i = 0; i < 128; ++i) {
    if ((static_cast<uint8_t>(x[i / 8]) >> (7 - i % 8)) & 1) {
      for (int j = 0; j < 16; ++j) z[j] ^= v[j];
    }
    const bool lsb = v[15] & 1;
    for (int j = 15; j > 0; --j) v[j] = static_cast<uint8_t>((v[j] >> 1) | (v[j - 1] << 7));
    v[0] >>= 1;
    if (lsb) v[0] ^= 0xe1;
  }
  return std::string(reinterpret_cast<char*>(z), 16);
}

// ReferenceGcmSeal is SP 800-38D §7.1 GCM-AE written from the text, on OpenSSL's SM4-ECB
// (the block cipher) and RefMul (GHASH): an oracle independent of smcrypt's SM4, CTR and
// GHASH code, where no second library has SM4-GCM (OpenSSL 3.0 has none; Botan is not
// installed in every build, e.g. the arm64 cross build).
std::string ReferenceGcmSeal(const std::string& key, const std::string& nonce,
                             const std::string& pt, const std::string& aad) {
  auto block = [&](const std::string& in) {
    return OpenSslCrypt(EVP_sm4_ecb(), key, "", false, in, true);
  };
  const std::string h = block(std::string(16, '\0'));
  auto ghash_update = [&](std::string& y, const std::string& data) {
    for (size_t i = 0; i < data.size(); i += 16) {
      std::string b = data.substr(i, 16);
      b.resize(16, '\0');
      for (int j = 0; j < 16; ++j) y[j] ^= b[j];
      y = RefMul(y, h);
    }
  };
  auto be64 = [](uint64_t v) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (56 - 8 * i));
    return s;
  };
  std::string j0;
  if (nonce.size() == 12) {
    j0 = nonce + std::string("\0\0\0\1", 4);
  } else {
    j0 = std::string(16, '\0');
    ghash_update(j0, nonce);
    ghash_update(j0, be64(0) + be64(8 * uint64_t{nonce.size()}));
  }
  auto inc32 = [](std::string cb) {
    for (int i = 15; i >= 12; --i) {
      if (++reinterpret_cast<uint8_t&>(cb[i]) != 0) break;
    }
    return cb;
  };
  std::string ct(pt.size(), '\0'), cb = j0;
  for (size_t i = 0; i < pt.size(); i += 16) {
    cb = inc32(cb);
    const std::string ks = block(cb);
    for (size_t j = i; j < std::min(pt.size(), i + 16); ++j) ct[j] = pt[j] ^ ks[j - i];
  }
  std::string s(16, '\0');
  ghash_update(s, aad);
  ghash_update(s, ct);
  ghash_update(s, be64(8 * uint64_t{aad.size()}) + be64(8 * uint64_t{pt.size()}));
  const std::string ej0 = block(j0);
  for (int j = 0; j < 16; ++j) s[j] ^= ej0[j];
  return ct + s;
}

#if defined(SMCRYPT_HAVE_BOTAN)
std::string BotanSeal(const std::string& spec, const std::string& key, const std::string& nonce,
                      const std::string& pt, const std::string& aad) {
  auto mode = Botan::AEAD_Mode::create_or_throw(spec, Botan::ENCRYPTION);
  mode->set_key(U8(key), key.size());
  mode->set_associated_data(U8(aad), aad.size());
  mode->start(U8(nonce), nonce.size());
  Botan::secure_vector<uint8_t> buf(pt.begin(), pt.end());
  mode->finish(buf);
  return std::string(buf.begin(), buf.end());
}
#endif

// --- Fixture: one back end, made active for the public API ----------------------------

class Sm4KernelModesTest : public ::testing::TestWithParam<const Sm4Kernels*> {
 protected:
  void SetUp() override {
    const uint32_t missing = GetParam()->required_features & ~GetCpuFeatures();
    if (missing != 0) {
      GTEST_SKIP() << "back end " << GetParam()->name << " needs CPU features "
                   << FormatCpuFeatureList(missing) << " that this machine lacks (or are masked)";
    }
    Sm4SetKernelsForTesting(GetParam());
  }
  void TearDown() override { Sm4SetKernelsForTesting(nullptr); }
  const Sm4Kernels& K() const { return *GetParam(); }
};

TEST_P(Sm4KernelModesTest, OverrideIsActiveAndDispatchedNameUnchanged) {
  EXPECT_STREQ(Sm4ActiveKernels().name, K().name);
  EXPECT_STREQ(internal::Sm4ActiveKernelName(), Sm4DispatchedKernels().name);
  Sm4SetKernelsForTesting(nullptr);
  EXPECT_STREQ(Sm4ActiveKernels().name, Sm4DispatchedKernels().name);
}

// Runs `fn(in, out)` on a copy of `input` placed at `in_off`, writing at `out_off` (in
// place when out_off < 0), and returns the output.
template <typename Fn>
std::string RunAt(Fn fn, const std::string& input, size_t in_off, int out_off) {
  std::vector<uint8_t> a(input.size() + 32), b(input.size() + 32);
  if (!input.empty()) std::memcpy(a.data() + in_off, input.data(), input.size());
  uint8_t* out = out_off < 0 ? a.data() + in_off : b.data() + out_off;
  fn(a.data() + in_off, out);
  return std::string(reinterpret_cast<char*>(out), input.size());
}

TEST_P(Sm4KernelModesTest, Ctr128MatchesGenericAcrossEveryCarry) {
  std::mt19937_64 rng(PrintSeed(11));
  const size_t max_blocks = 2 * K().parallel_blocks + 5;
  // Low bytes of the counter: no carry, and carries out of 32, 64, 96 and 128 bits.
  const char* kTails[] = {"", "\xff\xff\xff\xf8", "\xff\xff\xff\xff\xff\xff\xff\xf0",
                          "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xe9",
                          "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfd"};
  for (size_t n = 0; n <= max_blocks; ++n) {
    Sm4Key k;
    ASSERT_OK(Sm4ExpandKey(RandomBytes(rng, 16), &k));
    std::string cb = RandomBytes(rng, 16);
    const std::string tail = kTails[n % 5];
    std::memcpy(cb.data() + 16 - tail.size(), tail.data(), tail.size());
    const std::string in = RandomBytes(rng, 16 * n);
    const std::string want = RunAt(
        [&](const uint8_t* i, uint8_t* o) { Generic().ctr128_encrypt_blocks(k.rk_enc, U8(cb), i, o, n); },
        in, 0, 0);
    for (size_t in_off : {0, 1, 7, 15}) {
      for (int out_off : {-1, 0, 3}) {
        const std::string got = RunAt(
            [&](const uint8_t* i, uint8_t* o) { K().ctr128_encrypt_blocks(k.rk_enc, U8(cb), i, o, n); },
            in, in_off, out_off);
        ASSERT_EQ(BytesToHex(got), BytesToHex(want)) << "blocks " << n << " offsets " << in_off
                                                     << "/" << out_off;
      }
    }
  }
}

TEST_P(Sm4KernelModesTest, CbcEntriesMatchGenericInPiecesAndInPlace) {
  std::mt19937_64 rng(PrintSeed(12));
  const size_t max_blocks = 2 * K().parallel_blocks + 5;
  for (size_t n = 0; n <= max_blocks; ++n) {
    Sm4Key k;
    ASSERT_OK(Sm4ExpandKey(RandomBytes(rng, 16), &k));
    const std::string iv = RandomBytes(rng, 16);
    const std::string in = RandomBytes(rng, 16 * n);
    const size_t split = n == 0 ? 0 : rng() % (n + 1);
    // Each entry runs over [0, split) and then [split, n), carrying the chaining value.
    struct Entry {
      const char* name;
      std::function<void(const Sm4Kernels&, uint8_t*, const uint8_t*, uint8_t*, size_t)> fn;
    };
    const Entry entries[] = {
        {"cbc_decrypt", [&](const Sm4Kernels& kk, uint8_t* c, const uint8_t* i, uint8_t* o,
                            size_t m) { kk.cbc_decrypt_blocks(k.rk_dec, c, i, o, m); }},
        {"cbc_encrypt", [&](const Sm4Kernels& kk, uint8_t* c, const uint8_t* i, uint8_t* o,
                            size_t m) { kk.cbc_encrypt_blocks(k.rk_enc, c, i, o, m); }},
    };
    for (const Entry& e : entries) {
      uint8_t want_chain[16], got_chain[16];
      std::memcpy(want_chain, iv.data(), 16);
      const std::string want = RunAt(
          [&](const uint8_t* i, uint8_t* o) { e.fn(Generic(), want_chain, i, o, n); }, in, 0, 0);
      for (size_t in_off : {0, 5, 15}) {
        for (int out_off : {-1, 0, 9}) {
          const std::string got = RunAt(
              [&](const uint8_t* i, uint8_t* o) {
                std::memcpy(got_chain, iv.data(), 16);
                e.fn(K(), got_chain, i, o, split);
                e.fn(K(), got_chain, i + 16 * split, o + 16 * split, n - split);
              },
              in, in_off, out_off);
          ASSERT_EQ(BytesToHex(got), BytesToHex(want))
              << e.name << " blocks " << n << " split " << split << " offsets " << in_off << "/"
              << out_off;
          ASSERT_EQ(0, std::memcmp(got_chain, want_chain, 16)) << e.name << " chaining value";
        }
      }
    }
    // CBC-MAC.
    uint8_t want_y[16], got_y[16];
    std::memcpy(want_y, iv.data(), 16);
    std::memcpy(got_y, iv.data(), 16);
    Generic().cbc_mac_blocks(k.rk_enc, want_y, U8(in), n);
    K().cbc_mac_blocks(k.rk_enc, got_y, U8(in), split);
    K().cbc_mac_blocks(k.rk_enc, got_y, U8(in) + 16 * split, n - split);
    ASSERT_EQ(0, std::memcmp(got_y, want_y, 16)) << "cbc_mac blocks " << n;
  }
}

// Multi-buffer CBC encryption and CBC-MAC: 1–16 jobs (and up to 40 through
// Sm4CbcEncryptMulti, which splits them 16 at a time) with their own keys and IVs,
// lengths 0–2×parallel+3 blocks mixed in one call, misaligned and in-place buffers;
// each job must equal generic's single-stream result, chaining value included.
TEST_P(Sm4KernelModesTest, CbcMultiMatchesSingleStreamGenericPerJob) {
  std::mt19937_64 rng(PrintSeed(19));
  const size_t max_blocks = 2 * K().parallel_blocks + 3;
  struct Msg {
    Sm4Key key;
    std::string iv, in;
    std::vector<uint8_t> in_buf, out_buf;  // misaligned copies
    uint8_t iv_got[16], mac_got[16];
    std::string want;
    uint8_t iv_want[16], mac_want[16];
  };
  for (size_t num_jobs = 1; num_jobs <= 40; num_jobs += (num_jobs < 17 ? 1 : 11)) {
    for (int round = 0; round < 3; ++round) {
      std::vector<Msg> msgs(num_jobs);
      std::vector<Sm4MultiJob> enc(num_jobs), mac(num_jobs);
      for (size_t j = 0; j < num_jobs; ++j) {
        Msg& m = msgs[j];
        ASSERT_OK(Sm4ExpandKey(RandomBytes(rng, 16), &m.key));
        // Round 0: every length distinct where possible; 1: equal; 2: some empty.
        size_t n = rng() % (max_blocks + 1);
        if (round == 1) n = max_blocks;
        if (round == 2 && j % 3 == 0) n = 0;
        m.iv = RandomBytes(rng, 16);
        m.in = RandomBytes(rng, 16 * n);
        const size_t in_off = j % 16, out_off = (3 * j + 1) % 16;
        const bool in_place = j % 4 == 1;
        m.in_buf.assign(16 * n + 16, 0);
        m.out_buf.assign(16 * n + 16, 0);
        if (n > 0) std::memcpy(m.in_buf.data() + in_off, m.in.data(), m.in.size());
        std::memcpy(m.iv_got, m.iv.data(), 16);
        std::memcpy(m.mac_got, m.iv.data(), 16);
        uint8_t* out = in_place ? m.in_buf.data() + in_off : m.out_buf.data() + out_off;
        enc[j] = {m.key.rk_enc, m.iv_got, m.in_buf.data() + in_off, out, n};
        mac[j] = {m.key.rk_enc, m.mac_got, U8(m.in), nullptr, n};
        m.want.assign(16 * n, '\0');
        std::memcpy(m.iv_want, m.iv.data(), 16);
        std::memcpy(m.mac_want, m.iv.data(), 16);
        Generic().cbc_encrypt_blocks(m.key.rk_enc, m.iv_want, U8(m.in),
                                     reinterpret_cast<uint8_t*>(m.want.data()), n);
        Generic().cbc_mac_blocks(m.key.rk_enc, m.mac_want, U8(m.in), n);
      }
      // The back end's own entry takes at most 16 jobs; Sm4CbcEncryptMulti any number.
      if (num_jobs <= kSm4MaxMultiJobs && K().cbc_encrypt_multi != nullptr && round != 1) {
        K().cbc_encrypt_multi(enc.data(), num_jobs);
        K().cbc_mac_multi(mac.data(), num_jobs);
      } else {
        Sm4CbcEncryptMulti(enc.data(), num_jobs);
        Sm4CbcMacMulti(mac.data(), num_jobs);
      }
      for (size_t j = 0; j < num_jobs; ++j) {
        const Msg& m = msgs[j];
        const std::string got(reinterpret_cast<const char*>(enc[j].out), m.want.size());
        ASSERT_EQ(BytesToHex(got), BytesToHex(m.want))
            << "job " << j << " of " << num_jobs << ", " << enc[j].num_blocks << " blocks";
        ASSERT_EQ(0, std::memcmp(m.iv_got, m.iv_want, 16)) << "job " << j << " chaining value";
        ASSERT_EQ(0, std::memcmp(m.mac_got, m.mac_want, 16)) << "job " << j << " CBC-MAC";
      }
    }
  }
}

// Sm4CbcEncryptMulti through the public CBC cipher's output: the same messages with
// PKCS#7 padding applied by hand match Sm4Cbc (and so OpenSSL, checked above).
TEST_P(Sm4KernelModesTest, CbcMultiMatchesPublicSm4Cbc) {
  std::mt19937_64 rng(PrintSeed(20));
  constexpr size_t kJobs = 16;
  std::vector<std::string> keys, ivs, padded, outs(kJobs);
  std::vector<Sm4Key> expanded(kJobs);
  std::vector<Sm4MultiJob> jobs(kJobs);
  std::vector<std::array<uint8_t, 16>> chain(kJobs);
  for (size_t j = 0; j < kJobs; ++j) {
    keys.push_back(RandomBytes(rng, 16));
    ivs.push_back(RandomBytes(rng, 16));
    std::string pt = RandomBytes(rng, rng() % 700);
    const size_t pad = 16 - pt.size() % 16;
    padded.push_back(pt + std::string(pad, static_cast<char>(pad)));
    ASSERT_OK(Sm4ExpandKey(keys[j], &expanded[j]));
    std::memcpy(chain[j].data(), ivs[j].data(), 16);
    outs[j].assign(padded[j].size(), '\0');
    jobs[j] = {expanded[j].rk_enc, chain[j].data(), U8(padded[j]),
               reinterpret_cast<uint8_t*>(outs[j].data()), padded[j].size() / 16};
  }
  Sm4CbcEncryptMulti(jobs.data(), kJobs);
  for (size_t j = 0; j < kJobs; ++j) {
    ASSERT_OK_AND_ASSIGN(auto cbc, NewSm4Cbc(keys[j]));
    ASSERT_OK_AND_ASSIGN(
        std::string want,
        cbc->Encrypt(ivs[j], absl::string_view(padded[j]).substr(
                                 0, padded[j].size() - static_cast<uint8_t>(padded[j].back()))));
    ASSERT_EQ(BytesToHex(outs[j]), BytesToHex(want)) << "job " << j;
  }
}

// Sm4CbcEncryptBatch (the service's EncryptBatch path): batches of 0–40 messages of
// mixed lengths (0–700 bytes, so the longest-first grouping reorders them), both
// paddings, and bad items (wrong key or IV size, unpadded length not a multiple of 16)
// that get their own error without disturbing the others; every good item equals
// OpenSSL SM4-CBC on the same key, IV and message.
TEST_P(Sm4KernelModesTest, CbcEncryptBatchMatchesOpenSsl) {
  std::mt19937_64 rng(PrintSeed(21));
  for (size_t n : {0, 1, 2, 15, 16, 17, 33, 40}) {
    std::vector<std::string> keys(n), ivs(n), pts(n);
    std::vector<Sm4CbcBatchItem> items(n);
    std::vector<int> bad(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const bool none = rng() % 4 == 0;
      keys[i] = RandomBytes(rng, 16);
      ivs[i] = RandomBytes(rng, 16);
      pts[i] = RandomBytes(rng, none ? 16 * (rng() % 44) : rng() % 701);
      if (n > 2 && rng() % 8 == 0) {
        bad[i] = 1 + static_cast<int>(rng() % 3);
        if (bad[i] == 1) keys[i].resize(15);
        if (bad[i] == 2) ivs[i].resize(12);
      }
      items[i] = {keys[i], ivs[i], pts[i], none ? Padding::kNone : Padding::kPkcs7};
      if (bad[i] == 3) {
        pts[i].push_back('x');  // not a multiple of 16 without padding
        items[i] = {keys[i], ivs[i], pts[i], Padding::kNone};
      }
    }
    std::vector<absl::StatusOr<std::string>> got = Sm4CbcEncryptBatch(items);
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; ++i) {
      if (bad[i] != 0) {
        EXPECT_EQ(got[i].status().code(), absl::StatusCode::kInvalidArgument)
            << "item " << i << " of " << n << ": " << got[i].status();
        continue;
      }
      ASSERT_OK(got[i].status()) << "item " << i << " of " << n;
      const bool pad = items[i].padding == Padding::kPkcs7;
      EXPECT_EQ(BytesToHex(*got[i]),
                BytesToHex(OpenSslCrypt(EVP_sm4_cbc(), keys[i], ivs[i], pad, pts[i], true)))
          << "item " << i << " of " << n << ", " << pts[i].size() << " bytes";
    }
  }
}

// The start-up self-test passes on every back end, and fails when one wide entry is
// wrong only past the single-block path: block 70 of a 119-block ECB or CTR call, or
// the 16th job of a multi-buffer call.
const Sm4Kernels* g_real = nullptr;

TEST_P(Sm4KernelModesTest, SelfTestCoversWidePaths) {
  EXPECT_TRUE(Sm4SelfTest(K()));
  g_real = &K();
  Sm4Kernels broken = K();
  broken.encrypt_blocks = [](const uint32_t rk[32], const uint8_t* in, uint8_t* out, size_t n) {
    g_real->encrypt_blocks(rk, in, out, n);
    if (n > 70) out[16 * 70] ^= 1;
  };
  EXPECT_FALSE(Sm4SelfTest(broken)) << "ECB";
  broken = K();
  broken.ctr32_encrypt_blocks = [](const uint32_t rk[32], const uint8_t cb[16], const uint8_t* in,
                                   uint8_t* out, size_t n) {
    g_real->ctr32_encrypt_blocks(rk, cb, in, out, n);
    if (n > 70) out[16 * 70 + 5] ^= 0x80;
  };
  EXPECT_FALSE(Sm4SelfTest(broken)) << "CTR-32";
  broken = K();
  broken.ctr128_encrypt_blocks = [](const uint32_t rk[32], const uint8_t cb[16], const uint8_t* in,
                                    uint8_t* out, size_t n) {
    g_real->ctr128_encrypt_blocks(rk, cb, in, out, n);
    if (n > 70) out[16 * 70 + 5] ^= 0x80;
  };
  EXPECT_FALSE(Sm4SelfTest(broken)) << "CTR-128";
  broken = K();
  broken.cbc_decrypt_blocks = [](const uint32_t rk[32], uint8_t iv[16], const uint8_t* in,
                                 uint8_t* out, size_t n) {
    g_real->cbc_decrypt_blocks(rk, iv, in, out, n);
    if (n > 70) out[16 * 70 + 15] ^= 2;
  };
  EXPECT_FALSE(Sm4SelfTest(broken)) << "CBC decryption";
  broken = K();
  broken.cbc_encrypt_multi = [](const Sm4MultiJob* jobs, size_t n) {
    if (g_real->cbc_encrypt_multi != nullptr) {
      g_real->cbc_encrypt_multi(jobs, n);
    } else {
      for (size_t j = 0; j < n; ++j) {
        g_real->cbc_encrypt_blocks(jobs[j].rk, jobs[j].iv, jobs[j].in, jobs[j].out,
                                   jobs[j].num_blocks);
      }
    }
    if (n == 16) jobs[15].iv[0] ^= 1;
  };
  if (broken.cbc_mac_multi == nullptr) broken.cbc_mac_multi = Generic().cbc_mac_multi;
  if (broken.cbc_mac_multi == nullptr) {
    broken.cbc_mac_multi = [](const Sm4MultiJob* jobs, size_t n) {
      for (size_t j = 0; j < n; ++j) {
        g_real->cbc_mac_blocks(jobs[j].rk, jobs[j].iv, jobs[j].in, jobs[j].num_blocks);
      }
    };
  }
  EXPECT_FALSE(Sm4SelfTest(broken)) << "multi-buffer CBC";
}

// The fused GCM entry (GCTR and GHASH in one pass) against generic CTR-32 plus the
// GHASH back end it pairs with, run separately: block counts around the 64-block chunk,
// both directions, in place and misaligned, with the 32-bit counter wrapping.
TEST_P(Sm4KernelModesTest, GcmFusedMatchesCtrThenGhash) {
  if (K().gcm_crypt_fused == nullptr) {
    GTEST_SKIP() << "back end " << K().name << " has no fused GCM entry";
  }
  const internal::GhashKernels& gh = *K().gcm_fused_ghash;
  const uint32_t missing = gh.required_features & ~GetCpuFeatures();
  if (missing != 0) {
    GTEST_SKIP() << "GHASH back end " << gh.name << " needs CPU features "
                 << FormatCpuFeatureList(missing);
  }
  std::mt19937_64 rng(PrintSeed(21));
  for (size_t n : {0, 1, 63, 64, 65, 128, 191, 192, 200, 257, 320}) {
    Sm4Key k;
    ASSERT_OK(Sm4ExpandKey(RandomBytes(rng, 16), &k));
    internal::GhashKey hkey;
    gh.init(&hkey, U8(RandomBytes(rng, 16)));
    std::string cb = RandomBytes(rng, 16);
    std::memcpy(cb.data() + 12, n % 2 ? "\xff\xff\xff\x80" : "\x00\x00\x01\x00", 4);
    const std::string y0 = RandomBytes(rng, 16);
    const std::string in = RandomBytes(rng, 16 * n);
    for (bool encrypt : {true, false}) {
      // Reference: keystream over every block, GHASH over the ciphertext.
      std::string want(in.size(), '\0');
      Generic().ctr32_encrypt_blocks(k.rk_enc, U8(cb), U8(in), reinterpret_cast<uint8_t*>(want.data()), n);
      uint8_t want_y[16];
      std::memcpy(want_y, y0.data(), 16);
      gh.update(want_y, hkey, encrypt ? U8(want) : U8(in), n);
      for (size_t in_off : {0, 3}) {
        for (int out_off : {-1, 0, 5}) {
          uint8_t got_y[16], got_cb[16];
          std::memcpy(got_y, y0.data(), 16);
          std::memcpy(got_cb, cb.data(), 16);
          size_t done = 0;
          const std::string got = RunAt(
              [&](const uint8_t* i, uint8_t* o) {
                done = K().gcm_crypt_fused(k.rk_enc, hkey, got_cb, got_y, i, o, n, encrypt);
                // Finish the rest as Sm4Gcm does (hashing before decrypting in place).
                if (!encrypt) gh.update(got_y, hkey, i + 16 * done, n - done);
                K().ctr32_encrypt_blocks(k.rk_enc, got_cb, i + 16 * done, o + 16 * done, n - done);
                if (encrypt) gh.update(got_y, hkey, o + 16 * done, n - done);
              },
              in, in_off, out_off);
          ASSERT_EQ(done, n / 64 * 64) << n;
          ASSERT_EQ(BytesToHex(got), BytesToHex(want))
              << (encrypt ? "encrypt " : "decrypt ") << n << " blocks, offsets " << in_off << "/" << out_off;
          ASSERT_EQ(0, std::memcmp(got_y, want_y, 16)) << (encrypt ? "encrypt " : "decrypt ") << n;
          uint8_t want_cb[16];
          std::memcpy(want_cb, cb.data(), 16);
          const uint32_t w = (uint32_t{want_cb[12]} << 24 | uint32_t{want_cb[13]} << 16 |
                              uint32_t{want_cb[14]} << 8 | want_cb[15]) + static_cast<uint32_t>(done);
          for (int b = 0; b < 4; ++b) want_cb[12 + b] = static_cast<uint8_t>(w >> (24 - 8 * b));
          ASSERT_EQ(0, std::memcmp(got_cb, want_cb, 16)) << "counter block after " << n;
        }
      }
    }
  }
}

// Every length 0–4,096 through the public ECB/CBC/CTR API against OpenSSL, both
// directions, with a misaligned input view.
TEST_P(Sm4KernelModesTest, EcbCbcCtrMatchOpenSslAtEveryLengthTo4096) {
  std::mt19937_64 rng(PrintSeed(13));
  const std::string key = RandomBytes(rng, 16);
  ASSERT_OK_AND_ASSIGN(auto ecb, NewSm4Ecb(key));
  ASSERT_OK_AND_ASSIGN(auto cbc, NewSm4Cbc(key));
  ASSERT_OK_AND_ASSIGN(auto ctr, NewSm4Ctr(key));
  const std::string data = RandomBytes(rng, 4096 + 16);
  const size_t last = SweepMaxLength(4096);
  for (size_t len = 0; len <= last; ++len) {
    const size_t off = len % 13;
    const std::string pt = data.substr(off, len);
    const std::string iv = RandomBytes(rng, 16);
    struct Case {
      const Cipher* c;
      const EVP_CIPHER* ossl;
      std::string iv;
      bool pad;
    };
    const Case cases[] = {{ecb.get(), EVP_sm4_ecb(), "", true},
                          {cbc.get(), EVP_sm4_cbc(), iv, true},
                          {ctr.get(), EVP_sm4_ctr(), iv, false}};
    for (const Case& c : cases) {
      ASSERT_OK_AND_ASSIGN(std::string ct, c.c->Encrypt(c.iv, pt));
      const std::string want = OpenSslCrypt(c.ossl, key, c.iv, c.pad, pt, true);
      ASSERT_EQ(ct, want) << EVP_CIPHER_get0_name(c.ossl) << " length " << len;
      // Decrypt from a misaligned copy.
      const std::string shifted = std::string(off + 1, 'x') + ct;
      ASSERT_OK_AND_ASSIGN(std::string back,
                           c.c->Decrypt(c.iv, absl::string_view(shifted).substr(off + 1)));
      ASSERT_EQ(back, pt) << EVP_CIPHER_get0_name(c.ossl) << " length " << len;
    }
  }
}

TEST_P(Sm4KernelModesTest, EcbCbcCtrMatchOpenSslAtRandomLargeLengths) {
  std::mt19937_64 rng(PrintSeed(14));
  for (int i = 0; i < 6; ++i) {
    const size_t len = 4097 + rng() % (i == 5 ? (1u << 20) : 70000);
    const std::string key = RandomBytes(rng, 16);
    const std::string iv = RandomBytes(rng, 16);
    const std::string pt = RandomBytes(rng, len);
    ASSERT_OK_AND_ASSIGN(auto ecb, NewSm4Ecb(key));
    ASSERT_OK_AND_ASSIGN(auto cbc, NewSm4Cbc(key));
    ASSERT_OK_AND_ASSIGN(auto ctr, NewSm4Ctr(key));
    ASSERT_OK_AND_ASSIGN(std::string e1, ecb->Encrypt("", pt));
    ASSERT_EQ(e1, OpenSslCrypt(EVP_sm4_ecb(), key, "", true, pt, true)) << "ECB length " << len;
    ASSERT_OK_AND_ASSIGN(std::string e2, cbc->Encrypt(iv, pt));
    ASSERT_EQ(e2, OpenSslCrypt(EVP_sm4_cbc(), key, iv, true, pt, true)) << "CBC length " << len;
    ASSERT_OK_AND_ASSIGN(std::string d2, cbc->Decrypt(iv, e2));
    ASSERT_EQ(d2, pt);
    ASSERT_OK_AND_ASSIGN(std::string e3, ctr->Encrypt(iv, pt));
    ASSERT_EQ(e3, OpenSslCrypt(EVP_sm4_ctr(), key, iv, false, pt, true)) << "CTR length " << len;
  }
}

TEST_P(Sm4KernelModesTest, CtrCounterCarriesMatchOpenSsl) {
  std::mt19937_64 rng(PrintSeed(15));
  const std::string key = RandomBytes(rng, 16);
  ASSERT_OK_AND_ASSIGN(auto ctr, NewSm4Ctr(key));
  const std::string pt = RandomBytes(rng, 1000);
  for (const char* tail : {"\xff\xff\xff\xf0", "\xff\xff\xff\xff\xff\xff\xff\xfa",
                           "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xf7"}) {
    std::string iv = RandomBytes(rng, 16);
    std::memcpy(iv.data() + 16 - std::strlen(tail), tail, std::strlen(tail));
    ASSERT_OK_AND_ASSIGN(std::string ct, ctr->Encrypt(iv, pt));
    ASSERT_EQ(BytesToHex(ct), BytesToHex(OpenSslCrypt(EVP_sm4_ctr(), key, iv, false, pt, true)))
        << "carry out of the last " << std::strlen(tail) << " bytes";
  }
}

// SM4-GCM of each back end against the SP 800-38D reference above: every length 0–300
// and random ones to 5,000, 12-byte and other nonce lengths, random AAD, misaligned input;
// and Open of the reference's output.
TEST_P(Sm4KernelModesTest, GcmMatchesSp80038dReferenceOnOpenSslSm4) {
  std::mt19937_64 rng(PrintSeed(19));
  const std::string key = RandomBytes(rng, 16);
  ASSERT_OK_AND_ASSIGN(auto gcm, NewSm4Gcm(key));
  std::vector<size_t> lengths;
  for (size_t len = 0; len <= 300; ++len) lengths.push_back(len);
  for (int i = 0; i < 20; ++i) lengths.push_back(301 + rng() % 4700);
  const std::string data = RandomBytes(rng, 5000 + 16);
  for (size_t len : lengths) {
    const std::string pt = data.substr(1 + len % 15, len);
    const size_t nonce_len = len % 9 == 0 ? 1 + rng() % 64 : 12;
    const std::string nonce = RandomBytes(rng, nonce_len);
    const std::string aad = RandomBytes(rng, rng() % 70);
    const std::string want = ReferenceGcmSeal(key, nonce, pt, aad);
    ASSERT_OK_AND_ASSIGN(std::string got, gcm->Seal(nonce, pt, aad));
    ASSERT_EQ(BytesToHex(got), BytesToHex(want))
        << K().name << " length " << len << " nonce " << nonce_len << " aad " << aad.size();
    ASSERT_OK_AND_ASSIGN(std::string opened, gcm->Open(nonce, want, aad));
    ASSERT_EQ(opened, pt) << "length " << len;
  }
}

#if defined(SMCRYPT_HAVE_BOTAN)
TEST_P(Sm4KernelModesTest, GcmAndCcmMatchBotanAtEveryLengthTo4096) {
  std::mt19937_64 rng(PrintSeed(16));
  const std::string key = RandomBytes(rng, 16);
  ASSERT_OK_AND_ASSIGN(auto gcm, NewSm4Gcm(key));
  ASSERT_OK_AND_ASSIGN(auto ccm, NewSm4Ccm(key));
  const std::string data = RandomBytes(rng, 4096 + 16);
  // The generic back end (bitsliced, about 30 times slower) takes every length to 1,100
  // and every fifth one beyond, to keep the suite's run time modest.
  const bool slow = K().required_features == 0;
  const size_t last = SweepMaxLength(4096);
  for (size_t len = 0; len <= last; ++len) {
    if (slow && len > 1100 && len % 5 != 0) continue;
    const std::string pt = data.substr(len % 11, len);
    const std::string nonce = RandomBytes(rng, 12);
    const std::string aad = RandomBytes(rng, rng() % 40);
    ASSERT_OK_AND_ASSIGN(std::string g, gcm->Seal(nonce, pt, aad));
    ASSERT_EQ(BytesToHex(g), BytesToHex(BotanSeal("SM4/GCM(16)", key, nonce, pt, aad)))
        << "SM4-GCM length " << len;
    ASSERT_OK_AND_ASSIGN(std::string gp, gcm->Open(nonce, g, aad));
    ASSERT_EQ(gp, pt);
    ASSERT_OK_AND_ASSIGN(std::string c, ccm->Seal(nonce, pt, aad));
    ASSERT_EQ(BytesToHex(c), BytesToHex(BotanSeal("SM4/CCM(16,3)", key, nonce, pt, aad)))
        << "SM4-CCM length " << len;
    ASSERT_OK_AND_ASSIGN(std::string cp, ccm->Open(nonce, c, aad));
    ASSERT_EQ(cp, pt);
  }
}

TEST_P(Sm4KernelModesTest, GcmMatchesBotanAtRandomLargeLengthsAndAcrossInc32Wrap) {
  std::mt19937_64 rng(PrintSeed(17));
  const std::string key = RandomBytes(rng, 16);
  ASSERT_OK_AND_ASSIGN(auto gcm, NewSm4Gcm(key));
  for (int i = 0; i < 4; ++i) {
    const size_t len = 4097 + rng() % 100000;
    const std::string pt = RandomBytes(rng, len);
    const std::string nonce = RandomBytes(rng, 12);
    const std::string aad = RandomBytes(rng, rng() % 300);
    ASSERT_OK_AND_ASSIGN(std::string g, gcm->Seal(nonce, pt, aad));
    ASSERT_EQ(g, BotanSeal("SM4/GCM(16)", key, nonce, pt, aad)) << "length " << len;
  }
  // A 16-byte nonce solved (with H⁻¹) so that J0's counter word is 0xfffffff0: the
  // 1 KiB message's counters wrap modulo 2^32 in the middle of a wide batch.
  Sm4Key hk;
  ASSERT_OK(Sm4ExpandKey(key, &hk));
  uint8_t hb[16] = {};
  Generic().encrypt_blocks(hk.rk_enc, hb, hb, 1);
  const std::string h(reinterpret_cast<char*>(hb), 16);
  std::string one(16, '\0');
  one[0] = static_cast<char>(0x80);
  std::string inv = one, base = h;  // H^(2^128 − 2)
  for (int i = 0; i < 128; ++i) {
    if (i >= 1) inv = RefMul(inv, base);
    base = RefMul(base, base);
  }
  std::string j0 = RandomBytes(rng, 12) + std::string("\xff\xff\xff\xf0", 4);
  std::string len_block(16, '\0');
  len_block[15] = static_cast<char>(0x80);  // [128]64
  std::string t = RefMul(j0, inv);
  for (int i = 0; i < 16; ++i) t[i] ^= len_block[i];
  const std::string nonce = RefMul(t, inv);
  const std::string pt = RandomBytes(rng, 1024 + 5);
  ASSERT_OK_AND_ASSIGN(std::string sealed, gcm->Seal(nonce, pt, "wrap"));
  ASSERT_EQ(BytesToHex(sealed), BytesToHex(BotanSeal("SM4/GCM(16)", key, nonce, pt, "wrap")));
  // Block 16 uses counter word 0 (J0 + 1 + 15 = 2^32): check it against the block API.
  uint8_t ctr[16];
  std::memcpy(ctr, j0.data(), 12);
  std::memset(ctr + 12, 0, 4);
  Generic().encrypt_blocks(hk.rk_enc, ctr, ctr, 1);
  for (int i = 0; i < 16; ++i) {
    ASSERT_EQ(static_cast<uint8_t>(sealed[16 * 15 + i] ^ pt[16 * 15 + i]), ctr[i]) << i;
  }
  Sm4Key k;
  ASSERT_OK(Sm4ExpandKey(key, &k));
  std::string cb = RandomBytes(rng, 16);
  std::memcpy(cb.data() + 12, "\xff\xff\xff\xfb", 4);
  const std::string in = RandomBytes(rng, 16 * 70);
  std::string a(in.size(), '\0'), b(in.size(), '\0');
  Generic().ctr32_encrypt_blocks(k.rk_enc, U8(cb), U8(in), reinterpret_cast<uint8_t*>(a.data()), 70);
  K().ctr32_encrypt_blocks(k.rk_enc, U8(cb), U8(in), reinterpret_cast<uint8_t*>(b.data()), 70);
  ASSERT_EQ(BytesToHex(a), BytesToHex(b));
}
#else
TEST_P(Sm4KernelModesTest, GcmAndCcmMatchBotanAtEveryLengthTo4096) {
  GTEST_SKIP() << "Botan 2 (botan-2 pkg-config) not found; SM4-GCM/CCM per-back-end test skipped";
}
#endif

INSTANTIATE_TEST_SUITE_P(AllKernels, Sm4KernelModesTest,
                         ::testing::ValuesIn(Sm4AllKernelsForTesting()),
                         [](const ::testing::TestParamInfo<const Sm4Kernels*>& info) {
                           return std::string(info.param->name);
                         });

// --- Every GHASH back end through SM4-GCM ----------------------------------------------

class GhashThroughGcmTest : public ::testing::TestWithParam<const internal::GhashKernels*> {
 protected:
  void SetUp() override {
    const uint32_t missing = GetParam()->required_features & ~GetCpuFeatures();
    if (missing != 0) {
      GTEST_SKIP() << "GHASH back end " << GetParam()->name << " needs CPU features "
                   << FormatCpuFeatureList(missing) << " that this machine lacks (or are masked)";
    }
    internal::GhashSetKernelsForTesting(GetParam());
  }
  void TearDown() override { internal::GhashSetKernelsForTesting(nullptr); }
};

TEST_P(GhashThroughGcmTest, SealMatchesGenericGhashForLengthsTo1100AndNonceLengths) {
  std::mt19937_64 rng(PrintSeed(18));
  const std::string key = RandomBytes(rng, 16);
  ASSERT_OK_AND_ASSIGN(auto gcm, NewSm4Gcm(key));
  internal::GhashSetKernelsForTesting(&internal::kGhashGeneric);
  auto reference = NewSm4Gcm(key);
  internal::GhashSetKernelsForTesting(GetParam());
  ASSERT_OK(reference.status());
  for (size_t len = 0; len <= 1100; ++len) {
    const std::string pt = RandomBytes(rng, len);
    const std::string nonce = RandomBytes(rng, len % 7 == 0 ? 1 + rng() % 80 : 12);
    const std::string aad = RandomBytes(rng, rng() % 300);
    ASSERT_OK_AND_ASSIGN(std::string got, gcm->Seal(nonce, pt, aad));
    ASSERT_OK_AND_ASSIGN(std::string want, (*reference)->Seal(nonce, pt, aad));
    ASSERT_EQ(BytesToHex(got), BytesToHex(want)) << "length " << len << " nonce " << nonce.size();
  }
}

INSTANTIATE_TEST_SUITE_P(AllKernels, GhashThroughGcmTest,
                         ::testing::ValuesIn(internal::GhashAllKernelsForTesting().begin(),
                                             internal::GhashAllKernelsForTesting().end()),
                         [](const ::testing::TestParamInfo<const internal::GhashKernels*>& info) {
                           return std::string(info.param->name);
                         });

}  // namespace
}  // namespace smcrypt
