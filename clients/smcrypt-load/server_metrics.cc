#include "clients/smcrypt-load/server_metrics.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace smcrypt::load {
namespace {

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};

}  // namespace

absl::StatusOr<std::string> HttpGet(absl::string_view url, absl::Duration timeout) {
  if (!absl::StartsWith(url, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics URL ", url, ": expected http://HOST:PORT/PATH"));
  }
  // curl_global_init is not thread-safe; it runs once, before the first handle.
  static const CURLcode global = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (global != CURLE_OK) {
    return absl::InternalError(absl::StrCat("libcurl: ", curl_easy_strerror(global)));
  }
  // The URL is parsed by libcurl's URL API; smcryptd's metrics port has no default, so a
  // URL without one is refused rather than sent to port 80.
  {
    std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> parsed(curl_url(), &curl_url_cleanup);
    char* port = nullptr;
    if (parsed == nullptr ||
        curl_url_set(parsed.get(), CURLUPART_URL, std::string(url).c_str(), 0) != CURLUE_OK ||
        curl_url_get(parsed.get(), CURLUPART_PORT, &port, 0) != CURLUE_OK) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics URL ", url, ": expected http://HOST:PORT/PATH"));
    }
    curl_free(port);
  }
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (curl == nullptr) return absl::InternalError("libcurl: curl_easy_init failed");
  const std::string u(url);
  std::string body;
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl.get(), CURLOPT_URL, u.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout))));
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl.get(), CURLOPT_ERRORBUFFER, error);
  const CURLcode rc = curl_easy_perform(curl.get());
  if (rc == CURLE_URL_MALFORMAT) {
    return absl::InvalidArgumentError(absl::StrCat("metrics URL ", url, ": ", error));
  }
  if (rc != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("metrics ", url, ": ", error[0] ? error : curl_easy_strerror(rc)));
  }
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) {
    return absl::UnavailableError(absl::StrCat("metrics ", url, ": HTTP status ", status));
  }
  return body;
}

absl::StatusOr<ServerSample> ParseServerSample(absl::string_view text) {
  ServerSample s;
  bool any = false;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (line.front() == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == absl::string_view::npos) continue;
    absl::string_view series = line.substr(0, space);
    double value = 0;
    if (!absl::SimpleAtod(line.substr(space + 1), &value)) continue;
    const size_t brace = series.find('{');
    absl::string_view name = series.substr(0, brace);
    if (name == "process_cpu_seconds_total") {
      s.cpu_seconds = value;
      any = true;
    } else if (name == "process_resident_memory_bytes") {
      s.resident_bytes = value;
      any = true;
    } else if (name == "smcrypt_inflight_requests") {
      s.inflight = value;
      any = true;
    } else if (name == "grpc_server_handled_total") {
      any = true;
      s.handled_total += value;
      std::string code = "UNKNOWN";
      const size_t at = series.find("grpc_code=\"");
      if (at != absl::string_view::npos) {
        absl::string_view v = series.substr(at + 11);
        code = std::string(v.substr(0, v.find('"')));
      }
      s.handled_by_code[code] += value;
    }
  }
  if (!any) return absl::InvalidArgumentError("no smcryptd metrics in the /metrics answer");
  return s;
}

absl::StatusOr<ServerSample> ScrapeServer(absl::string_view url, absl::Duration timeout) {
  absl::StatusOr<std::string> body = HttpGet(url, timeout);
  if (!body.ok()) return body.status();
  return ParseServerSample(*body);
}

}  // namespace smcrypt::load
