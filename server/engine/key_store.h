// key_store.h — the read-only keyring of smcryptd (docs/design.md, "Service": Keys).
//
// The keyring is the directory --keys_dir. Each `<key_id>.pem` or `<key_id>.v<n>.pem`
// holds exactly one PEM block, and the block's type binds the key to an algorithm family:
//   PRIVATE KEY  PKCS#8 PrivateKeyInfo   SM2, ECDSA P-256/secp256k1, RSA-2048/3072
//   PUBLIC KEY   SubjectPublicKeyInfo    the same families
//   SM4 KEY      16 raw bytes            SM4-* (ECB, CBC, CTR, CFB, OFB, GCM, CCM)
//                32 raw bytes (K1‖K2)    SM4-XTS, SM4-XTS-GB
//   AES KEY      16 or 32 raw bytes      AES-128-* or AES-256-*
//   HMAC KEY     1 or more raw bytes     HMAC-SM3, HMAC-SHA-256
// The family of a PRIVATE/PUBLIC KEY is found by parsing it. Entries whose name starts
// with a dot are skipped (a mounted Kubernetes Secret has ..data and ..<timestamp>
// entries), symlinks are followed, names ending in none of ".pem", ".min_version" and
// ".primary" are skipped with a warning, and a symlink into `..data/` whose target is
// gone is skipped (a Secret update that drops a key swaps `..data` before it removes the
// key's link). Any other defect, a broken symlink elsewhere included, fails loading with a
// message naming the file.
//
// Versions. A key may have several versions, each a flat file (a Kubernetes Secret
// volume holds flat names only): `<key_id>.v<n>.pem` is version n of key_id, n a decimal
// from 1 to 4294967295 without leading zeros, and a plain `<key_id>.pem` is version 1.
// Loading fails, naming the files, when `<key_id>.pem` and `<key_id>.v1.pem` both exist,
// when a version's number has leading zeros or is 0 (`k.v01.pem`, `k.v0.pem`), or when
// the versions of one key are of different families (a PRIVATE KEY and a PUBLIC KEY of
// one family may be mixed). No key_id ends in `.v<digits>`: such an id in a request is
// InvalidArgument. A request names a key (its primary version) or a key and a version.
//
// Minimum version. `<key_id>.min_version` holds one decimal m (ASCII whitespace around
// it is ignored; the same number rules as n): versions below m are retired, and a
// request naming one gets FailedPrecondition. Loading fails when the file is malformed,
// when no `<key_id>.pem` / `<key_id>.v<n>.pem` exists, or when m is above the newest
// version (the newest version is always usable). The file is checked like a PUBLIC KEY
// file (not writable by "other"). The versions from m up are the retained ones; a key
// retains at most kMaxRetainedVersions, and more fails loading (raise the minimum).
//
// Primary version. `<key_id>.primary` holds one decimal p (the rules and permission
// check of `<key_id>.min_version`): the version requests naming none encrypt, sign and
// wrap with, and the one tried first when they check data. Absent, the primary is the
// newest version. Loading fails, naming the file, when it is malformed, when the key has
// no version file, when version p is not loaded, or when p is below the minimum.
//
// Rotation, with every replica loading the same files (each at its own moment):
//   1. add `<key_id>.v<n+1>.pem` with `<key_id>.primary` = n: nothing changes which
//      version makes data, and every replica can already check data made under n+1;
//   2. wait until every replica reports version n+1 loaded (ListKeys, or the metric
//      smcrypt_key_version_info);
//   3. promote: `<key_id>.primary` = n+1 (or remove the file);
//   4. rewrap the data stored under older versions (Rewrap);
//   5. raise `<key_id>.min_version` to retire them; remove a file to drop a version.
// The primary and minimum are files of their own, not part of a name or a PEM header,
// because a Secret volume holds flat names only, they change apart from any key file
// (without rewriting secrets), and a name not ending in ".pem" is never taken for a key.
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

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
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
  kSm4,           // SM4-* except XTS
  kAes128,        // AES-128-*
  kAes256,        // AES-256-*
  kHmac,          // HMAC-SM3, HMAC-SHA-256
  kSm4Xts,        // SM4-XTS, SM4-XTS-GB (a 32-byte SM4 KEY: K1 ‖ K2)
};

