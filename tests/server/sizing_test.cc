// sizing_test.cc — server/engine/container_limits.h on fake cgroup trees (v1, v2,
// hybrid, nested, unlimited, missing, unreadable and malformed files) and
// server/engine/sizing.h's derived values, sources and bound (label unit).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/engine/command_line.h"
#include "server/engine/container_limits.h"
#include "server/engine/sizing.h"

namespace smcrypt::server {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// FakeTree is a temporary cgroup root with the /proc texts that point into it.
class FakeTree {
 public:
  FakeTree() {
    root_ = fs::temp_directory_path() /
            absl::StrCat("smcrypt_sizing_", getpid(), "_", counter_++);
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakeTree() { fs::remove_all(root_); }

  // Write puts `text` at `relative` (under the root), creating directories.
  void Write(const std::string& relative, const std::string& text) {
    const fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return root_.string(); }

  ContainerLimits Parse(const std::string& proc_cgroup, const std::string& mountinfo,
                        uint32_t cpus = 8, uint64_t host_memory = 64 * kGiB) const {
    ContainerLimitsInputs in;
    in.cgroup_root = root();
    in.proc_self_cgroup = proc_cgroup;
    in.proc_self_mountinfo = mountinfo;
    in.cpus_available = cpus;
    in.host_memory_bytes = host_memory;
    return ParseContainerLimits(in);
  }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

// Mountinfo lines as the kernel writes them.
const char kV2Mount[] = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
const char kV1Mounts[] =
    "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

TEST(ContainerLimitsTest, CgroupV2QuotaAndMemoryOfTheProcessCgroup) {
  FakeTree t;
  t.Write("cgroup.controllers", "cpuset cpu io memory pids\n");
  t.Write("kubepods/pod1/c1/cpu.max", "250000 100000\n");
  t.Write("kubepods/pod1/c1/memory.max", "1073741824\n");
  const ContainerLimits l = t.Parse("0::/kubepods/pod1/c1\n", kV2Mount);
  EXPECT_EQ(l.cgroup, "cgroup v2");
  EXPECT_DOUBLE_EQ(l.cpu_limit, 2.5);
  EXPECT_EQ(l.memory_limit_bytes, kGiB);
  EXPECT_EQ(l.cpus_available, 8u);
  EXPECT_TRUE(l.notes.empty()) << l.notes[0];
}

TEST(ContainerLimitsTest, CgroupV2MaxIsNoLimitAndAnAncestorsLimitApplies) {
  FakeTree t;
  t.Write("cgroup.controllers", "cpu memory\n");
  t.Write("kubepods/cpu.max", "400000 100000\n");
  t.Write("kubepods/memory.max", "2147483648\n");
  t.Write("kubepods/pod1/cpu.max", "max 100000\n");
  t.Write("kubepods/pod1/memory.max", "max\n");
  // The leaf has no files of its own (a fake tree, or controllers off there).
  const ContainerLimits l = t.Parse("0::/kubepods/pod1/c1\n", kV2Mount);
  EXPECT_EQ(l.cgroup, "cgroup v2");
  EXPECT_DOUBLE_EQ(l.cpu_limit, 4);
  EXPECT_EQ(l.memory_limit_bytes, 2 * kGiB);
}

TEST(ContainerLimitsTest, TheSmallestLimitOnThePathWins) {
  FakeTree t;
  t.Write("cgroup.controllers", "cpu memory\n");
  t.Write("a/cpu.max", "100000 100000\n");
  t.Write("a/memory.max", "536870912\n");
  t.Write("a/b/cpu.max", "300000 100000\n");
  t.Write("a/b/memory.max", "1073741824\n");
  const ContainerLimits l = t.Parse("0::/a/b\n", kV2Mount);
  EXPECT_DOUBLE_EQ(l.cpu_limit, 1);
  EXPECT_EQ(l.memory_limit_bytes, 512 * kMiB);
}

TEST(ContainerLimitsTest, CgroupV2WithoutLimitsIsV2WithNone) {
  FakeTree t;
  t.Write("cgroup.controllers", "cpu memory\n");
  t.Write("cpu.max", "max 100000\n");
  t.Write("memory.max", "max\n");
  const ContainerLimits l = t.Parse("0::/\n", kV2Mount, 4);
  EXPECT_EQ(l.cgroup, "cgroup v2");
  EXPECT_EQ(l.cpu_limit, 0);
  EXPECT_EQ(l.memory_limit_bytes, 0u);
  EXPECT_EQ(l.cpus_available, 4u);
}

TEST(ContainerLimitsTest, CgroupV1QuotaPeriodAndLimit) {
  FakeTree t;
  t.Write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "200000\n");
  t.Write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  t.Write("memory/docker/abc/memory.limit_in_bytes", "1073741824\n");
  const ContainerLimits l = t.Parse(
      "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/docker/abc\n", kV1Mounts);
  EXPECT_EQ(l.cgroup, "cgroup v1");
  EXPECT_DOUBLE_EQ(l.cpu_limit, 2);
  EXPECT_EQ(l.memory_limit_bytes, kGiB);
}

TEST(ContainerLimitsTest, CgroupV1UnlimitedValues) {
  FakeTree t;
  t.Write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  t.Write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  t.Write("memory/memory.limit_in_bytes", "9223372036854771712\n");
  const ContainerLimits l = t.Parse("12:memory:/\n4:cpu,cpuacct:/\n0::/\n", kV1Mounts);
  EXPECT_EQ(l.cgroup, "cgroup v1");
  EXPECT_EQ(l.cpu_limit, 0);
  EXPECT_EQ(l.memory_limit_bytes, 0u);
}

TEST(ContainerLimitsTest, AV1LimitAboveTheHostsMemoryIsNoLimit) {
  FakeTree t;
  t.Write("memory/memory.limit_in_bytes", absl::StrCat(128 * kGiB));
  const ContainerLimits l = t.Parse("12:memory:/\n4:cpu,cpuacct:/\n", kV1Mounts, 8, 64 * kGiB);
  EXPECT_EQ(l.memory_limit_bytes, 0u);
  ASSERT_EQ(l.notes.size(), 1u);
  EXPECT_NE(l.notes[0].find("not below the host's memory"), std::string::npos) << l.notes[0];
}

// A memory limit at 2^64 - 1 is exact, not a double cast back into 0.
TEST(ContainerLimitsTest, AV2LimitOf2To64Minus1IsNoLimitWithItsBytes) {
  FakeTree t;
  t.Write("cgroup.controllers", "cpu memory\n");
  t.Write("memory.max", "18446744073709551615\n");
  const ContainerLimits l = t.Parse("0::/\n", kV2Mount);
  EXPECT_EQ(l.memory_limit_bytes, 0u);
  ASSERT_EQ(l.notes.size(), 1u);
  EXPECT_NE(l.notes[0].find("the memory limit (18446744073709551615 bytes) is not below"),
            std::string::npos)
      << l.notes[0];
}

// A 0 limit is noted and ignored; the child's limit stays.
TEST(ContainerLimitsTest, AZeroParentLimitIsIgnoredAndTheChildsStays) {
  FakeTree t;
  t.Write("memory/memory.limit_in_bytes", "0\n");
  t.Write("memory/docker/memory.limit_in_bytes", absl::StrCat(512 * kMiB));
  const ContainerLimits l = t.Parse("12:memory:/docker\n4:cpu,cpuacct:/docker\n", kV1Mounts);
  EXPECT_EQ(l.memory_limit_bytes, 512 * kMiB);
  ASSERT_EQ(l.notes.size(), 1u);
  EXPECT_NE(l.notes[0].find("memory.limit_in_bytes is 0: ignored"), std::string::npos)
      << l.notes[0];
}

// Hybrid: v1 controllers beside an empty v2 hierarchy (this is what systemd's hybrid
// mode mounts); the v1 limits are read.
TEST(ContainerLimitsTest, HybridReadsV1WhenV2HasNoControllers) {
  FakeTree t;
  t.Write("unified/cgroup.controllers", "\n");
  t.Write("unified/memory.max", "1\n");  // not a controller there: ignored
  t.Write("memory/memory.limit_in_bytes", "1073741824\n");
  t.Write("cpu,cpuacct/cpu.cfs_quota_us", "150000\n");
  t.Write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  const ContainerLimits l = t.Parse("12:memory:/\n4:cpu,cpuacct:/\n0::/\n", kV1Mounts);
  EXPECT_EQ(l.cgroup, "cgroup v1");
  EXPECT_DOUBLE_EQ(l.cpu_limit, 1.5);
  EXPECT_EQ(l.memory_limit_bytes, kGiB);
}

// A v1 hierarchy mounted at the container's own cgroup (Docker without a cgroup
// namespace): /proc/self/cgroup names the full path, mountinfo its root.
TEST(ContainerLimitsTest, MountRootIsTakenOffTheProcessPath) {
  FakeTree t;
  t.Write("memory/memory.limit_in_bytes", "268435456\n");
  const ContainerLimits l =
      t.Parse("12:memory:/docker/abc\n",
              "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n");
  EXPECT_EQ(l.memory_limit_bytes, 256 * kMiB);
  EXPECT_TRUE(l.notes.empty());
}

TEST(ContainerLimitsTest, MissingFilesAndMountsAreNoLimit) {
  FakeTree t;
  // No files at all under either kind of mount.
  EXPECT_EQ(t.Parse("0::/\n", kV2Mount).cgroup, "none");
  const ContainerLimits l = t.Parse("12:memory:/\n4:cpu,cpuacct:/\n", kV1Mounts);
  EXPECT_EQ(l.cgroup, "none");
  EXPECT_EQ(l.cpu_limit, 0);
  EXPECT_EQ(l.memory_limit_bytes, 0u);
  // No cgroup mount, or no /proc texts.
  EXPECT_EQ(t.Parse("", "").cgroup, "none");
  // An empty root reads nothing.
  ContainerLimitsInputs in;
  in.cgroup_root = "";
  in.proc_self_cgroup = "0::/\n";
  in.proc_self_mountinfo = kV2Mount;
  in.cpus_available = 3;
  const ContainerLimits none = ParseContainerLimits(in);
  EXPECT_EQ(none.cgroup, "none");
  EXPECT_EQ(none.cpus_available, 3u);
  EXPECT_TRUE(none.notes.empty());
  // A root that is not there is noted (a mistyped --cgroup_root).
  in.cgroup_root = t.root() + "/nonexistent";
  const ContainerLimits missing = ParseContainerLimits(in);
  EXPECT_EQ(missing.cgroup, "none");
  ASSERT_EQ(missing.notes.size(), 1u);
  EXPECT_NE(missing.notes[0].find("is not a directory"), std::string::npos) << missing.notes[0];
}

TEST(ContainerLimitsTest, UnreadableAndMalformedFilesAreNotedAndSkipped) {
  FakeTree t;
  t.Write("cgroup.controllers", "cpu memory\n");
  // A directory where memory.max should be: reading it fails (EISDIR), even as root.
  fs::create_directories(fs::path(t.root()) / "a" / "memory.max");
  t.Write("memory.max", "536870912\n");
  t.Write("a/cpu.max", "lots 100000\n");
  t.Write("cpu.max", "50000 100000\n");
  const ContainerLimits l = t.Parse("0::/a\n", kV2Mount);
  EXPECT_EQ(l.memory_limit_bytes, 512 * kMiB);
  EXPECT_DOUBLE_EQ(l.cpu_limit, 0.5);
  ASSERT_EQ(l.notes.size(), 2u);
  EXPECT_NE(l.notes[0].find("cannot parse"), std::string::npos) << l.notes[0];
  EXPECT_NE(l.notes[1].find("cannot read"), std::string::npos) << l.notes[1];
}

// A FIFO (or device) where a limit file should be is noted and skipped: start-up must
// not wait for a writer. Were the parse to block, the test writes to the FIFO to free it
// and fails.
TEST(ContainerLimitsTest, AFifoOrDeviceInTheTreeIsSkippedWithoutBlocking) {
  FakeTree t;
  t.Write("cgroup.controllers", "cpu memory\n");
  t.Write("memory.max", "536870912\n");
  t.Write("a/placeholder", "");
  const std::string fifo = absl::StrCat(t.root(), "/a/memory.max");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", fs::path(t.root()) / "a" / "cpu.max");
  auto result = std::make_shared<std::promise<ContainerLimits>>();
  std::future<ContainerLimits> done = result->get_future();
  std::thread([&t, result] { result->set_value(t.Parse("0::/a\n", kV2Mount)); }).detach();
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    const int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) {
      (void)!write(fd, "1\n", 2);
      close(fd);
    }
    done.wait();
    FAIL() << "parsing blocked on the FIFO";
  }
  const ContainerLimits l = done.get();
  EXPECT_EQ(l.memory_limit_bytes, 512 * kMiB);
  EXPECT_EQ(l.cpu_limit, 0);
  ASSERT_EQ(l.notes.size(), 2u);
  for (const std::string& note : l.notes) {
    EXPECT_NE(note.find("not a regular file"), std::string::npos) << note;
  }
}

