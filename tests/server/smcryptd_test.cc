// Integration tests: the real smcryptd binary on a loopback port, called through the
// generated stub (docs/design.md "Tests and CI": label integration). Results are checked
// against OpenSSL; error statuses and their messages are asserted; /metrics is scraped;
// health, TLS and mTLS (certificates made here with the openssl CLI), and SIGTERM with
// an RPC in flight.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "error_details.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.pb.h"
#include "gtest/gtest.h"
#include "smcrypt/cpu.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/test_util.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using ::smcrypt::testing::BytesToHex;
using ::smcrypt::testing::HexToBytes;
using ::smcrypt::testing::OpenSslHmac;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::TestSeed;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::Smcryptd;
using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  // Keyring files must not be world-readable (server/engine/key_store.h, "Permissions").
  std::filesystem::permissions(path, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write);
}

std::string Pem(absl::string_view label, absl::string_view der) {
  std::string b64 = absl::Base64Escape(der);
  std::string out = absl::StrCat("-----BEGIN ", label, "-----\n");
  for (size_t i = 0; i < b64.size(); i += 64) absl::StrAppend(&out, b64.substr(i, 64), "\n");
  return absl::StrCat(out, "-----END ", label, "-----\n");
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "smcryptd_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Handled(absl::string_view method, absl::string_view type, absl::string_view code) {
  return absl::StrCat("grpc_server_handled_total{grpc_code=\"", code, "\",grpc_method=\"", method,
                      "\",grpc_service=\"smcrypt.v1.CryptoService\",grpc_type=\"", type, "\"}");
}

// ---- OpenSSL oracles -------------------------------------------------------------------

std::string OsslDigest(const EVP_MD* md, absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, md, nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string OsslHmac(const EVP_MD* md, absl::string_view key, absl::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(md, key.data(), key.size(), reinterpret_cast<const uint8_t*>(data.data()), data.size(),
       out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string OsslCipher(const EVP_CIPHER* c, absl::string_view key, absl::string_view iv,
                       absl::string_view in, bool pad) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(ctx, c, nullptr, reinterpret_cast<const uint8_t*>(key.data()),
                     iv.empty() ? nullptr : reinterpret_cast<const uint8_t*>(iv.data()));
  EVP_CIPHER_CTX_set_padding(ctx, pad ? 1 : 0);
  std::string out(in.size() + 32, '\0');
  int len = 0, fin = 0;
  EVP_EncryptUpdate(ctx, reinterpret_cast<uint8_t*>(out.data()), &len,
                    reinterpret_cast<const uint8_t*>(in.data()), in.size());
  EVP_EncryptFinal_ex(ctx, reinterpret_cast<uint8_t*>(out.data()) + len, &fin);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(len + fin);
  return out;
}

// OsslGcmSeal returns ciphertext and tag (16 bytes) of AES-128-GCM.
std::pair<std::string, std::string> OsslGcmSeal(absl::string_view key, absl::string_view nonce,
                                                absl::string_view aad, absl::string_view pt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nullptr, nullptr, nullptr);
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, nonce.size(), nullptr);
  EVP_EncryptInit_ex(ctx, nullptr, nullptr, reinterpret_cast<const uint8_t*>(key.data()),
                     reinterpret_cast<const uint8_t*>(nonce.data()));
  int len = 0;
  EVP_EncryptUpdate(ctx, nullptr, &len, reinterpret_cast<const uint8_t*>(aad.data()), aad.size());
  std::string ct(pt.size(), '\0');
  EVP_EncryptUpdate(ctx, reinterpret_cast<uint8_t*>(ct.data()), &len,
                    reinterpret_cast<const uint8_t*>(pt.data()), pt.size());
  EVP_EncryptFinal_ex(ctx, nullptr, &len);
  std::string tag(16, '\0');
  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag.data());
  EVP_CIPHER_CTX_free(ctx);
  return {ct, tag};
}

bool OsslVerify(const EVP_MD* md, absl::string_view spki, absl::string_view msg,
                absl::string_view sig) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(spki.data());
  EVP_PKEY* pkey = d2i_PUBKEY(nullptr, &p, spki.size());
  if (pkey == nullptr) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (md == EVP_sm3()) {
    // SM2 (OpenSSL's SM2(7) pattern): the distinguishing ID goes on the key context.
    EVP_PKEY_CTX* pctx = EVP_PKEY_CTX_new_from_pkey(nullptr, pkey, nullptr);
    EVP_PKEY_CTX_set1_id(pctx, "1234567812345678", 16);
    EVP_MD_CTX_set_pkey_ctx(ctx, pctx);  // ctx does not take ownership
    bool ok = EVP_DigestVerifyInit(ctx, nullptr, md, nullptr, pkey) == 1 &&
              EVP_DigestVerify(ctx, reinterpret_cast<const uint8_t*>(sig.data()), sig.size(),
                               reinterpret_cast<const uint8_t*>(msg.data()), msg.size()) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_CTX_free(pctx);
    EVP_PKEY_free(pkey);
    return ok;
  }
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, md, nullptr, pkey) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const uint8_t*>(sig.data()), sig.size(),
                             reinterpret_cast<const uint8_t*>(msg.data()), msg.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(pkey);
  return ok;
}

std::string OsslDecrypt(absl::string_view pkcs8, absl::string_view ct, bool rsa_oaep) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(pkcs8.data());
  EVP_PKEY* pkey = d2i_AutoPrivateKey(nullptr, &p, pkcs8.size());
  if (pkey == nullptr) return "<bad key>";
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(pkey, nullptr);
  std::string out(ct.size() + 64, '\0');
  size_t len = out.size();
  bool ok = EVP_PKEY_decrypt_init(ctx) == 1;
  if (ok && rsa_oaep) {
    ok = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1 &&
         EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1;
  }
  ok = ok && EVP_PKEY_decrypt(ctx, reinterpret_cast<uint8_t*>(out.data()), &len,
                              reinterpret_cast<const uint8_t*>(ct.data()), ct.size()) == 1;
  EVP_PKEY_CTX_free(ctx);
  EVP_PKEY_free(pkey);
  if (!ok) return "<decrypt failed>";
  out.resize(len);
  return out;
}

// ---- Fixture: one server with a keyring --------------------------------------------------

class SmcryptdTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    keys_ = *dir_ / "keys";
    fs::create_directory(keys_);
    WriteFile(keys_ + "/sm4.pem", Pem("SM4 KEY", HexToBytes("0123456789abcdeffedcba9876543210")));
    WriteFile(keys_ + "/aes.pem", Pem("AES KEY", std::string(16, 'a')));
    WriteFile(keys_ + "/mac.pem", Pem("HMAC KEY", "mac key"));
    ASSERT_EQ(std::system(("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:SM2 -out " +
                           keys_ + "/sm2.pem 2>/dev/null").c_str()), 0);
    ASSERT_EQ(std::system(("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " +
                           keys_ + "/p256.pem 2>/dev/null").c_str()), 0);
    ASSERT_EQ(std::system(("openssl pkey -in " + keys_ + "/p256.pem -pubout -out " + keys_ +
                           "/p256pub.pem 2>/dev/null").c_str()), 0);
    server_ = new Smcryptd();
    ASSERT_TRUE(server_->Start({"--keys_dir=" + keys_})) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }

  std::unique_ptr<v1::CryptoService::Stub> stub_ = server_->Stub();
  static TempDir* dir_;
  static std::string keys_;
  static Smcryptd* server_;
};

TempDir* SmcryptdTest::dir_ = nullptr;
std::string SmcryptdTest::keys_;
Smcryptd* SmcryptdTest::server_ = nullptr;

v1::KeyRef KeyId(const std::string& id) {
  v1::KeyRef k;
  k.set_key_id(id);
  return k;
}
v1::KeyRef Inline(const std::string& bytes) {
  v1::KeyRef k;
  k.set_inline_key(bytes);
  return k;
}

TEST_F(SmcryptdTest, HashMatchesOpenSsl) {
  std::mt19937_64 rng(TestSeed());
  for (size_t len : {0, 3, 64, 1000, 100000}) {
    const std::string data = RandomBytes(rng, len);
    for (auto [alg, md] : {std::pair{v1::SM3, EVP_sm3()}, std::pair{v1::SHA_256, EVP_sha256()}}) {
      grpc::ClientContext ctx;
      v1::HashRequest req;
      req.set_algorithm(alg);
      req.set_data(data);
      v1::HashResponse resp;
      ASSERT_TRUE(stub_->Hash(&ctx, req, &resp).ok());
      EXPECT_EQ(BytesToHex(resp.digest()), BytesToHex(OsslDigest(md, data))) << len;
    }
  }
  // HashStream in uneven chunks.
  const std::string big = RandomBytes(rng, 300000);
  grpc::ClientContext ctx;
  v1::HashStreamResponse resp;
  auto writer = stub_->HashStream(&ctx, &resp);
  for (size_t pos = 0, i = 0; pos < big.size(); ++i) {
    v1::HashStreamRequest req;
    if (i == 0) req.set_algorithm(v1::SM3);
    const size_t n = std::min<size_t>(big.size() - pos, 1 + rng() % 70000);
    req.set_data(big.substr(pos, n));
    pos += n;
    ASSERT_TRUE(writer->Write(req));
  }
  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_EQ(resp.digest(), OsslDigest(EVP_sm3(), big));
  EXPECT_EQ(resp.total_bytes(), big.size());
}

