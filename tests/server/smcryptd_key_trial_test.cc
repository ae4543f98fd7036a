// Checks with a keyring key named without a version against the real smcryptd (label
// integration; crypto.proto, KeyRef "Key versions"): data made under each of versions 1,
// 2, 3 of SM4, AES-256, SM2, ECDSA, RSA and HMAC keys opens or verifies and the response
// names the version; forgeries are refused under every version, which the error and the
// audit line list; unauthenticated modes and short tags need a named version;
// min_version leaves old versions out; streams made under v1 open after v2 is added; a
// key of one plain file answers byte for byte as before. Every wait polls with a deadline.
#include <signal.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "error_details.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/secret_volume.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/metric_value.h"

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

using Stub = v1::CryptoService::Stub;
using Files = std::vector<std::pair<std::string, std::string>>;

std::string PrivatePem(Algorithm alg) {
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(alg);
  EXPECT_TRUE(kp.ok()) << kp.status();
  return PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
}

bool IsAead(v1::Algorithm alg) {
  return alg == v1::SM4_GCM || alg == v1::SM4_CCM || alg == v1::AES_256_GCM;
}

void SetKey(v1::KeyRef* ref, const std::string& id, uint32_t version) {
  ref->set_key_id(id);
  if (version != 0) ref->set_key_version(version);
}

std::string Flip(std::string s, size_t i) {
  s[i] ^= 0x01;
  return s;
}

// ExpectTriedAll: a decryption refused under versions 3, 2, 1 of `id`.
void ExpectTriedAll(const grpc::Status& s, const std::string& id) {
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "decryption failed (tried key '" + id + "' versions 3, 2, 1)");
  std::optional<rpc::ErrorInfo> info = rpc::DecodeErrorInfo(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->reason, "DECRYPTION_FAILED");
  EXPECT_EQ(info->metadata, (std::map<std::string, std::string>{
                                {"key_id", id}, {"key_versions_tried", "3,2,1"}}));
}

