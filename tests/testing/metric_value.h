// metric_value.h — reads one sample out of a Prometheus text exposition (what /metrics
// serves), for the tests of smcryptd's metrics.
#ifndef SMCRYPT_TESTS_TESTING_METRIC_VALUE_H_
#define SMCRYPT_TESTS_TESTING_METRIC_VALUE_H_

#include <cstdlib>
#include <string>

namespace smcrypt::testing {

// MetricValue returns the value of the sample whose line starts with `series`
// ("name{labels}") — labels in the order prometheus-cpp prints them (sorted) — or -1.
inline double MetricValue(const std::string& text, const std::string& series) {
  size_t pos = text.find("\n" + series + " ");
  if (pos == std::string::npos) return -1;
  return std::strtod(text.c_str() + pos + series.size() + 2, nullptr);
}

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_TESTING_METRIC_VALUE_H_
