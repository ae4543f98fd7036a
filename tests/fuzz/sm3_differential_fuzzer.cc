// SM3 differential fuzzer: SM3 of the input (one-shot, incremental at fuzz-chosen split
// points, and in an Sm3Batch of several messages), and HMAC-SM3, against OpenSSL's
// EVP_sm3 / HMAC, on a back end this CPU supports chosen by the first input byte
// (single-stream and multi-buffer). Aborts on any mismatch.
//
// Input: selector ‖ split1 (2 bytes) ‖ split2 (2 bytes) ‖ key field ‖ message.
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <array>
#include <cstring>

#include "smcrypt/sm3.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

std::string OpenSslSm3(absl::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  FUZZ_CHECK(EVP_Digest(data.data(), data.size(), md, &len, EVP_sm3(), nullptr) == 1);
  return std::string(reinterpret_cast<char*>(md), len);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace smcrypt;
  static const std::vector<const Sm3Kernels*> kernels = fuzz::SupportedSm3Kernels();
  fuzz::FuzzReader in(data, size);
  const Sm3Kernels* k = fuzz::PickKernel(kernels, in.Byte());
  const size_t split1 = in.U16();
  const size_t split2 = in.U16();
  const std::string key = in.Field();
  const std::string msg = in.Rest();
  Sm3SetKernelsForTesting(k);

  const std::string want = OpenSslSm3(msg);
  const auto one_shot = Sm3Digest(msg);
  FUZZ_CHECK(std::memcmp(one_shot.data(), want.data(), 32) == 0);

  // Incremental, in three pieces.
  const size_t a = std::min(split1, msg.size());
  const size_t b = std::min(a + split2, msg.size());
  Sm3 h;
  h.Update(absl::string_view(msg).substr(0, a));
  h.Update(absl::string_view(msg).substr(a, b - a));
  h.Update(absl::string_view(msg).substr(b));
  FUZZ_CHECK(h.Finish() == want);

  // A batch of the message's suffixes (lengths differ, so lanes end at different
  // blocks), each checked against OpenSSL.
  std::vector<absl::string_view> batch;
  const size_t step = msg.size() / 17 + 1;
  for (size_t i = 0; i < 17; ++i) {
    batch.push_back(absl::string_view(msg).substr(std::min(i * step, msg.size())));
  }
  std::vector<uint8_t> out(32 * batch.size());
  Sm3Batch(batch, out.data());
  for (size_t i = 0; i < batch.size(); ++i) {
    FUZZ_CHECK(std::memcmp(out.data() + 32 * i, OpenSslSm3(batch[i]).data(), 32) == 0);
  }

  // HMAC-SM3 (any key length: empty, shorter and longer than a block).
  auto mac = HmacSm3::New(key);
  FUZZ_CHECK(mac.ok());
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  FUZZ_CHECK(HMAC(EVP_sm3(), key.data(), static_cast<int>(key.size()),
                  reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), md,
                  &len) != nullptr);
  auto got = (*mac)->ComputeMac(msg);
  FUZZ_CHECK(got.ok());
  FUZZ_CHECK(*got == std::string(reinterpret_cast<char*>(md), len));
  FUZZ_CHECK((*mac)->VerifyMac(*got, msg).ok());
  Sm3SetKernelsForTesting(nullptr);
  return 0;
}
