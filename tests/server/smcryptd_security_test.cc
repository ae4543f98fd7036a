// Security tests against the real smcryptd (label integration):
//   - key material never appears in the server's log (stderr, audit lines included) nor
//     in any error message returned, across bad requests of every kind that involve keys
//     (wrong family or algorithm, bad key bytes, truncated PEM, decryption failures, in
//     unary calls, batches and streams, keyring and inline keys);
//   - keyring files any user may read (secrets) or write, and a keys directory any user
//     may write, stop start-up unless --allow_insecure_key_permissions;
//   - --access_policy with identities from real mTLS client certificates (made with the
//     openssl command at test time): allowed, denied, no policy; audit lines
//     (--audit_log) present, well-formed and free of key material.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/test_util.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using grpc::StatusCode;
using ::smcrypt::testing::Ctx;
using ::smcrypt::testing::ReadAll;
using ::smcrypt::testing::Smcryptd;
using ::testing::HasSubstr;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "smcrypt_sec_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) const {
    const std::string p = path_ + "/" + name;
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p, std::ios::binary) << text;
    chmod(p.c_str(), mode);
    return p;
  }

 private:
  std::string path_;
};

std::string Der(const smcrypt::SecretData& d) {
  return std::string(smcrypt::SecretDataAsStringView(d));
}

// SecretForms lists the spellings a leaked key would have in text: the raw bytes, hex
// (both cases), base64, and every base64 line of its PEM body.
std::vector<std::string> SecretForms(const std::string& secret, const std::string& pem = "") {
  std::vector<std::string> out = {secret, absl::BytesToHexString(secret),
                                  absl::AsciiStrToUpper(absl::BytesToHexString(secret)),
                                  absl::Base64Escape(secret)};
  for (absl::string_view line : absl::StrSplit(pem, '\n')) {
    if (line.size() >= 16 && line[0] != '-') out.emplace_back(line);
  }
  return out;
}

// ExpectAbsent fails for every secret form found in `text`.
void ExpectAbsent(const std::string& what, const std::string& text,
                  const std::vector<std::vector<std::string>>& secrets) {
  for (size_t k = 0; k < secrets.size(); ++k) {
    for (const std::string& form : secrets[k]) {
      ASSERT_GE(form.size(), 16u);
      EXPECT_EQ(text.find(form), std::string::npos)
          << what << " contains secret " << k << " as '" << absl::CHexEscape(form) << "'";
    }
  }
}

// ---- Secrets never in logs or error messages -------------------------------------------