// Versions 1, 2, 3 of "sm4" (SM4), "aes" (AES-256), "sm2", "ec" (ECDSA P-256), "rsa"
// (RSA-2048), "hmac"; "plain" (one SM4 plain.pem) and "plainsig" (one SM2 plainsig.pem).
class SmcryptdKeyTrialTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (int v = 1; v <= 3; ++v) {
      const std::string n = absl::StrCat(".v", v, ".pem");
      files_.push_back({"sm4" + n, PemEncode("SM4 KEY", std::string(16, char('0' + v)))});
      files_.push_back({"aes" + n, PemEncode("AES KEY", std::string(32, char('a' + v)))});
      files_.push_back({"hmac" + n, PemEncode("HMAC KEY", std::string(24, char('h' + v)))});
      files_.push_back({"sm2" + n, PrivatePem(Algorithm::kSm2)});
      files_.push_back({"ec" + n, PrivatePem(Algorithm::kEcdsaP256)});
      files_.push_back({"rsa" + n, PrivatePem(Algorithm::kRsa2048Pss)});
    }
    files_.push_back({"plain.pem", PemEncode("SM4 KEY", std::string(16, 'p'))});
    files_.push_back({"plainsig.pem", PrivatePem(Algorithm::kSm2)});
  }

  void SetUp() override {
    audit_ = keys_.dir() + "-audit.log";
    keys_.Publish(files_);
    ASSERT_TRUE(server_.Start({"--keys_dir=" + keys_.dir(), "--reload_interval=0",
                               "--audit_log=" + audit_}))
        << server_.log();
    stub_ = server_.Stub();
  }
  void TearDown() override { std::remove(audit_.c_str()); }

  // Reload publishes `files` and reloads with SIGHUP, waiting for the log line.
  void Reload(const Files& files, const std::string& expect_in_log) {
    keys_.Publish(files);
    server_.Signal(SIGHUP);
    ASSERT_TRUE(WaitFor([&] { return server_.log().find(expect_in_log) != std::string::npos; }))
        << server_.log();
  }

  grpc::Status Encrypt(v1::Algorithm alg, const std::string& id, uint32_t version,
                       v1::EncryptResponse* resp, uint32_t tag_length = 0) {
    v1::EncryptRequest req;
    req.set_algorithm(alg);
    SetKey(req.mutable_key(), id, version);
    req.set_plaintext(std::string(100, 'm'));
    if (IsAead(alg)) req.set_aad("aad");
    req.set_tag_length(tag_length);
    auto ctx = Ctx(5);
    return stub_->Encrypt(ctx.get(), req, resp);
  }
  grpc::Status Decrypt(v1::Algorithm alg, const std::string& id, uint32_t version,
                       const v1::EncryptResponse& ct, v1::DecryptResponse* resp) {
    v1::DecryptRequest req;
    req.set_algorithm(alg);
    SetKey(req.mutable_key(), id, version);
    req.set_nonce(ct.nonce());
    req.set_ciphertext(ct.ciphertext());
    req.set_tag(ct.tag());
    if (IsAead(alg)) req.set_aad("aad");
    auto ctx = Ctx(5);
    return stub_->Decrypt(ctx.get(), req, resp);
  }
  grpc::Status PublicKeyDecrypt(v1::Algorithm alg, const std::string& id,
                                const std::string& ct, v1::PublicKeyDecryptResponse* resp) {
    v1::PublicKeyDecryptRequest req;
    req.set_algorithm(alg);
    SetKey(req.mutable_key(), id, 0);
    req.set_ciphertext(ct);
    auto ctx = Ctx(5);
    return stub_->PublicKeyDecrypt(ctx.get(), req, resp);
  }
  std::string PublicKeyEncrypt(v1::Algorithm alg, const std::string& id, uint32_t version) {
    v1::PublicKeyEncryptRequest req;
    req.set_algorithm(alg);
    SetKey(req.mutable_key(), id, version);
    req.set_plaintext("secret");
    v1::PublicKeyEncryptResponse resp;
    auto ctx = Ctx(5);
    EXPECT_TRUE(stub_->PublicKeyEncrypt(ctx.get(), req, &resp).ok());
    return resp.ciphertext();
  }
  std::string Sign(v1::Algorithm alg, const std::string& id, uint32_t version) {
    v1::SignRequest req;
    req.set_algorithm(alg);
    SetKey(req.mutable_key(), id, version);
    req.set_data("signed");
    v1::SignResponse resp;
    auto ctx = Ctx(5);
    EXPECT_TRUE(stub_->Sign(ctx.get(), req, &resp).ok());
    return resp.signature();
  }
  v1::VerifyResponse Verify(v1::Algorithm alg, const std::string& id, const std::string& data,
                            const std::string& sig) {
    v1::VerifyRequest req;
    req.set_algorithm(alg);
    SetKey(req.mutable_key(), id, 0);
    req.set_data(data);
    req.set_signature(sig);
    v1::VerifyResponse resp;
    auto ctx = Ctx(5);
    EXPECT_TRUE(stub_->Verify(ctx.get(), req, &resp).ok());
    return resp;
  }
  v1::HmacResponse Hmac(const std::string& id, uint32_t version, const std::string* expected) {
    v1::HmacRequest req;
    req.set_algorithm(v1::HMAC_SM3);
    SetKey(req.mutable_key(), id, version);
    req.set_data("maced");
    if (expected != nullptr) req.set_expected_mac(*expected);
    v1::HmacResponse resp;
    auto ctx = Ctx(5);
    EXPECT_TRUE(stub_->Hmac(ctx.get(), req, &resp).ok());
    return resp;
  }

  static Files files_;
  SecretVolume keys_;
  std::string audit_;
  Smcryptd server_;
  std::unique_ptr<Stub> stub_;
};

Files SmcryptdKeyTrialTest::files_;

