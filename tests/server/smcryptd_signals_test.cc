// What an on-call engineer reads off the real smcryptd (label integration): the outcome
// grpc_server_handled_total records for calls whose deadline passed or whose client
// cancelled, the TLS certificate expiry gauge (static files and a reload), the process_*
// metrics, and --log_format / --log_level. Every wait polls with a deadline; nothing
// asserts a duration.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/secret_volume.h"
#include "tests/server/smcryptd_process.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::ReadAll;
using ::smcrypt::testing::SecretVolume;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::WaitFor;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Metrics(Smcryptd& server) { return HttpGet(server.metrics_port(), "/metrics"); }

// Handled is grpc_server_handled_total of a CryptoService method and code (the
// grpc-ecosystem spelling: "OK", "Canceled", "DeadlineExceeded").
double Handled(Smcryptd& server, const std::string& method, const std::string& type,
               const std::string& code) {
  return MetricValue(Metrics(server),
                     absl::StrCat("grpc_server_handled_total{grpc_code=\"", code,
                                  "\",grpc_method=\"", method,
                                  "\",grpc_service=\"smcrypt.v1.CryptoService\",grpc_type=\"",
                                  type, "\"}"));
}

// Shell runs `script` with bash; true when it exits 0.
bool Shell(const std::string& script) {
  // Per process: ctest runs this suite's tests as parallel processes.
  const std::string path = absl::StrCat(::testing::TempDir(), "/signals_script_", getpid(), ".sh");
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return false;
  std::fputs(script.c_str(), f);
  std::fclose(f);
  return std::system(("bash " + path + " >/dev/null 2>&1").c_str()) == 0;
}

// NotAfter is the notAfter of certificate `pem` in Unix seconds, as the openssl command
// prints it (-1 when it cannot be read).
double NotAfter(const std::string& pem) {
  const std::string out = absl::StrCat(::testing::TempDir(), "/signals_enddate_", getpid(), ".txt");
  if (!Shell(absl::StrCat("set -e; date -u -d \"$(openssl x509 -noout -enddate -in ", pem,
                          " | cut -d= -f2)\" +%s > ", out))) {
    return -1;
  }
  double v = -1;
  return absl::SimpleAtod(absl::StripAsciiWhitespace(ReadAll(out)), &v) ? v : -1;
}

// MakeCertificates writes into `d` a CA valid for 40 days (ca.pem), and two server
// certificates it signs for localhost: a (10 days) and b (20 days), with their keys.
bool MakeCertificates(const std::string& d) {
  return Shell(absl::StrCat(
      "set -e; cd ", d, "\n",
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 40 "
      "-keyout ca.key -out ca.pem -subj /CN=smcrypt-signals-ca\n",
      "for p in a:10 b:20; do n=${p%:*}; days=${p#*:}\n",
      "  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
      "-keyout server-$n.key -out server-$n.csr -subj /CN=localhost\n",
      "  printf 'subjectAltName=DNS:localhost\\n' > san.ext\n",
      "  openssl x509 -req -in server-$n.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-days $days -out server-$n.pem -extfile san.ext\n",
      "done\nchmod 600 *.key\n"));
}

std::string ExpirySeries(const std::string& certificate) {
  return absl::StrCat("smcrypt_tls_certificate_expiry_timestamp_seconds{certificate=\"",
                      certificate, "\"}");
}

// ---- grpc_server_handled_total: deadlines and cancellation ----------------------------

class HandledCodeTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.Start({})) << server_.log(); }
  Smcryptd server_;
};