TEST(ContainerLimitsTest, EscapedMountPoints) {
  FakeTree t;
  t.Write("my cgroup/memory.limit_in_bytes", "1048576\n");
  const ContainerLimits l = t.Parse(
      "3:memory:/\n", "35 31 0:32 / /sys/fs/cgroup/my\\040cgroup rw - cgroup cgroup rw,memory\n");
  EXPECT_EQ(l.memory_limit_bytes, kMiB);
}

TEST(ContainerLimitsTest, ReadsThisProcess) {
  const ContainerLimits l = ReadContainerLimits(kDefaultCgroupRoot);
  EXPECT_GE(l.cpus_available, 1u);
  EXPECT_TRUE(l.cgroup == "none" || l.cgroup == "cgroup v1" || l.cgroup == "cgroup v2");
}

// ---- Sizing ----------------------------------------------------------------------

ContainerLimits Limits(double cpus, uint64_t memory, uint32_t available = 64) {
  ContainerLimits l;
  l.cgroup = "cgroup v2";
  l.cpu_limit = cpus;
  l.memory_limit_bytes = memory;
  l.cpus_available = available;
  return l;
}

const SizedValue* Find(const Sizing& s, const std::string& name) {
  for (const SizedValue& v : s.values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

// Threads follow the quota rounded down (at least 1), at most the CPUs available.
TEST(SizingTest, WorkerThreadsFollowTheQuota) {
  struct Case {
    double quota;
    uint32_t available;
    int32_t threads;
    const char* source;
  } cases[] = {
      {2, 64, 2, "cgroup cpu"},   {2.5, 64, 2, "cgroup cpu"}, {0.5, 64, 1, "cgroup cpu"},
      {0, 64, 64, "host"},        {8, 4, 4, "host"},          {3.99, 64, 3, "cgroup cpu"},
  };
  for (const Case& c : cases) {
    const Sizing s = DeriveSizing(Limits(c.quota, 0, c.available), {});
    EXPECT_EQ(s.worker_threads, c.threads) << c.quota << " of " << c.available;
    EXPECT_EQ(Find(s, "worker_threads")->source, c.source) << c.quota;
  }
  SizingFlags flags;
  flags.worker_threads = 7;
  EXPECT_EQ(DeriveSizing(Limits(2, 0), flags).worker_threads, 7);
  EXPECT_EQ(Find(DeriveSizing(Limits(2, 0), flags), "worker_threads")->source, "flag");
  flags.worker_threads = -1;  // -1 asks for the derived count
  EXPECT_EQ(DeriveSizing(Limits(2, 0), flags).worker_threads, 2);
}

TEST(SizingTest, WithoutAMemoryLimitTheDefaultsStay) {
  const Sizing s = DeriveSizing(Limits(0, 0, 2), {});
  EXPECT_EQ(s.max_inflight_bytes, 128 * kMiB);
  EXPECT_EQ(s.grpc_memory_quota, 256 * kMiB);
  EXPECT_EQ(s.max_concurrent_streams, 256u);
  EXPECT_EQ(s.public_key_cache_size, 1024u);
  for (const char* name : {"max_inflight_bytes", "grpc_memory_quota", "max_concurrent_streams",
                           "public_key_cache_size", "sizing_connections"}) {
    EXPECT_EQ(Find(s, name)->source, "default") << name;
  }
  EXPECT_TRUE(s.warning.empty());
}

// The prod overlay's limits: 1 GiB and 2 CPUs (docs/deployment.md, "Sizing").
TEST(SizingTest, OneGiBTwoCpus) {
  const Sizing s = DeriveSizing(Limits(2, kGiB), {});
  EXPECT_EQ(s.worker_threads, 2);
  EXPECT_EQ(s.max_inflight_bytes, 128 * kMiB);
  EXPECT_EQ(s.grpc_memory_quota, 192 * kMiB);
  EXPECT_EQ(s.max_concurrent_streams, 57u);
  EXPECT_EQ(s.public_key_cache_size, 279u);
  for (const char* name : {"max_inflight_bytes", "grpc_memory_quota", "max_concurrent_streams",
                           "public_key_cache_size"}) {
    EXPECT_EQ(Find(s, name)->source, "cgroup memory") << name;
  }
  ASSERT_TRUE(s.memory_bound_bytes.has_value());
  EXPECT_LE(*s.memory_bound_bytes, kGiB / 4 * 3);
  EXPECT_TRUE(s.warning.empty()) << s.warning;
}

// For every limit from 256 MiB to 64 GiB and several connection counts the derived
// bound stays within three quarters of the limit; a limit too small for the fixed terms
// (idle size, burst, the largest call) gets a warning instead.
TEST(SizingTest, DerivedBoundStaysBelowTheLimit) {
  for (uint64_t limit = 256 * kMiB; limit <= 64 * kGiB; limit = limit * 5 / 4) {
    for (uint32_t connections : {1u, 8u, 64u, 1000u}) {
      if (connections == 1000 && limit < 2 * kGiB) continue;
      SizingFlags flags;
      flags.sizing_connections = connections;
      const Sizing s = DeriveSizing(Limits(2, limit), flags);
      ASSERT_TRUE(s.memory_bound_bytes.has_value());
      EXPECT_LE(*s.memory_bound_bytes, limit / 4 * 3)
          << limit << " bytes, " << connections << " connections: " << FormatSizing(s);
      EXPECT_TRUE(s.warning.empty()) << s.warning;
      EXPECT_GE(s.max_inflight_bytes, flags.max_message_bytes);
      EXPECT_GE(s.max_concurrent_streams, 1u);
    }
  }
  const Sizing tiny = DeriveSizing(Limits(1, 128 * kMiB), {});
  EXPECT_NE(tiny.warning.find("is not below the memory limit of 128 MiB"), std::string::npos)
      << FormatSizing(tiny);
}

// Explicit flags win; what is left is shared among the rest.
TEST(SizingTest, FlagsWinAndTheRestShareWhatIsLeft) {
  SizingFlags flags;
  flags.grpc_memory_quota = 64 * kMiB;
  flags.max_concurrent_streams = 100;
  const Sizing s = DeriveSizing(Limits(2, kGiB), flags);
  EXPECT_EQ(s.grpc_memory_quota, 64 * kMiB);
  EXPECT_EQ(s.max_concurrent_streams, 100u);
  EXPECT_EQ(Find(s, "grpc_memory_quota")->source, "flag");
  EXPECT_EQ(Find(s, "max_concurrent_streams")->source, "flag");
  EXPECT_EQ(Find(s, "max_inflight_bytes")->source, "cgroup memory");
  // 704 - 128 - 64 - 64 x 100 x 80 KiB (500 MiB) = 12 MiB left, all for the caches.
  EXPECT_EQ(s.public_key_cache_size, 12 * kMiB / (3 * 120000));
  EXPECT_TRUE(s.warning.empty()) << s.warning;
}

TEST(SizingTest, FlagsOverTheLimitWarnWithTheNumbers) {
  SizingFlags flags;
  flags.max_inflight_bytes = 512 * kMiB;
  flags.grpc_memory_quota = 512 * kMiB;
  const Sizing s = DeriveSizing(Limits(2, kGiB), flags);
  EXPECT_EQ(s.max_inflight_bytes, 512 * kMiB);
  EXPECT_NE(s.warning.find("is not below the memory limit of 1024 MiB"), std::string::npos)
      << s.warning;
  EXPECT_NE(s.warning.find("--max_inflight_bytes 512 MiB"), std::string::npos) << s.warning;
  flags = {};
  flags.grpc_memory_quota = 0;
  EXPECT_NE(DeriveSizing(Limits(2, kGiB), flags).warning.find("unbounded"), std::string::npos);
  // Without a limit there is nothing to pass.
  EXPECT_TRUE(DeriveSizing(Limits(2, 0), flags).warning.empty());
}

// Flags near 2^64 saturate the bound (over the limit, with a warning), never wrap it.
TEST(SizingTest, HugeFlagsSaturateTheBoundAndWarn) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  constexpr uint32_t kMax32 = std::numeric_limits<uint32_t>::max();
  SizingFlags cache;
  cache.public_key_cache_size = kMax;
  SizingFlags streams;
  streams.sizing_connections = kMax32;
  streams.max_concurrent_streams = kMax32;
  SizingFlags message;
  message.max_message_bytes = kMax;
  for (const SizingFlags& flags : {cache, streams, message}) {
    const Sizing s = DeriveSizing(Limits(2, kGiB), flags);
    ASSERT_TRUE(s.memory_bound_bytes.has_value());
    EXPECT_EQ(*s.memory_bound_bytes, kMax);
    EXPECT_NE(s.warning.find("over 2^64 bytes"), std::string::npos) << s.warning;
    EXPECT_NE(FormatSizing(s).find("worst case over 2^64 bytes"), std::string::npos);
  }
  EXPECT_EQ(*MemoryGrowthBound(1, 1, kMax32, 0, 1, kMax32), kMax);
}

// A derived value cut to its minimum because a flag took the share names that flag.
TEST(SizingTest, AValueAtItsMinimumNamesTheFlagThatTookItsShare) {
  SizingFlags flags;
  flags.public_key_cache_size = 2000;
  const Sizing s = DeriveSizing(Limits(2, kGiB), flags);
  EXPECT_EQ(s.max_concurrent_streams, 1u);
  EXPECT_EQ(s.grpc_memory_quota, kMiB);
  ASSERT_EQ(s.minimums.size(), 2u);
  EXPECT_NE(s.minimums[0].find("--grpc_memory_quota is sized to its minimum, 1 MiB"),
            std::string::npos)
      << s.minimums[0];
  EXPECT_NE(s.minimums[1].find("--max_concurrent_streams is sized to its minimum, 1"),
            std::string::npos)
      << s.minimums[1];
  for (const std::string& line : s.minimums) {
    EXPECT_NE(line.find("the terms of --public_key_cache_size (686 MiB) took its share"),
              std::string::npos)
        << line;
  }
  // Derived values above their minimums have no line.
  EXPECT_TRUE(DeriveSizing(Limits(2, kGiB), {}).minimums.empty());
  EXPECT_TRUE(DeriveSizing(Limits(2, 0), flags).minimums.empty());
}

// Sizes under 1 MiB are printed in bytes.
TEST(SizingTest, ALimitUnderOneMiBIsPrintedInBytes) {
  const Sizing s = DeriveSizing(Limits(2, 1), SizingFlags{});
  EXPECT_NE(FormatSizing(s).find("memory limit 1 bytes"), std::string::npos) << FormatSizing(s);
  EXPECT_NE(s.warning.find("memory limit of 1 bytes"), std::string::npos) << s.warning;
}

TEST(SizingTest, BoundIsTheDocumentedFormula) {
  // docs/service.md's example: the defaults and 100 connections.
  const std::optional<uint64_t> b = MemoryGrowthBound(128 * kMiB, 256 * kMiB, 256, 1024,
                                                      4 * kMiB, 100);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*b, 128 * kMiB + 256 * kMiB + 100 * 256 * (80 << 10) + 3 * 1024 * 120000 +
                    32 * kMiB);
  // A budget below the largest call counts the call.
  EXPECT_EQ(*MemoryGrowthBound(8 * kMiB, 8 * kMiB, 1, 0, 4 * kMiB, 1),
            12 * kMiB + 2048 + 64 * kMiB + 8 * kMiB + (80 << 10) + 32 * kMiB);
  EXPECT_FALSE(MemoryGrowthBound(0, 1, 1, 0, 1, 1).has_value());
}

