// ListKeys, primary versions and GetPublicKey without an algorithm against the real
// smcryptd (label integration): paging across 250 keys, page tokens across a reload and
// bad ones, no secret material in a listing, the audit line of every ListKeys, the
// access policy's list_keys operation, Encrypt and Sign naming no version using a primary
// pinned below the newest, smcrypt_key_version_info across reloads, and a bad primary
// file keeping the previous keyring. Every wait polls with a deadline.
#include <openssl/sha.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "error_details.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "smcrypt/random.h"
#include "smcrypt/registry.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/secret_volume.h"
#include "tests/server/smcryptd_process.h"

namespace smcrypt {
namespace {

using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::ReadAll;
using ::smcrypt::testing::SecretVolume;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::WaitFor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Stub = v1::CryptoService::Stub;
using Files = std::vector<std::pair<std::string, std::string>>;

std::string Sha256(const std::string& data) {
  std::string out(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

smcrypt::rpc::ErrorInfo InfoOf(const grpc::Status& s) {
  std::optional<smcrypt::rpc::ErrorInfo> info = smcrypt::rpc::DecodeErrorInfo(s);
  EXPECT_TRUE(info.has_value()) << s.error_message();
  return info.value_or(smcrypt::rpc::ErrorInfo{});
}

grpc::Status List(Stub* stub, uint32_t page_size, const std::string& token,
                  v1::ListKeysResponse* resp) {
  v1::ListKeysRequest req;
  req.set_page_size(page_size);
  req.set_page_token(token);
  auto ctx = Ctx(10);
  return stub->ListKeys(ctx.get(), req, resp);
}

// The keyring: 250 keys k000..k249 of every kind (SM2 private and public, SM4, AES-256,
// HMAC), and "rot", an SM4 key of versions 1-3 with primary 2 and min_version 2, and
// "srot", an SM2 key of versions 1-2 with primary 1.
struct Keyring {
  Files files;
  std::vector<std::string> secrets;  // every secret byte string in the files
  std::map<std::string, std::string> public_der;  // key_id -> SubjectPublicKeyInfo
  std::string srot_v1_public;
};

std::string Sm2Private(Keyring* k, const std::string& id) {
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
  EXPECT_TRUE(kp.ok()) << kp.status();
  const std::string der(SecretDataAsStringView(kp->private_key_der));
  k->secrets.push_back(der);
  k->public_der[id] = kp->public_key_der;
  return PemEncode("PRIVATE KEY", der);
}

Keyring MakeKeyring() {
  Keyring k;
  for (int i = 0; i < 250; ++i) {
    const std::string id = absl::StrFormat("k%03d", i);
    std::string pem;
    switch (i % 5) {
      case 0:
        pem = Sm2Private(&k, id);
        break;
      case 1: {
        absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
        EXPECT_TRUE(kp.ok());
        k.public_der[id] = kp->public_key_der;
        pem = PemEncode("PUBLIC KEY", kp->public_key_der);
        break;
      }
      default: {
        const std::string secret = RandomString(i % 5 == 2 ? 16 : 32).value();
        k.secrets.push_back(secret);
        const char* type = i % 5 == 2 ? "SM4 KEY" : i % 5 == 3 ? "AES KEY" : "HMAC KEY";
        pem = PemEncode(type, secret);
      }
    }
    k.files.push_back({id + ".pem", pem});
  }
  for (int v = 1; v <= 3; ++v) {
    const std::string secret = RandomString(16).value();
    k.secrets.push_back(secret);
    k.files.push_back({absl::StrCat("rot.v", v, ".pem"), PemEncode("SM4 KEY", secret)});
  }
  k.files.push_back({"rot.primary", "2\n"});
  k.files.push_back({"rot.min_version", "2\n"});
  k.files.push_back({"srot.v1.pem", Sm2Private(&k, "srot")});
  k.srot_v1_public = k.public_der["srot"];
  k.files.push_back({"srot.v2.pem", Sm2Private(&k, "srot")});
  k.files.push_back({"srot.primary", "1"});
  return k;
}

class SmcryptdListKeysTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { keyring_ = new Keyring(MakeKeyring()); }
  static void TearDownTestSuite() { delete keyring_; }

  void SetUp() override {
    audit_ = keys_.dir() + "-audit.log";
    keys_.Publish(keyring_->files);
    started_ = absl::Now();
    ASSERT_TRUE(server_.Start({"--keys_dir=" + keys_.dir(), "--reload_interval=0",
                               "--audit_log=" + audit_}))
        << server_.log();
    stub_ = server_.Stub();
  }
  void TearDown() override { std::remove(audit_.c_str()); }

  // ListAll pages through the keyring `page_size` keys at a time.
  std::vector<v1::KeyInfo> ListAll(uint32_t page_size, int* pages) {
    std::vector<v1::KeyInfo> out;
    std::string token;
    *pages = 0;
    do {
      v1::ListKeysResponse resp;
      grpc::Status s = List(stub_.get(), page_size, token, &resp);
      EXPECT_TRUE(s.ok()) << s.error_message();
      if (!s.ok()) break;
      ++*pages;
      out.insert(out.end(), resp.keys().begin(), resp.keys().end());
      token = resp.next_page_token();
    } while (!token.empty() && *pages < 1000);
    return out;
  }

  static Keyring* keyring_;
  SecretVolume keys_;
  std::string audit_;
  absl::Time started_;
  Smcryptd server_;
  std::unique_ptr<Stub> stub_;
};

Keyring* SmcryptdListKeysTest::keyring_ = nullptr;

TEST_F(SmcryptdListKeysTest, PagesThroughEveryKeyInOrder) {
  std::vector<std::string> want;
  for (int i = 0; i < 250; ++i) want.push_back(absl::StrFormat("k%03d", i));
  want.push_back("rot");
  want.push_back("srot");
  for (uint32_t page_size : {0u, 1u, 7u, 100u, 1000u}) {
    int pages = 0;
    std::vector<v1::KeyInfo> keys = ListAll(page_size, &pages);
    std::vector<std::string> ids;
    for (const v1::KeyInfo& k : keys) ids.push_back(k.key_id());
    EXPECT_EQ(ids, want) << "page_size " << page_size;
    const uint32_t size = page_size == 0 ? 100 : page_size;
    EXPECT_EQ(pages, static_cast<int>((want.size() + size - 1) / size)) << page_size;
  }
  v1::ListKeysResponse first;
  ASSERT_TRUE(List(stub_.get(), 0, "", &first).ok());
  EXPECT_EQ(first.keys_size(), 100);
  const absl::Time loaded = absl::FromUnixMicros(first.keyring_load_time_unix_micros());
  EXPECT_GE(loaded, started_ - absl::Seconds(1));
  EXPECT_LE(loaded, absl::Now());
}

TEST_F(SmcryptdListKeysTest, DescribesFamiliesVersionsPrimaryAndMinimum) {
  int pages = 0;
  std::vector<v1::KeyInfo> keys = ListAll(1000, &pages);
  ASSERT_EQ(keys.size(), 252u);
  const v1::KeyInfo& rot = keys[250];
  ASSERT_EQ(rot.key_id(), "rot");
  EXPECT_EQ(rot.key_family(), "SM4");
  EXPECT_EQ(rot.primary_version(), 2u);
  EXPECT_EQ(rot.min_version(), 2u);
  ASSERT_EQ(rot.versions_size(), 3);
  EXPECT_TRUE(rot.versions(0).retired());
  EXPECT_FALSE(rot.versions(1).retired());
  EXPECT_FALSE(rot.versions(2).has_private_key());
  EXPECT_THAT(rot.algorithms(), ElementsAre(v1::SM4_ECB, v1::SM4_CBC, v1::SM4_CTR, v1::SM4_GCM,
                                            v1::SM4_CCM, v1::SM4_CFB, v1::SM4_OFB));
  for (const v1::KeyVersionInfo& v : rot.versions()) {
    const absl::Time t = absl::FromUnixMicros(v.load_time_unix_micros());
    EXPECT_GE(t, started_ - absl::Seconds(1));
    EXPECT_LE(t, absl::Now());
  }
  const v1::KeyInfo& srot = keys[251];
  EXPECT_EQ(srot.key_family(), "SM2");
  EXPECT_EQ(srot.primary_version(), 1u);
  EXPECT_EQ(srot.min_version(), 1u);
  EXPECT_EQ(srot.versions(0).public_key_sha256(), Sha256(keyring_->srot_v1_public));
  EXPECT_THAT(srot.algorithms(),
              ElementsAre(v1::SM2, v1::HPKE_SM2_SM3_SM4GCM));
  EXPECT_EQ(keys[0].key_family(), "SM2");
  EXPECT_TRUE(keys[0].versions(0).has_private_key());
  EXPECT_FALSE(keys[1].versions(0).has_private_key());
  EXPECT_EQ(keys[3].key_family(), "AES-256");
  EXPECT_EQ(keys[4].key_family(), "HMAC");
}

// A listing describes no secret: symmetric keys have no fingerprint, asymmetric ones the
// SHA-256 of their public key, and no secret byte string appears anywhere in a page.
TEST_F(SmcryptdListKeysTest, NoSecretMaterialInAnyPage) {
  std::string token;
  int symmetric = 0, asymmetric = 0;
  do {
    v1::ListKeysResponse resp;
    ASSERT_TRUE(List(stub_.get(), 60, token, &resp).ok());
    const std::string wire = resp.SerializeAsString();
    for (const std::string& secret : keyring_->secrets) {
      ASSERT_EQ(wire.find(secret), std::string::npos) << "a secret key's bytes are listed";
    }
    for (const v1::KeyInfo& k : resp.keys()) {
      const bool secret_family = k.key_family() == "SM4" || k.key_family() == "AES-256" ||
                                 k.key_family() == "HMAC";
      for (const v1::KeyVersionInfo& v : k.versions()) {
        if (secret_family) {
          EXPECT_TRUE(v.public_key_sha256().empty()) << k.key_id();
          ++symmetric;
        } else if (k.key_id() != "srot") {
          EXPECT_EQ(v.public_key_sha256(), Sha256(keyring_->public_der.at(k.key_id())));
          ++asymmetric;
        }
      }
    }
    token = resp.next_page_token();
  } while (!token.empty());
  EXPECT_EQ(symmetric, 150 + 3);
  EXPECT_EQ(asymmetric, 100);
}

TEST_F(SmcryptdListKeysTest, BadPageSizesAndTokens) {
  v1::ListKeysResponse resp;
  grpc::Status s = List(stub_.get(), 1001, "", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "page_size must be 0 (100) to 1000, got 1001");
  EXPECT_EQ(InfoOf(s).reason, "INVALID_ARGUMENT");
  EXPECT_EQ(InfoOf(s).metadata["field"], "page_size");

  const std::string bad_tokens[] = {
      "x", "k1.", "k1.!!!!", "k2.azAwMA", "k1.azAwMA==",  // padding: not what we make
      absl::StrCat("k1.", absl::WebSafeBase64Escape("..data")),
      absl::StrCat("k1.", absl::WebSafeBase64Escape("k.v2")), std::string(5000, 'k')};
  for (const std::string& token : bad_tokens) {
    s = List(stub_.get(), 10, token, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << token;
    EXPECT_THAT(s.error_message(), HasSubstr("is not a next_page_token of ListKeys")) << token;
    EXPECT_EQ(InfoOf(s).metadata["field"], "page_token") << token;
  }
  // The token of a page ending at k009 is "k1." and the id in web-safe base64.
  v1::ListKeysResponse page;
  ASSERT_TRUE(List(stub_.get(), 10, "", &page).ok());
  EXPECT_EQ(page.next_page_token(), absl::StrCat("k1.", absl::WebSafeBase64Escape("k009")));
}

// A token names the last key of its page: after a reload that removes keys of that page,
// the next page still starts after it.
TEST_F(SmcryptdListKeysTest, TokenSurvivesAReloadThatRemovesKeys) {
  v1::ListKeysResponse page;
  ASSERT_TRUE(List(stub_.get(), 10, "", &page).ok());
  const std::string token = page.next_page_token();
  Files fewer;
  for (const auto& f : keyring_->files) {
    if (f.first != "k009.pem" && f.first != "k005.pem") fewer.push_back(f);
  }
  keys_.Publish(fewer);
  server_.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] {
    return server_.log().find("removed: k005, k009") != std::string::npos;
  })) << server_.log();
  v1::ListKeysResponse next;
  ASSERT_TRUE(List(stub_.get(), 2, token, &next).ok());
  ASSERT_EQ(next.keys_size(), 2);
  EXPECT_EQ(next.keys(0).key_id(), "k010");
  EXPECT_EQ(next.keys(1).key_id(), "k011");
}

// smcrypt_key_version_info has one child per loaded version, rebuilt by each reload, so
// an operator can check that every replica has a version before promoting it.
TEST_F(SmcryptdListKeysTest, MetricsReportEveryVersionAndFollowReloads) {
  std::string m = ::smcrypt::testing::HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_THAT(m, HasSubstr("smcrypt_key_version_info{key_id=\"rot\",state=\"retired\","
                           "version=\"1\"} 1"));
  EXPECT_THAT(m, HasSubstr("smcrypt_key_version_info{key_id=\"rot\",state=\"primary\","
                           "version=\"2\"} 1"));
  EXPECT_THAT(m, HasSubstr("smcrypt_key_version_info{key_id=\"rot\",state=\"retained\","
                           "version=\"3\"} 1"));
  EXPECT_THAT(m, HasSubstr("smcrypt_key_version_info{key_id=\"k249\",state=\"primary\","
                           "version=\"1\"} 1"));
  EXPECT_THAT(m, HasSubstr("smcrypt_keyring_load_timestamp_seconds "));
  EXPECT_THAT(m, ::testing::Not(HasSubstr("smcrypt_keyring_load_timestamp_seconds 0\n")));

  // Promote version 3 of rot, drop version 1 and key k249.
  Files next;
  for (const auto& f : keyring_->files) {
    if (f.first == "rot.primary") {
      next.push_back({"rot.primary", "3"});
    } else if (f.first != "rot.v1.pem" && f.first != "k249.pem") {
      next.push_back(f);
    }
  }
  keys_.Publish(next);
  server_.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] {
    return server_.log().find("changed: rot.primary") != std::string::npos;
  })) << server_.log();
  m = ::smcrypt::testing::HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_THAT(m, HasSubstr("smcrypt_key_version_info{key_id=\"rot\",state=\"retained\","
                           "version=\"2\"} 1"));
  EXPECT_THAT(m, HasSubstr("smcrypt_key_version_info{key_id=\"rot\",state=\"primary\","
                           "version=\"3\"} 1"));
  EXPECT_THAT(m, ::testing::Not(HasSubstr("key_id=\"rot\",state=\"retired\"")));
  EXPECT_THAT(m, ::testing::Not(HasSubstr("key_id=\"k249\"")));
  v1::ListKeysResponse page;
  ASSERT_TRUE(List(stub_.get(), 0, absl::StrCat("k1.", absl::WebSafeBase64Escape("k248")),
                   &page).ok());
  ASSERT_EQ(page.keys_size(), 2);
  EXPECT_EQ(page.keys(0).key_id(), "rot");
  EXPECT_EQ(page.keys(0).primary_version(), 3u);
}

