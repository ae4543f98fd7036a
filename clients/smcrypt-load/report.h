// report.h — smcrypt-load's results and their forms: the readable tables on stdout, JSON
// (--json), CSV (--csv) and SVG charts (--chart-dir).
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_REPORT_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "clients/smcrypt-load/runner.h"

namespace smcrypt::load {

// Step is one measured cell: a workload run once with its labels.
struct Step {
  std::string scheme;     // what is compared, e.g. "SM2" or "HPKE-SM2-SM3-SM4GCM"
  std::string rpc;        // CryptoService method, e.g. "HybridEncrypt"
  std::string algorithm;  // docs/design.md algorithm name
  std::string op;         // encrypt, decrypt, hash, sign, verify, ...
  size_t size = 0;        // payload bytes per operation
  int concurrency = 1;
  double rate = 0;        // open-loop arrival rate (ops/s); 0 closed loop
  int blocks = 1;         // RPCs per operation (RSA-OAEP blocks; KeyExchange 2; else 1)
  std::string note;
  RunResult result;
};

// Table is a derived table (ratios, capacity, peaks), printed after a scenario's steps.
struct Table {
  std::string id;     // file-name stem of its chart, e.g. "paper_sm3_sha256"
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::string note;
  // Chart (written when `value_columns` is not empty): one bar group per row, labelled by
  // the cells of `label_columns`, one bar per column of `value_columns`.
  std::vector<int> label_columns, value_columns;
  std::string y_label;
  bool log_y = false;
  double reference = 0;  // dashed line (e.g. a ratio of 1)
};

// ScenarioReport is one scenario's steps, derived tables and headline figures.
struct ScenarioReport {
  std::string name;
  std::string description;
  std::vector<Step> steps;
  std::vector<Table> tables;
  std::vector<std::pair<std::string, double>> summary;  // e.g. {"peak_ops_per_second", ...}
};

// Report is the whole run.
struct Report {
  std::string version;
  std::string target;
  int connections = 1;
  std::string started_at;  // RFC 3339, UTC
  std::string server_version;
  std::vector<std::pair<std::string, std::string>> server_kernels;  // algorithm -> kernel
  std::vector<ScenarioReport> scenarios;
  int64_t setup_rpcs = 0;     // key generation, ciphertexts for decrypt workloads, info
  int64_t measured_rpcs = 0;  // RPCs of the measured steps
  int64_t warmup_rpcs = 0;    // RPCs of the steps' warm-ups
};

// PrintReport writes the readable tables.
void PrintReport(const Report& report, std::ostream& out);
// ReportJson is the JSON form (schema in clients/smcrypt-load/README.md).
std::string ReportJson(const Report& report);
// ReportCsv is one row per step.
std::string ReportCsv(const Report& report);
// WriteCharts writes the SVG charts of `report` into `dir` (created if missing) and
// returns the paths written.
absl::StatusOr<std::vector<std::string>> WriteCharts(const Report& report, const std::string& dir);

// ReportHtml is a self-contained HTML page (no external resources, no scripts): the step
// and derived tables, and every chart of WriteCharts inline as SVG.
std::string ReportHtml(const Report& report);

// SizeName: "512 B", "1 KiB", "1 MiB", "1 GiB".
std::string SizeName(size_t bytes);

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_REPORT_H_
