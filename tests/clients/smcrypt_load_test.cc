// Integration tests of smcrypt-load (label integration; the full 20,000-in-flight run is
// label slow): each scenario, shortened, runs against a real smcryptd; its JSON report must
// be well-formed, every operation OK, and its request count must equal the server's
// grpc_server_handled_total delta (read here from /metrics, independently of the tool).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "clients/smcrypt-load/options.h"
#include "clients/smcrypt-load/scenarios.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/server/smcryptd_process.h"

namespace smcrypt {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// HandledTotal sums every grpc_server_handled_total series of a /metrics answer.
double HandledTotal(int metrics_port) {
  const std::string text = testing::HttpGet(metrics_port, "/metrics");
  double sum = 0;
  bool any = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, "grpc_server_handled_total{")) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) {
      sum += v;
      any = true;
    }
  }
  return any ? sum : -1;
}

struct LoadRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
  Struct json;
  bool json_ok = false;
};

class SmcryptLoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new testing::Smcryptd();
    ASSERT_TRUE(server_->Start({})) << server_->log();
    dir_ = new std::string(std::filesystem::temp_directory_path() /
                           absl::StrCat("smcrypt_load_test_", getpid()));
    std::filesystem::create_directories(*dir_);
  }
  static void TearDownTestSuite() {
    delete server_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  // Run runs smcrypt-load with `args` plus the target, metrics URL and --json.
  // `server` defaults to the suite's smcryptd.
  LoadRun Run(std::vector<std::string> args, testing::Smcryptd* server = nullptr) {
    if (server == nullptr) server = server_;
    const std::string json = *dir_ + "/report.json";
    std::filesystem::remove(json);
    std::string cmd = absl::StrCat(SMCRYPT_LOAD_PATH, " --target ", server->target(),
                                   " --metrics-url http://127.0.0.1:", server->metrics_port(),
                                   "/metrics --no-progress --json ", json);
    for (const std::string& a : args) absl::StrAppend(&cmd, " ", a);
    absl::StrAppend(&cmd, " 2>&1");
    LoadRun r;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream f(json);
    std::stringstream ss;
    ss << f.rdbuf();
    r.json_ok = google::protobuf::util::JsonStringToMessage(ss.str(), &r.json).ok();
    return r;
  }

  // CheckReport runs `args` and checks the report against the server's counters.
  // Returns the scenarios array.
  std::vector<Value> RunAndCheck(std::vector<std::string> args,
                                 testing::Smcryptd* server = nullptr) {
    if (server == nullptr) server = server_;
    const double before = HandledTotal(server->metrics_port());
    EXPECT_GE(before, 0);
    LoadRun r = Run(args, server);
    const double after = HandledTotal(server->metrics_port());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(r.json_ok) << "malformed JSON report\n" << r.output;
    if (!r.json_ok) return {};
    const auto& f = r.json.fields();
    EXPECT_EQ(f.at("tool").string_value(), "smcrypt-load");
    const auto& req = f.at("requests").struct_value().fields();
    const double measured = req.at("measured").number_value();
    const double setup = req.at("setup").number_value();
    const double warmup = req.at("warmup").number_value();
    EXPECT_EQ(req.at("total").number_value(), measured + warmup + setup);
    // The report's request count is the server's.
    EXPECT_EQ(req.at("total").number_value(), after - before) << r.output;
    double steps_requests = 0;
    std::vector<Value> scenarios;
    for (const Value& sc : f.at("scenarios").list_value().values()) {
      scenarios.push_back(sc);
      for (const Value& st : sc.struct_value().fields().at("steps").list_value().values()) {
        const auto& s = st.struct_value().fields();
        steps_requests += s.at("requests").number_value();
        EXPECT_EQ(s.at("errors").number_value(), 0) << s.at("first_error").string_value();
        EXPECT_EQ(s.at("ok").number_value(), s.at("operations").number_value());
        EXPECT_GT(s.at("ok").number_value(), 0);
        // Each step's count equals the server's delta over that step.
        const auto& server = s.at("server").struct_value().fields();
        // With a warm-up too: the load drains before the scrape that opens the window.
        EXPECT_EQ(server.at("handled_delta").number_value(), s.at("requests").number_value());
        const auto& lat = s.at("latency_us").struct_value().fields();
        EXPECT_LE(lat.at("p50").number_value(), lat.at("p99").number_value());
        EXPECT_LE(lat.at("p99").number_value(), lat.at("max").number_value());
        EXPECT_EQ(lat.at("count").number_value(), s.at("ok").number_value());
        // The histogram's buckets: [lower_ns, upper_ns, count], ascending, counts summing
        // to the count, the percentiles inside the buckets' range.
        double in_buckets = 0, last_upper = 0, first_lower = -1;
        for (const Value& b : lat.at("buckets_ns").list_value().values()) {
          const auto& v = b.list_value().values();
          EXPECT_EQ(v.size(), 3);
          if (v.size() != 3) break;
          EXPECT_GE(v[0].number_value(), last_upper);
          EXPECT_GT(v[1].number_value(), v[0].number_value());
          EXPECT_GT(v[2].number_value(), 0);
          if (first_lower < 0) first_lower = v[0].number_value();
          last_upper = v[1].number_value();
          in_buckets += v[2].number_value();
        }
        EXPECT_EQ(in_buckets, lat.at("count").number_value());
        EXPECT_GE(lat.at("p50").number_value() * 1000, first_lower);
        EXPECT_LE(lat.at("p50").number_value() * 1000, last_upper);
        // smcrypt-load's own CPU beside the server's.
        const auto& client = s.at("client").struct_value().fields();
        EXPECT_GT(client.at("cpu_seconds").number_value(), 0);
      }
    }
    EXPECT_EQ(steps_requests, measured);
    return scenarios;
  }

  static size_t Steps(const Value& scenario) {
    return scenario.struct_value().fields().at("steps").list_value().values_size();
  }

  static testing::Smcryptd* server_;
  static std::string* dir_;
};

