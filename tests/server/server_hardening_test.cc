// Unit tests of smcryptd's hardening pieces without gRPC (label unit): the access policy
// parser and matcher (server/engine/access_policy.h), the audit line format
// (server/engine/audit_log.h) and the keyring's permission checks (server/engine/key_store.h).
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/engine/access_policy.h"
#include "server/engine/audit_log.h"
#include "server/engine/key_store.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt::server {
namespace {

namespace fs = std::filesystem;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

ClientIdentity Client(std::string san, std::string cn = "",
                      std::string subject = "") {
  ClientIdentity id;
  id.authenticated = true;
  if (!san.empty()) id.sans.push_back(std::move(san));
  id.common_name = std::move(cn);
  id.subject = std::move(subject);
  id.peer = "ipv4:127.0.0.1:40000";
  return id;
}

ClientIdentity Anonymous() {
  ClientIdentity id;
  id.peer = "ipv4:127.0.0.1:40001";
  return id;
}

// ---- Glob ------------------------------------------------------------------------------

TEST(GlobMatchTest, Wildcards) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("pay-*", "pay-1"));
  EXPECT_TRUE(GlobMatch("pay-*", "pay-"));
  EXPECT_FALSE(GlobMatch("pay-*", "pa"));
  EXPECT_TRUE(GlobMatch("*.example.com", "a.b.example.com"));
  EXPECT_FALSE(GlobMatch("*.example.com", "example.com"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYY"));
  EXPECT_TRUE(GlobMatch("exact", "exact"));
  EXPECT_FALSE(GlobMatch("exact", "exact2"));
  EXPECT_FALSE(GlobMatch("exact", "exac"));
}

// ---- Policy parsing --------------------------------------------------------------------

TEST(AccessPolicyTest, ParsesRulesCommentsAndSpacesInIdentity) {
  absl::StatusOr<std::unique_ptr<AccessPolicy>> p = AccessPolicy::Parse(
      "# comment\n"
      "\n"
      "allow sign,verify  pay-*,@inline   san:pay.example.com   # trailing comment\n"
      "allow *  *  subject:CN=admin,O=Example Corp\n"
      "\tallow hash * anonymous\n",
      "policy.txt");
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_EQ((*p)->num_rules(), 3u);
  const ClientIdentity admin = Client("", "admin", "CN=admin,O=Example Corp");
  EXPECT_THAT((*p)->Check(admin, AccessOperation::kDecrypt, AccessKey::Id("x")), IsOk());
}

TEST(AccessPolicyTest, ParseErrorsNameFileAndLine) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"allow sign k", "policy:1: expected 'allow <operations> <keys> <identity>'"},
      {"\ndeny sign k *", "policy:2: unknown rule 'deny'"},
      {"allow sing k *", "policy:1: unknown operation 'sing'"},
      {"allow sign k/1 *", "policy:1: bad key pattern 'k/1'"},
      {"allow sign a,,b *", "policy:1: bad key pattern ''"},
      {"allow sign k who:x", "policy:1: unknown identity 'who:x'"},
      {"allow sign k san:", "policy:1: identity pattern must be 1 to 256 characters"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(AccessPolicy::Parse(c.text, "policy").status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.text;
  }
  EXPECT_THAT(AccessPolicy::LoadFile("/nonexistent/policy").status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("--access_policy")));
}

TEST(AccessPolicyTest, EmptyPolicyDeniesEverything) {
  absl::StatusOr<std::unique_ptr<AccessPolicy>> p = AccessPolicy::Parse("# none\n", "p");
  ASSERT_THAT(p.status(), IsOk());
  EXPECT_THAT((*p)->Check(Anonymous(), AccessOperation::kHash, AccessKey::None()),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

// ---- Policy decisions ------------------------------------------------------------------

class AccessPolicyCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<AccessPolicy>> p = AccessPolicy::Parse(
        "allow sign,public_key  pay-*          san:pay.example.com\n"
        "allow encrypt,decrypt  data,@inline   cn:batch-*\n"
        "allow hash,info        *              anonymous\n"
        "allow verify           *              *\n",
        "p");
    ASSERT_THAT(p.status(), IsOk());
    policy_ = *std::move(p);
  }
  std::unique_ptr<AccessPolicy> policy_;
};

