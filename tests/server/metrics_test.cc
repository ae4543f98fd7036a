// metrics_test.cc — server/daemon/metrics.h without a server: the series smcryptd's /metrics
// shows before any traffic and how the observer methods move them, read from the text
// exposition of the registry (what the exposer serves).
#include "server/daemon/metrics.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/daemon/process_metrics.h"
#include "prometheus/text_serializer.h"
#include "smcrypt/cpu.h"
#include "smcrypt/pem.h"
#include "tests/testing/metric_value.h"

namespace smcrypt::server {
namespace {

using ::smcrypt::testing::MetricValue;

std::string Scrape(Metrics& m) {
  // The leading newline lets MetricValue find the first sample too.
  return "\n" + prometheus::TextSerializer().Serialize(m.registry()->Collect());
}

std::string Reloads(absl::string_view family, absl::string_view result) {
  return absl::StrCat(family, "{result=\"", result, "\"}");
}

TEST(MetricsTest, ReloadCountersShowBothResultsAtZeroAndCountByResult) {
  std::unique_ptr<Metrics> m = Metrics::New();
  for (absl::string_view family :
       {"smcrypt_keyring_reloads_total", "smcrypt_tls_certificate_reloads_total"}) {
    EXPECT_EQ(MetricValue(Scrape(*m), Reloads(family, "success")), 0) << family;
    EXPECT_EQ(MetricValue(Scrape(*m), Reloads(family, "failure")), 0) << family;
  }
  m->OnKeyringReload(true);
  m->OnKeyringReload(true);
  m->OnKeyringReload(false);
  m->OnTlsCertificateReload(false);
  const std::string text = Scrape(*m);
  EXPECT_EQ(MetricValue(text, Reloads("smcrypt_keyring_reloads_total", "success")), 2);
  EXPECT_EQ(MetricValue(text, Reloads("smcrypt_keyring_reloads_total", "failure")), 1);
  EXPECT_EQ(MetricValue(text, Reloads("smcrypt_tls_certificate_reloads_total", "success")), 0);
  EXPECT_EQ(MetricValue(text, Reloads("smcrypt_tls_certificate_reloads_total", "failure")), 1);
  m->OnTlsCertificateReload(true);
  EXPECT_EQ(
      MetricValue(Scrape(*m), Reloads("smcrypt_tls_certificate_reloads_total", "success")), 1);
}

TEST(MetricsTest, OverloadRefusalsCountByLimitAndConnectionsFollowTheLedger) {
  std::unique_ptr<Metrics> m = Metrics::New();
  const char* limits[] = {"max_inflight", "max_inflight_bytes", "max_stream_inflight_bytes",
                          "max_connection_inflight_bytes"};
  auto refusals = [](absl::string_view limit) {
    return absl::StrCat("smcrypt_overload_refusals_total{limit=\"", limit, "\"}");
  };
  for (const char* limit : limits) EXPECT_EQ(MetricValue(Scrape(*m), refusals(limit)), 0) << limit;
  EXPECT_EQ(MetricValue(Scrape(*m), "smcrypt_inflight_connections"), 0);
  m->OnOverload(OverloadLimit::kConnectionBytes);
  m->OnOverload(OverloadLimit::kConnectionBytes);
  m->OnOverload(OverloadLimit::kStreamBytes);
  m->OnConnections(1);
  m->OnConnections(1);
  m->OnConnections(-1);
  const std::string text = Scrape(*m);
  EXPECT_EQ(MetricValue(text, refusals("max_connection_inflight_bytes")), 2);
  EXPECT_EQ(MetricValue(text, refusals("max_stream_inflight_bytes")), 1);
  EXPECT_EQ(MetricValue(text, refusals("max_inflight_bytes")), 0);
  EXPECT_EQ(MetricValue(text, "smcrypt_inflight_connections"), 1);
}

TEST(MetricsTest, FailuresCountPerAlgorithm) {
  std::unique_ptr<Metrics> m = Metrics::New();
  const std::string gcm = "smcrypt_decrypt_failures_total{algorithm=\"SM4-GCM\"}";
  const std::string sm2_dec = "smcrypt_decrypt_failures_total{algorithm=\"SM2\"}";
  const std::string hpke = "smcrypt_decrypt_failures_total{algorithm=\"HPKE-SM2-SM3-SM4GCM\"}";
  const std::string sm2_ver = "smcrypt_verify_failures_total{algorithm=\"SM2\"}";
  const std::string hmac = "smcrypt_verify_failures_total{algorithm=\"HMAC-SM3\"}";
  const std::string before = Scrape(*m);
  for (const std::string& s : {gcm, sm2_dec, hpke, sm2_ver, hmac}) {
    EXPECT_EQ(MetricValue(before, s), 0) << s;
  }
  // Only algorithms that decrypt / verify have a series.
  EXPECT_EQ(MetricValue(before, "smcrypt_decrypt_failures_total{algorithm=\"SM3\"}"), -1);
  EXPECT_EQ(MetricValue(before, "smcrypt_verify_failures_total{algorithm=\"SM4-GCM\"}"), -1);
  EXPECT_EQ(MetricValue(before, "smcrypt_verify_failures_total{algorithm=\"ECDSA-P256\"}"), 0);
  m->OnDecryptFailure(Algorithm::kSm4Gcm);
  m->OnDecryptFailure(Algorithm::kSm4Gcm);
  m->OnDecryptFailure(Algorithm::kHpkeSm2Sm3Sm4Gcm);
  m->OnVerifyFailure(Algorithm::kSm2);
  m->OnVerifyFailure(Algorithm::kHmacSm3);
  m->OnVerifyFailure(Algorithm::kSm3);  // no series: ignored
  const std::string after = Scrape(*m);
  EXPECT_EQ(MetricValue(after, gcm), 2);
  EXPECT_EQ(MetricValue(after, sm2_dec), 0);
  EXPECT_EQ(MetricValue(after, hpke), 1);
  EXPECT_EQ(MetricValue(after, sm2_ver), 1);
  EXPECT_EQ(MetricValue(after, hmac), 1);
  EXPECT_EQ(MetricValue(after, "smcrypt_verify_failures_total{algorithm=\"SM3\"}"), -1);
}

TEST(MetricsTest, BuildInfoNamesVersionCompilerAndCpu) {
  std::unique_ptr<Metrics> m = Metrics::New();
#if defined(__clang__)
  const std::string compiler = absl::StrCat("clang ", __clang_major__, ".", __clang_minor__, ".",
                                            __clang_patchlevel__);
#else
  const std::string compiler =
      absl::StrCat("gcc ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__);
#endif
  EXPECT_EQ(MetricValue(Scrape(*m),
                        absl::StrCat("smcrypt_build_info{compiler=\"", compiler, "\",cpu=\"",
                                     FormatCpuIdentity(GetCpuIdentity()), "\",version=\"",
                                     SMCRYPT_TEST_VERSION, "\"}")),
            1)
      << Scrape(*m).substr(0, 2000);
}

TEST(MetricsTest, MessageCountersExistForEveryMethodAtZero) {
  std::unique_ptr<Metrics> m = Metrics::New();
  const std::string text = Scrape(*m);
  for (absl::string_view name : {"grpc_server_msg_received_total", "grpc_server_msg_sent_total"}) {
    EXPECT_EQ(MetricValue(text, absl::StrCat(name,
                                             "{grpc_method=\"DecryptStream\",grpc_service=\"smcrypt."
                                             "v1.CryptoService\",grpc_type=\"bidi_stream\"}")),
              0);
    EXPECT_EQ(MetricValue(text, absl::StrCat(name,
                                             "{grpc_method=\"Watch\",grpc_service=\"grpc.health."
                                             "v1.Health\",grpc_type=\"server_stream\"}")),
              0);
  }
  const Metrics::MethodMetrics* hash = m->ForMethod("/smcrypt.v1.CryptoService/Hash");
  ASSERT_NE(hash, nullptr);
  ASSERT_NE(hash->msg_received, nullptr);
  ASSERT_NE(hash->msg_sent, nullptr);
  for (absl::string_view method :
       {"Rewrap", "RewrapBatch", "GenerateDataKey", "GenerateDataKeyWithoutPlaintext"}) {
    EXPECT_NE(m->ForMethod(absl::StrCat("/smcrypt.v1.CryptoService/", method)), nullptr) << method;
  }
}

// KeyVersion is the smcrypt_key_version_info series of one key version.
std::string KeyVersion(absl::string_view id, absl::string_view state, int version) {
  return absl::StrCat("smcrypt_key_version_info{key_id=\"", id, "\",state=\"", state,
                      "\",version=\"", version, "\"}");
}

// A keyring loaded sets one series per key version, by state, and the load time; the next
// keyring loaded replaces them all.
TEST(MetricsTest, KeyVersionInfoFollowsTheKeyringLoaded) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "smcrypt_metrics_XXXXXX").string();
  const std::string dir = mkdtemp(tmpl.data());
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(fs::path(dir) / name, std::ios::trunc) << text;
    fs::permissions(fs::path(dir) / name, fs::perms::owner_read | fs::perms::owner_write);
  };
  for (int v = 1; v <= 3; ++v) {
    write(absl::StrCat("k.v", v, ".pem"), PemEncode("SM4 KEY", std::string(16, '0' + v)));
  }
  write("k.primary", "2");
  write("k.min_version", "2");
  write("h.pem", PemEncode("HMAC KEY", "h"));
  std::unique_ptr<Metrics> m = Metrics::New();
  EXPECT_EQ(MetricValue(Scrape(*m), "smcrypt_keyring_load_timestamp_seconds"), 0);
  absl::StatusOr<std::unique_ptr<KeyStore>> keys = KeyStore::LoadFromDirectory(dir);
  ASSERT_TRUE(keys.ok()) << keys.status();
  m->OnKeyringLoaded(**keys);
  std::string text = Scrape(*m);
  EXPECT_EQ(MetricValue(text, KeyVersion("k", "retired", 1)), 1);
  EXPECT_EQ(MetricValue(text, KeyVersion("k", "primary", 2)), 1);
  EXPECT_EQ(MetricValue(text, KeyVersion("k", "retained", 3)), 1);
  EXPECT_EQ(MetricValue(text, KeyVersion("h", "primary", 1)), 1);
  EXPECT_NEAR(MetricValue(text, "smcrypt_keyring_load_timestamp_seconds"),
              absl::ToUnixMicros((*keys)->load_time()) / 1e6, 1e-3);

