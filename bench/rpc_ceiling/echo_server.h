// echo_server.h — the ceiling: a bare gRPC callback server that answers every unary call,
// whatever its method, with the bytes it received.
#ifndef SMCRYPT_BENCH_RPC_CEILING_ECHO_SERVER_H_
#define SMCRYPT_BENCH_RPC_CEILING_ECHO_SERVER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace smcrypt::rpc_ceiling {

// kEchoMethod is the method path the client sends echo calls on. The server answers any
// path the same way; this one just names what is measured.
inline constexpr char kEchoMethod[] = "/smcrypt.rpc_ceiling.Echo/Echo";

// ServeEcho listens on `address` (host:port; port 0 picks a free port) with gRPC's default
// server options except the message limits, which are smcryptd's: receive at most
// `max_message_bytes`, send any size. Every call gets one grpc::CallbackGenericService
// reactor that reads one message and writes it back with status OK (the reply is the
// request's ByteBuffer, so its slices are shared, not copied); no interceptors, no health
// or reflection service. It logs "echo listening on HOST:PORT" to stderr and serves until
// SIGTERM or SIGINT, then shuts down and returns OK. An address it cannot bind is
// UNAVAILABLE.
absl::Status ServeEcho(const std::string& address, uint64_t max_message_bytes);

}  // namespace smcrypt::rpc_ceiling

#endif  // SMCRYPT_BENCH_RPC_CEILING_ECHO_SERVER_H_
