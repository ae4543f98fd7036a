// stalled_reader.h — an HTTP/2 client for integration tests whose calls' responses can
// never be sent (StalledReader).
#ifndef SMCRYPT_TESTS_SERVER_STALLED_READER_H_
#define SMCRYPT_TESTS_SERVER_STALLED_READER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace smcrypt::testing {

// StalledReader is an HTTP/2 client that never lets the server send: its SETTINGS set
// every stream's window to 0 (RFC 9113 §6.9.2), so a response's DATA cannot leave the
// server. It answers SETTINGS and PING so the connection stays up.
class StalledReader {
 public:
  explicit StalledReader(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (!connected_) return;
    std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    out += Frame(0x4, 0, 0, std::string("\x00\x04\x00\x00\x00\x00", 6));  // INITIAL_WINDOW_SIZE 0
    Send(out);
    reader_ = std::thread([this] { Read(); });
  }
  ~StalledReader() { Close(); }

  bool connected() const { return connected_; }

  // Call starts a unary call of `method` with the serialized `request` on a new stream.
  void Call(const std::string& method, const std::string& request) {
    const uint32_t id = next_stream_;
    next_stream_ += 2;
    std::string block;
    for (const auto& [name, value] :
         std::vector<std::pair<std::string, std::string>>{{":method", "POST"},
                                                          {":scheme", "http"},
                                                          {":path", method},
                                                          {":authority", "127.0.0.1"},
                                                          {"content-type", "application/grpc"},
                                                          {"te", "trailers"}}) {
      // Literal header field without indexing, new name (RFC 7541 §6.2.2), short strings.
      block += '\0';
      block += static_cast<char>(name.size());
      block += name;
      block += static_cast<char>(value.size());
      block += value;
    }
    std::string message(5, '\0');  // gRPC framing: not compressed, 4-byte length
    const uint32_t n = static_cast<uint32_t>(request.size());
    for (int i = 0; i < 4; ++i) message[1 + i] = static_cast<char>(n >> (24 - 8 * i));
    message += request;
    Send(Frame(0x1, 0x4, id, block) + Frame(0x0, 0x1, id, message));  // END_HEADERS; END_STREAM
  }

  void Close() {
    if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  static std::string Frame(uint8_t type, uint8_t flags, uint32_t stream, const std::string& p) {
    std::string f(9, '\0');
    const uint32_t n = static_cast<uint32_t>(p.size());
    f[0] = static_cast<char>(n >> 16);
    f[1] = static_cast<char>(n >> 8);
    f[2] = static_cast<char>(n);
    f[3] = static_cast<char>(type);
    f[4] = static_cast<char>(flags);
    for (int i = 0; i < 4; ++i) f[5 + i] = static_cast<char>(stream >> (24 - 8 * i));
    return f + p;
  }
  void Send(const std::string& bytes) {
    absl::MutexLock lock(&send_mu_);
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t w = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (w <= 0) return;
      sent += static_cast<size_t>(w);
    }
  }
  bool ReadFull(char* out, size_t n) {
    size_t got = 0;
    while (got < n) {
      const ssize_t r = recv(fd_, out + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
    return true;
  }
  void Read() {
    char header[9];
    while (ReadFull(header, 9)) {
      const size_t n = (static_cast<uint8_t>(header[0]) << 16) |
                       (static_cast<uint8_t>(header[1]) << 8) | static_cast<uint8_t>(header[2]);
      std::string payload(n, '\0');
      if (n > 0 && !ReadFull(payload.data(), n)) return;
      const uint8_t type = static_cast<uint8_t>(header[3]);
      const uint8_t flags = static_cast<uint8_t>(header[4]);
      if (type == 0x4 && (flags & 0x1) == 0) Send(Frame(0x4, 0x1, 0, ""));  // SETTINGS ACK
      if (type == 0x6 && (flags & 0x1) == 0) Send(Frame(0x6, 0x1, 0, payload));  // PING ACK
    }
  }

  int fd_ = -1;
  bool connected_ = false;
  uint32_t next_stream_ = 1;
  absl::Mutex send_mu_;
  std::thread reader_;
};

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_SERVER_STALLED_READER_H_
