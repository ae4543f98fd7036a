#include "server/engine/secret_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace smcrypt::server {

absl::StatusOr<SecretData> ReadSecretFile(const std::string& path, size_t max_size,
                                          struct stat* st_out) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return absl::NotFoundError("no such file (or a broken symlink)");
    }
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError("cannot open: permission denied");
    return absl::InvalidArgumentError(absl::StrCat("cannot open: ", strerror(err)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    return absl::InvalidArgumentError("cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return absl::FailedPreconditionError("not a regular file");
  }
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > max_size) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("larger than ", max_size, " bytes"));
  }
  SecretData text(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      close(fd);
      return absl::InvalidArgumentError("read error");
    }
    if (n == 0) break;  // shrank while being read
    done += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(done);
  if (st_out != nullptr) *st_out = st;
  return text;
}

}  // namespace smcrypt::server
