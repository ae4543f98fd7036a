// smcryptd_sizing_test.cc — the real smcryptd sizing itself from its cgroup (label
// integration):
//   - with --cgroup_root on a fake tree of this host's cgroup mounts (1 GiB, 1.5 CPUs):
//     GetServerInfo.sizing, smcrypt_limit and the container gauges carry the documented
//     values and sources; flags given on the command line win; flags whose worst case
//     passes the limit are warned about; --cgroup_root= reads nothing;
//   - under a real limit: in a new cgroup (v1 memory and cpu, or v2) of 1 GiB and 2 CPUs,
//     smcryptd started with default flags finds that limit and answers a burst of 20,000
//     concurrent 60 KiB Encrypt calls on 64 connections with OK or RESOURCE_EXHAUSTED,
//     is not OOM-killed and peaks below the limit. Skipped where no cgroup can be made.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/overload_burst.h"
#include "tests/server/smcryptd_process.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using ::smcrypt::testing::Burst;
using ::smcrypt::testing::BurstResult;
using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::Serves;
using ::smcrypt::testing::Smcryptd;

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// CgroupMount is a cgroup hierarchy of this process's /proc/self/mountinfo.
struct CgroupMount {
  int version;                           // 1 or 2
  std::string dir;                       // mount point
  std::vector<std::string> controllers;  // v1: super options; v2: cgroup.controllers
};

std::vector<CgroupMount> CgroupMounts() {
  std::vector<CgroupMount> mounts;
  std::istringstream in(ReadFile("/proc/self/mountinfo"));
  std::string line;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ' ');
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") dash = i;
    }
    if (dash == 0 || dash + 3 >= f.size()) continue;
    if (f[dash + 1] == "cgroup2") {
      mounts.push_back({2, f[4],
                        absl::StrSplit(ReadFile(f[4] + "/cgroup.controllers"), absl::ByAnyChar(" \n"),
                                       absl::SkipEmpty())});
    } else if (f[dash + 1] == "cgroup") {
      mounts.push_back({1, f[4], absl::StrSplit(f[dash + 3], ',')});
    }
  }
  return mounts;
}

bool Has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// FakeCgroups mirrors this host's cgroup mounts under a temporary root, each with a
// 1 GiB memory limit and a 1.5 CPU quota at its top, and says which version smcryptd
// should read them from.
class FakeCgroups {
 public:
  FakeCgroups() {
    root_ = fs::temp_directory_path() / absl::StrCat("smcryptd_sizing_", getpid());
    fs::remove_all(root_);
    const std::string prefix = "/sys/fs/cgroup";
    bool v1_memory = false, v2_memory = false;
    for (const CgroupMount& m : CgroupMounts()) {
      if (m.dir.rfind(prefix, 0) != 0) continue;
      const fs::path dir = root_ / m.dir.substr(std::min(m.dir.size(), prefix.size() + 1));
      fs::create_directories(dir);
      if (m.version == 2) {
        std::string controllers;
        for (const std::string& c : m.controllers) controllers += c + " ";
        WriteFile(dir / "cgroup.controllers", controllers + "\n");
        WriteFile(dir / "memory.max", absl::StrCat(kGiB, "\n"));
        WriteFile(dir / "cpu.max", "150000 100000\n");
        v2_memory = v2_memory || Has(m.controllers, "memory");
      } else {
        if (Has(m.controllers, "memory")) {
          WriteFile(dir / "memory.limit_in_bytes", absl::StrCat(kGiB, "\n"));
          v1_memory = true;
        }
        if (Has(m.controllers, "cpu")) {
          WriteFile(dir / "cpu.cfs_quota_us", "150000\n");
          WriteFile(dir / "cpu.cfs_period_us", "100000\n");
        }
      }
    }
    version_ = v2_memory ? "cgroup v2" : v1_memory ? "cgroup v1" : "";
  }
  ~FakeCgroups() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }
  // version is "cgroup v2" or "cgroup v1", empty when this host mounts no memory cgroup.
  const std::string& version() const { return version_; }

 private:
  fs::path root_;
  std::string version_;
};

