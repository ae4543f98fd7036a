// secret_file.h — reads key and certificate files without blocking and without a gap
// between what is checked and what is read.
#ifndef SMCRYPT_SERVER_SECRET_FILE_H_
#define SMCRYPT_SERVER_SECRET_FILE_H_

#include <sys/stat.h>

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::server {

// ReadSecretFile reads the whole regular file at `path` (symlinks followed) of at most
// `max_size` bytes into wiped storage, sized once so no reallocation leaves a copy behind.
// It opens with O_NONBLOCK, so a FIFO or a device never blocks the caller, and checks the
// opened file (fstat), which `st` (may be null) receives. Errors, whose messages do not
// name the path: NotFound (no such file, or a dangling symlink), FailedPrecondition (not a
// regular file), InvalidArgument (larger than `max_size`, or a read error), PermissionDenied
// (not readable by this process).
absl::StatusOr<SecretData> ReadSecretFile(const std::string& path, size_t max_size,
                                          struct stat* st = nullptr);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_SECRET_FILE_H_
