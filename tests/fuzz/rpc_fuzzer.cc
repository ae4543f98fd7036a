// RPC fuzzer: every smcrypt.v1.CryptoService RPC, through the whole service below the
// network — proto parsing, the proto → engine translation (server/service/), the
// engine, the keyring and the status conversion — of a real smcryptd (server::Server,
// loopback port, no worker pool, a keyring with SM2, P-256, SM4, AES and HMAC keys).
//
// Input: RPC byte ‖ request. A unary RPC's request is the rest of the input parsed as
// its request message; a streaming RPC's messages are consecutive 16-bit-length-prefixed
// pieces (at most 8). Inputs that are not valid protobuf are skipped. Every call must end
// with a status the API documents (OK, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION,
// PERMISSION_DENIED, RESOURCE_EXHAUSTED, OUT_OF_RANGE, and UNAUTHENTICATED for a
// KeyExchange confirmation value that does not match); anything else (UNKNOWN,
// INTERNAL, ...) or a crash aborts. RSA key generation is skipped (seconds per call under ASan).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "google/protobuf/stubs/logging.h"
#include "grpcpp/grpcpp.h"
#include "server/daemon/server.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"
#include "smcrypt/v1/crypto.grpc.pb.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

namespace v1 = ::smcrypt::v1;

void WriteKey(const std::string& dir, const std::string& id, const std::string& label,
              absl::string_view der) {
  const std::string path = dir + "/" + id + ".pem";
  std::ofstream(path) << smcrypt::PemEncode(label, der);
  FUZZ_CHECK(chmod(path.c_str(), 0600) == 0);
}

absl::string_view View(const smcrypt::SecretData& d) {
  return absl::string_view(reinterpret_cast<const char*>(d.data()), d.size());
}

// The keyring the seeds name: sm2, sm2pub, p256, sm4, aes, hmac.
std::string MakeKeyring() {
  char tmpl[] = "/tmp/smcrypt-rpc-fuzz.XXXXXX";
  FUZZ_CHECK(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  auto sm2 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kSm2);
  auto p256 = smcrypt::GenerateKeyPair(smcrypt::Algorithm::kEcdsaP256);
  FUZZ_CHECK(sm2.ok() && p256.ok());
  WriteKey(dir, "sm2", "PRIVATE KEY", View(sm2->private_key_der));
  WriteKey(dir, "sm2pub", "PUBLIC KEY", sm2->public_key_der);
  WriteKey(dir, "p256", "PRIVATE KEY", View(p256->private_key_der));
  WriteKey(dir, "sm4", "SM4 KEY", std::string(16, '\x11'));
  WriteKey(dir, "aes", "AES KEY", std::string(32, '\x22'));
  WriteKey(dir, "hmac", "HMAC KEY", std::string(20, '\x33'));
  return dir;
}

struct Service {
  smcrypt::server::Server server;
  std::unique_ptr<v1::CryptoService::Stub> stub;
};

Service* StartService() {
  // Fuzzed key_id strings are often invalid UTF-8; protobuf logs each such parse.
  google::protobuf::SetLogHandler(nullptr);
  auto* s = new Service;
  smcrypt::server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.metrics_listen = "";
  options.keys_dir = MakeKeyring();
  options.worker_threads = 0;
  options.shutdown_grace = absl::Seconds(1);
  const absl::Status st = s->server.BuildAndStart(options);
  if (!st.ok()) {
    std::fprintf(stderr, "smcryptd did not start: %s\n", st.ToString().c_str());
    std::abort();
  }
  s->stub = v1::CryptoService::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(s->server.port()), grpc::InsecureChannelCredentials()));
  return s;
}

void CheckStatus(const grpc::Status& st) {
  switch (st.error_code()) {
    case grpc::StatusCode::OK:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::UNAUTHENTICATED:
      return;
    default:
      std::fprintf(stderr, "unexpected status %d: %s\n", static_cast<int>(st.error_code()),
                   st.error_message().c_str());
      std::abort();
  }
}

template <typename Req, typename Resp, typename Call>
void Unary(const std::string& bytes, Call call) {
  Req req;
  if (!req.ParseFromString(bytes)) return;
  Resp resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  CheckStatus(call(&ctx, req, &resp));
}

std::vector<std::string> Pieces(smcrypt::fuzz::FuzzReader& in) {
  std::vector<std::string> out;
  while (in.remaining() > 0 && out.size() < 8) out.push_back(in.Field());
  return out;
}