TEST(SecretsTest, KeysNeverInLogOrErrorMessages) {
  TempDir dir;
  absl::StatusOr<smcrypt::KeyPair> sm2 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kSm2);
  absl::StatusOr<smcrypt::KeyPair> p256 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kEcdsaP256);
  ASSERT_TRUE(sm2.ok() && p256.ok());
  const std::string sm2_der = Der(sm2->private_key_der);
  const std::string sm2_pem = smcrypt::PemEncode("PRIVATE KEY", sm2_der);
  const std::string p256_der = Der(p256->private_key_der);
  const std::string p256_pem = smcrypt::PemEncode("PRIVATE KEY", p256_der);
  const std::string sm4_key = smcrypt::testing::HexToBytes("8f3c2a55e1d04b7a9c6e1f2233445566");
  const std::string sm4_pem = smcrypt::PemEncode("SM4 KEY", sm4_key);
  const std::string hmac_key = "keyring hmac secret 7c1d9e0a5b";
  const std::string hmac_pem = smcrypt::PemEncode("HMAC KEY", hmac_key);
  // Inline secrets: a raw SM2 scalar, its PKCS#8, a symmetric key, an HMAC key.
  const std::string scalar = smcrypt::testing::HexToBytes(
      "5a3e1b7c9d2f4e6a8b0c1d2e3f405162738495a6b7c8d9eafb0c1d2e3f405162");
  absl::StatusOr<smcrypt::Sm2PrivateKey> scalar_key = smcrypt::Sm2PrivateKey::FromScalar(scalar);
  ASSERT_TRUE(scalar_key.ok());
  const std::string scalar_der = Der(smcrypt::Sm2PrivateKeyToPkcs8(*scalar_key));
  const std::string scalar_pem = smcrypt::PemEncode("PRIVATE KEY", scalar_der);
  const std::string inline_sm4 = smcrypt::testing::HexToBytes("00112233445566778899aabbccddeeff");
  const std::string inline_hmac = "inline hmac secret 3e8f7a6b5c";

  dir.Write("keys/signing.pem", sm2_pem);
  dir.Write("keys/ec.pem", p256_pem);
  dir.Write("keys/data.pem", sm4_pem);
  dir.Write("keys/mac.pem", hmac_pem);
  chmod((dir.path() + "/keys").c_str(), 0700);
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--keys_dir=" + dir.path() + "/keys"})) << server.log();
  auto stub = server.Stub();

  std::string errors;  // every message the server returned
  int calls = 0;
  auto note = [&](const std::string& what, const grpc::Status& s) {
    ++calls;
    EXPECT_FALSE(s.ok()) << what << " should fail";
    absl::StrAppend(&errors, what, ": ", s.error_code(), " ", s.error_message(), "\n");
  };
  auto sign = [&](const std::string& what, v1::Algorithm alg, const v1::KeyRef& key) {
    v1::SignRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = key;
    req.set_data("message");
    v1::SignResponse resp;
    auto ctx = Ctx();
    note(what, stub->Sign(ctx.get(), req, &resp));
  };
  auto id = [](const std::string& key_id) {
    v1::KeyRef k;
    k.set_key_id(key_id);
    return k;
  };
  auto inl = [](const std::string& bytes) {
    v1::KeyRef k;
    k.set_inline_key(bytes);
    return k;
  };

  // Wrong family / algorithm for keyring keys.
  sign("sign with an SM4 key", v1::SM2, id("data"));
  sign("sign SM2 key as ECDSA", v1::ECDSA_P256, id("signing"));
  sign("sign P-256 key as SM2", v1::SM2, id("ec"));
  sign("sign with HMAC key", v1::RSA_2048_PSS, id("mac"));
  // Bad inline key bytes.
  sign("truncated PEM", v1::SM2, inl(sm2_pem.substr(0, sm2_pem.size() / 2)));
  sign("PEM, last line cut", v1::SM2, inl(scalar_pem.substr(0, scalar_pem.size() - 30)));
  std::string flipped = scalar_der;
  flipped[flipped.size() / 2] ^= 0x40;
  sign("PKCS#8 with a flipped byte", v1::SM2, inl(flipped));
  sign("PKCS#8 truncated", v1::SM2, inl(scalar_der.substr(0, scalar_der.size() - 3)));
  sign("scalar 31 bytes", v1::SM2, inl(scalar.substr(1)));
  sign("scalar 33 bytes", v1::SM2, inl(scalar + "x"));
  sign("SM2 PKCS#8 as ECDSA", v1::ECDSA_P256, inl(scalar_der));
  sign("SM2 PEM as RSA", v1::RSA_3072_PSS, inl(scalar_pem));
  sign("P-256 key as SM2", v1::SM2, inl(p256_der));
  sign("SM4 key as SM2 scalar", v1::SM2, inl(inline_sm4));
  {
    // Symmetric keys of the wrong size or family.
    for (const auto& [what, alg, key] :
         std::vector<std::tuple<std::string, v1::Algorithm, v1::KeyRef>>{
             {"SM4 key 15 bytes", v1::SM4_GCM, inl(inline_sm4.substr(1))},
             {"SM4 key 17 bytes", v1::SM4_CBC, inl(inline_sm4 + "z")},
             {"HMAC key as AES-256", v1::AES_256_GCM, inl(inline_hmac)},
             {"keyring SM4 key as AES", v1::AES_128_GCM, id("data")},
             {"keyring HMAC key as SM4", v1::SM4_CTR, id("mac")}}) {
      v1::EncryptRequest req;
      req.set_algorithm(alg);
      *req.mutable_key() = key;
      req.set_plaintext("plaintext");
      v1::EncryptResponse resp;
      auto ctx = Ctx();
      note(what, stub->Encrypt(ctx.get(), req, &resp));
    }
  }
  {
    // Authentication failures.
    for (const v1::KeyRef& key : {id("data"), inl(inline_sm4)}) {
      v1::DecryptRequest req;
      req.set_algorithm(v1::SM4_GCM);
      *req.mutable_key() = key;
      req.set_nonce(std::string(12, 'n'));
      req.set_ciphertext("ciphertext bytes");
      req.set_tag(std::string(16, 't'));
      v1::DecryptResponse resp;
      auto ctx = Ctx();
      note("SM4-GCM bad tag", stub->Decrypt(ctx.get(), req, &resp));
      req.set_algorithm(v1::SM4_CBC);
      req.set_nonce(std::string(16, 'i'));
      req.set_ciphertext(std::string(32, 'c'));
      req.clear_tag();
      auto ctx2 = Ctx();
      note("SM4-CBC bad padding", stub->Decrypt(ctx2.get(), req, &resp));
    }
    for (const v1::KeyRef& key : {id("signing"), inl(scalar), inl(scalar_pem)}) {
      v1::PublicKeyDecryptRequest req;
      req.set_algorithm(v1::SM2);
      *req.mutable_key() = key;
      req.set_ciphertext(std::string(120, 'x'));
      v1::PublicKeyDecryptResponse resp;
      auto ctx = Ctx();
      note("SM2 decrypt garbage", stub->PublicKeyDecrypt(ctx.get(), req, &resp));
      v1::HybridDecryptRequest hreq;
      hreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
      *hreq.mutable_key() = key;
      hreq.set_ciphertext(std::string(200, 'h'));
      v1::HybridDecryptResponse hresp;
      auto hctx = Ctx();
      note("HPKE open garbage", stub->HybridDecrypt(hctx.get(), hreq, &hresp));
    }
    v1::HybridDecryptRequest hreq;
    hreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    *hreq.mutable_key() = inl(scalar_pem.substr(0, 70));
    hreq.set_ciphertext(std::string(200, 'h'));
    v1::HybridDecryptResponse hresp;
    auto hctx = Ctx();
    note("HPKE truncated PEM", stub->HybridDecrypt(hctx.get(), hreq, &hresp));
  }
  {
    // HMAC: wrong algorithm for the keyring key and for an inline key.
    v1::HmacRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = inl(inline_hmac);
    req.set_data("data");
    v1::HmacResponse resp;
    auto ctx = Ctx();
    note("HMAC wrong algorithm", stub->Hmac(ctx.get(), req, &resp));
    req.set_algorithm(v1::HMAC_SM3);
    *req.mutable_key() = id("signing");
    auto ctx2 = Ctx();
    note("HMAC with an SM2 key", stub->Hmac(ctx2.get(), req, &resp));
  }
  {
    // GetPublicKey of bad private keys.
    v1::GetPublicKeyRequest req;
    req.set_algorithm(v1::SM2);
    *req.mutable_key() = inl(scalar_der.substr(0, 40));
    v1::GetPublicKeyResponse resp;
    auto ctx = Ctx();
    note("GetPublicKey truncated", stub->GetPublicKey(ctx.get(), req, &resp));
  }
  {
    // Batches: every item bad; the item messages are checked too.
    v1::SignBatchRequest req;
    for (const v1::KeyRef& key : {inl(scalar.substr(2)), inl(sm2_pem.substr(0, 100)), id("data")}) {
      v1::SignRequest* item = req.add_items();
      item->set_algorithm(v1::SM2);
      *item->mutable_key() = key;
      item->set_data("m");
    }
    v1::SignBatchResponse resp;
    auto ctx = Ctx();
    grpc::Status s = stub->SignBatch(ctx.get(), req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    for (const v1::SignBatchResult& r : resp.results()) {
      EXPECT_NE(r.status().code(), 0);
      absl::StrAppend(&errors, "SignBatch item: ", r.status().message(), "\n");
    }
    v1::EncryptBatchRequest ereq;
    for (const v1::KeyRef& key : {inl(inline_sm4.substr(3)), inl(inline_hmac)}) {
      v1::EncryptRequest* item = ereq.add_items();
      item->set_algorithm(v1::SM4_GCM);
      *item->mutable_key() = key;
      item->set_plaintext("p");
    }
    v1::EncryptBatchResponse eresp;
    auto ectx = Ctx();
    s = stub->EncryptBatch(ectx.get(), ereq, &eresp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    for (const v1::EncryptBatchResult& r : eresp.results()) {
      EXPECT_NE(r.status().code(), 0);
      absl::StrAppend(&errors, "EncryptBatch item: ", r.status().message(), "\n");
    }
  }
  {
    // Streams: bad key in params, bad tag, HPKE stream garbage.
    auto ctx = Ctx();
    auto stream = stub->EncryptStream(ctx.get());
    v1::EncryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::SM4_GCM);
    *req.mutable_params()->mutable_key() = inl(inline_sm4.substr(4));
    req.set_plaintext("p");
    stream->Write(req);
    stream->WritesDone();
    v1::EncryptStreamResponse r;
    while (stream->Read(&r)) {
    }
    note("EncryptStream bad key", stream->Finish());

    auto dctx = Ctx();
    auto dstream = stub->DecryptStream(dctx.get());
    v1::DecryptStreamRequest dreq;
    dreq.mutable_params()->set_algorithm(v1::SM4_GCM);
    *dreq.mutable_params()->mutable_key() = inl(inline_sm4);
    dreq.mutable_params()->set_nonce(std::string(12, 'n'));
    dreq.set_ciphertext("segment");
    dreq.set_tag(std::string(16, 't'));
    dstream->Write(dreq);
    dstream->WritesDone();
    v1::DecryptStreamResponse dr;
    while (dstream->Read(&dr)) {
    }
    note("DecryptStream bad tag", dstream->Finish());

    for (const v1::KeyRef& key : {id("signing"), inl(scalar_pem), inl(scalar_der.substr(5))}) {
      auto hctx = Ctx();
      auto hstream = stub->HybridDecryptStream(hctx.get());
      v1::HybridDecryptStreamRequest hreq;
      hreq.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
      *hreq.mutable_params()->mutable_key() = key;
      hreq.set_ciphertext(std::string(300, 'z'));
      hstream->Write(hreq);
      hstream->WritesDone();
      v1::HybridDecryptStreamResponse hr;
      while (hstream->Read(&hr)) {
      }
      note("HybridDecryptStream garbage", hstream->Finish());
    }
  }
  EXPECT_GE(calls, 35);

  server.Signal(SIGTERM);
  EXPECT_EQ(server.WaitExit(), 0);
  const std::string log = server.log();
  // The log holds audit lines of the failed private-key operations (stderr default).
  EXPECT_THAT(log, HasSubstr("\"type\":\"audit\""));
  const std::vector<std::vector<std::string>> secrets = {
      SecretForms(sm2_der, sm2_pem),   SecretForms(p256_der, p256_pem),
      SecretForms(sm4_key, sm4_pem),   SecretForms(hmac_key, hmac_pem),
      SecretForms(scalar, scalar_pem), SecretForms(scalar_der),
      SecretForms(inline_sm4),         SecretForms(inline_hmac)};
  ExpectAbsent("server log", log, secrets);
  ExpectAbsent("returned errors", errors, secrets);
  std::printf("%d failing calls; %zu bytes of error messages and %zu bytes of log checked\n",
              calls, errors.size(), log.size());
}