v1::GetServerInfoResponse Info(Smcryptd& server) {
  v1::GetServerInfoResponse info;
  auto ctx = Ctx(10);
  grpc::Status s = server.Stub()->GetServerInfo(ctx.get(), v1::GetServerInfoRequest(), &info);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return info;
}

// Values maps each sized value's name to "value (source)".
std::map<std::string, std::string> Values(const v1::GetServerInfoResponse& info) {
  std::map<std::string, std::string> out;
  for (const v1::SizedValue& v : info.sizing().values()) {
    out[v.name()] = absl::StrCat(v.value(), " (", v.source(), ")");
  }
  return out;
}

std::string Limit(const std::string& name, const std::string& source) {
  return absl::StrCat("smcrypt_limit{name=\"", name, "\",source=\"", source, "\"}");
}

// With 1 GiB and 1.5 CPUs and no flags: the values of docs/deployment.md, "Sizing".
TEST(SmcryptdSizingTest, FakeCgroupTreeSizesTheServer) {
  FakeCgroups fake;
  if (fake.version().empty()) GTEST_SKIP() << "this host mounts no memory cgroup to mirror";
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--cgroup_root=" + fake.root()})) << server.log();
  const v1::GetServerInfoResponse info = Info(server);
  EXPECT_EQ(info.sizing().cgroup(), fake.version());
  EXPECT_DOUBLE_EQ(info.sizing().cpu_limit(), 1.5);
  EXPECT_EQ(info.sizing().memory_limit_bytes(), kGiB);
  EXPECT_GE(info.sizing().cpus_available(), 1u);
  const std::map<std::string, std::string> values = Values(info);
  const std::string threads_source = "cgroup cpu";  // 1.5 rounded down, within the CPUs
  EXPECT_EQ(values.at("worker_threads"), "1 (" + threads_source + ")");
  EXPECT_EQ(values.at("max_inflight_bytes"), absl::StrCat(128 * kMiB, " (cgroup memory)"));
  EXPECT_EQ(values.at("grpc_memory_quota"), absl::StrCat(192 * kMiB, " (cgroup memory)"));
  EXPECT_EQ(values.at("max_concurrent_streams"), "57 (cgroup memory)");
  EXPECT_EQ(values.at("public_key_cache_size"), "279 (cgroup memory)");
  EXPECT_EQ(values.at("sizing_connections"), "64 (default)");
  EXPECT_EQ(info.max_inflight_bytes(), 128 * kMiB);
  EXPECT_NE(server.log().find("unary work runs on 1 worker threads"), std::string::npos)
      << server.log();
  EXPECT_NE(server.log().find("sizing: " + fake.version() + ", CPU limit 1.5, memory limit 1024 MiB"),
            std::string::npos)
      << server.log();
  EXPECT_EQ(server.log().find("memory: "), std::string::npos) << "no warning: " << server.log();
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics, "smcrypt_container_cpu_limit"), 1.5);
  EXPECT_EQ(MetricValue(metrics, "smcrypt_container_memory_limit_bytes"), kGiB);
  EXPECT_EQ(MetricValue(metrics, Limit("worker_threads", threads_source)), 1);
  EXPECT_EQ(MetricValue(metrics, Limit("max_inflight_bytes", "cgroup memory")), 128 * kMiB);
  EXPECT_EQ(MetricValue(metrics, Limit("grpc_memory_quota", "cgroup memory")), 192 * kMiB);
  EXPECT_EQ(MetricValue(metrics, Limit("max_concurrent_streams", "cgroup memory")), 57);
  EXPECT_EQ(MetricValue(metrics, Limit("public_key_cache_size", "cgroup memory")), 279);
  EXPECT_EQ(MetricValue(metrics, Limit("max_inflight", "default")), 65536);
  EXPECT_TRUE(Serves(server));
}

