// method_spec.h — what each CryptoService RPC is checked, audited and charged for.
//
// One MethodSpec per RPC, all in the table below, read by the service's handlers (the
// unary call guard of call_guard.h, the batch runs and queues of batch_runner.h and the
// stream reactors of stream_reactor.h), so that a method's access-policy operation, its
// order of checks, whether it writes audit lines, its --max_inflight_bytes admission
// charge and its dynamic-batching queue are stated in one place.
// tests/server/method_spec_test.cc checks every row on the service served in-process.
#ifndef SMCRYPT_SERVER_METHOD_SPEC_H_
#define SMCRYPT_SERVER_METHOD_SPEC_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "server/engine/access_policy.h"
#include "server/engine/dynamic_batcher.h"

namespace smcrypt::server {

// CheckOrder: whether a request (or, for a batch RPC checked per item, each item) is
// parsed before or after the access-policy check. It decides which status answers a
// request with both a bad field and a denied key, and whether a denial is audited for a
// request that does not parse, so it is part of each method's contract.
enum class CheckOrder {
  kPolicyFirst,  // Authorize, then parse: a denied key wins over a parse error
  kParseFirst,   // parse, then Authorize: a parse error wins; no policy check without it
};

// PolicyScope: what Authorize is called for.
enum class PolicyScope {
  kCall,     // once per call, with the request's algorithm and key (when it has them)
  kEachItem,  // a batch RPC: once per item, with the item's algorithm and key
};

// ResponseEstimate: the response size a unary call reserves at admission, before the
// work (crypto_service_impl.h, "Memory").
enum class ResponseEstimate {
  kRequestSize,      // about the request's serialized size
  kRandomLength,     // GenerateRandom: the length asked for (capped) + 16
  kKeyPair,          // 16 KiB (an RSA-4096 key pair in DER and PEM)
  kRequestPlus4KiB,  // the request's size + 4 KiB (a public key in DER and PEM)
  kServerInfo,       // 16 KiB
  kStream,           // streams: charged per message, not at admission
};

struct MethodSpec {
  // method: the RPC's name in its audit lines (denials included).
  absl::string_view method;
  AccessOperation op;
  CheckOrder order;
  PolicyScope scope;
  // audited: each request (or item) that passes the policy check writes one audit line
  // with its final status (private- and secret-key use), parse errors after the check
  // included; before the key is used, AuditLog::Admit may refuse it (AUDIT_UNAVAILABLE
  // under --audit_failure=closed). Denials are always audited, by Authorize.
  bool audited;
  // Admission: request bytes + (charge_items: kBatchItemAdmissionBytes per batch item)
  // + 2 × response estimate + kCallAdmissionBytes.
  ResponseEstimate response;
  bool charge_items;
  // queue: the BatchQueue that takes the method's batchable calls with --batching on.
  std::optional<BatchedOperation> queue;
};

// rpc::k<Method>: the table. Columns: method, operation, order, scope, audited,
// response estimate, per-item charge, queue.
namespace rpc {

using Op = AccessOperation;
using Q = BatchedOperation;
using enum CheckOrder;
using enum PolicyScope;
using enum ResponseEstimate;
inline constexpr std::optional<BatchedOperation> kNoQueue = std::nullopt;

// clang-format off
inline constexpr MethodSpec kHash               {"Hash",                Op::kHash,      kPolicyFirst, kCall,     false, kRequestSize,     false, Q::kHash};
inline constexpr MethodSpec kHashStream         {"HashStream",          Op::kHash,      kPolicyFirst, kCall,     false, kStream,          false, kNoQueue};
inline constexpr MethodSpec kHashBatch          {"HashBatch",           Op::kHash,      kParseFirst,  kCall,     false, kRequestSize,     true,  kNoQueue};
inline constexpr MethodSpec kHmac               {"Hmac",                Op::kMac,       kPolicyFirst, kCall,     true,  kRequestSize,     false, kNoQueue};
inline constexpr MethodSpec kSign               {"Sign",                Op::kSign,      kPolicyFirst, kCall,     true,  kRequestSize,     false, Q::kSign};
inline constexpr MethodSpec kVerify             {"Verify",              Op::kVerify,    kPolicyFirst, kCall,     false, kRequestSize,     false, Q::kVerify};
inline constexpr MethodSpec kSignBatch          {"SignBatch",           Op::kSign,      kPolicyFirst, kEachItem, true,  kRequestSize,     true,  kNoQueue};
inline constexpr MethodSpec kVerifyBatch        {"VerifyBatch",         Op::kVerify,    kPolicyFirst, kEachItem, false, kRequestSize,     true,  kNoQueue};
inline constexpr MethodSpec kEncrypt            {"Encrypt",             Op::kEncrypt,   kPolicyFirst, kCall,     true,  kRequestSize,     false, kNoQueue};
inline constexpr MethodSpec kDecrypt            {"Decrypt",             Op::kDecrypt,   kPolicyFirst, kCall,     true,  kRequestSize,     false, kNoQueue};
inline constexpr MethodSpec kEncryptBatch       {"EncryptBatch",        Op::kEncrypt,   kParseFirst,  kEachItem, true,  kRequestSize,     true,  kNoQueue};
inline constexpr MethodSpec kEncryptStream      {"EncryptStream",       Op::kEncrypt,   kPolicyFirst, kCall,     true,  kStream,          false, kNoQueue};
inline constexpr MethodSpec kDecryptStream      {"DecryptStream",       Op::kDecrypt,   kPolicyFirst, kCall,     true,  kStream,          false, kNoQueue};
inline constexpr MethodSpec kPublicKeyEncrypt   {"PublicKeyEncrypt",    Op::kEncrypt,   kParseFirst,  kCall,     false, kRequestSize,     false, Q::kPublicKeyEncrypt};
inline constexpr MethodSpec kPublicKeyDecrypt   {"PublicKeyDecrypt",    Op::kDecrypt,   kPolicyFirst, kCall,     true,  kRequestSize,     false, kNoQueue};
inline constexpr MethodSpec kHybridEncrypt      {"HybridEncrypt",       Op::kEncrypt,   kParseFirst,  kCall,     false, kRequestSize,     false, Q::kHybridEncrypt};
inline constexpr MethodSpec kHybridEncryptBatch {"HybridEncryptBatch",  Op::kEncrypt,   kParseFirst,  kEachItem, false, kRequestSize,     true,  kNoQueue};
inline constexpr MethodSpec kHybridDecrypt      {"HybridDecrypt",       Op::kDecrypt,   kPolicyFirst, kCall,     true,  kRequestSize,     false, kNoQueue};
inline constexpr MethodSpec kHybridEncryptStream{"HybridEncryptStream", Op::kEncrypt,   kPolicyFirst, kCall,     false, kStream,          false, kNoQueue};
inline constexpr MethodSpec kHybridDecryptStream{"HybridDecryptStream", Op::kDecrypt,   kPolicyFirst, kCall,     true,  kStream,          false, kNoQueue};
inline constexpr MethodSpec kKeyExchange        {"KeyExchange",         Op::kKeyExchange, kPolicyFirst, kCall,   true,  kStream,          false, kNoQueue};
inline constexpr MethodSpec kGenerateKeyPair    {"GenerateKeyPair",     Op::kKeygen,    kParseFirst,  kCall,     false, kKeyPair,         false, kNoQueue};
inline constexpr MethodSpec kGetPublicKey       {"GetPublicKey",        Op::kPublicKey, kParseFirst,  kCall,     false, kRequestPlus4KiB, false, kNoQueue};
inline constexpr MethodSpec kGenerateRandom     {"GenerateRandom",      Op::kRandom,    kPolicyFirst, kCall,     false, kRandomLength,    false, kNoQueue};
inline constexpr MethodSpec kGetServerInfo      {"GetServerInfo",       Op::kInfo,      kPolicyFirst, kCall,     false, kServerInfo,      false, kNoQueue};
inline constexpr MethodSpec kListKeys           {"ListKeys",            Op::kListKeys,  kPolicyFirst, kCall,     true,  kServerInfo,      false, kNoQueue};
inline constexpr MethodSpec kRewrap             {"Rewrap",              Op::kRewrap,    kPolicyFirst, kCall,     true,  kRequestSize,     false, kNoQueue};
inline constexpr MethodSpec kRewrapBatch        {"RewrapBatch",         Op::kRewrap,    kPolicyFirst, kEachItem, true,  kRequestSize,     true,  kNoQueue};
inline constexpr MethodSpec kGenerateDataKey    {"GenerateDataKey",     Op::kDataKey,   kPolicyFirst, kCall,     true,  kRequestPlus4KiB, false, kNoQueue};
inline constexpr MethodSpec kGenerateDataKeyWithoutPlaintext{"GenerateDataKeyWithoutPlaintext", Op::kDataKey, kPolicyFirst, kCall, true, kRequestPlus4KiB, false, kNoQueue};
// clang-format on

// Notes on rows: HashBatch's "parse" is its batch-size check, before its one policy check
// (no algorithm, no key); its items are then parsed without one. GenerateKeyPair,
// GetPublicKey, PublicKeyEncrypt and HybridEncrypt parse their algorithm (and format)
// first, so an unknown algorithm is INVALID_ARGUMENT even for a denied client.
// GenerateDataKey's response estimate (request + 4 KiB) holds the data key and its
// wrapping (at most a 384-byte RSA-3072 ciphertext).
// first, so an unknown algorithm is INVALID_ARGUMENT even for a denied client. ListKeys
// takes no key and is audited all the same: each listing of the keyring is a line.

}  // namespace rpc

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_METHOD_SPEC_H_
