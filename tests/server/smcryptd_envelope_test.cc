// Rewrap, RewrapBatch, GenerateDataKey and GenerateDataKeyWithoutPlaintext against the
// real smcryptd (label integration): a ciphertext under version 1 comes back under the
// primary and opens with Decrypt there only; a batch answers each item; wrapped data keys
// open with Decrypt, PublicKeyDecrypt and HybridDecrypt; inline keys are refused where
// the contract says; every use writes an audit line; the access policy's rewrap and
// datakey operations are enforced.
#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
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

using Stub = v1::CryptoService::Stub;

std::string Sm2PrivatePem() {
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
  EXPECT_TRUE(kp.ok()) << kp.status();
  return PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der));
}

v1::KeyRef Key(const std::string& id, uint32_t version = 0) {
  v1::KeyRef k;
  k.set_key_id(id);
  if (version != 0) k.set_key_version(version);
  return k;
}

// The keyring: SM4 key "d" in versions 1 and 2 (2 the primary), one plain AES-256 key
// "a" and one plain SM2 key "m".
class SmcryptdEnvelopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    audit_ = keys_.dir() + "-audit.log";
    keys_.Publish({{"d.v1.pem", PemEncode("SM4 KEY", std::string(16, '1'))},
                   {"d.v2.pem", PemEncode("SM4 KEY", std::string(16, '2'))},
                   {"a.pem", PemEncode("AES KEY", std::string(32, 'a'))},
                   {"m.pem", Sm2PrivatePem()}});
  }
  void TearDown() override { std::remove(audit_.c_str()); }
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--keys_dir=" + keys_.dir(), "--reload_interval=0",
                                     "--audit_log=" + audit_};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.Start(args)) << server_.log();
    stub_ = server_.Stub();
  }

  v1::EncryptResponse EncryptUnder(uint32_t version, const std::string& pt) {
    v1::EncryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = Key("d", version);
    req.set_plaintext(pt);
    req.set_aad("ctx");
    v1::EncryptResponse resp;
    auto ctx = Ctx(10);
    EXPECT_TRUE(stub_->Encrypt(ctx.get(), req, &resp).ok());
    return resp;
  }
  grpc::Status Decrypt(const std::string& id, uint32_t version, const std::string& nonce,
                       const std::string& ct, const std::string& tag, const std::string& aad,
                       v1::DecryptResponse* resp, v1::Algorithm alg = v1::SM4_GCM) {
    v1::DecryptRequest req;
    req.set_algorithm(alg);
    *req.mutable_key() = Key(id, version);
    req.set_nonce(nonce);
    req.set_ciphertext(ct);
    req.set_tag(tag);
    req.set_aad(aad);
    auto ctx = Ctx(10);
    return stub_->Decrypt(ctx.get(), req, resp);
  }
  v1::RewrapRequest RewrapOf(const v1::EncryptResponse& e, uint32_t version) {
    v1::RewrapRequest req;
    req.set_algorithm(v1::SM4_GCM);
    *req.mutable_key() = Key("d", version);
    req.set_ciphertext(e.ciphertext());
    req.set_nonce(e.nonce());
    req.set_tag(e.tag());
    req.set_aad("ctx");
    return req;
  }

  SecretVolume keys_;
  std::string audit_;
  Smcryptd server_;
  std::unique_ptr<Stub> stub_;
};

