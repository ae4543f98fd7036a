// scenarios.cc — RunScenario, the helpers the scenario files share (scenarios_internal.h)
// and the generic `run` scenario. The others: scenarios_study.cc (baseline, load,
// concurrency) and scenarios_paper.cc (paper), over Measurer (scenarios_measure.cc).
#include "clients/smcrypt-load/scenarios.h"

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/smcrypt-load/scenarios_internal.h"
#include "clients/smcrypt/algorithm_names.h"

namespace smcrypt::load {
namespace scenario {

using cli::AlgorithmName;

std::string F(double v, int digits) {
  if (!std::isfinite(v) || v <= 0) return "-";
  return absl::StrFormat("%.*f", digits, v);
}
std::string Ratio(double num, double den, int digits) {
  return num > 0 && den > 0 ? absl::StrFormat("%.*f", digits, num / den) : "-";
}

bool IsHybrid(v1::Algorithm alg) {
  return alg == v1::HPKE_SM2_SM3_SM4GCM || alg == v1::HPKE_P256_SHA256_AES128GCM;
}

absl::StatusOr<std::string> EncryptionRpc(v1::Algorithm alg, bool decrypt) {
  if (IsHybrid(alg)) return std::string(decrypt ? "HybridDecrypt" : "HybridEncrypt");
  if (alg == v1::SM2 || alg == v1::RSA_2048_OAEP || alg == v1::RSA_3072_OAEP) {
    return std::string(decrypt ? "PublicKeyDecrypt" : "PublicKeyEncrypt");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--algs: ", AlgorithmName(alg),
      " is not an encryption scheme (SM2, RSA-2048-OAEP, RSA-3072-OAEP, HPKE-*)"));
}

// The blockchain study's names for the two schemes.
std::string StudyName(v1::Algorithm alg) {
  if (IsHybrid(alg)) return "ECC+AES";
  return alg == v1::SM2 ? "ECC" : "";
}

std::string OpName(std::string rpc) {
  if (absl::EndsWith(rpc, "Batch")) rpc.resize(rpc.size() - 5);
  if (rpc == "Hash" || rpc == "HashStream") return "hash";
  if (rpc == "Hmac") return "mac";
  if (rpc == "Sign") return "sign";
  if (rpc == "Verify") return "verify";
  if (rpc == "GenerateRandom") return "random";
  if (rpc == "GenerateKeyPair") return "keygen";
  if (rpc == "GetPublicKey") return "public key";
  if (rpc == "GetServerInfo") return "info";
  if (rpc == "KeyExchange") return "key exchange";
  if (rpc.find("Decrypt") != std::string::npos) return "decrypt";
  return "encrypt";
}

RunOptions Closed(int concurrency, absl::Duration duration, int64_t max_ops) {
  RunOptions o;
  o.concurrency = concurrency;
  o.duration = duration;
  o.max_ops = max_ops;
  return o;
}

std::vector<v1::Algorithm> AlgsOr(const Config& c, std::vector<v1::Algorithm> def) {
  return c.algs.empty() ? def : c.algs;
}

// ---- run (generic) ----------------------------------------------------------------

absl::StatusOr<ScenarioReport> Generic(const Config& config, Context& ctx) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "run";
  if (config.rpc.empty()) return absl::InvalidArgumentError("--scenario run needs --rpc");
  if (config.algs.empty() && config.rpc != "GenerateRandom" && config.rpc != "GetServerInfo") {
    return absl::InvalidArgumentError("--scenario run needs --alg");
  }
  const v1::Algorithm alg = config.algs.empty() ? v1::ALGORITHM_UNSPECIFIED : config.algs.front();
  const size_t size = config.sizes.empty() ? 512 : config.sizes.front();
  if (config.rpc == "HashStream" || config.rpc == "EncryptStream" ||
      config.rpc == "HybridEncryptStream" || config.rpc == "DecryptStream" ||
      config.rpc == "HybridDecryptStream") {
    rep.description = absl::StrCat(config.rpc, " ", AlgorithmName(alg), ", one stream of ",
                                   SizeName(size));
    if (config.concurrency || config.duration || config.requests || config.rate > 0) {
      std::fprintf(stderr,
                   "smcrypt-load: --rpc %s is one stream of --size; --concurrency, --duration, "
                   "--requests and --rate do not apply to it\n",
                   config.rpc.c_str());
    }
    absl::StatusOr<Step> s = m.Stream(config.rpc, alg, size);
    if (!s.ok()) return s.status();
    rep.steps.push_back(std::move(*s));
    return rep;
  }
  RunOptions o;
  o.rate = config.rate;
  o.rate_end = config.rate_end;
  o.concurrency = config.concurrency.value_or(config.rate > 0 ? 1000 : 1);
  o.max_ops = config.requests.value_or(0);
  o.duration = config.duration.value_or(o.max_ops > 0 ? absl::ZeroDuration() : kRunDuration);
  rep.description = absl::StrCat(
      config.rpc, " ", AlgorithmName(alg), " ",
      config.rpc == "KeyExchange" ? "(16-byte K)" : SizeName(size), ", ",
      config.rate > 0 ? absl::StrCat("open loop at ", config.rate,
                                     config.rate_end > 0 ? absl::StrCat(" ramping to ", config.rate_end) : "",
                                     "/s (latency from the scheduled "
                                     "start: coordinated omission corrected), at most ",
                                     o.concurrency, " in flight")
                      : absl::StrCat("closed loop, ", o.concurrency, " in flight"));
  absl::StatusOr<Step> s = m.Cell({config.rpc, alg, size, config.batch_items}, o);
  if (s.ok() && absl::EndsWith(config.rpc, "Batch")) {
    s->note = absl::StrCat(config.rpc, ": ", config.batch_items, " items of ", SizeName(size),
                           " per RPC; an operation is one RPC, a failed item fails it");
  }
  if (!s.ok()) return s.status();
  if (config.rate > 0) {
    const Histogram& h = s->result.service;
    Table t;
    t.title = "Open loop: latency from the actual send (uncorrected, for comparison), ms";
    t.columns = {"mean", "p50", "p90", "p99", "p99.9", "max"};
    t.rows.push_back({F(h.Mean() / 1e6, 3), F(h.ValueAtPercentile(50) / 1e6, 3),
                      F(h.ValueAtPercentile(90) / 1e6, 3), F(h.ValueAtPercentile(99) / 1e6, 3),
                      F(h.ValueAtPercentile(99.9) / 1e6, 3), F(h.max() / 1e6, 3)});
    rep.tables.push_back(t);
  }
  rep.steps.push_back(std::move(*s));
  return rep;
}

}  // namespace scenario

