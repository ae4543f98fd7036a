// smcryptd_process.h — runs the real smcryptd binary for integration tests.
//
// Smcryptd starts SMCRYPTD_PATH (a compile definition of the including test) with
// --listen=127.0.0.1:0, --metrics_listen=127.0.0.1:0, --drain_delay=0 (no balancer
// waits on a test's SIGTERM) and --cgroup_root= (sized alike in any test runner's cgroup:
// the CPUs available, the built-in memory defaults); a later flag of Start's `args`
// overrides each. It learns the chosen ports from its log (which it keeps for
// inspection), and kills the process when
// destroyed. HttpGet reads /metrics with a plain socket; MetricValue
// (tests/testing/metric_value.h) reads a sample out of it.
#ifndef SMCRYPT_TESTS_SERVER_SMCRYPTD_PROCESS_H_
#define SMCRYPT_TESTS_SERVER_SMCRYPTD_PROCESS_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/testing/metric_value.h"

namespace smcrypt::testing {

// kUnderAsan: built with AddressSanitizer, whose quarantine keeps freed memory resident,
// so a test's resident-memory bounds say nothing there.
#if defined(__SANITIZE_ADDRESS__)
#define SMCRYPT_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SMCRYPT_UNDER_ASAN 1
#endif
#endif
#ifdef SMCRYPT_UNDER_ASAN
inline constexpr bool kUnderAsan = true;
#else
inline constexpr bool kUnderAsan = false;
#endif

class Smcryptd {
 public:
  Smcryptd() = default;
  Smcryptd(const Smcryptd&) = delete;
  Smcryptd& operator=(const Smcryptd&) = delete;
  ~Smcryptd() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
  }

  // Start returns true once both ports are known, false if the process exited first
  // (its log then says why) or took over 60 s.
  bool Start(std::vector<std::string> args) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    std::vector<std::string> argv = {SMCRYPTD_PATH, "--listen=127.0.0.1:0",
                                     "--metrics_listen=127.0.0.1:0", "--drain_delay=0",
                                     "--cgroup_root="};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], STDERR_FILENO);
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> cargv;
      for (std::string& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      execv(cargv[0], cargv.data());
      _exit(127);
    }
    close(fds[1]);
    reader_ = std::thread([this, fd = fds[0]] {
      char buf[4096];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0) {
        absl::MutexLock lock(&mu_);
        log_.append(buf, n);
      }
      close(fd);
      absl::MutexLock lock(&mu_);
      eof_ = true;
    });
    const std::regex listen_re("listening on 127\\.0\\.0\\.1:([0-9]+)");
    const std::regex metrics_re("metrics on 127\\.0\\.0\\.1:([0-9]+)");
    auto ready = [&] {
      std::smatch m;
      return eof_ ||
             (std::regex_search(log_, m, listen_re) && std::regex_search(log_, m, metrics_re));
    };
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(60));
    std::smatch m;
    if (!std::regex_search(log_, m, listen_re)) return false;
    port_ = std::stoi(m[1]);
    if (!std::regex_search(log_, m, metrics_re)) return false;
    metrics_port_ = std::stoi(m[1]);
    return true;
  }

  // Alive is true while the process has not exited.
  bool Alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }

  // WaitExit returns the exit status (or -1 on a signal / timeout).
  int WaitExit(int timeout_seconds = 60) {
    for (int i = 0; i < timeout_seconds * 10; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }

  void Signal(int sig) { kill(pid_, sig); }
  // pid is the process id (for /proc/<pid>/status), -1 once it has exited.
  pid_t pid() const { return pid_; }
  std::string log() {
    absl::MutexLock lock(&mu_);
    return log_;
  }
  std::string target() const { return absl::StrCat("127.0.0.1:", port_); }
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }

  // Channel allows messages up to 64 MiB each way, so server-side limits are what is tested.
  std::shared_ptr<grpc::Channel> Channel() {
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(64 << 20);
    args.SetMaxReceiveMessageSize(64 << 20);
    return grpc::CreateCustomChannel(target(), grpc::InsecureChannelCredentials(), args);
  }
  std::unique_ptr<smcrypt::v1::CryptoService::Stub> Stub() {
    return smcrypt::v1::CryptoService::NewStub(Channel());
  }

 private:
  pid_t pid_ = -1;
  std::thread reader_;
  absl::Mutex mu_;
  std::string log_ ABSL_GUARDED_BY(mu_);
  bool eof_ ABSL_GUARDED_BY(mu_) = false;
  int port_ = 0;
  int metrics_port_ = 0;
};

// WaitFor polls `done` every 20 ms until it holds or `seconds` pass: whether it held.
inline bool WaitFor(const std::function<bool()>& done, int seconds = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// ReadAll returns the bytes of file `path` ("" when it cannot be read).
// KeyIdRef / InlineKeyRef: a request's KeyRef naming a keyring key or carrying key bytes.
inline smcrypt::v1::KeyRef KeyIdRef(const std::string& id) {
  smcrypt::v1::KeyRef k;
  k.set_key_id(id);
  return k;
}
inline smcrypt::v1::KeyRef InlineKeyRef(const std::string& bytes) {
  smcrypt::v1::KeyRef k;
  k.set_inline_key(bytes);
  return k;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Ctx is a client context whose deadline is `seconds` from now.
inline std::unique_ptr<grpc::ClientContext> Ctx(int seconds = 30) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
  return ctx;
}

// HttpGet fetches http://127.0.0.1:port/path with a plain socket (HTTP/1.0).
inline std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  const std::string req = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  (void)!write(fd, req.data(), req.size());
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fd);
  return out;
}

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_SERVER_SMCRYPTD_PROCESS_H_
