// scenarios_paper.cc — the paper scenario: the published ratio and throughput tables
// (Hu 2021 tables 2, 5, 7, 8 and 9; the SM4 vs AES-GCM and the SM3 vs SHA-256 throughput
// studies) beside the same figures measured through smcryptd, one step per table.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bench/paper_figures.h"
#include "clients/smcrypt-load/scenarios_internal.h"
#include "clients/smcrypt/algorithm_names.h"

namespace smcrypt::load::scenario {
namespace {

using cli::AlgorithmName;

// PaperRun is what the table steps share: the measurer, the limits of every cell and the
// report that collects the steps and the tables.
struct PaperRun {
  Measurer m;
  absl::Duration cap;
  int64_t max_ops;
  ScenarioReport& rep;

  // Cell measures one cell (one caller) and returns its mean latency (ns); 0 when every
  // operation failed.
  absl::StatusOr<double> Cell(const std::string& rpc, v1::Algorithm alg, size_t size) {
    absl::StatusOr<Step> s = m.Cell({rpc, alg, size}, Closed(1, cap, max_ops));
    if (!s.ok()) return s.status();
    const double mean = s->result.ops_ok > 0 ? s->result.latency.Mean() : 0;
    rep.steps.push_back(std::move(*s));
    return mean;
  }
};

// SMCRYPT_CELL declares `var`, the mean latency of a cell, and returns the error of a
// cell that could not be prepared.
#define SMCRYPT_CELL(var, rpc, alg, size)                   \
  absl::StatusOr<double> var##_or = run.Cell(rpc, alg, size); \
  if (!var##_or.ok()) return var##_or.status();             \
  const double var = *var##_or

// SM3 / SHA-256 running time.
absl::Status HashRatioTable(PaperRun& run) {
  Table t;
  t.id = "paper_sm3_sha256";
  t.title = "SM3 / SHA-256 running-time ratio (Hu 2021 table 2; > 1: SM3 is slower)";
  t.columns = {"size", "paper vendor A", "paper OpenSSL", "smcryptd", "SM3 mean us",
               "SHA-256 mean us"};
  for (size_t i = 0; i < 6; ++i) {
    const size_t n = paper::kHashSizes[i];
    SMCRYPT_CELL(sm3, "Hash", v1::SM3, n);
    SMCRYPT_CELL(sha, "Hash", v1::SHA_256, n);
    t.rows.push_back({SizeName(n), F(paper::kSm3OverSha256VendorA[i], 4),
                      F(paper::kSm3OverSha256OpenSsl[i], 4), Ratio(sm3, sha, 4),
                      F(sm3 / 1e3, 1), F(sha / 1e3, 1)});
  }
  t.label_columns = {0};
  t.value_columns = {1, 2, 3};
  t.y_label = "SM3 time / SHA-256 time";
  t.reference = 1;
  run.rep.tables.push_back(t);
  return absl::OkStatus();
}

// Signatures.
absl::Status SignatureTable(PaperRun& run) {
  Table t;
  t.id = "paper_signatures";
  t.title = "Signature running-time ratios over a 32-byte message (Hu 2021 table 5; > 1: the "
            "numerator is slower)";
  t.columns = {"ratio", "op", "paper", "smcryptd"};
  const char* rpcs[2] = {"Sign", "Verify"};
  double sm2[2], p256[2], k1[2];
  for (int o = 0; o < 2; ++o) {
    SMCRYPT_CELL(a, rpcs[o], v1::SM2, 32);
    SMCRYPT_CELL(b, rpcs[o], v1::ECDSA_P256, 32);
    SMCRYPT_CELL(c, rpcs[o], v1::ECDSA_SECP256K1, 32);
    sm2[o] = a;
    p256[o] = b;
    k1[o] = c;
  }
  for (int o = 0; o < 2; ++o) {
    t.rows.push_back({"ECDSA-secp256k1 / SM2", o ? "verify" : "sign",
                      F(paper::kSignEcdsaK1OverSm2[o]), Ratio(k1[o], sm2[o], 2)});
  }
  for (int o = 0; o < 2; ++o) {
    t.rows.push_back({"ECDSA-secp256k1 / ECDSA-P256", o ? "verify" : "sign",
                      F(paper::kSignEcdsaK1OverP256[o]), Ratio(k1[o], p256[o], 2)});
  }
  t.label_columns = {0, 1};
  t.value_columns = {2, 3};
  t.y_label = "running-time ratio";
  t.log_y = true;
  t.reference = 1;
  run.rep.tables.push_back(t);
  return absl::OkStatus();
}

// Public-key encryption.
absl::Status PublicKeyEncryptionTable(PaperRun& run) {
  Table t;
  t.id = "paper_pke";
  t.title = "Public-key encryption running time X / SM2 (Hu 2021 table 7; paper: X / OpenSSL "
            "SM2; RSA beyond one OAEP block: consecutive maximum-size blocks)";
  t.columns = {"op", "size", "paper RSA-2048", "paper RSA-3072", "smcryptd RSA-2048",
               "smcryptd RSA-3072", "SM2 mean us"};
  for (int o = 0; o < 2; ++o) {
    const std::string rpc = o ? "PublicKeyDecrypt" : "PublicKeyEncrypt";
    for (size_t i = 0; i < 7; ++i) {
      const size_t n = paper::kPkeSizes[i];
      SMCRYPT_CELL(sm2, rpc, v1::SM2, n);
      SMCRYPT_CELL(r2, rpc, v1::RSA_2048_OAEP, n);
      SMCRYPT_CELL(r3, rpc, v1::RSA_3072_OAEP, n);
      t.rows.push_back({o ? "decrypt" : "encrypt", SizeName(n), F(paper::kPkeRatio[o][1][i], 3),
                        F(paper::kPkeRatio[o][2][i], 3), Ratio(r2, sm2), Ratio(r3, sm2),
                        F(sm2 / 1e3, 1)});
    }
  }
  t.label_columns = {0, 1};
  t.value_columns = {2, 3, 4, 5};
  t.y_label = "running time / SM2 running time";
  t.log_y = true;
  t.reference = 1;
  run.rep.tables.push_back(t);
  return absl::OkStatus();
}

// SM4 / AES-128 in ECB (mode 0) or CBC (mode 1).
absl::Status BlockModeTable(PaperRun& run, int mode) {
  const std::string mname = mode ? "CBC" : "ECB";
  const v1::Algorithm sm4 = mode ? v1::SM4_CBC : v1::SM4_ECB;
  const v1::Algorithm aes = mode ? v1::AES_128_CBC : v1::AES_128_ECB;
  const auto& pub = mode ? paper::kCbcRatio : paper::kEcbRatio;
  Table t;
  t.id = absl::StrCat("paper_sm4_", mode ? "cbc" : "ecb");
  t.title = absl::StrCat("SM4-", mname, " / AES-128-", mname,
                         " throughput ratio (Hu 2021 table ", mode ? 9 : 8,
                         "; paper: OpenSSL SM4 / AES-EVP = its SM4/AES over AESEVP/AES; < 1: SM4 "
                         "is slower)");
  t.columns = {"op", "size", "paper OpenSSL SM4/AES-EVP", "smcryptd SM4/AES-128", "SM4 MB/s",
               "AES-128 MB/s"};
  for (int o = 0; o < 2; ++o) {
    const std::string rpc = o ? "Decrypt" : "Encrypt";
    for (size_t i = 0; i < 9; ++i) {
      const size_t n = paper::kBlockSizes[i];
      SMCRYPT_CELL(s, rpc, sm4, n);
      SMCRYPT_CELL(a, rpc, aes, n);
      t.rows.push_back({o ? "decrypt" : "encrypt", SizeName(n),
                        F(pub[o][1][i] / pub[o][2][i], 4), Ratio(a, s, 4),
                        F(s > 0 ? n / (s / 1e9) / 1e6 : 0, 1), F(a > 0 ? n / (a / 1e9) / 1e6 : 0, 1)});
    }
  }
  t.label_columns = {0, 1};
  t.value_columns = {2, 3};
  t.y_label = "SM4 throughput / AES-128 throughput";
  t.log_y = true;
  t.reference = 1;
  run.rep.tables.push_back(t);
  return absl::OkStatus();
}

// SM4 vs AES-GCM throughput at 1 KiB, 1 MiB and the streamed `big` bytes.
absl::Status GcmTable(PaperRun& run, size_t big) {
  Table t;
  t.id = "paper_gcm";
  t.title = absl::StrCat("Symmetric encryption throughput, MB/s (SM4 vs AES-GCM study: published "
                         "at 1 GiB only, OpenSSL 3.0.2); ", SizeName(big), " through EncryptStream");
  t.columns = {"algorithm", "size", "smcryptd MB/s", "published software MB/s",
               "published hardware MB/s"};
  for (v1::Algorithm alg : {v1::SM4_GCM, v1::AES_128_GCM, v1::SM4_ECB, v1::AES_256_GCM}) {
    const std::string name = AlgorithmName(alg);
    const paper::GcmFigure* fig = nullptr;
    for (const auto& g : paper::kGcm1GiB) {
      if (name == g.algorithm) fig = &g;
    }
    for (size_t n : {kKiB, kMiB}) {
      SMCRYPT_CELL(mean, "Encrypt", alg, n);
      t.rows.push_back({name, SizeName(n), F(mean > 0 ? n / (mean / 1e9) / 1e6 : 0, 1), "-", "-"});
    }
    absl::StatusOr<Step> s = run.m.Stream("EncryptStream", alg, big);
    if (!s.ok()) return s.status();
    t.rows.push_back({name, SizeName(big), F(s->result.MegabytesPerSecond(), 1),
                      fig ? F(fig->software_mb_s, 0) : "-", fig ? F(fig->hardware_mb_s, 0) : "-"});
    run.rep.steps.push_back(std::move(*s));
  }
  t.label_columns = {0, 1};
  t.value_columns = {2, 3, 4};
  t.y_label = "MB/s";
  t.log_y = true;
  run.rep.tables.push_back(t);
  return absl::OkStatus();
}

// SM3 vs SHA-256 throughput.
absl::Status HashThroughputTable(PaperRun& run, size_t big) {
  Table t;
  t.id = "paper_sm3_sha256_throughput";
  t.title = absl::StrCat("SM3 vs SHA-256 throughput (SM3 vs SHA-256 study, Xeon Gold 6338); ",
                         SizeName(big), " through HashStream");
  t.columns = {"algorithm", "size", "unit", "smcryptd", "published"};
  for (v1::Algorithm alg : {v1::SM3, v1::SHA_256}) {
    const bool sm3 = alg == v1::SM3;
    SMCRYPT_CELL(k, "Hash", alg, kKiB);
    t.rows.push_back({AlgorithmName(alg), "1 KiB", "ops/s", F(k > 0 ? 1e9 / k : 0, 0),
                      F(sm3 ? paper::kSm3Ops1KiB : paper::kSha256Ops1KiB, 0)});
    SMCRYPT_CELL(mb, "Hash", alg, kMiB);
    t.rows.push_back({AlgorithmName(alg), "1 MiB", "MB/s", F(mb > 0 ? kMiB / (mb / 1e9) / 1e6 : 0, 1),
                      F((sm3 ? paper::kSm3GBs1MiB : paper::kSha256GBs1MiB) * 1000, 0)});
    absl::StatusOr<Step> s = run.m.Stream("HashStream", alg, big);
    if (!s.ok()) return s.status();
    t.rows.push_back({AlgorithmName(alg), SizeName(big), "MB/s", F(s->result.MegabytesPerSecond(), 1),
                      big == (size_t{1} << 30)
                          ? F((sm3 ? paper::kSm3GBs1GiB : paper::kSha256GBs1GiB) * 1000, 0)
                          : "-"});
    run.rep.steps.push_back(std::move(*s));
  }
  t.note = "published 1 KiB figures are operations per second, the others GB/s shown as MB/s";
  t.label_columns = {0, 1, 2};
  t.value_columns = {3, 4};
  t.y_label = "ops/s (1 KiB) or MB/s";
  t.log_y = true;
  run.rep.tables.push_back(t);
  return absl::OkStatus();
}

#undef SMCRYPT_CELL

}  // namespace

absl::StatusOr<ScenarioReport> Paper(const Config& config, Context& ctx) {
  ScenarioReport rep;
  rep.name = "paper";
  rep.description =
      "the published ratio and throughput tables beside the same figures measured through "
      "smcryptd (one caller; every figure includes the RPC round trip, which dominates "
      "small payloads)";
  PaperRun run{Measurer{config, ctx}, config.duration.value_or(absl::Milliseconds(500)),
               config.requests.value_or(2000), rep};
  const size_t big = config.stream_bytes;
  // The tables in order; the first that cannot be prepared ends the scenario.
  if (absl::Status st = HashRatioTable(run); !st.ok()) return st;
  if (absl::Status st = SignatureTable(run); !st.ok()) return st;
  if (absl::Status st = PublicKeyEncryptionTable(run); !st.ok()) return st;
  for (int mode = 0; mode < 2; ++mode) {
    if (absl::Status st = BlockModeTable(run, mode); !st.ok()) return st;
  }
  if (absl::Status st = GcmTable(run, big); !st.ok()) return st;
  if (absl::Status st = HashThroughputTable(run, big); !st.ok()) return st;
  return rep;
}

}  // namespace smcrypt::load::scenario
