// Integration tests of the KeyExchange stream (SM2 key exchange, GB/T 32918.3-2016 §6)
// against the real smcryptd binary (label integration): the server in each role, with
// and without confirmation, against the core library's Sm2KeyExchange as the peer and
// against a second stream of the same server; keyring and inline keys; every
// out-of-order message, bad point and wrong confirmation value with its exact status; and
// the server still serving afterwards.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm2_key_exchange.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/server/smcryptd_process.h"
#include "tests/testing/test_util.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = ::smcrypt::v1;
using ::smcrypt::Sm2KeyExchange;
using ::smcrypt::Sm2KeyExchangeParams;
using ::smcrypt::Sm2KeyExchangeRole;
using ::smcrypt::Sm2PrivateKey;
using ::smcrypt::testing::Smcryptd;
constexpr auto KeyId = ::smcrypt::testing::KeyIdRef;
constexpr auto Inline = ::smcrypt::testing::InlineKeyRef;
using ::testing::HasSubstr;
using StatusCode = ::grpc::StatusCode;
using Stream = grpc::ClientReaderWriter<v1::KeyExchangeRequest, v1::KeyExchangeResponse>;

std::string KeyString(const smcrypt::SecretData& d) {
  return std::string(smcrypt::SecretDataAsStringView(d));
}


// Call is one KeyExchange stream.
struct Call {
  grpc::ClientContext ctx;
  std::unique_ptr<Stream> stream;
};

class KeyExchangeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(
        (fs::temp_directory_path() / absl::StrCat("smcryptd_kex_", getpid())).string());
    fs::create_directories(*dir_ + "/keys");
    a_ = new Sm2PrivateKey(*Sm2PrivateKey::Generate());
    b_ = new Sm2PrivateKey(*Sm2PrivateKey::Generate());
    auto write = [](const std::string& name, const std::string& text) {
      std::ofstream(*dir_ + "/keys/" + name, std::ios::binary) << text;
      fs::permissions(*dir_ + "/keys/" + name, fs::perms::owner_read | fs::perms::owner_write);
    };
    write("kex-a.pem", smcrypt::PemEncode("PRIVATE KEY",
                                          KeyString(smcrypt::Sm2PrivateKeyToPkcs8(*a_))));
    write("kex-b-pub.pem",
          smcrypt::PemEncode("PUBLIC KEY", smcrypt::Sm2PublicKeyToSpki(b_->public_key())));
    write("sm4.pem", smcrypt::PemEncode("SM4 KEY", std::string(16, 'k')));
    server_ = new Smcryptd();
    ASSERT_TRUE(server_->Start({"--keys_dir=" + *dir_ + "/keys"})) << server_->log();
  }
  static void TearDownTestSuite() {
    delete server_;
    fs::remove_all(*dir_);
    delete dir_;
    delete a_;
    delete b_;
  }

  void SetUp() override { stub_ = server_->Stub(); }

  std::unique_ptr<Call> Open() {
    auto c = std::make_unique<Call>();
    c->stream = stub_->KeyExchange(&c->ctx);
    return c;
  }

  // Params: the server holds A's key (keyring "kex-a") and B is the peer, or the
  // reverse (B's key inline, A's public key inline), as `role` says.
  static v1::KeyExchangeParams Params(v1::KeyExchangeRole role, bool confirmation,
                                      uint32_t key_length = 16) {
    v1::KeyExchangeParams p;
    p.set_algorithm(v1::SM2);
    p.set_role(role);
    p.set_confirmation(confirmation);
    p.set_key_length(key_length);
    if (role == v1::KEY_EXCHANGE_ROLE_INITIATOR) {
      *p.mutable_key() = KeyId("kex-a");
      *p.mutable_peer_key() = KeyId("kex-b-pub");
      p.set_user_id("alice@example.com");
      p.set_peer_user_id("bob@example.com");
    } else {
      *p.mutable_key() = Inline(KeyString(smcrypt::Sm2PrivateKeyToPkcs8(*b_)));
      *p.mutable_peer_key() = Inline(a_->public_key().ToPoint());
      p.set_user_id("bob@example.com");
      p.set_peer_user_id("alice@example.com");
    }
    return p;
  }

  // Peer is the library party facing the server: B when the server is A, and A when the
  // server is B.
  static Sm2KeyExchange Peer(Sm2KeyExchangeRole role, bool confirmation, size_t key_size = 16) {
    Sm2KeyExchangeParams p;
    p.role = role;
    p.confirmation = confirmation;
    p.key_size = key_size;
    const bool initiator = role == Sm2KeyExchangeRole::kInitiator;
    p.own_id = initiator ? "alice@example.com" : "bob@example.com";
    p.peer_id = initiator ? "bob@example.com" : "alice@example.com";
    absl::StatusOr<Sm2KeyExchange> kex = Sm2KeyExchange::New(
        initiator ? *a_ : *b_, initiator ? b_->public_key() : a_->public_key(), p);
    EXPECT_TRUE(kex.ok()) << kex.status();
    return *std::move(kex);
  }

  // FinishExpectingNoKey half-closes and returns the final status; no response may carry
  // a shared key.
  static grpc::Status FinishExpectingNoKey(Call& c) {
    c.stream->WritesDone();
    v1::KeyExchangeResponse r;
    while (c.stream->Read(&r)) EXPECT_TRUE(r.shared_key().empty());
    return c.stream->Finish();
  }

  static std::string* dir_;
  static Sm2PrivateKey* a_;
  static Sm2PrivateKey* b_;
  static Smcryptd* server_;
  std::unique_ptr<v1::CryptoService::Stub> stub_;
};

