// Reloads against the real smcryptd (label integration): the keyring on SIGHUP and by
// polling (--reload_interval) through a Kubernetes Secret `..data` swap, a bad keyring
// that keeps the previous one, and TLS certificate rotation seen by new connections.
// Every wait polls with a deadline.
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
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

grpc::Status Hmac(v1::CryptoService::Stub* stub, const std::string& key_id) {
  v1::HmacRequest req;
  req.set_algorithm(v1::HMAC_SM3);
  req.mutable_key()->set_key_id(key_id);
  req.set_data("message");
  v1::HmacResponse resp;
  auto ctx = Ctx(5);
  return stub->Hmac(ctx.get(), req, &resp);
}

uint32_t KeyringSize(v1::CryptoService::Stub* stub) {
  v1::GetServerInfoRequest req;
  v1::GetServerInfoResponse resp;
  auto ctx = Ctx(5);
  EXPECT_TRUE(stub->GetServerInfo(ctx.get(), req, &resp).ok());
  return resp.keyring_size();
}

std::string HmacPem(const std::string& key) { return PemEncode("HMAC KEY", key); }

// Reloads reads smcrypt_{keyring,tls_certificate}_reloads_total{result} off /metrics.
double Reloads(Smcryptd& server, const std::string& what, const std::string& result) {
  return MetricValue(HttpGet(server.metrics_port(), "/metrics"),
                     "smcrypt_" + what + "_reloads_total{result=\"" + result + "\"}");
}