TEST_F(SmcryptdKeyTrialTest, DataUnderEachVersionOpensAndNamesIt) {
  for (uint32_t v = 1; v <= 3; ++v) {
    SCOPED_TRACE(absl::StrCat("version ", v));
    for (auto [alg, id] : {std::pair{v1::SM4_GCM, "sm4"}, {v1::SM4_CCM, "sm4"},
                           {v1::AES_256_GCM, "aes"}}) {
      v1::EncryptResponse ct;
      ASSERT_TRUE(Encrypt(alg, id, v, &ct).ok());
      v1::DecryptResponse pt;
      ASSERT_TRUE(Decrypt(alg, id, 0, ct, &pt).ok()) << id;
      EXPECT_EQ(pt.plaintext(), std::string(100, 'm'));
      EXPECT_EQ(pt.key_version(), v);
    }
    for (auto [alg, id] : {std::pair{v1::SM2, "sm2"}, {v1::RSA_2048_OAEP, "rsa"}}) {
      v1::PublicKeyDecryptResponse pt;
      ASSERT_TRUE(PublicKeyDecrypt(alg, id, PublicKeyEncrypt(alg, id, v), &pt).ok()) << id;
      EXPECT_EQ(pt.plaintext(), "secret");
      EXPECT_EQ(pt.key_version(), v);
    }
    {
      v1::HybridEncryptRequest req;
      req.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
      SetKey(req.mutable_key(), "sm2", v);
      req.set_plaintext("hybrid");
      v1::HybridEncryptResponse ct;
      auto ctx = Ctx(5);
      ASSERT_TRUE(stub_->HybridEncrypt(ctx.get(), req, &ct).ok());
      v1::HybridDecryptRequest dreq;
      dreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
      SetKey(dreq.mutable_key(), "sm2", 0);
      dreq.set_ciphertext(ct.ciphertext());
      v1::HybridDecryptResponse pt;
      auto dctx = Ctx(5);
      ASSERT_TRUE(stub_->HybridDecrypt(dctx.get(), dreq, &pt).ok());
      EXPECT_EQ(pt.plaintext(), "hybrid");
      EXPECT_EQ(pt.key_version(), v);
    }
    for (auto [alg, id] : {std::pair{v1::SM2, "sm2"}, {v1::ECDSA_P256, "ec"},
                           {v1::RSA_2048_PSS, "rsa"}}) {
      v1::VerifyResponse r = Verify(alg, id, "signed", Sign(alg, id, v));
      EXPECT_TRUE(r.valid()) << id;
      EXPECT_EQ(r.key_version(), v) << id;
    }
    const std::string mac = Hmac("hmac", v, nullptr).mac();
    v1::HmacResponse checked = Hmac("hmac", 0, &mac);
    EXPECT_TRUE(checked.valid());
    EXPECT_EQ(checked.key_version(), v);
  }
  // VerifyBatch: one item per version, and a forged one.
  v1::VerifyBatchRequest req;
  for (uint32_t v : {1u, 2u, 3u, 0u}) {
    v1::VerifyRequest* item = req.add_items();
    item->set_algorithm(v1::ECDSA_P256);
    SetKey(item->mutable_key(), "ec", 0);
    item->set_data(v == 0 ? "forged" : "signed");
    item->set_signature(Sign(v1::ECDSA_P256, "ec", v == 0 ? 1 : v));
  }
  v1::VerifyBatchResponse resp;
  auto ctx = Ctx(5);
  ASSERT_TRUE(stub_->VerifyBatch(ctx.get(), req, &resp).ok());
  ASSERT_EQ(resp.results_size(), 4);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(resp.results(i).valid());
    EXPECT_EQ(resp.results(i).key_version(), static_cast<uint32_t>(i + 1));
  }
  EXPECT_FALSE(resp.results(3).valid());
  EXPECT_EQ(resp.results(3).key_version(), 0u);

  // The audit line of a PublicKeyDecrypt that opened under v1 after trying 3 and 2.
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit_).find("\"method\":\"PublicKeyDecrypt\",\"operation\":\"decrypt\","
                                "\"algorithm\":\"SM2\",\"key_source\":\"keyring\","
                                "\"key_id\":\"sm2\",\"key_version\":1,"
                                "\"key_versions_tried\":[3,2,1],\"status\":\"OK\"") !=
           std::string::npos;
  })) << ReadAll(audit_);
  // A MAC checked under v3 (the primary) tried only it (the audit writer is asynchronous:
  // its line may follow).
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit_).find("\"key_id\":\"hmac\",\"key_version\":3,\"status\":\"OK\"") !=
           std::string::npos;
  })) << ReadAll(audit_);
  // The trials are counted: versions tried beyond the first.
  const std::string metrics = HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_THAT(metrics, HasSubstr("smcrypt_key_version_trials_total{operation=\"verify\","
                                 "outcome=\"failed\"} 2"));
}