  fs::remove(fs::path(dir) / "k.primary");
  fs::remove(fs::path(dir) / "h.pem");
  keys = KeyStore::LoadFromDirectory(dir);
  ASSERT_TRUE(keys.ok()) << keys.status();
  m->OnKeyringLoaded(**keys);
  text = Scrape(*m);
  EXPECT_EQ(MetricValue(text, KeyVersion("k", "retained", 2)), 1);
  EXPECT_EQ(MetricValue(text, KeyVersion("k", "primary", 3)), 1);
  EXPECT_EQ(MetricValue(text, KeyVersion("k", "primary", 2)), -1);
  EXPECT_EQ(MetricValue(text, KeyVersion("k", "retained", 3)), -1);
  EXPECT_EQ(MetricValue(text, KeyVersion("h", "primary", 1)), -1);
  fs::remove_all(dir);
}

TEST(MetricsTest, TlsExpirySetsOneChildPerCertificateGiven) {
  std::unique_ptr<Metrics> m = Metrics::New();
  const std::string server = "smcrypt_tls_certificate_expiry_timestamp_seconds{certificate=\"server\"}";
  const std::string ca = "smcrypt_tls_certificate_expiry_timestamp_seconds{certificate=\"client_ca\"}";
  EXPECT_EQ(MetricValue(Scrape(*m), server), -1);  // no TLS: no child
  TlsCertificateExpiry e;
  e.server = absl::FromUnixSeconds(1900000000);
  m->OnTlsCertificatesInstalled(e);
  EXPECT_EQ(MetricValue(Scrape(*m), server), 1900000000);
  EXPECT_EQ(MetricValue(Scrape(*m), ca), -1);
  e.server = absl::FromUnixSeconds(1900086400);
  e.client_ca = absl::FromUnixSeconds(2000000000);
  m->OnTlsCertificatesInstalled(e);
  EXPECT_EQ(MetricValue(Scrape(*m), server), 1900086400);
  EXPECT_EQ(MetricValue(Scrape(*m), ca), 2000000000);
}

