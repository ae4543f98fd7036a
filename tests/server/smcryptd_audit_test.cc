// smcryptd_audit_test — the audit log of the real smcryptd (server/engine/audit_log.h):
//   - a mixed run (Encrypt, Decrypt with a wrong tag, EncryptBatch, EncryptStream,
//     DecryptStream, Hmac) writes one well-formed JSON line per use of a secret key, with
//     its final status;
//   - /dev/full as the audit file: --audit_failure=closed refuses Encrypt with
//     UNAVAILABLE and reason AUDIT_UNAVAILABLE (Hash, which needs no line, is served);
//     --audit_failure=open serves it and smcrypt_audit_lines_dropped_total rises;
//   - logrotate without copytruncate: rename, SIGHUP, and the next lines go to a new file
//     created 0600; a path that cannot be opened on reopen turns the log unhealthy
//     (closed: AUDIT_UNAVAILABLE) until it can be opened again.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "error_details.h"
#include "smcrypt/pem.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/secret_volume.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/metric_value.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using Stub = v1::CryptoService::Stub;
using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::KeyIdRef;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::ReadAll;
using ::smcrypt::testing::SecretVolume;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::WaitFor;
using ::testing::HasSubstr;

std::vector<std::string> LinesOf(const std::string& path) {
  return absl::StrSplit(ReadAll(path), '\n', absl::SkipEmpty());
}

grpc::Status Encrypt(Stub* stub, v1::EncryptResponse* resp = nullptr) {
  v1::EncryptRequest req;
  req.set_algorithm(v1::SM4_GCM);
  *req.mutable_key() = KeyIdRef("data");
  req.set_plaintext(std::string(512, 'p'));
  v1::EncryptResponse local;
  auto ctx = Ctx(10);
  return stub->Encrypt(ctx.get(), req, resp != nullptr ? resp : &local);
}

class SmcryptdAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    keys_.Publish({{"data.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, 'K'))},
                   {"mac.pem", smcrypt::PemEncode("HMAC KEY", std::string(32, 'M'))}});
    audit_dir_ = keys_.dir() + "-audit";
    fs::remove_all(audit_dir_);
    fs::create_directories(audit_dir_);
    audit_ = audit_dir_ + "/audit.log";
  }
  void TearDown() override { fs::remove_all(audit_dir_); }

  bool Start(const std::string& audit_log, const std::string& failure) {
    if (!server_.Start({"--keys_dir=" + keys_.dir(), "--reload_interval=0",
                        "--audit_log=" + audit_log, "--audit_failure=" + failure})) {
      return false;
    }
    stub_ = server_.Stub();
    return true;
  }

  SecretVolume keys_;
  std::string audit_dir_;
  std::string audit_;
  Smcryptd server_;
  std::unique_ptr<Stub> stub_;
};