TEST(SmcryptdReloadTest, SighupReloadsTheKeyringAndABadOneKeepsThePrevious) {
  SecretVolume keys;
  keys.Publish({{"a.pem", HmacPem("key a")}});
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--keys_dir=" + keys.dir(), "--reload_interval=0"}))
      << server.log();
  auto stub = server.Stub();
  ASSERT_TRUE(Hmac(stub.get(), "a").ok());
  EXPECT_EQ(Hmac(stub.get(), "c").error_code(), grpc::StatusCode::NOT_FOUND);

  // Without polling nothing changes until SIGHUP.
  keys.Publish({{"a.pem", HmacPem("key a")}, {"c.pem", HmacPem("key c")}});
  EXPECT_EQ(Hmac(stub.get(), "c").error_code(), grpc::StatusCode::NOT_FOUND);
  server.Signal(SIGHUP);
  EXPECT_TRUE(WaitFor([&] { return Hmac(stub.get(), "c").ok(); })) << server.log();
  EXPECT_EQ(KeyringSize(stub.get()), 2u);
  EXPECT_EQ(Reloads(server, "keyring", "success"), 1);
  EXPECT_EQ(Reloads(server, "keyring", "failure"), 0);
  EXPECT_THAT(server.log(), HasSubstr(absl::StrCat("keyring reloaded from ", keys.dir(),
                                                   ": 2 keys (added: c)")));

  // A removed key is NOT_FOUND, as an unknown key_id.
  keys.Publish({{"c.pem", HmacPem("key c")}});
  server.Signal(SIGHUP);
  EXPECT_TRUE(WaitFor([&] {
    return Hmac(stub.get(), "a").error_code() == grpc::StatusCode::NOT_FOUND;
  })) << server.log();
  EXPECT_EQ(Hmac(stub.get(), "a").error_message(), "unknown key_id 'a'");
  EXPECT_EQ(KeyringSize(stub.get()), 1u);

  // A bad file: logged, and the previous keyring (c only) stays in use.
  keys.Publish({{"c.pem", HmacPem("key c")}, {"d.pem", HmacPem("key d")},
                {"bad.pem", "not a PEM file"}});
  server.Signal(SIGHUP);
  EXPECT_TRUE(WaitFor([&] {
    return server.log().find("keyring reload from " + keys.dir() + " failed") !=
           std::string::npos;
  })) << server.log();
  EXPECT_THAT(server.log(), HasSubstr("keeping the previous 1 keys: " + keys.dir() + "/bad.pem"));
  EXPECT_TRUE(Hmac(stub.get(), "c").ok());
  EXPECT_EQ(Hmac(stub.get(), "d").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(KeyringSize(stub.get()), 1u);
  EXPECT_EQ(Reloads(server, "keyring", "success"), 2);
  EXPECT_EQ(Reloads(server, "keyring", "failure"), 1);
  EXPECT_TRUE(server.Alive());
  EXPECT_THAT(server.log(), ::testing::Not(HasSubstr("key d")));
}

TEST(SmcryptdReloadTest, PollingPicksUpASecretUpdateWithoutASignal) {
  SecretVolume keys;
  keys.Publish({{"a.pem", HmacPem("key a")}});
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--keys_dir=" + keys.dir(), "--reload_interval=100ms"}))
      << server.log();
  auto stub = server.Stub();
  keys.Publish({{"b.pem", HmacPem("key b")}});
  EXPECT_TRUE(WaitFor([&] { return Hmac(stub.get(), "b").ok(); })) << server.log();
  EXPECT_EQ(Hmac(stub.get(), "a").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(server.log(), HasSubstr("1 keys (added: b; removed: a)"));
}

// ---- TLS ------------------------------------------------------------------------------

// Two independent CAs, each with a server certificate for localhost, made with the
// openssl command in `dir`: ca-a.pem, server-a.{pem,key}, ca-b.pem, server-b.{pem,key}.
bool MakeCertificates(const std::string& dir) {
  const std::string script = absl::StrCat(
      "set -e; cd ", dir, "; for x in a b; do ",
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "-keyout ca-$x.key -out ca-$x.pem -subj /CN=smcrypt-reload-ca-$x; ",
      "openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
      "-keyout server-$x.key -out server-$x.csr -subj /CN=localhost; ",
      "printf 'subjectAltName=DNS:localhost\\n' > server.ext; ",
      "openssl x509 -req -in server-$x.csr -CA ca-$x.pem -CAkey ca-$x.key -CAcreateserial "
      "-days 2 -out server-$x.pem -extfile server.ext; done");
  std::ofstream(dir + "/make-certs.sh") << script;
  return std::system(("bash " + dir + "/make-certs.sh >/dev/null 2>&1").c_str()) == 0;
}

// Handshake makes a new connection that trusts only `ca_pem` and calls Hash.
grpc::Status Handshake(const std::string& target, const std::string& ca_pem) {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ca_pem;
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
  auto stub = v1::CryptoService::NewStub(
      grpc::CreateCustomChannel(target, grpc::SslCredentials(ssl), args));
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  auto ctx = Ctx(5);
  return stub->Hash(ctx.get(), req, &resp);
}

TEST(SmcryptdReloadTest, NewConnectionsGetTheRotatedCertificate) {
  SecretVolume tls;
  ASSERT_TRUE(MakeCertificates(tls.dir())) << "openssl could not make the test certificates";
  const std::string d = tls.dir();
  const std::string ca_a = ReadAll(d + "/ca-a.pem"), ca_b = ReadAll(d + "/ca-b.pem");
  tls.Publish({{"tls.crt", ReadAll(d + "/server-a.pem")}, {"tls.key", ReadAll(d + "/server-a.key")}});
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--tls_cert=" + d + "/tls.crt", "--tls_key=" + d + "/tls.key",
                            "--reload_interval=100ms"}))
      << server.log();
  ASSERT_TRUE(Handshake(server.target(), ca_a).ok()) << server.log();
  EXPECT_EQ(Handshake(server.target(), ca_b).error_code(), grpc::StatusCode::UNAVAILABLE);

  tls.Publish({{"tls.crt", ReadAll(d + "/server-b.pem")}, {"tls.key", ReadAll(d + "/server-b.key")}});
  EXPECT_TRUE(WaitFor([&] { return Handshake(server.target(), ca_b).ok(); })) << server.log();
  EXPECT_EQ(Handshake(server.target(), ca_a).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_TRUE(WaitFor([&] {
    return server.log().find("TLS certificate files changed: valid") != std::string::npos;
  })) << server.log();
  EXPECT_GE(Reloads(server, "tls_certificate", "success"), 1);
  EXPECT_EQ(Reloads(server, "tls_certificate", "failure"), 0);

  // A key that does not match the certificate is reported; the server keeps running.
  tls.Publish({{"tls.crt", ReadAll(d + "/server-a.pem")}, {"tls.key", ReadAll(d + "/server-b.key")}});
  EXPECT_TRUE(WaitFor([&] {
    return server.log().find("TLS certificate files changed and are invalid: --tls_key: ") !=
           std::string::npos;
  })) << server.log();
  EXPECT_EQ(Reloads(server, "tls_certificate", "failure"), 1);
  // New handshakes keep the previous certificate (B) while the files are bad.
  EXPECT_TRUE(Handshake(server.target(), ca_b).ok()) << server.log();

  // An empty certificate file (one caught mid-write): the same, and smcryptd keeps running.
  tls.Publish({{"tls.crt", ""}, {"tls.key", ReadAll(d + "/server-a.key")}});
  EXPECT_TRUE(WaitFor([&] { return Reloads(server, "tls_certificate", "failure") == 2; }))
      << server.log();
  EXPECT_THAT(server.log(), HasSubstr("holds no PEM certificate; new handshakes keep the "
                                      "previous certificate"));
  absl::SleepFor(absl::Milliseconds(1500));  // past gRPC's next re-read (1 s)
  EXPECT_TRUE(Handshake(server.target(), ca_b).ok()) << server.log();
  EXPECT_TRUE(server.Alive());

  // Valid again: new handshakes get certificate A.
  tls.Publish({{"tls.crt", ReadAll(d + "/server-a.pem")}, {"tls.key", ReadAll(d + "/server-a.key")}});
  EXPECT_TRUE(WaitFor([&] { return Handshake(server.target(), ca_a).ok(); })) << server.log();
  EXPECT_TRUE(server.Alive());
}

TEST(SmcryptdReloadTest, StartUpFailsOnAMissingOrMismatchedCertificate) {
  SecretVolume tls;
  ASSERT_TRUE(MakeCertificates(tls.dir())) << "openssl could not make the test certificates";
  const std::string d = tls.dir();
  {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--tls_cert=" + d + "/missing.pem", "--tls_key=" + d + "/server-a.key"}));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_THAT(server.log(), HasSubstr("--tls_cert: cannot read " + d + "/missing.pem"));
  }
  {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--tls_cert=" + d + "/server-a.pem", "--tls_key=" + d + "/server-b.key"}));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_THAT(server.log(), HasSubstr("does not match the certificate in " + d + "/server-a.pem"));
  }
  for (const char* interval : {"1ns", "99ms", "25h"}) {
    Smcryptd server;
    EXPECT_FALSE(server.Start({std::string("--reload_interval=") + interval}));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_THAT(server.log(), HasSubstr("must be 0 (no polling) or from 100ms to 24h"));
  }
}

}  // namespace
}  // namespace smcrypt
