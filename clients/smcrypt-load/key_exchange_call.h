// key_exchange_call.h — the operation of smcrypt-load's KeyExchange workload: one SM2 key
// exchange against smcryptd on two streams of one channel, the server playing both parties.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_KEY_EXCHANGE_CALL_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_KEY_EXCHANGE_CALL_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "clients/smcrypt-load/runner.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::load {

// KeyExchangeCallParams are the server's parameters as initiator and as responder, and
// the request metadata of the responder's stream (the initiator's uses the caller's
// context).
struct KeyExchangeCallParams {
  smcrypt::v1::KeyExchangeParams initiator, responder;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// StartKeyExchangeCall starts one SM2 key exchange (GB/T 32918.3 §6, with confirmation)
// against the server on two streams of one channel: the server as initiator for
// `initiator` and as responder for `responder`, each side's messages relayed to the other:
//   A: → params                      ← R_A
//   B: → params, R_A                 ← R_B, S_B
//   A: → R_B, S_B                    ← K, S_A
//   B: → S_A                         ← K
// The operation succeeds when both streams end OK and both K are equal and non-empty
// (else DATA_LOSS). Stream A uses `ctx` (the runner's context); B a context of its own
// with the same deadline and `metadata`. Both streams start together, so that they are
// admitted together under the server's stream limit (the channel queues streams beyond
// it in order): an initiator waiting for a responder that cannot start would hold its
// slot. When one stream fails, the other is half-closed, so that the server ends it as
// well (INVALID_ARGUMENT, an exchange ended early) and counts it: every exchange is two
// RPCs at the server, and the operation fails with the first failure. `done` is called
// once, after both streams' OnDone; `p` must outlive that (the workload's CallFn holds it).
void StartKeyExchangeCall(const KeyExchangeCallParams& p, Stub& stub, grpc::ClientContext* ctx,
                          std::function<void(grpc::Status)> done);

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_KEY_EXCHANGE_CALL_H_