TEST_F(SmcryptdKeyTrialTest, ForgeriesAreRefusedUnderEveryVersion) {
  v1::EncryptResponse ct;
  ASSERT_TRUE(Encrypt(v1::SM4_GCM, "sm4", 2, &ct).ok());
  ct.set_tag(Flip(ct.tag(), 5));
  v1::DecryptResponse pt;
  ExpectTriedAll(Decrypt(v1::SM4_GCM, "sm4", 0, ct, &pt), "sm4");
  ASSERT_TRUE(Encrypt(v1::AES_256_GCM, "aes", 1, &ct).ok());
  ct.set_ciphertext(Flip(ct.ciphertext(), 0));
  ExpectTriedAll(Decrypt(v1::AES_256_GCM, "aes", 0, ct, &pt), "aes");

  // SM2: a byte of C3 (C1C3C2: C1 is 65 bytes); RSA-OAEP: the last byte.
  v1::PublicKeyDecryptResponse pk;
  ExpectTriedAll(
      PublicKeyDecrypt(v1::SM2, "sm2", Flip(PublicKeyEncrypt(v1::SM2, "sm2", 1), 70), &pk),
      "sm2");
  const std::string oaep = PublicKeyEncrypt(v1::RSA_2048_OAEP, "rsa", 2);
  ExpectTriedAll(PublicKeyDecrypt(v1::RSA_2048_OAEP, "rsa", Flip(oaep, oaep.size() - 1), &pk),
                 "rsa");

  for (auto [alg, id] : {std::pair{v1::SM2, "sm2"}, {v1::ECDSA_P256, "ec"},
                         {v1::RSA_2048_PSS, "rsa"}}) {
    v1::VerifyResponse r = Verify(alg, id, "forged", Sign(alg, id, 1));
    EXPECT_FALSE(r.valid()) << id;
    EXPECT_EQ(r.key_version(), 0u) << id;
  }
  const std::string mac = Flip(Hmac("hmac", 2, nullptr).mac(), 0);
  v1::HmacResponse checked = Hmac("hmac", 0, &mac);
  EXPECT_FALSE(checked.valid());
  EXPECT_EQ(checked.key_version(), 0u);

  // Audit lines of the refused PublicKeyDecrypt and Hmac: the versions tried, no
  // key_version (none authenticated).
  EXPECT_TRUE(WaitFor([&] {
    const std::string audit = ReadAll(audit_);
    return audit.find("\"key_id\":\"rsa\",\"key_versions_tried\":[3,2,1],"
                      "\"status\":\"INVALID_ARGUMENT\"") != std::string::npos &&
           audit.find("\"key_id\":\"hmac\",\"key_versions_tried\":[3,2,1],"
                      "\"status\":\"OK\"") != std::string::npos;
  })) << ReadAll(audit_);
  const std::string metrics = HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_THAT(metrics, HasSubstr("smcrypt_key_version_trials_total{operation=\"decrypt\","
                                 "outcome=\"failed\"} 8"));
  EXPECT_THAT(metrics, HasSubstr("smcrypt_decrypt_failures_total{algorithm=\"SM4-GCM\"} 1"));
}