// KeyFamilyName is a short human name ("SM2", "AES-256", ...) for messages.
absl::string_view KeyFamilyName(KeyFamily family);

// FamilyServes says whether a key of `family` may be used with `alg`.
bool FamilyServes(KeyFamily family, Algorithm alg);

// KeyFamilyForAlgorithm is the family an algorithm's keys belong to.
KeyFamily KeyFamilyForAlgorithm(Algorithm alg);

struct StoredKey;
// PublicKeyAlgorithmOf is the algorithm that stands for `entry`'s family where a request
// names none (GetPublicKey): SM2, ECDSA-P256, ECDSA-SECP256K1, RSA-2048-PSS or
// RSA-3072-PSS (a family has one SubjectPublicKeyInfo whichever of its algorithms).
// FailedPrecondition (reason WRONG_KEY_FAMILY, metadata key_id, key_family) for an SM4,
// AES or HMAC key: a secret key has no public key.
absl::StatusOr<Algorithm> PublicKeyAlgorithmOf(const StoredKey& entry);

// StoredKey is one keyring entry: one version of a key.
struct StoredKey {
  std::string key_id;
  // version: n of `<key_id>.v<n>.pem`, 1 for `<key_id>.pem`.
  uint32_t version = 1;
  // versioned: some file of this key is named `<key_id>.v<n>.pem` (the responses of
  // requests naming no version then report the version used; crypto.proto, KeyRef).
  bool versioned = false;
  KeyFamily family;
  // is_private: a PRIVATE KEY entry. Symmetric entries are secret but not "private".
  bool is_private = false;
  bool is_symmetric = false;
  // material: PKCS#8 DER (private), SubjectPublicKeyInfo DER (public), or raw key bytes.
  SecretData material;
  // public_key_der: the SubjectPublicKeyInfo DER of a PRIVATE or PUBLIC KEY entry.
  std::string public_key_der;
  // public_key_sha256: SHA-256 of public_key_der (32 bytes); empty for symmetric entries.
  std::string public_key_sha256;
  // load_time: when this process first loaded this version's current bytes (a load
  // given a previous store holding the same bytes for this key and version keeps its
  // time).
  absl::Time load_time = absl::InfinitePast();
};