std::string* KeyExchangeTest::dir_ = nullptr;
Sm2PrivateKey* KeyExchangeTest::a_ = nullptr;
Sm2PrivateKey* KeyExchangeTest::b_ = nullptr;
Smcryptd* KeyExchangeTest::server_ = nullptr;

TEST_F(KeyExchangeTest, ServerAsInitiatorAgreesWithLibraryResponder) {
  for (bool confirmation : {false, true}) {
    for (uint32_t klen : {1u, 16u, 48u, 100u}) {
      SCOPED_TRACE(absl::StrCat("confirmation=", confirmation, " klen=", klen));
      auto c = Open();
      v1::KeyExchangeRequest req;
      *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_INITIATOR, confirmation, klen);
      ASSERT_TRUE(c->stream->Write(req));
      v1::KeyExchangeResponse r1;
      ASSERT_TRUE(c->stream->Read(&r1)) << c->stream->Finish().error_message();
      ASSERT_EQ(r1.ephemeral_point().size(), 65u);
      EXPECT_TRUE(r1.shared_key().empty());
      EXPECT_TRUE(r1.confirmation().empty());

      Sm2KeyExchange peer = Peer(Sm2KeyExchangeRole::kResponder, confirmation, klen);
      absl::StatusOr<std::string> r_b = peer.Start();
      ASSERT_TRUE(r_b.ok()) << r_b.status();
      absl::StatusOr<smcrypt::Sm2KeyExchangeOutput> out = peer.ComputeKey(r1.ephemeral_point());
      ASSERT_TRUE(out.ok()) << out.status();

      v1::KeyExchangeRequest req2;
      req2.set_peer_ephemeral_point(*r_b);
      req2.set_peer_confirmation(out->confirmation);
      ASSERT_TRUE(c->stream->Write(req2));
      v1::KeyExchangeResponse r2;
      ASSERT_TRUE(c->stream->Read(&r2)) << c->stream->Finish().error_message();
      ASSERT_EQ(r2.shared_key().size(), klen);
      std::string peer_key;
      if (confirmation) {
        ASSERT_EQ(r2.confirmation().size(), 32u);
        absl::StatusOr<smcrypt::SecretData> k = peer.ConfirmPeer(r2.confirmation());
        ASSERT_TRUE(k.ok()) << k.status();
        peer_key = KeyString(*k);
      } else {
        EXPECT_TRUE(r2.confirmation().empty());
        peer_key = KeyString(out->key);
      }
      EXPECT_EQ(r2.shared_key(), peer_key);
      c->stream->WritesDone();
      EXPECT_FALSE(c->stream->Read(&r2));
      grpc::Status s = c->stream->Finish();
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
  }
}