// ---- Keyring permissions at start ------------------------------------------------------

TEST(KeyPermissionsStartTest, WorldReadableSecretKeyStopsStartUp) {
  TempDir dir;
  chmod(dir.path().c_str(), 0700);
  const std::string path =
      dir.Write("k.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, 'k')), 0644);
  {
    Smcryptd server;
    EXPECT_FALSE(server.Start({"--keys_dir=" + dir.path()}));
    EXPECT_EQ(server.WaitExit(), 1);
    EXPECT_THAT(server.log(), HasSubstr(path + ": mode 0644 lets any user read or replace"));
    EXPECT_THAT(server.log(), HasSubstr("--allow_insecure_key_permissions"));
  }
  {
    Smcryptd server;
    EXPECT_TRUE(server.Start({"--keys_dir=" + dir.path(), "--allow_insecure_key_permissions"}))
        << server.log();
    EXPECT_THAT(server.log(), HasSubstr("W keyring (--allow_insecure_key_permissions)"));
  }
  // Group read (Kubernetes fsGroup, defaultMode 0440) is fine.
  chmod(path.c_str(), 0440);
  Smcryptd server;
  EXPECT_TRUE(server.Start({"--keys_dir=" + dir.path()})) << server.log();
}

TEST(KeyPermissionsStartTest, WorldWritableKeysDirStopsStartUp) {
  TempDir dir;
  dir.Write("k.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, 'k')), 0600);
  chmod(dir.path().c_str(), 0777);
  Smcryptd server;
  EXPECT_FALSE(server.Start({"--keys_dir=" + dir.path()}));
  EXPECT_EQ(server.WaitExit(), 1);
  EXPECT_THAT(server.log(), HasSubstr("mode 0777 lets any user add or replace keys"));
}

// ---- Access policy and audit with mTLS -------------------------------------------------

// Certificates made once with the openssl command: a CA, the server (SAN localhost), client
// A (SAN DNS:client-a.test, CN client-a) and client B (CN client-b, no SAN).
class PolicyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string d = dir_->path();
    const std::string script = absl::StrCat(
        "set -e; cd ", d, "; ",
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
        "-keyout ca.key -out ca.pem -subj /CN=smcrypt-test-ca; ",
        "mk() { openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
        "-keyout $1.key -out $1.csr -subj \"$2\"; printf \"$3\" > $1.ext; "
        "openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-out $1.pem -extfile $1.ext; }; ",
        "mk server /CN=localhost 'subjectAltName=DNS:localhost\\n'; ",
        "mk client-a '/CN=client-a/O=smcrypt test' "
        "'subjectAltName=DNS:client-a.test\\nextendedKeyUsage=clientAuth\\n'; ",
        "mk client-b /CN=client-b 'extendedKeyUsage=clientAuth\\n'; ",
        "chmod 600 *.key");
    ASSERT_EQ(std::system(("bash -c '" + EscapeQuotes(script) + "' >/dev/null 2>&1").c_str()), 0)
        << "openssl could not make the test certificates";
    absl::StatusOr<smcrypt::KeyPair> sm2 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kSm2);
    ASSERT_TRUE(sm2.ok());
    sm2_der_ = new std::string(Der(sm2->private_key_der));
    dir_->Write("keys/pay-sign.pem", smcrypt::PemEncode("PRIVATE KEY", *sm2_der_));
    dir_->Write("keys/data.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, 'D')));
    chmod((d + "/keys").c_str(), 0700);
    dir_->Write("policy.txt",
                "# test policy\n"
                "allow sign,verify,public_key  pay-*         san:client-a.test\n"
                "allow encrypt,decrypt         data,@inline  cn:client-b\n"
                "allow hash,info               *             *\n");
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete sm2_der_;
  }
  static std::string EscapeQuotes(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    return out;
  }

  static std::vector<std::string> TlsFlags() {
    const std::string d = dir_->path();
    return {"--tls_cert=" + d + "/server.pem", "--tls_key=" + d + "/server.key",
            "--tls_client_ca=" + d + "/ca.pem", "--keys_dir=" + d + "/keys"};
  }

  static std::unique_ptr<v1::CryptoService::Stub> Client(Smcryptd& server,
                                                         const std::string& name) {
    const std::string d = dir_->path();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = ReadAll(d + "/ca.pem");
    ssl.pem_private_key = ReadAll(d + "/" + name + ".key");
    ssl.pem_cert_chain = ReadAll(d + "/" + name + ".pem");
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    return v1::CryptoService::NewStub(
        grpc::CreateCustomChannel(server.target(), grpc::SslCredentials(ssl), args));
  }

  static grpc::Status Sign(v1::CryptoService::Stub* stub, const std::string& key_id) {
    v1::SignRequest req;
    req.set_algorithm(v1::SM2);
    req.mutable_key()->set_key_id(key_id);
    req.set_data("message");
    v1::SignResponse resp;
    auto ctx = Ctx();
    return stub->Sign(ctx.get(), req, &resp);
  }
  static grpc::Status Encrypt(v1::CryptoService::Stub* stub, const v1::KeyRef& key) {
    v1::EncryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = key;
    req.set_plaintext("plaintext");
    v1::EncryptResponse resp;
    auto ctx = Ctx();
    return stub->Encrypt(ctx.get(), req, &resp);
  }
  static grpc::Status Hash(v1::CryptoService::Stub* stub) {
    v1::HashRequest req;
    req.set_algorithm(v1::SM3);
    req.set_data("abc");
    v1::HashResponse resp;
    auto ctx = Ctx();
    return stub->Hash(ctx.get(), req, &resp);
  }
  static v1::KeyRef Id(const std::string& id) {
    v1::KeyRef k;
    k.set_key_id(id);
    return k;
  }
  static v1::KeyRef Inline(const std::string& bytes) {
    v1::KeyRef k;
    k.set_inline_key(bytes);
    return k;
  }

  // AuditLines returns the audit lines of `text`, each checked to be one JSON object of
  // the documented shape.
  static std::vector<std::string> AuditLines(const std::string& text) {
    static const std::regex shape(
        "\\{\"time\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z\","
        "\"type\":\"audit\",\"client\":\"[^\"]*\",\"authenticated\":(true|false),"
        "\"peer\":\"[^\"]*\",\"method\":\"[A-Za-z]+\",\"operation\":\"[a-z_]+\","
        "\"algorithm\":\"[A-Z0-9-]*\",\"key_source\":\"(keyring|inline|none)\","
        "(\"key_id\":\"[^\"]*\",)?\"status\":\"[A-Z_]+\"\\}");
    std::vector<std::string> out;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      const size_t at = line.find("{\"time\":");
      if (at == absl::string_view::npos || line.find("\"type\":\"audit\"") == line.npos) continue;
      const std::string json(line.substr(at));
      EXPECT_TRUE(std::regex_match(json, shape)) << json;
      out.push_back(json);
    }
    return out;
  }

  static TempDir* dir_;
  static std::string* sm2_der_;
};
TempDir* PolicyTest::dir_ = nullptr;
std::string* PolicyTest::sm2_der_ = nullptr;

