// SM2 key exchange fuzzer (smcrypt/sm2_key_exchange.h): the fuzzed bytes as the peer's
// messages — R and the confirmation value S — to an initiator or responder with fixed
// long-term keys and a fixed ephemeral scalar, on a back end this CPU supports (selector
// byte), differential against the generic back end.
//  - Malformed input must be an error (InvalidArgument, Unauthenticated), never a crash.
//  - ComputeKey may succeed only for an R that Sm2PublicKey::FromPoint accepts.
//  - The chosen back end and generic must give the same status code, key and S.
//  - A responder with confirmation gets the rest of the input as S_A: both back ends
//    must reach the same verdict and release the same K.
// Aborts on any mismatch.
//
// Input: selector ‖ flags (bit 0 responder, bit 1 confirmation) ‖ klen (2) ‖ R field ‖
// S field ‖ S_A (the rest; responder with confirmation only).
#include <optional>
#include <string>

#include "crypto/sm2/sm2_testing.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm2_key_exchange.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using smcrypt::Sm2KeyExchange;
using smcrypt::Sm2KeyExchangeParams;
using smcrypt::Sm2KeyExchangeRole;

// d of the GB/T 32918.5-2017 examples, and arbitrary fixed d_peer and r.
constexpr char kD[] =
    "\x39\x45\x20\x8F\x7B\x21\x44\xB1\x3F\x36\xE3\x8A\xC6\xD3\x9F\x95"
    "\x88\x93\x93\x69\x28\x60\xB5\x1A\x42\xFB\x81\xEF\x4D\xF7\xC5\xB8";
constexpr char kPeerD[] =
    "\x12\x34\x56\x78\x9A\xBC\xDE\xF0\x0F\xED\xCB\xA9\x87\x65\x43\x21"
    "\x11\x22\x33\x44\x55\x66\x77\x88\x99\xAA\xBB\xCC\xDD\xEE\xFF\x01";
constexpr char kR[] =
    "\x59\x27\x6E\x27\xD5\x06\x86\x1A\x16\x68\x0F\x3A\xD9\xC0\x2D\xCC"
    "\xEF\x3C\xC1\xFA\x3C\xDB\xE4\xCE\x6D\x54\xB8\x0D\xEA\xC1\xBC\x21";

struct Result {
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string key, confirmation;
  absl::StatusCode confirm_code = absl::StatusCode::kOk;
  std::string confirmed_key;
};

Result Run(const smcrypt::internal::Sm2Kernels* kernels, const Sm2KeyExchangeParams& params,
           const std::string& peer_r, const std::string& s, const std::string& s_a) {
  smcrypt::internal::Sm2SetKernelsForTesting(kernels);
  Result res;
  auto own = smcrypt::Sm2PrivateKey::FromScalar(absl::string_view(kD, 32));
  auto peer = smcrypt::Sm2PrivateKey::FromScalar(absl::string_view(kPeerD, 32));
  FUZZ_CHECK(own.ok() && peer.ok());
  auto kx = Sm2KeyExchange::New(*own, peer->public_key(), params);
  FUZZ_CHECK(kx.ok());
  FUZZ_CHECK(smcrypt::testing::Sm2KeyExchangeStartWithRForTesting(*kx, absl::string_view(kR, 32))
                 .ok());
  auto out = kx->ComputeKey(peer_r, s);
  res.code = out.status().code();
  if (out.ok()) {
    res.key = std::string(smcrypt::SecretDataAsStringView(out->key));
    res.confirmation = out->confirmation;
    if (params.role == Sm2KeyExchangeRole::kResponder && params.confirmation) {
      auto k = kx->ConfirmPeer(s_a);
      res.confirm_code = k.status().code();
      if (k.ok()) res.confirmed_key = std::string(smcrypt::SecretDataAsStringView(*k));
    }
  }
  smcrypt::internal::Sm2SetKernelsForTesting(nullptr);
  return res;
}

bool Allowed(absl::StatusCode c) {
  return c == absl::StatusCode::kOk || c == absl::StatusCode::kInvalidArgument ||
         c == absl::StatusCode::kUnauthenticated;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  smcrypt::fuzz::FuzzReader in(data, size);
  static const auto kernels = smcrypt::fuzz::SupportedSm2Kernels();
  const auto* k = smcrypt::fuzz::PickKernel(kernels, in.Byte());
  const uint8_t flags = in.Byte();
  Sm2KeyExchangeParams params;
  params.role = (flags & 1) ? Sm2KeyExchangeRole::kResponder : Sm2KeyExchangeRole::kInitiator;
  params.confirmation = (flags & 2) != 0;
  params.own_id = "fuzz-own";
  params.peer_id = "fuzz-peer";
  params.key_size = 1 + in.U16() % 512;
  const std::string peer_r = in.Field();
  const std::string s = in.Field();
  const std::string s_a = in.Rest();

  const Result got = Run(k, params, peer_r, s, s_a);
  const Result want = Run(&smcrypt::internal::kSm2KernelsGeneric, params, peer_r, s, s_a);
  FUZZ_CHECK(Allowed(got.code) && Allowed(got.confirm_code));
  FUZZ_CHECK(got.code == want.code);
  FUZZ_CHECK(got.key == want.key);
  FUZZ_CHECK(got.confirmation == want.confirmation);
  FUZZ_CHECK(got.confirm_code == want.confirm_code);
  FUZZ_CHECK(got.confirmed_key == want.confirmed_key);
  if (got.code == absl::StatusCode::kOk) {
    FUZZ_CHECK(smcrypt::Sm2PublicKey::FromPoint(peer_r).ok());
    const bool withheld =
        params.role == Sm2KeyExchangeRole::kResponder && params.confirmation;
    FUZZ_CHECK(got.key.size() == (withheld ? 0 : params.key_size));
    FUZZ_CHECK(got.confirmation.size() == (params.confirmation ? 32 : 0));
    if (withheld && got.confirm_code == absl::StatusCode::kOk) {
      FUZZ_CHECK(got.confirmed_key.size() == params.key_size);
    }
  }
  return 0;
}