// An RSA-3072 key pair usually takes far longer to draw than the calls' 20 ms deadline:
// the handler answers OK after the deadline (or CANCELLED if its worker found the call
// already over), and the client receives DEADLINE_EXCEEDED, which is what the metric must
// count. A call that expires before it reaches the server is not counted at all (it never
// started there); one whose key pair came in time is OK for both sides.
TEST_F(HandledCodeTest, AUnaryCallPastItsDeadlineIsDeadlineExceeded) {
  auto stub = server_.Stub();
  int client_ok = 0, client_deadline = 0;
  constexpr int kCalls = 5;
  for (int i = 0; i < kCalls; ++i) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(20));
    v1::GenerateKeyPairRequest req;
    req.set_algorithm(v1::RSA_3072_PSS);
    v1::GenerateKeyPairResponse resp;
    const grpc::StatusCode code = stub->GenerateKeyPair(&ctx, req, &resp).error_code();
    ASSERT_TRUE(code == grpc::StatusCode::OK || code == grpc::StatusCode::DEADLINE_EXCEEDED)
        << code;
    (code == grpc::StatusCode::OK ? client_ok : client_deadline)++;
  }
  const std::string started_series =
      "grpc_server_started_total{grpc_method=\"GenerateKeyPair\",grpc_service=\"smcrypt.v1."
      "CryptoService\",grpc_type=\"unary\"}";
  // The handlers finish after the clients gave up; wait until every started call is counted.
  EXPECT_TRUE(WaitFor([&] {
    const std::string text = Metrics(server_);
    return MetricValue(text, "smcrypt_inflight_requests") == 0 &&
           Handled(server_, "GenerateKeyPair", "unary", "OK") +
                   Handled(server_, "GenerateKeyPair", "unary", "DeadlineExceeded") +
                   Handled(server_, "GenerateKeyPair", "unary", "Canceled") ==
               MetricValue(text, started_series);
  })) << Metrics(server_);
  const double started = MetricValue(Metrics(server_), started_series);
  const double never_arrived = kCalls - started;
  EXPECT_EQ(Handled(server_, "GenerateKeyPair", "unary", "OK"), client_ok);
  EXPECT_EQ(Handled(server_, "GenerateKeyPair", "unary", "DeadlineExceeded"),
            client_deadline - never_arrived);
  EXPECT_EQ(Handled(server_, "GenerateKeyPair", "unary", "Canceled"), 0);
  // The case this test is about happened at least once.
  EXPECT_GE(Handled(server_, "GenerateKeyPair", "unary", "DeadlineExceeded"), 1);
}

// The client cancels a call whose work is under way: Canceled, not the handler's OK.
TEST_F(HandledCodeTest, AUnaryCallTheClientCancelledIsCanceled) {
  auto stub = server_.Stub();
  grpc::ClientContext ctx;
  v1::GenerateKeyPairRequest req;
  req.set_algorithm(v1::RSA_3072_PSS);
  v1::GenerateKeyPairResponse resp;
  std::thread canceller([&] {
    // The call reaches its handler: it is counted as started.
    WaitFor([&] {
      return MetricValue(Metrics(server_), "smcrypt_inflight_requests") >= 1;
    });
    ctx.TryCancel();
  });
  EXPECT_EQ(stub->GenerateKeyPair(&ctx, req, &resp).error_code(), grpc::StatusCode::CANCELLED);
  canceller.join();
  EXPECT_TRUE(WaitFor([&] {
    return Handled(server_, "GenerateKeyPair", "unary", "Canceled") == 1;
  })) << Metrics(server_);
  EXPECT_TRUE(WaitFor([&] {
    return MetricValue(Metrics(server_), "smcrypt_inflight_requests") == 0;
  }));
  EXPECT_EQ(Handled(server_, "GenerateKeyPair", "unary", "OK"), 0);
  EXPECT_EQ(Handled(server_, "GenerateKeyPair", "unary", "DeadlineExceeded"), 0);
}

// A stream held open past its deadline: DeadlineExceeded (the reactor finishes it
// CANCELLED once gRPC has ended it).
TEST_F(HandledCodeTest, AStreamHeldOpenPastItsDeadlineIsDeadlineExceeded) {
  auto stub = server_.Stub();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  v1::HashStreamResponse resp;
  auto writer = stub->HashStream(&ctx, &resp);
  v1::HashStreamRequest req;
  req.set_algorithm(v1::SM3);
  writer->Write(req);
  EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_TRUE(WaitFor([&] {
    return Handled(server_, "HashStream", "client_stream", "DeadlineExceeded") == 1;
  })) << Metrics(server_);
  EXPECT_EQ(Handled(server_, "HashStream", "client_stream", "Canceled"), 0);
  EXPECT_EQ(Handled(server_, "HashStream", "client_stream", "OK"), 0);
}

// A bidirectional stream the client cancels after a round trip: Canceled.
TEST_F(HandledCodeTest, AStreamTheClientCancelledIsCanceled) {
  auto stub = server_.Stub();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = stub->EncryptStream(&ctx);
  v1::EncryptStreamRequest req;
  req.mutable_params()->set_algorithm(v1::SM4_GCM);
  req.mutable_params()->mutable_key()->set_inline_key(std::string(16, 'k'));
  req.mutable_params()->set_nonce(std::string(12, 'n'));
  ASSERT_TRUE(stream->Write(req));
  v1::EncryptStreamRequest chunk;
  chunk.set_plaintext("some plaintext");
  ASSERT_TRUE(stream->Write(chunk));
  ctx.TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(WaitFor([&] {
    return Handled(server_, "EncryptStream", "bidi_stream", "Canceled") == 1;
  })) << Metrics(server_);
  EXPECT_EQ(Handled(server_, "EncryptStream", "bidi_stream", "OK"), 0);
  EXPECT_EQ(Handled(server_, "EncryptStream", "bidi_stream", "DeadlineExceeded"), 0);
}

