// workload.h — what smcrypt-load sends: keys drawn once through GenerateKeyPair, request
// payloads, and the Operation (one or more prepared unary calls) for an RPC, algorithm
// and payload size. Decrypt-side workloads are prepared by encrypting once.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_WORKLOAD_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_WORKLOAD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/smcrypt-load/runner.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::load {

// The unary RPCs smcrypt-load can drive (--rpc values, as named in crypto.proto).
inline constexpr const char* kUnaryRpcs[] = {
    "Hash",          "Hmac",          "Sign",          "Verify",
    "Encrypt",       "Decrypt",       "PublicKeyEncrypt", "PublicKeyDecrypt",
    "HybridEncrypt", "HybridDecrypt", "GenerateRandom", "GenerateKeyPair",
    "GetPublicKey",  "GetServerInfo", "KeyExchange"};

// The batch RPCs: one RPC of WorkloadSpec::batch_items copies of the request of the RPC
// their name starts with.
inline constexpr const char* kBatchRpcs[] = {"HashBatch", "SignBatch", "VerifyBatch",
                                             "EncryptBatch", "HybridEncryptBatch"};

// WorkloadSpec names one workload.
struct WorkloadSpec {
  std::string rpc;                   // one of kUnaryRpcs or kBatchRpcs
  smcrypt::v1::Algorithm algorithm;  // ignored by GenerateRandom
  size_t size = 0;                   // payload bytes (message, plaintext, random length)
  size_t batch_items = 16;           // items of a *Batch RPC (each `size` bytes)
};

// Workload is a prepared Operation and how it is labelled.
struct Workload {
  Operation op;
  int blocks = 1;  // RSA-OAEP: the payload split into this many maximum-size blocks
  size_t block_size = 0;
};

// MaxOaepPlaintext is RSAES-OAEP's plaintext limit with SHA-256 (k - 66 bytes): 190 for
// RSA-2048, 318 for RSA-3072; 0 for other algorithms.
size_t MaxOaepPlaintext(smcrypt::v1::Algorithm alg);

// Preparer makes workloads. Its own RPCs (GenerateKeyPair once per algorithm, one
// encryption or signature per decrypt/verify workload) are synchronous and counted in
// rpcs(), so a run's total can be compared with the server's counters.
class Preparer {
 public:
  Preparer(std::shared_ptr<Stub> stub, absl::Duration timeout, uint64_t seed);

  absl::StatusOr<Workload> Make(const WorkloadSpec& spec);

  // KeyPair returns the DER key pair of `alg`, drawn by GenerateKeyPair on first use.
  absl::StatusOr<const smcrypt::v1::GenerateKeyPairResponse*> KeyPair(smcrypt::v1::Algorithm alg);
  // Payload returns `size` pseudo-random bytes (fixed seed; not secret).
  std::string Payload(size_t size);
  // ServerInfo calls GetServerInfo (counted).
  absl::StatusOr<smcrypt::v1::GetServerInfoResponse> ServerInfo();

  // SetKeyIds makes every workload of an algorithm in `key_ids` name that key of the
  // server's keyring (KeyRef.key_id) instead of sending inline key material; the others
  // keep inline keys (symmetric keys from the seed, key pairs from GenerateKeyPair).
  void SetKeyIds(std::map<smcrypt::v1::Algorithm, std::string> key_ids) {
    key_ids_ = std::move(key_ids);
  }
  // SetMetadata is the request metadata of the measured calls (RunOptions::metadata),
  // for the calls a workload starts itself (KeyExchange's responder stream).
  void SetMetadata(std::vector<std::pair<std::string, std::string>> metadata) {
    metadata_ = std::move(metadata);
  }

  // SymmetricRef sets `ref` to the key_id of `alg` or to the inline `key`.
  void SymmetricRef(smcrypt::v1::Algorithm alg, const std::string& key,
                    smcrypt::v1::KeyRef* ref) const;

  // KeyRefFor sets `ref` to the key_id of `alg` or to the inline private or public DER key
  // of the pair KeyPair draws.
  absl::Status KeyRefFor(smcrypt::v1::Algorithm alg, bool private_key, smcrypt::v1::KeyRef* ref);

  int64_t rpcs() const { return rpcs_; }
  Stub& stub() { return *stub_; }
  // Count records `n` RPCs made on stub() by a caller (the streaming measurements).
  void Count(int64_t n) { rpcs_ += n; }

 private:
  // MakeArgs is one Make call's spec, its RPC without "Batch", the copies of a *Batch RPC
  // (0: unary) and the payload (workload.cc).
  struct MakeArgs;
  // Make's builders, one per RPC family: each checks the algorithm against the RPC and
  // adds the calls of one operation to `w`, making what a decrypting or verifying
  // workload needs first (one encryption or signature, counted in rpcs()).
  absl::Status MakeHash(const MakeArgs& args, Workload& w);
  absl::Status MakeHmac(const MakeArgs& args, Workload& w);
  absl::Status MakeSignature(const MakeArgs& args, Workload& w);
  absl::Status MakeSymmetric(const MakeArgs& args, Workload& w);
  absl::Status MakePublicKeyEncryption(const MakeArgs& args, Workload& w);
  absl::Status MakeHybrid(const MakeArgs& args, Workload& w);
  absl::Status MakeKeyPair(const MakeArgs& args, Workload& w);
  absl::Status MakeGetPublicKey(const MakeArgs& args, Workload& w);
  absl::Status MakeKeyExchange(const MakeArgs& args, Workload& w);

  void Prepare(grpc::ClientContext* ctx) const;

  std::shared_ptr<Stub> stub_;
  absl::Duration timeout_;
  uint64_t seed_;
  int64_t rpcs_ = 0;
  std::map<int, smcrypt::v1::GenerateKeyPairResponse> keys_;
  std::map<smcrypt::v1::Algorithm, std::string> key_ids_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::string symmetric_key_32_;
};

// PayloadCheck checks a plaintext that arrives in pieces (a decrypting stream's responses)
// against the `total` bytes the streams send: `chunk` repeated, the last copy cut short.
// Add each piece in order, then Finish.
class PayloadCheck {
 public:
  PayloadCheck(std::string chunk, size_t total) : chunk_(std::move(chunk)), total_(total) {}
  void Add(std::string_view piece);
  // Finish is OK when exactly the expected bytes arrived; otherwise DATA_LOSS naming the
  // first differing byte or the length received.
  absl::Status Finish() const;

 private:
  std::string chunk_;
  size_t total_;
  size_t received_ = 0;
  std::optional<size_t> first_difference_;
};

// RpcError converts a failed grpc::Status into an absl::Status naming `what`.
absl::Status RpcError(const std::string& what, const grpc::Status& status);

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_WORKLOAD_H_