TEST_F(KeyExchangeTest, ServerAsResponderAgreesWithLibraryInitiator) {
  for (bool confirmation : {false, true}) {
    for (uint32_t klen : {16u, 32u, 65u}) {
      SCOPED_TRACE(absl::StrCat("confirmation=", confirmation, " klen=", klen));
      Sm2KeyExchange peer = Peer(Sm2KeyExchangeRole::kInitiator, confirmation, klen);
      absl::StatusOr<std::string> r_a = peer.Start();
      ASSERT_TRUE(r_a.ok()) << r_a.status();

      auto c = Open();
      v1::KeyExchangeRequest req;
      *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_RESPONDER, confirmation, klen);
      req.set_peer_ephemeral_point(*r_a);
      ASSERT_TRUE(c->stream->Write(req));
      v1::KeyExchangeResponse r1;
      ASSERT_TRUE(c->stream->Read(&r1)) << c->stream->Finish().error_message();
      ASSERT_EQ(r1.ephemeral_point().size(), 65u);

      absl::StatusOr<smcrypt::Sm2KeyExchangeOutput> out =
          peer.ComputeKey(r1.ephemeral_point(), r1.confirmation());
      ASSERT_TRUE(out.ok()) << out.status();
      const std::string peer_key = KeyString(out->key);
      ASSERT_EQ(peer_key.size(), klen);
      std::string server_key;
      if (confirmation) {
        ASSERT_EQ(r1.confirmation().size(), 32u);
        EXPECT_TRUE(r1.shared_key().empty()) << "K before S_A was checked";
        v1::KeyExchangeRequest req2;
        req2.set_peer_confirmation(out->confirmation);
        ASSERT_TRUE(c->stream->Write(req2));
        v1::KeyExchangeResponse r2;
        ASSERT_TRUE(c->stream->Read(&r2)) << c->stream->Finish().error_message();
        server_key = r2.shared_key();
      } else {
        EXPECT_TRUE(r1.confirmation().empty());
        server_key = r1.shared_key();
      }
      EXPECT_EQ(server_key, peer_key);
      c->stream->WritesDone();
      grpc::Status s = c->stream->Finish();
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
  }
}

// Two streams of the server, one per party, relayed by the test: the shape of two
// services exchanging keys through smcryptd.
TEST_F(KeyExchangeTest, TwoStreamsAgree) {
  for (bool confirmation : {false, true}) {
    SCOPED_TRACE(absl::StrCat("confirmation=", confirmation));
    auto a = Open();
    auto b = Open();
    v1::KeyExchangeRequest ra;
    *ra.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_INITIATOR, confirmation, 32);
    ASSERT_TRUE(a->stream->Write(ra));
    v1::KeyExchangeResponse a1;
    ASSERT_TRUE(a->stream->Read(&a1));

    v1::KeyExchangeRequest rb;
    *rb.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_RESPONDER, confirmation, 32);
    rb.set_peer_ephemeral_point(a1.ephemeral_point());
    ASSERT_TRUE(b->stream->Write(rb));
    v1::KeyExchangeResponse b1;
    ASSERT_TRUE(b->stream->Read(&b1));

    v1::KeyExchangeRequest ra2;
    ra2.set_peer_ephemeral_point(b1.ephemeral_point());
    ra2.set_peer_confirmation(b1.confirmation());
    ASSERT_TRUE(a->stream->Write(ra2));
    v1::KeyExchangeResponse a2;
    ASSERT_TRUE(a->stream->Read(&a2)) << a->stream->Finish().error_message();
    ASSERT_EQ(a2.shared_key().size(), 32u);

    std::string b_key = b1.shared_key();
    if (confirmation) {
      v1::KeyExchangeRequest rb2;
      rb2.set_peer_confirmation(a2.confirmation());
      ASSERT_TRUE(b->stream->Write(rb2));
      v1::KeyExchangeResponse b2;
      ASSERT_TRUE(b->stream->Read(&b2)) << b->stream->Finish().error_message();
      b_key = b2.shared_key();
    }
    EXPECT_EQ(a2.shared_key(), b_key);
    a->stream->WritesDone();
    b->stream->WritesDone();
    EXPECT_TRUE(a->stream->Finish().ok());
    EXPECT_TRUE(b->stream->Finish().ok());
  }
}

TEST_F(KeyExchangeTest, WrongSbIsUnauthenticatedAndReleasesNoKey) {
  auto c = Open();
  v1::KeyExchangeRequest req;
  *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_INITIATOR, true);
  ASSERT_TRUE(c->stream->Write(req));
  v1::KeyExchangeResponse r1;
  ASSERT_TRUE(c->stream->Read(&r1));
  Sm2KeyExchange peer = Peer(Sm2KeyExchangeRole::kResponder, true);
  absl::StatusOr<std::string> r_b = peer.Start();
  ASSERT_TRUE(r_b.ok());
  absl::StatusOr<smcrypt::Sm2KeyExchangeOutput> out = peer.ComputeKey(r1.ephemeral_point());
  ASSERT_TRUE(out.ok());
  std::string bad = out->confirmation;
  bad[7] ^= 0x01;
  v1::KeyExchangeRequest req2;
  req2.set_peer_ephemeral_point(*r_b);
  req2.set_peer_confirmation(bad);
  c->stream->Write(req2);
  grpc::Status s = FinishExpectingNoKey(*c);
  EXPECT_EQ(s.error_code(), StatusCode::UNAUTHENTICATED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("S_B does not match"));
}