// Flags given on the command line win, with source "flag"; the rest share what is left.
TEST(SmcryptdSizingTest, FlagsWinOverTheCgroup) {
  FakeCgroups fake;
  if (fake.version().empty()) GTEST_SKIP() << "this host mounts no memory cgroup to mirror";
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--cgroup_root=" + fake.root(), "--worker_threads=3",
                            "--max_concurrent_streams=16", "--max_inflight=100",
                            "--grpc_memory_quota=67108864"}))
      << server.log();
  const std::map<std::string, std::string> values = Values(Info(server));
  EXPECT_EQ(values.at("worker_threads"), "3 (flag)");
  EXPECT_EQ(values.at("max_concurrent_streams"), "16 (flag)");
  EXPECT_EQ(values.at("grpc_memory_quota"), absl::StrCat(64 * kMiB, " (flag)"));
  EXPECT_EQ(values.at("max_inflight_bytes"), absl::StrCat(128 * kMiB, " (cgroup memory)"));
  // 704 - 128 - 64 - 64 x 16 x 80 KiB (80 MiB) = 432 MiB, all for the caches: capped.
  EXPECT_EQ(values.at("public_key_cache_size"), "1024 (cgroup memory)");
  EXPECT_NE(server.log().find("unary work runs on 3 worker threads"), std::string::npos);
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics, Limit("max_concurrent_streams", "flag")), 16);
  EXPECT_EQ(MetricValue(metrics, Limit("max_inflight", "flag")), 100);
  EXPECT_EQ(MetricValue(metrics, Limit("worker_threads", "flag")), 3);
  EXPECT_TRUE(Serves(server));
}

// Flags whose worst case passes the limit start with a warning naming the numbers.
TEST(SmcryptdSizingTest, FlagsOverTheLimitAreWarnedAbout) {
  FakeCgroups fake;
  if (fake.version().empty()) GTEST_SKIP() << "this host mounts no memory cgroup to mirror";
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--cgroup_root=" + fake.root(), "--max_inflight_bytes=805306368",
                            "--grpc_memory_quota=268435456"}))
      << server.log();
  const std::string log = server.log();
  EXPECT_NE(log.find(" W memory: the worst-case memory of these flags"), std::string::npos) << log;
  EXPECT_NE(log.find("--max_inflight_bytes 768 MiB"), std::string::npos) << log;
  EXPECT_NE(log.find("is not below the memory limit of 1024 MiB"), std::string::npos) << log;
  EXPECT_TRUE(Serves(server));
}

// --cgroup_root= reads no cgroup: the CPUs available and the built-in defaults.
TEST(SmcryptdSizingTest, EmptyCgroupRootUsesTheDefaults) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--cgroup_root="})) << server.log();
  const v1::GetServerInfoResponse info = Info(server);
  EXPECT_EQ(info.sizing().cgroup(), "none");
  EXPECT_EQ(info.sizing().memory_limit_bytes(), 0u);
  EXPECT_EQ(info.sizing().cpu_limit(), 0);
  const std::map<std::string, std::string> values = Values(info);
  EXPECT_EQ(values.at("worker_threads"), absl::StrCat(info.sizing().cpus_available(), " (host)"));
  EXPECT_EQ(values.at("max_inflight_bytes"), absl::StrCat(128 * kMiB, " (default)"));
  EXPECT_EQ(values.at("grpc_memory_quota"), absl::StrCat(256 * kMiB, " (default)"));
  EXPECT_EQ(values.at("max_concurrent_streams"), "256 (default)");
  EXPECT_EQ(values.at("public_key_cache_size"), "1024 (default)");
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics, "smcrypt_container_memory_limit_bytes"), 0);
  EXPECT_EQ(MetricValue(metrics, Limit("max_inflight_bytes", "default")), 128 * kMiB);
}