TEST(AccessKeyTest, DescribeEchoesOnlyWellFormedKeyIds) {
  EXPECT_EQ(AccessKey::Id("pay-1").Describe(), "key_id 'pay-1'");
  const std::string hostile = "x\x1b]0;pwned\x07\n";
  const std::string d = AccessKey::Id(hostile).Describe();
  EXPECT_EQ(d, "a key_id of 12 bytes that is not 1-128 characters of [A-Za-z0-9._-]");
  EXPECT_EQ(AccessKey::Id(std::string(129, 'a')).Describe().find("aaaa"), std::string::npos);
}

TEST_F(AccessPolicyCheckTest, AllowsWhatARuleNames) {
  const ClientIdentity pay = Client("pay.example.com");
  EXPECT_THAT(policy_->Check(pay, AccessOperation::kSign, AccessKey::Id("pay-1")), IsOk());
  EXPECT_THAT(policy_->Check(pay, AccessOperation::kPublicKey, AccessKey::Id("pay-2")), IsOk());
  const ClientIdentity batch = Client("", "batch-7");
  EXPECT_THAT(policy_->Check(batch, AccessOperation::kDecrypt, AccessKey::Id("data")), IsOk());
  EXPECT_THAT(policy_->Check(batch, AccessOperation::kEncrypt, AccessKey::Inline()), IsOk());
  EXPECT_THAT(policy_->Check(Anonymous(), AccessOperation::kHash, AccessKey::None()), IsOk());
  // `*` identity: every client, with or without a certificate; `*` keys include inline.
  EXPECT_THAT(policy_->Check(Anonymous(), AccessOperation::kVerify, AccessKey::Inline()),
              IsOk());
  EXPECT_THAT(policy_->Check(pay, AccessOperation::kVerify, AccessKey::Id("any")), IsOk());
}

TEST_F(AccessPolicyCheckTest, DeniesTheRestNamingClientOperationAndKey) {
  const ClientIdentity pay = Client("pay.example.com");
  EXPECT_THAT(policy_->Check(pay, AccessOperation::kSign, AccessKey::Id("data")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr("'pay.example.com'"), HasSubstr("may not sign"),
                             HasSubstr("key_id 'data'"))));
  EXPECT_THAT(policy_->Check(pay, AccessOperation::kDecrypt, AccessKey::Id("pay-1")),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("may not decrypt")));
  // Inline keys need @inline (or `*`), not a key_id pattern.
  EXPECT_THAT(policy_->Check(pay, AccessOperation::kSign, AccessKey::Inline()),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("an inline key")));
  // anonymous matches only clients without a certificate; cn: only certificates.
  EXPECT_THAT(policy_->Check(pay, AccessOperation::kHash, AccessKey::None()),
              StatusIs(absl::StatusCode::kPermissionDenied));
  ClientIdentity fake_batch = Anonymous();
  fake_batch.common_name = "batch-1";  // not authenticated: never matches cn:
  EXPECT_THAT(policy_->Check(fake_batch, AccessOperation::kDecrypt, AccessKey::Id("data")),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("'CN=batch-1'")));
  EXPECT_THAT(policy_->Check(Anonymous(), AccessOperation::kSign, AccessKey::Id("pay-1")),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("'anonymous'")));
}

TEST(ClientIdentityTest, NamePrefersSanThenCnThenSubject) {
  EXPECT_EQ(Client("a.example", "cn", "CN=cn").Name(), "a.example");
  EXPECT_EQ(Client("", "cn", "CN=cn,O=x").Name(), "CN=cn");
  EXPECT_EQ(Client("", "", "O=x").Name(), "O=x");
  EXPECT_EQ(Anonymous().Name(), "anonymous");
}