testing::Smcryptd* SmcryptLoadTest::server_ = nullptr;
std::string* SmcryptLoadTest::dir_ = nullptr;

TEST_F(SmcryptLoadTest, Baseline) {
  std::vector<Value> sc =
      RunAndCheck({"--scenario baseline --sizes 512,1KiB --requests 2 --duration 1"});
  ASSERT_EQ(sc.size(), 1u);
  // SM2, both HPKE suites and RSA-2048-OAEP, encrypt and decrypt, two sizes.
  EXPECT_EQ(Steps(sc[0]), 4u * 2 * 2);
  bool rsa_split = false;
  for (const Value& st : sc[0].struct_value().fields().at("steps").list_value().values()) {
    const auto& s = st.struct_value().fields();
    if (s.at("algorithm").string_value() == "RSA-2048-OAEP" && s.at("size_bytes").number_value() == 1024) {
      // 1 KiB in 190-byte OAEP blocks: 6 RPCs per operation.
      EXPECT_EQ(s.at("rpcs_per_operation").number_value(), 6);
      EXPECT_EQ(s.at("requests").number_value(), 6 * s.at("operations").number_value());
      rsa_split = true;
    }
  }
  EXPECT_TRUE(rsa_split);
}

TEST_F(SmcryptLoadTest, Load) {
  std::vector<Value> sc = RunAndCheck({"--scenario load --duration 1"});
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(Steps(sc[0]), 2u);
  const auto& summary = sc[0].struct_value().fields().at("summary").struct_value().fields();
  const double rate = summary.at("ops_per_second.SM2").number_value();
  EXPECT_GT(rate, 0);
  EXPECT_NEAR(summary.at("daily_capacity.SM2").number_value(), rate * 8 * 3600 * 0.2 / 0.8,
              1e-9 * rate * 8 * 3600);
  EXPECT_GT(summary.at("daily_capacity.HPKE-SM2-SM3-SM4GCM").number_value(), 0);
}

