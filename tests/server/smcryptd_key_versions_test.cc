// Key versions against the real smcryptd (label integration): rotation by adding a
// `<key_id>.v<n>.pem` file and a SIGHUP reload, requests naming a version or not, a
// minimum version, GetPublicKey's version list, the audit line's version, and the
// responses of callers that use no version staying byte for byte what they were.
// Every wait polls with a deadline.
#include <signal.h>

#include <chrono>
#include <functional>
#include <memory>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
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
using ::testing::HasSubstr;
using ::testing::Not;

using Stub = v1::CryptoService::Stub;
using Files = std::vector<std::pair<std::string, std::string>>;

struct Sm2Key {
  std::string private_pem;
  std::string public_der;
};

Sm2Key NewSm2Key() {
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kSm2);
  EXPECT_TRUE(kp.ok()) << kp.status();
  return {PemEncode("PRIVATE KEY", SecretDataAsStringView(kp->private_key_der)),
          kp->public_key_der};
}

const std::string kNonce(12, 'n');
const std::string kSm4V1(16, '1');
const std::string kSm4V2(16, '2');

void SetKey(v1::KeyRef* ref, const std::string& id, uint32_t version) {
  ref->set_key_id(id);
  if (version != 0) ref->set_key_version(version);
}

grpc::Status Encrypt(Stub* stub, const std::string& id, uint32_t version,
                     v1::EncryptResponse* resp) {
  v1::EncryptRequest req;
  req.set_algorithm(v1::SM4_GCM);
  SetKey(req.mutable_key(), id, version);
  req.set_plaintext("rotate me");
  req.set_nonce(kNonce);
  auto ctx = Ctx(5);
  return stub->Encrypt(ctx.get(), req, resp);
}

grpc::Status EncryptInline(Stub* stub, const std::string& key, v1::EncryptResponse* resp) {
  v1::EncryptRequest req;
  req.set_algorithm(v1::SM4_GCM);
  req.mutable_key()->set_inline_key(key);
  req.set_plaintext("rotate me");
  req.set_nonce(kNonce);
  auto ctx = Ctx(5);
  return stub->Encrypt(ctx.get(), req, resp);
}

grpc::Status Decrypt(Stub* stub, const std::string& id, uint32_t version,
                     const v1::EncryptResponse& ct, v1::DecryptResponse* resp) {
  v1::DecryptRequest req;
  req.set_algorithm(v1::SM4_GCM);
  SetKey(req.mutable_key(), id, version);
  req.set_nonce(ct.nonce());
  req.set_ciphertext(ct.ciphertext());
  req.set_tag(ct.tag());
  auto ctx = Ctx(5);
  return stub->Decrypt(ctx.get(), req, resp);
}

grpc::Status Sign(Stub* stub, const std::string& id, uint32_t version, v1::SignResponse* resp) {
  v1::SignRequest req;
  req.set_algorithm(v1::SM2);
  SetKey(req.mutable_key(), id, version);
  req.set_data("signed message");
  auto ctx = Ctx(5);
  return stub->Sign(ctx.get(), req, resp);
}

// Verify returns the answer, or -1 when the call failed.
int Verify(Stub* stub, const std::string& id, uint32_t version, const std::string& sig) {
  v1::VerifyRequest req;
  req.set_algorithm(v1::SM2);
  SetKey(req.mutable_key(), id, version);
  req.set_data("signed message");
  req.set_signature(sig);
  v1::VerifyResponse resp;
  auto ctx = Ctx(5);
  if (!stub->Verify(ctx.get(), req, &resp).ok()) return -1;
  return resp.valid() ? 1 : 0;
}

grpc::Status GetPublicKey(Stub* stub, const std::string& id, uint32_t version,
                          v1::GetPublicKeyResponse* resp) {
  v1::GetPublicKeyRequest req;
  req.set_algorithm(v1::SM2);
  SetKey(req.mutable_key(), id, version);
  auto ctx = Ctx(5);
  return stub->GetPublicKey(ctx.get(), req, resp);
}

class SmcryptdKeyVersionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    audit_ = keys_.dir() + "-audit.log";
    files_ = {{"k.pem", PemEncode("SM4 KEY", kSm4V1)}, {"s.pem", s1_.private_pem}};
    keys_.Publish(files_);
    ASSERT_TRUE(server_.Start({"--keys_dir=" + keys_.dir(), "--reload_interval=0",
                               "--audit_log=" + audit_}))
        << server_.log();
    stub_ = server_.Stub();
  }
  void TearDown() override { std::remove(audit_.c_str()); }

  // Reload publishes `files_` and reloads with SIGHUP, waiting for the log line.
  void Reload(const std::string& expect_in_log) {
    keys_.Publish(files_);
    server_.Signal(SIGHUP);
    ASSERT_TRUE(WaitFor([&] { return server_.log().find(expect_in_log) != std::string::npos; }))
        << server_.log();
  }

  SecretVolume keys_;
  std::string audit_;
  Sm2Key s1_ = NewSm2Key();
  Sm2Key s2_ = NewSm2Key();
  Files files_;
  Smcryptd server_;
  std::unique_ptr<Stub> stub_;
};

TEST_F(SmcryptdKeyVersionsTest, CallersWithoutVersionsGetTheSameBytes) {
  // A plain <key_id>.pem named without a version: no key_version in any response, so the
  // bytes equal those of the same operation with the key inline (which never reports
  // one) and of a response made of the fields that existed before key versions.
  v1::EncryptResponse by_id, inline_key;
  ASSERT_TRUE(Encrypt(stub_.get(), "k", 0, &by_id).ok());
  ASSERT_TRUE(EncryptInline(stub_.get(), kSm4V1, &inline_key).ok());
  EXPECT_EQ(by_id.key_version(), 0u);
  EXPECT_EQ(by_id.SerializeAsString(), inline_key.SerializeAsString());
  v1::EncryptResponse old_fields;
  old_fields.set_nonce(by_id.nonce());
  old_fields.set_ciphertext(by_id.ciphertext());
  old_fields.set_tag(by_id.tag());
  EXPECT_EQ(by_id.SerializeAsString(), old_fields.SerializeAsString());

  v1::GetPublicKeyResponse pub;
  ASSERT_TRUE(GetPublicKey(stub_.get(), "s", 0, &pub).ok());
  EXPECT_EQ(pub.versions_size(), 0);
  v1::GetPublicKeyResponse old_pub;
  old_pub.set_public_key_der(s1_.public_der);
  old_pub.set_public_key_pem(PemEncode("PUBLIC KEY", s1_.public_der));
  EXPECT_EQ(pub.SerializeAsString(), old_pub.SerializeAsString());

  v1::SignResponse sig;
  ASSERT_TRUE(Sign(stub_.get(), "s", 0, &sig).ok());
  EXPECT_EQ(sig.key_version(), 0u);
  v1::SignResponse old_sig;
  old_sig.set_signature(sig.signature());
  EXPECT_EQ(sig.SerializeAsString(), old_sig.SerializeAsString());

  // Error messages do not name a version either.
  v1::SignResponse wrong_family;
  grpc::Status s = Sign(stub_.get(), "k", 0, &wrong_family);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "key 'k' is an SM4 key; SM2 needs an SM2 key");

  // Naming the version of a plain key reports it.
  v1::EncryptResponse named;
  ASSERT_TRUE(Encrypt(stub_.get(), "k", 1, &named).ok());
  EXPECT_EQ(named.key_version(), 1u);
  EXPECT_EQ(named.tag(), by_id.tag());

  // The audit lines of calls without versions have no key_version either; the Encrypt
  // that named version 1, the last call, has it (the lines are written in order).
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit_).find("\"key_id\":\"k\",\"key_version\":1,\"status\":\"OK\"") !=
           std::string::npos;
  })) << ReadAll(audit_);
  const std::string audit = ReadAll(audit_);
  EXPECT_THAT(audit, HasSubstr("\"key_id\":\"s\",\"status\":\"OK\""));
  EXPECT_THAT(audit, HasSubstr("\"key_id\":\"k\",\"status\":\"OK\""));
  size_t versions = 0;
  for (size_t at = audit.find("key_version"); at != std::string::npos;
       at = audit.find("key_version", at + 1)) {
    ++versions;
  }
  EXPECT_EQ(versions, 1u) << audit;
}