// A flag given on the command line is source "flag" even at its default value; one not
// given is "default".
TEST(SmcryptdSizingTest, AFlagGivenAtItsDefaultValueIsSourceFlag) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--cgroup_root=", "--max_inflight=65536",
                            "--max_inflight_bytes=134217728"}))
      << server.log();
  const std::string metrics = HttpGet(server.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics, Limit("max_inflight", "flag")), 65536) << metrics;
  EXPECT_EQ(MetricValue(metrics, Limit("max_inflight_bytes", "flag")), 128 * kMiB);
  EXPECT_EQ(MetricValue(metrics, Limit("max_message_bytes", "default")), 4 * kMiB);
  EXPECT_EQ(MetricValue(metrics, Limit("shutdown_grace_seconds", "default")), 20);
  EXPECT_EQ(Values(Info(server)).at("max_inflight_bytes"), absl::StrCat(128 * kMiB, " (flag)"));
}

// --print_sizing prints every value GetServerInfo's sizing lists, the share limits of
// --max_inflight_bytes included, with the same value and source.
TEST(SmcryptdSizingTest, PrintSizingListsWhatGetServerInfoLists) {
  const std::vector<std::string> flags = {"--cgroup_root=", "--max_inflight_bytes=67108864",
                                          "--max_connection_inflight_bytes=33554432"};
  Smcryptd server;
  ASSERT_TRUE(server.Start(flags)) << server.log();
  const std::map<std::string, std::string> values = Values(Info(server));
  ASSERT_EQ(values.count("max_stream_inflight_bytes"), 1u);
  EXPECT_EQ(values.at("max_stream_inflight_bytes"), absl::StrCat(20 * kMiB, " (default)"));
  EXPECT_EQ(values.at("max_connection_inflight_bytes"), absl::StrCat(32 * kMiB, " (flag)"));

  std::string command = SMCRYPTD_PATH;
  for (const std::string& f : flags) absl::StrAppend(&command, " '", f, "'");
  absl::StrAppend(&command, " --print_sizing");
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string printed;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) printed.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << printed;
  for (const auto& [name, value] : values) {
    EXPECT_NE(printed.find(absl::StrCat("\n", name, "=", value, "\n")), std::string::npos)
        << name << "=" << value << " not in\n" << printed;
  }
}

// --sizing_connections=0 plans for no connection at all: start-up fails.
TEST(SmcryptdSizingTest, ZeroSizingConnectionsFailsStartUp) {
  Smcryptd server;
  EXPECT_FALSE(server.Start({"--cgroup_root=", "--sizing_connections=0"}));
  EXPECT_EQ(server.WaitExit(), 1) << server.log();
  EXPECT_TRUE(absl::StrContains(server.log(), "--sizing_connections must be at least 1"))
      << server.log();
}

// Share limits that refuse what the other limits let in start with a warning each.
TEST(SmcryptdSizingTest, ShareLimitsThatRefuseFirstAreWarnedAbout) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--cgroup_root=", "--max_message_bytes=1048576",
                            "--max_inflight_bytes=4194304",
                            "--max_stream_inflight_bytes=2097152"}))
      << server.log();
  EXPECT_TRUE(absl::StrContains(server.log(),
                                "--max_stream_inflight_bytes=2097152 is below 5 x "
                                "--max_message_bytes (5242880)"))
      << server.log();
  Smcryptd above;
  ASSERT_TRUE(above.Start({"--cgroup_root=", "--max_inflight_bytes=8388608",
                           "--max_connection_inflight_bytes=16777216",
                           "--max_stream_inflight_bytes=33554432"}))
      << above.log();
  EXPECT_TRUE(absl::StrContains(above.log(), "--max_stream_inflight_bytes=33554432 is above "
                                             "--max_inflight_bytes (8388608)"))
      << above.log();
  EXPECT_TRUE(absl::StrContains(above.log(), "--max_stream_inflight_bytes (33554432) is above "
                                             "--max_connection_inflight_bytes (16777216)"))
      << above.log();
  Smcryptd defaults;
  ASSERT_TRUE(defaults.Start({"--cgroup_root="})) << defaults.log();
  EXPECT_FALSE(absl::StrContains(defaults.log(), "is below 5 x")) << defaults.log();
  EXPECT_FALSE(absl::StrContains(defaults.log(), "refuses first")) << defaults.log();
}

