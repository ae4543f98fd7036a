// Integration tests of SM4-CFB, SM4-OFB, SM4-XTS and SM4-XTS-GB through the real smcryptd
// binary (label integration): Encrypt/Decrypt against OpenSSL's EVP_sm4_cfb128 /
// EVP_sm4_ofb on random inputs, the CFB/OFB streams against the unary call, EncryptBatch,
// XTS against the GB/T 17964-2021 example (both tweak orders) and the core library on
// random data units, keyring keys (a 32-byte SM4 KEY for XTS), and every bad input with
// its status.
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "smcrypt/sm4.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/test_util.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using ::smcrypt::testing::Smcryptd;
constexpr auto KeyId = ::smcrypt::testing::KeyIdRef;
constexpr auto Inline = ::smcrypt::testing::InlineKeyRef;
using ::testing::HasSubstr;
using StatusCode = ::grpc::StatusCode;

std::string Hex(absl::string_view h) { return absl::HexStringToBytes(h); }

std::string OpenSslCrypt(const EVP_CIPHER* cipher, bool encrypt, const std::string& key,
                         const std::string& iv, const std::string& in) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  std::string out(in.size() + 16, '\0');
  int n = 0, m = 0;
  EVP_CipherInit_ex(ctx, cipher, nullptr, reinterpret_cast<const uint8_t*>(key.data()),
                    reinterpret_cast<const uint8_t*>(iv.data()), encrypt ? 1 : 0);
  EVP_CipherUpdate(ctx, reinterpret_cast<uint8_t*>(out.data()), &n,
                   reinterpret_cast<const uint8_t*>(in.data()), static_cast<int>(in.size()));
  EVP_CipherFinal_ex(ctx, reinterpret_cast<uint8_t*>(out.data()) + n, &m);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(n + m);
  return out;
}


class Sm4ModesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(
        (fs::temp_directory_path() / absl::StrCat("smcryptd_sm4_modes_", getpid())).string());
    fs::create_directories(*dir_ + "/keys");
    auto write = [](const std::string& name, const std::string& text) {
      std::ofstream(*dir_ + "/keys/" + name, std::ios::binary) << text;
      fs::permissions(*dir_ + "/keys/" + name, fs::perms::owner_read | fs::perms::owner_write);
    };
    write("sm4.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, '\x11')));
    write("xts.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, '\x22') +
                                                       std::string(16, '\x33')));
    server_ = new Smcryptd();
    ASSERT_TRUE(server_->Start({"--keys_dir=" + *dir_ + "/keys"})) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override { stub_ = server_->Stub(); }

  grpc::Status Encrypt(v1::Algorithm alg, v1::KeyRef key, const std::string& iv,
                       const std::string& pt, v1::EncryptResponse* resp,
                       v1::Padding padding = v1::PADDING_UNSPECIFIED) {
    grpc::ClientContext ctx;
    v1::EncryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = std::move(key);
    if (!iv.empty()) req.set_nonce(iv);
    req.set_plaintext(pt);
    req.set_padding(padding);
    return stub_->Encrypt(&ctx, req, resp);
  }
  grpc::Status Decrypt(v1::Algorithm alg, v1::KeyRef key, const std::string& iv,
                       const std::string& ct, std::string* pt) {
    grpc::ClientContext ctx;
    v1::DecryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = std::move(key);
    req.set_nonce(iv);
    req.set_ciphertext(ct);
    v1::DecryptResponse resp;
    grpc::Status s = stub_->Decrypt(&ctx, req, &resp);
    *pt = resp.plaintext();
    return s;
  }

  static std::string* dir_;
  static Smcryptd* server_;
  std::unique_ptr<v1::CryptoService::Stub> stub_;
  std::mt19937 rng_{static_cast<uint32_t>(smcrypt::testing::TestSeed())};
  std::string Random(size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng_());
    return s;
  }
};

std::string* Sm4ModesTest::dir_ = nullptr;
Smcryptd* Sm4ModesTest::server_ = nullptr;

