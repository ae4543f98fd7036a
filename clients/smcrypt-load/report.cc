#include "clients/smcrypt-load/report.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/smcrypt-load/svg_chart.h"
#include "nlohmann/json.hpp"

namespace smcrypt::load {
namespace {

double Ms(double ns) { return ns / 1e6; }

std::string FmtMs(double ms) {
  if (ms >= 100) return absl::StrFormat("%.0f", ms);
  if (ms >= 10) return absl::StrFormat("%.1f", ms);
  if (ms >= 1) return absl::StrFormat("%.2f", ms);
  return absl::StrFormat("%.3f", ms);
}

std::string FmtRate(double v) {
  if (v >= 100) return absl::StrFormat("%.0f", v);
  if (v >= 10) return absl::StrFormat("%.1f", v);
  return absl::StrFormat("%.2f", v);
}

std::string FmtMb(double bytes) { return absl::StrFormat("%.1f", bytes / 1048576.0); }

void PrintTable(const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& rows, std::ostream& out) {
  std::vector<size_t> widths(header.size(), 0);
  auto widen = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
  };
  widen(header);
  for (const auto& r : rows) widen(r);
  auto line = [&](const std::vector<std::string>& r) {
    std::string l;
    for (size_t i = 0; i < r.size() && i < widths.size(); ++i) {
      l += i == 0 ? absl::StrFormat("%-*s", static_cast<int>(widths[i]), r[i])
                  : absl::StrFormat("  %*s", static_cast<int>(widths[i]), r[i]);
    }
    out << l << "\n";
  };
  line(header);
  size_t total = 0;
  for (size_t w : widths) total += w + 2;
  out << std::string(total >= 2 ? total - 2 : 0, '-') << "\n";
  for (const auto& r : rows) line(r);
}

const std::vector<std::string>& StepColumns() {
  static const std::vector<std::string> kCols = {
      "scheme", "op", "size", "conc", "ops", "errors", "ops/s", "MB/s", "mean ms", "p50 ms",
      "p90 ms", "p99 ms", "p99.9 ms", "max ms", "cli cpu", "srv cpu", "srv RSS MB", "srv RPCs"};
  return kCols;
}

std::vector<std::string> StepRow(const Step& s) {
  const RunResult& r = s.result;
  const Histogram& h = r.latency;
  std::string conc = s.rate > 0 ? absl::StrCat(FmtRate(s.rate), "/s") : absl::StrCat(s.concurrency);
  std::string size = SizeName(s.size);
  if (s.blocks > 1) {
    // RSA-OAEP: blocks, one RPC each; KeyExchange: its two streams.
    absl::StrAppend(&size, " (", s.blocks, s.rpc == "KeyExchange" ? " RPCs)" : " blk)");
  }
  std::string errors = absl::StrCat(r.ops_failed);
  std::string cpu = "-", rss = "-", handled = "-";
  if (r.have_server) {
    cpu = r.seconds > 0 ? absl::StrFormat("%.2f", r.ServerCpuSeconds() / r.seconds) : "-";
    rss = FmtMb(r.server_rss_peak);
    handled = absl::StrFormat("%.0f", r.ServerHandled());
  }
  return {s.scheme,
          s.op,
          size,
          conc,
          absl::StrCat(r.ops_ok + r.ops_failed),
          errors,
          FmtRate(r.OpsPerSecond()),
          // No payload (key pairs, key exchanges, server info) or none delivered: "-".
          r.payload_bytes > 0 ? absl::StrFormat("%.2f", r.MegabytesPerSecond()) : "-",
          FmtMs(Ms(h.Mean())),
          FmtMs(Ms(h.ValueAtPercentile(50))),
          FmtMs(Ms(h.ValueAtPercentile(90))),
          FmtMs(Ms(h.ValueAtPercentile(99))),
          FmtMs(Ms(h.ValueAtPercentile(99.9))),
          FmtMs(Ms(static_cast<double>(h.max()))),
          r.seconds > 0 ? absl::StrFormat("%.2f", r.client_cpu_seconds / r.seconds) : "-",
          cpu,
          rss,
          handled};
}

// ---- JSON -------------------------------------------------------------------------

using Json = nlohmann::ordered_json;

// JsonNumber is `v`, or null when it is not finite (JSON has no NaN or infinity).
Json JsonNumber(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// LatencyJson: the summary in microseconds (two decimals) and the histogram's non-empty
// buckets as [lower_ns, upper_ns, count] with upper exclusive, so any percentile can be
// recomputed (within the histogram's 0.4%) and runs merged by adding counts.
Json LatencyJson(const Histogram& h) {
  auto us = [](double ns) { return JsonNumber(std::round(ns / 10.0) / 100.0); };
  Json buckets = Json::array();
  for (size_t i = 0; i < Histogram::NumBuckets(); ++i) {
    if (const uint64_t n = h.BucketCount(i); n != 0) {
      const uint64_t lo = Histogram::BucketLowerBound(i);
      buckets.push_back(Json::array({lo, lo + Histogram::BucketWidth(i), n}));
    }
  }
  return Json{{"count", h.count()},
              {"mean", us(h.Mean())},
              {"min", us(static_cast<double>(h.min()))},
              {"p50", us(h.ValueAtPercentile(50))},
              {"p90", us(h.ValueAtPercentile(90))},
              {"p99", us(h.ValueAtPercentile(99))},
              {"p999", us(h.ValueAtPercentile(99.9))},
              {"max", us(static_cast<double>(h.max()))},
              {"buckets_ns", std::move(buckets)}};
}

template <typename Map>
Json CodesJson(const Map& m) {
  Json out = Json::object();
  for (const auto& [k, v] : m) {
    if (v != 0) out[k] = v;
  }
  return out;
}

Json StepJson(const Step& s) {
  const RunResult& r = s.result;
  Json out = {{"scheme", s.scheme},
              {"rpc", s.rpc},
              {"algorithm", s.algorithm},
              {"op", s.op},
              {"size_bytes", s.size},
              {"concurrency", s.concurrency},
              {"rate", JsonNumber(s.rate)},
              {"rpcs_per_operation", s.blocks},
              {"note", s.note},
              {"operations", r.ops_ok + r.ops_failed},
              {"ok", r.ops_ok},
              {"errors", r.ops_failed},
              {"requests", r.rpcs},
              {"errors_by_code", CodesJson(r.errors_by_code)},
              {"first_error", r.first_error},
              {"seconds", JsonNumber(r.seconds)},
              {"warmup_seconds", JsonNumber(r.warmup_seconds)},
              {"warmup_operations", r.warmup_ops},
              {"warmup_requests", r.warmup_rpcs},
              {"ops_per_second", JsonNumber(r.OpsPerSecond())},
              {"mb_per_second", JsonNumber(r.MegabytesPerSecond())},
              {"max_inflight", r.max_inflight},
              {"latency_us", LatencyJson(r.latency)}};
  if (s.rate > 0) out["latency_uncorrected_us"] = LatencyJson(r.service);
  out["client"] = {{"cpu_seconds", JsonNumber(r.client_cpu_seconds)},
                   {"cpu_cores", JsonNumber(r.seconds > 0 ? r.client_cpu_seconds / r.seconds : 0)}};
  if (r.have_server) {
    std::map<std::string, double> delta;
    for (const auto& [k, v] : r.server_after.handled_by_code) {
      auto b = r.server_before.handled_by_code.find(k);
      delta[k] = v - (b == r.server_before.handled_by_code.end() ? 0 : b->second);
    }
    out["server"] = {{"cpu_seconds", JsonNumber(r.ServerCpuSeconds())},
                     {"cpu_cores", JsonNumber(r.seconds > 0 ? r.ServerCpuSeconds() / r.seconds : 0)},
                     {"rss_bytes_before", JsonNumber(r.server_before.resident_bytes)},
                     {"rss_bytes_after", JsonNumber(r.server_after.resident_bytes)},
                     {"rss_bytes_peak", JsonNumber(r.server_rss_peak)},
                     {"inflight_peak", JsonNumber(r.server_inflight_peak)},
                     {"handled_delta", JsonNumber(r.ServerHandled())},
                     {"handled_delta_by_code", CodesJson(delta)}};
  } else {
    out["server"] = nullptr;
    if (!r.server_error.empty()) out["server_error"] = r.server_error;
  }
  return out;
}

Json TableJson(const Table& t) {
  return Json{{"id", t.id}, {"title", t.title}, {"note", t.note}, {"columns", t.columns},
              {"rows", t.rows}};
}

// CsvNumber: integers without a fraction, others with 15 significant digits, empty when
// not finite.
std::string CsvNumber(double v) {
  if (!std::isfinite(v)) return "";
  if (v == std::floor(v) && std::fabs(v) < 9e15) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.15g", v);
}

double Cell(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end == s.c_str() ? std::nan("") : v;
}

std::string FileSafe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

}  // namespace

std::string SizeName(size_t b) {
  if (b >= (size_t{1} << 30) && b % (size_t{1} << 30) == 0) return absl::StrCat(b >> 30, " GiB");
  if (b >= (size_t{1} << 20) && b % (size_t{1} << 20) == 0) return absl::StrCat(b >> 20, " MiB");
  if (b >= 1024 && b % 1024 == 0) return absl::StrCat(b >> 10, " KiB");
  return absl::StrCat(b, " B");
}

void PrintReport(const Report& report, std::ostream& out) {
  out << "smcrypt-load " << report.version << " -> " << report.target << " (" << report.connections
      << " connection" << (report.connections == 1 ? "" : "s") << "), started " << report.started_at
      << "\n";
  if (!report.server_version.empty()) {
    std::vector<std::string> k;
    for (const auto& [alg, kernel] : report.server_kernels) k.push_back(alg + "=" + kernel);
    out << "smcryptd " << report.server_version << "; kernels: " << absl::StrJoin(k, ", ") << "\n";
  }
  out << "Latency: per operation, log-linear histogram (values within 0.4%); cli cpu / srv cpu: smcrypt-load's "
         "own and the server's CPU seconds per wall second; srv RSS: peak resident memory; srv RPCs: the server's "
         "grpc_server_handled_total delta.\n";
  for (const ScenarioReport& sc : report.scenarios) {
    out << "\n=== " << sc.name << ": " << sc.description << " ===\n";
    if (!sc.steps.empty()) {
      std::vector<std::vector<std::string>> rows;
      for (const Step& s : sc.steps) rows.push_back(StepRow(s));
      PrintTable(StepColumns(), rows, out);
      for (const Step& s : sc.steps) {
        if (!s.result.first_error.empty()) {
          out << "  " << s.scheme << " " << s.op << " " << SizeName(s.size)
              << ": first error: " << s.result.first_error << "\n";
        }
      }
      std::vector<std::string> notes;
      for (const Step& s : sc.steps) {
        if (!s.note.empty() && std::find(notes.begin(), notes.end(), s.note) == notes.end()) {
          notes.push_back(s.note);
        }
      }
      for (const auto& n : notes) out << "  note: " << n << "\n";
    }
    for (const Table& t : sc.tables) {
      out << "\n" << t.title << "\n";
      PrintTable(t.columns, t.rows, out);
      if (!t.note.empty()) out << "  " << t.note << "\n";
    }
  }
  out << "\nRPCs: " << report.measured_rpcs << " measured + ";
  if (report.warmup_rpcs > 0) out << report.warmup_rpcs << " warm-up + ";
  out << report.setup_rpcs << " setup (keys, ciphertexts for the decrypt workloads, server info) = "
      << report.measured_rpcs + report.warmup_rpcs + report.setup_rpcs << "\n";
}

std::string ReportJson(const Report& report) {
  Json kernels = Json::object();
  for (const auto& [alg, kernel] : report.server_kernels) kernels[alg] = kernel;
  Json scenarios = Json::array();
  for (const ScenarioReport& sc : report.scenarios) {
    Json summary = Json::object();
    for (const auto& [k, v] : sc.summary) summary[k] = JsonNumber(v);
    Json steps = Json::array(), tables = Json::array();
    for (const Step& s : sc.steps) steps.push_back(StepJson(s));
    for (const Table& t : sc.tables) tables.push_back(TableJson(t));
    scenarios.push_back({{"scenario", sc.name},
                         {"description", sc.description},
                         {"summary", std::move(summary)},
                         {"steps", std::move(steps)},
                         {"tables", std::move(tables)}});
  }
  const Json doc = {
      {"tool", "smcrypt-load"},
      {"version", report.version},
      {"target", report.target},
      {"connections", report.connections},
      {"started_at", report.started_at},
      {"server", {{"version", report.server_version}, {"kernels", std::move(kernels)}}},
      {"requests",
       {{"measured", report.measured_rpcs},
        {"warmup", report.warmup_rpcs},
        {"setup", report.setup_rpcs},
        {"total", report.measured_rpcs + report.warmup_rpcs + report.setup_rpcs}}},
      {"scenarios", std::move(scenarios)}};
  // Invalid UTF-8 in a server's message is replaced rather than thrown on.
  return doc.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string ReportCsv(const Report& report) {
  std::string out =
      "scenario,scheme,rpc,algorithm,op,size_bytes,concurrency,rate,rpcs_per_operation,"
      "operations,ok,errors,requests,seconds,ops_per_second,mb_per_second,mean_us,p50_us,p90_us,"
      "p99_us,p999_us,max_us,server_cpu_seconds,server_rss_peak_bytes,server_inflight_peak,"
      "server_handled_delta,client_cpu_seconds\n";
  for (const ScenarioReport& sc : report.scenarios) {
    for (const Step& s : sc.steps) {
      const RunResult& r = s.result;
      const Histogram& h = r.latency;
      auto us = [](double ns) { return absl::StrFormat("%.2f", ns / 1e3); };
      absl::StrAppend(
          &out, sc.name, ",", s.scheme, ",", s.rpc, ",", s.algorithm, ",", s.op, ",", s.size, ",",
          s.concurrency, ",", CsvNumber(s.rate), ",", s.blocks, ",", r.ops_ok + r.ops_failed, ",",
          r.ops_ok, ",", r.ops_failed, ",", r.rpcs, ",", absl::StrFormat("%.4f", r.seconds), ",",
          absl::StrFormat("%.2f", r.OpsPerSecond()), ",",
          absl::StrFormat("%.4f", r.MegabytesPerSecond()), ",", us(h.Mean()), ",",
          us(h.ValueAtPercentile(50)), ",", us(h.ValueAtPercentile(90)), ",",
          us(h.ValueAtPercentile(99)), ",", us(h.ValueAtPercentile(99.9)), ",",
          us(static_cast<double>(h.max())));
      if (r.have_server) {
        absl::StrAppend(&out, ",", absl::StrFormat("%.3f", r.ServerCpuSeconds()), ",",
                        CsvNumber(r.server_rss_peak), ",", CsvNumber(r.server_inflight_peak),
                        ",", CsvNumber(r.ServerHandled()));
      } else {
        absl::StrAppend(&out, ",,,,");
      }
      absl::StrAppend(&out, ",", absl::StrFormat("%.3f", r.client_cpu_seconds), "\n");
    }
  }
  return out;
}

// Charts returns the charts of `report` as (file stem, SVG document).
std::vector<std::pair<std::string, std::string>> Charts(const Report& report) {
  std::vector<std::pair<std::string, std::string>> written;
  auto write = [&](const std::string& stem, const std::string& svg) {
    written.push_back({FileSafe(stem), svg});
  };
  for (const ScenarioReport& sc : report.scenarios) {
    // Line charts of the steps: throughput and p99 against concurrency (when it varies),
    // else mean latency against payload size (when that varies), one line per scheme/op.
    std::map<std::string, std::vector<const Step*>> by_series;
    std::vector<std::string> order;
    bool conc_varies = false, size_varies = false;
    for (const Step& s : sc.steps) {
      const std::string key = absl::StrCat(s.scheme, " ", s.op);
      if (!by_series.count(key)) order.push_back(key);
      by_series[key].push_back(&s);
    }
    for (const auto& [k, v] : by_series) {
      for (const Step* s : v) {
        conc_varies |= s->concurrency != v.front()->concurrency;
        size_varies |= s->size != v.front()->size;
      }
    }
    if (conc_varies) {
      LinePanel tput{"throughput (ops/s)", false, {}}, p99{"p99 latency (ms)", true, {}};
      for (const auto& key : order) {
        LineSeries a{key, {}}, b{key, {}};
        for (const Step* s : by_series[key]) {
          a.points.push_back({static_cast<double>(s->concurrency), s->result.OpsPerSecond()});
          b.points.push_back({static_cast<double>(s->concurrency),
                              Ms(s->result.latency.ValueAtPercentile(99))});
        }
        tput.series.push_back(a);
        p99.series.push_back(b);
      }
      write(sc.name, LineChartSvg(absl::StrCat("smcrypt-load ", sc.name,
                                                                 ": throughput and p99 against "
                                                                 "operations in flight"),
                                                    "operations in flight", true, {tput, p99}));
    } else if (size_varies) {
      LinePanel mean{"mean latency (ms)", true, {}};
      for (const auto& key : order) {
        LineSeries a{key, {}};
        for (const Step* s : by_series[key]) {
          a.points.push_back({static_cast<double>(s->size), Ms(s->result.latency.Mean())});
        }
        mean.series.push_back(a);
      }
      write(sc.name, LineChartSvg(absl::StrCat("smcrypt-load ", sc.name,
                                                                 ": mean latency against payload size"),
                                                    "payload bytes", true, {mean}));
    }
    for (const Table& t : sc.tables) {
      if (t.value_columns.empty() || t.id.empty()) continue;
      std::vector<std::string> cats;
      std::vector<BarSeries> series;
      for (int c : t.value_columns) series.push_back({t.columns[c], {}});
      for (const auto& row : t.rows) {
        std::vector<std::string> label;
        for (int c : t.label_columns) label.push_back(row[c]);
        cats.push_back(absl::StrJoin(label, " "));
        for (size_t i = 0; i < t.value_columns.size(); ++i) {
          series[i].values.push_back(Cell(row[t.value_columns[i]]));
        }
      }
      write(t.id, BarChartSvg(t.title, t.y_label, cats, series, t.log_y, t.reference));
    }
  }
  return written;
}

absl::StatusOr<std::vector<std::string>> WriteCharts(const Report& report, const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InvalidArgumentError(absl::StrCat("--chart-dir ", dir, ": cannot create"));
  }
  std::vector<std::string> paths;
  for (const auto& [stem, svg] : Charts(report)) {
    const std::string path = absl::StrCat(dir, "/", stem, ".svg");
    std::ofstream f(path);
    f << svg;
    f.close();
    if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
    paths.push_back(path);
  }
  return paths;
}

namespace {

std::string HtmlTable(const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows) {
  std::string out = "<table>\n<tr>";
  for (const auto& h : header) absl::StrAppend(&out, "<th>", MarkupEscape(h), "</th>");
  out += "</tr>\n";
  for (const auto& r : rows) {
    out += "<tr>";
    for (const auto& c : r) absl::StrAppend(&out, "<td>", MarkupEscape(c), "</td>");
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string ReportHtml(const Report& report) {
  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>smcrypt-load ", MarkupEscape(report.version), " report</title>\n<style>\n"
      "body{font-family:sans-serif;margin:1.5em;max-width:1200px}\n"
      "table{border-collapse:collapse;font-size:13px;margin:0.5em 0 1em}\n"
      "th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
      "th:first-child,td:first-child{text-align:left}\n"
      "figure{margin:1em 0}svg{max-width:100%;height:auto}\n"
      "</style>\n</head>\n<body>\n<h1>smcrypt-load report</h1>\n<p>smcrypt-load ",
      MarkupEscape(report.version), " &rarr; ", MarkupEscape(report.target), " (",
      report.connections, " connections), started ", MarkupEscape(report.started_at),
      "; smcryptd ", MarkupEscape(report.server_version), ".</p>\n");
  const auto charts = Charts(report);
  for (const ScenarioReport& sc : report.scenarios) {
    absl::StrAppend(&out, "<h2>", MarkupEscape(sc.name), "</h2>\n<p>", MarkupEscape(sc.description),
                    "</p>\n");
    if (!sc.steps.empty()) {
      std::vector<std::vector<std::string>> rows;
      for (const Step& s : sc.steps) rows.push_back(StepRow(s));
      absl::StrAppend(&out, HtmlTable(StepColumns(), rows));
    }
    for (const Table& t : sc.tables) {
      absl::StrAppend(&out, "<h3>", MarkupEscape(t.title), "</h3>\n", HtmlTable(t.columns, t.rows));
      if (!t.note.empty()) absl::StrAppend(&out, "<p>", MarkupEscape(t.note), "</p>\n");
    }
    // The scenario's charts, inline: its line chart is named after it, its bar charts
    // after its tables.
    for (const auto& [stem, svg] : charts) {
      bool mine = stem == FileSafe(sc.name);
      for (const Table& t : sc.tables) mine |= !t.id.empty() && stem == FileSafe(t.id);
      if (!mine) continue;
      const size_t at = svg.find("<svg");
      absl::StrAppend(&out, "<figure data-chart=\"", MarkupEscape(stem), "\">\n",
                      at == std::string::npos ? svg : svg.substr(at), "</figure>\n");
    }
  }
  absl::StrAppend(&out, "<p>RPCs: ", report.measured_rpcs, " measured + ", report.warmup_rpcs,
                  " warm-up + ", report.setup_rpcs, " setup.</p>\n</body>\n</html>\n");
  return out;
}

}  // namespace smcrypt::load
