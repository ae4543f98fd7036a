// scenarios_internal.h — what smcrypt-load's scenario files share: number formatting, the
// encryption RPC of a scheme, Measurer (one measured step: a closed- or open-loop cell or
// one stream) and the scenarios RunScenario dispatches to. Internal to the scenario
// files: scenarios.cc (RunScenario, run), scenarios_measure.cc (Measurer),
// scenarios_study.cc (baseline, load, concurrency) and scenarios_paper.cc (paper).
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_SCENARIOS_INTERNAL_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_SCENARIOS_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/smcrypt-load/report.h"
#include "clients/smcrypt-load/runner.h"
#include "clients/smcrypt-load/scenarios.h"
#include "clients/smcrypt-load/workload.h"

namespace smcrypt::load::scenario {

namespace v1 = smcrypt::v1;

inline constexpr size_t kKiB = 1024, kMiB = 1024 * 1024;

// F is v with `digits` decimals, or "-" unless v is finite and positive.
std::string F(double v, int digits = 2);
// Ratio is num / den with `digits` decimals, or "-" unless both are positive.
std::string Ratio(double num, double den, int digits = 3);

// IsHybrid: the HPKE suites.
bool IsHybrid(v1::Algorithm alg);
// EncryptionRpc is the unary RPC that encrypts (or decrypts) with `alg`: HybridEncrypt
// for HPKE, PublicKeyEncrypt for SM2 and RSA-OAEP; any other algorithm is an error.
absl::StatusOr<std::string> EncryptionRpc(v1::Algorithm alg, bool decrypt);
// StudyName is the blockchain study's name for the scheme ("ECC", "ECC+AES"), or "".
std::string StudyName(v1::Algorithm alg);
// OpName is a step's operation column for an RPC ("hash", "sign", "encrypt", ...).
std::string OpName(std::string rpc);

// Closed is the RunOptions of a closed loop.
RunOptions Closed(int concurrency, absl::Duration duration, int64_t max_ops);
// AlgsOr is --algs, or `def` without it.
std::vector<v1::Algorithm> AlgsOr(const Config& c, std::vector<v1::Algorithm> def);

// Measurer runs the steps of a scenario with the command line's options.
struct Measurer {
  const Config& config;
  Context& ctx;

  // Cell prepares the workload of `spec` and runs it with `opts` (the command line's
  // timeout, warm-up, metadata, metrics and progress added); `scheme` labels the step
  // (default: the algorithm's name).
  absl::StatusOr<Step> Cell(const WorkloadSpec& spec, RunOptions opts, std::string scheme = "");

  // Stream sends `total` bytes through HashStream, EncryptStream or HybridEncryptStream in
  // 1 MiB messages, one stream, and times it (the payload repeats one pseudo-random 1 MiB
  // chunk); DecryptStream and HybridDecryptStream decrypt that payload's ciphertext, made
  // before the measurement, and a plaintext that differs fails the operation (DATA_LOSS).
  absl::StatusOr<Step> Stream(const std::string& rpc, v1::Algorithm alg, size_t total);

 private:
  // Sealed holds the requests of a decrypting stream, made before the measurement.
  struct Sealed {
    std::vector<v1::DecryptStreamRequest> symmetric;
    std::vector<v1::HybridDecryptStreamRequest> hybrid;
  };

  // SymmetricSeal sends `total` bytes (`chunk` repeated) through EncryptStream in messages
  // of chunk.size(). With `out`, it also returns the DecryptStream requests that decrypt
  // it: the parameters (same key, the nonce drawn, same padding), then each response's
  // ciphertext and tag as one message (GCM/CCM: one message per segment).
  absl::Status SymmetricSeal(grpc::ClientContext& cctx, v1::Algorithm alg, size_t total,
                             const std::string& chunk, std::vector<v1::DecryptStreamRequest>* out);
  // HybridSeal is SymmetricSeal for HybridEncryptStream (the public key; `out` gets the
  // HybridDecryptStream requests: the private key, then each response's ciphertext).
  absl::Status HybridSeal(grpc::ClientContext& cctx, v1::Algorithm alg, size_t total,
                          const std::string& chunk,
                          std::vector<v1::HybridDecryptStreamRequest>* out);
  // Seal makes the requests of decrypting stream `rpc` by running the matching encrypting
  // stream once (a setup RPC, counted by the preparer).
  absl::Status Seal(const std::string& rpc, v1::Algorithm alg, size_t total,
                    const std::string& chunk, Sealed& sealed);
  // SendStream runs the measured stream `rpc` on `cctx`; its outcome is the RPC's status
  // (a decrypting stream's plaintext check included), an unknown `rpc` an error.
  absl::StatusOr<grpc::Status> SendStream(grpc::ClientContext& cctx, const std::string& rpc,
                                          v1::Algorithm alg, size_t total,
                                          const std::string& chunk, Sealed& sealed);
};

// The scenarios (scenarios.h names them).
absl::StatusOr<ScenarioReport> Baseline(const Config& config, Context& ctx);
absl::StatusOr<ScenarioReport> Load(const Config& config, Context& ctx, absl::Duration def);
absl::StatusOr<ScenarioReport> Concurrency(const Config& config, Context& ctx,
                                           std::vector<int> def_steps, absl::Duration def);
absl::StatusOr<ScenarioReport> Paper(const Config& config, Context& ctx);
absl::StatusOr<ScenarioReport> Generic(const Config& config, Context& ctx);

}  // namespace smcrypt::load::scenario

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_SCENARIOS_INTERNAL_H_