// A primary naming a version the key lacks fails the reload: the replica keeps its
// keyring whole (other changes of the same update included) and keeps listing it.
TEST_F(SmcryptdListKeysTest, BadPrimaryKeepsThePreviousKeyring) {
  Files bad;
  for (const auto& f : keyring_->files) {
    if (f.first == "rot.primary") {
      bad.push_back({"rot.primary", "7"});
    } else if (f.first != "k000.pem") {
      bad.push_back(f);
    }
  }
  keys_.Publish(bad);
  server_.Signal(SIGHUP);
  ASSERT_TRUE(WaitFor([&] {
    return server_.log().find("rot.primary: primary version 7 of key 'rot' is not loaded") !=
           std::string::npos;
  })) << server_.log();
  EXPECT_THAT(server_.log(), HasSubstr("keeping the previous 252 keys"));
  v1::ListKeysResponse page;
  ASSERT_TRUE(List(stub_.get(), 1, "", &page).ok());
  EXPECT_EQ(page.keys(0).key_id(), "k000");
  ASSERT_TRUE(List(stub_.get(), 1, absl::StrCat("k1.", absl::WebSafeBase64Escape("k249")),
                   &page).ok());
  EXPECT_EQ(page.keys(0).key_id(), "rot");
  EXPECT_EQ(page.keys(0).primary_version(), 2u);
  const std::string m = ::smcrypt::testing::HttpGet(server_.metrics_port(), "/metrics");
  EXPECT_THAT(m, HasSubstr("smcrypt_keyring_reloads_total{result=\"failure\"} 1"));
  EXPECT_THAT(m, HasSubstr("smcrypt_key_version_info{key_id=\"rot\",state=\"primary\","
                           "version=\"2\"} 1"));
}