TEST_F(SmcryptLoadTest, Concurrency) {
  std::vector<Value> sc =
      RunAndCheck({"--scenario concurrency --steps 1,50,500 --duration 1 --connections 4"});
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(Steps(sc[0]), 2u * 3);
  const auto& summary = sc[0].struct_value().fields().at("summary").struct_value().fields();
  EXPECT_EQ(summary.at("errors").number_value(), 0);
  EXPECT_EQ(summary.at("max_inflight_client").number_value(), 500);
}

TEST_F(SmcryptLoadTest, Paper) {
  const std::string charts = *dir_ + "/charts";
  std::vector<Value> sc = RunAndCheck({"--scenario paper --requests 2 --duration 0.05",
                                       "--stream-bytes 3MiB --chart-dir", charts});
  ASSERT_EQ(sc.size(), 1u);
  const auto& tables = sc[0].struct_value().fields().at("tables").list_value().values();
  ASSERT_EQ(tables.size(), 7u);
  for (const Value& t : tables) {
    const auto& f = t.struct_value().fields();
    EXPECT_GT(f.at("rows").list_value().values_size(), 0) << f.at("title").string_value();
    const std::string svg = absl::StrCat(charts, "/", f.at("id").string_value(), ".svg");
    EXPECT_TRUE(std::filesystem::exists(svg)) << svg;
  }
  // The published SM3/SHA-256 ratio at 8 B is 1.3819 (vendor A).
  EXPECT_EQ(tables[0].struct_value().fields().at("rows").list_value().values(0)
                .list_value().values(1).string_value(), "1.3819");
}