TEST_F(SmcryptdTest, HashBatchHasOneStatusPerItem) {
  grpc::ClientContext ctx;
  v1::HashBatchRequest req;
  std::vector<std::string> data;
  for (int i = 0; i < 20; ++i) {
    data.push_back(std::string(i * 7, static_cast<char>('a' + i)));
    v1::HashRequest* item = req.add_items();
    item->set_algorithm(i % 4 == 3 ? v1::SHA_256 : v1::SM3);
    item->set_data(data.back());
  }
  req.mutable_items(5)->set_algorithm(v1::ALGORITHM_UNSPECIFIED);  // one bad item
  req.mutable_items(6)->set_algorithm(v1::SM4_GCM);                // another
  v1::HashBatchResponse resp;
  ASSERT_TRUE(stub_->HashBatch(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.results_size(), 20);
  for (int i = 0; i < 20; ++i) {
    if (i == 5 || i == 6) {
      EXPECT_EQ(resp.results(i).status().code(), grpc::StatusCode::INVALID_ARGUMENT) << i;
      continue;
    }
    EXPECT_EQ(resp.results(i).status().code(), 0) << i;
    EXPECT_EQ(resp.results(i).digest(),
              OsslDigest(i % 4 == 3 ? EVP_sha256() : EVP_sm3(), data[i])) << i;
  }
}

TEST_F(SmcryptdTest, HmacMatchesOpenSsl) {
  for (auto [alg, md] : {std::pair{v1::HMAC_SM3, EVP_sm3()}, std::pair{v1::HMAC_SHA_256, EVP_sha256()}}) {
    grpc::ClientContext ctx;
    v1::HmacRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = KeyId("mac");
    req.set_data("some data");
    v1::HmacResponse resp;
    ASSERT_TRUE(stub_->Hmac(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.mac(), OsslHmac(md, "mac key", "some data"));
    grpc::ClientContext ctx2;
    req.set_expected_mac(resp.mac());
    v1::HmacResponse check;
    ASSERT_TRUE(stub_->Hmac(&ctx2, req, &check).ok());
    EXPECT_TRUE(check.valid());
    grpc::ClientContext ctx3;
    std::string wrong = resp.mac();
    wrong[3] ^= 1;
    req.set_expected_mac(wrong);
    ASSERT_TRUE(stub_->Hmac(&ctx3, req, &check).ok());
    EXPECT_FALSE(check.valid());
  }
}

// expected_mac may be the tag truncated to its leftmost 16 to 32 bytes (RFC 2104 §5);
// other lengths are INVALID_ARGUMENT, never valid: false.
TEST_F(SmcryptdTest, HmacVerifiesTruncatedTags) {
  auto verify = [&](v1::Algorithm alg, const std::string& expected, v1::HmacResponse* resp) {
    grpc::ClientContext ctx;
    v1::HmacRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = KeyId("mac");
    req.set_data("some data");
    req.set_expected_mac(expected);
    return stub_->Hmac(&ctx, req, resp);
  };
  for (auto [alg, md] : {std::pair{v1::HMAC_SM3, EVP_sm3()},
                         std::pair{v1::HMAC_SHA_256, EVP_sha256()}}) {
    SCOPED_TRACE(v1::Algorithm_Name(alg));
    const std::string tag = OsslHmac(md, "mac key", "some data");
    ASSERT_EQ(tag.size(), 32u);
    v1::HmacResponse resp;
    for (size_t t : {16, 20, 32}) {
      grpc::Status s = verify(alg, tag.substr(0, t), &resp);
      ASSERT_TRUE(s.ok()) << t << ": " << s.error_message();
      EXPECT_TRUE(resp.valid()) << t;
      EXPECT_TRUE(resp.mac().empty());
    }
    std::string wrong = tag.substr(0, 16);
    wrong[15] ^= 0x01;
    grpc::Status s = verify(alg, wrong, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_FALSE(resp.valid());
    for (size_t n : {8, 15, 33}) {
      std::string bad = tag;
      bad.resize(n, 'x');
      s = verify(alg, bad, &resp);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << n;
      EXPECT_THAT(s.error_message(),
                  HasSubstr(absl::StrCat("expected_mac must be 16 to 32 bytes (a tag truncated "
                                         "to its leftmost bytes, RFC 2104 §5), got ",
                                         n)));
    }
  }
}

// An inline_key of zero bytes is set in the KeyRef oneof and is a valid HMAC key (RFC 2104
// §2); a KeyRef with nothing set, or no KeyRef, is INVALID_ARGUMENT.
TEST_F(SmcryptdTest, HmacWithAnEmptyInlineKey) {
  auto hmac = [&](v1::Algorithm alg, const v1::KeyRef* key, const std::string& data,
                  v1::HmacResponse* resp) {
    grpc::ClientContext ctx;
    v1::HmacRequest req;
    req.set_algorithm(alg);
    if (key != nullptr) *req.mutable_key() = *key;
    req.set_data(data);
    return stub_->Hmac(&ctx, req, resp);
  };
  const v1::KeyRef empty = Inline("");
  ASSERT_EQ(empty.ref_case(), v1::KeyRef::kInlineKey);
  v1::HmacResponse resp;
  grpc::Status s = hmac(v1::HMAC_SHA_256, &empty, "", &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // Python: hmac.new(b"", b"", "sha256").hexdigest()
  EXPECT_EQ(BytesToHex(resp.mac()),
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  for (const std::string& data : {std::string(), std::string("abc"), std::string(1000, 'd')}) {
    s = hmac(v1::HMAC_SM3, &empty, data, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(BytesToHex(resp.mac()), BytesToHex(OpenSslHmac("SM3", "", data))) << data.size();
  }
  const v1::KeyRef nothing;
  for (const v1::KeyRef* key : {&nothing, static_cast<const v1::KeyRef*>(nullptr)}) {
    s = hmac(v1::HMAC_SM3, key, "abc", &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("key is required (key_id or inline_key)"));
  }
}

TEST_F(SmcryptdTest, SignVerifyAgainstOpenSsl) {
  // Keyring SM2 key: sign here, verify with OpenSSL (default ID 1234567812345678).
  grpc::ClientContext pctx;
  v1::GetPublicKeyRequest preq;
  preq.set_algorithm(v1::SM2);
  *preq.mutable_key() = KeyId("sm2");
  v1::GetPublicKeyResponse pub;
  ASSERT_TRUE(stub_->GetPublicKey(&pctx, preq, &pub).ok());
  for (auto [alg, key, md] : {std::tuple{v1::SM2, std::string("sm2"), EVP_sm3()},
                             std::tuple{v1::ECDSA_P256, std::string("p256"), EVP_sha256()}}) {
    grpc::ClientContext ctx;
    v1::SignRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = KeyId(key);
    req.set_data("message to sign");
    v1::SignResponse sig;
    ASSERT_TRUE(stub_->Sign(&ctx, req, &sig).ok());
    std::string spki = pub.public_key_der();
    if (alg == v1::ECDSA_P256) {
      grpc::ClientContext c;
      *preq.mutable_key() = KeyId("p256pub");
      preq.set_algorithm(v1::ECDSA_P256);
      v1::GetPublicKeyResponse p;
      ASSERT_TRUE(stub_->GetPublicKey(&c, preq, &p).ok());
      spki = p.public_key_der();
    }
    EXPECT_TRUE(OsslVerify(md, spki, "message to sign", sig.signature()));
    EXPECT_FALSE(OsslVerify(md, spki, "message to sigN", sig.signature()));
    // Verify: right → valid, wrong message → valid:false with OK.
    for (auto [data, want] : {std::pair{"message to sign", true}, std::pair{"other message", false}}) {
      grpc::ClientContext vctx;
      v1::VerifyRequest vreq;
      vreq.set_algorithm(alg);
      *vreq.mutable_key() = alg == v1::SM2 ? KeyId("sm2") : KeyId("p256pub");
      vreq.set_data(data);
      vreq.set_signature(sig.signature());
      v1::VerifyResponse vresp;
      grpc::Status s = stub_->Verify(&vctx, vreq, &vresp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      EXPECT_EQ(vresp.valid(), want);
    }
  }
  // Raw r||s and a custom SM2 user ID round-trip.
  grpc::ClientContext ctx;
  v1::SignRequest req;
  req.set_algorithm(v1::SM2);
  *req.mutable_key() = KeyId("sm2");
  req.set_data("m");
  req.mutable_options()->set_encoding(v1::SIGNATURE_ENCODING_RAW);
  req.mutable_options()->set_user_id("ALICE123@YAHOO.COM");
  v1::SignResponse sig;
  ASSERT_TRUE(stub_->Sign(&ctx, req, &sig).ok());
  EXPECT_EQ(sig.signature().size(), 64u);
}

TEST_F(SmcryptdTest, LongBatchStopsAtItsDeadline) {
  // 65,536 SM2 signatures take several seconds. With a 300 ms deadline the server must
  // stop between items: the bytes it signs (1 per item) stop growing soon after the
  // deadline, far short of the whole batch. (Which status the server records depends on
  // whether the deadline or the resulting cancellation is seen first, so it is not
  // asserted here.)
  const std::string signed_bytes =
      "smcrypt_bytes_processed_total{algorithm=\"SM2\",operation=\"sign\"}";
  auto read = [&] {
    return std::max(0.0, MetricValue(HttpGet(server_->metrics_port(), "/metrics"), signed_bytes));
  };
  const double before = read();
  v1::SignBatchRequest req;
  for (int i = 0; i < 65536; ++i) {
    v1::SignRequest* item = req.add_items();
    item->set_algorithm(v1::SM2);
    *item->mutable_key() = KeyId("sm2");
    item->set_data("m");
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  v1::SignBatchResponse resp;
  EXPECT_EQ(stub_->SignBatch(&ctx, req, &resp).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const double settled = read();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const double later = read();
  EXPECT_EQ(later, settled) << "the batch is still running after its deadline";
  EXPECT_LT(later - before, 65536) << "the whole batch ran";
}

TEST_F(SmcryptdTest, SignAndVerifyBatches) {
  grpc::ClientContext ctx;
  v1::SignBatchRequest req;
  for (int i = 0; i < 4; ++i) {
    v1::SignRequest* item = req.add_items();
    item->set_algorithm(v1::SM2);
    *item->mutable_key() = KeyId(i == 2 ? "missing" : "sm2");
    item->set_data(absl::StrCat("item ", i));
  }
  v1::SignBatchResponse resp;
  ASSERT_TRUE(stub_->SignBatch(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.results_size(), 4);
  EXPECT_EQ(resp.results(2).status().code(), grpc::StatusCode::NOT_FOUND);
  grpc::ClientContext vctx;
  v1::VerifyBatchRequest vreq;
  for (int i = 0; i < 4; ++i) {
    if (i == 2) continue;
    EXPECT_EQ(resp.results(i).status().code(), 0);
    v1::VerifyRequest* item = vreq.add_items();
    item->set_algorithm(v1::SM2);
    *item->mutable_key() = KeyId("sm2");
    item->set_data(absl::StrCat("item ", i == 3 ? 0 : i));  // item 3 verified over the wrong data
    item->set_signature(resp.results(i).signature());
  }
  v1::VerifyRequest* bad = vreq.add_items();
  bad->set_algorithm(v1::SM2);
  *bad->mutable_key() = KeyId("sm2");
  bad->set_signature("\x30\x02\x01");  // malformed DER
  v1::VerifyBatchResponse vresp;
  ASSERT_TRUE(stub_->VerifyBatch(&vctx, vreq, &vresp).ok());
  ASSERT_EQ(vresp.results_size(), 4);
  EXPECT_TRUE(vresp.results(0).valid());
  EXPECT_TRUE(vresp.results(1).valid());
  EXPECT_EQ(vresp.results(2).status().code(), 0);
  EXPECT_FALSE(vresp.results(2).valid());
  EXPECT_EQ(vresp.results(3).status().code(), grpc::StatusCode::INVALID_ARGUMENT);

  // 300 SM2 items (more than one 256-item chunk; the multi-buffer path where the CPU has
  // it): the keyring key and three inline keys, user IDs on some, every 11th key unknown.
  // Each signature verifies through the unary Verify (the single-operation path) and
  // through VerifyBatch, and a tampered copy of each is invalid.
  std::vector<v1::GenerateKeyPairResponse> kps(3);
  for (auto& kp : kps) {
    grpc::ClientContext gctx;
    v1::GenerateKeyPairRequest greq;
    greq.set_algorithm(v1::SM2);
    ASSERT_TRUE(stub_->GenerateKeyPair(&gctx, greq, &kp).ok());
  }
  auto key_of = [&](int i, bool pub) {
    if (i % 4 == 0) return KeyId("sm2");
    const v1::GenerateKeyPairResponse& kp = kps[i % 3];
    return Inline(pub ? kp.public_key_der() : kp.private_key_der());
  };
  grpc::ClientContext bctx;
  v1::SignBatchRequest breq;
  for (int i = 0; i < 300; ++i) {
    v1::SignRequest* item = breq.add_items();
    item->set_algorithm(v1::SM2);
    *item->mutable_key() = i % 11 == 10 ? KeyId("missing") : key_of(i, false);
    item->set_data(absl::StrCat("batch item ", i));
    if (i % 5 == 0) item->mutable_options()->set_user_id(absl::StrCat("user-", i));
  }
  v1::SignBatchResponse bresp;
  ASSERT_TRUE(stub_->SignBatch(&bctx, breq, &bresp).ok());
  ASSERT_EQ(bresp.results_size(), 300);
  grpc::ClientContext bvctx;
  v1::VerifyBatchRequest bvreq;
  for (int i = 0; i < 300; ++i) {
    if (i % 11 == 10) {
      EXPECT_EQ(bresp.results(i).status().code(), grpc::StatusCode::NOT_FOUND) << "item " << i;
      continue;
    }
    ASSERT_EQ(bresp.results(i).status().code(), 0) << "item " << i;
    for (bool tamper : {false, true}) {
      v1::VerifyRequest v;
      v.set_algorithm(v1::SM2);
      *v.mutable_key() = key_of(i, true);
      v.set_data(breq.items(i).data() + (tamper ? "!" : ""));
      if (breq.items(i).options().has_user_id()) *v.mutable_options() = breq.items(i).options();
      v.set_signature(bresp.results(i).signature());
      *bvreq.add_items() = v;
      if (i % 3 == 0) {  // the unary path on a third of them
        grpc::ClientContext uctx;
        v1::VerifyResponse u;
        ASSERT_TRUE(stub_->Verify(&uctx, v, &u).ok());
        EXPECT_EQ(u.valid(), !tamper) << "item " << i;
      }
    }
  }
  v1::VerifyBatchResponse bvresp;
  ASSERT_TRUE(stub_->VerifyBatch(&bvctx, bvreq, &bvresp).ok());
  ASSERT_EQ(bvresp.results_size(), bvreq.items_size());
  for (int j = 0; j < bvresp.results_size(); ++j) {
    EXPECT_EQ(bvresp.results(j).status().code(), 0) << "verify item " << j;
    EXPECT_EQ(bvresp.results(j).valid(), j % 2 == 0) << "verify item " << j;
  }
}

TEST_F(SmcryptdTest, SymmetricAgainstOpenSsl) {
  std::mt19937_64 rng(TestSeed());
  const std::string sm4_key = HexToBytes("0123456789abcdeffedcba9876543210");
  const std::string pt = RandomBytes(rng, 1000);
  // SM4-CBC with a drawn IV, PKCS#7.
  {
    grpc::ClientContext ctx;
    v1::EncryptRequest req;
    req.set_algorithm(v1::SM4_CBC);
    *req.mutable_key() = KeyId("sm4");
    req.set_plaintext(pt);
    v1::EncryptResponse resp;
    ASSERT_TRUE(stub_->Encrypt(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.nonce().size(), 16u);
    EXPECT_EQ(resp.ciphertext(), OsslCipher(EVP_sm4_cbc(), sm4_key, resp.nonce(), pt, true));
    EXPECT_TRUE(resp.tag().empty());
    grpc::ClientContext dctx;
    v1::DecryptRequest dreq;
    dreq.set_algorithm(v1::SM4_CBC);
    *dreq.mutable_key() = Inline(sm4_key);
    dreq.set_nonce(resp.nonce());
    dreq.set_ciphertext(resp.ciphertext());
    v1::DecryptResponse dresp;
    ASSERT_TRUE(stub_->Decrypt(&dctx, dreq, &dresp).ok());
    EXPECT_EQ(dresp.plaintext(), pt);
  }
  // AES-128-GCM with a given nonce and aad; tag separate.
  {
    grpc::ClientContext ctx;
    v1::EncryptRequest req;
    req.set_algorithm(v1::AES_128_GCM);
    *req.mutable_key() = KeyId("aes");
    req.set_plaintext(pt);
    req.set_nonce(std::string(12, 'n'));
    req.set_aad("aad");
    v1::EncryptResponse resp;
    ASSERT_TRUE(stub_->Encrypt(&ctx, req, &resp).ok());
    auto [ct, tag] = OsslGcmSeal(std::string(16, 'a'), std::string(12, 'n'), "aad", pt);
    EXPECT_EQ(resp.ciphertext(), ct);
    EXPECT_EQ(resp.tag(), tag);
    // A flipped tag bit: one generic INVALID_ARGUMENT "decryption failed".
    grpc::ClientContext dctx;
    v1::DecryptRequest dreq;
    dreq.set_algorithm(v1::AES_128_GCM);
    *dreq.mutable_key() = KeyId("aes");
    dreq.set_nonce(resp.nonce());
    dreq.set_ciphertext(resp.ciphertext());
    std::string bad_tag = resp.tag();
    bad_tag[0] ^= 1;
    dreq.set_tag(bad_tag);
    dreq.set_aad("aad");
    v1::DecryptResponse dresp;
    grpc::Status s = stub_->Decrypt(&dctx, dreq, &dresp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "decryption failed");
  }
  // SM4-GCM: RFC 8998 A.1 through the service.
  {
    grpc::ClientContext ctx;
    v1::EncryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = KeyId("sm4");
    req.set_nonce(HexToBytes("00001234567800000000ABCD"));
    req.set_aad(HexToBytes("FEEDFACEDEADBEEFFEEDFACEDEADBEEFABADDAD2"));
    req.set_plaintext(HexToBytes(
        "AAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBCCCCCCCCCCCCCCCCDDDDDDDDDDDDDDDD"
        "EEEEEEEEEEEEEEEEFFFFFFFFFFFFFFFFEEEEEEEEEEEEEEEEAAAAAAAAAAAAAAAA"));
    v1::EncryptResponse resp;
    ASSERT_TRUE(stub_->Encrypt(&ctx, req, &resp).ok());
    EXPECT_EQ(BytesToHex(resp.tag()), "83de3541e4c2b58177e065a9bf7b62ec");
  }
  // EncryptBatch: one bad item (wrong key size) does not fail the batch.
  {
    grpc::ClientContext ctx;
    v1::EncryptBatchRequest req;
    for (int i = 0; i < 3; ++i) {
      v1::EncryptRequest* item = req.add_items();
      item->set_algorithm(v1::SM4_ECB);
      *item->mutable_key() = i == 1 ? Inline("short") : Inline(sm4_key);
      item->set_plaintext(pt.substr(0, 32));
      item->set_padding(v1::PADDING_NONE);
    }
    v1::EncryptBatchResponse resp;
    ASSERT_TRUE(stub_->EncryptBatch(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 3);
    EXPECT_EQ(resp.results(1).status().code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(resp.results(0).ciphertext(),
              OsslCipher(EVP_sm4_ecb(), sm4_key, "", pt.substr(0, 32), false));
    EXPECT_EQ(resp.results(2).ciphertext(), resp.results(0).ciphertext());
  }
  // EncryptBatch of 300 SM4-CBC items (more than one 256-item chunk; the multi-buffer
  // path): keyring and inline keys, IVs given and drawn, every 7th item bad, an AES item
  // among them; each good item equals OpenSSL under the returned IV, in order.
  {
    std::mt19937_64 rng(TestSeed());
    grpc::ClientContext ctx;
    v1::EncryptBatchRequest req;
    std::vector<std::string> keys, pts;
    for (int i = 0; i < 300; ++i) {
      v1::EncryptRequest* item = req.add_items();
      item->set_algorithm(i == 100 ? v1::AES_128_CBC : v1::SM4_CBC);
      keys.push_back(i % 3 == 0 ? sm4_key : RandomBytes(rng, 16));
      *item->mutable_key() = i % 3 == 0 ? KeyId("sm4") : Inline(keys.back());
      if (i % 7 == 6) *item->mutable_key() = Inline("short");
      if (i % 2 == 0) item->set_nonce(RandomBytes(rng, 16));
      pts.push_back(RandomBytes(rng, rng() % 200));
      item->set_plaintext(pts.back());
    }
    v1::EncryptBatchResponse resp;
    ASSERT_TRUE(stub_->EncryptBatch(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 300);
    for (int i = 0; i < 300; ++i) {
      const v1::EncryptBatchResult& r = resp.results(i);
      if (i % 7 == 6) {
        EXPECT_EQ(r.status().code(), grpc::StatusCode::INVALID_ARGUMENT) << "item " << i;
        continue;
      }
      ASSERT_EQ(r.status().code(), grpc::StatusCode::OK) << "item " << i << ": "
                                                         << r.status().message();
      if (i % 2 == 0) EXPECT_EQ(r.nonce(), req.items(i).nonce()) << "item " << i;
      ASSERT_EQ(r.nonce().size(), 16u) << "item " << i;
      const EVP_CIPHER* c = i == 100 ? EVP_aes_128_cbc() : EVP_sm4_cbc();
      EXPECT_EQ(BytesToHex(r.ciphertext()), BytesToHex(OsslCipher(c, keys[i], r.nonce(), pts[i], true)))
          << "item " << i;
    }
  }
}

TEST_F(SmcryptdTest, EncryptAndDecryptStreams) {
  std::mt19937_64 rng(TestSeed());
  const std::string sm4_key = HexToBytes("0123456789abcdeffedcba9876543210");
  const std::string data = RandomBytes(rng, 200000);
  for (v1::Algorithm alg : {v1::SM4_CTR, v1::SM4_CBC, v1::SM4_GCM}) {
    grpc::ClientContext ctx;
    auto stream = stub_->EncryptStream(&ctx);
    v1::EncryptStreamRequest first;
    first.mutable_params()->set_algorithm(alg);
    *first.mutable_params()->mutable_key() = KeyId("sm4");
    ASSERT_TRUE(stream->Write(first));
    v1::EncryptStreamResponse resp;
    ASSERT_TRUE(stream->Read(&resp));
    const std::string nonce = resp.nonce();
    ASSERT_EQ(nonce.size(), alg == v1::SM4_GCM ? 12u : 16u);
    std::vector<v1::EncryptStreamResponse> outs;
    for (size_t pos = 0; pos < data.size();) {
      const size_t n = std::min<size_t>(data.size() - pos, 1 + rng() % 50000);
      v1::EncryptStreamRequest req;
      req.set_plaintext(data.substr(pos, n));
      pos += n;
      ASSERT_TRUE(stream->Write(req));
    }
    stream->WritesDone();
    while (stream->Read(&resp)) outs.push_back(resp);
    grpc::Status s = stream->Finish();
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_FALSE(outs.empty());
    EXPECT_TRUE(outs.back().last());
    if (alg != v1::SM4_GCM) {
      std::string ct;
      for (const auto& o : outs) ct += o.ciphertext();
      EXPECT_EQ(ct, OsslCipher(alg == v1::SM4_CTR ? EVP_sm4_ctr() : EVP_sm4_cbc(), sm4_key, nonce,
                               data, true))
          << v1::Algorithm_Name(alg);
    }
    // Decrypt the stream back; for GCM also with one segment tampered.
    for (bool tamper : {false, true}) {
      if (tamper && alg != v1::SM4_GCM) continue;
      grpc::ClientContext dctx;
      auto dstream = stub_->DecryptStream(&dctx);
      v1::DecryptStreamRequest dfirst;
      dfirst.mutable_params()->set_algorithm(alg);
      *dfirst.mutable_params()->mutable_key() = Inline(sm4_key);
      dfirst.mutable_params()->set_nonce(nonce);
      ASSERT_TRUE(dstream->Write(dfirst));
      std::thread writer([&] {
        for (size_t i = 0; i < outs.size(); ++i) {
          v1::DecryptStreamRequest r;
          r.set_ciphertext(outs[i].ciphertext());
          r.set_tag(outs[i].tag());
          if (tamper && i == outs.size() - 1) r.mutable_tag()->at(0) ^= 1;
          if (!dstream->Write(r)) break;
        }
        dstream->WritesDone();
      });
      std::string back;
      v1::DecryptStreamResponse d;
      while (dstream->Read(&d)) back += d.plaintext();
      writer.join();
      grpc::Status ds = dstream->Finish();
      if (tamper) {
        EXPECT_EQ(ds.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        EXPECT_EQ(ds.error_message(), "decryption failed");
      } else {
        ASSERT_TRUE(ds.ok()) << ds.error_message();
        EXPECT_EQ(back, data) << v1::Algorithm_Name(alg);
      }
    }
  }
}

TEST_F(SmcryptdTest, PublicKeyEncryptionAgainstOpenSsl) {
  for (v1::Algorithm alg : {v1::SM2, v1::RSA_2048_OAEP}) {
    grpc::ClientContext gctx;
    v1::GenerateKeyPairRequest greq;
    greq.set_algorithm(alg);
    v1::GenerateKeyPairResponse kp;
    ASSERT_TRUE(stub_->GenerateKeyPair(&gctx, greq, &kp).ok());
    ASSERT_FALSE(kp.private_key_der().empty());
    EXPECT_NE(kp.public_key_pem().find("BEGIN PUBLIC KEY"), std::string::npos);
    grpc::ClientContext ctx;
    v1::PublicKeyEncryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = Inline(kp.public_key_der());
    req.set_plaintext("secret message");
    if (alg == v1::SM2) req.set_sm2_format(v1::SM2_CIPHERTEXT_FORMAT_DER);  // what OpenSSL reads
    v1::PublicKeyEncryptResponse resp;
    grpc::Status s = stub_->PublicKeyEncrypt(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(OsslDecrypt(kp.private_key_der(), resp.ciphertext(), alg != v1::SM2),
              "secret message");
    grpc::ClientContext dctx;
    v1::PublicKeyDecryptRequest dreq;
    dreq.set_algorithm(alg);
    *dreq.mutable_key() = Inline(kp.private_key_der());
    dreq.set_ciphertext(resp.ciphertext());
    dreq.set_sm2_format(req.sm2_format());
    v1::PublicKeyDecryptResponse dresp;
    ASSERT_TRUE(stub_->PublicKeyDecrypt(&dctx, dreq, &dresp).ok());
    EXPECT_EQ(dresp.plaintext(), "secret message");
  }
}

// A DER SM2Cipher whose x INTEGER has a needless leading 00 is not DER: INVALID_ARGUMENT
// from PublicKeyDecrypt, while the DER the server wrote decrypts.
TEST_F(SmcryptdTest, PublicKeyDecryptReadsSm2CipherAsStrictDer) {
  grpc::ClientContext ectx;
  v1::PublicKeyEncryptRequest ereq;
  ereq.set_algorithm(v1::SM2);
  *ereq.mutable_key() = KeyId("sm2");
  ereq.set_plaintext("secret");
  ereq.set_sm2_format(v1::SM2_CIPHERTEXT_FORMAT_DER);
  v1::PublicKeyEncryptResponse eresp;
  ASSERT_TRUE(stub_->PublicKeyEncrypt(&ectx, ereq, &eresp).ok());
  const std::string& der = eresp.ciphertext();
  // SEQUENCE (short-form length) { INTEGER x, ... }: insert 00 before x's contents.
  ASSERT_EQ(der[0], '\x30');
  ASSERT_LT(static_cast<uint8_t>(der[1]), 0x7f);
  ASSERT_EQ(der[2], '\x02');
  std::string bad = der;
  bad[1] = static_cast<char>(der[1] + 1);
  bad[3] = static_cast<char>(der[3] + 1);
  bad.insert(4, 1, '\0');
  auto decrypt = [&](const std::string& ct, v1::PublicKeyDecryptResponse* resp) {
    grpc::ClientContext ctx;
    v1::PublicKeyDecryptRequest req;
    req.set_algorithm(v1::SM2);
    *req.mutable_key() = KeyId("sm2");
    req.set_ciphertext(ct);
    req.set_sm2_format(v1::SM2_CIPHERTEXT_FORMAT_DER);
    return stub_->PublicKeyDecrypt(&ctx, req, resp);
  };
  v1::PublicKeyDecryptResponse resp;
  grpc::Status s = decrypt(der, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.plaintext(), "secret");
  s = decrypt(bad, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("SM2Cipher C1 x: DER: non-minimal INTEGER"));
}

// Error messages name what the caller sent: the inline key's field, its accepted forms and
// size; a malformed C1 as C1; and print limits readably.
TEST_F(SmcryptdTest, ErrorsNameWhatTheCallerSent) {
  grpc::ClientContext vctx;
  v1::VerifyRequest vreq;
  vreq.set_algorithm(v1::SM2);
  *vreq.mutable_key() = Inline(std::string(1, '\0'));
  vreq.set_data("m");
  vreq.set_signature(std::string(64, 's'));
  v1::VerifyResponse vresp;
  grpc::Status s = stub_->Verify(&vctx, vreq, &vresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "key.inline_key: expected an SM2 public key as SubjectPublicKeyInfo DER or PEM, or a "
            "65-byte uncompressed / 33-byte compressed point; got 1 byte (DER: expected "
            "SEQUENCE, got tag 0x00)");
  grpc::ClientContext sctx;
  v1::SignRequest sreq;
  sreq.set_algorithm(v1::ECDSA_P256);
  *sreq.mutable_key() = Inline("k");
  sreq.set_data("m");
  v1::SignResponse sresp;
  s = stub_->Sign(&sctx, sreq, &sresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("key.inline_key: expected an EC P-256 private key as PKCS#8 DER or PEM, "
                        "or a 32-byte scalar; got 1 byte"));
  // C1 with its last byte changed is off the curve.
  grpc::ClientContext ectx;
  v1::PublicKeyEncryptRequest ereq;
  ereq.set_algorithm(v1::SM2);
  *ereq.mutable_key() = KeyId("sm2");
  ereq.set_plaintext("secret");
  v1::PublicKeyEncryptResponse eresp;
  ASSERT_TRUE(stub_->PublicKeyEncrypt(&ectx, ereq, &eresp).ok());
  std::string ct = eresp.ciphertext();
  ct[64] ^= 0x01;
  grpc::ClientContext dctx;
  v1::PublicKeyDecryptRequest dreq;
  dreq.set_algorithm(v1::SM2);
  *dreq.mutable_key() = KeyId("sm2");
  dreq.set_ciphertext(ct);
  v1::PublicKeyDecryptResponse dresp;
  s = stub_->PublicKeyDecrypt(&dctx, dreq, &dresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "SM2 ciphertext: C1: point not on the curve");
  // A limit too large to read in decimal is a power of two.
  grpc::ClientContext gctx;
  v1::EncryptRequest greq;
  greq.set_algorithm(v1::SM4_GCM);
  *greq.mutable_key() = KeyId("sm4");
  greq.set_nonce("");
  greq.set_plaintext("p");
  v1::EncryptResponse gresp;
  s = stub_->Encrypt(&gctx, greq, &gresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "SM4-GCM nonce size must be 1 to 2^61 - 1 bytes (12 recommended), got 0");
}

TEST_F(SmcryptdTest, RandomInfoAndHybrid) {
  grpc::ClientContext ctx;
  v1::GenerateRandomRequest req;
  req.set_length(1000);
  v1::GenerateRandomResponse resp;
  ASSERT_TRUE(stub_->GenerateRandom(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.data().size(), 1000u);
  grpc::ClientContext ictx;
  v1::GetServerInfoRequest ireq;
  ireq.set_run_self_tests(true);
  v1::GetServerInfoResponse info;
  ASSERT_TRUE(stub_->GetServerInfo(&ictx, ireq, &info).ok());
  EXPECT_TRUE(info.self_tests_passed());
  EXPECT_GE(info.self_tests_size(), 20);
  EXPECT_EQ(info.kernels_size(), 3);
  // The server runs on this machine, so it reports the CPU this test reads.
  EXPECT_EQ(info.cpu(), smcrypt::FormatCpuIdentity(smcrypt::GetCpuIdentity()));
  EXPECT_EQ(info.max_inflight(), 65536u);
  EXPECT_EQ(info.max_message_bytes(), 4u << 20);
  EXPECT_EQ(info.keyring_size(), 6u);
  // Both HPKE suites are served and listed.
  EXPECT_THAT(std::vector<std::string>(info.algorithms().begin(), info.algorithms().end()),
              ::testing::IsSupersetOf({"HPKE-SM2-SM3-SM4GCM", "HPKE-P256-SHA256-AES128GCM"}));
  // Hybrid RPCs check their requests (full coverage: smcryptd_hybrid_test).
  grpc::ClientContext hctx;
  v1::HybridEncryptRequest hreq;
  v1::HybridEncryptResponse hresp;
  grpc::Status s = stub_->HybridEncrypt(&hctx, hreq, &hresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "algorithm is required");
  grpc::ClientContext sctx;
  auto stream = stub_->HybridEncryptStream(&sctx);
  v1::HybridEncryptStreamRequest sreq;
  stream->Write(sreq);
  stream->WritesDone();
  grpc::Status ss = stream->Finish();
  EXPECT_EQ(ss.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(ss.error_message().find("must carry params"), std::string::npos);
}

TEST_F(SmcryptdTest, StatusCodes) {
  auto encrypt = [&](v1::Algorithm alg, v1::KeyRef key) {
    grpc::ClientContext ctx;
    v1::EncryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = key;
    req.set_plaintext("data");
    v1::EncryptResponse resp;
    return stub_->Encrypt(&ctx, req, &resp).error_code();
  };
  EXPECT_EQ(encrypt(v1::ALGORITHM_UNSPECIFIED, KeyId("sm4")), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(encrypt(v1::SM4_GCM, Inline("15 bytes only!!")), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(encrypt(v1::SM4_GCM, KeyId("no-such-key")), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(encrypt(v1::AES_128_GCM, KeyId("sm4")), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(encrypt(v1::SM4_GCM, KeyId("sm2")), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(encrypt(v1::SM4_GCM, KeyId("sm4")), grpc::StatusCode::OK);
  // An SM2 key used for ECDSA.
  grpc::ClientContext ctx;
  v1::SignRequest sreq;
  sreq.set_algorithm(v1::ECDSA_P256);
  *sreq.mutable_key() = KeyId("sm2");
  v1::SignResponse sresp;
  EXPECT_EQ(stub_->Sign(&ctx, sreq, &sresp).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  // A deadline already past.
  grpc::ClientContext dctx;
  dctx.set_deadline(std::chrono::system_clock::now() - std::chrono::seconds(1));
  v1::HashRequest hreq;
  hreq.set_algorithm(v1::SM3);
  v1::HashResponse hresp;
  EXPECT_EQ(stub_->Hash(&dctx, hreq, &hresp).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // A message over --max_message_bytes (4 MiB here).
  grpc::ClientContext bctx;
  hreq.set_data(std::string((4 << 20) + 1, 'x'));
  EXPECT_EQ(stub_->Hash(&bctx, hreq, &hresp).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// Every error status carries a google.rpc.ErrorInfo (crypto.proto "Errors"): the reasons
// a client branches on, with their metadata, in unary calls and in batch items.
TEST_F(SmcryptdTest, ErrorsCarryAReason) {
  auto reason_of = [](const grpc::Status& s) {
    std::optional<smcrypt::rpc::ErrorInfo> info = smcrypt::rpc::DecodeErrorInfo(s);
    EXPECT_TRUE(info.has_value()) << s.error_message();
    if (!info.has_value()) return smcrypt::rpc::ErrorInfo{};
    EXPECT_EQ(info->domain, "smcrypt.v1");
    return *info;
  };
  auto encrypt = [&](v1::Algorithm alg, v1::KeyRef key, v1::EncryptResponse* resp) {
    grpc::ClientContext ctx;
    v1::EncryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = key;
    req.set_plaintext("data");
    return stub_->Encrypt(&ctx, req, resp);
  };
  v1::EncryptResponse ct;
  ASSERT_TRUE(encrypt(v1::SM4_GCM, KeyId("sm4"), &ct).ok());
  {
    grpc::ClientContext ctx;
    v1::DecryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = KeyId("sm4");
    req.set_ciphertext(ct.ciphertext());
    req.set_nonce(ct.nonce());
    std::string tag = ct.tag();
    tag[0] ^= 1;
    req.set_tag(tag);
    v1::DecryptResponse resp;
    const grpc::Status s = stub_->Decrypt(&ctx, req, &resp);
    ASSERT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    const smcrypt::rpc::ErrorInfo info = reason_of(s);
    EXPECT_EQ(info.reason, "DECRYPTION_FAILED");
    EXPECT_TRUE(info.metadata.empty());
  }
  v1::EncryptResponse unused;
  smcrypt::rpc::ErrorInfo info = reason_of(encrypt(v1::SM4_GCM, KeyId("no-such-key"), &unused));
  EXPECT_EQ(info.reason, "KEY_NOT_FOUND");
  EXPECT_EQ(info.metadata["key_id"], "no-such-key");
  info = reason_of(encrypt(v1::AES_128_GCM, KeyId("sm4"), &unused));
  EXPECT_EQ(info.reason, "WRONG_KEY_FAMILY");
  EXPECT_EQ(info.metadata["key_id"], "sm4");
  EXPECT_EQ(info.metadata["key_family"], "SM4");
  EXPECT_EQ(info.metadata["algorithm"], "AES-128-GCM");
  info = reason_of(encrypt(v1::SM4_GCM, Inline("15 bytes only!!"), &unused));
  EXPECT_EQ(info.reason, "INVALID_KEY");
  EXPECT_EQ(info.metadata["field"], "key.inline_key");
  info = reason_of(encrypt(v1::AES_256_GCM, Inline(std::string(16, 'k')), &unused));
  EXPECT_EQ(info.reason, "INVALID_KEY");
  info = reason_of(encrypt(v1::ALGORITHM_UNSPECIFIED, KeyId("sm4"), &unused));
  EXPECT_EQ(info.reason, "INVALID_ARGUMENT");
  auto sign = [&](v1::Algorithm alg, v1::KeyRef key) {
    grpc::ClientContext ctx;
    v1::SignRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = key;
    req.set_data("m");
    v1::SignResponse resp;
    return stub_->Sign(&ctx, req, &resp);
  };
  info = reason_of(sign(v1::SM2, KeyId("p256pub")));
  EXPECT_EQ(info.reason, "WRONG_KEY_FAMILY");
  info = reason_of(sign(v1::ECDSA_P256, KeyId("p256pub")));
  EXPECT_EQ(info.reason, "PRIVATE_KEY_REQUIRED");
  EXPECT_EQ(info.metadata["key_id"], "p256pub");
  info = reason_of(sign(v1::SM2, Inline("not a key")));
  EXPECT_EQ(info.reason, "INVALID_KEY");
  EXPECT_EQ(info.metadata["field"], "key.inline_key");
  // Bytes that only look like a public key are not named as one.
  for (const std::string& bytes : {std::string("-----BEGIN PUBLIC KEY-----\n"),
                                   std::string("\x30\x30\x30\x30\x30"),
                                   std::string("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")}) {
    info = reason_of(sign(v1::SM2, Inline(bytes)));
    EXPECT_EQ(info.reason, "INVALID_KEY") << absl::CHexEscape(bytes);
  }
  // An inline P-256 private key for SM2: a well-formed key of another family.
  std::string p256_der;
  {
    TempDir tmp;
    ASSERT_EQ(std::system(("openssl pkcs8 -topk8 -nocrypt -in " + keys_ +
                           "/p256.pem -outform DER -out " + (tmp / "p.der") + " 2>/dev/null")
                              .c_str()),
              0);
    p256_der = ReadAll(tmp / "p.der");
  }
  info = reason_of(sign(v1::SM2, Inline(p256_der)));
  EXPECT_EQ(info.reason, "WRONG_KEY_FAMILY");
  // The public key inline where the private key is needed.
  {
    grpc::ClientContext ctx;
    v1::GetPublicKeyRequest req;
    req.set_algorithm(v1::ECDSA_P256);
    *req.mutable_key() = KeyId("p256");
    v1::GetPublicKeyResponse resp;
    ASSERT_TRUE(stub_->GetPublicKey(&ctx, req, &resp).ok());
    info = reason_of(sign(v1::ECDSA_P256, Inline(resp.public_key_der())));
    EXPECT_EQ(info.reason, "PRIVATE_KEY_REQUIRED");
  }
  // Batch items carry the same ErrorInfo in their Status.details.
  grpc::ClientContext bctx;
  v1::SignBatchRequest breq;
  v1::SignRequest* item = breq.add_items();
  item->set_algorithm(v1::SM2);
  *item->mutable_key() = KeyId("no-such-key");
  item->set_data("m");
  item = breq.add_items();
  item->set_algorithm(v1::SM2);
  *item->mutable_key() = KeyId("sm2");
  item->set_data("m");
  v1::SignBatchResponse bresp;
  ASSERT_TRUE(stub_->SignBatch(&bctx, breq, &bresp).ok());
  ASSERT_EQ(bresp.results_size(), 2);
  const v1::Status& bad = bresp.results(0).status();
  EXPECT_EQ(bad.code(), static_cast<int>(grpc::StatusCode::NOT_FOUND));
  ASSERT_EQ(bad.details_size(), 1);
  EXPECT_EQ(bad.details(0).type_url(), "type.googleapis.com/google.rpc.ErrorInfo");
  std::optional<smcrypt::rpc::ErrorInfo> item_info = smcrypt::rpc::ParseErrorInfo(bad.details(0).value());
  ASSERT_TRUE(item_info.has_value());
  EXPECT_EQ(item_info->reason, "KEY_NOT_FOUND");
  EXPECT_EQ(item_info->metadata["key_id"], "no-such-key");
  EXPECT_EQ(bresp.results(1).status().code(), 0);
  EXPECT_EQ(bresp.results(1).status().details_size(), 0);
  // A Status message parses as google.rpc.Status: the same bytes DecodeErrorInfo reads.
  EXPECT_EQ(smcrypt::rpc::DecodeErrorInfoFromStatusDetails(bad.SerializeAsString())->reason,
            "KEY_NOT_FOUND");
}

TEST_F(SmcryptdTest, MetricsCountWithLabels) {
  const std::string before = HttpGet(server_->metrics_port(), "/metrics");
  ASSERT_NE(before.find("200 OK"), std::string::npos);
  const std::string ok_hash = Handled("Hash", "unary", "OK");
  const std::string bad_hash = Handled("Hash", "unary", "InvalidArgument");
  const std::string bytes = "smcrypt_bytes_processed_total{algorithm=\"SM3\",operation=\"hash\"}";
  const double ok0 = MetricValue(before, ok_hash), bad0 = MetricValue(before, bad_hash);
  const double bytes0 = MetricValue(before, bytes);
  ASSERT_GE(ok0, 0) << before.substr(0, 3000);
  ASSERT_GE(bad0, 0);
  ASSERT_GE(bytes0, 0);
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext ctx;
    v1::HashRequest req;
    req.set_algorithm(v1::SM3);
    req.set_data(std::string(1000, 'x'));
    v1::HashResponse resp;
    ASSERT_TRUE(stub_->Hash(&ctx, req, &resp).ok());
  }
  grpc::ClientContext ctx;
  v1::HashRequest req;  // no algorithm
  v1::HashResponse resp;
  ASSERT_EQ(stub_->Hash(&ctx, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string after = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(MetricValue(after, ok_hash), ok0 + 3);
  EXPECT_EQ(MetricValue(after, bad_hash), bad0 + 1);
  EXPECT_EQ(MetricValue(after, bytes), bytes0 + 3000);
  EXPECT_GE(MetricValue(after, "grpc_server_started_total{grpc_method=\"Hash\","
                               "grpc_service=\"smcrypt.v1.CryptoService\",grpc_type=\"unary\"}"),
            ok0 + 4);
  EXPECT_GE(MetricValue(after, "grpc_server_handling_seconds_count{grpc_method=\"Hash\","
                               "grpc_service=\"smcrypt.v1.CryptoService\",grpc_type=\"unary\"}"),
            ok0 + 4);
  EXPECT_EQ(MetricValue(after, "smcrypt_selftest_ok"), 1);
  EXPECT_GT(MetricValue(after, "process_resident_memory_bytes"), 1e6);
  EXPECT_GE(MetricValue(after, "process_cpu_seconds_total"), 0);
  EXPECT_NE(after.find("smcrypt_kernel_info{algorithm=\"SM4\",kernel=\""), std::string::npos);
  EXPECT_NE(after.find("smcrypt_inflight_requests "), std::string::npos);
}

// Messages by method and type (a unary call: one in, one out when it succeeds; a client
// stream: every Write in, one out), failed decryptions and verifications by algorithm,
// the reload counters at zero with both results, and the build info.
TEST_F(SmcryptdTest, MetricsCountMessagesFailuresAndBuild) {
  auto msgs = [](absl::string_view dir, absl::string_view method, absl::string_view type) {
    return absl::StrCat("grpc_server_msg_", dir, "_total{grpc_method=\"", method,
                        "\",grpc_service=\"smcrypt.v1.CryptoService\",grpc_type=\"", type, "\"}");
  };
  const std::vector<std::string> series = {
      msgs("received", "Hash", "unary"),
      msgs("sent", "Hash", "unary"),
      msgs("received", "HashStream", "client_stream"),
      msgs("sent", "HashStream", "client_stream"),
      msgs("received", "Decrypt", "unary"),
      msgs("sent", "Decrypt", "unary"),
      "smcrypt_decrypt_failures_total{algorithm=\"AES-128-GCM\"}",
      "smcrypt_verify_failures_total{algorithm=\"SM2\"}",
      "smcrypt_decrypt_failures_total{algorithm=\"SM4-GCM\"}",
  };
  auto values = [&] {
    const std::string text = HttpGet(server_->metrics_port(), "/metrics");
    std::vector<double> v;
    for (const std::string& s : series) v.push_back(MetricValue(text, s));
    return v;
  };
  const std::vector<double> before = values();
  for (size_t i = 0; i < series.size(); ++i) ASSERT_GE(before[i], 0) << series[i];
  {
    grpc::ClientContext ctx;
    v1::HashRequest req;
    req.set_algorithm(v1::SM3);
    req.set_data("abc");
    v1::HashResponse resp;
    ASSERT_TRUE(stub_->Hash(&ctx, req, &resp).ok());
  }
  {
    grpc::ClientContext ctx;
    v1::HashStreamResponse resp;
    auto writer = stub_->HashStream(&ctx, &resp);
    for (int i = 0; i < 3; ++i) {
      v1::HashStreamRequest req;
      if (i == 0) req.set_algorithm(v1::SM3);
      req.set_data("chunk");
      ASSERT_TRUE(writer->Write(req));
    }
    writer->WritesDone();
    ASSERT_TRUE(writer->Finish().ok());
  }
  {
    grpc::ClientContext ctx;
    v1::DecryptRequest req;
    req.set_algorithm(v1::AES_128_GCM);
    *req.mutable_key() = KeyId("aes");
    req.set_nonce(std::string(12, 'n'));
    req.set_ciphertext("not what was sealed");
    req.set_tag(std::string(16, 't'));
    v1::DecryptResponse resp;
    grpc::Status s = stub_->Decrypt(&ctx, req, &resp);
    ASSERT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    ASSERT_EQ(s.error_message(), "decryption failed");
  }
  {
    grpc::ClientContext sctx;
    v1::SignRequest sreq;
    sreq.set_algorithm(v1::SM2);
    *sreq.mutable_key() = KeyId("sm2");
    sreq.set_data("signed");
    v1::SignResponse sig;
    ASSERT_TRUE(stub_->Sign(&sctx, sreq, &sig).ok());
    grpc::ClientContext vctx;
    v1::VerifyRequest vreq;
    vreq.set_algorithm(v1::SM2);
    *vreq.mutable_key() = KeyId("sm2");
    vreq.set_data("not signed");
    vreq.set_signature(sig.signature());
    v1::VerifyResponse vresp;
    ASSERT_TRUE(stub_->Verify(&vctx, vreq, &vresp).ok());
    ASSERT_FALSE(vresp.valid());
  }
  const std::vector<double> after = values();
  const std::vector<double> delta = {1, 1, 3, 1, 1, 0, 1, 1, 0};
  for (size_t i = 0; i < series.size(); ++i) {
    EXPECT_EQ(after[i] - before[i], delta[i]) << series[i];
  }
  const std::string text = HttpGet(server_->metrics_port(), "/metrics");
  for (absl::string_view family :
       {"smcrypt_keyring_reloads_total", "smcrypt_tls_certificate_reloads_total"}) {
    for (absl::string_view result : {"success", "failure"}) {
      EXPECT_EQ(MetricValue(text, absl::StrCat(family, "{result=\"", result, "\"}")), 0)
          << family << " " << result;
    }
  }
  EXPECT_TRUE(std::regex_search(
      text, std::regex("\nsmcrypt_build_info\\{compiler=\"(gcc|clang) [0-9.]+\",cpu=\"[^\"]+\","
                       "version=\"[0-9]+\\.[0-9]+\\.[0-9]+\"\\} 1\n")))
      << text.substr(0, 2000);
}

TEST_F(SmcryptdTest, HealthServing) {
  auto health = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(server_->target(), grpc::InsecureChannelCredentials()));
  for (const char* service : {"", "smcrypt.v1.CryptoService"}) {
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok());
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
}

// ---- Server reflection, as generic gRPC tools (grpcurl, grpc_cli) use it -------------------
//
// Debian ships no reflection client, so the test speaks grpc.reflection.v1alpha on the wire:
// a bidi stream of raw ByteBuffers whose few protobuf fields are encoded by hand.

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// LengthDelimited encodes field `field` (wire type 2) holding `bytes`.
std::string LengthDelimited(int field, absl::string_view bytes) {
  return absl::StrCat(Varint((field << 3) | 2), Varint(bytes.size()), bytes);
}

// Fields returns the contents of every length-delimited field `field` in `msg`.
std::vector<std::string> Fields(absl::string_view msg, int field) {
  std::vector<std::string> out;
  size_t i = 0;
  auto varint = [&](uint64_t* v) {
    *v = 0;
    for (int shift = 0; i < msg.size() && shift < 64; shift += 7) {
      const uint8_t b = static_cast<uint8_t>(msg[i++]);
      *v |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  while (i < msg.size()) {
    uint64_t key, len;
    if (!varint(&key)) break;
    switch (key & 7) {
      case 0: if (!varint(&len)) return out; break;
      case 1: i += 8; break;
      case 5: i += 4; break;
      case 2:
        if (!varint(&len) || len > msg.size() - i) return out;
        if (static_cast<int>(key >> 3) == field) out.emplace_back(msg.substr(i, len));
        i += len;
        break;
      default: return out;
    }
  }
  return out;
}

// Reflect sends one ServerReflectionRequest and returns the serialized response.
std::string Reflect(const std::string& target, const std::string& request) {
  auto channel = grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  grpc::ClientContext ctx;
  const grpc::internal::RpcMethod method(
      "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      grpc::internal::RpcMethod::BIDI_STREAMING);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(
          channel.get(), method, &ctx));
  grpc::Slice slice(request);
  grpc::ByteBuffer out(&slice, 1);
  EXPECT_TRUE(stream->Write(out));
  stream->WritesDone();
  grpc::ByteBuffer in;
  std::string response;
  if (stream->Read(&in)) {
    std::vector<grpc::Slice> slices;
    EXPECT_TRUE(in.Dump(&slices).ok());
    for (const grpc::Slice& s : slices) {
      response.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  EXPECT_TRUE(stream->Finish().ok());
  return response;
}

TEST_F(SmcryptdTest, ReflectionListsAndDescribesTheServices) {
  // ServerReflectionRequest.list_services = 7 → ServerReflectionResponse.list_services_response
  // = 6 { repeated ServiceResponse service = 1 { string name = 1 } }.
  const std::string listed = Reflect(server_->target(), LengthDelimited(7, "*"));
  std::vector<std::string> names;
  for (const std::string& list : Fields(listed, 6)) {
    for (const std::string& service : Fields(list, 1)) {
      for (const std::string& name : Fields(service, 1)) names.push_back(name);
    }
  }
  EXPECT_THAT(names, ::testing::Contains("smcrypt.v1.CryptoService"));
  EXPECT_THAT(names, ::testing::Contains("grpc.health.v1.Health"));

  // file_containing_symbol = 4 → file_descriptor_response = 4 { repeated bytes
  // file_descriptor_proto = 1 }: the descriptor a tool needs to call the RPCs.
  const std::string described =
      Reflect(server_->target(), LengthDelimited(4, "smcrypt.v1.CryptoService"));
  bool found = false;
  for (const std::string& fdr : Fields(described, 4)) {
    for (const std::string& bytes : Fields(fdr, 1)) {
      google::protobuf::FileDescriptorProto file;
      ASSERT_TRUE(file.ParseFromString(bytes));
      for (const auto& service : file.service()) {
        if (file.package() != "smcrypt.v1" || service.name() != "CryptoService") continue;
        found = true;
        std::vector<std::string> methods;
        for (const auto& m : service.method()) methods.push_back(m.name());
        EXPECT_THAT(methods, ::testing::IsSupersetOf({"Hash", "Sign", "Verify", "Encrypt",
                                                      "HybridEncrypt", "GetServerInfo"}));
      }
    }
  }
  EXPECT_TRUE(found) << "no descriptor for smcrypt.v1.CryptoService";
}

// ---- Separate servers: policy, limits, start-up failures, TLS, shutdown ------------------

TEST(SmcryptdPolicyTest, DeniedInlinePrivateKeys) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--inline_private_keys=deny"})) << server.log();
  auto stub = server.Stub();
  grpc::ClientContext gctx;
  v1::GenerateKeyPairRequest greq;
  greq.set_algorithm(v1::SM2);
  v1::GenerateKeyPairResponse kp;
  ASSERT_TRUE(stub->GenerateKeyPair(&gctx, greq, &kp).ok());
  EXPECT_TRUE(kp.private_key_der().empty());
  EXPECT_TRUE(kp.private_key_pem().empty());
  EXPECT_TRUE(kp.private_key_withheld());
  EXPECT_FALSE(kp.public_key_der().empty());
  // Any inline private key is refused.
  ASSERT_EQ(std::system("true"), 0);
  TempDir dir;
  ASSERT_EQ(std::system(("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:SM2 -outform DER -out " +
                         (dir / "k.der") + " 2>/dev/null").c_str()), 0);
  grpc::ClientContext ctx;
  v1::SignRequest req;
  req.set_algorithm(v1::SM2);
  *req.mutable_key() = Inline(ReadAll(dir / "k.der"));
  req.set_data("m");
  v1::SignResponse resp;
  const grpc::Status denied = stub->Sign(&ctx, req, &resp);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(smcrypt::rpc::DecodeErrorInfo(denied).has_value());
  EXPECT_EQ(smcrypt::rpc::DecodeErrorInfo(denied)->reason, "INLINE_PRIVATE_KEY_DENIED");
}

// A client that waits for each answer is never over --max_inflight=1: a call stops
// counting before its status is sent.
TEST(SmcryptdPolicyTest, SequentialCallsFitMaxInflightOne) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--max_inflight=1"})) << server.log();
  auto stub = server.Stub();
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data(std::string(64 << 10, 'x'));
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    grpc::ClientContext ctx;
    v1::HashResponse resp;
    const grpc::Status s = stub->Hash(&ctx, req, &resp);
    if (!s.ok()) {
      ++refused;
      EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
    }
  }
  EXPECT_EQ(refused, 0);
}

TEST(SmcryptdPolicyTest, MaxInflightAndMessageSize) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--max_inflight=1", "--max_message_bytes=1024"})) << server.log();
  auto stub = server.Stub();
  // Hold one RPC open, then a second is RESOURCE_EXHAUSTED.
  grpc::ClientContext hold;
  v1::HashStreamResponse hresp;
  auto writer = stub->HashStream(&hold, &hresp);
  v1::HashStreamRequest first;
  first.set_algorithm(v1::SM3);
  ASSERT_TRUE(writer->Write(first));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  grpc::ClientContext ctx;
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  v1::HashResponse resp;
  grpc::Status s = stub->Hash(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  ASSERT_TRUE(smcrypt::rpc::DecodeErrorInfo(s).has_value());
  EXPECT_EQ(smcrypt::rpc::DecodeErrorInfo(s)->reason, "OVERLOADED");
  EXPECT_EQ(smcrypt::rpc::DecodeErrorInfo(s)->metadata.at("limit"), "max_inflight");
  writer->WritesDone();
  EXPECT_TRUE(writer->Finish().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  grpc::ClientContext ctx2;
  EXPECT_TRUE(stub->Hash(&ctx2, req, &resp).ok());
  grpc::ClientContext ctx3;
  req.set_data(std::string(2000, 'x'));
  const grpc::Status too_large = stub->Hash(&ctx3, req, &resp);
  EXPECT_EQ(too_large.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // gRPC refuses it before smcryptd sees it: no ErrorInfo (crypto.proto "Errors").
  EXPECT_FALSE(smcrypt::rpc::DecodeErrorInfo(too_large).has_value());
}

TEST(SmcryptdStartupTest, BadKeyFileFailsNamingIt) {
  TempDir dir;
  WriteFile(dir / "good.pem", Pem("SM4 KEY", std::string(16, 'k')));
  WriteFile(dir / "wrong.pem", Pem("SM4 KEY", std::string(5, 'k')));
  Smcryptd server;
  EXPECT_FALSE(server.Start({"--keys_dir=" + dir.path()}));
  EXPECT_EQ(server.WaitExit(), 1);
  EXPECT_NE(server.log().find("wrong.pem"), std::string::npos) << server.log();
}

TEST(SmcryptdStartupTest, UnknownCpuFeatureFails) {
  Smcryptd server;
  EXPECT_FALSE(server.Start({"--cpu_disable=avx9000"}));
  EXPECT_EQ(server.WaitExit(), 1);
  EXPECT_NE(server.log().find("avx9000"), std::string::npos) << server.log();
}

TEST(SmcryptdStartupTest, BusyPortFailsInsteadOfSharingIt) {
  // Without SO_REUSEPORT off, a second server would bind the same port and take half the
  // connections.
  Smcryptd first;
  ASSERT_TRUE(first.Start({})) << first.log();
  Smcryptd second;
  EXPECT_FALSE(second.Start({"--listen=" + first.target()}));
  EXPECT_EQ(second.WaitExit(), 1);
  EXPECT_NE(second.log().find("cannot listen on " + first.target()), std::string::npos)
      << second.log();
  EXPECT_TRUE(first.Alive());
}

TEST(SmcryptdStartupTest, AddressWithoutPortFails) {
  for (const char* flag : {"--listen=localhost", "--listen=127.0.0.1:", "--listen=::1:50051",
                           "--metrics_listen=127.0.0.1:99999"}) {
    Smcryptd server;
    EXPECT_FALSE(server.Start({flag})) << flag;
    EXPECT_EQ(server.WaitExit(), 1) << flag;
    EXPECT_NE(server.log().find("must be HOST:PORT"), std::string::npos) << server.log();
  }
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A CA, a server certificate for 127.0.0.1 and a client certificate.
    const std::string d = dir_.path();
    const std::string cmds =
        "cd " + d + " && "
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
        "-subj /CN=smcrypt-test-ca -keyout ca.key -out ca.pem && "
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=localhost "
        "-keyout server.key -out server.csr && "
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
        "-extfile san.ext -out server.pem && "
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=client "
        "-keyout client.key -out client.csr && "
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 "
        "-out client.pem";
    ASSERT_EQ(std::system((cmds + " >/dev/null 2>&1").c_str()), 0);
  }

  grpc::Status CallHash(const std::string& target, bool with_client_cert) {
    grpc::SslCredentialsOptions opts;
    opts.pem_root_certs = ReadAll(dir_ / "ca.pem");
    if (with_client_cert) {
      opts.pem_private_key = ReadAll(dir_ / "client.key");
      opts.pem_cert_chain = ReadAll(dir_ / "client.pem");
    }
    auto stub = v1::CryptoService::NewStub(grpc::CreateChannel(target, grpc::SslCredentials(opts)));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::HashRequest req;
    req.set_algorithm(v1::SM3);
    req.set_data("abc");
    v1::HashResponse resp;
    grpc::Status s = stub->Hash(&ctx, req, &resp);
    if (s.ok()) EXPECT_EQ(BytesToHex(resp.digest()),
                          "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
    return s;
  }

  TempDir dir_;
};

TEST_F(TlsTest, Tls) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--tls_cert=" + (dir_ / "server.pem"),
                            "--tls_key=" + (dir_ / "server.key")})) << server.log();
  EXPECT_TRUE(CallHash(server.target(), false).ok());
  // A plaintext client cannot talk to a TLS server.
  auto plain = server.Stub();
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  v1::HashResponse resp;
  EXPECT_FALSE(plain->Hash(&ctx, req, &resp).ok());
}

TEST_F(TlsTest, MutualTls) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--tls_cert=" + (dir_ / "server.pem"),
                            "--tls_key=" + (dir_ / "server.key"),
                            "--tls_client_ca=" + (dir_ / "ca.pem")})) << server.log();
  EXPECT_TRUE(CallHash(server.target(), true).ok());
  grpc::Status refused = CallHash(server.target(), false);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE) << refused.error_message();
}

// --health_listen: with TLS on the main port, a plaintext port answers grpc.health.v1
// (what a Kubernetes gRPC probe sends) and nothing else.
TEST_F(TlsTest, PlaintextHealthPortServesOnlyHealth) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--tls_cert=" + (dir_ / "server.pem"),
                            "--tls_key=" + (dir_ / "server.key"),
                            "--health_listen=127.0.0.1:0"})) << server.log();
  // The health line follows the listening line that Start waits for.
  std::smatch m;
  std::string log;
  const std::regex health_re("health \\(grpc\\.health\\.v1 only, plaintext\\) on 127\\.0\\.0\\.1:([0-9]+)");
  for (int i = 0; i < 100; ++i) {
    log = server.log();
    if (std::regex_search(log, m, health_re)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(std::regex_search(log, m, health_re)) << log;
  const std::string health_target = "127.0.0.1:" + m[1].str();
  auto channel = grpc::CreateChannel(health_target, grpc::InsecureChannelCredentials());
  auto health = grpc::health::v1::Health::NewStub(channel);
  for (const std::string service : {"", "smcrypt.v1.CryptoService"}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse resp;
    ASSERT_TRUE(health->Check(&ctx, req, &resp).ok()) << service;
    EXPECT_EQ(resp.status(), grpc::health::v1::HealthCheckResponse::SERVING) << service;
  }
  // The crypto service is not reachable in plaintext there.
  auto stub = v1::CryptoService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  EXPECT_EQ(stub->Hash(&ctx, req, &resp).error_code(), grpc::StatusCode::UNIMPLEMENTED);
  // And the TLS port still serves it.
  EXPECT_TRUE(CallHash(server.target(), false).ok());
}

// SIGTERM with a stream in flight: health turns NOT_SERVING, the RPC completes, exit 0.
TEST(SmcryptdShutdownTest, SigtermDrainsInFlightRpc) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--shutdown_grace=10s"})) << server.log();
  auto channel = grpc::CreateChannel(server.target(), grpc::InsecureChannelCredentials());
  auto stub = v1::CryptoService::NewStub(channel);
  auto health = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext wctx;
  grpc::health::v1::HealthCheckRequest wreq;
  auto watch = health->Watch(&wctx, wreq);
  grpc::health::v1::HealthCheckResponse status;
  ASSERT_TRUE(watch->Read(&status));
  EXPECT_EQ(status.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  grpc::ClientContext ctx;
  v1::HashStreamResponse resp;
  auto writer = stub->HashStream(&ctx, &resp);
  v1::HashStreamRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("ab");
  ASSERT_TRUE(writer->Write(req));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server.Signal(SIGTERM);
  ASSERT_TRUE(watch->Read(&status));
  EXPECT_EQ(status.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  wctx.TryCancel();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  v1::HashStreamRequest more;
  more.set_data("c");
  ASSERT_TRUE(writer->Write(more));
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(BytesToHex(resp.digest()),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
  EXPECT_EQ(server.WaitExit(), 0) << server.log();
  EXPECT_NE(server.log().find("received SIGTERM"), std::string::npos);
}

TEST(SmcryptdShutdownTest, SigintExitsZero) {
  Smcryptd server;
  ASSERT_TRUE(server.Start({})) << server.log();
  server.Signal(SIGINT);
  EXPECT_EQ(server.WaitExit(), 0) << server.log();
}

}  // namespace