// A procfs of files written here: every figure is read from its field.
TEST(ProcessMetricsTest, ReadsEachFigureFromItsProcField) {
  const std::filesystem::path proc =
      std::filesystem::path(::testing::TempDir()) / absl::StrCat("fake_proc_", getpid());
  std::filesystem::remove_all(proc);
  std::filesystem::create_directories(proc / "self" / "fd");
  for (const char* fd : {"0", "1", "2", "7"}) std::ofstream(proc / "self" / "fd" / fd) << "";
  // The command name holds ") " to check that fields are counted from the last ')'.
  // Fields 14/15 utime/stime 300/200 ticks, 22 starttime 1000 ticks, 23 vsize, 24 rss pages.
  std::ofstream(proc / "self" / "stat")
      << "42 (smc) (x) S 1 42 42 0 -1 4194560 100 0 0 0 300 200 0 0 20 0 9 0 1000 "
         "123456789 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
  std::ofstream(proc / "stat") << "cpu  1 2 3 4\nbtime 1700000000\nprocesses 5\n";
  absl::StatusOr<ProcessStats> s = ReadProcessStats(proc.string());
  ASSERT_TRUE(s.ok()) << s.status();
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 500 / ticks);
  EXPECT_DOUBLE_EQ(s->start_time_seconds, 1700000000 + 1000 / ticks);
  EXPECT_EQ(s->virtual_bytes, 123456789);
  EXPECT_EQ(s->resident_bytes, 50.0 * static_cast<double>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(s->open_fds, 4);
  EXPECT_GT(s->max_fds, 0);
  std::ofstream(proc / "stat") << "cpu  1 2 3 4\n";
  EXPECT_FALSE(ReadProcessStats(proc.string()).ok());  // no btime
  std::filesystem::remove_all(proc);
}