// --print_sizing refuses the flags a start refuses, with the same error.
TEST(SmcryptdSizingTest, PrintSizingChecksTheFlagsFirst) {
  for (const auto& [flag, error] : std::vector<std::pair<std::string, std::string>>{
           {"--max_inflight_bytes=1", "--max_inflight_bytes must be 0 (no limit) or at least"},
           {"--worker_threads=5000", "--worker_threads must be -1 (one per CPU)"},
           {"--sizing_connections=0", "--sizing_connections must be at least 1"},
           {"--shutdown_grace=inf", "--shutdown_grace must be 0 (cancel at once) to 1h"}}) {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--cgroup_root=", "--print_sizing", flag}));
    EXPECT_EQ(server.WaitExit(), 1) << flag << ": " << server.log();
    EXPECT_TRUE(absl::StrContains(server.log(), error)) << server.log();
    EXPECT_FALSE(absl::StrContains(server.log(), "memory_bound_bytes=")) << server.log();
  }
  Smcryptd good;
  EXPECT_FALSE(good.Start({"--cgroup_root=", "--print_sizing"}));
  EXPECT_EQ(good.WaitExit(), 0) << good.log();
  EXPECT_TRUE(absl::StrContains(good.log(), "memory_bound_bytes=")) << good.log();
}

// ---- Under a real limit -------------------------------------------------------------

// RealCgroup is a new cgroup with a memory limit and a CPU quota: under cgroup v1 a child
// of this process's own memory and cpu cgroups, under v2 (when its root delegates the
// memory and cpu controllers) a child of the root. Removed when destroyed.
class RealCgroup {
 public:
  // Create makes it; an empty string on success, else why it cannot be made.
  std::string Create(uint64_t memory_bytes, int cpus) {
    if (geteuid() != 0) return "not root";
    const std::string name = absl::StrCat("smcrypt-sizing-", getpid());
    const std::vector<CgroupMount> mounts = CgroupMounts();
    const CgroupMount* v1_memory = nullptr;
    const CgroupMount* v1_cpu = nullptr;
    const CgroupMount* v2 = nullptr;
    for (const CgroupMount& m : mounts) {
      if (m.version == 1 && Has(m.controllers, "memory") && v1_memory == nullptr) v1_memory = &m;
      if (m.version == 1 && Has(m.controllers, "cpu") && v1_cpu == nullptr) v1_cpu = &m;
      if (m.version == 2 && Has(m.controllers, "memory") && Has(m.controllers, "cpu")) v2 = &m;
    }
    if (v2 != nullptr) {
      const std::string subtree = ReadFile(v2->dir + "/cgroup.subtree_control");
      if (subtree.find("memory") == std::string::npos || subtree.find("cpu") == std::string::npos) {
        return "the cgroup v2 root does not delegate the memory and cpu controllers";
      }
      version_ = "cgroup v2";
      if (std::string e = Make(v2->dir + "/" + name, v2->dir + OwnPath(2, ""));
          !e.empty()) {
        return e;
      }
      memory_dir_ = cpu_dir_ = dirs_.back();
      if (!WriteFile(memory_dir_ + "/memory.max", absl::StrCat(memory_bytes)) ||
          !WriteFile(cpu_dir_ + "/cpu.max", absl::StrCat(cpus * 100000, " 100000"))) {
        return "cannot write the limits of " + memory_dir_;
      }
      // No swap either, where swap is accounted.
      WriteFile(memory_dir_ + "/memory.swap.max", "0");
      return "";
    }
    if (v1_memory == nullptr || v1_cpu == nullptr) {
      return "no cgroup v1 memory and cpu controllers, nor cgroup v2 with both";
    }
    version_ = "cgroup v1";
    const std::string own_memory = OwnPath(1, "memory"), own_cpu = OwnPath(1, "cpu");
    if (std::string e = Make(v1_memory->dir + own_memory + "/" + name, v1_memory->dir + own_memory);
        !e.empty()) {
      return e;
    }
    memory_dir_ = dirs_.back();
    if (std::string e = Make(v1_cpu->dir + own_cpu + "/" + name, v1_cpu->dir + own_cpu);
        !e.empty()) {
      return e;
    }
    cpu_dir_ = dirs_.back();
    if (!WriteFile(memory_dir_ + "/memory.limit_in_bytes", absl::StrCat(memory_bytes)) ||
        !WriteFile(cpu_dir_ + "/cpu.cfs_period_us", "100000") ||
        !WriteFile(cpu_dir_ + "/cpu.cfs_quota_us", absl::StrCat(cpus * 100000))) {
      return "cannot write the limits of " + memory_dir_ + " and " + cpu_dir_;
    }
    // Without swap accounting memsw does not exist; with it, no swap either.
    WriteFile(memory_dir_ + "/memory.memsw.limit_in_bytes", absl::StrCat(memory_bytes));
    return "";
  }