TEST_F(SmcryptdKeyTrialTest, UnauthenticatedModesAndShortTagsNeedAVersion) {
  for (auto [alg, tag_length] : {std::pair{v1::SM4_CBC, 0u}, {v1::SM4_CTR, 0u},
                                 {v1::SM4_ECB, 0u}, {v1::SM4_CFB, 0u}, {v1::SM4_OFB, 0u},
                                 {v1::AES_256_CBC, 0u}, {v1::SM4_CCM, 8u}, {v1::SM4_CCM, 4u}}) {
    SCOPED_TRACE(absl::StrCat(v1::Algorithm_Name(alg), " tag ", tag_length));
    const std::string id = alg == v1::AES_256_CBC ? "aes" : "sm4";
    v1::EncryptResponse ct;
    ASSERT_TRUE(Encrypt(alg, id, 1, &ct, tag_length).ok());
    v1::DecryptResponse pt;
    grpc::Status s = Decrypt(alg, id, 0, ct, &pt);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(s.error_message(), HasSubstr("set key.key_version"));
    EXPECT_THAT(s.error_message(), HasSubstr("3 retained versions (3, 2, 1)"));
    std::optional<rpc::ErrorInfo> info = rpc::DecodeErrorInfo(s);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->reason, "KEY_VERSION_REQUIRED");
    EXPECT_EQ(info->metadata, (std::map<std::string, std::string>{
                                  {"key_id", id}, {"retained_versions", "3,2,1"}}));
    ASSERT_TRUE(Decrypt(alg, id, 1, ct, &pt).ok());
    EXPECT_EQ(pt.key_version(), 1u);
  }
  // The refusals' audit lines name no version: none was used.
  const std::string refused = "\"key_id\":\"sm4\",\"status\":\"FAILED_PRECONDITION\"";
  EXPECT_TRUE(WaitFor([&] { return ReadAll(audit_).find(refused) != std::string::npos; }))
      << ReadAll(audit_);
  EXPECT_THAT(ReadAll(audit_), Not(HasSubstr("\"key_version\":3,\"status\":\"FAILED_PRECONDITION\"")));
}

TEST_F(SmcryptdKeyTrialTest, MinVersionLeavesOldVersionsOutOfTrials) {
  v1::EncryptResponse ct1, ct2;
  ASSERT_TRUE(Encrypt(v1::SM4_GCM, "sm4", 1, &ct1).ok());
  ASSERT_TRUE(Encrypt(v1::SM4_GCM, "sm4", 2, &ct2).ok());
  Files files = files_;
  files.push_back({"sm4.min_version", "2"});
  Reload(files, "changed: sm4.min_version");
  v1::DecryptResponse pt;
  grpc::Status s = Decrypt(v1::SM4_GCM, "sm4", 0, ct1, &pt);
  EXPECT_EQ(s.error_message(), "decryption failed (tried key 'sm4' versions 3, 2)");
  std::optional<rpc::ErrorInfo> info = rpc::DecodeErrorInfo(s);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->metadata.at("key_versions_tried"), "3,2");
  ASSERT_TRUE(Decrypt(v1::SM4_GCM, "sm4", 0, ct2, &pt).ok());
  EXPECT_EQ(pt.key_version(), 2u);
}

TEST_F(SmcryptdKeyTrialTest, OnePlainKeyAnswersByteForByteAsBefore) {
  // CBC and an 8-byte CCM tag still open with no version named; no response carries
  // key_version, so each equals the message of the fields that existed before.
  for (auto [alg, tag_length] : {std::pair{v1::SM4_CBC, 0u}, {v1::SM4_CCM, 8u},
                                 {v1::SM4_GCM, 0u}}) {
    v1::EncryptResponse ct;
    ASSERT_TRUE(Encrypt(alg, "plain", 0, &ct, tag_length).ok());
    v1::DecryptResponse pt;
    ASSERT_TRUE(Decrypt(alg, "plain", 0, ct, &pt).ok());
    v1::DecryptResponse old;
    old.set_plaintext(std::string(100, 'm'));
    EXPECT_EQ(pt.SerializeAsString(), old.SerializeAsString());
    ct.set_tag(Flip(ct.tag().empty() ? std::string(1, '\0') : ct.tag(), 0));
    if (alg != v1::SM4_CBC) {
      grpc::Status s = Decrypt(alg, "plain", 0, ct, &pt);
      EXPECT_EQ(s.error_message(), "decryption failed");
      std::optional<rpc::ErrorInfo> info = rpc::DecodeErrorInfo(s);
      ASSERT_TRUE(info.has_value());
      EXPECT_TRUE(info->metadata.empty());
    }
  }
  v1::VerifyResponse r = Verify(v1::SM2, "plainsig", "signed", Sign(v1::SM2, "plainsig", 0));
  v1::VerifyResponse old_verify;
  old_verify.set_valid(true);
  EXPECT_EQ(r.SerializeAsString(), old_verify.SerializeAsString());
  v1::PublicKeyDecryptResponse pk;
  ASSERT_TRUE(
      PublicKeyDecrypt(v1::SM2, "plainsig", PublicKeyEncrypt(v1::SM2, "plainsig", 0), &pk).ok());
  v1::PublicKeyDecryptResponse old_pk;
  old_pk.set_plaintext("secret");
  EXPECT_EQ(pk.SerializeAsString(), old_pk.SerializeAsString());
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit_).find("\"key_id\":\"plainsig\",\"status\":\"OK\"") != std::string::npos;
  }));
  EXPECT_THAT(ReadAll(audit_), Not(HasSubstr("\"key_id\":\"plainsig\",\"key_version")));
}

