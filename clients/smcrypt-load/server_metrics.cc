#include "clients/smcrypt-load/server_metrics.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace smcrypt::load {
namespace {

// Waits for `events` on `fd` until `deadline`; false on timeout or error.
bool WaitFd(int fd, short events, absl::Time deadline) {
  for (;;) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = poll(&p, 1, static_cast<int>(ms));
    if (r > 0) return true;
    if (r == 0 || errno != EINTR) return false;
  }
}

}  // namespace

absl::StatusOr<std::string> HttpGet(absl::string_view url, absl::Duration timeout) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics URL ", url, ": expected http://HOST:PORT/PATH"));
  }
  const size_t slash = rest.find('/');
  absl::string_view hostport = rest.substr(0, slash);
  const std::string path = slash == absl::string_view::npos ? "/" : std::string(rest.substr(slash));
  const size_t colon = hostport.rfind(':');
  if (colon == absl::string_view::npos || colon + 1 == hostport.size()) {
    return absl::InvalidArgumentError(absl::StrCat("metrics URL ", url, ": no port"));
  }
  std::string host(hostport.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port(hostport.substr(colon + 1));

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return absl::UnavailableError(absl::StrCat("metrics ", url, ": ", gai_strerror(rc)));
  }
  const absl::Time deadline = absl::Now() + timeout;
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      close(fd);
      fd = -1;
      continue;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    if (!WaitFd(fd, POLLOUT, deadline) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("metrics ", url, ": cannot connect"));

  const std::string req =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: ", hostport, "\r\nConnection: close\r\n\r\n");
  size_t sent = 0;
  while (sent < req.size()) {
    if (!WaitFd(fd, POLLOUT, deadline)) break;
    const ssize_t n = send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string out;
  bool complete = false;
  if (sent == req.size()) {
    char buf[16384];
    while (WaitFd(fd, POLLIN, deadline)) {
      const ssize_t n = read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        complete = n == 0;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }
  close(fd);
  if (!complete) return absl::UnavailableError(absl::StrCat("metrics ", url, ": timed out"));
  const size_t header_end = out.find("\r\n\r\n");
  if (header_end == std::string::npos || !absl::StartsWith(out, "HTTP/1.") ||
      out.find(" 200 ") > out.find("\r\n")) {
    return absl::UnavailableError(
        absl::StrCat("metrics ", url, ": unexpected answer \"", out.substr(0, out.find("\r\n")), "\""));
  }
  return out.substr(header_end + 4);
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