TEST(ProcessMetricsTest, TheRealProcIsReadable) {
  absl::StatusOr<ProcessStats> s = ReadProcessStats();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GE(s->open_fds, 3);
  EXPECT_GE(s->max_fds, s->open_fds);
  EXPECT_GT(s->virtual_bytes, s->resident_bytes);
  EXPECT_GT(s->start_time_seconds, 1.6e9);
}

}  // namespace
// smcrypt_limit has one series per name, labelled with its source; a second SetLimit of
// a name replaces it. The container gauges start at 0 (no limit).
TEST(MetricsTest, LimitsHaveOneSeriesPerNameWithItsSource) {
  std::unique_ptr<Metrics> m = Metrics::New();
  EXPECT_EQ(MetricValue(Scrape(*m), "smcrypt_container_cpu_limit"), 0);
  EXPECT_EQ(MetricValue(Scrape(*m), "smcrypt_container_memory_limit_bytes"), 0);
  m->SetLimit("max_inflight", 65536, "default");
  m->SetLimit("worker_threads", 2, "cgroup cpu");
  m->SetContainerLimits(2.5, 1u << 30);
  std::string text = Scrape(*m);
  EXPECT_EQ(MetricValue(text, "smcrypt_limit{name=\"max_inflight\",source=\"default\"}"), 65536);
  EXPECT_EQ(MetricValue(text, "smcrypt_limit{name=\"worker_threads\",source=\"cgroup cpu\"}"), 2);
  EXPECT_EQ(MetricValue(text, "smcrypt_container_cpu_limit"), 2.5);
  EXPECT_EQ(MetricValue(text, "smcrypt_container_memory_limit_bytes"), 1u << 30);
  m->SetLimit("max_inflight", 100, "flag");
  text = Scrape(*m);
  EXPECT_EQ(MetricValue(text, "smcrypt_limit{name=\"max_inflight\",source=\"flag\"}"), 100);
  EXPECT_EQ(text.find("smcrypt_limit{name=\"max_inflight\",source=\"default\"}"),
            std::string::npos)
      << text;
}

}  // namespace smcrypt::server
