// sm2_key_exchange_bc_tool — smcrypt's side of the BouncyCastle SM2 key exchange
// differential test (run_sm2_key_exchange_bc.sh, Sm2KeyExchangeBc.java).
//
//   sm2_key_exchange_bc_tool gen SEED COUNT
//     writes COUNT cases, one per line, from a generator seeded with SEED:
//       dA dB rA rB idA idB klen  RA RB K S_B S_A
//     (hex; "-" for an empty ID): long-term scalars, ephemeral scalars, IDs and klen in
//     bytes, then what smcrypt's initiator and responder, run against each other with
//     those ephemeral scalars and key confirmation, produced.
//   sm2_key_exchange_bc_tool check
//     reads those lines, each followed by BouncyCastle's  RA RB K S_B S_A  (appended by
//     Sm2KeyExchangeBc), and runs smcrypt against BouncyCastle's messages: smcrypt's
//     initiator receives BC's R_B and S_B (smcrypt checks BC's S_B), smcrypt's responder
//     receives BC's R_A and then S_A (smcrypt checks BC's S_A); both keys must be BC's K,
//     and smcrypt's S_A and S_B must be BC's. Also without confirmation. Prints
//     "N cases passed" and exits 0, or prints each failure and exits 1.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "crypto/sm2/sm2_testing.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm2_key_exchange.h"

