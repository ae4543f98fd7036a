// scenarios_study.cc — the blockchain study's scenarios: baseline (mean latency of SM2
// public-key encryption vs HPKE hybrid encryption and their P-256 and RSA counterparts),
// load (the daily-capacity estimate) and concurrency (the throughput peak).
#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/paper_figures.h"
#include "clients/smcrypt-load/scenarios_internal.h"
#include "clients/smcrypt/algorithm_names.h"

namespace smcrypt::load::scenario {

using cli::AlgorithmName;

// ---- baseline ---------------------------------------------------------------------

absl::StatusOr<ScenarioReport> Baseline(const Config& config, Context& ctx) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "baseline";
  rep.description =
      "one caller, one request at a time; SM2 public-key encryption (\"ECC\") vs HPKE "
      "hybrid encryption (\"ECC+AES\"), with the P-256 and RSA counterparts";
  const std::vector<size_t> sizes =
      config.sizes.empty()
          ? std::vector<size_t>{512, kKiB, 2 * kKiB, 10 * kKiB, 20 * kKiB, 30 * kKiB, 512 * kKiB, kMiB}
          : config.sizes;
  const std::vector<v1::Algorithm> algs =
      AlgsOr(config, {v1::SM2, v1::HPKE_SM2_SM3_SM4GCM, v1::HPKE_P256_SHA256_AES128GCM,
                      v1::RSA_2048_OAEP});
  const absl::Duration cap = config.duration.value_or(absl::Seconds(2));
  const int64_t max_ops = config.requests.value_or(20);
  // mean latency (ms) per (op, size, alg)
  std::map<std::pair<int, size_t>, std::map<v1::Algorithm, double>> mean;
  for (int dec = 0; dec < 2; ++dec) {
    for (size_t size : sizes) {
      for (v1::Algorithm alg : algs) {
        absl::StatusOr<std::string> rpc = EncryptionRpc(alg, dec == 1);
        if (!rpc.ok()) return rpc.status();
        absl::StatusOr<Step> s = m.Cell({*rpc, alg, size}, Closed(1, cap, max_ops));
        if (!s.ok()) return s.status();
        mean[{dec, size}][alg] = s->result.latency.Mean() / 1e6;
        rep.steps.push_back(std::move(*s));
      }
    }
  }
  Table t;
  t.id = "baseline_schemes";
  t.title = "Mean latency per operation (ms), one caller; ratio = SM2 time / HPKE-SM2-SM3-SM4GCM time "
            "(> 1: the hybrid scheme is faster)";
  t.columns = {"op", "size"};
  for (v1::Algorithm a : algs) t.columns.push_back(AlgorithmName(a));
  const bool both = std::count(algs.begin(), algs.end(), v1::SM2) &&
                    std::count(algs.begin(), algs.end(), v1::HPKE_SM2_SM3_SM4GCM);
  if (both) t.columns.push_back("SM2 / HPKE-SM");
  for (const auto& [key, by_alg] : mean) {
    std::vector<std::string> row = {key.first ? "decrypt" : "encrypt", SizeName(key.second)};
    for (v1::Algorithm a : algs) row.push_back(F(by_alg.at(a), 3));
    if (both) row.push_back(Ratio(by_alg.at(v1::SM2), by_alg.at(v1::HPKE_SM2_SM3_SM4GCM), 2));
    t.rows.push_back(row);
  }
  t.label_columns = {0, 1};
  for (size_t i = 0; i < algs.size(); ++i) t.value_columns.push_back(static_cast<int>(2 + i));
  t.y_label = "mean latency (ms)";
  t.log_y = true;
  rep.tables.push_back(t);
  return rep;
}

// ---- load -------------------------------------------------------------------------

absl::StatusOr<ScenarioReport> Load(const Config& config, Context& ctx, absl::Duration def) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "load";
  const size_t size = config.sizes.empty() ? 512 : config.sizes.front();
  const int conc = config.concurrency.value_or(1);
  const absl::Duration duration = config.duration.value_or(def);
  rep.description = absl::StrCat(SizeName(size), " encryptions for ", absl::FormatDuration(duration),
                                 " per scheme, ", conc, " caller", conc == 1 ? "" : "s",
                                 "; daily capacity = rate x 8 h x 0.2 / 0.8");
  const std::vector<v1::Algorithm> algs = AlgsOr(config, {v1::SM2, v1::HPKE_SM2_SM3_SM4GCM});
  Table t;
  t.id = "load_capacity";
  t.title = "Load: totals, mean rate and the study's daily-capacity estimate (study: Java ECC / "
            "ECC+AES on an i7-9750H, 5 min, one caller)";
  t.columns = {"scheme", "study name", "total", "seconds", "mean rate /s", "daily capacity",
               "study total (5 min)", "study daily capacity"};
  for (v1::Algorithm alg : algs) {
    absl::StatusOr<std::string> rpc = EncryptionRpc(alg, false);
    if (!rpc.ok()) return rpc.status();
    absl::StatusOr<Step> s = m.Cell({*rpc, alg, size}, Closed(conc, duration, config.requests.value_or(0)));
    if (!s.ok()) return s.status();
    const RunResult& r = s->result;
    const double daily = paper::DailyCapacity(r.OpsPerSecond());
    const std::string study = StudyName(alg);
    std::string st_total = "-", st_daily = "-";
    if (study == "ECC") {
      st_total = absl::StrFormat("%.0f", paper::kLoadTotalEcc);
      st_daily = absl::StrFormat("%.2fM", paper::kDailyCapacityEcc / 1e6);
    } else if (study == "ECC+AES") {
      st_total = absl::StrFormat("%.0f", paper::kLoadTotalEccAes);
      st_daily = absl::StrFormat("%.2fM", paper::kDailyCapacityEccAes / 1e6);
    }
    t.rows.push_back({s->scheme, study.empty() ? "-" : study, absl::StrCat(r.ops_ok),
                      F(r.seconds, 1), F(r.OpsPerSecond(), 1), absl::StrFormat("%.2fM", daily / 1e6),
                      st_total, st_daily});
    rep.summary.push_back({absl::StrCat("ops_per_second.", s->algorithm), r.OpsPerSecond()});
    rep.summary.push_back({absl::StrCat("daily_capacity.", s->algorithm), daily});
    rep.steps.push_back(std::move(*s));
  }
  rep.tables.push_back(t);
  return rep;
}