TEST_F(SmcryptLoadTest, GenericClosedAndOpenLoop) {
  std::vector<Value> closed = RunAndCheck(
      {"--scenario run --rpc Hash --alg sm3 --size 1KiB --requests 200 --concurrency 8"});
  ASSERT_EQ(closed.size(), 1u);
  const auto& s = closed[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
  EXPECT_EQ(s.at("operations").number_value(), 200);
  std::vector<Value> open = RunAndCheck(
      {"--scenario run --rpc Encrypt --alg SM4-GCM --size 512 --rate 200 --duration 1"});
  ASSERT_EQ(open.size(), 1u);
  const auto& o = open[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
  EXPECT_NEAR(o.at("operations").number_value(), 200, 20);
  EXPECT_TRUE(o.count("latency_uncorrected_us"));
}

// KeyExchange: an operation is one SM2 key exchange with confirmation, two streams on the
// server (RunAndCheck: the report's request count is the server's); closed and open loop.
TEST_F(SmcryptLoadTest, KeyExchangeClosedAndOpenLoop) {
  std::vector<Value> closed =
      RunAndCheck({"--scenario run --rpc KeyExchange --alg SM2 --requests 60 --concurrency 6"});
  ASSERT_EQ(closed.size(), 1u);
  const auto& c =
      closed[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
  EXPECT_EQ(c.at("operations").number_value(), 60);
  EXPECT_EQ(c.at("requests").number_value(), 120);
  EXPECT_EQ(c.at("rpc").string_value(), "KeyExchange");
  std::vector<Value> open =
      RunAndCheck({"--scenario run --rpc KeyExchange --alg SM2 --rate 40 --duration 1"});
  ASSERT_EQ(open.size(), 1u);
  const auto& o =
      open[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
  EXPECT_NEAR(o.at("operations").number_value(), 40, 8);
  EXPECT_EQ(o.at("requests").number_value(), 2 * o.at("operations").number_value());
  // More exchanges in flight than the server admits streams on the one connection: they
  // queue and all complete (an exchange's two streams are admitted together).
  testing::Smcryptd narrow;
  ASSERT_TRUE(narrow.Start({"--max_concurrent_streams=4"})) << narrow.log();
  std::vector<Value> queued = RunAndCheck(
      {"--scenario run --rpc KeyExchange --alg SM2 --requests 64 --concurrency 16 "
       "--connections 1 --timeout 20s"},
      &narrow);
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].struct_value().fields().at("steps").list_value().values(0)
                .struct_value().fields().at("operations").number_value(),
            64);
  LoadRun wrong = Run({"--scenario run --rpc KeyExchange --alg ECDSA-P256 --requests 1"});
  EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
  EXPECT_TRUE(absl::StrContains(wrong.output, "takes SM2")) << wrong.output;
}

// Every stream RPC with inline keys (key pairs drawn by GenerateKeyPair, before the
// measured stream): one operation, one measured request, the server's delta over the step.
TEST_F(SmcryptLoadTest, StreamsWithInlineKeys) {
  for (const char* run : {"--rpc HashStream --alg SM3 --size 2MiB",
                          "--rpc EncryptStream --alg SM4-CBC --size 1000",
                          "--rpc DecryptStream --alg SM4-CBC --size 1000",
                          "--rpc DecryptStream --alg AES-256-GCM --size 2500000",
                          "--rpc DecryptStream --alg SM4-CTR --size 1048577",
                          "--rpc HybridEncryptStream --alg HPKE-P256-SHA256-AES128GCM --size 2MiB",
                          "--rpc HybridDecryptStream --alg HPKE-P256-SHA256-AES128GCM "
                          "--size 2500000",
                          "--rpc HybridDecryptStream --alg HPKE-SM2-SM3-SM4GCM --size 0"}) {
    std::vector<Value> sc = RunAndCheck({"--scenario run", run});
    ASSERT_EQ(sc.size(), 1u) << run;
    const auto& s =
        sc[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
    EXPECT_EQ(s.at("operations").number_value(), 1) << run;
    EXPECT_EQ(s.at("requests").number_value(), 1) << run;
  }
}

TEST_F(SmcryptLoadTest, QuickWritesCsvAndCharts) {
  const std::string csv = *dir_ + "/quick.csv";
  std::vector<Value> sc = RunAndCheck(
      {"--scenario quick --duration 0.5 --steps 1,20 --csv", csv, "--chart-dir", *dir_ + "/q"});
  ASSERT_EQ(sc.size(), 2u);
  std::ifstream f(csv);
  std::string line;
  int lines = 0;
  while (std::getline(f, line)) ++lines;
  EXPECT_EQ(lines, 1 + 2 + 2 * 2);  // header, load steps, concurrency steps
  EXPECT_TRUE(std::filesystem::exists(*dir_ + "/q/concurrency.svg"));
}

TEST_F(SmcryptLoadTest, UsageErrors) {
  LoadRun r = Run({"--scenario run --rpc Hash --alg SM4-GCM --requests 1"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "takes SM3 or SHA-256")) << r.output;
  r = Run({"--scenario nosuch"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = Run({"--bogus"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// A metadata value gRPC would not send (it asserts on one and aborts the process) is a
// usage error that names the key: control characters, DEL, non-ASCII, and (from a scenario
// file, as argv cannot hold one) NUL.
TEST_F(SmcryptLoadTest, MetadataValuesThatAreNotPrintableAscii) {
  for (const char* value : {"a\\nb", "a\\rb", "a\\tb", "a\\001b", "a\\177b", "caf\\303\\251"}) {
    LoadRun r = Run({absl::StrCat("--scenario run --rpc Hash --alg SM3 --duration 300ms "
                                  "--metadata \"$(printf 'x-a=", value, "')\"")});
    EXPECT_EQ(r.exit_code, 2) << value << "\n" << r.output;
    EXPECT_TRUE(absl::StrContains(r.output, "--metadata x-a: byte 0x")) << value << "\n" << r.output;
  }
  const std::string file = *dir_ + "/nul.json";
  std::ofstream(file) << R"({"scenario": "run", "rpc": "Hash", "alg": "SM3",
                           "duration": "300ms", "metadata": {"x-nul": "a\u0000b"}})";
  LoadRun r = Run({"--scenario-file", file});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(absl::StrContains(r.output, "--metadata x-nul: byte 0x00 at offset 1")) << r.output;
  // Printable ASCII, spaces and punctuation included, is sent.
  r = Run({"--scenario run --rpc Hash --alg SM3 --requests 2 --metadata 'x-a=Bearer a~b !{}'"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// The counts that allocate per unit have upper bounds, each a usage error beyond it; the
// bounds themselves are accepted (the concurrency scenario's 20,000 steps among them).
TEST_F(SmcryptLoadTest, CountsHaveUpperBounds) {
  for (const char* flags : {"--concurrency 100000000", "--concurrency 100001",
                            "--steps 1,100001", "--connections 1001", "--batch 65537",
                            "--concurrency 99999999999999999999"}) {
    LoadRun r = Run({absl::StrCat("--scenario run --rpc Hash --alg SM3 --duration 300ms ", flags)});
    EXPECT_EQ(r.exit_code, 2) << flags << "\n" << r.output;
    const std::string flag(absl::string_view(flags).substr(0, absl::string_view(flags).find(' ')));
    EXPECT_TRUE(absl::StrContains(r.output, absl::StrCat(flag, " "))) << flags << "\n" << r.output;
    EXPECT_TRUE(absl::StrContains(r.output, "from 1 to ")) << flags << "\n" << r.output;
  }
  LoadRun r = Run({"--scenario run --rpc Hash --alg SM3 --requests 2 --concurrency 100000 "
                   "--connections 1000"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = Run({"--scenario run --rpc HashBatch --alg SM3 --size 1 --requests 1 --batch 65536"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A scenario file's bad values are named by their key.
TEST_F(SmcryptLoadTest, ScenarioFileErrorsNameTheKey) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& c : {Case{R"({"steps": []})", R"("steps": expected a non-empty value)"},
                        Case{R"({"rpc": ""})", R"("rpc": expected a non-empty value)"},
                        Case{R"({"duration": 1e400})", R"("duration": number out of range)"},
                        Case{R"({"steps": [1, -1e999]})", R"("steps": number out of range)"},
                        Case{R"({"metadata": {"x-a": 1e400}})",
                             R"("metadata.x-a": number out of range)"},
                        Case{R"({"steps": "1,100001"})", "--steps 1,100001: expected integers"}}) {
    const std::string file = *dir_ + "/bad_values.json";
    std::ofstream(file) << c.json;
    LoadRun r = Run({"--scenario-file", file});
    EXPECT_EQ(r.exit_code, 2) << c.json << "\n" << r.output;
    EXPECT_TRUE(absl::StrContains(r.output, c.message)) << c.json << "\n" << r.output;
    EXPECT_FALSE(absl::StrContains(r.output, "--target")) << c.json << "\n" << r.output;
  }
}

// A production-like server: keyring keys only, inline private keys denied. smcrypt-load
// drives the key-using RPCs with --keys (and a --scenario-file), sends metadata, and
// leaves a warm-up out of its figures; without --keys it says what to do.
TEST_F(SmcryptLoadTest, KeyringKeysAgainstDenyInlinePrivateKeys) {
  const std::string keys = *dir_ + "/keys";
  std::filesystem::create_directories(keys);
  ASSERT_EQ(std::system(absl::StrCat("openssl genpkey -algorithm SM2 -out ", keys,
                                     "/signing.pem 2>/dev/null").c_str()), 0);
  {
    std::ofstream f(keys + "/data.pem");
    f << "-----BEGIN SM4 KEY-----\nAAECAwQFBgcICQoLDA0ODw==\n-----END SM4 KEY-----\n";
  }
  std::filesystem::permissions(keys, std::filesystem::perms::owner_all);
  for (const char* f : {"/signing.pem", "/data.pem"}) {
    std::filesystem::permissions(keys + f, std::filesystem::perms::owner_read |
                                               std::filesystem::perms::owner_write);
  }
  testing::Smcryptd prod;
  ASSERT_TRUE(prod.Start({"--keys_dir=" + keys, "--inline_private_keys=deny"})) << prod.log();

  LoadRun denied = Run({"--scenario run --rpc Sign --alg SM2 --requests 5"}, &prod);
  EXPECT_NE(denied.exit_code, 0) << denied.output;
  EXPECT_TRUE(absl::StrContains(denied.output, "--keys ALG=KEY_ID")) << denied.output;

  for (const char* run : {"--rpc Sign --alg SM2 --keys SM2=signing",
                          "--rpc Verify --alg SM2 --keys SM2=signing",
                          "--rpc PublicKeyDecrypt --alg SM2 --keys SM2=signing",
                          "--rpc HybridDecrypt --alg HPKE-SM2-SM3-SM4GCM "
                          "--keys HPKE-SM2-SM3-SM4GCM=signing",
                          "--rpc Decrypt --alg SM4-GCM --keys SM4-GCM=data",
                          "--rpc GetPublicKey --alg SM2 --keys SM2=signing",
                          "--rpc GenerateKeyPair --alg SM2",
                          "--rpc GetServerInfo",
                          "--rpc HybridEncryptStream --alg HPKE-SM2-SM3-SM4GCM "
                          "--keys HPKE-SM2-SM3-SM4GCM=signing --size 3MiB",
                          "--rpc HybridDecryptStream --alg HPKE-SM2-SM3-SM4GCM "
                          "--keys HPKE-SM2-SM3-SM4GCM=signing --size 3MiB",
                          "--rpc DecryptStream --alg SM4-GCM --keys SM4-GCM=data --size 3MiB",
                          "--rpc DecryptStream --alg SM4-CBC --keys SM4-CBC=data --size 1000",
                          "--rpc HashBatch --alg SM3 --batch 4",
                          "--rpc SignBatch --alg SM2 --keys SM2=signing --batch 4",
                          "--rpc VerifyBatch --alg SM2 --keys SM2=signing --batch 4",
                          "--rpc EncryptBatch --alg SM4-GCM --keys SM4-GCM=data --batch 4",
                          "--rpc HybridEncryptBatch --alg HPKE-SM2-SM3-SM4GCM "
                          "--keys HPKE-SM2-SM3-SM4GCM=signing --batch 4",
                          "--rpc KeyExchange --alg SM2 --keys SM2=signing"}) {
    std::vector<Value> sc = RunAndCheck(
        {"--scenario run --size 512 --requests 20 --concurrency 4 --metadata x-load-test=1", run},
        &prod);
    EXPECT_EQ(sc.size(), 1u) << run;
  }

  // The same through a scenario file, with a warm-up that is left out of the figures.
  const std::string file = *dir_ + "/scenario.json";
  {
    std::ofstream f(file);
    f << R"({"scenario": "run", "rpc": "HybridEncrypt", "alg": "HPKE-SM2-SM3-SM4GCM",
             "size": 512, "concurrency": 8, "duration": "0.5s", "warmup": 0.3,
             "keys": {"HPKE-SM2-SM3-SM4GCM": "signing"},
             "metadata": {"x-load-run": "scenario-file"}})";
  }
  std::vector<Value> sc = RunAndCheck({"--scenario-file", file}, &prod);
  ASSERT_EQ(sc.size(), 1u);
  const auto& s = sc[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
  EXPECT_EQ(s.at("rpc").string_value(), "HybridEncrypt");
  EXPECT_GT(s.at("warmup_operations").number_value(), 0);
  EXPECT_GE(s.at("warmup_seconds").number_value(), 0.3);
  EXPECT_LT(s.at("seconds").number_value(), 0.5 + 0.5);

  // A batch whose items fail (an unknown key_id) fails its operations with the items' code.
  LoadRun items = Run({"--scenario run --rpc EncryptBatch --alg SM4-GCM --keys SM4-GCM=nosuch "
                       "--batch 3 --requests 5"}, &prod);
  EXPECT_EQ(items.exit_code, 1) << items.output;
  ASSERT_TRUE(items.json_ok) << items.output;
  const auto& failed = items.json.fields().at("scenarios").list_value().values(0).struct_value()
                           .fields().at("steps").list_value().values(0).struct_value().fields();
  EXPECT_EQ(failed.at("errors").number_value(), 5);
  EXPECT_EQ(failed.at("errors_by_code").struct_value().fields().at("NOT_FOUND").number_value(), 5);

  LoadRun bad = Run({"--scenario run --rpc Sign --alg SM2 --requests 1 --keys SM2"}, &prod);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  bad = Run({"--scenario run --rpc Hash --alg SM3 --requests 1 --metadata grpc-x=1"}, &prod);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  std::ofstream(*dir_ + "/bad.json") << "[1, 2]";
  bad = Run({"--scenario-file", *dir_ + "/bad.json"}, &prod);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(absl::StrContains(bad.output, "expected a JSON object")) << bad.output;
}

// The open-loop ramp: arrivals follow the rate from --rate to --rate-end.
TEST_F(SmcryptLoadTest, OpenLoopRamp) {
  std::vector<Value> sc = RunAndCheck(
      {"--scenario run --rpc Hash --alg SM3 --size 64 --rate 100 --rate-end 300 --duration 1"});
  ASSERT_EQ(sc.size(), 1u);
  const auto& s = sc[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
  // (100 + 300) / 2 operations per second for one second.
  EXPECT_NEAR(s.at("operations").number_value(), 200, 20);
}

// An open-loop warm-up: the schedule pauses while the server is scraped and resumes at
// the rate, so the measured window holds a full duration's arrivals and the server's
// count matches exactly (RunAndCheck).
TEST_F(SmcryptLoadTest, OpenLoopWarmup) {
  std::vector<Value> sc = RunAndCheck(
      {"--scenario run --rpc Hash --alg SM3 --size 64 --rate 200 --warmup 0.5 --duration 1"});
  ASSERT_EQ(sc.size(), 1u);
  const auto& s = sc[0].struct_value().fields().at("steps").list_value().values(0).struct_value().fields();
  EXPECT_EQ(s.at("warmup_operations").number_value(), 100);
  EXPECT_EQ(s.at("operations").number_value(), 200);
  EXPECT_GE(s.at("warmup_seconds").number_value(), 0.5);
}

// --help states the defaults the code uses.
TEST_F(SmcryptLoadTest, HelpDefaultsAreTheCodes) {
  LoadRun r = Run({"--help"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto flag_line = [&](const std::string& flag) -> std::string {
    for (absl::string_view line : absl::StrSplit(r.output, '\n')) {
      if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(line), flag + " ")) {
        return std::string(line);
      }
    }
    ADD_FAILURE() << flag << " not in --help:\n" << r.output;
    return "";
  };
  auto after = [](const std::string& line, const std::string& marker) {
    const size_t at = line.find(marker);
    if (at == std::string::npos) return std::string();
    std::string v = line.substr(at + marker.size());
    return v.substr(0, v.find_first_of(";,) "));
  };
  absl::Duration d;
  ASSERT_TRUE(absl::ParseDuration(after(flag_line("--timeout"), "(default "), &d));
  EXPECT_EQ(d, load::kDefaultTimeout);
  int n = 0;
  ASSERT_TRUE(absl::SimpleAtoi(after(flag_line("--connections"), "(default "), &n));
  EXPECT_EQ(n, load::kDefaultConnections);
  uint64_t seed = 0;
  ASSERT_TRUE(absl::SimpleAtoi(after(flag_line("--seed"), "(default "), &seed));
  EXPECT_EQ(seed, load::kDefaultSeed);
  const std::string steps = flag_line("--steps");
  EXPECT_TRUE(absl::StrContains(
      steps, absl::StrCat("(default ", absl::StrJoin(load::kDefaultSteps, ","), ")")))
      << steps;
  // The upper bounds of the counts.
  for (const auto& [flag, max] : {std::pair<std::string, int>{"--concurrency", load::kMaxInFlight},
                                  {"--steps", load::kMaxInFlight},
                                  {"--connections", load::kMaxConnections},
                                  {"--batch", load::kMaxBatchItems}}) {
    ASSERT_TRUE(absl::SimpleAtoi(after(flag_line(flag), "at most "), &n)) << flag_line(flag);
    EXPECT_EQ(n, max) << flag;
  }
  const std::string duration = flag_line("--duration");
  ASSERT_TRUE(absl::ParseDuration(after(duration, " load "), &d)) << duration;
  EXPECT_EQ(d, load::kLoadDuration);
  ASSERT_TRUE(absl::ParseDuration(after(duration, " concurrency "), &d)) << duration;
  EXPECT_EQ(d, load::kConcurrencyStepDuration);
  ASSERT_TRUE(absl::ParseDuration(after(duration, " run "), &d)) << duration;
  EXPECT_EQ(d, load::kRunDuration);
}

// RunChecker runs check_html_report.py on `html`: 0 passed, 1 failed, 77 no Chromium.
int RunChecker(const std::string& html, std::string* output) {
  FILE* p = popen(absl::StrCat("/usr/bin/python3 ", SMCRYPT_HTML_CHECK, " ", html, " 2>&1").c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) output->append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The HTML report as a reader sees it in Debian's headless Chromium: charts with their data
// points, legends inside their charts, no console messages, nothing external. A clipped
// legend, a chart without points and a console error each fail the check (the check
// checked). Skipped when no Chromium is installed; install-deps.sh installs it.
TEST_F(SmcryptLoadTest, HtmlReportInChromium) {
  const std::string html = *dir_ + "/report.html";
  std::vector<Value> sc = RunAndCheck(
      {"--scenario quick --duration 0.3 --steps 1,20 --algs SM2,HPKE-P256-SHA256-AES128GCM "
       "--html", html});
  ASSERT_EQ(sc.size(), 2u);
  std::string out;
  const int rc = RunChecker(html, &out);
  if (rc == 77) GTEST_SKIP() << out;
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "legends inside")) << out;

  std::ifstream f(html);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string page = ss.str();
  auto variant = [&](const std::string& name, std::string text) {
    const std::string path = absl::StrCat(*dir_, "/", name, ".html");
    std::ofstream(path) << text;
    std::string o;
    EXPECT_EQ(RunChecker(path, &o), 1) << name << " passed the check:\n" << o;
    return o;
  };
  // The legend moved past the right edge, as the fixed-width charts used to draw it.
  std::string clipped = page;
  for (size_t at = 0; (at = clipped.find("<g class=\"legend\">\n<rect x=\"", at)) != std::string::npos;) {
    at += 28;
    clipped.replace(at, clipped.find('"', at) - at, "5000");
  }
  EXPECT_TRUE(absl::StrContains(variant("clipped", clipped), "outside the viewBox"));
  // A chart without its data points.
  std::string blank = page;
  for (size_t at; (at = blank.find("<circle class=\"point\"")) != std::string::npos;) {
    blank.erase(at, blank.find("/>", at) + 2 - at);
  }
  EXPECT_TRUE(absl::StrContains(variant("blank", blank), "no data points"));
  std::string console = page;
  console.insert(console.find("</body>"), "<script>console.error('x')</script>");
  EXPECT_TRUE(absl::StrContains(variant("console", console), "console messages"));
}

// The acceptance run: the default concurrency scenario (steps up to 20,000 in flight)
// with every response OK. Long: label slow.
TEST_F(SmcryptLoadTest, SlowConcurrency20000) {
  if (std::getenv("SMCRYPT_LOAD_SLOW") == nullptr) {
    GTEST_SKIP() << "set SMCRYPT_LOAD_SLOW=1 (ctest -L slow does) for the 20,000-in-flight run";
  }
  std::vector<Value> sc = RunAndCheck({"--scenario concurrency"});
  ASSERT_EQ(sc.size(), 1u);
  const auto& summary = sc[0].struct_value().fields().at("summary").struct_value().fields();
  EXPECT_EQ(summary.at("errors").number_value(), 0);
  EXPECT_EQ(summary.at("max_inflight_client").number_value(), 20000);
}

}  // namespace
}  // namespace smcrypt