TEST_F(KeyExchangeTest, WrongSaIsUnauthenticatedAndReleasesNoKey) {
  Sm2KeyExchange peer = Peer(Sm2KeyExchangeRole::kInitiator, true);
  absl::StatusOr<std::string> r_a = peer.Start();
  ASSERT_TRUE(r_a.ok());
  auto c = Open();
  v1::KeyExchangeRequest req;
  *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_RESPONDER, true);
  req.set_peer_ephemeral_point(*r_a);
  ASSERT_TRUE(c->stream->Write(req));
  v1::KeyExchangeResponse r1;
  ASSERT_TRUE(c->stream->Read(&r1));
  EXPECT_TRUE(r1.shared_key().empty());
  v1::KeyExchangeRequest req2;
  req2.set_peer_confirmation(std::string(32, '\x5a'));
  c->stream->Write(req2);
  grpc::Status s = FinishExpectingNoKey(*c);
  EXPECT_EQ(s.error_code(), StatusCode::UNAUTHENTICATED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("S_A does not match"));
}

// A responder whose peer sends a point off the curve, the point at infinity's encoding
// or a short point: INVALID_ARGUMENT before any key.
TEST_F(KeyExchangeTest, InvalidPeerPointsAreInvalidArgument) {
  std::string off_curve = a_->public_key().ToPoint();
  off_curve[64] ^= 0x01;
  const std::vector<std::string> bad = {off_curve, std::string(65, '\0'),
                                        a_->public_key().ToPoint().substr(0, 64),
                                        std::string(1, '\x04')};
  for (const std::string& point : bad) {
    auto c = Open();
    v1::KeyExchangeRequest req;
    *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_RESPONDER, false);
    req.set_peer_ephemeral_point(point);
    c->stream->Write(req);
    grpc::Status s = FinishExpectingNoKey(*c);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT)
        << point.size() << ": " << s.error_message();
  }
  // The same for an initiator's R_B.
  auto c = Open();
  v1::KeyExchangeRequest req;
  *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_INITIATOR, false);
  ASSERT_TRUE(c->stream->Write(req));
  v1::KeyExchangeResponse r1;
  ASSERT_TRUE(c->stream->Read(&r1));
  v1::KeyExchangeRequest req2;
  req2.set_peer_ephemeral_point(off_curve);
  c->stream->Write(req2);
  grpc::Status s = FinishExpectingNoKey(*c);
  EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("peer R"));
}

TEST_F(KeyExchangeTest, OutOfOrderMessagesAreInvalidArgument) {
  struct Case {
    const char* name;
    std::vector<v1::KeyExchangeRequest> messages;
    const char* message;
  };
  v1::KeyExchangeRequest init = [] {
    v1::KeyExchangeRequest r;
    *r.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_INITIATOR, true);
    return r;
  }();
  v1::KeyExchangeRequest init_with_point = init;
  init_with_point.set_peer_ephemeral_point(b_->public_key().ToPoint());
  v1::KeyExchangeRequest resp_without_point;
  *resp_without_point.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_RESPONDER, true);
  v1::KeyExchangeRequest no_params;
  no_params.set_peer_ephemeral_point(b_->public_key().ToPoint());
  v1::KeyExchangeRequest no_role = init;
  no_role.mutable_params()->set_role(v1::KEY_EXCHANGE_ROLE_UNSPECIFIED);
  v1::KeyExchangeRequest point_without_confirmation;
  point_without_confirmation.set_peer_ephemeral_point(b_->public_key().ToPoint());
  v1::KeyExchangeRequest params_again = init;
  const std::vector<Case> cases = {
      {"initiator's first message with R", {init_with_point}, "params only"},
      {"responder's first message without R", {resp_without_point}, "peer_ephemeral_point"},
      {"no params", {no_params}, "must carry params"},
      {"no role", {no_role}, "role is required"},
      {"half-close before R_B", {init}, "before the peer's R_B"},
      {"R_B without S_B under confirmation", {init, point_without_confirmation},
       "peer_confirmation (S_B)"},
      {"params twice", {init, params_again}, "only be sent in the first"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto c = Open();
    for (const v1::KeyExchangeRequest& m : tc.messages) c->stream->Write(m);
    grpc::Status s = FinishExpectingNoKey(*c);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(tc.message));
  }
}