absl::StatusOr<std::vector<ScenarioReport>> RunScenario(const std::string& name,
                                                        const Config& config, Context& ctx) {
  std::vector<ScenarioReport> out;
  auto add = [&](absl::StatusOr<ScenarioReport> r) -> absl::Status {
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
    return absl::OkStatus();
  };
  absl::Status st;
  if (name == "baseline") {
    st = add(scenario::Baseline(config, ctx));
  } else if (name == "load") {
    st = add(scenario::Load(config, ctx, kLoadDuration));
  } else if (name == "concurrency") {
    st = add(scenario::Concurrency(config, ctx,
                                   {std::begin(kDefaultSteps), std::end(kDefaultSteps)},
                                   kConcurrencyStepDuration));
  } else if (name == "paper") {
    st = add(scenario::Paper(config, ctx));
  } else if (name == "quick") {
    st = add(scenario::Load(config, ctx, absl::Seconds(10)));
    if (st.ok()) {
      st = add(scenario::Concurrency(config, ctx, {1, 10, 100, 1000, 10000}, absl::Seconds(4)));
    }
  } else if (name == "run") {
    st = add(scenario::Generic(config, ctx));
  } else {
    st = absl::InvalidArgumentError(absl::StrCat(
        "--scenario ", name, ": expected quick, baseline, load, concurrency, paper or run"));
  }
  if (!st.ok()) return st;
  return out;
}

}  // namespace smcrypt::load
