#include "bench/rpc_ceiling/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace smcrypt::rpc_ceiling {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// Percentile of sorted `v` (nearest rank), in microseconds.
double PercentileUs(const std::vector<uint64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(v.size())));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return static_cast<double>(v[rank - 1]) / 1e3;
}

std::vector<double> Shares(const Row& row) {
  std::vector<double> shares;
  for (size_t i = 0; i < row.target_rps.size() && i < row.echo_rps.size(); ++i) {
    shares.push_back(row.echo_rps[i] > 0 ? row.target_rps[i] / row.echo_rps[i] : 0);
  }
  return shares;
}

std::string CodesText(const std::map<std::string, int64_t>& errors) {
  std::vector<std::string> parts;
  for (const auto& [code, count] : errors) parts.push_back(absl::StrCat(code, " ", count));
  return absl::StrJoin(parts, ", ");
}

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonCodes(const std::map<std::string, int64_t>& errors) {
  std::vector<std::string> parts;
  for (const auto& [code, count] : errors) {
    parts.push_back(absl::StrCat(JsonString(code), ": ", count));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

std::string JsonNumbers(const std::vector<double>& v) {
  std::vector<std::string> parts;
  for (double x : v) parts.push_back(absl::StrFormat("%.6g", x));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string Percent(double share) { return absl::StrFormat("%.1f %%", 100 * share); }

}  // namespace

void Row::AddRound(const Measurement& echo, const Measurement& target) {
  echo_rps.push_back(echo.RequestsPerSecond());
  target_rps.push_back(target.RequestsPerSecond());
  echo_latencies_ns.insert(echo_latencies_ns.end(), echo.latencies_ns.begin(),
                           echo.latencies_ns.end());
  target_latencies_ns.insert(target_latencies_ns.end(), target.latencies_ns.begin(),
                             target.latencies_ns.end());
  for (const auto& [code, count] : echo.errors) echo_errors[code] += count;
  for (const auto& [code, count] : target.errors) target_errors[code] += count;
}

Summary Summarize(Row& row) {
  std::sort(row.echo_latencies_ns.begin(), row.echo_latencies_ns.end());
  std::sort(row.target_latencies_ns.begin(), row.target_latencies_ns.end());
  Summary s;
  s.target_rps = Median(row.target_rps);
  s.echo_rps = Median(row.echo_rps);
  const std::vector<double> shares = Shares(row);
  s.share = Median(shares);
  if (!shares.empty()) {
    s.share_min = *std::min_element(shares.begin(), shares.end());
    s.share_max = *std::max_element(shares.begin(), shares.end());
  }
  s.p50_us = PercentileUs(row.target_latencies_ns, 50);
  s.p90_us = PercentileUs(row.target_latencies_ns, 90);
  s.p99_us = PercentileUs(row.target_latencies_ns, 99);
  s.p999_us = PercentileUs(row.target_latencies_ns, 99.9);
  s.echo_p50_us = PercentileUs(row.echo_latencies_ns, 50);
  for (const auto& [code, count] : row.target_errors) s.target_error_count += count;
  for (const auto& [code, count] : row.echo_errors) s.echo_error_count += count;
  return s;
}

std::string ErrorsText(const Row& row) {
  std::string out = CodesText(row.target_errors);
  if (!row.echo_errors.empty()) {
    absl::StrAppend(&out, out.empty() ? "" : "; ", "echo: ", CodesText(row.echo_errors));
  }
  return out.empty() ? "0" : out;
}

std::string TextLine(Row& row) {
  const Summary s = Summarize(row);
  return absl::StrFormat(
      "%-16s N=%-6d conns=%-3d %10.0f req/s  p50 %8.1f  p90 %8.1f  p99 %8.1f  p99.9 %8.1f us"
      "  errors %s  echo %10.0f req/s  share %s (%s-%s)",
      row.rpc, row.in_flight, row.channels, s.target_rps, s.p50_us, s.p90_us, s.p99_us,
      s.p999_us, ErrorsText(row), s.echo_rps, Percent(s.share), Percent(s.share_min),
      Percent(s.share_max));
}

std::string Markdown(const RunInfo& info, std::vector<Row>& rows) {
  std::string out = absl::StrFormat(
      "smcrypt-rpc-ceiling, %s: %s on %s against the echo server on %s. %s, %d CPUs. "
      "%d completion-queue threads; per measurement %.3gs warm-up, %.3gs measured; %d "
      "round(s), each the echo server then smcryptd with the same request bytes. req/s and "
      "echo req/s: medians of the rounds; latency: over every call of the rounds (smcryptd); "
      "share: smcryptd req/s / echo req/s of the same round, median (min-max). The echo "
      "row compares two echo runs (the noise).\n\n",
      info.date_utc, info.label.empty() ? "smcryptd" : info.label, info.target, info.echo,
      info.cpu_model, info.cpus, info.cq_threads, info.warmup_seconds, info.duration_seconds,
      info.rounds);
  absl::StrAppend(&out,
                  "| RPC | request | N | conns | req/s | p50 µs | p90 µs | p99 µs | p99.9 µs "
                  "| errors | echo req/s | echo p50 µs | share of echo | range |\n"
                  "|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|---|\n");
  for (Row& row : rows) {
    const Summary s = Summarize(row);
    absl::StrAppendFormat(
        &out, "| %s | %s | %d | %d | %.0f | %.1f | %.1f | %.1f | %.1f | %s | %.0f | %.1f | %s "
              "| %s–%s |\n",
        row.rpc, row.description, row.in_flight, row.channels, s.target_rps, s.p50_us,
        s.p90_us, s.p99_us, s.p999_us, ErrorsText(row), s.echo_rps, s.echo_p50_us,
        Percent(s.share), Percent(s.share_min), Percent(s.share_max));
  }
  return out;
}

std::string Json(const RunInfo& info, std::vector<Row>& rows) {
  std::string out = absl::StrFormat(
      "{\n  \"tool\": \"smcrypt-rpc-ceiling\",\n  \"date_utc\": %s,\n  \"label\": %s,\n"
      "  \"target\": %s,\n  \"echo\": %s,\n  \"cpu_model\": %s,\n  \"cpus\": %d,\n"
      "  \"cq_threads\": %d,\n  \"warmup_seconds\": %.6g,\n  \"duration_seconds\": %.6g,\n"
      "  \"rounds\": %d,\n  \"rows\": [",
      JsonString(info.date_utc), JsonString(info.label), JsonString(info.target),
      JsonString(info.echo), JsonString(info.cpu_model), info.cpus, info.cq_threads,
      info.warmup_seconds, info.duration_seconds, info.rounds);
  for (size_t i = 0; i < rows.size(); ++i) {
    Row& row = rows[i];
    const Summary s = Summarize(row);
    absl::StrAppendFormat(
        &out,
        "%s\n    {\"rpc\": %s, \"description\": %s, \"request_bytes\": %d, \"in_flight\": %d, "
        "\"channels\": %d,\n     \"rps\": %.6g, \"echo_rps\": %.6g, \"share\": %.6g, "
        "\"share_min\": %.6g, \"share_max\": %.6g,\n     \"latency_us\": {\"p50\": %.6g, "
        "\"p90\": %.6g, \"p99\": %.6g, \"p99.9\": %.6g}, \"echo_latency_us\": {\"p50\": %.6g},\n"
        "     \"calls_measured\": %d, \"echo_calls_measured\": %d, \"errors\": %d, "
        "\"errors_by_code\": %s, \"echo_errors\": %d, \"echo_errors_by_code\": %s,\n"
        "     \"rounds_rps\": %s, \"rounds_echo_rps\": %s, \"rounds_share\": %s}",
        i == 0 ? "" : ",", JsonString(row.rpc), JsonString(row.description), row.request_bytes,
        row.in_flight, row.channels, s.target_rps, s.echo_rps, s.share, s.share_min,
        s.share_max, s.p50_us, s.p90_us, s.p99_us, s.p999_us, s.echo_p50_us,
        row.target_latencies_ns.size(), row.echo_latencies_ns.size(), s.target_error_count,
        JsonCodes(row.target_errors), s.echo_error_count, JsonCodes(row.echo_errors),
        JsonNumbers(row.target_rps), JsonNumbers(row.echo_rps), JsonNumbers(Shares(row)));
  }
  absl::StrAppend(&out, "\n  ]\n}\n");
  return out;
}

}  // namespace smcrypt::rpc_ceiling