TEST_F(SmcryptdKeyVersionsTest, RotationMinVersionAndVersionLists) {
  v1::EncryptResponse ct1;
  ASSERT_TRUE(Encrypt(stub_.get(), "k", 0, &ct1).ok());
  v1::SignResponse sig1;
  ASSERT_TRUE(Sign(stub_.get(), "s", 0, &sig1).ok());

  // Rotation: add version 2 of both keys.
  files_.push_back({"k.v2.pem", PemEncode("SM4 KEY", kSm4V2)});
  files_.push_back({"s.v2.pem", s2_.private_pem});
  Reload(": 2 keys (added: k.v2, s.v2)");

  v1::EncryptResponse ct2;
  ASSERT_TRUE(Encrypt(stub_.get(), "k", 0, &ct2).ok());
  EXPECT_EQ(ct2.key_version(), 2u);
  v1::EncryptResponse inline_v2;
  ASSERT_TRUE(EncryptInline(stub_.get(), kSm4V2, &inline_v2).ok());
  EXPECT_EQ(ct2.tag(), inline_v2.tag()) << "the newest is version 2's key";

  // The v1 ciphertext opens naming v1, and naming no version (v2 tried first, then v1;
  // smcryptd_key_trial_test has the trials in full).
  v1::DecryptResponse pt;
  ASSERT_TRUE(Decrypt(stub_.get(), "k", 1, ct1, &pt).ok());
  EXPECT_EQ(pt.plaintext(), "rotate me");
  ASSERT_TRUE(Decrypt(stub_.get(), "k", 0, ct1, &pt).ok());
  EXPECT_EQ(pt.key_version(), 1u);
  ASSERT_TRUE(Decrypt(stub_.get(), "k", 0, ct2, &pt).ok());
  EXPECT_EQ(pt.key_version(), 2u);

  // Unknown version, a .v<n> key_id, a version with an inline key.
  grpc::Status unknown = Encrypt(stub_.get(), "k", 7, &ct2);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(unknown.error_message(), HasSubstr("key 'k' has no version 7"));
  grpc::Status suffixed = Encrypt(stub_.get(), "k.v1", 0, &ct2);
  EXPECT_EQ(suffixed.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(suffixed.error_message(), HasSubstr("send key_id 'k' with key_version 1"));
  {
    v1::EncryptRequest req;
    req.set_algorithm(v1::SM4_GCM);
    req.mutable_key()->set_inline_key(kSm4V1);
    req.mutable_key()->set_key_version(1);
    auto ctx = Ctx(5);
    grpc::Status s = stub_->Encrypt(ctx.get(), req, &ct2);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("key.key_version"));
  }

  // GetPublicKey lists both versions; its old fields describe the newest.
  v1::GetPublicKeyResponse pub;
  ASSERT_TRUE(GetPublicKey(stub_.get(), "s", 0, &pub).ok());
  EXPECT_EQ(pub.public_key_der(), s2_.public_der);
  ASSERT_EQ(pub.versions_size(), 2);
  EXPECT_EQ(pub.versions(0).version(), 1u);
  EXPECT_EQ(pub.versions(0).public_key_der(), s1_.public_der);
  EXPECT_EQ(pub.versions(0).public_key_pem(), PemEncode("PUBLIC KEY", s1_.public_der));
  EXPECT_EQ(pub.versions(1).version(), 2u);
  EXPECT_EQ(pub.versions(1).public_key_der(), s2_.public_der);

  // A v1 signature verifies with v1 and with no version named, not with v2 named.
  EXPECT_EQ(Verify(stub_.get(), "s", 1, sig1.signature()), 1);
  EXPECT_EQ(Verify(stub_.get(), "s", 2, sig1.signature()), 0);
  EXPECT_EQ(Verify(stub_.get(), "s", 0, sig1.signature()), 1);
  v1::SignResponse sig_v1, sig_v2;
  ASSERT_TRUE(Sign(stub_.get(), "s", 1, &sig_v1).ok());
  EXPECT_EQ(sig_v1.key_version(), 1u);
  EXPECT_EQ(Verify(stub_.get(), "s", 1, sig_v1.signature()), 1);
  EXPECT_EQ(Verify(stub_.get(), "s", 2, sig_v1.signature()), 0);
  ASSERT_TRUE(Sign(stub_.get(), "s", 0, &sig_v2).ok());
  EXPECT_EQ(sig_v2.key_version(), 2u);
  EXPECT_EQ(Verify(stub_.get(), "s", 2, sig_v2.signature()), 1);

  // GetPublicKey naming a version returns that version's key: the key a verifier outside
  // smcrypt needs for a signature made with that version.
  for (uint32_t version : {1u, 2u}) {
    const std::string& want = version == 1 ? s1_.public_der : s2_.public_der;
    v1::GetPublicKeyResponse named;
    ASSERT_TRUE(GetPublicKey(stub_.get(), "s", version, &named).ok());
    EXPECT_EQ(named.public_key_der(), want) << "version " << version;
    EXPECT_EQ(named.public_key_pem(), PemEncode("PUBLIC KEY", want));
    EXPECT_EQ(named.versions_size(), 2);
    v1::VerifyRequest req;
    req.set_algorithm(v1::SM2);
    req.mutable_key()->set_inline_key(named.public_key_der());
    req.set_data("signed message");
    req.set_signature(version == 1 ? sig_v1.signature() : sig_v2.signature());
    v1::VerifyResponse resp;
    auto ctx = Ctx(5);
    ASSERT_TRUE(stub_->Verify(ctx.get(), req, &resp).ok());
    EXPECT_TRUE(resp.valid()) << "version " << version;
  }

  // The other reporting responses: PublicKeyEncrypt, HybridEncrypt, the batches and the
  // first response of each encrypting stream.
  {
    v1::PublicKeyEncryptRequest req;
    req.set_algorithm(v1::SM2);
    SetKey(req.mutable_key(), "s", 0);
    req.set_plaintext("x");
    v1::PublicKeyEncryptResponse resp;
    auto ctx = Ctx(5);
    ASSERT_TRUE(stub_->PublicKeyEncrypt(ctx.get(), req, &resp).ok());
    EXPECT_EQ(resp.key_version(), 2u);
  }
  {
    v1::HybridEncryptRequest req;
    req.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    SetKey(req.mutable_key(), "s", 1);
    req.set_plaintext("x");
    v1::HybridEncryptResponse resp;
    auto ctx = Ctx(5);
    ASSERT_TRUE(stub_->HybridEncrypt(ctx.get(), req, &resp).ok());
    EXPECT_EQ(resp.key_version(), 1u);
    v1::HybridDecryptRequest dreq;
    dreq.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    SetKey(dreq.mutable_key(), "s", 1);
    dreq.set_ciphertext(resp.ciphertext());
    v1::HybridDecryptResponse dresp;
    auto dctx = Ctx(5);
    ASSERT_TRUE(stub_->HybridDecrypt(dctx.get(), dreq, &dresp).ok());
    EXPECT_EQ(dresp.plaintext(), "x");
  }
  {
    v1::EncryptBatchRequest req;
    for (uint32_t v : {1u, 0u, 9u}) {
      v1::EncryptRequest* item = req.add_items();
      item->set_algorithm(v1::SM4_GCM);
      SetKey(item->mutable_key(), "k", v);
      item->set_plaintext("b");
    }
    v1::EncryptBatchResponse resp;
    auto ctx = Ctx(5);
    ASSERT_TRUE(stub_->EncryptBatch(ctx.get(), req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 3);
    EXPECT_EQ(resp.results(0).key_version(), 1u);
    EXPECT_EQ(resp.results(1).key_version(), 2u);
    EXPECT_EQ(resp.results(2).status().code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(resp.results(2).key_version(), 0u);
  }
  {
    v1::SignBatchRequest req;
    for (uint32_t v : {2u, 1u}) {
      v1::SignRequest* item = req.add_items();
      item->set_algorithm(v1::SM2);
      SetKey(item->mutable_key(), "s", v);
      item->set_data("signed message");
    }
    v1::SignBatchResponse resp;
    auto ctx = Ctx(5);
    ASSERT_TRUE(stub_->SignBatch(ctx.get(), req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 2);
    EXPECT_EQ(resp.results(0).key_version(), 2u);
    EXPECT_EQ(resp.results(1).key_version(), 1u);
    EXPECT_EQ(Verify(stub_.get(), "s", 1, resp.results(1).signature()), 1);
  }
  {
    auto ctx = Ctx(5);
    auto stream = stub_->EncryptStream(ctx.get());
    v1::EncryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::SM4_GCM);
    SetKey(req.mutable_params()->mutable_key(), "k", 0);
    req.set_plaintext("streamed");
    ASSERT_TRUE(stream->Write(req));
    stream->WritesDone();
    v1::EncryptStreamResponse first;
    ASSERT_TRUE(stream->Read(&first));
    EXPECT_EQ(first.key_version(), 2u);
    v1::EncryptStreamResponse rest;
    while (stream->Read(&rest)) EXPECT_EQ(rest.key_version(), 0u);
    EXPECT_TRUE(stream->Finish().ok());
  }
  {
    auto ctx = Ctx(5);
    auto stream = stub_->HybridEncryptStream(ctx.get());
    v1::HybridEncryptStreamRequest req;
    req.mutable_params()->set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    SetKey(req.mutable_params()->mutable_key(), "s", 0);
    req.set_plaintext("streamed");
    ASSERT_TRUE(stream->Write(req));
    stream->WritesDone();
    v1::HybridEncryptStreamResponse first;
    ASSERT_TRUE(stream->Read(&first));
    EXPECT_EQ(first.key_version(), 2u);
    v1::HybridEncryptStreamResponse rest;
    while (stream->Read(&rest)) {
    }
    EXPECT_TRUE(stream->Finish().ok());
  }

  // The audit line of a signature with a versioned key names the version used.
  EXPECT_TRUE(WaitFor([&] {
    return ReadAll(audit_).find("\"key_id\":\"s\",\"key_version\":2,\"status\":\"OK\"") !=
           std::string::npos;
  })) << ReadAll(audit_);
  EXPECT_THAT(ReadAll(audit_), HasSubstr("\"key_id\":\"s\",\"key_version\":1,\"status\":\"OK\""));

  // min_version 2 retires version 1.
  files_.push_back({"k.min_version", "2\n"});
  files_.push_back({"s.min_version", "2\n"});
  Reload("changed: k.min_version, s.min_version");
  grpc::Status retired = Decrypt(stub_.get(), "k", 1, ct1, &pt);
  EXPECT_EQ(retired.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(retired.error_message(),
              HasSubstr("key 'k' version 1 is below its minimum version 2"));
  EXPECT_EQ(Verify(stub_.get(), "s", 1, sig1.signature()), -1);
  // The audit lines of refused versions name the version asked for.
  v1::SignResponse refused;
  EXPECT_EQ(Sign(stub_.get(), "s", 7, &refused).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Sign(stub_.get(), "s", 1, &refused).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(WaitFor([&] {
    const std::string audit = ReadAll(audit_);
    return audit.find("\"key_id\":\"s\",\"key_version\":7,\"status\":\"NOT_FOUND\"") !=
               std::string::npos &&
           audit.find("\"key_id\":\"s\",\"key_version\":1,"
                      "\"status\":\"FAILED_PRECONDITION\"") != std::string::npos;
  })) << ReadAll(audit_);
  ASSERT_TRUE(Decrypt(stub_.get(), "k", 2, ct2, &pt).ok());
  ASSERT_TRUE(GetPublicKey(stub_.get(), "s", 0, &pub).ok());
  ASSERT_EQ(pub.versions_size(), 1);
  EXPECT_EQ(pub.versions(0).version(), 2u);

  // A minimum above the newest version fails the reload; the keyring stays as it was.
  files_.back() = {"s.min_version", "3"};
  Reload("keyring reload from " + keys_.dir() + " failed");
  EXPECT_THAT(server_.log(), HasSubstr("min_version 3 of key 's' is above its newest version 2"));
  v1::SignResponse still;
  ASSERT_TRUE(Sign(stub_.get(), "s", 0, &still).ok());
  EXPECT_EQ(still.key_version(), 2u);
  EXPECT_TRUE(server_.Alive());
}

// A request the access policy denies is audited with the version it would have used: the
// one named, else the newest of a key with version files.
TEST_F(SmcryptdKeyVersionsTest, PolicyDenialsCarryTheVersion) {
  files_ = {{"s.v1.pem", s1_.private_pem}, {"s.v2.pem", s2_.private_pem}};
  keys_.Publish(files_);
  const std::string policy = keys_.dir() + "-policy.txt";
  {
    std::ofstream f(policy);
    f << "allow hash,info * anonymous\n";
  }
  const std::string audit = keys_.dir() + "-denied-audit.log";
  Smcryptd denying;
  ASSERT_TRUE(denying.Start({"--keys_dir=" + keys_.dir(), "--reload_interval=0",
                             "--access_policy=" + policy, "--audit_log=" + audit}))
      << denying.log();
  auto stub = denying.Stub();
  v1::SignResponse resp;
  EXPECT_EQ(Sign(stub.get(), "s", 0, &resp).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Sign(stub.get(), "s", 1, &resp).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(WaitFor([&] {
    const std::string lines = ReadAll(audit);
    return lines.find("\"key_id\":\"s\",\"key_version\":2,\"status\":\"PERMISSION_DENIED\"") !=
               std::string::npos &&
           lines.find("\"key_id\":\"s\",\"key_version\":1,\"status\":\"PERMISSION_DENIED\"") !=
               std::string::npos;
  })) << ReadAll(audit);
  std::remove(policy.c_str());
  std::remove(audit.c_str());
}

}  // namespace
}  // namespace smcrypt