TEST_F(Sm4ModesTest, CfbAndOfbMatchOpenSslBothWays) {
  struct Mode {
    v1::Algorithm alg;
    const EVP_CIPHER* evp;
  };
  for (const Mode& m : {Mode{v1::SM4_CFB, EVP_sm4_cfb128()}, Mode{v1::SM4_OFB, EVP_sm4_ofb()}}) {
    for (size_t len : {0, 1, 15, 16, 17, 31, 33, 100, 255, 1000, 4099, 70001}) {
      SCOPED_TRACE(absl::StrCat(v1::Algorithm_Name(m.alg), " len=", len));
      const std::string key = Random(16), iv = Random(16), pt = Random(len);
      v1::EncryptResponse resp;
      grpc::Status s = Encrypt(m.alg, Inline(key), iv, pt, &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      EXPECT_EQ(resp.nonce(), iv);
      EXPECT_TRUE(resp.tag().empty());
      EXPECT_EQ(absl::BytesToHexString(resp.ciphertext()),
                absl::BytesToHexString(OpenSslCrypt(m.evp, true, key, iv, pt)));
      const std::string ct_ossl = OpenSslCrypt(m.evp, true, key, iv, pt);
      std::string back;
      s = Decrypt(m.alg, Inline(key), iv, ct_ossl, &back);
      ASSERT_TRUE(s.ok()) << s.error_message();
      EXPECT_EQ(back, pt);
    }
  }
}

// A drawn IV is returned and decrypts; the keyring's 16-byte SM4 key serves CFB and OFB.
TEST_F(Sm4ModesTest, KeyringKeyAndDrawnIv) {
  for (v1::Algorithm alg : {v1::SM4_CFB, v1::SM4_OFB}) {
    const std::string pt = Random(77);
    v1::EncryptResponse resp;
    ASSERT_TRUE(Encrypt(alg, KeyId("sm4"), "", pt, &resp).ok());
    ASSERT_EQ(resp.nonce().size(), 16u);
    const EVP_CIPHER* evp = alg == v1::SM4_CFB ? EVP_sm4_cfb128() : EVP_sm4_ofb();
    EXPECT_EQ(resp.ciphertext(), OpenSslCrypt(evp, true, std::string(16, '\x11'), resp.nonce(), pt));
  }
}

TEST_F(Sm4ModesTest, CfbAndOfbStreamsEqualTheUnaryCall) {
  for (v1::Algorithm alg : {v1::SM4_CFB, v1::SM4_OFB}) {
    SCOPED_TRACE(v1::Algorithm_Name(alg));
    const std::string key = Random(16), iv = Random(16), pt = Random(10007);
    v1::EncryptResponse unary;
    ASSERT_TRUE(Encrypt(alg, Inline(key), iv, pt, &unary).ok());
    grpc::ClientContext ctx;
    auto stream = stub_->EncryptStream(&ctx);
    v1::EncryptStreamRequest first;
    first.mutable_params()->set_algorithm(alg);
    *first.mutable_params()->mutable_key() = Inline(key);
    first.mutable_params()->set_nonce(iv);
    size_t off = 0;
    std::vector<size_t> chunks = {0, 1, 15, 17, 1000, 3, 4096};
    for (size_t i = 0; off < pt.size(); ++i) {
      const size_t n = std::min(chunks[i % chunks.size()], pt.size() - off);
      v1::EncryptStreamRequest r = i == 0 ? first : v1::EncryptStreamRequest();
      r.set_plaintext(pt.substr(off, n));
      off += n;
      ASSERT_TRUE(stream->Write(r));
    }
    stream->WritesDone();
    std::string ct;
    v1::EncryptStreamResponse resp;
    while (stream->Read(&resp)) ct += resp.ciphertext();
    grpc::Status s = stream->Finish();
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(ct, unary.ciphertext());
  }
}

TEST_F(Sm4ModesTest, XtsMatchesTheGbT17964ExampleInBothTweakOrders) {
  const std::string key =
      Hex("2B7E151628AED2A6ABF7158809CF4F3C000102030405060708090A0B0C0D0E0F");
  const std::string iv = Hex("F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF");
  const std::string pt = Hex(
      "6BC1BEE22E409F96E93D7E117393172AAE2D8A571E03AC9C9EB76FAC45AF8E5130C81C46A35CE411E5FBC119"
      "1A0A52EFF69F2445DF4F9B17");
  struct Case {
    v1::Algorithm alg;
    const char* ct;
  };
  for (const Case& c :
       {Case{v1::SM4_XTS_GB, "E9538251C71D7B80BBE4483FEF497BD12C5C581BD6242FC51E08964FB4F60FDB0BA42F"
                             "63499279213D318D2C11F6886E903BE7F93A1B3479"},
        Case{v1::SM4_XTS, "E9538251C71D7B80BBE4483FEF497BD1B3DB1A3E60408C575D63FF7DB39F83260869F9"
                          "E2585FEC9F0B863BF8FD784B8627D16C0DB6D2CFC7"}}) {
    SCOPED_TRACE(v1::Algorithm_Name(c.alg));
    v1::EncryptResponse resp;
    grpc::Status s = Encrypt(c.alg, Inline(key), iv, pt, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.ciphertext(), Hex(c.ct));
    std::string back;
    ASSERT_TRUE(Decrypt(c.alg, Inline(key), iv, Hex(c.ct), &back).ok());
    EXPECT_EQ(back, pt);
  }
}

TEST_F(Sm4ModesTest, XtsAgreesWithTheLibraryOnRandomDataUnits) {
  for (v1::Algorithm alg : {v1::SM4_XTS, v1::SM4_XTS_GB}) {
    const smcrypt::Sm4XtsVariant variant = alg == v1::SM4_XTS
                                               ? smcrypt::Sm4XtsVariant::kIeee1619
                                               : smcrypt::Sm4XtsVariant::kGbT17964;
    for (size_t len : {16, 17, 31, 32, 33, 512, 4096, 4111}) {
      SCOPED_TRACE(absl::StrCat(v1::Algorithm_Name(alg), " len=", len));
      const std::string key = Random(32), iv = Random(16), pt = Random(len);
      auto xts = smcrypt::NewSm4Xts(key, variant);
      ASSERT_TRUE(xts.ok()) << xts.status();
      auto want = (*xts)->Encrypt(iv, pt);
      ASSERT_TRUE(want.ok());
      v1::EncryptResponse resp;
      ASSERT_TRUE(Encrypt(alg, Inline(key), iv, pt, &resp).ok());
      EXPECT_EQ(resp.ciphertext(), *want);
      std::string back;
      ASSERT_TRUE(Decrypt(alg, Inline(key), iv, resp.ciphertext(), &back).ok());
      EXPECT_EQ(back, pt);
    }
  }
  // The keyring's 32-byte SM4 KEY.
  v1::EncryptResponse resp;
  grpc::Status s = Encrypt(v1::SM4_XTS, KeyId("xts"), Random(16), Random(64), &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST_F(Sm4ModesTest, EncryptBatchServesTheNewModes) {
  grpc::ClientContext ctx;
  v1::EncryptBatchRequest req;
  const std::string key16 = Random(16), key32 = Random(32), iv = Random(16), pt = Random(50);
  for (v1::Algorithm alg : {v1::SM4_CFB, v1::SM4_OFB, v1::SM4_XTS, v1::SM4_XTS_GB}) {
    v1::EncryptRequest* item = req.add_items();
    item->set_algorithm(alg);
    *item->mutable_key() = Inline(alg == v1::SM4_CFB || alg == v1::SM4_OFB ? key16 : key32);
    item->set_nonce(iv);
    item->set_plaintext(pt);
  }
  v1::EncryptBatchResponse resp;
  grpc::Status s = stub_->EncryptBatch(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.results_size(), 4);
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(resp.results(i).status().code(), 0) << resp.results(i).status().message();
    v1::EncryptResponse one;
    ASSERT_TRUE(Encrypt(req.items(i).algorithm(), req.items(i).key(), iv, pt, &one).ok());
    EXPECT_EQ(resp.results(i).ciphertext(), one.ciphertext());
  }
}

TEST_F(Sm4ModesTest, BadInputsGetClearErrors) {
  v1::EncryptResponse resp;
  std::string pt;
  struct Case {
    const char* name;
    grpc::Status status;
    StatusCode code;
    const char* message;
  };
  const std::string key32 = Random(32);
  const std::vector<Case> cases = {
      {"XTS under 16 bytes", Encrypt(v1::SM4_XTS, Inline(key32), Random(16), Random(15), &resp),
       StatusCode::INVALID_ARGUMENT, "16"},
      {"XTS with K1 = K2",
       Encrypt(v1::SM4_XTS, Inline(std::string(32, '\x44')), Random(16), Random(32), &resp),
       StatusCode::INVALID_ARGUMENT, "K1"},
      {"XTS with a 16-byte inline key", Encrypt(v1::SM4_XTS, Inline(Random(16)), Random(16),
                                               Random(32), &resp),
       StatusCode::INVALID_ARGUMENT, "32 bytes"},
      {"XTS with the keyring's 16-byte SM4 key",
       Encrypt(v1::SM4_XTS, KeyId("sm4"), Random(16), Random(32), &resp),
       StatusCode::FAILED_PRECONDITION, "SM4-XTS"},
      {"CFB with the keyring's XTS key",
       Encrypt(v1::SM4_CFB, KeyId("xts"), Random(16), Random(32), &resp),
       StatusCode::FAILED_PRECONDITION, "SM4-XTS"},
      {"CFB with padding",
       Encrypt(v1::SM4_CFB, Inline(Random(16)), Random(16), Random(32), &resp, v1::PADDING_PKCS7),
       StatusCode::INVALID_ARGUMENT, "padding"},
      {"OFB with a 12-byte IV", Encrypt(v1::SM4_OFB, Inline(Random(16)), Random(12), Random(32),
                                        &resp),
       StatusCode::INVALID_ARGUMENT, "16"},
      {"XTS decrypt under 16 bytes",
       Decrypt(v1::SM4_XTS_GB, Inline(key32), Random(16), Random(5), &pt),
       StatusCode::INVALID_ARGUMENT, "16"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.status.error_code(), c.code) << c.status.error_message();
    EXPECT_THAT(c.status.error_message(), HasSubstr(c.message));
  }
  // XTS has no stream.
  grpc::ClientContext ctx;
  auto stream = stub_->EncryptStream(&ctx);
  v1::EncryptStreamRequest first;
  first.mutable_params()->set_algorithm(v1::SM4_XTS);
  *first.mutable_params()->mutable_key() = Inline(key32);
  first.set_plaintext(Random(32));
  stream->Write(first);
  stream->WritesDone();
  v1::EncryptStreamResponse r;
  while (stream->Read(&r)) {
  }
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("no stream"));
}

}  // namespace
