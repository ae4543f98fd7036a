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

namespace smcrypt::cli {

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
  // ReadAll returns everything left.
  absl::StatusOr<std::string> ReadAll();
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

// ReadFile returns the whole content of `path` ("-" is stdin).
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Output writes to a file, or to stdout when the path is empty or "-". The file is
// created on the first Write, so a command that fails early leaves no file behind.
class Output {
 public:
  // With `private_file`, a created file gets mode 0600 (for private and secret keys).
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