// Every form Abseil's parser takes counts as given, whatever the value (the default's
// included); names that are not flags, values and arguments after "--" do not.
TEST(FlagsOnCommandLineTest, EveryFormAbseilAcceptsCountsAsGiven) {
  const std::map<std::string, bool> known = {
      {"max_inflight", false}, {"listen", false},      {"batching", true},
      {"drain_delay", false},  {"print_sizing", true}, {"shutdown_grace", false},
      {"audit_log", false},    {"log_format", false},  {"max_message_bytes", false}};
  EXPECT_EQ(FlagsOnCommandLine({"--max_inflight=65536", "-listen=0.0.0.0:1", "--nobatching",
                                "--drain_delay", "0", "-print_sizing", "--unknown=1",
                                "positional", "--", "--shutdown_grace=1s"},
                               known),
            (std::set<std::string>{"max_inflight", "listen", "batching", "drain_delay",
                                   "print_sizing"}));
  // A non-bool flag's separate value is not read as a flag; "--nolisten" is no flag.
  EXPECT_EQ(FlagsOnCommandLine({"--audit_log", "--log_format=json", "--nolisten"}, known),
            (std::set<std::string>{"audit_log"}));
  EXPECT_TRUE(FlagsOnCommandLine({}, known).empty());
  EXPECT_TRUE(FlagsOnCommandLine({"-", "--", "--max_inflight=1"}, known).empty());
}

TEST(FlagsOnCommandLineTest, FlagfileAndFromenvFlagsCountAsGiven) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("smcrypt_cmdline_", getpid());
  fs::create_directories(dir);
  const fs::path inner = dir / "inner.flags";
  const fs::path outer = dir / "outer.flags";
  std::ofstream(inner) << "--drain_delay=0s\n";
  std::ofstream(outer) << "# sizing\n  --max_inflight=65536\n\n-batching\n--flagfile="
                       << inner.string() << "\n";
  const std::map<std::string, bool> known = {{"max_inflight", false},
                                             {"batching", true},
                                             {"drain_delay", false},
                                             {"listen", false},
                                             {"shutdown_grace", false}};
  EXPECT_EQ(FlagsOnCommandLine({"--flagfile", outer.string(), "--fromenv=listen,nosuchflag"},
                               known),
            (std::set<std::string>{"max_inflight", "batching", "drain_delay", "listen"}));
  // An unreadable file adds nothing (the parser reports it).
  EXPECT_TRUE(FlagsOnCommandLine({"--flagfile=" + (dir / "missing").string()}, known).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace smcrypt::server
