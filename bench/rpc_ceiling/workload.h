// workload.h — the RPCs smcrypt-rpc-ceiling measures: each request serialized once into a
// ByteBuffer, sent on its method path to smcryptd and, byte for byte the same, to the echo
// server under kEchoMethod.
#ifndef SMCRYPT_BENCH_RPC_CEILING_WORKLOAD_H_
#define SMCRYPT_BENCH_RPC_CEILING_WORKLOAD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"

namespace smcrypt::rpc_ceiling {

// Workload is one measured RPC. For "echo" both `method` and the compared side are the
// echo server (the row shows how far two echo runs differ: the measurement's noise).
struct Workload {
  std::string name;         // "echo", "Hash", "Encrypt", ...
  std::string method;       // "/smcrypt.v1.CryptoService/Hash"; kEchoMethod for "echo"
  std::string description;  // "SM3, 512 B"
  grpc::ByteBuffer request;  // the serialized request, shared by every call
  size_t request_bytes = 0;
};

// WorkloadOptions: the keyring entries and sizes of the requests. `payload_bytes` is the
// data of Hash, Encrypt, HybridEncrypt, PublicKeyEncrypt and echo; `sign_bytes` the
// message of Sign and Verify. Payloads are pseudo-random bytes from `seed`.
struct WorkloadOptions {
  std::string sm2_key_id = "signing";  // keyring PRIVATE KEY entry, an SM2 key pair
  std::string sm4_key_id = "data";     // keyring SM4 KEY entry
  size_t payload_bytes = 512;
  size_t sign_bytes = 32;
  uint64_t seed = 1;
  absl::Duration timeout = absl::Seconds(30);
};

// KnownWorkloads lists the RPC names BuildWorkloads takes, in table order.
const std::vector<std::string>& KnownWorkloads();

// BuildWorkloads builds the requests of `names` (each one of KnownWorkloads()) and checks
// each once before anything is timed: the echo server must return the request's bytes
// unchanged, and smcryptd must answer OK with a plausible response — Hash the SM3 digest
// of the payload (OpenSSL EVP_sm3), Encrypt SM4-GCM a ciphertext of the payload's size with
// a 12-byte nonce and a 16-byte tag, Sign a signature, Verify (of that signature, obtained
// through Sign first) `valid: true`, HybridEncrypt the payload plus 88 bytes, and
// PublicKeyEncrypt (C1C3C2) the payload plus 97 bytes. `smcryptd` and `echo` are one
// channel's stubs of each server. An unknown name is INVALID_ARGUMENT; a failed call or
// check is FAILED_PRECONDITION naming the RPC, so nothing is measured on failing calls.
absl::StatusOr<std::vector<Workload>> BuildWorkloads(const std::vector<std::string>& names,
                                                     const WorkloadOptions& options,
                                                     grpc::GenericStub& smcryptd,
                                                     grpc::GenericStub& echo);

// ToByteBuffer copies `bytes` into a single-slice ByteBuffer; ToBytes flattens one.
grpc::ByteBuffer ToByteBuffer(const std::string& bytes);
std::string ToBytes(const grpc::ByteBuffer& buffer);

}  // namespace smcrypt::rpc_ceiling

#endif  // SMCRYPT_BENCH_RPC_CEILING_WORKLOAD_H_