template <typename Req, typename Resp, typename Open>
void BidiStream(smcrypt::fuzz::FuzzReader& in, Open open) {
  std::vector<Req> reqs;
  for (const std::string& p : Pieces(in)) {
    Req r;
    if (!r.ParseFromString(p)) return;
    reqs.push_back(std::move(r));
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto stream = open(&ctx);
  for (const Req& r : reqs) {
    if (!stream->Write(r)) break;
  }
  stream->WritesDone();
  Resp resp;
  while (stream->Read(&resp)) {
  }
  CheckStatus(stream->Finish());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Service* svc = StartService();
  auto& stub = *svc->stub;
  smcrypt::fuzz::FuzzReader in(data, size);
  const uint8_t rpc = in.Byte() % 29;
#define UNARY(Name)                                                                      \
  Unary<v1::Name##Request, v1::Name##Response>(                                          \
      in.Rest(), [&](grpc::ClientContext* c, const v1::Name##Request& q,                 \
                     v1::Name##Response* r) { return stub.Name(c, q, r); })
  switch (rpc) {
    case 0: UNARY(Hash); break;
    case 1: UNARY(HashBatch); break;
    case 2: UNARY(Hmac); break;
    case 3: UNARY(Sign); break;
    case 4: UNARY(Verify); break;
    case 5: UNARY(SignBatch); break;
    case 6: UNARY(VerifyBatch); break;
    case 7: UNARY(Encrypt); break;
    case 8: UNARY(Decrypt); break;
    case 9: UNARY(EncryptBatch); break;
    case 10: UNARY(PublicKeyEncrypt); break;
    case 11: UNARY(PublicKeyDecrypt); break;
    case 12: UNARY(HybridEncrypt); break;
    case 13: UNARY(HybridDecrypt); break;
    case 14: {
      v1::GenerateKeyPairRequest req;
      const std::string rest = in.Rest();
      if (!req.ParseFromString(rest)) break;
      const std::string name = v1::Algorithm_Name(req.algorithm());
      if (name.rfind("RSA", 0) == 0) break;  // seconds per key under ASan
      Unary<v1::GenerateKeyPairRequest, v1::GenerateKeyPairResponse>(
          rest, [&](grpc::ClientContext* c, const v1::GenerateKeyPairRequest& q,
                    v1::GenerateKeyPairResponse* r) { return stub.GenerateKeyPair(c, q, r); });
      break;
    }
    case 15: UNARY(GetPublicKey); break;
    case 16: UNARY(GenerateRandom); break;
    case 17: UNARY(GetServerInfo); break;
    case 18: {
      std::vector<v1::HashStreamRequest> reqs;
      for (const std::string& p : Pieces(in)) {
        v1::HashStreamRequest r;
        if (!r.ParseFromString(p)) return 0;
        reqs.push_back(std::move(r));
      }
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      v1::HashStreamResponse resp;
      auto writer = stub.HashStream(&ctx, &resp);
      for (const auto& r : reqs) {
        if (!writer->Write(r)) break;
      }
      writer->WritesDone();
      CheckStatus(writer->Finish());
      break;
    }
    case 19:
      BidiStream<v1::EncryptStreamRequest, v1::EncryptStreamResponse>(
          in, [&](grpc::ClientContext* c) { return stub.EncryptStream(c); });
      break;
    case 20:
      BidiStream<v1::DecryptStreamRequest, v1::DecryptStreamResponse>(
          in, [&](grpc::ClientContext* c) { return stub.DecryptStream(c); });
      break;
    case 21:
      BidiStream<v1::HybridEncryptStreamRequest, v1::HybridEncryptStreamResponse>(
          in, [&](grpc::ClientContext* c) { return stub.HybridEncryptStream(c); });
      break;
    case 22:
      BidiStream<v1::HybridDecryptStreamRequest, v1::HybridDecryptStreamResponse>(
          in, [&](grpc::ClientContext* c) { return stub.HybridDecryptStream(c); });
      break;
    case 23: UNARY(HybridEncryptBatch); break;
    case 25: UNARY(Rewrap); break;
    case 26: UNARY(RewrapBatch); break;
    case 27: UNARY(GenerateDataKey); break;
    case 28:
      Unary<v1::GenerateDataKeyWithoutPlaintextRequest,
            v1::GenerateDataKeyWithoutPlaintextResponse>(
          in.Rest(), [&](grpc::ClientContext* c,
                         const v1::GenerateDataKeyWithoutPlaintextRequest& q,
                         v1::GenerateDataKeyWithoutPlaintextResponse* r) {
            return stub.GenerateDataKeyWithoutPlaintext(c, q, r);
          });
      break;
    default:  // 24
      BidiStream<v1::KeyExchangeRequest, v1::KeyExchangeResponse>(
          in, [&](grpc::ClientContext* c) { return stub.KeyExchange(c); });
      break;
  }
#undef UNARY
  return 0;
}
