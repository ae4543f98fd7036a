// container_limits.h — the CPU quota and memory limit of the cgroup this process runs in
// (docs/deployment.md, "Sizing").
//
// The process's cgroup of each hierarchy comes from /proc/self/cgroup, the hierarchy's
// mount point and root from /proc/self/mountinfo. Under cgroup v2 (a "cgroup2" mount whose
// root cgroup.controllers lists the controller) the limits are cpu.max ("QUOTA PERIOD",
// "max PERIOD": none) and memory.max ("max": none); under cgroup v1 (a "cgroup" mount with
// the "cpu" or "memory" controller) cpu.cfs_quota_us / cpu.cfs_period_us (quota -1: none)
// and memory.limit_in_bytes (2^62 bytes or more, or at least the host's memory: none). A
// resource is read from v2 when the v2 hierarchy has its controller, else from v1 (hybrid
// hosts mount an empty v2 hierarchy beside v1). The limit in force is the smallest one on
// the path from the process's cgroup up to the hierarchy's mount root: a directory or file
// missing on that path (a cgroup namespace, a fake tree) is skipped, an unreadable or
// malformed file is noted and skipped.
//
// Mount points under /sys/fs/cgroup are read under `cgroup_root` instead, so tests give
// a fake tree (smcryptd's --cgroup_root). Nothing here fails: what cannot be read is no
// limit, and `notes` says why (a root that is not a directory, an unreadable or malformed
// file; a missing file is not noted).
#ifndef SMCRYPT_SERVER_CONTAINER_LIMITS_H_
#define SMCRYPT_SERVER_CONTAINER_LIMITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace smcrypt::server {

inline constexpr char kDefaultCgroupRoot[] = "/sys/fs/cgroup";

struct ContainerLimits {
  // Where the limits were read: "cgroup v2" or "cgroup v1" (a limit file of that version
  // was read, whether or not it held a limit), "none" (none could be read).
  std::string cgroup = "none";
  // cpu_limit: quota / period in CPUs (e.g. 2.5); 0: no quota.
  double cpu_limit = 0;
  // memory_limit_bytes: 0: no limit.
  uint64_t memory_limit_bytes = 0;
  // cpus_available: CPUs the process may run on (sched_getaffinity), at least 1.
  uint32_t cpus_available = 1;
  // notes: files that could not be read or parsed, one line each, for the log.
  std::vector<std::string> notes;
};

// ContainerLimitsInputs: what ParseContainerLimits reads besides the cgroup files.
struct ContainerLimitsInputs {
  // The cgroup file system root; mount points under /sys/fs/cgroup are read under it.
  // Empty: no cgroup file is read (cgroup "none").
  std::string cgroup_root = kDefaultCgroupRoot;
  std::string proc_self_cgroup;     // the text of /proc/self/cgroup
  std::string proc_self_mountinfo;  // the text of /proc/self/mountinfo
  uint32_t cpus_available = 1;      // sched_getaffinity's count
  uint64_t host_memory_bytes = 0;   // physical memory; 0: unknown
};

// ParseContainerLimits reads the limit files named by `in` (the pure core: tests pass
// fake /proc texts and trees).
ContainerLimits ParseContainerLimits(const ContainerLimitsInputs& in);

// ReadContainerLimits is ParseContainerLimits on this process: /proc/self/cgroup,
// /proc/self/mountinfo, sched_getaffinity and the host's physical memory.
ContainerLimits ReadContainerLimits(absl::string_view cgroup_root);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_CONTAINER_LIMITS_H_
