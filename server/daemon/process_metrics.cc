#include "server/daemon/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "prometheus/metric_family.h"

namespace smcrypt::server {
namespace {

absl::Status Unreadable(const std::string& path, absl::string_view why) {
  return absl::UnavailableError(absl::StrCat("cannot read ", path, ": ", why));
}

// BootTime is btime of <proc>/stat: the boot time, Unix seconds.
absl::StatusOr<double> BootTime(const std::string& proc) {
  const std::string path = proc + "/stat";
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "btime ")) continue;
    double btime = 0;
    if (!absl::SimpleAtod(line.substr(6), &btime)) return Unreadable(path, "bad btime line");
    return btime;
  }
  return Unreadable(path, "no btime line");
}

// OpenFds counts the entries of <proc>/self/fd (the directory's own descriptor, open
// while it is read, is not counted).
absl::StatusOr<double> OpenFds(const std::string& proc) {
  const std::string path = proc + "/self/fd";
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return Unreadable(path, "opendir failed");
  const int own = dirfd(dir);
  double n = 0;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    int fd = -1;
    if (absl::SimpleAtoi(e->d_name, &fd) && fd == own) continue;
    ++n;
  }
  closedir(dir);
  return n;
}

prometheus::MetricFamily One(const char* name, const char* help, prometheus::MetricType type,
                             double value) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(m);
  return f;
}

class ProcessCollector final : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    absl::StatusOr<ProcessStats> s = ReadProcessStats();
    if (!s.ok()) return {};
    using prometheus::MetricType;
    return {
        One("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
            MetricType::Counter, s->cpu_seconds),
        One("process_open_fds", "Number of open file descriptors.", MetricType::Gauge,
            s->open_fds),
        One("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
            s->max_fds),
        One("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
            s->virtual_bytes),
        One("process_resident_memory_bytes", "Resident memory size in bytes.",
            MetricType::Gauge, s->resident_bytes),
        One("process_start_time_seconds",
            "Start time of the process since unix epoch in seconds.", MetricType::Gauge,
            s->start_time_seconds),
    };
  }
};

}  // namespace

absl::StatusOr<ProcessStats> ReadProcessStats(const std::string& proc) {
  const std::string path = proc + "/self/stat";
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return Unreadable(path, "empty or missing");
  // The fields after the command name "(...)", which may itself hold spaces and ')':
  // field 3 (state) is the first (proc(5)).
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 > line.size()) return Unreadable(path, "no ')'");
  const std::vector<std::string> fields = absl::StrSplit(line.substr(close + 2), ' ');
  // utime = field 14, stime = 15, starttime = 22, vsize = 23, rss = 24; index = field - 3.
  if (fields.size() < 22) return Unreadable(path, "too few fields");
  double utime = 0, stime = 0, start = 0, vsize = 0, rss = 0;
  if (!absl::SimpleAtod(fields[11], &utime) || !absl::SimpleAtod(fields[12], &stime) ||
      !absl::SimpleAtod(fields[19], &start) || !absl::SimpleAtod(fields[20], &vsize) ||
      !absl::SimpleAtod(fields[21], &rss)) {
    return Unreadable(path, "a field is not a number");
  }
  absl::StatusOr<double> btime = BootTime(proc);
  if (!btime.ok()) return btime.status();
  absl::StatusOr<double> open_fds = OpenFds(proc);
  if (!open_fds.ok()) return open_fds.status();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return absl::UnavailableError("getrlimit(RLIMIT_NOFILE) failed");
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  ProcessStats out;
  out.cpu_seconds = (utime + stime) / ticks;
  out.resident_bytes = rss * static_cast<double>(sysconf(_SC_PAGESIZE));
  out.virtual_bytes = vsize;
  out.start_time_seconds = *btime + start / ticks;
  out.open_fds = *open_fds;
  out.max_fds = static_cast<double>(limit.rlim_cur);
  return out;
}

std::shared_ptr<prometheus::Collectable> NewProcessCollector() {
  return std::make_shared<ProcessCollector>();
}

}  // namespace smcrypt::server