TEST_F(PolicyTest, AllowsAndDeniesByCertificateIdentityAndAudits) {
  const std::string audit = dir_->path() + "/audit.log";
  std::vector<std::string> flags = TlsFlags();
  flags.push_back("--access_policy=" + dir_->path() + "/policy.txt");
  flags.push_back("--audit_log=" + audit);
  Smcryptd server;
  ASSERT_TRUE(server.Start(flags)) << server.log();
  EXPECT_THAT(server.log(), HasSubstr("access policy: 3 rules from"));
  auto a = Client(server, "client-a");
  auto b = Client(server, "client-b");

  // Client A (SAN client-a.test) may sign with pay-*; not encrypt with data.
  EXPECT_TRUE(Sign(a.get(), "pay-sign").ok());
  grpc::Status s = Encrypt(a.get(), Id("data"));
  EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(),
            "access policy: client 'client-a.test' may not encrypt with key_id 'data'");
  s = Encrypt(a.get(), Inline(std::string(16, 'i')));
  EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("may not encrypt with an inline key"));
  // Client B (CN client-b) may encrypt with data and inline keys; not sign.
  EXPECT_TRUE(Encrypt(b.get(), Id("data")).ok());
  EXPECT_TRUE(Encrypt(b.get(), Inline(std::string(16, 'i'))).ok());
  s = Sign(b.get(), "pay-sign");
  EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(),
            "access policy: client 'CN=client-b' may not sign with key_id 'pay-sign'");
  // Both may hash (rule `*`).
  EXPECT_TRUE(Hash(a.get()).ok());
  EXPECT_TRUE(Hash(b.get()).ok());
  // A batch is checked item by item.
  {
    v1::SignBatchRequest req;
    for (const char* key_id : {"pay-sign", "data"}) {
      v1::SignRequest* item = req.add_items();
      item->set_algorithm(v1::SM2);
      item->mutable_key()->set_key_id(key_id);
      item->set_data("m");
    }
    v1::SignBatchResponse resp;
    auto ctx = Ctx();
    ASSERT_TRUE(a->SignBatch(ctx.get(), req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 2);
    EXPECT_EQ(resp.results(0).status().code(), 0);
    EXPECT_EQ(resp.results(1).status().code(), static_cast<int>(StatusCode::PERMISSION_DENIED));
  }
  // Streams are checked at their params.
  {
    auto ctx = Ctx();
    auto stream = a->HybridDecryptStream(ctx.get());
    v1::HybridDecryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    req.mutable_params()->mutable_key()->set_key_id("pay-sign");
    stream->Write(req);
    stream->WritesDone();
    v1::HybridDecryptStreamResponse r;
    while (stream->Read(&r)) {
    }
    s = stream->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED);
    EXPECT_THAT(s.error_message(), HasSubstr("may not decrypt with key_id 'pay-sign'"));
  }
  server.Signal(SIGTERM);
  EXPECT_EQ(server.WaitExit(), 0);

  const std::string text = ReadAll(audit);
  const std::vector<std::string> lines = AuditLines(text);
  // Sign OK (A), Encrypt denied ×2 (A), Encrypt OK ×2 (B: secret-key use, keyring and
  // inline), Sign denied (B), SignBatch OK + denied (A), HybridDecryptStream denied (A).
  ASSERT_EQ(lines.size(), 9u) << text;
  EXPECT_THAT(lines[0], HasSubstr("\"client\":\"client-a.test\",\"authenticated\":true"));
  EXPECT_THAT(lines[0], HasSubstr("\"method\":\"Sign\",\"operation\":\"sign\",\"algorithm\":"
                                  "\"SM2\",\"key_source\":\"keyring\",\"key_id\":\"pay-sign\","
                                  "\"status\":\"OK\"}"));
  EXPECT_THAT(lines[1], HasSubstr("\"method\":\"Encrypt\""));
  EXPECT_THAT(lines[1], HasSubstr("\"status\":\"PERMISSION_DENIED\""));
  EXPECT_THAT(lines[2], HasSubstr("\"key_source\":\"inline\",\"status\":\"PERMISSION_DENIED\""));
  EXPECT_THAT(lines[3], HasSubstr("\"client\":\"CN=client-b\""));
  EXPECT_THAT(lines[3], HasSubstr("\"method\":\"Encrypt\""));
  EXPECT_THAT(lines[3], HasSubstr("\"key_id\":\"data\",\"status\":\"OK\""));
  EXPECT_THAT(lines[4], HasSubstr("\"key_source\":\"inline\",\"status\":\"OK\""));
  EXPECT_THAT(lines[5], HasSubstr("\"client\":\"CN=client-b\""));
  EXPECT_THAT(lines[5], HasSubstr("\"key_id\":\"pay-sign\",\"status\":\"PERMISSION_DENIED\""));
  EXPECT_THAT(lines[8], HasSubstr("\"method\":\"HybridDecryptStream\""));
  // No key material in the audit file.
  ExpectAbsent("audit log", text,
               {SecretForms(*sm2_der_, smcrypt::PemEncode("PRIVATE KEY", *sm2_der_)),
                SecretForms(std::string(16, 'D'))});
}