  // Enter moves this process into the cgroup (a child started meanwhile starts inside);
  // Leave moves it back.
  bool Enter() { return MoveTo(dirs_); }
  bool Leave() { return MoveTo(parents_); }

  ~RealCgroup() {
    Leave();
    for (const std::string& dir : dirs_) {
      for (int i = 0; i < 50 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }

  const std::string& version() const { return version_; }
  // PeakBytes is the memory cgroup's peak usage; nullopt where the kernel has no such
  // counter (cgroup v2 before Linux 5.19).
  std::optional<uint64_t> PeakBytes() const {
    const std::string text = ReadFile(
        memory_dir_ + (version_ == "cgroup v1" ? "/memory.max_usage_in_bytes" : "/memory.peak"));
    if (text.empty()) return std::nullopt;
    return std::stoull(text);
  }
  // OomKills counts the processes of the cgroup the OOM killer ended.
  uint64_t OomKills() const {
    const std::string text = ReadFile(
        memory_dir_ + (version_ == "cgroup v1" ? "/memory.oom_control" : "/memory.events"));
    const size_t at = text.find("oom_kill ");
    return at == std::string::npos ? 0 : std::stoull(text.substr(at + 9));
  }
  std::string FailCount() const {
    return std::string(absl::StripAsciiWhitespace(ReadFile(memory_dir_ + "/memory.failcnt")));
  }

 private:
  static std::string OwnPath(int version, const std::string& controller) {
    std::istringstream in(ReadFile("/proc/self/cgroup"));
    std::string line;
    while (std::getline(in, line)) {
      const std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
      if (f.size() != 3) continue;
      if ((version == 1 && Has(absl::StrSplit(f[1], ','), controller)) ||
          (version == 2 && f[0] == "0" && f[1].empty())) {
        return f[2] == "/" ? "" : f[2];
      }
    }
    return "";
  }

  std::string Make(const std::string& dir, const std::string& parent) {
    if (mkdir(dir.c_str(), 0755) != 0) {
      return absl::StrCat("cannot create ", dir, ": ", std::strerror(errno));
    }
    dirs_.push_back(dir);
    parents_.push_back(parent);
    return "";
  }

  static bool MoveTo(const std::vector<std::string>& dirs) {
    bool ok = true;
    for (const std::string& dir : dirs) {
      ok = WriteFile(dir + "/cgroup.procs", absl::StrCat(getpid())) && ok;
    }
    return ok;
  }

  std::string version_;
  std::string memory_dir_, cpu_dir_;
  std::vector<std::string> dirs_, parents_;
};

// smcryptd with default flags in a cgroup of 1 GiB and 2 CPUs sizes itself from that
// cgroup and answers every call of a 20,000-call burst of 60 KiB Encrypts on 64
// connections, staying below the limit and alive.
TEST(SmcryptdSizingTest, UnderARealOneGiBTwoCpuLimitABurstIsAnsweredWithoutOom) {
  if (::smcrypt::testing::kUnderAsan) {
    GTEST_SKIP() << "AddressSanitizer's quarantine keeps freed memory: the limit says nothing";
  }
  RealCgroup cgroup;
  if (std::string why = cgroup.Create(kGiB, 2); !why.empty()) {
    GTEST_SKIP() << "cannot make a cgroup with a memory limit and a CPU quota: " << why;
  }
  Smcryptd server;
  ASSERT_TRUE(cgroup.Enter()) << "cannot move the test into its cgroup";
  const bool started = server.Start({"--cgroup_root=/sys/fs/cgroup"});
  ASSERT_TRUE(cgroup.Leave()) << "cannot move the test out of its cgroup";
  ASSERT_TRUE(started) << server.log();
  const v1::GetServerInfoResponse info = Info(server);
  ASSERT_EQ(info.sizing().memory_limit_bytes(), kGiB)
      << "smcryptd finds the limit of its own cgroup: " << server.log();
  EXPECT_EQ(info.sizing().cgroup(), cgroup.version());
  EXPECT_DOUBLE_EQ(info.sizing().cpu_limit(), 2);
  const std::map<std::string, std::string> values = Values(info);
  EXPECT_EQ(values.at("max_concurrent_streams"), "57 (cgroup memory)");
  EXPECT_EQ(values.at("worker_threads"),
            info.sizing().cpus_available() >= 2 ? "2 (cgroup cpu)" : "1 (host)");
  // The documented worst case of the values in force, for the burst's 64 connections
  // (docs/service.md, "Memory under overload"), with 32 MiB for the idle size.
  std::map<std::string, uint64_t> v;
  for (const v1::SizedValue& sv : info.sizing().values()) v[sv.name()] = sv.value();
  const uint64_t bound =
      32 * kMiB +
      std::max<uint64_t>(v["max_inflight_bytes"], 3 * info.max_message_bytes() + 2048 + 64 * kMiB) +
      v["grpc_memory_quota"] + 64 * v["max_concurrent_streams"] * (80 << 10) +
      3 * v["public_key_cache_size"] * 120000 + 32 * kMiB;
  EXPECT_LT(bound, kGiB);

  constexpr int kCalls = 20000, kPayload = 60 * 1024, kConnections = 64;
  const BurstResult r = Burst(server, kCalls, kPayload, kConnections);
  const std::optional<uint64_t> peak_counter = cgroup.PeakBytes();
  const uint64_t peak = peak_counter.value_or(0);
  std::printf("%d concurrent Encrypt calls of %d bytes on %d connections in %.1f s: OK %d, "
              "RESOURCE_EXHAUSTED %d, other %d; cgroup peak %llu MiB of %llu MiB (bound %llu MiB, "
              "failcnt %s), OOM kills %llu\n",
              kCalls, kPayload, kConnections, r.seconds, r.ok, r.refused, r.other,
              static_cast<unsigned long long>(peak / kMiB),
              static_cast<unsigned long long>(kGiB / kMiB),
              static_cast<unsigned long long>(bound / kMiB), cgroup.FailCount().c_str(),
              static_cast<unsigned long long>(cgroup.OomKills()));
  EXPECT_EQ(r.ok + r.refused + r.other, kCalls);
  EXPECT_EQ(r.other, 0) << "first other status: " << r.first_other;
  EXPECT_GT(r.ok, 0);
  EXPECT_EQ(cgroup.OomKills(), 0u);
  if (peak_counter.has_value()) {
    EXPECT_GT(peak, 0u);
    EXPECT_LT(peak, kGiB);
    EXPECT_LE(peak, bound) << "the documented bound is " << bound / kMiB << " MiB";
  } else {
    std::printf("this kernel keeps no peak of the cgroup's memory: only OOM kills are checked\n");
  }
  EXPECT_TRUE(server.Alive()) << server.log();
  EXPECT_TRUE(Serves(server)) << "still answering after the burst";
}

}  // namespace
