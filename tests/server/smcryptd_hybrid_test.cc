// Integration tests of hybrid encryption (HPKE, RFC 9180 base mode) against the real
// smcryptd binary (label integration): HybridEncrypt/HybridDecrypt round trips for both
// suites, key encodings and keyring keys, GenerateKeyPair, the stream format of
// crypto.proto (chunk framing, final flag, one context), and every tampering the formats
// must detect, each with its exact status. Ciphertexts are also opened here with the core
// library's HpkeContext, so the documented byte layout is checked, not only round trips.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/hpke.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/test_util.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using ::smcrypt::testing::HttpGet;
using ::smcrypt::testing::MetricValue;
using ::smcrypt::testing::RandomBytes;
using ::smcrypt::testing::Smcryptd;
using ::smcrypt::testing::TestSeed;
using ::testing::HasSubstr;
using StatusCode = ::grpc::StatusCode;

constexpr size_t kPrefix = 7 + 65;  // header ‖ enc
constexpr size_t kMiB = 1 << 20;

struct Keys {
  std::string private_der;  // PKCS#8
  std::string public_der;   // SubjectPublicKeyInfo
};

Keys NewKeys(smcrypt::Algorithm alg) {
  absl::StatusOr<smcrypt::KeyPair> kp = smcrypt::GenerateKeyPair(alg);
  if (!kp.ok()) return {};
  return {std::string(smcrypt::SecretDataAsStringView(kp->private_key_der)), kp->public_key_der};
}

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

// RawPoint: the uncompressed point, the last 65 bytes of an EC SubjectPublicKeyInfo.
std::string RawPoint(const std::string& spki) { return spki.substr(spki.size() - 65); }

std::string Header(v1::Algorithm alg) {
  return smcrypt::HpkeWireHeader(alg == v1::HPKE_SM2_SM3_SM4GCM
                                     ? smcrypt::HpkeSuite::kSm2Sm3Sm4Gcm
                                     : smcrypt::HpkeSuite::kP256Sha256Aes128Gcm);
}

struct Result {
  grpc::Status status;
  std::string data;
  std::vector<std::string> pieces;  // one per response
};

class HybridTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(
        (fs::temp_directory_path() / absl::StrCat("smcryptd_hybrid_", getpid())).string());
    fs::create_directories(*dir_ + "/keys");
    sm2_ = new Keys(NewKeys(smcrypt::Algorithm::kSm2));
    p256_ = new Keys(NewKeys(smcrypt::Algorithm::kEcdsaP256));
    auto write = [](const std::string& name, const std::string& text) {
      std::ofstream(*dir_ + "/keys/" + name, std::ios::binary) << text;
      // Keyring files must not be world-readable (server/engine/key_store.h, "Permissions").
      fs::permissions(*dir_ + "/keys/" + name, fs::perms::owner_read | fs::perms::owner_write);
    };
    write("hpke-sm2.pem", smcrypt::PemEncode("PRIVATE KEY", sm2_->private_der));
    write("hpke-sm2-pub.pem", smcrypt::PemEncode("PUBLIC KEY", sm2_->public_der));
    write("hpke-p256.pem", smcrypt::PemEncode("PRIVATE KEY", p256_->private_der));
    write("sm4.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, 'k')));
    server_ = new Smcryptd();
    ASSERT_TRUE(server_->Start({"--keys_dir=" + *dir_ + "/keys"})) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
    delete sm2_;
    delete p256_;
  }

  static const Keys& KeysFor(v1::Algorithm alg) {
    return alg == v1::HPKE_SM2_SM3_SM4GCM ? *sm2_ : *p256_;
  }

  Result Seal(v1::Algorithm alg, v1::KeyRef key, const std::string& pt,
              const std::string& info = "") {
    grpc::ClientContext ctx;
    v1::HybridEncryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = std::move(key);
    req.set_plaintext(pt);
    req.set_info(info);
    v1::HybridEncryptResponse resp;
    Result r;
    r.status = stub_->HybridEncrypt(&ctx, req, &resp);
    r.data = resp.ciphertext();
    return r;
  }

  Result Open(v1::Algorithm alg, v1::KeyRef key, const std::string& ct,
              const std::string& info = "") {
    grpc::ClientContext ctx;
    v1::HybridDecryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = std::move(key);
    req.set_ciphertext(ct);
    req.set_info(info);
    v1::HybridDecryptResponse resp;
    Result r;
    r.status = stub_->HybridDecrypt(&ctx, req, &resp);
    r.data = resp.plaintext();
    return r;
  }

  // SealStream sends params with the first chunk, then the other chunks.
  Result SealStream(v1::Algorithm alg, v1::KeyRef key, const std::vector<std::string>& chunks,
                    const std::string& info, const std::string& aad) {
    grpc::ClientContext ctx;
    auto stream = stub_->HybridEncryptStream(&ctx);
    Result r;
    v1::HybridEncryptStreamResponse resp;
    for (size_t i = 0; i < std::max<size_t>(chunks.size(), 1); ++i) {
      v1::HybridEncryptStreamRequest req;
      if (i == 0) {
        req.mutable_params()->set_algorithm(alg);
        *req.mutable_params()->mutable_key() = key;
        req.mutable_params()->set_info(info);
        req.mutable_params()->set_aad(aad);
      }
      if (i < chunks.size()) req.set_plaintext(chunks[i]);
      if (!stream->Write(req)) break;
      // The server answers each message before reading the next: drain as we go.
      const size_t want = i == 0 ? 1 + (chunks.empty() || chunks[0].empty() ? 0 : 1)
                                 : (chunks[i].empty() ? 0 : 1);
      for (size_t k = 0; k < want && stream->Read(&resp); ++k) {
        r.pieces.push_back(resp.ciphertext());
        r.data += resp.ciphertext();
        EXPECT_FALSE(resp.last());
      }
    }
    stream->WritesDone();
    while (stream->Read(&resp)) {
      r.pieces.push_back(resp.ciphertext());
      r.data += resp.ciphertext();
      EXPECT_TRUE(resp.last());
    }
    r.status = stream->Finish();
    return r;
  }

  // OpenStream sends `ct` in pieces of `piece` bytes. `pieces` gets each plaintext
  // response as received (so release before verification would show).
  Result OpenStream(v1::Algorithm alg, v1::KeyRef key, const std::string& ct, size_t piece,
                    const std::string& info, const std::string& aad) {
    grpc::ClientContext ctx;
    auto stream = stub_->HybridDecryptStream(&ctx);
    Result r;
    v1::HybridDecryptStreamRequest first;
    first.mutable_params()->set_algorithm(alg);
    *first.mutable_params()->mutable_key() = std::move(key);
    first.mutable_params()->set_info(info);
    first.mutable_params()->set_aad(aad);
    std::thread reader([&] {
      v1::HybridDecryptStreamResponse resp;
      while (stream->Read(&resp)) {
        if (!resp.plaintext().empty()) r.pieces.push_back(resp.plaintext());
        r.data += resp.plaintext();
      }
    });
    bool ok = stream->Write(first);
    for (size_t pos = 0; ok && pos < ct.size(); pos += piece) {
      v1::HybridDecryptStreamRequest req;
      req.set_ciphertext(ct.substr(pos, piece));
      ok = stream->Write(req);
    }
    stream->WritesDone();
    reader.join();
    r.status = stream->Finish();
    return r;
  }

  std::unique_ptr<v1::CryptoService::Stub> stub_ = server_->Stub();
  static std::string* dir_;
  static Keys* sm2_;
  static Keys* p256_;
  static Smcryptd* server_;
};

