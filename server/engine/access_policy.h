// access_policy.h — which client may use which key for which operation (--access_policy).
//
// A policy file holds one rule per line; '#' starts a comment, blank lines are skipped:
//
//   allow <operations> <keys> <identity>
//
//   operations  comma list of hash, mac, sign, verify, encrypt, decrypt, public_key,
//               keygen, random, info, key_exchange, list_keys, rewrap, datakey — or *
//               for all of them
//   keys        comma list of key_id patterns (`*` matches any run of characters, so
//               `payments-*` or `*`), and @inline for keys carried in the request.
//               `*` alone matches every key_id and @inline as well. Operations that
//               take no key (hash, keygen, random, info) ignore this field.
//   identity    the rest of the line (it may contain spaces), one of
//                 san:<pattern>      any subject alternative name of the client
//                                    certificate (DNS, URI, e-mail, IP)
//                 cn:<pattern>       the certificate's subject common name
//                 subject:<pattern>  the full subject as gRPC 1.51 prints it
//                                    ("CN=client-a,O=Example")
//                 anonymous          a client without a certificate (no mTLS)
//                 *                  every client, with or without a certificate
//               Patterns match the whole value; `*` matches any run of characters.
//
// Example:
//   allow sign,verify,public_key  payments-*        san:payments.prod.example.com
//   allow encrypt,decrypt         data-key,@inline  cn:batch-*
//   allow hash,verify,info,public_key  *            *
//
// Without --access_policy every request is allowed (the behaviour before policies).
// With one, a request is allowed when at least one rule names its operation, its key
// and its client; anything else is PERMISSION_DENIED. The identity comes from the mTLS
// client certificate (grpc::AuthContext), so policies are meant for --tls_client_ca;
// without mTLS every client is "anonymous".
//
// Parsing is strict: an unknown operation, a bad key pattern, an unknown identity kind or
// a short line fails start-up with "<file>:<line>: <reason>". Thread-safe after loading.
#ifndef SMCRYPT_SERVER_ACCESS_POLICY_H_
#define SMCRYPT_SERVER_ACCESS_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace smcrypt::server {

// AccessOperation is what a request does with its key (one per RPC; the mapping is the
// MethodSpec table, server/service/method_spec.h).
enum class AccessOperation : uint8_t {
  kHash,       // Hash, HashStream, HashBatch
  kMac,        // Hmac (compute or check)
  kSign,       // Sign, SignBatch
  kVerify,     // Verify, VerifyBatch
  kEncrypt,    // Encrypt*, PublicKeyEncrypt, HybridEncrypt*
  kDecrypt,    // Decrypt*, PublicKeyDecrypt, HybridDecrypt*
  kPublicKey,  // GetPublicKey
  kKeygen,     // GenerateKeyPair
  kRandom,     // GenerateRandom
  kInfo,       // GetServerInfo
  kKeyExchange,  // KeyExchange (the caller's SM2 private key)
  kListKeys,   // ListKeys (the key ids and versions of the keyring; takes no key)
  kRewrap,     // Rewrap, RewrapBatch (decrypt and re-encrypt with one keyring key)
  kDataKey,    // GenerateDataKey, GenerateDataKeyWithoutPlaintext (the wrapping key)
};
inline constexpr int kNumAccessOperations = 14;

// AccessOperationName: "hash", "mac", "sign", ... (the policy file's spelling).
absl::string_view AccessOperationName(AccessOperation op);
// OperationTakesKey: false for hash, keygen, random, info and list_keys.
bool OperationTakesKey(AccessOperation op);

// ClientIdentity is who sent a request, from the connection's authentication.
struct ClientIdentity {
  // authenticated: the client presented a certificate the server verified (mTLS).
  bool authenticated = false;
  std::string subject;       // "CN=client-a,O=Example" (x509_subject)
  std::string common_name;   // x509_common_name
  std::vector<std::string> sans;  // x509_subject_alternative_name values
  // peer: the transport address ("ipv4:127.0.0.1:40000"), for audit lines.
  std::string peer;

  // Name is how messages and audit lines name the client: the first SAN, else
  // "CN=<common name>", else the subject, else "anonymous".
  std::string Name() const;
};

// AccessKey is the key a request names: none, a keyring key_id, or inline bytes (never
// passed here: only the fact that the key is inline).
struct AccessKey {
  enum class Kind : uint8_t { kNone, kKeyId, kInline };
  Kind kind = Kind::kNone;
  absl::string_view key_id;  // kKeyId only

  static AccessKey None() { return {}; }
  static AccessKey Id(absl::string_view id) { return {Kind::kKeyId, id}; }
  static AccessKey Inline() { return {Kind::kInline, {}}; }
  // Describe: "key_id 'x'" (a malformed key_id by its length only), "an inline key" or
  // "no key", for messages.
  std::string Describe() const;
};

class AccessPolicy {
 public:
  // Parse reads policy text; `source` names it in errors ("<source>:<line>: ...").
  // Errors: InvalidArgument for any malformed line; an empty policy (no rule) is valid
  // and denies everything.
  static absl::StatusOr<std::unique_ptr<AccessPolicy>> Parse(absl::string_view text,
                                                             absl::string_view source);
  // LoadFile reads and parses `path`. Errors: NotFound when it cannot be read, else as
  // Parse.
  static absl::StatusOr<std::unique_ptr<AccessPolicy>> LoadFile(const std::string& path);

  // Check returns OK when a rule allows `op` on `key` for `client`, else
  // PermissionDenied "access policy: client '<name>' may not <op> with <key>".
  absl::Status Check(const ClientIdentity& client, AccessOperation op,
                     const AccessKey& key) const;

  size_t num_rules() const { return rules_.size(); }

 private:
  enum class IdentityKind : uint8_t { kAny, kAnonymous, kSan, kCommonName, kSubject };
  struct Rule {
    uint32_t operations = 0;  // bit (1 << op)
    std::vector<std::string> key_patterns;
    bool inline_keys = false;
    IdentityKind identity_kind = IdentityKind::kAny;
    std::string identity_pattern;
  };
  AccessPolicy() = default;
  static bool Matches(const Rule& rule, const ClientIdentity& client);

  std::vector<Rule> rules_;
};

// GlobMatch matches `text` against `pattern`, where '*' matches any run of characters
// (including none) and every other character itself. Not for secret data.
bool GlobMatch(absl::string_view pattern, absl::string_view text);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_ACCESS_POLICY_H_