// ---- smcrypt_tls_certificate_expiry_timestamp_seconds ----------------------------------

TEST(TlsExpiryTest, StaticFilesReportTheServerAndClientCaNotAfter) {
  const std::string d = ::testing::TempDir() + "/signals_static";
  ASSERT_TRUE(Shell("rm -rf " + d + " && mkdir -p " + d));
  ASSERT_TRUE(MakeCertificates(d)) << "openssl could not make the test certificates";
  const double server_not_after = NotAfter(d + "/server-a.pem");
  const double ca_not_after = NotAfter(d + "/ca.pem");
  ASSERT_GT(server_not_after, 0);
  ASSERT_GT(ca_not_after, server_not_after);
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--tls_cert=" + d + "/server-a.pem", "--tls_key=" + d + "/server-a.key",
                            "--tls_client_ca=" + d + "/ca.pem", "--reload_interval=0"}))
      << server.log();
  const std::string text = Metrics(server);
  EXPECT_EQ(MetricValue(text, ExpirySeries("server")), server_not_after) << text;
  EXPECT_EQ(MetricValue(text, ExpirySeries("client_ca")), ca_not_after) << text;
  EXPECT_THAT(server.log(), HasSubstr("TLS certificate valid until "));
}

TEST(TlsExpiryTest, PlaintextHasNoExpirySeriesAndTlsWithoutClientCaOnlyTheServer) {
  Smcryptd plain;
  ASSERT_TRUE(plain.Start({})) << plain.log();
  EXPECT_THAT(Metrics(plain), Not(HasSubstr("smcrypt_tls_certificate_expiry_timestamp_seconds")));

  const std::string d = ::testing::TempDir() + "/signals_noca";
  ASSERT_TRUE(Shell("rm -rf " + d + " && mkdir -p " + d));
  ASSERT_TRUE(MakeCertificates(d));
  Smcryptd tls;
  ASSERT_TRUE(tls.Start({"--tls_cert=" + d + "/server-b.pem", "--tls_key=" + d + "/server-b.key"}))
      << tls.log();
  const std::string tls_text = Metrics(tls);
  EXPECT_EQ(MetricValue(tls_text, ExpirySeries("server")), NotAfter(d + "/server-b.pem"));
  EXPECT_THAT(tls_text, Not(HasSubstr("certificate=\"client_ca\"")));
}

// A rotated certificate (a Kubernetes Secret update) moves the gauge to its notAfter; an
// invalid one leaves it at the certificate still served.
TEST(TlsExpiryTest, AReloadMovesTheGaugeToTheNewCertificate) {
  SecretVolume tls;
  ASSERT_TRUE(MakeCertificates(tls.dir())) << "openssl could not make the test certificates";
  const std::string d = tls.dir();
  const double a = NotAfter(d + "/server-a.pem");
  const double b = NotAfter(d + "/server-b.pem");
  ASSERT_GT(b, a);
  tls.Publish({{"tls.crt", ReadAll(d + "/server-a.pem")}, {"tls.key", ReadAll(d + "/server-a.key")}});
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--tls_cert=" + d + "/tls.crt", "--tls_key=" + d + "/tls.key",
                            "--reload_interval=200ms"}))
      << server.log();
  EXPECT_EQ(MetricValue(Metrics(server), ExpirySeries("server")), a);
  tls.Publish({{"tls.crt", ReadAll(d + "/server-b.pem")}, {"tls.key", ReadAll(d + "/server-b.key")}});
  EXPECT_TRUE(WaitFor([&] { return MetricValue(Metrics(server), ExpirySeries("server")) == b; }))
      << Metrics(server);
  // A certificate with the wrong key is refused: the gauge stays at b.
  tls.Publish({{"tls.crt", ReadAll(d + "/server-a.pem")}, {"tls.key", ReadAll(d + "/server-b.key")}});
  EXPECT_TRUE(WaitFor([&] {
    return server.log().find("TLS certificate files changed and are invalid") != std::string::npos;
  }));
  EXPECT_EQ(MetricValue(Metrics(server), ExpirySeries("server")), b);
}

// ---- process_* -------------------------------------------------------------------------

