// io.h — reading inputs (files or stdin) and writing outputs (files or stdout).
#ifndef SMCRYPT_CLIENTS_SMCRYPT_IO_H_
#define SMCRYPT_CLIENTS_SMCRYPT_IO_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "smcrypt/pkcs8.h"

namespace smcrypt::cli {

// ReadLimit bounds an input read whole: more than `bytes` is a usage error (exit 2)
// naming the file, `bytes` and `what`. Inputs that can be large stream instead.
struct ReadLimit {
  size_t bytes;
  absl::string_view what;
};
// Key files (--key, --ca, --cert, --cert-key): 1 MiB, the most smcrypt/pkcs8.h reads
// of an encrypted private key file; no key, certificate chain or PEM bundle comes near.
inline constexpr ReadLimit kKeyFileLimit{kMaxEncryptedPrivateKeyInfoInput,
                                         "the limit for key files (1 MiB)"};
// Inputs of one unary request read whole (the message of sign, encrypt without
// --stream, pkencrypt, a --sig or ciphertext file, a verify --check listing): 1 GiB,
// half of what one protobuf message can hold.
inline constexpr ReadLimit kWholeInputLimit{
    size_t{1} << 30, "the limit for an input read whole (1 GiB; use --stream where the "
                     "command offers it)"};
// Password files (--pass-file): only the first line is read, and it may be at most
// kMaxPkcs8PasswordSize bytes plus the \r of a CRLF line end.
inline constexpr size_t kMaxPasswordLine = kMaxPkcs8PasswordSize + 1;

struct FileCloser {
  void operator()(std::FILE* f) const;
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// Input is one input stream: a file, or stdin when the path is "-".
class Input {
 public:
  // Open opens `path` ("-" is stdin). A missing or unreadable file is NotFound /
  // PermissionDenied naming the path.
  static absl::StatusOr<Input> Open(const std::string& path);

  // Read returns up to `max_len` bytes; an empty string means end of input.
  absl::StatusOr<std::string> Read(size_t max_len);
  // ReadAll returns everything left; more than `limit.bytes` is an InvalidArgument
  // error naming the input and the limit (and nothing more is read).
  absl::StatusOr<std::string> ReadAll(ReadLimit limit);
  // ReadFirstLine returns the input up to its first \n (without it), or all of it
  // when it has none; a line longer than `limit` bytes is an InvalidArgument error,
  // read no further than limit + 1 bytes.
  absl::StatusOr<std::string> ReadFirstLine(size_t limit);
  // size is the byte size of a regular file, nullopt for stdin and pipes.
  std::optional<uint64_t> size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  Input(FilePtr file, std::string name, std::optional<uint64_t> size)
      : file_(std::move(file)), name_(std::move(name)), size_(size) {}
  FilePtr file_;
  std::string name_;
  std::optional<uint64_t> size_;
};

// ReadFile returns the whole content of `path` ("-" is stdin), at most `limit.bytes`.
absl::StatusOr<std::string> ReadFile(const std::string& path, ReadLimit limit);

// Output writes to a file, or to stdout when the path is empty or "-". The file is
// created on the first Write, so a command that fails early leaves no file behind.
class Output {
 public:
  // With `private_file`, the file gets mode 0600, an existing one too (for private and
  // secret keys).
  explicit Output(std::string path, bool private_file = false)
      : path_(std::move(path)), private_file_(private_file) {}
  absl::Status Write(absl::string_view bytes);
  // Close flushes and closes; write errors surface here at the latest.
  absl::Status Close();
  // Discard closes and deletes a file output (not stdout), so a failed command leaves
  // no partial result behind.
  void Discard();
  bool is_stdout() const { return path_.empty() || path_ == "-"; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool private_file_;
  FilePtr file_;
  bool opened_ = false;
};

}  // namespace smcrypt::cli

#endif  // SMCRYPT_CLIENTS_SMCRYPT_IO_H_