TEST_F(SmcryptdListKeysTest, EveryListKeysIsAudited) {
  v1::ListKeysResponse resp;
  ASSERT_TRUE(List(stub_.get(), 5, "", &resp).ok());
  EXPECT_FALSE(List(stub_.get(), 5, "bad", &resp).ok());
  ASSERT_TRUE(WaitFor([&] {
    const std::string audit = ReadAll(audit_);
    return audit.find("\"method\":\"ListKeys\",\"operation\":\"list_keys\"") !=
               std::string::npos &&
           audit.find("\"status\":\"INVALID_ARGUMENT\"") != std::string::npos;
  })) << ReadAll(audit_);
  const std::string audit = ReadAll(audit_);
  EXPECT_THAT(audit, HasSubstr("\"key_source\":\"none\",\"status\":\"OK\""));
}

// Requests naming no version use the primary, pinned below the newest, and say so.
TEST_F(SmcryptdListKeysTest, EncryptAndSignUseThePrimary) {
  v1::EncryptRequest enc;
  enc.set_algorithm(v1::SM4_GCM);
  enc.mutable_key()->set_key_id("rot");
  enc.set_plaintext("pinned");
  v1::EncryptResponse ct;
  auto ctx = Ctx(5);
  ASSERT_TRUE(stub_->Encrypt(ctx.get(), enc, &ct).ok());
  EXPECT_EQ(ct.key_version(), 2u);
  v1::DecryptRequest dec;
  dec.set_algorithm(v1::SM4_GCM);
  dec.mutable_key()->set_key_id("rot");
  dec.mutable_key()->set_key_version(2);
  dec.set_nonce(ct.nonce());
  dec.set_ciphertext(ct.ciphertext());
  dec.set_tag(ct.tag());
  v1::DecryptResponse pt;
  auto ctx2 = Ctx(5);
  ASSERT_TRUE(stub_->Decrypt(ctx2.get(), dec, &pt).ok());
  EXPECT_EQ(pt.plaintext(), "pinned");

  v1::SignRequest sign;
  sign.set_algorithm(v1::SM2);
  sign.mutable_key()->set_key_id("srot");
  sign.set_data("message");
  v1::SignResponse sig;
  auto ctx3 = Ctx(5);
  ASSERT_TRUE(stub_->Sign(ctx3.get(), sign, &sig).ok());
  EXPECT_EQ(sig.key_version(), 1u);
  // Checked against version 1's public key alone: it was made with version 1.
  absl::StatusOr<std::unique_ptr<PublicKeyVerify>> v1_verify =
      NewPublicKeyVerify(Algorithm::kSm2, keyring_->srot_v1_public);
  ASSERT_TRUE(v1_verify.ok());
  EXPECT_TRUE((*v1_verify)->Verify(sig.signature(), "message").ok());
}