// ---- Audit lines -----------------------------------------------------------------------

TEST(AuditLogTest, LineIsOneJsonObjectWithTheFields) {
  const ClientIdentity client = Client("pay.example.com");
  AuditRecord r;
  r.client = &client;
  r.method = "Sign";
  r.operation = AccessOperation::kSign;
  r.algorithm = "SM2";
  r.key = AccessKey::Id("pay-1");
  r.code = absl::StatusCode::kOk;
  const std::string line = AuditLog::FormatLine(r);
  EXPECT_TRUE(std::regex_match(
      line, std::regex("\\{\"time\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\",\"type\":\"audit\","
                       "\"client\":\"pay.example.com\",\"authenticated\":true,"
                       "\"peer\":\"ipv4:127.0.0.1:40000\",\"method\":\"Sign\","
                       "\"operation\":\"sign\",\"algorithm\":\"SM2\",\"key_source\":\"keyring\","
                       "\"key_id\":\"pay-1\",\"status\":\"OK\"\\}\n")))
      << line;
  r.key = AccessKey::Inline();
  r.code = absl::StatusCode::kPermissionDenied;
  const std::string inline_line = AuditLog::FormatLine(r);
  EXPECT_THAT(inline_line, HasSubstr("\"key_source\":\"inline\",\"status\":\"PERMISSION_DENIED\"}"));
  EXPECT_THAT(inline_line, ::testing::Not(HasSubstr("key_id")));
}

TEST(AuditLogTest, EscapesStringsFromClients) {
  {
    // Quotes, backslashes and control characters escaped; UTF-8 as \uXXXX; a byte that is
    // not UTF-8 as U+FFFD; a long field cut to 256 bytes without splitting a character.
    const std::string long_name = std::string(255, 'x') + "\xe4\xb8\xad";
    AuditRecord r;
    r.method = "a\"b\\c\n\x01\xff\xe4\xb8\xad";
    r.algorithm = long_name;  // AuditRecord holds views
    const std::string line = AuditLog::FormatLine(r);
    EXPECT_THAT(line, HasSubstr("\"method\":\"a\\\"b\\\\c\\n\\u0001\\ufffd\\u4e2d\""));
    EXPECT_THAT(line, HasSubstr("\"algorithm\":\"" + std::string(255, 'x') + "\""));
    EXPECT_TRUE(std::all_of(line.begin(), line.end(),
                            [](char c) { return c == '\n' || (c >= 0x20 && c < 0x7f); }));
  }
  ClientIdentity client = Client("evil\",\"status\":\"OK");
  AuditRecord r;
  r.client = &client;
  r.method = "Sign";
  r.key = AccessKey::Id("k\n{");
  const std::string line = AuditLog::FormatLine(r);
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  EXPECT_THAT(line, HasSubstr("\"client\":\"evil\\\",\\\"status\\\":\\\"OK\""));
}

TEST(AuditLogTest, OpenModes) {
  absl::StatusOr<std::unique_ptr<AuditLog>> none = AuditLog::Open("none");
  ASSERT_THAT(none.status(), IsOk());
  EXPECT_FALSE((*none)->enabled());
  EXPECT_THAT(AuditLog::Open("/nonexistent/dir/audit.log").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit_log")));
  const std::string path =
      (fs::temp_directory_path() / ("smcrypt_audit_" + std::to_string(getpid()))).string();
  {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(path);
    ASSERT_THAT(log.status(), IsOk());
    const ClientIdentity client = Anonymous();
    AuditRecord r;
    r.client = &client;
    r.method = "HybridDecrypt";
    r.operation = AccessOperation::kDecrypt;
    (*log)->Write(r);
    (*log)->Write(r);
  }
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u) << "the audit log is created 0600";
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_THAT(line, HasSubstr("\"client\":\"anonymous\",\"authenticated\":false"));
  }
  EXPECT_EQ(lines, 2);
  fs::remove(path);
}

