#include "server/engine/container_limits.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace smcrypt::server {
namespace {

// A v1 memory.limit_in_bytes this large is the kernel's "unlimited" (LONG_MAX rounded
// down to a page).
constexpr uint64_t kUnlimitedV1Bytes = uint64_t{1} << 62;

// Mount is one cgroup hierarchy of /proc/self/mountinfo.
struct Mount {
  int version = 0;                       // 1 or 2
  std::string root;                      // the hierarchy's path mounted there
  std::string dir;                       // the mount point, rebased under cgroup_root
  std::vector<std::string> controllers;  // v1: from the super options
};

enum class ReadResult { kOk, kMissing, kError };

// kMaxFileBytes bounds what ReadSmallFile reads: a limit file is one short line.
constexpr size_t kMaxFileBytes = 4096;

// ReadSmallFile reads `path` (up to kMaxFileBytes, the rest ignored) into `out`; on
// kError `*error` is the errno, or 0 when `path` is not a regular file (a FIFO or device
// in the tree is skipped: opened non-blocking, it never stalls start-up).
ReadResult ReadSmallFile(const std::string& path, std::string* out, int* error,
                         size_t max_bytes = kMaxFileBytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    *error = errno;
    return *error == ENOENT || *error == ENOTDIR ? ReadResult::kMissing : ReadResult::kError;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = errno;
    close(fd);
    return ReadResult::kError;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = 0;
    close(fd);
    return ReadResult::kError;
  }
  out->clear();
  char buf[4096];
  while (out->size() < max_bytes) {
    const ssize_t n = read(fd, buf, std::min(sizeof(buf), max_bytes - out->size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno;
      close(fd);
      return ReadResult::kError;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return ReadResult::kOk;
}

// Unescape decodes mountinfo's octal escapes (\040 for a space).
std::string Unescape(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
        s[i + 3] >= '0' && s[i + 3] <= '7') {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 +
                                      (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Rebase maps a mount point under /sys/fs/cgroup to the same place under `root`.
std::string Rebase(const std::string& mount_point, const std::string& root) {
  const absl::string_view def = kDefaultCgroupRoot;
  if (mount_point == def) return root;
  if (absl::StartsWith(mount_point, absl::StrCat(def, "/"))) {
    return absl::StrCat(root, mount_point.substr(def.size()));
  }
  return mount_point;
}

std::vector<Mount> ParseMounts(absl::string_view mountinfo, const std::string& root) {
  std::vector<Mount> mounts;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 1 >= f.size()) continue;
    Mount m;
    if (f[dash + 1] == "cgroup2") {
      m.version = 2;
    } else if (f[dash + 1] == "cgroup") {
      m.version = 1;
      if (dash + 3 < f.size()) {
        for (absl::string_view opt : absl::StrSplit(f[dash + 3], ',')) {
          m.controllers.emplace_back(opt);
        }
      }
    } else {
      continue;
    }
    m.root = Unescape(f[3]);
    m.dir = Rebase(Unescape(f[4]), root);
    mounts.push_back(std::move(m));
  }
  return mounts;
}

// CgroupPath is the process's path in the v2 hierarchy (version 2) or in the v1 hierarchy
// of `controller`; nullopt when /proc/self/cgroup has no such line.
std::optional<std::string> CgroupPath(absl::string_view proc_cgroup, int version,
                                      absl::string_view controller) {
  for (absl::string_view line : absl::StrSplit(proc_cgroup, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() != 3) continue;
    if (version == 2 && f[0] == "0" && f[1].empty()) return std::string(f[2]);
    if (version == 1 && !f[1].empty()) {
      for (absl::string_view c : absl::StrSplit(f[1], ',')) {
        if (c == controller) return std::string(f[2]);
      }
    }
  }
  return std::nullopt;
}

// Dirs lists the cgroup directories from the process's cgroup up to the mount point.
std::vector<std::string> Dirs(const Mount& m, const std::string& path,
                              std::vector<std::string>* notes) {
  std::string rel = "/";
  if (m.root == "/") {
    rel = path;
  } else if (path == m.root) {
    rel = "/";
  } else if (absl::StartsWith(path, absl::StrCat(m.root, "/"))) {
    rel = path.substr(m.root.size());
  } else {
    notes->push_back(absl::StrCat("cgroup ", path, " is outside the mount of ", m.root,
                                  " at ", m.dir, ": reading the mount's own limits"));
  }
  std::vector<std::string> dirs;
  std::string dir = absl::StrCat(m.dir, rel == "/" ? "" : rel);
  while (!dir.empty() && dir.back() == '/' && dir.size() > 1) dir.pop_back();
  for (;;) {
    dirs.push_back(dir);
    if (dir.size() <= m.dir.size()) break;
    const size_t slash = dir.rfind('/');
    if (slash == std::string::npos || slash < m.dir.size()) {
      dir = m.dir;
    } else {
      dir = dir.substr(0, slash);
    }
  }
  return dirs;
}

// Reader reads the limit files of one hierarchy, noting failures.
struct Reader {
  ContainerLimits* out;
  bool read_any = false;

  // Read returns the trimmed text of `path`, or nullopt when it is missing or unreadable.
  std::optional<std::string> Read(const std::string& path) {
    std::string text;
    int error = 0;
    switch (ReadSmallFile(path, &text, &error)) {
      case ReadResult::kMissing:
        return std::nullopt;
      case ReadResult::kError:
        out->notes.push_back(absl::StrCat(
            "cannot read ", path, ": ", error == 0 ? "not a regular file" : std::strerror(error)));
        return std::nullopt;
      case ReadResult::kOk:
        break;
    }
    read_any = true;
    return std::string(absl::StripAsciiWhitespace(text));
  }

  void Malformed(const std::string& path, absl::string_view text) {
    out->notes.push_back(absl::StrCat("cannot parse ", path, ": '", text, "'"));
  }
};

void MinInto(std::optional<double>* limit, double v) {
  if (!limit->has_value() || v < **limit) *limit = v;
}

// CpuLimit reads the CPU quota of `dirs` (the smallest; nullopt: none).
std::optional<double> CpuLimit(int version, const std::vector<std::string>& dirs, Reader& r) {
  std::optional<double> limit;
  for (const std::string& dir : dirs) {
    if (version == 2) {
      const std::string path = absl::StrCat(dir, "/cpu.max");
      std::optional<std::string> text = r.Read(path);
      if (!text) continue;
      const std::vector<absl::string_view> f =
          absl::StrSplit(*text, ' ', absl::SkipWhitespace());
      int64_t quota = 0, period = 0;
      if (f.size() == 2 && f[0] == "max" && absl::SimpleAtoi(f[1], &period)) continue;
      if (f.size() != 2 || !absl::SimpleAtoi(f[0], &quota) ||
          !absl::SimpleAtoi(f[1], &period) || quota <= 0 || period <= 0) {
        r.Malformed(path, *text);
        continue;
      }
      MinInto(&limit, static_cast<double>(quota) / static_cast<double>(period));
    } else {
      const std::string quota_path = absl::StrCat(dir, "/cpu.cfs_quota_us");
      const std::string period_path = absl::StrCat(dir, "/cpu.cfs_period_us");
      std::optional<std::string> quota_text = r.Read(quota_path);
      if (!quota_text) continue;
      int64_t quota = 0, period = 0;
      if (!absl::SimpleAtoi(*quota_text, &quota) || quota == 0 || quota < -1) {
        r.Malformed(quota_path, *quota_text);
        continue;
      }
      if (quota == -1) continue;
      std::optional<std::string> period_text = r.Read(period_path);
      if (!period_text) {
        r.out->notes.push_back(absl::StrCat(period_path, " is missing beside ", quota_path));
        continue;
      }
      if (!absl::SimpleAtoi(*period_text, &period) || period <= 0) {
        r.Malformed(period_path, *period_text);
        continue;
      }
      MinInto(&limit, static_cast<double>(quota) / static_cast<double>(period));
    }
  }
  return limit;
}

// MemoryLimit reads the memory limit of `dirs` (the smallest; nullopt: none).
std::optional<uint64_t> MemoryLimit(int version, const std::vector<std::string>& dirs,
                                    Reader& r) {
  std::optional<uint64_t> limit;
  for (const std::string& dir : dirs) {
    const std::string path =
        absl::StrCat(dir, version == 2 ? "/memory.max" : "/memory.limit_in_bytes");
    std::optional<std::string> text = r.Read(path);
    if (!text) continue;
    if (version == 2 && *text == "max") continue;
    uint64_t bytes = 0;
    if (!absl::SimpleAtoi(*text, &bytes)) {
      r.Malformed(path, *text);
      continue;
    }
    if (version == 1 && bytes >= kUnlimitedV1Bytes) continue;
    if (bytes == 0) {
      // No kernel writes 0 for "no limit"; a 0 (a fake or broken file) is not taken as
      // one, and the other levels' limits stay.
      r.out->notes.push_back(absl::StrCat(path, " is 0: ignored"));
      continue;
    }
    if (!limit.has_value() || bytes < *limit) limit = bytes;
  }
  return limit;
}

bool Has(const std::vector<std::string>& list, absl::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Hierarchy picks the mount to read `controller` from: v2 when its root lists the
// controller, else the v1 mount with it; null when neither.
const Mount* Hierarchy(const std::vector<Mount>& mounts, absl::string_view controller,
                       Reader& v2_reader) {
  for (const Mount& m : mounts) {
    if (m.version != 2) continue;
    std::optional<std::string> text = v2_reader.Read(absl::StrCat(m.dir, "/cgroup.controllers"));
    if (!text) continue;
    const std::vector<std::string> controllers =
        absl::StrSplit(*text, ' ', absl::SkipWhitespace());
    if (Has(controllers, controller)) return &m;
  }
  for (const Mount& m : mounts) {
    if (m.version == 1 && Has(m.controllers, controller)) return &m;
  }
  return nullptr;
}

}  // namespace

ContainerLimits ParseContainerLimits(const ContainerLimitsInputs& in) {
  ContainerLimits out;
  out.cpus_available = std::max<uint32_t>(1, in.cpus_available);
  if (in.cgroup_root.empty()) return out;
  struct stat st;
  if (stat(in.cgroup_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    out.notes.push_back(absl::StrCat("the cgroup root ", in.cgroup_root, " is not a directory"));
    return out;
  }
  const std::vector<Mount> mounts = ParseMounts(in.proc_self_mountinfo, in.cgroup_root);
  Reader v1{&out}, v2{&out};
  // cgroup.controllers says which controllers v2 has, not a limit: it does not make the
  // result "cgroup v2" on its own.
  Reader probe{&out};
  for (absl::string_view controller : {"cpu", "memory"}) {
    const Mount* m = Hierarchy(mounts, controller, probe);
    if (m == nullptr) continue;
    std::optional<std::string> path = CgroupPath(in.proc_self_cgroup, m->version, controller);
    if (!path) {
      out.notes.push_back(absl::StrCat("/proc/self/cgroup names no ", controller,
                                       " cgroup of the hierarchy at ", m->dir));
      continue;
    }
    const std::vector<std::string> dirs = Dirs(*m, *path, &out.notes);
    Reader& r = m->version == 2 ? v2 : v1;
    if (controller == absl::string_view("cpu")) {
      out.cpu_limit = CpuLimit(m->version, dirs, r).value_or(0);
    } else {
      const uint64_t bytes = MemoryLimit(m->version, dirs, r).value_or(0);
      if (bytes > 0 && in.host_memory_bytes > 0 && bytes >= in.host_memory_bytes) {
        out.notes.push_back(absl::StrCat("the memory limit (", bytes,
                                         " bytes) is not below the host's memory (",
                                         in.host_memory_bytes, " bytes): no limit"));
      } else {
        out.memory_limit_bytes = bytes;
      }
    }
  }
  out.cgroup = v2.read_any ? "cgroup v2" : v1.read_any ? "cgroup v1" : "none";
  return out;
}

ContainerLimits ReadContainerLimits(absl::string_view cgroup_root) {
  ContainerLimitsInputs in;
  in.cgroup_root = std::string(cgroup_root);
  int error = 0;
  ReadSmallFile("/proc/self/cgroup", &in.proc_self_cgroup, &error, 1 << 20);
  ReadSmallFile("/proc/self/mountinfo", &in.proc_self_mountinfo, &error, 1 << 20);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    in.cpus_available = static_cast<uint32_t>(CPU_COUNT(&set));
  } else {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    in.cpus_available = n > 0 ? static_cast<uint32_t>(n) : 1;
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) in.host_memory_bytes = static_cast<uint64_t>(pages) * page;
  return ParseContainerLimits(in);
}

}  // namespace smcrypt::server
