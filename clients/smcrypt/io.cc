#include "clients/smcrypt/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace smcrypt::cli {
namespace {

absl::Status ErrnoStatus(int err, absl::string_view what, absl::string_view path) {
  std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    default:
      return absl::InvalidArgumentError(message);
  }
}

}  // namespace

void FileCloser::operator()(std::FILE* f) const {
  if (f != nullptr && f != stdin && f != stdout) std::fclose(f);
}

absl::StatusOr<Input> Input::Open(const std::string& path) {
  if (path == "-") return Input(FilePtr(stdin), "<stdin>", std::nullopt);
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) return ErrnoStatus(errno, "cannot open", path);
  struct stat st;
  std::optional<uint64_t> size;
  if (fstat(fileno(file.get()), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat("cannot read ", path, ": is a directory"));
    }
    if (S_ISREG(st.st_mode)) size = static_cast<uint64_t>(st.st_size);
  }
  return Input(std::move(file), path, size);
}

absl::StatusOr<std::string> Input::Read(size_t max_len) {
  std::string buf(max_len, '\0');
  size_t got = 0;
  while (got < max_len) {
    size_t n = std::fread(buf.data() + got, 1, max_len - got, file_.get());
    got += n;
    if (n == 0) {
      if (std::ferror(file_.get())) return ErrnoStatus(errno, "cannot read", name_);
      break;
    }
  }
  buf.resize(got);
  return buf;
}

absl::StatusOr<std::string> Input::ReadAll(ReadLimit limit) {
  if (size_.has_value() && *size_ > limit.bytes) {
    return absl::InvalidArgumentError(absl::StrCat(name_, " is larger than ", limit.bytes,
                                                   " bytes, ", limit.what));
  }
  std::string all;
  for (;;) {
    // One byte past the limit tells a file of exactly `limit.bytes` from a longer one.
    const size_t want = std::min<size_t>(size_t{1} << 20, limit.bytes + 1 - all.size());
    absl::StatusOr<std::string> chunk = Read(want);
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) return all;
    all.append(*chunk);
    if (all.size() > limit.bytes) {
      return absl::InvalidArgumentError(absl::StrCat(name_, " is larger than ", limit.bytes,
                                                     " bytes, ", limit.what));
    }
  }
}

absl::StatusOr<std::string> Input::ReadFirstLine(size_t limit) {
  std::string line;
  for (;;) {
    int c = std::getc(file_.get());
    if (c == EOF) {
      if (std::ferror(file_.get())) return ErrnoStatus(errno, "cannot read", name_);
      return line;
    }
    if (c == '\n') return line;
    if (line.size() == limit) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": its first line is longer than ", limit, " bytes, the limit for a password "
          "line"));
    }
    line.push_back(static_cast<char>(c));
  }
}

absl::StatusOr<std::string> ReadFile(const std::string& path, ReadLimit limit) {
  absl::StatusOr<Input> in = Input::Open(path);
  if (!in.ok()) return in.status();
  return in->ReadAll(limit);
}

absl::Status Output::Write(absl::string_view bytes) {
  if (!opened_) {
    if (is_stdout()) {
      file_.reset(stdout);
    } else {
      int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                      private_file_ ? 0600 : 0666);
      if (fd < 0) return ErrnoStatus(errno, "cannot create", path_);
      // The mode of open() applies to new files only: an existing file keeps its own
      // (0644, say), so a private key output is set to 0600 before a byte is written.
      if (private_file_ && ::fchmod(fd, 0600) != 0) {
        int err = errno;
        ::close(fd);
        return ErrnoStatus(err, "cannot set mode 0600 of", path_);
      }
      file_.reset(::fdopen(fd, "wb"));
      if (file_ == nullptr) {
        int err = errno;
        ::close(fd);
        return ErrnoStatus(err, "cannot create", path_);
      }
    }
    opened_ = true;
  }
  if (bytes.empty()) return absl::OkStatus();
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_.get()) != bytes.size()) {
    return ErrnoStatus(errno, "cannot write", is_stdout() ? "<stdout>" : path_);
  }
  return absl::OkStatus();
}

absl::Status Output::Close() {
  if (!opened_ || file_ == nullptr) return absl::OkStatus();
  std::FILE* f = file_.release();
  bool failed = std::fflush(f) != 0;
  if (f != stdout) failed = (std::fclose(f) != 0) || failed;
  if (failed) return ErrnoStatus(errno, "cannot write", is_stdout() ? "<stdout>" : path_);
  return absl::OkStatus();
}

void Output::Discard() {
  if (!opened_ || is_stdout()) return;
  file_.reset();
  std::remove(path_.c_str());
}

}  // namespace smcrypt::cli
