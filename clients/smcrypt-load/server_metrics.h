// server_metrics.h — reading smcryptd's /metrics (Prometheus text format, plain HTTP):
// process CPU seconds, resident memory, RPCs handled by status code, RPCs in flight.
#ifndef SMCRYPT_CLIENTS_SMCRYPT_LOAD_SERVER_METRICS_H_
#define SMCRYPT_CLIENTS_SMCRYPT_LOAD_SERVER_METRICS_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace smcrypt::load {

// ServerSample is one scrape of smcryptd's metrics.
struct ServerSample {
  double cpu_seconds = 0;        // process_cpu_seconds_total
  double resident_bytes = 0;     // process_resident_memory_bytes
  double inflight = 0;           // smcrypt_inflight_requests
  double handled_total = 0;      // grpc_server_handled_total, summed over every series
  std::map<std::string, double> handled_by_code;  // grpc_code -> summed count
};

// HttpGet fetches `url` ("http://HOST:PORT/PATH"; HOST a name or address) with libcurl
// (no proxy) and returns the body. Non-200 answers, connection failures and a `timeout` are
// Unavailable; a malformed URL is InvalidArgument.
absl::StatusOr<std::string> HttpGet(absl::string_view url, absl::Duration timeout);

// ParseServerSample reads the samples above from Prometheus text. A metric that is absent
// leaves its field 0; a text with none of them is InvalidArgument.
absl::StatusOr<ServerSample> ParseServerSample(absl::string_view text);

// ScrapeServer is HttpGet followed by ParseServerSample.
absl::StatusOr<ServerSample> ScrapeServer(absl::string_view url,
                                          absl::Duration timeout = absl::Seconds(5));

}  // namespace smcrypt::load

#endif  // SMCRYPT_CLIENTS_SMCRYPT_LOAD_SERVER_METRICS_H_
