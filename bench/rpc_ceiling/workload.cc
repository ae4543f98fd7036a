#include "bench/rpc_ceiling/workload.h"

#include <openssl/evp.h>

#include <memory>
#include <random>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "bench/rpc_ceiling/closed_loop.h"
#include "bench/rpc_ceiling/echo_server.h"
#include "grpcpp/grpcpp.h"
#include "smcrypt/v1/crypto.pb.h"

namespace smcrypt::rpc_ceiling {
namespace {

namespace v1 = smcrypt::v1;

constexpr char kServicePrefix[] = "/smcrypt.v1.CryptoService/";
constexpr size_t kSm4GcmNonceSize = 12;
constexpr size_t kSm4GcmTagSize = 16;
constexpr size_t kHpkeOverhead = 88;      // 7-byte header, 65-byte enc, 16-byte tag
constexpr size_t kSm2CiphertextOverhead = 97;  // C1 (65 bytes) and C3 (32 bytes)

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

std::string Sm3(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &digest_len, EVP_sm3(), nullptr) != 1) {
    return "";
  }
  return std::string(reinterpret_cast<const char*>(digest), digest_len);
}

// Call sends `request` on `method` once through the generic stub and returns the reply.
absl::StatusOr<std::string> Call(grpc::GenericStub& stub, const std::string& method,
                                 const grpc::ByteBuffer& request, absl::Duration timeout) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  context.set_wait_for_ready(true);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  if (!status.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        method, ": ", CodeName(status.error_code()), ": ", status.error_message()));
  }
  return ToBytes(response);
}

template <typename Message>
Workload MakeWorkload(std::string name, std::string description, const Message& request) {
  Workload w;
  w.method = absl::StrCat(kServicePrefix, name);
  w.name = std::move(name);
  w.description = std::move(description);
  std::string bytes;
  request.SerializeToString(&bytes);
  w.request_bytes = bytes.size();
  w.request = ToByteBuffer(bytes);
  return w;
}

// Parse calls `w` on smcryptd and parses the reply as `Response`.
template <typename Response>
absl::StatusOr<Response> CallSmcryptd(grpc::GenericStub& stub, const Workload& w,
                                      absl::Duration timeout) {
  absl::StatusOr<std::string> bytes = Call(stub, w.method, w.request, timeout);
  if (!bytes.ok()) return bytes.status();
  Response response;
  if (!response.ParseFromString(*bytes)) {
    return absl::FailedPreconditionError(absl::StrCat(w.name, ": unparsable response"));
  }
  return response;
}

absl::Status Mismatch(const Workload& w, absl::string_view what, size_t expected,
                      size_t actual) {
  return absl::FailedPreconditionError(
      absl::StrFormat("%s: %s: expected %d bytes, got %d", w.name, what, expected, actual));
}

}  // namespace

const std::vector<std::string>& KnownWorkloads() {
  static const std::vector<std::string> kNames = {
      "echo", "Hash", "Encrypt", "Sign", "Verify", "HybridEncrypt", "PublicKeyEncrypt"};
  return kNames;
}

grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string ToBytes(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

absl::StatusOr<std::vector<Workload>> BuildWorkloads(const std::vector<std::string>& names,
                                                     const WorkloadOptions& options,
                                                     grpc::GenericStub& smcryptd,
                                                     grpc::GenericStub& echo) {
  std::mt19937_64 rng(options.seed);
  const std::string payload = RandomBytes(rng, options.payload_bytes);
  const std::string message = RandomBytes(rng, options.sign_bytes);
  const std::string size = absl::StrCat(options.payload_bytes, " B");
  const absl::Duration timeout = options.timeout;

  v1::SignRequest sign;
  sign.set_algorithm(v1::SM2);
  sign.mutable_key()->set_key_id(options.sm2_key_id);
  sign.set_data(message);

  std::vector<Workload> out;
  for (const std::string& name : names) {
    Workload w;
    if (name == "echo") {
      w.name = "echo";
      w.method = kEchoMethod;
      w.description = absl::StrCat("bare gRPC, ", size);
      w.request_bytes = payload.size();
      w.request = ToByteBuffer(payload);
    } else if (name == "Hash") {
      v1::HashRequest r;
      r.set_algorithm(v1::SM3);
      r.set_data(payload);
      w = MakeWorkload(name, absl::StrCat("SM3, ", size), r);
      absl::StatusOr<v1::HashResponse> resp = CallSmcryptd<v1::HashResponse>(smcryptd, w, timeout);
      if (!resp.ok()) return resp.status();
      if (resp->digest() != Sm3(payload)) {
        return absl::FailedPreconditionError(
            absl::StrCat("Hash: digest ", absl::BytesToHexString(resp->digest()),
                         " is not EVP_sm3's ", absl::BytesToHexString(Sm3(payload))));
      }
    } else if (name == "Encrypt") {
      v1::EncryptRequest r;
      r.set_algorithm(v1::SM4_GCM);
      r.mutable_key()->set_key_id(options.sm4_key_id);
      r.set_plaintext(payload);
      w = MakeWorkload(name, absl::StrCat("SM4-GCM, ", size), r);
      absl::StatusOr<v1::EncryptResponse> resp =
          CallSmcryptd<v1::EncryptResponse>(smcryptd, w, timeout);
      if (!resp.ok()) return resp.status();
      if (resp->ciphertext().size() != payload.size()) {
        return Mismatch(w, "ciphertext", payload.size(), resp->ciphertext().size());
      }
      if (resp->nonce().size() != kSm4GcmNonceSize) {
        return Mismatch(w, "nonce", kSm4GcmNonceSize, resp->nonce().size());
      }
      if (resp->tag().size() != kSm4GcmTagSize) {
        return Mismatch(w, "tag", kSm4GcmTagSize, resp->tag().size());
      }
    } else if (name == "Sign" || name == "Verify") {
      Workload s = MakeWorkload("Sign", absl::StrCat("SM2, ", message.size(), " B"), sign);
      absl::StatusOr<v1::SignResponse> signed_ =
          CallSmcryptd<v1::SignResponse>(smcryptd, s, timeout);
      if (!signed_.ok()) return signed_.status();
      if (signed_->signature().empty()) {
        return absl::FailedPreconditionError("Sign: empty signature");
      }
      if (name == "Sign") {
        w = std::move(s);
      } else {
        v1::VerifyRequest r;
        r.set_algorithm(v1::SM2);
        r.mutable_key()->set_key_id(options.sm2_key_id);
        r.set_data(message);
        r.set_signature(signed_->signature());
        w = MakeWorkload(name, absl::StrCat("SM2, ", message.size(), " B"), r);
        absl::StatusOr<v1::VerifyResponse> resp =
            CallSmcryptd<v1::VerifyResponse>(smcryptd, w, timeout);
        if (!resp.ok()) return resp.status();
        if (!resp->valid()) {
          return absl::FailedPreconditionError("Verify: the signature from Sign is not valid");
        }
      }
    } else if (name == "HybridEncrypt") {
      v1::HybridEncryptRequest r;
      r.set_algorithm(v1::HPKE_SM2_SM3_SM4GCM);
      r.mutable_key()->set_key_id(options.sm2_key_id);
      r.set_plaintext(payload);
      w = MakeWorkload(name, absl::StrCat("HPKE-SM2-SM3-SM4GCM, ", size), r);
      absl::StatusOr<v1::HybridEncryptResponse> resp =
          CallSmcryptd<v1::HybridEncryptResponse>(smcryptd, w, timeout);
      if (!resp.ok()) return resp.status();
      if (resp->ciphertext().size() != payload.size() + kHpkeOverhead) {
        return Mismatch(w, "ciphertext", payload.size() + kHpkeOverhead,
                        resp->ciphertext().size());
      }
    } else if (name == "PublicKeyEncrypt") {
      v1::PublicKeyEncryptRequest r;
      r.set_algorithm(v1::SM2);
      r.mutable_key()->set_key_id(options.sm2_key_id);
      r.set_plaintext(payload);
      r.set_sm2_format(v1::SM2_CIPHERTEXT_FORMAT_C1C3C2);
      w = MakeWorkload(name, absl::StrCat("SM2, ", size), r);
      absl::StatusOr<v1::PublicKeyEncryptResponse> resp =
          CallSmcryptd<v1::PublicKeyEncryptResponse>(smcryptd, w, timeout);
      if (!resp.ok()) return resp.status();
      if (resp->ciphertext().size() != payload.size() + kSm2CiphertextOverhead) {
        return Mismatch(w, "ciphertext", payload.size() + kSm2CiphertextOverhead,
                        resp->ciphertext().size());
      }
    } else {
      std::string known;
      for (const std::string& k : KnownWorkloads()) absl::StrAppend(&known, " ", k);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown RPC \"", name, "\"; known:", known));
    }
    // The echo server must give back exactly the bytes smcryptd is sent.
    const std::string request_bytes = ToBytes(w.request);
    absl::StatusOr<std::string> echoed = Call(echo, kEchoMethod, w.request, timeout);
    if (!echoed.ok()) return echoed.status();
    if (*echoed != request_bytes) {
      return absl::FailedPreconditionError(
          absl::StrCat("echo of ", w.name, ": the reply differs from the request"));
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace smcrypt::rpc_ceiling
