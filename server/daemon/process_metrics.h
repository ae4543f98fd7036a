// process_metrics.h — the process_* metrics of the Prometheus client libraries' process
// collector, read from /proc at each scrape (prometheus-cpp 1.0.1 has none):
//
//   process_cpu_seconds_total       counter  user + system CPU time, seconds
//   process_resident_memory_bytes   gauge    resident set size, bytes
//   process_virtual_memory_bytes    gauge    virtual memory size, bytes
//   process_start_time_seconds      gauge    start of the process, Unix time in seconds
//   process_open_fds                gauge    open file descriptors
//   process_max_fds                 gauge    the soft limit on open file descriptors
//
// Names, types, units and help texts are those of the Go client (client_golang).
#ifndef SMCRYPT_SERVER_PROCESS_METRICS_H_
#define SMCRYPT_SERVER_PROCESS_METRICS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"

namespace smcrypt::server {

struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time_seconds = 0;
  double open_fds = 0;
  double max_fds = 0;
};

// ReadProcessStats reads this process's figures from `proc` (the procfs mount point):
// <proc>/self/stat, <proc>/stat (btime), the entries of <proc>/self/fd, and
// getrlimit(RLIMIT_NOFILE). Errors: Unavailable naming the file that cannot be read or
// parsed.
absl::StatusOr<ProcessStats> ReadProcessStats(const std::string& proc = "/proc");

// NewProcessCollector reports ReadProcessStats("/proc") at each scrape; nothing when it
// fails (a scrape never fails for it).
std::shared_ptr<prometheus::Collectable> NewProcessCollector();

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_PROCESS_METRICS_H_
