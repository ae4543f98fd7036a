// key_store.h — the read-only keyring of smcryptd (DESIGN.md, "Service": Keys).
//
// The keyring is the directory --keys_dir. Each `<key_id>.pem` holds exactly one PEM
// block, and the block's type binds the key to an algorithm family:
//   PRIVATE KEY  PKCS#8 PrivateKeyInfo   SM2, ECDSA P-256/secp256k1, RSA-2048/3072
//   PUBLIC KEY   SubjectPublicKeyInfo    the same families
//   SM4 KEY      16 raw bytes            SM4-*
//   AES KEY      16 or 32 raw bytes      AES-128-* or AES-256-*
//   HMAC KEY     1 or more raw bytes     HMAC-SM3, HMAC-SHA-256
// The family of a PRIVATE/PUBLIC KEY is found by parsing it. Entries whose name starts
// with a dot are skipped (a mounted Kubernetes Secret has ..data and ..<timestamp>
// entries), symlinks are followed, names not ending in ".pem" are skipped with a
// warning, and a symlink into `..data/` whose target is gone is skipped (a Secret update
// that drops a key swaps `..data` before it removes the key's link). Any other defect,
// a broken symlink elsewhere included, fails loading with a message naming the file.
//
// Permissions (checked unless KeyStoreOptions::allow_insecure_permissions, the flag
// --allow_insecure_key_permissions): a file holding a secret (PRIVATE KEY, SM4/AES/HMAC
// KEY) must not be readable or writable by "other" (mode & 0006), a PUBLIC KEY file not
// writable by "other" (mode & 0002), and the directory not writable by "other" unless it
// is on a read-only mount (Kubernetes mounts Secret volumes read-only on a 1777 tmpfs).
// Group bits are allowed: Kubernetes Secret volumes with fsGroup use 0440 or 0640. The
// mode checked is that of the symlink's target (stat, not lstat).
#ifndef SMCRYPT_SERVER_KEY_STORE_H_
#define SMCRYPT_SERVER_KEY_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "smcrypt/algorithm.h"
#include "smcrypt/secret_data.h"

namespace smcrypt::server {

// KeyFamily is what a key can be used for.
enum class KeyFamily {
  kSm2,           // SM2 signatures and encryption, HPKE-SM2-SM3-SM4GCM
  kEcP256,        // ECDSA-P256, HPKE-P256-SHA256-AES128GCM
  kEcSecp256k1,   // ECDSA-SECP256K1
  kRsa2048,       // RSA-2048-PSS, RSA-2048-OAEP
  kRsa3072,       // RSA-3072-PSS, RSA-3072-OAEP
  kSm4,           // SM4-*
  kAes128,        // AES-128-*
  kAes256,        // AES-256-*
  kHmac,          // HMAC-SM3, HMAC-SHA-256
};

// KeyFamilyName is a short human name ("SM2", "AES-256", ...) for messages.
absl::string_view KeyFamilyName(KeyFamily family);

// FamilyServes says whether a key of `family` may be used with `alg`.
bool FamilyServes(KeyFamily family, Algorithm alg);

// KeyFamilyForAlgorithm is the family an algorithm's keys belong to.
KeyFamily KeyFamilyForAlgorithm(Algorithm alg);

// StoredKey is one keyring entry.
struct StoredKey {
  std::string key_id;
  KeyFamily family;
  // is_private: a PRIVATE KEY entry. Symmetric entries are secret but not "private".
  bool is_private = false;
  bool is_symmetric = false;
  // material: PKCS#8 DER (private), SubjectPublicKeyInfo DER (public), or raw key bytes.
  SecretData material;
  // public_key_der: the SubjectPublicKeyInfo DER of a PRIVATE or PUBLIC KEY entry.
  std::string public_key_der;
};

// KeyStoreOptions tune LoadFromDirectory.
struct KeyStoreOptions {
  // allow_insecure_permissions skips the permission checks (a warning is logged for
  // each file that would have failed them).
  bool allow_insecure_permissions = false;
};

// KeyStore is immutable after loading; Find is thread-safe.
class KeyStore {
 public:
  // Empty returns a keyring with no keys (no --keys_dir).
  static std::unique_ptr<KeyStore> Empty();
  // LoadFromDirectory loads every `<key_id>.pem` in `dir`.
  // Errors: InvalidArgument "<path>: <reason>" for the first bad file (unreadable,
  // not exactly one PEM block, unknown PEM type, wrong symmetric key size, a key of no
  // supported family, a bad key_id), NotFound when `dir` does not exist,
  // PermissionDenied "<path>: mode 0644 ..." for a file or directory whose permissions
  // fail the checks above.
  static absl::StatusOr<std::unique_ptr<KeyStore>> LoadFromDirectory(
      absl::string_view dir, const KeyStoreOptions& options = {});
  // ParseEntry parses one file's text as the entry `key_id` (used by loading and tests).
  static absl::StatusOr<StoredKey> ParseEntry(absl::string_view key_id, absl::string_view text);

  // Find returns the entry, NotFound "unknown key_id '<id>'", or InvalidArgument for a
  // key_id that is not 1–128 characters of [A-Za-z0-9._-] (no leading dot), which no
  // entry can have. The pointer lives as long as the store.
  absl::StatusOr<const StoredKey*> Find(absl::string_view key_id) const;
  size_t size() const { return keys_.size(); }
  // entries lists every key (in no particular order); the pointers live as long as the
  // store.
  std::vector<const StoredKey*> entries() const;

 private:
  KeyStore() = default;
  absl::flat_hash_map<std::string, std::unique_ptr<StoredKey>> keys_;
};

// IsValidKeyId: 1–128 characters of [A-Za-z0-9._-], not starting with a dot.
bool IsValidKeyId(absl::string_view key_id);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_KEY_STORE_H_