// One call of each secret-key RPC, failures included; every line is JSON of the
// documented keys in order, and each call's line carries its final status.
TEST_F(SmcryptdAuditTest, EverySecretKeyUseHasAWellFormedLine) {
  ASSERT_TRUE(Start(audit_, "closed")) << server_.log();
  v1::EncryptResponse ct;
  ASSERT_TRUE(Encrypt(stub_.get(), &ct).ok());
  {  // Decrypt with a wrong tag: INVALID_ARGUMENT, audited.
    v1::DecryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = KeyIdRef("data");
    req.set_nonce(ct.nonce());
    req.set_ciphertext(ct.ciphertext());
    std::string tag = ct.tag();
    tag[0] ^= 1;
    req.set_tag(tag);
    v1::DecryptResponse resp;
    auto ctx = Ctx();
    EXPECT_EQ(stub_->Decrypt(ctx.get(), req, &resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  {  // EncryptBatch: two items OK, one of an unknown key.
    v1::EncryptBatchRequest req;
    for (const char* id : {"data", "nosuch", "data"}) {
      v1::EncryptRequest* item = req.add_items();
      item->set_algorithm(v1::SM4_GCM);
      *item->mutable_key() = KeyIdRef(id);
      item->set_plaintext("item");
    }
    v1::EncryptBatchResponse resp;
    auto ctx = Ctx();
    ASSERT_TRUE(stub_->EncryptBatch(ctx.get(), req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 3);
    EXPECT_EQ(resp.results(1).status().code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));
  }
  {  // EncryptStream: OK.
    auto ctx = Ctx();
    auto stream = stub_->EncryptStream(ctx.get());
    v1::EncryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::SM4_GCM);
    *req.mutable_params()->mutable_key() = KeyIdRef("data");
    req.set_plaintext(std::string(1000, 's'));
    ASSERT_TRUE(stream->Write(req));
    stream->WritesDone();
    v1::EncryptStreamResponse r;
    while (stream->Read(&r)) {
    }
    EXPECT_TRUE(stream->Finish().ok());
  }
  grpc::StatusCode decrypt_stream_code;
  {  // DecryptStream of bytes that were never sealed: it fails, with one line.
    auto ctx = Ctx();
    auto stream = stub_->DecryptStream(ctx.get());
    v1::DecryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::SM4_GCM);
    *req.mutable_params()->mutable_key() = KeyIdRef("data");
    req.mutable_params()->set_nonce(std::string(12, 'n'));
    req.set_ciphertext(std::string(100, 'c'));
    stream->Write(req);
    stream->WritesDone();
    v1::DecryptStreamResponse r;
    while (stream->Read(&r)) {
    }
    decrypt_stream_code = stream->Finish().error_code();
    EXPECT_NE(decrypt_stream_code, grpc::StatusCode::OK);
  }
  {  // Hmac: OK.
    v1::HmacRequest req;
    req.set_algorithm(v1::HMAC_SM3);
    *req.mutable_key() = KeyIdRef("mac");
    req.set_data("m");
    v1::HmacResponse resp;
    auto ctx = Ctx();
    EXPECT_TRUE(stub_->Hmac(ctx.get(), req, &resp).ok());
  }
  server_.Signal(SIGTERM);  // the queue is written out before the process exits
  ASSERT_EQ(server_.WaitExit(), 0);

  const std::vector<std::string> lines = LinesOf(audit_);
  const std::vector<std::string> keys = {"time",      "type",       "client",    "authenticated",
                                         "peer",      "method",     "operation", "algorithm",
                                         "key_source", "key_id",    "status"};
  std::vector<std::string> got;
  for (const std::string& line : lines) {
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON: " << line;
    std::vector<std::string> names;
    for (auto it = j.begin(); it != j.end(); ++it) names.push_back(it.key());
    EXPECT_EQ(names, keys) << line;
    EXPECT_EQ(j["type"], "audit");
    EXPECT_EQ(j["key_source"], "keyring");
    got.push_back(absl::StrCat(j["method"].get<std::string>(), " ",
                               j["key_id"].get<std::string>(), " ",
                               j["status"].get<std::string>()));
  }
  const std::string stream_status =
      absl::StatusCodeToString(static_cast<absl::StatusCode>(decrypt_stream_code));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "Encrypt data OK", "Decrypt data INVALID_ARGUMENT", "EncryptBatch data OK",
                     "EncryptBatch nosuch NOT_FOUND", "EncryptBatch data OK",
                     "EncryptStream data OK", "DecryptStream data " + stream_status,
                     "Hmac mac OK"}))
      << ReadAll(audit_);
}

// /dev/full: every write fails (ENOSPC).
TEST_F(SmcryptdAuditTest, DevFullClosedRefusesWithAuditUnavailable) {
  ASSERT_TRUE(Start("/dev/full", "closed")) << server_.log();
  // The first calls may be served while their lines wait for the writer; once a write
  // has failed, calls that need a line are refused before the key is used.
  grpc::Status s;
  ASSERT_TRUE(WaitFor([&] {
    s = Encrypt(stub_.get());
    return s.error_code() == grpc::StatusCode::UNAVAILABLE;
  })) << s.error_message();
  std::optional<smcrypt::rpc::ErrorInfo> info = smcrypt::rpc::DecodeErrorInfo(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason, "AUDIT_UNAVAILABLE");
  EXPECT_THAT(s.error_message(), HasSubstr("audit"));
  // Hash uses no key: served.
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  auto ctx = Ctx();
  EXPECT_TRUE(stub_->Hash(ctx.get(), req, &resp).ok());
  const std::string metrics = HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics, "smcrypt_audit_healthy"), 0);
  EXPECT_GE(MetricValue(metrics, "smcrypt_audit_write_errors_total"), 1);
  EXPECT_EQ(MetricValue(metrics, "smcrypt_audit_lines_dropped_total"), 0);
  EXPECT_THAT(server_.log(), HasSubstr("audit log: write failed: No space left on device"));
}