TEST(ProcessMetricsTest, TheProcessCollectorFamiliesAreThere) {
  const double before = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  Smcryptd server;
  ASSERT_TRUE(server.Start({})) << server.log();
  const double after = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  const std::string text = Metrics(server);
  for (const char* type : {"# TYPE process_cpu_seconds_total counter",
                           "# TYPE process_resident_memory_bytes gauge",
                           "# TYPE process_virtual_memory_bytes gauge",
                           "# TYPE process_start_time_seconds gauge",
                           "# TYPE process_open_fds gauge", "# TYPE process_max_fds gauge"}) {
    EXPECT_THAT(text, HasSubstr(type));
  }
  // The start time is read in clock ticks since boot (1/100 s): within a second of the
  // moments around the fork.
  const double start = MetricValue(text, "process_start_time_seconds");
  EXPECT_GE(start, before - 1);
  EXPECT_LE(start, after + 1);
  const double open_fds = MetricValue(text, "process_open_fds");
  EXPECT_GE(open_fds, 3);  // stdin, stdout, stderr and the listening sockets at least
  EXPECT_GE(MetricValue(text, "process_max_fds"), open_fds);
  EXPECT_GT(MetricValue(text, "process_virtual_memory_bytes"),
            MetricValue(text, "process_resident_memory_bytes"));
  EXPECT_GT(MetricValue(text, "process_resident_memory_bytes"), 0);
}

// ---- --log_format / --log_level --------------------------------------------------------

// Lines splits smcryptd's output into lines (the last, unfinished one dropped).
std::vector<std::string> Lines(const std::string& log) {
  std::vector<std::string> lines = absl::StrSplit(log, '\n');
  lines.pop_back();
  return lines;
}

TEST(LogFormatTest, JsonLogsParseLineByLine) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--log_format=json"})) << server.log();
  // Calls that log or write audit lines (stderr is the default audit log), a key id with
  // a newline, a quote and a control character among them (bytes that are not UTF-8 are
  // the unit test's: a proto string field cannot carry them).
  auto stub = server.Stub();
  v1::HmacRequest req;
  req.set_algorithm(v1::HMAC_SM3);
  req.mutable_key()->set_key_id(std::string("bad\n\"id\x01", 8));
  req.set_data("m");
  v1::HmacResponse resp;
  auto ctx = Ctx(5);
  EXPECT_FALSE(stub->Hmac(ctx.get(), req, &resp).ok());
  server.Signal(SIGTERM);
  EXPECT_EQ(server.WaitExit(), 0);
  const std::vector<std::string> lines = Lines(server.log());
  ASSERT_GE(lines.size(), 5u);
  int log_lines = 0;
  for (const std::string& line : lines) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << line;
    if (!j.contains("msg")) continue;  // an audit line
    ++log_lines;
    ASSERT_TRUE(j["ts"].is_string()) << line;
    absl::Time t;
    std::string err;
    EXPECT_TRUE(absl::ParseTime(absl::RFC3339_full, j["ts"].get<std::string>(), &t, &err))
        << line;
    EXPECT_THAT(std::vector<std::string>({"info", "warning", "error"}),
                ::testing::Contains(j["level"].get<std::string>()))
        << line;
  }
  EXPECT_GE(log_lines, 4);
  EXPECT_THAT(server.log(), HasSubstr("\"msg\":\"shut down\""));
  EXPECT_THAT(server.log(), HasSubstr("\"port\":"));
}

TEST(LogFormatTest, LogLevelErrorDropsInfoLines) {
  Smcryptd server;
  // A start-up that fails (a missing certificate) writes info lines before its error line
  // at the default level; at error only the error line is written.
  const std::string d = ::testing::TempDir() + "/signals_level";
  ASSERT_TRUE(Shell("rm -rf " + d + " && mkdir -p " + d));
  EXPECT_FALSE(server.Start({"--log_level=error", "--tls_cert=" + d + "/missing.pem",
                             "--tls_key=" + d + "/x.key"}));
  EXPECT_EQ(server.WaitExit(), 1);
  const std::string log = server.log();
  EXPECT_THAT(log, HasSubstr(" E start-up failed: "));
  EXPECT_THAT(log, Not(HasSubstr(" I ")));
}

TEST(LogFormatTest, BadValuesFailAtStart) {
  {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--log_format=yaml"}));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_THAT(server.log(), HasSubstr("--log_format must be text or json, got 'yaml'"));
  }
  {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--log_level=debug"}));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_THAT(server.log(),
                HasSubstr("--log_level must be info, warning or error, got 'debug'"));
  }
}

}  // namespace
}  // namespace smcrypt