std::string* HybridTest::dir_ = nullptr;
Keys* HybridTest::sm2_ = nullptr;
Keys* HybridTest::p256_ = nullptr;
Smcryptd* HybridTest::server_ = nullptr;

constexpr v1::Algorithm kSuites[] = {v1::HPKE_SM2_SM3_SM4GCM, v1::HPKE_P256_SHA256_AES128GCM};

// ---- Unary ------------------------------------------------------------------------------

TEST_F(HybridTest, UnaryRoundTripsAndWireLayout) {
  std::mt19937_64 rng(TestSeed());
  for (v1::Algorithm alg : kSuites) {
    const Keys& keys = KeysFor(alg);
    const smcrypt::HpkeSuite suite = alg == v1::HPKE_SM2_SM3_SM4GCM
                                         ? smcrypt::HpkeSuite::kSm2Sm3Sm4Gcm
                                         : smcrypt::HpkeSuite::kP256Sha256Aes128Gcm;
    absl::StatusOr<smcrypt::SecretData> scalar =
        alg == v1::HPKE_SM2_SM3_SM4GCM
            ? absl::StatusOr<smcrypt::SecretData>(
                  smcrypt::Sm2PrivateKeyFromPkcs8(keys.private_der)->ToScalar())
            : absl::StatusOr<smcrypt::SecretData>(absl::UnknownError("unused"));
    for (size_t n : {size_t{0}, size_t{1}, size_t{512}, kMiB}) {
      SCOPED_TRACE(absl::StrCat(v1::Algorithm_Name(alg), " ", n, " bytes"));
      const std::string pt = RandomBytes(rng, n);
      Result sealed = Seal(alg, Inline(keys.public_der), pt, "info");
      ASSERT_TRUE(sealed.status.ok()) << sealed.status.error_message();
      ASSERT_EQ(sealed.data.size(), n + 88);
      EXPECT_EQ(sealed.data.substr(0, 7), Header(alg));
      EXPECT_EQ(sealed.data[7], '\x04');
      Result opened = Open(alg, Inline(keys.private_der), sealed.data, "info");
      ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
      EXPECT_EQ(opened.data, pt);
      // The documented layout: enc at 7, Seal at seq 0 with the header as aad.
      if (scalar.ok()) {
        auto ctx = smcrypt::HpkeContext::SetupBaseR(suite, sealed.data.substr(7, 65),
                                                    smcrypt::SecretDataAsStringView(*scalar),
                                                    "info");
        ASSERT_TRUE(ctx.ok());
        auto direct = (*ctx)->Open(sealed.data.substr(0, 7), sealed.data.substr(72));
        ASSERT_TRUE(direct.ok()) << direct.status();
        EXPECT_EQ(*direct, pt);
      }
    }
    // Key encodings: raw point, PEM public key; PEM private key.
    for (const std::string& pub :
         {RawPoint(keys.public_der), smcrypt::PemEncode("PUBLIC KEY", keys.public_der)}) {
      Result sealed = Seal(alg, Inline(pub), "encodings");
      ASSERT_TRUE(sealed.status.ok()) << sealed.status.error_message();
      Result opened =
          Open(alg, Inline(smcrypt::PemEncode("PRIVATE KEY", keys.private_der)), sealed.data);
      ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
      EXPECT_EQ(opened.data, "encodings");
    }
  }
}