// An allowed request on a versioned key that does not parse is audited with the version
// it would have used (the primary).
TEST_F(SmcryptdKeyTrialTest, UnparsedRequestIsAuditedWithThePrimaryVersion) {
  v1::HybridDecryptRequest req;
  req.set_algorithm(v1::ALGORITHM_UNSPECIFIED);
  SetKey(req.mutable_key(), "sm2", 0);
  req.set_ciphertext("x");
  v1::HybridDecryptResponse resp;
  auto ctx = Ctx(5);
  EXPECT_EQ(stub_->HybridDecrypt(ctx.get(), req, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit_).find("\"method\":\"HybridDecrypt\",\"operation\":\"decrypt\","
                                "\"algorithm\":\"\",\"key_source\":\"keyring\","
                                "\"key_id\":\"sm2\",\"key_version\":3,"
                                "\"status\":\"INVALID_ARGUMENT\"") != std::string::npos;
  })) << ReadAll(audit_);
}

// Streams made under v1 of a plain key open with no version named once v2 is added.
TEST_F(SmcryptdKeyTrialTest, StreamsMadeUnderV1OpenAfterV2IsAdded) {
  // Under "plain" (plain.pem: version 1) and "plainsig".
  std::vector<v1::EncryptStreamResponse> sealed;
  {
    auto ctx = Ctx(5);
    auto stream = stub_->EncryptStream(ctx.get());
    bool first = true;
    for (const char* chunk : {"first ", "second ", "third"}) {
      v1::EncryptStreamRequest req;
      if (first) {
        req.mutable_params()->set_algorithm(v1::SM4_GCM);
        SetKey(req.mutable_params()->mutable_key(), "plain", 0);
      }
      first = false;
      req.set_plaintext(chunk);
      ASSERT_TRUE(stream->Write(req));
    }
    stream->WritesDone();
    v1::EncryptStreamResponse r;
    while (stream->Read(&r)) sealed.push_back(r);
    ASSERT_TRUE(stream->Finish().ok());
  }
  std::string hybrid;
  {
    auto ctx = Ctx(5);
    auto stream = stub_->HybridEncryptStream(ctx.get());
    v1::HybridEncryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    SetKey(req.mutable_params()->mutable_key(), "plainsig", 0);
    req.set_plaintext("hybrid stream");
    ASSERT_TRUE(stream->Write(req));
    stream->WritesDone();
    v1::HybridEncryptStreamResponse r;
    while (stream->Read(&r)) hybrid += r.ciphertext();
    ASSERT_TRUE(stream->Finish().ok());
  }

  Files files = files_;
  files.push_back({"plain.v2.pem", PemEncode("SM4 KEY", std::string(16, 'q'))});
  files.push_back({"plainsig.v2.pem", PrivatePem(Algorithm::kSm2)});
  Reload(files, "added: plain.v2, plainsig.v2");

  {
    auto ctx = Ctx(5);
    auto stream = stub_->DecryptStream(ctx.get());
    ASSERT_GE(sealed.size(), 2u);
    for (size_t i = 0; i < sealed.size(); ++i) {
      v1::DecryptStreamRequest req;
      if (i == 0) {
        req.mutable_params()->set_algorithm(v1::SM4_GCM);
        SetKey(req.mutable_params()->mutable_key(), "plain", 0);
        req.mutable_params()->set_nonce(sealed[0].nonce());
      }
      req.set_ciphertext(sealed[i].ciphertext());
      req.set_tag(sealed[i].tag());
      ASSERT_TRUE(stream->Write(req));
    }
    stream->WritesDone();
    std::string plaintext;
    std::vector<uint32_t> versions;
    v1::DecryptStreamResponse r;
    while (stream->Read(&r)) {
      plaintext += r.plaintext();
      versions.push_back(r.key_version());
    }
    grpc::Status s = stream->Finish();
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(plaintext, "first second third");
    ASSERT_FALSE(versions.empty());
    EXPECT_EQ(versions[0], 1u);
    for (size_t i = 1; i < versions.size(); ++i) EXPECT_EQ(versions[i], 0u);
  }
  {
    auto ctx = Ctx(5);
    auto stream = stub_->HybridDecryptStream(ctx.get());
    v1::HybridDecryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    SetKey(req.mutable_params()->mutable_key(), "plainsig", 0);
    req.set_ciphertext(hybrid);
    ASSERT_TRUE(stream->Write(req));
    stream->WritesDone();
    std::string plaintext;
    std::vector<uint32_t> versions;
    v1::HybridDecryptStreamResponse r;
    while (stream->Read(&r)) {
      plaintext += r.plaintext();
      versions.push_back(r.key_version());
    }
    grpc::Status s = stream->Finish();
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(plaintext, "hybrid stream");
    ASSERT_FALSE(versions.empty());
    EXPECT_EQ(versions[0], 1u);
  }
  // The stream's audit line: opened by v1 after trying v2.
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit_).find("\"method\":\"HybridDecryptStream\",\"operation\":\"decrypt\","
                                "\"algorithm\":\"HPKE-SM2-SM3-SM4GCM\","
                                "\"key_source\":\"keyring\",\"key_id\":\"plainsig\","
                                "\"key_version\":1,\"key_versions_tried\":[2,1],"
                                "\"status\":\"OK\"") != std::string::npos;
  })) << ReadAll(audit_);
}