// ---- concurrency ------------------------------------------------------------------

absl::StatusOr<ScenarioReport> Concurrency(const Config& config, Context& ctx,
                                           std::vector<int> def_steps, absl::Duration def) {
  Measurer m{config, ctx};
  ScenarioReport rep;
  rep.name = "concurrency";
  const size_t size = config.sizes.empty() ? 512 : config.sizes.front();
  const std::vector<int> steps = config.steps.empty() ? def_steps : config.steps;
  const absl::Duration duration = config.duration.value_or(def);
  rep.description = absl::StrCat(SizeName(size), " encryptions, closed loop, ",
                                 absl::FormatDuration(duration),
                                 " per step (then the operations in flight drain)");
  const std::vector<v1::Algorithm> algs = AlgsOr(config, {v1::SM2, v1::HPKE_SM2_SM3_SM4GCM});
  Table t;
  t.id = "concurrency_peak";
  t.title = "Concurrency: the throughput peak per scheme (study: 363.5/s ECC, 368.2/s ECC+AES, "
            "both at 20,000 concurrent)";
  t.columns = {"scheme", "study name", "peak ops/s", "at in flight", "p99 ms there",
               "errors (all steps)", "max in flight (client)", "max in flight (server)",
               "study peak /s"};
  double total_errors = 0, max_client = 0, max_server = 0;
  for (v1::Algorithm alg : algs) {
    absl::StatusOr<std::string> rpc = EncryptionRpc(alg, false);
    if (!rpc.ok()) return rpc.status();
    const Step* peak = nullptr;
    int64_t errors = 0, mc = 0;
    double ms = 0;
    const size_t first = rep.steps.size();
    for (int c : steps) {
      absl::StatusOr<Step> s =
          m.Cell({*rpc, alg, size}, Closed(c, duration, config.requests.value_or(0)));
      if (!s.ok()) return s.status();
      rep.steps.push_back(std::move(*s));
    }
    for (size_t i = first; i < rep.steps.size(); ++i) {
      const Step& s = rep.steps[i];
      if (peak == nullptr || s.result.OpsPerSecond() > peak->result.OpsPerSecond()) peak = &s;
      errors += s.result.ops_failed;
      mc = std::max(mc, s.result.max_inflight);
      ms = std::max(ms, s.result.server_inflight_peak);
    }
    const std::string study = StudyName(alg);
    const double study_peak = study == "ECC"       ? paper::kPeakRateEcc
                              : study == "ECC+AES" ? paper::kPeakRateEccAes
                                                   : 0;
    t.rows.push_back({AlgorithmName(alg), study.empty() ? "-" : study,
                      F(peak->result.OpsPerSecond(), 1), absl::StrCat(peak->concurrency),
                      F(peak->result.latency.ValueAtPercentile(99) / 1e6, 1), absl::StrCat(errors),
                      absl::StrCat(mc), ms > 0 ? absl::StrFormat("%.0f", ms) : "-",
                      study_peak > 0 ? F(study_peak, 1) : "-"});
    rep.summary.push_back({absl::StrCat("peak_ops_per_second.", AlgorithmName(alg)),
                           peak->result.OpsPerSecond()});
    rep.summary.push_back({absl::StrCat("peak_concurrency.", AlgorithmName(alg)),
                           static_cast<double>(peak->concurrency)});
    total_errors += static_cast<double>(errors);
    max_client = std::max(max_client, static_cast<double>(mc));
    max_server = std::max(max_server, ms);
  }
  t.note = "in flight (server): smcrypt_inflight_requests sampled about once a second, the calls "
           "smcryptd has started and not finished; the others wait in the HTTP/2 connections";
  rep.summary.push_back({"errors", total_errors});
  rep.summary.push_back({"max_inflight_client", max_client});
  rep.summary.push_back({"max_inflight_server", max_server});
  rep.tables.push_back(t);
  return rep;
}

}  // namespace smcrypt::load::scenario