TEST_F(HybridTest, GenerateKeyPairThenRoundTrip) {
  for (v1::Algorithm alg : kSuites) {
    SCOPED_TRACE(v1::Algorithm_Name(alg));
    grpc::ClientContext ctx;
    v1::GenerateKeyPairRequest req;
    req.set_algorithm(alg);
    v1::GenerateKeyPairResponse kp;
    grpc::Status s = stub_->GenerateKeyPair(&ctx, req, &kp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_FALSE(kp.private_key_der().empty());
    Result sealed = Seal(alg, Inline(kp.public_key_pem()), "fresh key", "i");
    ASSERT_TRUE(sealed.status.ok()) << sealed.status.error_message();
    Result opened = Open(alg, Inline(kp.private_key_der()), sealed.data, "i");
    ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
    EXPECT_EQ(opened.data, "fresh key");
    // The other suite's key is of another family.
    const v1::Algorithm other =
        alg == v1::HPKE_SM2_SM3_SM4GCM ? v1::HPKE_P256_SHA256_AES128GCM : v1::HPKE_SM2_SM3_SM4GCM;
    EXPECT_EQ(Seal(other, Inline(kp.public_key_der()), "x").status.error_code(),
              StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(Open(other, Inline(kp.private_key_der()), sealed.data).status.error_code(),
              StatusCode::FAILED_PRECONDITION);
  }
}

TEST_F(HybridTest, KeyringKeys) {
  const v1::Algorithm sm = v1::HPKE_SM2_SM3_SM4GCM;
  // A PRIVATE KEY entry seals with its public half and opens; a PUBLIC KEY entry seals.
  for (const char* id : {"hpke-sm2", "hpke-sm2-pub"}) {
    Result sealed = Seal(sm, KeyId(id), "keyring", "ctx");
    ASSERT_TRUE(sealed.status.ok()) << id << ": " << sealed.status.error_message();
    Result opened = Open(sm, KeyId("hpke-sm2"), sealed.data, "ctx");
    ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
    EXPECT_EQ(opened.data, "keyring");
  }
  Result sealed = Seal(v1::HPKE_P256_SHA256_AES128GCM, KeyId("hpke-p256"), "p256");
  ASSERT_TRUE(sealed.status.ok()) << sealed.status.error_message();
  Result opened = Open(v1::HPKE_P256_SHA256_AES128GCM, KeyId("hpke-p256"), sealed.data);
  ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
  EXPECT_EQ(opened.data, "p256");
  // Wrong family, public key for decryption, unknown id, wrong algorithm, no key.
  EXPECT_EQ(Seal(v1::HPKE_P256_SHA256_AES128GCM, KeyId("hpke-sm2"), "x").status.error_code(),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Seal(sm, KeyId("sm4"), "x").status.error_code(), StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Open(sm, KeyId("hpke-sm2-pub"), sealed.data).status.error_code(),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Open(sm, KeyId("nope"), sealed.data).status.error_code(), StatusCode::NOT_FOUND);
  EXPECT_EQ(Seal(v1::SM4_GCM, KeyId("sm4"), "x").status.error_code(),
            StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Seal(sm, v1::KeyRef(), "x").status.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Seal(sm, Inline("not a key"), "x").status.error_code(),
            StatusCode::INVALID_ARGUMENT);
}

TEST_F(HybridTest, InlinePrivateKeysDenied) {
  Smcryptd deny;
  ASSERT_TRUE(deny.Start({"--inline_private_keys=deny", "--keys_dir=" + *dir_ + "/keys"}))
      << deny.log();
  auto stub = deny.Stub();
  v1::HybridEncryptRequest req;
  req.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
  *req.mutable_key() = Inline(sm2_->public_der);
  req.set_plaintext("policy");
  v1::HybridEncryptResponse sealed;
  grpc::ClientContext c1;
  ASSERT_TRUE(stub->HybridEncrypt(&c1, req, &sealed).ok());  // public keys stay allowed
  v1::HybridDecryptRequest dreq;
  dreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
  *dreq.mutable_key() = Inline(sm2_->private_der);
  dreq.set_ciphertext(sealed.ciphertext());
  v1::HybridDecryptResponse opened;
  grpc::ClientContext c2;
  EXPECT_EQ(stub->HybridDecrypt(&c2, dreq, &opened).error_code(), StatusCode::PERMISSION_DENIED);
  *dreq.mutable_key() = KeyId("hpke-sm2");
  grpc::ClientContext c3;
  ASSERT_TRUE(stub->HybridDecrypt(&c3, dreq, &opened).ok());
  EXPECT_EQ(opened.plaintext(), "policy");
}

TEST_F(HybridTest, UnaryTamperingIsRejected) {
  for (v1::Algorithm alg : kSuites) {
    SCOPED_TRACE(v1::Algorithm_Name(alg));
    const Keys& keys = KeysFor(alg);
    const v1::KeyRef sk = Inline(keys.private_der);
    Result sealed = Seal(alg, Inline(keys.public_der), "attack at dawn", "info");
    ASSERT_TRUE(sealed.status.ok());
    const std::string& ct = sealed.data;
    auto expect_failed = [&](const std::string& bad, const std::string& info, const char* what) {
      Result r = Open(alg, sk, bad, info);
      EXPECT_EQ(r.status.error_code(), StatusCode::INVALID_ARGUMENT) << what;
      EXPECT_EQ(r.status.error_message(), "decryption failed") << what;
      EXPECT_TRUE(r.data.empty()) << what;
    };
    auto flip = [&](size_t byte, int bit) {
      std::string b = ct;
      b[byte] ^= static_cast<char>(1 << bit);
      return b;
    };
    expect_failed(flip(7 + 40, 3), "info", "enc");
    expect_failed(flip(7, 1), "info", "enc prefix");
    expect_failed(flip(72, 0), "info", "ciphertext");
    expect_failed(flip(ct.size() - 1, 7), "info", "tag");
    expect_failed(ct, "inf0", "info");
    expect_failed(ct, "", "no info");
    // Header (the AEAD aad): a precise InvalidArgument naming the field.
    Result r = Open(alg, sk, flip(0, 1), "info");
    EXPECT_EQ(r.status.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(r.status.error_message(), HasSubstr("version"));
    r = Open(alg, sk, flip(2, 0), "info");
    EXPECT_EQ(r.status.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(r.status.error_message(), HasSubstr("kem_id: expected"));
    r = Open(alg, sk, flip(6, 0), "info");
    EXPECT_THAT(r.status.error_message(), HasSubstr("aead_id: expected"));
    r = Open(alg, sk, ct.substr(0, 87), "info");
    EXPECT_EQ(r.status.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(r.status.error_message(), HasSubstr("88"));
    // A ciphertext of the other suite names the mismatch too.
    const v1::Algorithm other =
        alg == v1::HPKE_SM2_SM3_SM4GCM ? v1::HPKE_P256_SHA256_AES128GCM : v1::HPKE_SM2_SM3_SM4GCM;
    r = Open(other, Inline(KeysFor(other).private_der), ct, "info");
    EXPECT_EQ(r.status.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(r.status.error_message(), HasSubstr("kem_id: expected"));
    // The untouched ciphertext still opens (the checks above are not vacuous).
    EXPECT_TRUE(Open(alg, sk, ct, "info").status.ok());
  }
}

// ---- HybridEncryptBatch -------------------------------------------------------------------

// HybridEncryptBatch of 320 items (two 256-item chunks in the server): both suites,
// keyring keys (PRIVATE KEY, PUBLIC KEY) and inline keys (SPKI DER, raw point), with bad
// items in both chunks: a key of the other family (FAILED_PRECONDITION), a symmetric key,
// a symmetric algorithm and no algorithm (INVALID_ARGUMENT). Each OK item opens with the
// unary HybridDecrypt to its plaintext under its info and starts with its suite's header;
// each bad item carries exactly the status the unary HybridEncrypt gives, and its
// neighbours still succeed. The RPC is counted in grpc_server_handled_total.
TEST_F(HybridTest, BatchOverTwoChunksOpensWithUnaryDecrypt) {
  const v1::Algorithm sm = v1::HPKE_SM2_SM3_SM4GCM;
  const v1::Algorithm p256 = v1::HPKE_P256_SHA256_AES128GCM;
  struct Case {
    v1::Algorithm alg;
    v1::KeyRef key;
  };
  const std::vector<Case> good = {
      {sm, KeyId("hpke-sm2")},          {sm, KeyId("hpke-sm2-pub")},
      {sm, Inline(sm2_->public_der)},   {sm, Inline(RawPoint(sm2_->public_der))},
      {p256, KeyId("hpke-p256")},       {p256, Inline(p256_->public_der)},
  };
  const std::map<int, Case> bad = {
      {7, {p256, KeyId("hpke-sm2")}},         // SM2 key for the P-256 suite
      {100, {sm, Inline(p256_->public_der)}},  // P-256 key for the SM suite
      {255, {sm, KeyId("sm4")}},              // last item of the first chunk
      {256, {v1::SM4_GCM, KeyId("sm4")}},     // first item of the second chunk
      {300, {v1::ALGORITHM_UNSPECIFIED, KeyId("hpke-sm2")}},
      {319, {p256, KeyId("hpke-sm2")}},
  };
  std::mt19937_64 rng(TestSeed());
  const int n = 320;
  v1::HybridEncryptBatchRequest req;
  for (int i = 0; i < n; ++i) {
    auto it = bad.find(i);
    const Case& c = it != bad.end() ? it->second : good[i % good.size()];
    v1::HybridEncryptRequest* item = req.add_items();
    item->set_algorithm(c.alg);
    *item->mutable_key() = c.key;
    item->set_plaintext(RandomBytes(rng, i == 0 ? 0 : rng() % 200));
    item->set_info(RandomBytes(rng, rng() % 16));
  }
  v1::HybridEncryptBatchResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub_->HybridEncryptBatch(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.results_size(), n);
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    const v1::HybridEncryptRequest& item = req.items(i);
    const v1::HybridEncryptBatchResult& r = resp.results(i);
    if (bad.count(i) != 0) {
      Result single = Seal(item.algorithm(), item.key(), item.plaintext(), item.info());
      ASSERT_FALSE(single.status.ok());
      EXPECT_EQ(r.status().code(), static_cast<int>(single.status.error_code()));
      EXPECT_EQ(r.status().message(), single.status.error_message());
      EXPECT_TRUE(r.ciphertext().empty());
      continue;
    }
    ASSERT_EQ(r.status().code(), 0) << r.status().message();
    ASSERT_EQ(r.ciphertext().size(), item.plaintext().size() + 88);
    EXPECT_EQ(r.ciphertext().substr(0, 7), Header(item.algorithm()));
    const char* id = item.algorithm() == sm ? "hpke-sm2" : "hpke-p256";
    Result opened = Open(item.algorithm(), KeyId(id), r.ciphertext(), item.info());
    ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
    EXPECT_EQ(opened.data, item.plaintext());
  }
  EXPECT_EQ(resp.results(7).status().code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_EQ(resp.results(100).status().code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_EQ(resp.results(319).status().code(), static_cast<int>(StatusCode::FAILED_PRECONDITION));
  EXPECT_EQ(resp.results(256).status().code(), static_cast<int>(StatusCode::INVALID_ARGUMENT));
  EXPECT_THAT(resp.results(300).status().message(), HasSubstr("algorithm is required"));

  const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_GE(MetricValue(metrics,
                        "grpc_server_handled_total{grpc_code=\"OK\",grpc_method=\"HybridEncryptBatch\","
                        "grpc_service=\"smcrypt.v1.CryptoService\",grpc_type=\"unary\"}"),
            1.0);
}

// An empty batch is OK with no results; more than 65,536 items is INVALID_ARGUMENT for
// the whole call.
TEST_F(HybridTest, BatchSizeLimits) {
  v1::HybridEncryptBatchResponse resp;
  {
    grpc::ClientContext ctx;
    grpc::Status s = stub_->HybridEncryptBatch(&ctx, v1::HybridEncryptBatchRequest(), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.results_size(), 0);
  }
  v1::HybridEncryptBatchRequest big;
  for (int i = 0; i < 65537; ++i) big.add_items();
  grpc::ClientContext ctx;
  grpc::Status s = stub_->HybridEncryptBatch(&ctx, big, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("at most 65536 items, got 65537"));
}

// Under --access_policy each item is checked on its own (operation encrypt): items with
// the allowed key_id succeed, the others get PERMISSION_DENIED in their own status.
TEST_F(HybridTest, BatchItemsDeniedByPolicyAlone) {
  const std::string policy = *dir_ + "/hybrid-policy.txt";
  std::ofstream(policy) << "allow encrypt,decrypt hpke-sm2 anonymous\n";
  fs::permissions(policy, fs::perms::owner_read | fs::perms::owner_write);
  Smcryptd server;
  ASSERT_TRUE(server.Start({"--access_policy=" + policy, "--keys_dir=" + *dir_ + "/keys"}))
      << server.log();
  auto stub = server.Stub();
  v1::HybridEncryptBatchRequest req;
  for (int i = 0; i < 6; ++i) {
    v1::HybridEncryptRequest* item = req.add_items();
    item->set_algorithm(i % 3 == 1 ? v1::HPKE_P256_SHA256_AES128GCM : v1::HPKE_SM2_SM3_SM4GCM);
    *item->mutable_key() = i % 3 == 0   ? KeyId("hpke-sm2")
                           : i % 3 == 1 ? KeyId("hpke-p256")
                                        : Inline(sm2_->public_der);
    item->set_plaintext(absl::StrCat("policy ", i));
  }
  v1::HybridEncryptBatchResponse resp;
  grpc::ClientContext ctx;
  grpc::Status s = stub->HybridEncryptBatch(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.results_size(), 6);
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    const v1::HybridEncryptBatchResult& r = resp.results(i);
    if (i % 3 != 0) {
      EXPECT_EQ(r.status().code(), static_cast<int>(StatusCode::PERMISSION_DENIED));
      EXPECT_THAT(r.status().message(), HasSubstr("may not encrypt"));
      EXPECT_TRUE(r.ciphertext().empty());
      continue;
    }
    ASSERT_EQ(r.status().code(), 0) << r.status().message();
    v1::HybridDecryptRequest dreq;
    dreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    *dreq.mutable_key() = KeyId("hpke-sm2");
    dreq.set_ciphertext(r.ciphertext());
    v1::HybridDecryptResponse opened;
    grpc::ClientContext dctx;
    ASSERT_TRUE(stub->HybridDecrypt(&dctx, dreq, &opened).ok());
    EXPECT_EQ(opened.plaintext(), absl::StrCat("policy ", i));
  }
}

// ---- Streams ----------------------------------------------------------------------------

// Chunks splits a stream (after header ‖ enc) into its chunks (flag ‖ length ‖ body).
std::vector<std::string> Chunks(const std::string& stream) {
  std::vector<std::string> out;
  size_t pos = kPrefix;
  while (pos + 5 <= stream.size()) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(stream.data()) + pos;
    const size_t n = (size_t{p[1]} << 24) | (size_t{p[2]} << 16) | (size_t{p[3]} << 8) | p[4];
    out.push_back(stream.substr(pos, 5 + n));
    pos += 5 + n;
  }
  EXPECT_EQ(pos, stream.size());
  return out;
}

std::string Join(const std::string& prefix, const std::vector<std::string>& chunks) {
  std::string out = prefix;
  for (const std::string& c : chunks) out += c;
  return out;
}

TEST_F(HybridTest, StreamFormatMatchesTheProto) {
  std::mt19937_64 rng(TestSeed());
  for (v1::Algorithm alg : kSuites) {
    SCOPED_TRACE(v1::Algorithm_Name(alg));
    const Keys& keys = KeysFor(alg);
    const std::vector<std::string> pts = {RandomBytes(rng, 100), "", RandomBytes(rng, 1),
                                          RandomBytes(rng, kMiB)};
    Result sealed = SealStream(alg, Inline(keys.public_der), pts, "info", "aad");
    ASSERT_TRUE(sealed.status.ok()) << sealed.status.error_message();
    // First response header ‖ enc; one response per non-empty chunk; an empty final chunk.
    ASSERT_EQ(sealed.pieces.size(), 5u);
    EXPECT_EQ(sealed.pieces[0].size(), kPrefix);
    EXPECT_EQ(sealed.pieces[0].substr(0, 7), Header(alg));
    std::vector<std::string> chunks = Chunks(sealed.data);
    ASSERT_EQ(chunks.size(), 4u);
    const std::vector<std::string> want = {pts[0], pts[2], pts[3], ""};
    // Each chunk i opens on one recipient context at sequence i with
    // aad = header ‖ flag ‖ aad (the documented layout).
    if (alg == v1::HPKE_SM2_SM3_SM4GCM) {
      auto scalar = smcrypt::Sm2PrivateKeyFromPkcs8(keys.private_der)->ToScalar();
      auto ctx = smcrypt::HpkeContext::SetupBaseR(smcrypt::HpkeSuite::kSm2Sm3Sm4Gcm,
                                                  sealed.data.substr(7, 65),
                                                  smcrypt::SecretDataAsStringView(scalar), "info");
      ASSERT_TRUE(ctx.ok());
      for (size_t i = 0; i < chunks.size(); ++i) {
        const char flag = i + 1 == chunks.size() ? '\x01' : '\x00';
        EXPECT_EQ(chunks[i][0], flag);
        auto pt = (*ctx)->Open(absl::StrCat(Header(alg), std::string(1, flag), "aad"),
                               chunks[i].substr(5));
        ASSERT_TRUE(pt.ok()) << i << ": " << pt.status();
        EXPECT_EQ(*pt, want[i]) << i;
      }
    }
    // The server opens it in pieces of any size, not aligned to chunks.
    for (size_t piece : {size_t{1} << 20, size_t{7}, size_t{65537}}) {
      if (piece == 7 && alg != v1::HPKE_SM2_SM3_SM4GCM) continue;
      Result opened = OpenStream(alg, Inline(keys.private_der), sealed.data, piece, "info", "aad");
      ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
      EXPECT_EQ(opened.data, pts[0] + pts[2] + pts[3]) << piece;
    }
  }
  // An empty stream: header ‖ enc ‖ the final chunk only.
  Result empty = SealStream(v1::HPKE_SM2_SM3_SM4GCM, KeyId("hpke-sm2"), {}, "", "");
  ASSERT_TRUE(empty.status.ok()) << empty.status.error_message();
  EXPECT_EQ(empty.data.size(), kPrefix + 5 + 16);
  Result opened = OpenStream(v1::HPKE_SM2_SM3_SM4GCM, KeyId("hpke-sm2"), empty.data, 1000, "", "");
  ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
  EXPECT_EQ(opened.data, "");
}

TEST_F(HybridTest, StreamLargeRoundTrip) {
  // 64 MiB in 1 MiB chunks through both streams of the SM suite, with a keyring key.
  std::mt19937_64 rng(TestSeed());
  const size_t total = 64 * kMiB;
  std::vector<std::string> pts;
  for (size_t i = 0; i < total / kMiB; ++i) pts.push_back(RandomBytes(rng, kMiB));
  const auto start = std::chrono::steady_clock::now();
  Result sealed = SealStream(v1::HPKE_SM2_SM3_SM4GCM, KeyId("hpke-sm2"), pts, "big", "");
  ASSERT_TRUE(sealed.status.ok()) << sealed.status.error_message();
  EXPECT_EQ(sealed.data.size(), kPrefix + (total / kMiB + 1) * 21 + total);
  Result opened =
      OpenStream(v1::HPKE_SM2_SM3_SM4GCM, KeyId("hpke-sm2"), sealed.data, kMiB - 3, "big", "");
  ASSERT_TRUE(opened.status.ok()) << opened.status.error_message();
  ASSERT_EQ(opened.data.size(), total);
  for (size_t i = 0; i < pts.size(); ++i) {
    ASSERT_EQ(opened.data.compare(i * kMiB, kMiB, pts[i]), 0) << "chunk " << i;
  }
  std::printf("64 MiB HPKE-SM2-SM3-SM4GCM stream round trip: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  // Bytes processed are counted under the suite's algorithm label.
  const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_GE(MetricValue(metrics, "smcrypt_bytes_processed_total{algorithm=\"HPKE-SM2-SM3-SM4GCM\","
                                 "operation=\"encrypt\"}"),
            static_cast<double>(total));
  EXPECT_GE(MetricValue(metrics, "smcrypt_bytes_processed_total{algorithm=\"HPKE-SM2-SM3-SM4GCM\","
                                 "operation=\"decrypt\"}"),
            static_cast<double>(total));
}

TEST_F(HybridTest, StreamTamperingIsRejected) {
  std::mt19937_64 rng(TestSeed());
  const v1::Algorithm alg = v1::HPKE_SM2_SM3_SM4GCM;
  const std::vector<std::string> pts = {RandomBytes(rng, 1000), RandomBytes(rng, 2000),
                                        RandomBytes(rng, 3000), RandomBytes(rng, 4000)};
  Result sealed = SealStream(alg, KeyId("hpke-sm2"), pts, "info", "aad");
  ASSERT_TRUE(sealed.status.ok()) << sealed.status.error_message();
  const std::string prefix = sealed.data.substr(0, kPrefix);
  const std::vector<std::string> chunks = Chunks(sealed.data);
  ASSERT_EQ(chunks.size(), 5u);  // four data chunks and the final one

  // `released` bounds the plaintext the server may hand out before the failure: whole,
  // verified chunks before the first bad one. (How many of them arrive depends on how the
  // input is split: an error ends the stream without flushing queued responses.)
  auto expect = [&](const std::string& stream, StatusCode code, const std::string& message,
                    const std::string& released, const char* what,
                    const std::string& info = "info", const std::string& aad = "aad") {
    for (size_t piece : {size_t{100000}, size_t{999}, size_t{1}}) {
      if (piece == 1 && stream.size() > 20000) continue;
      Result r = OpenStream(alg, KeyId("hpke-sm2"), stream, piece, info, aad);
      EXPECT_EQ(r.status.error_code(), code) << what << " / " << r.status.error_message();
      EXPECT_THAT(r.status.error_message(), HasSubstr(message)) << what;
      std::string prefix_of_chunks;
      bool whole = r.data.empty();
      for (const std::string& pt : pts) {
        prefix_of_chunks += pt;
        whole = whole || r.data == prefix_of_chunks;
      }
      EXPECT_TRUE(whole) << what << ": released " << r.data.size() << " bytes";
      EXPECT_LE(r.data.size(), released.size()) << what;
      EXPECT_EQ(released.compare(0, r.data.size(), r.data), 0) << what;
    }
  };
  auto with = [&](std::vector<std::string> c) { return Join(prefix, c); };
  const std::string failed = "decryption failed";

  // Untouched: opens (so the cases below are not vacuous).
  Result ok = OpenStream(alg, KeyId("hpke-sm2"), sealed.data, 4096, "info", "aad");
  ASSERT_TRUE(ok.status.ok()) << ok.status.error_message();
  EXPECT_EQ(ok.data, pts[0] + pts[1] + pts[2] + pts[3]);

  std::string s = sealed.data;
  s[7 + 30] ^= 0x10;
  expect(s, StatusCode::INVALID_ARGUMENT, failed, "", "enc");
  s = sealed.data;
  s[kPrefix + chunks[0].size() + 5 + 10] ^= 0x01;  // chunk 1 ciphertext
  expect(s, StatusCode::INVALID_ARGUMENT, failed, pts[0], "ciphertext of chunk 1");
  s = sealed.data;
  s[kPrefix + chunks[0].size() + chunks[1].size() - 1] ^= 0x80;  // chunk 1 tag
  expect(s, StatusCode::INVALID_ARGUMENT, failed, pts[0], "tag of chunk 1");
  s = sealed.data;
  s[kPrefix] = '\x01';  // chunk 0 claims to be final
  expect(s, StatusCode::INVALID_ARGUMENT, failed, "", "flag of chunk 0");
  expect(sealed.data, StatusCode::INVALID_ARGUMENT, failed, "", "wrong aad", "info", "aaD");
  expect(sealed.data, StatusCode::INVALID_ARGUMENT, failed, "", "no aad", "info", "");
  expect(sealed.data, StatusCode::INVALID_ARGUMENT, failed, "", "wrong info", "infO", "aad");
  expect(with({chunks[0], chunks[2], chunks[1], chunks[3], chunks[4]}),
         StatusCode::INVALID_ARGUMENT, failed, pts[0], "swapped chunks 1 and 2");
  expect(with({chunks[0], chunks[2], chunks[3], chunks[4]}), StatusCode::INVALID_ARGUMENT, failed,
         pts[0], "dropped chunk 1");
  expect(with({chunks[0], chunks[1], chunks[1], chunks[2], chunks[3], chunks[4]}),
         StatusCode::INVALID_ARGUMENT, failed, pts[0] + pts[1], "repeated chunk 1");
  expect(with({chunks[0], chunks[1], chunks[2], chunks[3], chunks[3], chunks[4]}),
         StatusCode::INVALID_ARGUMENT, failed, pts[0] + pts[1] + pts[2] + pts[3],
         "repeated last data chunk");
  expect(with({chunks[0], chunks[1], chunks[2], chunks[3]}), StatusCode::INVALID_ARGUMENT,
         "truncated", pts[0] + pts[1] + pts[2] + pts[3], "dropped final chunk");
  expect(with({chunks[0], chunks[1], chunks[2], chunks[3], chunks[4].substr(0, 10)}),
         StatusCode::INVALID_ARGUMENT, "truncated", pts[0] + pts[1] + pts[2] + pts[3],
         "cut final chunk");
  expect(with({chunks[0], chunks[1], chunks[2], chunks[3], chunks[4], chunks[4]}),
         StatusCode::INVALID_ARGUMENT, "after the final chunk", pts[0] + pts[1] + pts[2] + pts[3],
         "data after the final chunk");
  expect(prefix.substr(0, 50), StatusCode::INVALID_ARGUMENT, "header and enc", "", "short");
  s = sealed.data;
  s[2] ^= 0x01;
  expect(s, StatusCode::INVALID_ARGUMENT, "kem_id: expected 0xff10", "", "kem_id");
  s = sealed.data;
  s[kPrefix + 1] = '\x7f';  // chunk 0 length far above the limit
  expect(s, StatusCode::INVALID_ARGUMENT, "length: expected 16 to 1048592", "", "chunk length");
  s = sealed.data;
  s[kPrefix] = '\x02';
  expect(s, StatusCode::INVALID_ARGUMENT, "flag: expected 0x00 or 0x01", "", "flag value");
  // The other suite reads the header and names the mismatch.
  {
    Result r = OpenStream(v1::HPKE_P256_SHA256_AES128GCM, KeyId("hpke-p256"), sealed.data, 4096,
                          "info", "aad");
    EXPECT_EQ(r.status.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(r.status.error_message(), HasSubstr("kem_id: expected 0x0010"));
  }
}

TEST_F(HybridTest, StreamMisuse) {
  const v1::Algorithm alg = v1::HPKE_SM2_SM3_SM4GCM;
  // A plaintext message above 1 MiB.
  Result r = SealStream(alg, KeyId("hpke-sm2"), {std::string(kMiB + 1, 'x')}, "", "");
  EXPECT_EQ(r.status.error_code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(r.status.error_message(), HasSubstr("at most 1048576"));
  // Wrong family, public key for decryption, symmetric algorithm.
  EXPECT_EQ(SealStream(v1::HPKE_P256_SHA256_AES128GCM, KeyId("hpke-sm2"), {"x"}, "", "")
                .status.error_code(),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(OpenStream(alg, KeyId("hpke-sm2-pub"), "x", 1, "", "").status.error_code(),
            StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(SealStream(v1::SM4_GCM, KeyId("sm4"), {"x"}, "", "").status.error_code(),
            StatusCode::INVALID_ARGUMENT);
  // No params first; params twice.
  {
    grpc::ClientContext ctx;
    auto stream = stub_->HybridEncryptStream(&ctx);
    v1::HybridEncryptStreamRequest req;
    req.set_plaintext("no params");
    stream->Write(req);
    stream->WritesDone();
    v1::HybridEncryptStreamResponse resp;
    while (stream->Read(&resp)) {
    }
    grpc::Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("must carry params"));
  }
  {
    grpc::ClientContext ctx;
    auto stream = stub_->HybridDecryptStream(&ctx);
    v1::HybridDecryptStreamRequest req;
    req.mutable_params()->set_algorithm(alg);
    *req.mutable_params()->mutable_key() = KeyId("hpke-sm2");
    stream->Write(req);
    stream->Write(req);
    stream->WritesDone();
    v1::HybridDecryptStreamResponse resp;
    while (stream->Read(&resp)) {
    }
    grpc::Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("first message"));
  }
}

}  // namespace