TEST_F(KeyExchangeTest, KeysAreResolvedAsForSigning) {
  struct Case {
    const char* name;
    v1::KeyRef key;
    v1::KeyRef peer_key;
    StatusCode code;
    const char* message = "";  // a part of the status message, when set
  };
  const std::vector<Case> cases = {
      {"unknown key_id", KeyId("no-such-key"), KeyId("kex-b-pub"), StatusCode::NOT_FOUND},
      {"an SM4 key", KeyId("sm4"), KeyId("kex-b-pub"), StatusCode::FAILED_PRECONDITION},
      {"a public key as own key", KeyId("kex-b-pub"), KeyId("kex-b-pub"),
       StatusCode::FAILED_PRECONDITION},
      {"malformed inline key", Inline("not a key"), KeyId("kex-b-pub"),
       StatusCode::INVALID_ARGUMENT},
      {"no peer key", KeyId("kex-a"), v1::KeyRef(), StatusCode::INVALID_ARGUMENT},
      {"peer key off the curve", KeyId("kex-a"),
       Inline([] {
         std::string p = b_->public_key().ToPoint();
         p[40] ^= 0x10;
         return p;
       }()),
       StatusCode::INVALID_ARGUMENT},
      {"key_version on an inline own key", [] {
         v1::KeyRef k = Inline(KeyString(smcrypt::Sm2PrivateKeyToPkcs8(*a_)));
         k.set_key_version(1);
         return k;
       }(), KeyId("kex-b-pub"), StatusCode::INVALID_ARGUMENT},
      {"key_version on an inline peer key", KeyId("kex-a"), [] {
         v1::KeyRef k = Inline(b_->public_key().ToPoint());
         k.set_key_version(1);
         return k;
       }(), StatusCode::INVALID_ARGUMENT},
      {"unknown version of the peer key", KeyId("kex-a"), [] {
         v1::KeyRef k = KeyId("kex-b-pub");
         k.set_key_version(7);
         return k;
       }(), StatusCode::NOT_FOUND, "peer_key: key 'kex-b-pub' has no version 7"},
      {"an SM4 key as peer key", KeyId("kex-a"), KeyId("sm4"), StatusCode::FAILED_PRECONDITION,
       "peer_key: key 'sm4' is an SM4 key"},
      {"unknown peer key_id", KeyId("kex-a"), KeyId("nobody"), StatusCode::NOT_FOUND,
       "peer_key: "},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto c = Open();
    v1::KeyExchangeRequest req;
    *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_INITIATOR, false);
    *req.mutable_params()->mutable_key() = tc.key;
    *req.mutable_params()->mutable_peer_key() = tc.peer_key;
    c->stream->Write(req);
    grpc::Status s = FinishExpectingNoKey(*c);
    EXPECT_EQ(s.error_code(), tc.code) << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr(tc.message));
  }
  // Not SM2, and key lengths out of range.
  for (auto edit : std::vector<void (*)(v1::KeyExchangeParams*)>{
           [](v1::KeyExchangeParams* p) { p->set_algorithm(v1::ECDSA_P256); },
           [](v1::KeyExchangeParams* p) { p->set_key_length(65537); },
           [](v1::KeyExchangeParams* p) { p->set_user_id(std::string(8192, 'u')); }}) {
    auto c = Open();
    v1::KeyExchangeRequest req;
    *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_INITIATOR, false);
    edit(req.mutable_params());
    c->stream->Write(req);
    grpc::Status s = FinishExpectingNoKey(*c);
    EXPECT_EQ(s.error_code(), StatusCode::INVALID_ARGUMENT) << s.error_message();
  }
}

TEST_F(KeyExchangeTest, ServerKeepsServingAfterFailedExchanges) {
  for (int i = 0; i < 20; ++i) {
    auto c = Open();
    v1::KeyExchangeRequest req;
    *req.mutable_params() = Params(v1::KEY_EXCHANGE_ROLE_RESPONDER, true);
    req.set_peer_ephemeral_point(std::string(65, '\x04'));
    c->stream->Write(req);
    EXPECT_EQ(FinishExpectingNoKey(*c).error_code(), StatusCode::INVALID_ARGUMENT);
  }
  grpc::ClientContext ctx;
  v1::HashRequest req;
  req.set_algorithm(v1::SM3);
  req.set_data("abc");
  v1::HashResponse resp;
  grpc::Status s = stub_->Hash(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.digest().size(), 32u);
}

}  // namespace