TEST_F(PolicyTest, WithoutPolicyEverythingIsAllowedAndKeyUseIsAudited) {
  Smcryptd server;
  ASSERT_TRUE(server.Start(TlsFlags())) << server.log();  // audit to stderr (default)
  auto b = Client(server, "client-b");
  EXPECT_TRUE(Sign(b.get(), "pay-sign").ok());
  EXPECT_TRUE(Encrypt(b.get(), Id("data")).ok());
  EXPECT_EQ(Sign(b.get(), "missing").error_code(), StatusCode::NOT_FOUND);
  server.Signal(SIGTERM);
  EXPECT_EQ(server.WaitExit(), 0);
  const std::vector<std::string> lines = AuditLines(server.log());
  ASSERT_EQ(lines.size(), 3u) << server.log();
  EXPECT_THAT(lines[0], HasSubstr("\"client\":\"CN=client-b\",\"authenticated\":true"));
  EXPECT_THAT(lines[0], HasSubstr("\"key_id\":\"pay-sign\",\"status\":\"OK\""));
  EXPECT_THAT(lines[1], HasSubstr("\"method\":\"Encrypt\""));
  EXPECT_THAT(lines[1], HasSubstr("\"key_id\":\"data\",\"status\":\"OK\""));
  EXPECT_THAT(lines[2], HasSubstr("\"key_id\":\"missing\",\"status\":\"NOT_FOUND\""));
}