// ---- Keyring permissions ---------------------------------------------------------------

class KeyPermissionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_perm_XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    chmod(dir_.c_str(), 0700);
    absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
    ASSERT_TRUE(kp.ok());
    private_pem_ = PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
    public_pem_ = PemEncode("PUBLIC KEY", kp->public_key_der);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
  }
  absl::Status Load(bool allow_insecure = false) {
    KeyStoreOptions options;
    options.allow_insecure_permissions = allow_insecure;
    return KeyStore::LoadFromDirectory(dir_, options).status();
  }

  std::string dir_;
  std::string private_pem_;
  std::string public_pem_;
};

TEST_F(KeyPermissionsTest, OwnerAndGroupModesLoad) {
  // 0440 and 0640 are what Kubernetes Secret volumes with fsGroup use.
  Write("a.pem", private_pem_, 0600);
  Write("b.pem", PemEncode("SM4 KEY", std::string(16, 'k')), 0640);
  Write("c.pem", PemEncode("HMAC KEY", "mac"), 0440);
  Write("d.pem", public_pem_, 0644);  // a public key may be world-readable
  EXPECT_THAT(Load(), IsOk());
}

TEST_F(KeyPermissionsTest, WorldReadableSecretIsRefused) {
  for (const auto& [label, text] : {std::pair<std::string, std::string>{"PRIVATE KEY", private_pem_},
                                    {"SM4 KEY", PemEncode("SM4 KEY", std::string(16, 'k'))},
                                    {"AES KEY", PemEncode("AES KEY", std::string(32, 'k'))},
                                    {"HMAC KEY", PemEncode("HMAC KEY", "k")}}) {
    fs::remove_all(dir_ + "/k.pem");
    Write("k.pem", text, 0644);
    EXPECT_THAT(Load(), StatusIs(absl::StatusCode::kPermissionDenied,
                                 AllOf(HasSubstr("k.pem: mode 0644"), HasSubstr("chmod 0600"),
                                       HasSubstr("--allow_insecure_key_permissions"))))
        << label;
    EXPECT_THAT(Load(/*allow_insecure=*/true), IsOk()) << label;
  }
}

TEST_F(KeyPermissionsTest, WorldWritableFileIsRefused) {
  Write("pub.pem", public_pem_, 0666);
  EXPECT_THAT(Load(), StatusIs(absl::StatusCode::kPermissionDenied,
                               AllOf(HasSubstr("pub.pem: mode 0666"),
                                     HasSubstr("replace this public key"))));
  Write("pub.pem", public_pem_, 0602);
  EXPECT_THAT(Load(), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(Load(/*allow_insecure=*/true), IsOk());
}

TEST_F(KeyPermissionsTest, SymlinkTargetModeCounts) {
  // Kubernetes: <key_id>.pem -> ..data/<key_id>.pem; the target's mode is what counts.
  fs::create_directory(dir_ + "/..data");
  chmod((dir_ + "/..data").c_str(), 0755);
  Write("..data/s.pem", private_pem_, 0644);
  fs::create_symlink("..data/s.pem", dir_ + "/s.pem");
  EXPECT_THAT(Load(), StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("mode 0644")));
  chmod((dir_ + "/..data/s.pem").c_str(), 0440);
  EXPECT_THAT(Load(), IsOk());
}

TEST_F(KeyPermissionsTest, WorldWritableDirectoryIsRefused) {
  Write("a.pem", private_pem_, 0600);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  EXPECT_THAT(Load(), StatusIs(absl::StatusCode::kPermissionDenied,
                               AllOf(HasSubstr("--keys_dir"), HasSubstr("mode 0777"),
                                     HasSubstr("add or replace keys"))));
  EXPECT_THAT(Load(/*allow_insecure=*/true), IsOk());
  ASSERT_EQ(chmod(dir_.c_str(), 0750), 0);
  EXPECT_THAT(Load(), IsOk());
}

}  // namespace
}  // namespace smcrypt::server
