// secret_volume.h — a directory laid out as kubelet mounts a Kubernetes Secret, for the
// reload tests (header-only).
#ifndef SMCRYPT_TESTS_SERVER_SECRET_VOLUME_H_
#define SMCRYPT_TESTS_SERVER_SECRET_VOLUME_H_

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace smcrypt::testing {

// SecretVolume lays a directory out as kubelet mounts a Secret: the files of each
// version in ..<version>/, ..data a symlink to the current one, and each key a symlink
// <key>.pem -> ..data/<key>.pem. Publish swaps ..data atomically (rename of a new
// symlink over it), then adds and removes the top-level symlinks, as kubelet does.
class SecretVolume {
 public:
  SecretVolume() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "smcrypt_reload_XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  ~SecretVolume() { std::filesystem::remove_all(dir_); }
  const std::string& dir() const { return dir_; }

  // Publish makes `files` (name -> contents, mode 0600) the volume's contents.
  void Publish(const std::vector<std::pair<std::string, std::string>>& files) {
    const std::string version = absl::StrCat("..2026_12_02_01_00_00.", ++versions_);
    const std::filesystem::path root(dir_);
    std::filesystem::create_directory(root / version);
    for (const auto& [name, text] : files) {
      const std::filesystem::path p = root / version / name;
      std::ofstream(p, std::ios::binary) << text;
      std::filesystem::permissions(
          p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    }
    std::filesystem::create_directory_symlink(version, root / "..data_tmp");
    std::filesystem::rename(root / "..data_tmp", root / "..data");
    for (const std::string& name : published_) {
      bool kept = false;
      for (const auto& f : files) kept = kept || f.first == name;
      if (!kept) std::filesystem::remove(root / name);
    }
    published_.clear();
    for (const auto& f : files) {
      published_.push_back(f.first);
      std::error_code ec;
      // A name that stays keeps its symlink (create_symlink fails: it exists).
      std::filesystem::create_symlink("..data/" + f.first, root / f.first, ec);
    }
  }

 private:
  std::string dir_;
  int versions_ = 0;
  std::vector<std::string> published_;
};

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_SERVER_SECRET_VOLUME_H_
