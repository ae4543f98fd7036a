// MethodSpec rows (server/service/method_spec.h) against the CryptoService served
// in-process (label unit): for every RPC, its row's check order decides which error
// answers a request that is both denied by the access policy and malformed; a denial is
// audited exactly when the policy is checked; an audited row writes one audit line, with
// its method and operation, for an allowed request that then fails to parse; a unary
// call is charged its row's admission bytes (request + per-item charge + 2 × response
// estimate + kCallAdmissionBytes), a stream its messages, all released when gRPC is done;
// and a call that a batch queue (the row's queue column) takes is held to the same row.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/engine/access_policy.h"
#include "server/engine/audit_log.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/dynamic_batcher.h"
#include "server/engine/key_store.h"
#include "server/engine/logging.h"
#include "server/engine/self_test.h"
#include "server/service/crypto_service_impl.h"
#include "server/service/key_management.h"
#include "server/service/method_spec.h"
#include "smcrypt/registry.h"
#include "smcrypt/v1/crypto.grpc.pb.h"

namespace smcrypt::server {
namespace {

using Stub = v1::CryptoService::Stub;

// Service runs CryptoServiceImpl on an in-process channel (as the CLI's --local mode
// does), with an optional access policy and audit log.
class Service {
 public:
  // `policy`: policy text, or null for none; `audit_path`: the audit log file, or "" for
  // none.
  Service(const char* policy, const std::string& audit_path) {
    SetMinLogSeverity(LogSeverity::kWarning);
    if (policy != nullptr) {
      absl::StatusOr<std::unique_ptr<AccessPolicy>> p = AccessPolicy::Parse(policy, "test");
      EXPECT_TRUE(p.ok()) << p.status();
      policy_ = *std::move(p);
    }
    if (!audit_path.empty()) {
      absl::StatusOr<std::unique_ptr<AuditLog>> a = AuditLog::Open(audit_path);
      EXPECT_TRUE(a.ok()) << a.status();
      audit_ = *std::move(a);
    }
    engine_ = std::make_unique<CryptoEngine>(
        std::shared_ptr<const KeyStore>(KeyStore::Empty()), EngineOptions{}, nullptr);
    ServiceInfo info;
    info.version = "test";
    info.max_message_bytes = INT_MAX;
    info.max_inflight = INT64_MAX;
    // Batching is on (ServiceInfo's default, max_delay 0): a call a queue takes runs at
    // once, alone, through the queue.
    ServiceGuards guards;
    guards.policy = policy_.get();
    guards.audit = audit_.get();
    guards.batches = &batches_;
    service_ = std::make_unique<CryptoServiceImpl>(engine_.get(), &self_tests_, &inflight_,
                                                   info, /*workers=*/nullptr, guards);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    builder.SetMaxReceiveMessageSize(INT_MAX);
    builder.SetMaxSendMessageSize(INT_MAX);
    server_ = builder.BuildAndStart();
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(INT_MAX);
    args.SetMaxSendMessageSize(INT_MAX);
    stub_ = v1::CryptoService::NewStub(server_->InProcessChannel(args));
  }
  ~Service() {
    server_->Shutdown();
    server_->Wait();
  }

  Stub* stub() { return stub_.get(); }
  // batches: the batch runs of `op` so far.
  int batches(BatchedOperation op) const { return batches_.runs[static_cast<int>(op)]; }
  const CryptoServiceImpl& impl() const { return *service_; }
  const AuditLog* audit_log() const { return audit_.get(); }