TEST_F(PolicyTest, WithoutTlsClientsAreAnonymous) {
  const std::string policy = dir_->Write("anon.txt", "allow hash,info * anonymous\n");
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--access_policy=" + policy, "--keys_dir=" + dir_->path() + "/keys",
                            "--audit_log=none"}))
      << server.log();
  auto stub = server.Stub();
  EXPECT_TRUE(Hash(stub.get()).ok());
  grpc::Status s = Sign(stub.get(), "pay-sign");
  EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(s.error_message(),
            "access policy: client 'anonymous' may not sign with key_id 'pay-sign'");
  server.Signal(SIGTERM);
  EXPECT_EQ(server.WaitExit(), 0);
  EXPECT_TRUE(AuditLines(server.log()).empty()) << "--audit_log=none writes nothing";
}

TEST_F(PolicyTest, BadPolicyStopsStartUpWithFileAndLine) {
  const std::string policy =
      dir_->Write("bad.txt", "allow sign pay-* san:a\nallow sgin pay-* san:a\n");
  Smcryptd server;
  EXPECT_FALSE(server.Start({"--access_policy=" + policy}));
  EXPECT_EQ(server.WaitExit(), 1);
  EXPECT_THAT(server.log(), HasSubstr(policy + ":2: unknown operation 'sgin'"));
}

}  // namespace