namespace smcrypt {
namespace {

using Role = Sm2KeyExchangeRole;

std::string Hex(absl::string_view b) { return b.empty() ? "-" : absl::BytesToHexString(b); }
std::string Unhex(absl::string_view h) {
  return h == "-" ? std::string() : absl::HexStringToBytes(h);
}
std::string Str(const SecretData& s) { return std::string(SecretDataAsStringView(s)); }

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

// A scalar in [1, n − 2]: valid as a private key d and as an ephemeral r.
std::string RandomScalar(std::mt19937_64& rng) {
  for (;;) {
    std::string s = RandomBytes(rng, 32);
    if (Sm2PrivateKey::FromScalar(s).ok()) return s;
  }
}

std::string RandomId(std::mt19937_64& rng, int i) {
  if (i % 50 == 7) return RandomBytes(rng, kSm2MaxUserIdSize);
  switch (rng() % 4) {
    case 0:
      return std::string(kSm2DefaultUserId);
    case 1:
      return "";
    default:
      return RandomBytes(rng, 1 + rng() % 64);
  }
}

struct Case {
  std::string d_a, d_b, r_a, r_b, id_a, id_b;
  size_t klen = 0;
};

absl::StatusOr<Sm2KeyExchange> Make(const std::string& own_d, const std::string& peer_d,
                                    Role role, const std::string& own_id,
                                    const std::string& peer_id, size_t klen,
                                    bool confirmation) {
  absl::StatusOr<Sm2PrivateKey> own = Sm2PrivateKey::FromScalar(own_d);
  absl::StatusOr<Sm2PrivateKey> peer = Sm2PrivateKey::FromScalar(peer_d);
  if (!own.ok()) return own.status();
  if (!peer.ok()) return peer.status();
  Sm2KeyExchangeParams p;
  p.role = role;
  p.own_id = own_id;
  p.peer_id = peer_id;
  p.key_size = klen;
  p.confirmation = confirmation;
  return Sm2KeyExchange::New(*own, peer->public_key(), p);
}

#define TOOL_ASSIGN(lhs, expr)                                          \
  auto lhs = (expr);                                                    \
  if (!lhs.ok()) {                                                      \
    std::cerr << "case " << n << ": " #expr ": " << lhs.status() << "\n"; \
    return false;                                                       \
  }

bool Gen(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const std::vector<size_t> klens = {1, 16, 32, 48, 100};
  const std::string n_minus_2 = absl::HexStringToBytes(
      "FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54121");
  const std::string one = std::string(31, '\0') + "\x01";
  for (int n = 0; n < count; ++n) {
    Case c;
    c.d_a = n == 0 ? one : RandomScalar(rng);
    c.d_b = n == 1 ? n_minus_2 : RandomScalar(rng);
    c.r_a = n == 1 ? one : RandomScalar(rng);
    c.r_b = n == 0 ? n_minus_2 : RandomScalar(rng);
    c.id_a = RandomId(rng, n);
    c.id_b = RandomId(rng, n + 25);
    c.klen = n < 10 ? klens[n % klens.size()] : 1 + rng() % 300;
    TOOL_ASSIGN(a, Make(c.d_a, c.d_b, Role::kInitiator, c.id_a, c.id_b, c.klen, true));
    TOOL_ASSIGN(b, Make(c.d_b, c.d_a, Role::kResponder, c.id_b, c.id_a, c.klen, true));
    TOOL_ASSIGN(ra, testing::Sm2KeyExchangeStartWithRForTesting(*a, c.r_a));
    TOOL_ASSIGN(rb, testing::Sm2KeyExchangeStartWithRForTesting(*b, c.r_b));
    TOOL_ASSIGN(bo, b->ComputeKey(*ra));
    TOOL_ASSIGN(ao, a->ComputeKey(*rb, bo->confirmation));
    TOOL_ASSIGN(kb, b->ConfirmPeer(ao->confirmation));
    if (Str(*kb) != Str(ao->key)) {
      std::cerr << "case " << n << ": smcrypt's initiator and responder keys differ\n";
      return false;
    }
    std::cout << Hex(c.d_a) << ' ' << Hex(c.d_b) << ' ' << Hex(c.r_a) << ' ' << Hex(c.r_b)
              << ' ' << Hex(c.id_a) << ' ' << Hex(c.id_b) << ' ' << c.klen << ' ' << Hex(*ra)
              << ' ' << Hex(*rb) << ' ' << Hex(Str(ao->key)) << ' ' << Hex(bo->confirmation)
              << ' ' << Hex(ao->confirmation) << '\n';
  }
  return true;
}

// CheckLine runs smcrypt against BouncyCastle's messages of one case; false on a failure.
bool CheckLine(int n, const std::vector<std::string>& f) {
  if (f.size() != 17) {
    std::cerr << "case " << n << ": expected 17 fields, got " << f.size() << "\n";
    return false;
  }
  Case c{Unhex(f[0]), Unhex(f[1]), Unhex(f[2]), Unhex(f[3]), Unhex(f[4]), Unhex(f[5]),
         static_cast<size_t>(std::stoul(f[6]))};
  const std::string bc_ra = Unhex(f[12]), bc_rb = Unhex(f[13]), bc_k = Unhex(f[14]),
                    bc_sb = Unhex(f[15]), bc_sa = Unhex(f[16]);
  bool ok = true;
  auto expect_eq = [&](const std::string& what, const std::string& got,
                       const std::string& want) {
    if (got != want) {
      std::cerr << "case " << n << ": " << what << ": smcrypt " << Hex(got) << ", BouncyCastle "
                << Hex(want) << "\n";
      ok = false;
    }
  };
  // smcrypt A with BC B: BC's R_B and S_B in, smcrypt's S_A out.
  {
    TOOL_ASSIGN(a, Make(c.d_a, c.d_b, Role::kInitiator, c.id_a, c.id_b, c.klen, true));
    TOOL_ASSIGN(ra, testing::Sm2KeyExchangeStartWithRForTesting(*a, c.r_a));
    expect_eq("R_A", *ra, bc_ra);
    TOOL_ASSIGN(ao, a->ComputeKey(bc_rb, bc_sb));  // smcrypt accepts BC's S_B
    expect_eq("initiator K", Str(ao->key), bc_k);
    expect_eq("S_A", ao->confirmation, bc_sa);
  }
  // BC A with smcrypt B: BC's R_A in, smcrypt's S_B out, BC's S_A in.
  {
    TOOL_ASSIGN(b, Make(c.d_b, c.d_a, Role::kResponder, c.id_b, c.id_a, c.klen, true));
    TOOL_ASSIGN(rb, testing::Sm2KeyExchangeStartWithRForTesting(*b, c.r_b));
    expect_eq("R_B", *rb, bc_rb);
    TOOL_ASSIGN(bo, b->ComputeKey(bc_ra));
    expect_eq("S_B", bo->confirmation, bc_sb);
    TOOL_ASSIGN(kb, b->ConfirmPeer(bc_sa));  // smcrypt accepts BC's S_A
    expect_eq("responder K", Str(*kb), bc_k);
  }
  // Without confirmation, both roles.
  for (Role role : {Role::kInitiator, Role::kResponder}) {
    const bool init = role == Role::kInitiator;
    TOOL_ASSIGN(kx, Make(init ? c.d_a : c.d_b, init ? c.d_b : c.d_a, role,
                         init ? c.id_a : c.id_b, init ? c.id_b : c.id_a, c.klen, false));
    TOOL_ASSIGN(r, testing::Sm2KeyExchangeStartWithRForTesting(*kx, init ? c.r_a : c.r_b));
    TOOL_ASSIGN(out, kx->ComputeKey(init ? bc_rb : bc_ra));
    expect_eq(init ? "initiator K (no confirmation)" : "responder K (no confirmation)",
              Str(out->key), bc_k);
  }
  return ok;
}

bool Check() {
  std::string line;
  int n = 0, failed = 0;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!CheckLine(n, f)) ++failed;
    ++n;
  }
  if (n == 0) {
    std::cerr << "no cases read\n";
    return false;
  }
  std::cout << n - failed << " cases passed, " << failed << " failed (smcrypt against "
            << "BouncyCastle's R, S_B, S_A and K)\n";
  return failed == 0;
}

}  // namespace
}  // namespace smcrypt

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "gen" && argc == 4) {
    return smcrypt::Gen(std::strtoull(argv[2], nullptr, 10), std::atoi(argv[3])) ? 0 : 1;
  }
  if (mode == "check" && argc == 2) return smcrypt::Check() ? 0 : 1;
  std::cerr << "usage: sm2_key_exchange_bc_tool gen SEED COUNT | check\n";
  return 2;
}