  // WaitReleased waits (up to 10 s) until no bytes are charged: a call's charge is held
  // until gRPC is done with it, which may come after the client has its answer.
  bool WaitReleased() const {
    for (int i = 0; i < 1000; ++i) {
      if (service_->inflight_bytes() == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  struct Batches : BatchObserver {
    void OnBatch(BatchedOperation op, size_t, absl::Span<const double>) override {
      ++runs[static_cast<int>(op)];
    }
    std::atomic<int> runs[kNumBatchedOperations] = {};
  };

  Batches batches_;
  std::unique_ptr<AccessPolicy> policy_;
  std::unique_ptr<AuditLog> audit_;
  SelfTests self_tests_;
  std::unique_ptr<CryptoEngine> engine_;
  std::atomic<int64_t> inflight_{0};
  std::unique_ptr<CryptoServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Stub> stub_;
};

// Sent: what one request got, and what its admission is computed from.
struct Sent {
  grpc::StatusCode code = grpc::StatusCode::OK;  // the call's, or its first item's
  uint64_t request_bytes = 0;                    // serialized (the first message's for streams)
  uint64_t items = 0;                            // batch items
  uint64_t random_length = 0;                    // GenerateRandom's length
  uint64_t response_bytes = 0;                   // a unary call's response, serialized
};

template <typename Req, typename Resp>
using UnaryMethod = grpc::Status (Stub::*)(grpc::ClientContext*, const Req&, Resp*);

// CallUnary sends `req`; a batch that answers per item reports its first item's status.
template <typename Req, typename Resp>
Sent CallUnary(Stub* stub, UnaryMethod<Req, Resp> method, const Req& req) {
  grpc::ClientContext ctx;
  Resp resp;
  const grpc::Status s = (stub->*method)(&ctx, req, &resp);
  Sent sent{s.error_code(), req.ByteSizeLong()};
  sent.response_bytes = resp.ByteSizeLong();
  if constexpr (requires { req.items_size(); }) sent.items = req.items_size();
  if constexpr (requires { resp.results(0).status().code(); }) {
    if (s.ok() && resp.results_size() > 0) {
      sent.code = static_cast<grpc::StatusCode>(resp.results(0).status().code());
    }
  }
  if constexpr (requires { req.length(); }) sent.random_length = req.length();
  return sent;
}

template <typename Req, typename Resp>
using BidiMethod =
    std::unique_ptr<grpc::ClientReaderWriter<Req, Resp>> (Stub::*)(grpc::ClientContext*);

// CallBidi sends `first` and half-closes, reads every response and returns the status.
template <typename Req, typename Resp>
Sent CallBidi(Stub* stub, BidiMethod<Req, Resp> method, const Req& first) {
  grpc::ClientContext ctx;
  auto stream = (stub->*method)(&ctx);
  stream->Write(first);
  stream->WritesDone();
  Resp resp;
  while (stream->Read(&resp)) {
  }
  return Sent{stream->Finish().error_code(), first.ByteSizeLong()};
}

Sent CallHashStream(Stub* stub, const v1::HashStreamRequest& first) {
  grpc::ClientContext ctx;
  v1::HashStreamResponse resp;
  auto stream = stub->HashStream(&ctx, &resp);
  stream->Write(first);
  stream->WritesDone();
  return Sent{stream->Finish().error_code(), first.ByteSizeLong()};
}

constexpr grpc::StatusCode kInvalid = grpc::StatusCode::INVALID_ARGUMENT;
constexpr grpc::StatusCode kDenied = grpc::StatusCode::PERMISSION_DENIED;
constexpr bool kAudited = true;
constexpr bool kNotAudited = false;

// Row: one MethodSpec row, the contract it states written out again (the status that
// wins for a denied client's malformed request, and whether allowed requests are
// audited), and a request of its RPC that is malformed where the RPC has something to
// parse before the work (the algorithm, a batch's size; for a batch checked per item, its
// one item), plus the status that request gets once allowed.
struct Row {
  const MethodSpec* spec;
  grpc::StatusCode when_denied;
  bool audited;
  std::function<Sent(Stub*)> send;
  grpc::StatusCode when_allowed = grpc::StatusCode::INVALID_ARGUMENT;
};

v1::KeyRef KeyId(const char* id) {
  v1::KeyRef key;
  key.set_key_id(id);
  return key;
}

std::vector<Row> Rows() {
  // Every request names the keyring key "k" (there is none: the policy or the parse
  // answers first) and leaves its algorithm unset.
  std::vector<Row> rows;
  rows.push_back({&rpc::kHash, kDenied, kNotAudited, [](Stub* s) {
    v1::HashRequest r;
    r.set_data("abc");
    return CallUnary(s, &Stub::Hash, r);
  }});
  rows.push_back({&rpc::kHashStream, kDenied, kNotAudited, [](Stub* s) {
    v1::HashStreamRequest r;
    r.set_data("abc");
    return CallHashStream(s, r);
  }});
  rows.push_back({&rpc::kHashBatch, kInvalid, kNotAudited, [](Stub* s) {
    // HashBatch parses its size first: one item too many.
    v1::HashBatchRequest r;
    for (size_t i = 0; i <= CryptoEngine::kMaxBatchItems; ++i) r.add_items();
    return CallUnary(s, &Stub::HashBatch, r);
  }});
  rows.push_back({&rpc::kHmac, kDenied, kAudited, [](Stub* s) {
    v1::HmacRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_data("abc");
    return CallUnary(s, &Stub::Hmac, r);
  }});
  rows.push_back({&rpc::kSign, kDenied, kAudited, [](Stub* s) {
    v1::SignRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_data("abc");
    return CallUnary(s, &Stub::Sign, r);
  }});
  rows.push_back({&rpc::kVerify, kDenied, kNotAudited, [](Stub* s) {
    v1::VerifyRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_data("abc");
    r.set_signature("sig");
    return CallUnary(s, &Stub::Verify, r);
  }});
  rows.push_back({&rpc::kSignBatch, kDenied, kAudited, [](Stub* s) {
    v1::SignBatchRequest r;
    v1::SignRequest* item = r.add_items();
    *item->mutable_key() = KeyId("k");
    item->set_data("abc");
    return CallUnary(s, &Stub::SignBatch, r);
  }});
  rows.push_back({&rpc::kVerifyBatch, kDenied, kNotAudited, [](Stub* s) {
    v1::VerifyBatchRequest r;
    v1::VerifyRequest* item = r.add_items();
    *item->mutable_key() = KeyId("k");
    item->set_signature("sig");
    return CallUnary(s, &Stub::VerifyBatch, r);
  }});
  rows.push_back({&rpc::kEncrypt, kDenied, kAudited, [](Stub* s) {
    v1::EncryptRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_plaintext("abc");
    return CallUnary(s, &Stub::Encrypt, r);
  }});
  rows.push_back({&rpc::kDecrypt, kDenied, kAudited, [](Stub* s) {
    v1::DecryptRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_ciphertext("abc");
    return CallUnary(s, &Stub::Decrypt, r);
  }});
  rows.push_back({&rpc::kEncryptBatch, kInvalid, kAudited, [](Stub* s) {
    v1::EncryptBatchRequest r;
    v1::EncryptRequest* item = r.add_items();
    *item->mutable_key() = KeyId("k");
    item->set_plaintext("abc");
    return CallUnary(s, &Stub::EncryptBatch, r);
  }});
  rows.push_back({&rpc::kEncryptStream, kDenied, kAudited, [](Stub* s) {
    v1::EncryptStreamRequest r;
    *r.mutable_params()->mutable_key() = KeyId("k");
    r.set_plaintext("abc");
    return CallBidi(s, &Stub::EncryptStream, r);
  }});
  rows.push_back({&rpc::kDecryptStream, kDenied, kAudited, [](Stub* s) {
    v1::DecryptStreamRequest r;
    *r.mutable_params()->mutable_key() = KeyId("k");
    r.set_ciphertext("abc");
    return CallBidi(s, &Stub::DecryptStream, r);
  }});
  rows.push_back({&rpc::kPublicKeyEncrypt, kInvalid, kNotAudited, [](Stub* s) {
    v1::PublicKeyEncryptRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_plaintext("abc");
    return CallUnary(s, &Stub::PublicKeyEncrypt, r);
  }});
  rows.push_back({&rpc::kPublicKeyDecrypt, kDenied, kAudited, [](Stub* s) {
    v1::PublicKeyDecryptRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_ciphertext("abc");
    return CallUnary(s, &Stub::PublicKeyDecrypt, r);
  }});
  rows.push_back({&rpc::kHybridEncrypt, kInvalid, kNotAudited, [](Stub* s) {
    v1::HybridEncryptRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_plaintext("abc");
    return CallUnary(s, &Stub::HybridEncrypt, r);
  }});
  rows.push_back({&rpc::kHybridEncryptBatch, kInvalid, kNotAudited, [](Stub* s) {
    v1::HybridEncryptBatchRequest r;
    v1::HybridEncryptRequest* item = r.add_items();
    *item->mutable_key() = KeyId("k");
    item->set_plaintext("abc");
    return CallUnary(s, &Stub::HybridEncryptBatch, r);
  }});
  rows.push_back({&rpc::kHybridDecrypt, kDenied, kAudited, [](Stub* s) {
    v1::HybridDecryptRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_ciphertext("abc");
    return CallUnary(s, &Stub::HybridDecrypt, r);
  }});
  rows.push_back({&rpc::kHybridEncryptStream, kDenied, kNotAudited, [](Stub* s) {
    v1::HybridEncryptStreamRequest r;
    *r.mutable_params()->mutable_key() = KeyId("k");
    r.set_plaintext("abc");
    return CallBidi(s, &Stub::HybridEncryptStream, r);
  }});
  rows.push_back({&rpc::kHybridDecryptStream, kDenied, kAudited, [](Stub* s) {
    v1::HybridDecryptStreamRequest r;
    *r.mutable_params()->mutable_key() = KeyId("k");
    r.set_ciphertext("abc");
    return CallBidi(s, &Stub::HybridDecryptStream, r);
  }});
  rows.push_back({&rpc::kKeyExchange, kDenied, kAudited, [](Stub* s) {
    v1::KeyExchangeRequest r;
    *r.mutable_params()->mutable_key() = KeyId("k");
    return CallBidi(s, &Stub::KeyExchange, r);
  }});
  rows.push_back({&rpc::kGenerateKeyPair, kInvalid, kNotAudited, [](Stub* s) {
    return CallUnary(s, &Stub::GenerateKeyPair, v1::GenerateKeyPairRequest());
  }});
  // A keyring key may come without an algorithm; an inline key may not.
  rows.push_back({&rpc::kGetPublicKey, kInvalid, kNotAudited, [](Stub* s) {
    v1::GetPublicKeyRequest r;
    r.mutable_key()->set_inline_key(std::string(32, '\x01'));
    return CallUnary(s, &Stub::GetPublicKey, r);
  }});
  // Nothing to parse: a length the engine refuses, after the policy check.
  rows.push_back({&rpc::kGenerateRandom, kDenied, kNotAudited, [](Stub* s) {
    v1::GenerateRandomRequest r;
    r.set_length(CryptoEngine::kMaxRandomBytes + 1);
    return CallUnary(s, &Stub::GenerateRandom, r);
  }});
  rows.push_back({&rpc::kGetServerInfo, kDenied, kNotAudited, [](Stub* s) {
    return CallUnary(s, &Stub::GetServerInfo, v1::GetServerInfoRequest());
  }, grpc::StatusCode::OK});
  // A page_size the engine refuses, after the policy check.
  rows.push_back({&rpc::kListKeys, kDenied, kAudited, [](Stub* s) {
    v1::ListKeysRequest r;
    r.set_page_size(1001);
    return CallUnary(s, &Stub::ListKeys, r);
  }});
  rows.push_back({&rpc::kRewrap, kDenied, kAudited, [](Stub* s) {
    v1::RewrapRequest r;
    *r.mutable_key() = KeyId("k");
    r.set_ciphertext("abc");
    return CallUnary(s, &Stub::Rewrap, r);
  }});
  rows.push_back({&rpc::kRewrapBatch, kDenied, kAudited, [](Stub* s) {
    v1::RewrapBatchRequest r;
    v1::RewrapRequest* item = r.add_items();
    *item->mutable_key() = KeyId("k");
    item->set_ciphertext("abc");
    return CallUnary(s, &Stub::RewrapBatch, r);
  }});
  rows.push_back({&rpc::kGenerateDataKey, kDenied, kAudited, [](Stub* s) {
    v1::GenerateDataKeyRequest r;
    *r.mutable_key() = KeyId("k");
    return CallUnary(s, &Stub::GenerateDataKey, r);
  }});
  rows.push_back({&rpc::kGenerateDataKeyWithoutPlaintext, kDenied, kAudited, [](Stub* s) {
    v1::GenerateDataKeyWithoutPlaintextRequest r;
    *r.mutable_key() = KeyId("k");
    return CallUnary(s, &Stub::GenerateDataKeyWithoutPlaintext, r);
  }});
  return rows;
}

// AuditTail reads the audit lines written since the previous call, once `log` has
// written every line queued (AuditLog::Flush).
class AuditTail {
 public:
  AuditTail(std::string path, const AuditLog* log) : path_(std::move(path)), log_(log) {}
  std::vector<std::string> NewLines() {
    EXPECT_TRUE(log_->Flush(absl::Seconds(10)));
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    std::vector<std::string> lines = absl::StrSplit(all.substr(read_), '\n', absl::SkipEmpty());
    read_ = all.size();
    return lines;
  }

 private:
  std::string path_;
  const AuditLog* log_;
  size_t read_ = 0;
};

std::string AuditPath(absl::string_view name) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/method_spec_", name, ".log");
  std::remove(path.c_str());
  return path;
}

std::string Field(absl::string_view name, absl::string_view value) {
  return absl::StrCat("\"", name, "\":\"", value, "\"");
}

TEST(MethodSpecTest, EveryRpcHasOneRow) {
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(
          v1::CryptoService::service_full_name());
  ASSERT_NE(service, nullptr);
  std::vector<Row> rows = Rows();
  ASSERT_EQ(rows.size(), static_cast<size_t>(service->method_count()));
  for (const Row& row : rows) {
    EXPECT_NE(service->FindMethodByName(std::string(row.spec->method)), nullptr)
        << row.spec->method;
    EXPECT_EQ(std::count_if(rows.begin(), rows.end(),
                            [&](const Row& r) { return r.spec->method == row.spec->method; }),
              1)
        << row.spec->method;
  }
}

// A client the policy denies everything sends a malformed request: kPolicyFirst answers
// PERMISSION_DENIED and audits the denial; kParseFirst answers INVALID_ARGUMENT and never
// reaches the policy, so nothing is audited.
TEST(MethodSpecTest, CheckOrderDecidesWhichErrorWinsAndWhetherTheDenialIsAudited) {
  const std::string path = AuditPath("denied");
  Service svc("", path);  // an empty policy denies everything
  AuditTail audit(path, svc.audit_log());
  for (const Row& row : Rows()) {
    const MethodSpec& spec = *row.spec;
    SCOPED_TRACE(spec.method);
    const Sent sent = row.send(svc.stub());
    const bool policy_first = spec.order == CheckOrder::kPolicyFirst;
    EXPECT_EQ(row.when_denied, policy_first ? kDenied : kInvalid) << "the row's order changed";
    EXPECT_EQ(sent.code, row.when_denied);
    const std::vector<std::string> lines = audit.NewLines();
    ASSERT_EQ(lines.size(), policy_first ? 1u : 0u);
    if (policy_first) {
      EXPECT_NE(lines[0].find(Field("method", spec.method)), std::string::npos) << lines[0];
      EXPECT_NE(lines[0].find(Field("operation", AccessOperationName(spec.op))),
                std::string::npos)
          << lines[0];
      EXPECT_NE(lines[0].find(Field("status", "PERMISSION_DENIED")), std::string::npos)
          << lines[0];
    }
  }
}

// A client the policy allows sends the same requests: each gets its parse error (or the
// engine's answer), and an audited row writes one line with that final status when the
// request passed the policy check (kPolicyFirst); other rows write none.
TEST(MethodSpecTest, AuditedRowsAuditAllowedRequestsWithTheirFinalStatus) {
  const std::string path = AuditPath("allowed");
  Service svc("allow * * *", path);
  AuditTail audit(path, svc.audit_log());
  int audited_rows = 0;
  for (const Row& row : Rows()) {
    const MethodSpec& spec = *row.spec;
    SCOPED_TRACE(spec.method);
    const Sent sent = row.send(svc.stub());
    EXPECT_EQ(sent.code, row.when_allowed);
    EXPECT_EQ(spec.audited, row.audited) << "the row's audit column changed";
    const bool audited = spec.audited && spec.order == CheckOrder::kPolicyFirst;
    audited_rows += spec.audited;
    const std::vector<std::string> lines = audit.NewLines();
    ASSERT_EQ(lines.size(), audited ? 1u : 0u);
    if (audited) {
      EXPECT_NE(lines[0].find(Field("method", spec.method)), std::string::npos) << lines[0];
      EXPECT_NE(lines[0].find(Field("operation", AccessOperationName(spec.op))),
                std::string::npos)
          << lines[0];
      EXPECT_NE(lines[0].find(Field("status", "INVALID_ARGUMENT")), std::string::npos)
          << lines[0];
    }
  }
  // Private- and secret-key use: Hmac, Sign, SignBatch, Encrypt, Decrypt, EncryptBatch,
  // EncryptStream, DecryptStream, PublicKeyDecrypt, HybridDecrypt, HybridDecryptStream,
  // KeyExchange; ListKeys, Rewrap, RewrapBatch and both GenerateDataKey RPCs.
  EXPECT_EQ(audited_rows, 17);
}

// AdmissionCharge is the admission charge method_spec.h documents for a unary call.
uint64_t AdmissionCharge(const MethodSpec& spec, const Sent& sent) {
  uint64_t estimate = sent.request_bytes;
  switch (spec.response) {
    case ResponseEstimate::kRequestSize:
    case ResponseEstimate::kStream:
      break;
    case ResponseEstimate::kRandomLength:
      estimate = std::min<uint64_t>(sent.random_length, CryptoEngine::kMaxRandomBytes) + 16;
      break;
    case ResponseEstimate::kKeyPair:
    case ResponseEstimate::kServerInfo:
      estimate = 16 << 10;
      break;
    case ResponseEstimate::kRequestPlus4KiB:
      estimate = sent.request_bytes + 4096;
      break;
  }
  const uint64_t per_item = spec.charge_items ? 1024 * sent.items : 0;
  return sent.request_bytes + per_item + 2 * estimate + kCallAdmissionBytes;
}

// PeakCharge: the most a lone unary call is charged: its admission charge, or, once the
// work is done, twice its response + kCallAdmissionBytes when that is more
// (crypto_service_impl.h, "Memory").
uint64_t PeakCharge(const MethodSpec& spec, const Sent& sent) {
  return std::max(AdmissionCharge(spec, sent), 2 * sent.response_bytes + kCallAdmissionBytes);
}

// Each call runs alone, so the most bytes charged during it is what it was charged: a
// unary call its row's admission bytes (or its response's charge, when more), a
// bidirectional stream three times the message it read, HashStream nothing for a
// first message its checks refuse. Everything is released once gRPC is done.
TEST(MethodSpecTest, AdmissionChargesTheRowsBytesAndReleasesThem) {
  Service svc(nullptr, "");
  int charged_items = 0;
  for (const Row& row : Rows()) {
    const MethodSpec& spec = *row.spec;
    SCOPED_TRACE(spec.method);
    svc.impl().TakePeakSince();
    const Sent sent = row.send(svc.stub());
    ASSERT_TRUE(svc.WaitReleased()) << svc.impl().inflight_bytes() << " bytes still charged";
    const uint64_t peak = svc.impl().TakePeakSince();
    if (spec.response != ResponseEstimate::kStream) {
      EXPECT_EQ(peak, PeakCharge(spec, sent));
      charged_items += spec.charge_items;
      EXPECT_EQ(spec.charge_items, sent.items > 0);
    } else if (&spec == &rpc::kHashStream) {
      EXPECT_EQ(peak, 0u);
    } else {
      EXPECT_EQ(peak, 3 * sent.request_bytes);
    }
  }
  EXPECT_EQ(charged_items, 6);  // the six batch RPCs

  // A HashStream message that passes its checks is charged while it is hashed.
  v1::HashStreamRequest r;
  r.set_algorithm(v1::SM3);
  r.set_data(std::string(10000, 'x'));
  svc.impl().TakePeakSince();
  EXPECT_EQ(CallHashStream(svc.stub(), r).code, grpc::StatusCode::OK);
  ASSERT_TRUE(svc.WaitReleased());
  EXPECT_EQ(svc.impl().TakePeakSince(), r.ByteSizeLong());
}

// GenerateDataKey's response holds the plaintext data key; the call's OnDone wipes it
// (key_management.h, WipeDataKey) once gRPC has sent it: one wipe per response with a
// key, none for GenerateDataKeyWithoutPlaintext, whose response has no key.
TEST(MethodSpecTest, DataKeyResponsesAreWipedOnceSent) {
  Service svc(nullptr, "");
  absl::StatusOr<KeyPair> kp = smcrypt::GenerateKeyPair(Algorithm::kSm2);
  ASSERT_TRUE(kp.ok()) << kp.status();
  v1::GenerateDataKeyRequest r;
  r.set_key_spec(v1::DATA_KEY_SPEC_AES_256);
  r.set_algorithm(v1::SM2);
  r.mutable_key()->set_inline_key(kp->public_key_der);
  const uint64_t before = DataKeysWiped();
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext ctx;
    v1::GenerateDataKeyResponse resp;
    ASSERT_TRUE(svc.stub()->GenerateDataKey(&ctx, r, &resp).ok());
    EXPECT_EQ(resp.plaintext_key().size(), 32u);
    EXPECT_EQ(resp.ciphertext().size(), 97u + 32u);
  }
  ASSERT_TRUE(svc.WaitReleased());  // a call's charge is released after its OnDone hook
  EXPECT_EQ(DataKeysWiped() - before, 3u);

  grpc::ClientContext ctx;
  v1::GenerateDataKeyWithoutPlaintextRequest wr;
  ASSERT_TRUE(wr.ParseFromString(r.SerializeAsString()));
  v1::GenerateDataKeyWithoutPlaintextResponse resp;
  ASSERT_TRUE(svc.stub()->GenerateDataKeyWithoutPlaintext(&ctx, wr, &resp).ok());
  EXPECT_EQ(resp.ciphertext().size(), 97u + 32u);
  ASSERT_TRUE(svc.WaitReleased());
  EXPECT_EQ(DataKeysWiped() - before, 3u);
}

TEST(MethodSpecTest, WipeDataKeyZeroesTheKeyInPlace) {
  v1::GenerateDataKeyResponse resp;
  resp.set_plaintext_key(std::string(32, '\x5a'));
  resp.set_ciphertext("wrapped");
  const char* bytes = resp.plaintext_key().data();
  WipeDataKey(&resp);
  ASSERT_EQ(resp.plaintext_key().data(), bytes);  // the same buffer, overwritten
  EXPECT_EQ(resp.plaintext_key(), std::string(32, '\0'));
  EXPECT_EQ(resp.ciphertext(), "wrapped");
}

// QueuedRow: a row with a batch queue and a request its queue takes (the queue's
// algorithm, keyring key "k").
struct QueuedRow {
  const MethodSpec* spec;
  std::function<Sent(Stub*)> send;
};

std::vector<QueuedRow> QueuedRows() {
  std::vector<QueuedRow> rows;
  rows.push_back({&rpc::kHash, [](Stub* s) {
    v1::HashRequest r;
    r.set_algorithm(v1::SM3);
    r.set_data("abc");
    return CallUnary(s, &Stub::Hash, r);
  }});
  rows.push_back({&rpc::kSign, [](Stub* s) {
    v1::SignRequest r;
    r.set_algorithm(v1::SM2);
    *r.mutable_key() = KeyId("k");
    r.set_data("abc");
    return CallUnary(s, &Stub::Sign, r);
  }});
  rows.push_back({&rpc::kVerify, [](Stub* s) {
    v1::VerifyRequest r;
    r.set_algorithm(v1::SM2);
    *r.mutable_key() = KeyId("k");
    r.set_data("abc");
    r.set_signature("sig");
    return CallUnary(s, &Stub::Verify, r);
  }});
  rows.push_back({&rpc::kPublicKeyEncrypt, [](Stub* s) {
    v1::PublicKeyEncryptRequest r;
    r.set_algorithm(v1::SM2);
    *r.mutable_key() = KeyId("k");
    r.set_plaintext("abc");
    return CallUnary(s, &Stub::PublicKeyEncrypt, r);
  }});
  rows.push_back({&rpc::kHybridEncrypt, [](Stub* s) {
    v1::HybridEncryptRequest r;
    r.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
    *r.mutable_key() = KeyId("k");
    r.set_plaintext("abc");
    return CallUnary(s, &Stub::HybridEncrypt, r);
  }});
  return rows;
}

// A call a batch queue takes is checked, audited and charged by its row as the call
// guard would: a denied client gets PERMISSION_DENIED and a denial line; an allowed one
// the engine's answer, audited for an audited row; the charge is the row's admission.
TEST(MethodSpecTest, QueuedCallsAreCheckedAuditedAndChargedAsTheirRowSays) {
  int queued_rows = 0;
  for (const Row& row : Rows()) queued_rows += row.spec->queue.has_value();
  ASSERT_EQ(static_cast<size_t>(queued_rows), QueuedRows().size());

  const std::string denied_path = AuditPath("queued_denied");
  const std::string allowed_path = AuditPath("queued_allowed");
  Service denied("", denied_path);
  Service allowed("allow * * *", allowed_path);
  AuditTail denied_audit(denied_path, denied.audit_log());
  AuditTail allowed_audit(allowed_path, allowed.audit_log());
  for (const QueuedRow& row : QueuedRows()) {
    const MethodSpec& spec = *row.spec;
    SCOPED_TRACE(spec.method);
    ASSERT_TRUE(spec.queue.has_value());
    const BatchedOperation op = *spec.queue;

    EXPECT_EQ(row.send(denied.stub()).code, kDenied);
    EXPECT_EQ(denied.batches(op), 1);
    std::vector<std::string> lines = denied_audit.NewLines();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find(Field("method", spec.method)), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(Field("status", "PERMISSION_DENIED")), std::string::npos)
        << lines[0];

    allowed.impl().TakePeakSince();
    const Sent sent = row.send(allowed.stub());
    EXPECT_NE(sent.code, kDenied);
    if (&spec == &rpc::kHash) {
      EXPECT_EQ(sent.code, grpc::StatusCode::OK);
    }
    EXPECT_EQ(allowed.batches(op), 1);
    lines = allowed_audit.NewLines();
    ASSERT_EQ(lines.size(), spec.audited ? 1u : 0u);
    if (spec.audited) {
      EXPECT_NE(lines[0].find(Field("method", spec.method)), std::string::npos) << lines[0];
    }
    ASSERT_TRUE(allowed.WaitReleased());
    EXPECT_EQ(allowed.impl().TakePeakSince(), PeakCharge(spec, sent));
  }
}

}  // namespace
}  // namespace smcrypt::server