// A decrypting stream still trying versions keeps its pending segment once per version,
// and is charged for each copy against --max_inflight_bytes.
TEST_F(SmcryptdKeyTrialTest, PendingSegmentIsChargedOncePerVersionTried) {
  constexpr double kSegment = 1 << 20;
  auto inflight = [&] {
    return MetricValue(HttpGet(server_.metrics_port(), "/metrics"), "smcrypt_inflight_bytes");
  };
  for (uint32_t named : {1u, 0u}) {
    SCOPED_TRACE(named == 0 ? "no version named: 3 versions tried" : "version 1 named");
    auto ctx = Ctx(60);
    auto stream = stub_->DecryptStream(ctx.get());
    v1::DecryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::SM4_GCM);
    SetKey(req.mutable_params()->mutable_key(), "sm4", named);
    req.mutable_params()->set_nonce(std::string(12, 'n'));
    req.set_ciphertext(std::string(static_cast<size_t>(kSegment), 'c'));
    req.set_tag(std::string(16, 't'));
    ASSERT_TRUE(stream->Write(req));  // kept: a segment opens when the next one arrives
    // Twice the pending segment per copy (it becomes a response and its serialized copy).
    const double want = 2 * kSegment * (named == 0 ? 3 : 1);
    double charged = 0;
    for (int i = 0; i < 100 && charged < want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      charged = inflight();
    }
    EXPECT_GE(charged, want);
    EXPECT_LT(charged, want + 2 * kSegment);
    stream->WritesDone();
    v1::DecryptStreamResponse r;
    while (stream->Read(&r)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    for (int i = 0; i < 100 && charged != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      charged = inflight();
    }
    EXPECT_EQ(charged, 0) << "the charge is released when the stream ends";
  }
}

}  // namespace
}  // namespace smcrypt