TEST_F(SmcryptdAuditTest, DevFullOpenServesAndCountsDroppedLines) {
  ASSERT_TRUE(Start("/dev/full", "open")) << server_.log();
  constexpr int kCalls = 50;
  for (int i = 0; i < kCalls; ++i) ASSERT_TRUE(Encrypt(stub_.get()).ok()) << i;
  ASSERT_TRUE(WaitFor([&] {
    return MetricValue(HttpGet(server_.metrics_port(), "/metrics"),
                       "smcrypt_audit_lines_dropped_total") >= kCalls;
  })) << HttpGet(server_.metrics_port(), "/metrics");
  const std::string metrics = HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(metrics, "smcrypt_audit_healthy"), 0);
  EXPECT_EQ(MetricValue(metrics, "smcrypt_audit_lines_written_total"), 0);
}

// logrotate's create mode: rename the file, SIGHUP; lines after the reopen go to a new
// file created 0600, those before stay in the renamed one.
TEST_F(SmcryptdAuditTest, SighupAfterRenameWritesToTheNewFile) {
  ASSERT_TRUE(Start(audit_, "closed")) << server_.log();
  ASSERT_TRUE(Encrypt(stub_.get()).ok());
  ASSERT_TRUE(WaitFor([&] { return LinesOf(audit_).size() == 1; }));
  const std::string rotated = audit_ + ".1";
  fs::rename(audit_, rotated);
  server_.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] {
    return server_.log().find("audit log: reopened " + audit_) != std::string::npos;
  })) << server_.log();
  ASSERT_TRUE(Encrypt(stub_.get()).ok());
  ASSERT_TRUE(Encrypt(stub_.get()).ok());
  ASSERT_TRUE(WaitFor([&] { return LinesOf(audit_).size() == 2; })) << ReadAll(audit_);
  EXPECT_EQ(LinesOf(rotated).size(), 1u);
  struct stat st {};
  ASSERT_EQ(stat(audit_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// A path that cannot be opened on reopen (a directory now stands there): closed refuses
// with AUDIT_UNAVAILABLE; once the path can be opened again (retried every second) calls
// are served and written to it.
TEST_F(SmcryptdAuditTest, AnUnwritablePathOnReopenRefusesUntilItCanBeOpened) {
  ASSERT_TRUE(Start(audit_, "closed")) << server_.log();
  ASSERT_TRUE(Encrypt(stub_.get()).ok());
  fs::rename(audit_, audit_ + ".1");
  fs::create_directory(audit_);
  server_.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] {
    return server_.log().find("audit log: cannot reopen " + audit_) != std::string::npos;
  })) << server_.log();
  const grpc::Status s = Encrypt(stub_.get());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
  std::optional<smcrypt::rpc::ErrorInfo> info = smcrypt::rpc::DecodeErrorInfo(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason, "AUDIT_UNAVAILABLE");
  EXPECT_EQ(MetricValue(HttpGet(server_.metrics_port(), "/metrics"), "smcrypt_audit_healthy"),
            0);
  fs::remove(audit_);
  ASSERT_TRUE(WaitFor([&] { return Encrypt(stub_.get()).ok(); }));
  // The served call's line reaches the reopened file. The first call's line may be there
  // too: the writer waits 10 ms for more lines before a write, so a SIGHUP right after a
  // call can reopen before that line is written, and a line is kept until a write succeeds.
  ASSERT_TRUE(WaitFor([&] { return !LinesOf(audit_).empty(); })) << ReadAll(audit_);
  for (const std::string& line : LinesOf(audit_)) {
    EXPECT_NE(line.find("\"method\":\"Encrypt\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"status\":\"OK\""), std::string::npos) << line;
  }
  EXPECT_EQ(MetricValue(HttpGet(server_.metrics_port(), "/metrics"), "smcrypt_audit_healthy"),
            1);
}

}  // namespace