// kMaxRetainedVersions: the most versions (from the minimum version up) one key may
// retain; each is a trial when a request naming no version checks data.
inline constexpr uint32_t kMaxRetainedVersions = 16;

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
  // LoadFromDirectory loads every `<key_id>.pem`, `<key_id>.v<n>.pem`,
  // `<key_id>.min_version` and `<key_id>.primary` in `dir`. `previous` (may be null): the
  // store this one replaces; a version whose bytes it holds keeps its load_time.
  // Errors: InvalidArgument "<path>: <reason>" for the first bad file (unreadable,
  // not exactly one PEM block, unknown PEM type, wrong symmetric key size, a key of no
  // supported family, a bad key_id, a bad version number, a version held twice,
  // versions of different families, a bad or unusable min_version or primary, more
  // than kMaxRetainedVersions retained versions), NotFound when `dir` does not exist,
  // PermissionDenied "<path>: mode 0644 ..." for a file or directory whose permissions
  // fail the checks above.
  static absl::StatusOr<std::unique_ptr<KeyStore>> LoadFromDirectory(
      absl::string_view dir, const KeyStoreOptions& options = {},
      const KeyStore* previous = nullptr);
  // ParseEntry parses one file's text as the entry `key_id` (used by loading and tests).
  static absl::StatusOr<StoredKey> ParseEntry(absl::string_view key_id, absl::string_view text);

  // Find returns version `version` of the key (0: its primary version). Errors:
  // InvalidArgument for a key_id that is not 1–128 characters of [A-Za-z0-9._-] (no
  // leading dot) or that ends in `.v<digits>`, which no entry can have; NotFound
  // "unknown key_id '<id>'" (reason KEY_NOT_FOUND) or "key '<id>' has no version <n>
  // (it has ...)" (reason KEY_VERSION_NOT_FOUND); FailedPrecondition "key '<id>' version
  // <n> is below its minimum version <m> ..." (reason KEY_VERSION_RETIRED). The pointer
  // lives as long as the store.
  absl::StatusOr<const StoredKey*> Find(absl::string_view key_id, uint32_t version = 0) const;
  // Versions lists the usable versions of `key_id` (min_version and up), oldest first;
  // empty for an unknown key.
  std::vector<const StoredKey*> Versions(absl::string_view key_id) const;
  // AllVersions lists every loaded version of `key_id`, retired ones included, oldest
  // first; empty for an unknown key.
  std::vector<const StoredKey*> AllVersions(absl::string_view key_id) const;
  // MinVersion is the `<key_id>.min_version` of the key, 1 when it has none, 0 for an
  // unknown key.
  uint32_t MinVersion(absl::string_view key_id) const;
  // PrimaryVersion is the version Find(key_id, 0) returns, 0 for an unknown key.
  uint32_t PrimaryVersion(absl::string_view key_id) const;
  // key_ids lists every key_id in byte order (ListKeys pages through it).
  const std::vector<std::string>& key_ids() const { return key_ids_; }
  // load_time: when this store was loaded (InfinitePast for Empty()).
  absl::Time load_time() const { return load_time_; }
  // size is the number of keys (key_ids), whatever their number of versions.
  size_t size() const { return keys_.size(); }
  // entries lists every version of every key (in no particular order); the pointers live
  // as long as the store.
  std::vector<const StoredKey*> entries() const;

 private:
  // KeyVersions: the versions of one key, oldest first, its min_version (0: none) and
  // its primary (an index into versions).
  struct KeyVersions {
    std::vector<std::unique_ptr<StoredKey>> versions;
    uint32_t min_version = 0;
    size_t primary = 0;
  };
  KeyStore() = default;
  absl::flat_hash_map<std::string, KeyVersions> keys_;
  std::vector<std::string> key_ids_;
  absl::Time load_time_ = absl::InfinitePast();
};

// IsValidKeyId: 1–128 characters of [A-Za-z0-9._-], not starting with a dot and not
// ending in `.v<digits>` (the suffix of a version file).
bool IsValidKeyId(absl::string_view key_id);

// ParseKeyVersion parses a version number: a decimal from 1 to 4294967295 without
// leading zeros (as in `<key_id>.v<n>.pem` and `<key_id>.min_version`). InvalidArgument
// otherwise.
absl::StatusOr<uint32_t> ParseKeyVersion(absl::string_view text);

// KeyFileName is what a keyring file name says: a version of a key, or a key's
// minimum or primary version file.
struct KeyFileName {
  enum class Kind { kKey, kMinVersion, kPrimary };
  Kind kind = Kind::kKey;
  std::string key_id;
  uint32_t version = 1;  // kKey only
  bool versioned = false;  // kKey: named `<key_id>.v<n>.pem`
};

// ParseKeyFileName reads a file name of --keys_dir: `<key_id>.pem` (version 1),
// `<key_id>.v<n>.pem`, `<key_id>.min_version`, `<key_id>.primary`; nullopt for any
// other name (skipped by loading). InvalidArgument for a version suffix whose number is
// malformed (`.v0`, `.v01`, out of range) or a key_id IsValidKeyId refuses.
absl::StatusOr<std::optional<KeyFileName>> ParseKeyFileName(absl::string_view name);

}  // namespace smcrypt::server

#endif  // SMCRYPT_SERVER_KEY_STORE_H_