TEST_F(SmcryptdListKeysTest, GetPublicKeyWithoutAlgorithm) {
  v1::GetPublicKeyRequest req;
  req.mutable_key()->set_key_id("k000");
  v1::GetPublicKeyResponse resp;
  auto ctx = Ctx(5);
  ASSERT_TRUE(stub_->GetPublicKey(ctx.get(), req, &resp).ok());
  EXPECT_EQ(resp.public_key_der(), keyring_->public_der.at("k000"));
  EXPECT_EQ(resp.versions_size(), 0);  // a plain key named without a version

  req.mutable_key()->set_key_id("srot");  // versioned: the primary, and every version
  auto ctx2 = Ctx(5);
  ASSERT_TRUE(stub_->GetPublicKey(ctx2.get(), req, &resp).ok());
  EXPECT_EQ(resp.public_key_der(), keyring_->srot_v1_public);
  EXPECT_EQ(resp.versions_size(), 2);

  req.mutable_key()->set_key_id("k002");  // an SM4 key
  auto ctx3 = Ctx(5);
  grpc::Status s = stub_->GetPublicKey(ctx3.get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("key 'k002' is an SM4 key: a secret key, with no "
                                           "public key"));
  EXPECT_EQ(InfoOf(s).reason, "WRONG_KEY_FAMILY");
  EXPECT_EQ(InfoOf(s).metadata["key_family"], "SM4");

  req.mutable_key()->set_key_id("nope");
  auto ctx4 = Ctx(5);
  s = stub_->GetPublicKey(ctx4.get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(InfoOf(s).reason, "KEY_NOT_FOUND");

  req.mutable_key()->set_inline_key(std::string(32, '\x01'));  // inline: needs algorithm
  auto ctx5 = Ctx(5);
  s = stub_->GetPublicKey(ctx5.get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "algorithm is required");
}

// list_keys is an operation of its own: a policy without it denies ListKeys (audited).
TEST(SmcryptdListKeysPolicyTest, ListKeysNeedsItsOperation) {
  SecretVolume dir;
  dir.Publish({{"a.pem", PemEncode("SM4 KEY", std::string(16, 'a'))},
               {"policy.txt", "allow info,encrypt * anonymous\n"}});
  const std::string audit = dir.dir() + "-audit.log";
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--keys_dir=" + dir.dir(), "--access_policy=" + dir.dir() +
                                "/policy.txt", "--audit_log=" + audit}))
      << server.log();
  auto stub = server.Stub();
  v1::ListKeysResponse resp;
  grpc::Status s = List(stub.get(), 0, "", &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(InfoOf(s).reason, "ACCESS_DENIED");
  EXPECT_EQ(InfoOf(s).metadata["operation"], "list_keys");
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit).find("\"method\":\"ListKeys\"") != std::string::npos;
  })) << ReadAll(audit);
  EXPECT_THAT(ReadAll(audit), HasSubstr("\"status\":\"PERMISSION_DENIED\""));
  std::remove(audit.c_str());

  SecretVolume allowed;
  allowed.Publish({{"a.pem", PemEncode("SM4 KEY", std::string(16, 'a'))},
                   {"policy.txt", "allow list_keys * anonymous\n"}});
  Smcryptd server2;
  ASSERT_TRUE(server2.Start({"--keys_dir=" + allowed.dir(), "--access_policy=" +
                                 allowed.dir() + "/policy.txt", "--audit_log=none"}))
      << server2.log();
  auto stub2 = server2.Stub();
  ASSERT_TRUE(List(stub2.get(), 0, "", &resp).ok());
  ASSERT_EQ(resp.keys_size(), 1);
  EXPECT_EQ(resp.keys(0).key_id(), "a");
}

}  // namespace
}  // namespace smcrypt