TEST_F(SmcryptdEnvelopeTest, RewrapSealsUnderThePrimaryWhichAloneOpensIt) {
  Start();
  const v1::EncryptResponse old = EncryptUnder(1, "stored under v1");
  v1::RewrapResponse r;
  auto ctx = Ctx(10);
  ASSERT_TRUE(stub_->Rewrap(ctx.get(), RewrapOf(old, 1), &r).ok());
  EXPECT_EQ(r.source_key_version(), 1u);
  EXPECT_EQ(r.key_version(), 2u);
  EXPECT_EQ(r.nonce().size(), 12u);
  EXPECT_NE(r.nonce(), old.nonce());
  EXPECT_EQ(r.tag().size(), 16u);

  v1::DecryptResponse pt;
  ASSERT_TRUE(Decrypt("d", 2, r.nonce(), r.ciphertext(), r.tag(), "ctx", &pt).ok());
  EXPECT_EQ(pt.plaintext(), "stored under v1");
  EXPECT_EQ(Decrypt("d", 1, r.nonce(), r.ciphertext(), r.tag(), "ctx", &pt).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // Named without a version, a ciphertext under the primary: both versions 2.
  v1::EncryptResponse fresh = EncryptUnder(0, "under the primary");
  v1::RewrapResponse again;
  auto ctx2 = Ctx(10);
  ASSERT_TRUE(stub_->Rewrap(ctx2.get(), RewrapOf(fresh, 0), &again).ok());
  EXPECT_EQ(again.source_key_version(), 2u);
  EXPECT_EQ(again.key_version(), 2u);

  // A tampered tag: DECRYPTION_FAILED, no output.
  v1::RewrapRequest bad = RewrapOf(old, 1);
  bad.mutable_tag()->at(0) ^= 1;
  v1::RewrapResponse none;
  auto ctx3 = Ctx(10);
  grpc::Status s = stub_->Rewrap(ctx3.get(), bad, &none);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "decryption failed");
  EXPECT_TRUE(none.ciphertext().empty());

  // Inline keys are refused.
  v1::RewrapRequest inline_key = RewrapOf(old, 0);
  inline_key.mutable_key()->set_inline_key(std::string(16, '1'));
  auto ctx4 = Ctx(10);
  EXPECT_EQ(stub_->Rewrap(ctx4.get(), inline_key, &none).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // Every use is audited, failures included, with the version that opened (or was named).
  EXPECT_TRUE(WaitFor([&] {
    const std::string lines = ReadAll(audit_);
    return lines.find("\"method\":\"Rewrap\",\"operation\":\"rewrap\"") != std::string::npos &&
           lines.find("\"key_id\":\"d\",\"key_version\":1,\"status\":\"OK\"") !=
               std::string::npos &&
           lines.find("\"key_id\":\"d\",\"key_version\":1,\"status\":\"INVALID_ARGUMENT\"") !=
               std::string::npos;
  })) << ReadAll(audit_);
}

TEST_F(SmcryptdEnvelopeTest, RewrapBatchAnswersEachItem) {
  Start();
  v1::RewrapBatchRequest batch;
  const v1::EncryptResponse a = EncryptUnder(1, "item a");
  const v1::EncryptResponse b = EncryptUnder(1, "item b");
  *batch.add_items() = RewrapOf(a, 1);
  *batch.add_items() = RewrapOf(b, 1);
  batch.mutable_items(1)->set_aad("wrong context");
  *batch.add_items() = RewrapOf(b, 1);
  v1::RewrapBatchResponse resp;
  auto ctx = Ctx(10);
  ASSERT_TRUE(stub_->RewrapBatch(ctx.get(), batch, &resp).ok());
  ASSERT_EQ(resp.results_size(), 3);
  EXPECT_EQ(resp.results(0).status().code(), 0);
  EXPECT_EQ(resp.results(1).status().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(resp.results(1).status().message(), "decryption failed");
  EXPECT_TRUE(resp.results(1).ciphertext().empty());
  EXPECT_EQ(resp.results(2).status().code(), 0);
  for (int i : {0, 2}) {
    const v1::RewrapBatchResult& r = resp.results(i);
    EXPECT_EQ(r.key_version(), 2u);
    EXPECT_EQ(r.source_key_version(), 1u);
    v1::DecryptResponse pt;
    ASSERT_TRUE(Decrypt("d", 2, r.nonce(), r.ciphertext(), r.tag(), "ctx", &pt).ok());
    EXPECT_EQ(pt.plaintext(), i == 0 ? "item a" : "item b");
  }
}

TEST_F(SmcryptdEnvelopeTest, DataKeysOpenWithTheExistingRpcs) {
  Start();
  v1::GenerateDataKeyRequest req;
  req.set_key_spec(v1::DATA_KEY_SPEC_AES_256);
  req.set_algorithm(v1::AES_256_GCM);
  *req.mutable_key() = Key("a");
  req.set_aad("tenant=7");
  v1::GenerateDataKeyResponse dk;
  auto ctx = Ctx(10);
  ASSERT_TRUE(stub_->GenerateDataKey(ctx.get(), req, &dk).ok());
  ASSERT_EQ(dk.plaintext_key().size(), 32u);
  EXPECT_EQ(dk.nonce().size(), 12u);
  EXPECT_EQ(dk.tag().size(), 16u);
  EXPECT_EQ(dk.key_version(), 0u);  // a plain a.pem named without a version
  v1::DecryptResponse unwrapped;
  ASSERT_TRUE(Decrypt("a", 0, dk.nonce(), dk.ciphertext(), dk.tag(), "tenant=7", &unwrapped,
                      v1::AES_256_GCM)
                  .ok());
  EXPECT_EQ(unwrapped.plaintext(), dk.plaintext_key());
  EXPECT_EQ(Decrypt("a", 0, dk.nonce(), dk.ciphertext(), dk.tag(), "tenant=8", &unwrapped,
                    v1::AES_256_GCM)
                .error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // Without the plaintext: the same wrapping, no key.
  v1::GenerateDataKeyWithoutPlaintextRequest wreq;
  ASSERT_TRUE(wreq.ParseFromString(req.SerializeAsString()));  // the same fields
  v1::GenerateDataKeyWithoutPlaintextResponse wrapped_only;
  auto ctx2 = Ctx(10);
  ASSERT_TRUE(stub_->GenerateDataKeyWithoutPlaintext(ctx2.get(), wreq, &wrapped_only).ok());
  // No plaintext_key field on the wire (field 1 of GenerateDataKeyResponse).
  v1::GenerateDataKeyResponse as_with;
  ASSERT_TRUE(as_with.ParseFromString(wrapped_only.SerializeAsString()));
  EXPECT_TRUE(as_with.plaintext_key().empty());
  ASSERT_TRUE(Decrypt("a", 0, wrapped_only.nonce(), wrapped_only.ciphertext(), wrapped_only.tag(),
                      "tenant=7", &unwrapped, v1::AES_256_GCM)
                  .ok());
  EXPECT_EQ(unwrapped.plaintext().size(), 32u);

  // SM2 and HPKE to the keyring SM2 key "m"; SM4-GCM under "d" names version 2.
  req.set_key_spec(v1::DATA_KEY_SPEC_SM4_128);
  req.set_algorithm(v1::SM2);
  req.clear_aad();
  *req.mutable_key() = Key("m");
  auto ctx3 = Ctx(10);
  ASSERT_TRUE(stub_->GenerateDataKey(ctx3.get(), req, &dk).ok());
  v1::PublicKeyDecryptRequest pk;
  pk.set_algorithm(v1::SM2);
  *pk.mutable_key() = Key("m");
  pk.set_ciphertext(dk.ciphertext());
  v1::PublicKeyDecryptResponse pk_out;
  auto ctx4 = Ctx(10);
  ASSERT_TRUE(stub_->PublicKeyDecrypt(ctx4.get(), pk, &pk_out).ok());
  EXPECT_EQ(pk_out.plaintext(), dk.plaintext_key());

  req.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
  req.set_info("dk");
  auto ctx5 = Ctx(10);
  ASSERT_TRUE(stub_->GenerateDataKey(ctx5.get(), req, &dk).ok());
  v1::HybridDecryptRequest hd;
  hd.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
  *hd.mutable_key() = Key("m");
  hd.set_ciphertext(dk.ciphertext());
  hd.set_info("dk");
  v1::HybridDecryptResponse hd_out;
  auto ctx6 = Ctx(10);
  ASSERT_TRUE(stub_->HybridDecrypt(ctx6.get(), hd, &hd_out).ok());
  EXPECT_EQ(hd_out.plaintext(), dk.plaintext_key());

  req.set_algorithm(v1::SM4_GCM);
  req.clear_info();
  *req.mutable_key() = Key("d");
  auto ctx7 = Ctx(10);
  ASSERT_TRUE(stub_->GenerateDataKey(ctx7.get(), req, &dk).ok());
  EXPECT_EQ(dk.key_version(), 2u);

  // Bad requests: no key_spec, a mode that is not GCM, an inline secret key.
  for (auto edit : std::vector<std::function<void(v1::GenerateDataKeyRequest*)>>{
           [](v1::GenerateDataKeyRequest* r) { r->clear_key_spec(); },
           [](v1::GenerateDataKeyRequest* r) { r->set_algorithm(v1::SM4_CBC); },
           [](v1::GenerateDataKeyRequest* r) {
             r->mutable_key()->set_inline_key(std::string(16, 'k'));
           }}) {
    v1::GenerateDataKeyRequest bad = req;
    edit(&bad);
    auto c = Ctx(10);
    EXPECT_EQ(stub_->GenerateDataKey(c.get(), bad, &dk).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  EXPECT_TRUE(WaitFor([&] {
    const std::string lines = ReadAll(audit_);
    return lines.find("\"method\":\"GenerateDataKey\",\"operation\":\"datakey\"") !=
               std::string::npos &&
           lines.find("\"method\":\"GenerateDataKeyWithoutPlaintext\",\"operation\":\"datakey\"") !=
               std::string::npos;
  })) << ReadAll(audit_);
}

TEST_F(SmcryptdEnvelopeTest, AccessPolicyRulesRewrapAndDataKey) {
  const std::string policy = keys_.dir() + "-policy.txt";
  {
    std::ofstream f(policy);
    f << "allow encrypt,decrypt * anonymous\n"
         "allow rewrap d anonymous\n";
  }
  Start({"--access_policy=" + policy});
  const v1::EncryptResponse old = EncryptUnder(1, "policy");
  v1::RewrapResponse r;
  auto ctx = Ctx(10);
  EXPECT_TRUE(stub_->Rewrap(ctx.get(), RewrapOf(old, 1), &r).ok());

  v1::GenerateDataKeyRequest dk;
  dk.set_key_spec(v1::DATA_KEY_SPEC_SM4_128);
  dk.set_algorithm(v1::SM4_GCM);
  *dk.mutable_key() = Key("d");
  v1::GenerateDataKeyResponse dk_out;
  auto ctx2 = Ctx(10);
  EXPECT_EQ(stub_->GenerateDataKey(ctx2.get(), dk, &dk_out).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  auto ctx3 = Ctx(10);
  v1::GenerateDataKeyWithoutPlaintextRequest wdk;
  ASSERT_TRUE(wdk.ParseFromString(dk.SerializeAsString()));
  v1::GenerateDataKeyWithoutPlaintextResponse wdk_out;
  EXPECT_EQ(stub_->GenerateDataKeyWithoutPlaintext(ctx3.get(), wdk, &wdk_out).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // Rewrap of another key: denied; in a batch, that item only.
  v1::RewrapBatchRequest batch;
  *batch.add_items() = RewrapOf(old, 1);
  *batch.add_items() = RewrapOf(old, 1);
  *batch.mutable_items(1)->mutable_key() = Key("a");
  v1::RewrapBatchResponse out;
  auto ctx4 = Ctx(10);
  ASSERT_TRUE(stub_->RewrapBatch(ctx4.get(), batch, &out).ok());
  ASSERT_EQ(out.results_size(), 2);
  EXPECT_EQ(out.results(0).status().code(), 0);
  EXPECT_EQ(out.results(1).status().code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(WaitFor([&] {
    const std::string lines = ReadAll(audit_);
    return lines.find("\"operation\":\"datakey\"") != std::string::npos &&
           lines.find("\"method\":\"RewrapBatch\",\"operation\":\"rewrap\"") !=
               std::string::npos &&
           lines.find("PERMISSION_DENIED") != std::string::npos;
  })) << ReadAll(audit_);
  std::remove(policy.c_str());
}

}  // namespace
}  // namespace smcrypt
