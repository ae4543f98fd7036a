#include "server/engine/key_store.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <filesystem>
#include <system_error>
#include <utility>

#include <openssl/crypto.h>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "server/engine/error_reason.h"
#include "server/engine/logging.h"
#include "server/engine/secret_file.h"
#include "smcrypt/pem.h"
#include "smcrypt/registry.h"

namespace smcrypt::server {
namespace {

struct AsymmetricCandidate {
  Algorithm alg;
  KeyFamily family;
};

// Families of PRIVATE/PUBLIC KEY entries, tried in this order.
constexpr AsymmetricCandidate kAsymmetricCandidates[] = {
    {Algorithm::kSm2, KeyFamily::kSm2},
    {Algorithm::kEcdsaP256, KeyFamily::kEcP256},
    {Algorithm::kEcdsaSecp256k1, KeyFamily::kEcSecp256k1},
    {Algorithm::kRsa2048Pss, KeyFamily::kRsa2048},
    {Algorithm::kRsa3072Pss, KeyFamily::kRsa3072},
};

// IsDroppedSecretKey: `path` is a symlink into `..data/` whose target is gone. A
// Kubernetes Secret update swaps `..data` first and removes the links of the keys it
// drops afterwards, so between the two such a link is a key being removed.
bool IsDroppedSecretKey(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) return false;
  const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
  if (ec || target.empty() || *target.begin() != "..data") return false;
  return !std::filesystem::exists(path, ec) && !ec;
}

// Sha256 is the SHA-256 digest of `data` (a public key's fingerprint).
std::string Sha256(absl::string_view data) {
  absl::StatusOr<std::unique_ptr<Hash>> h = NewHash(Algorithm::kSha256);
  if (!h.ok()) return "";  // SHA-256 is always registered
  (*h)->Update(data);
  return (*h)->Finish();
}

// kMaxKeyFileSize bounds a keyring file (an RSA-3072 PKCS#8 PEM is about 2.5 KB).
constexpr size_t kMaxKeyFileSize = 1 << 20;

std::string ModeString(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// CheckFileMode: secrets must have no "other" bits, public keys no "other" write bit.
// `st` is the stat of the file as opened and read.
absl::Status CheckFileMode(const std::string& path, const struct stat& st, const StoredKey& key) {
  const bool secret = key.is_private || key.is_symmetric;
  const mode_t forbidden = secret ? (S_IROTH | S_IWOTH) : S_IWOTH;
  if ((st.st_mode & forbidden) == 0) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      path, ": mode ", ModeString(st.st_mode), " lets any user ",
      secret ? "read or replace this secret key" : "replace this public key",
      "; use chmod 0600 or 0640 (owner, or owner and group; Kubernetes: defaultMode 0440 "
      "with fsGroup), or start with --allow_insecure_key_permissions"));
}

// CheckDirMode: a directory any user may write lets them add keys, unless the mount is
// read-only (Kubernetes Secret volumes: a read-only 1777 tmpfs).
absl::Status CheckDirMode(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": cannot stat"));
  }
  if ((st.st_mode & S_IWOTH) == 0) return absl::OkStatus();
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "--keys_dir ", dir, ": mode ", ModeString(st.st_mode),
      " lets any user add or replace keys; use chmod 0700 or 0750, mount it read-only, "
      "or start with --allow_insecure_key_permissions"));
}

}  // namespace

absl::string_view KeyFamilyName(KeyFamily family) {
  switch (family) {
    case KeyFamily::kSm2: return "SM2";
    case KeyFamily::kEcP256: return "EC P-256";
    case KeyFamily::kEcSecp256k1: return "EC secp256k1";
    case KeyFamily::kRsa2048: return "RSA-2048";
    case KeyFamily::kRsa3072: return "RSA-3072";
    case KeyFamily::kSm4: return "SM4";
    case KeyFamily::kAes128: return "AES-128";
    case KeyFamily::kAes256: return "AES-256";
    case KeyFamily::kHmac: return "HMAC";
    case KeyFamily::kSm4Xts: return "SM4-XTS";
  }
  return "unknown";
}

KeyFamily KeyFamilyForAlgorithm(Algorithm alg) {
  switch (alg) {
    case Algorithm::kSm2:
    case Algorithm::kHpkeSm2Sm3Sm4Gcm:
      return KeyFamily::kSm2;
    case Algorithm::kEcdsaP256:
    case Algorithm::kHpkeP256Sha256Aes128Gcm:
      return KeyFamily::kEcP256;
    case Algorithm::kEcdsaSecp256k1:
      return KeyFamily::kEcSecp256k1;
    case Algorithm::kRsa2048Pss:
    case Algorithm::kRsa2048Oaep:
      return KeyFamily::kRsa2048;
    case Algorithm::kRsa3072Pss:
    case Algorithm::kRsa3072Oaep:
      return KeyFamily::kRsa3072;
    case Algorithm::kSm4Ecb:
    case Algorithm::kSm4Cbc:
    case Algorithm::kSm4Ctr:
    case Algorithm::kSm4Gcm:
    case Algorithm::kSm4Ccm:
    case Algorithm::kSm4Cfb:
    case Algorithm::kSm4Ofb:
      return KeyFamily::kSm4;
    case Algorithm::kSm4Xts:
    case Algorithm::kSm4XtsGb:
      return KeyFamily::kSm4Xts;
    case Algorithm::kAes128Ecb:
    case Algorithm::kAes128Cbc:
    case Algorithm::kAes128Ctr:
    case Algorithm::kAes128Gcm:
      return KeyFamily::kAes128;
    case Algorithm::kAes256Ecb:
    case Algorithm::kAes256Cbc:
    case Algorithm::kAes256Ctr:
    case Algorithm::kAes256Gcm:
      return KeyFamily::kAes256;
    case Algorithm::kSm3:
    case Algorithm::kSha256:
    case Algorithm::kHmacSm3:
    case Algorithm::kHmacSha256:
      return KeyFamily::kHmac;
  }
  return KeyFamily::kHmac;
}

absl::StatusOr<Algorithm> PublicKeyAlgorithmOf(const StoredKey& entry) {
  for (const AsymmetricCandidate& c : kAsymmetricCandidates) {
    if (c.family == entry.family) return c.alg;
  }
  const absl::string_view family = KeyFamilyName(entry.family);
  return WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "key '", entry.key_id, "' is an ", family,
          " key: a secret key, with no public key (public keys are those of SM2, EC and RSA "
          "keys)")),
      reason::kWrongKeyFamily, {{"key_id", entry.key_id}, {"key_family", family}});
}

bool FamilyServes(KeyFamily family, Algorithm alg) {
  if (alg == Algorithm::kSm3 || alg == Algorithm::kSha256) return false;
  return KeyFamilyForAlgorithm(alg) == family;
}

namespace {

// VersionSuffixStart: where a `.v<digits>` suffix of `stem` starts, or npos.
size_t VersionSuffixStart(absl::string_view stem) {
  size_t i = stem.size();
  while (i > 0 && stem[i - 1] >= '0' && stem[i - 1] <= '9') --i;
  if (i == stem.size() || i < 2 || stem[i - 1] != 'v' || stem[i - 2] != '.') {
    return absl::string_view::npos;
  }
  return i - 2;
}

}  // namespace

bool IsValidKeyId(absl::string_view key_id) {
  if (key_id.empty() || key_id.size() > 128 || key_id[0] == '.') return false;
  for (char c : key_id) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return VersionSuffixStart(key_id) == absl::string_view::npos;
}

absl::StatusOr<uint32_t> ParseKeyVersion(absl::string_view text) {
  const bool digits = !text.empty() && text.size() <= 10 &&
                      std::all_of(text.begin(), text.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  uint64_t n = 0;
  if (digits) {
    for (char c : text) n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!digits || text[0] == '0' || n > 0xffffffffu) {
    return absl::InvalidArgumentError(absl::StrCat(
        "version '", text.size() > 24 ? absl::StrCat(text.substr(0, 24), "...") : text,
        "' is not a decimal from 1 to 4294967295 without leading zeros"));
  }
  return static_cast<uint32_t>(n);
}

absl::StatusOr<std::optional<KeyFileName>> ParseKeyFileName(absl::string_view name) {
  KeyFileName out;
  absl::string_view stem = name;  // ConsumeSuffix leaves it alone when it fails
  if (absl::ConsumeSuffix(&stem, ".pem")) {
    out.kind = KeyFileName::Kind::kKey;
    const size_t v = VersionSuffixStart(stem);
    if (v != absl::string_view::npos) {
      absl::StatusOr<uint32_t> n = ParseKeyVersion(stem.substr(v + 2));
      if (!n.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a key version file is named <key_id>.v<n>.pem with n from 1 to 4294967295 "
            "without leading zeros (", n.status().message(), ")"));
      }
      out.version = *n;
      out.versioned = true;
      stem = stem.substr(0, v);
    }
  } else if (absl::ConsumeSuffix(&stem, ".min_version")) {
    out.kind = KeyFileName::Kind::kMinVersion;
  } else if (absl::ConsumeSuffix(&stem, ".primary")) {
    out.kind = KeyFileName::Kind::kPrimary;
  } else {
    return std::nullopt;
  }
  if (!IsValidKeyId(stem)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key_id '", stem,
        "' is not 1-128 characters of [A-Za-z0-9._-] (no leading dot, no .v<digits> "
        "suffix)"));
  }
  out.key_id = std::string(stem);
  return out;
}

std::unique_ptr<KeyStore> KeyStore::Empty() { return std::unique_ptr<KeyStore>(new KeyStore()); }

absl::StatusOr<StoredKey> KeyStore::ParseEntry(absl::string_view key_id, absl::string_view text) {
  if (!IsValidKeyId(key_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key_id '", key_id,
        "' is not 1-128 characters of [A-Za-z0-9._-] (no leading dot, no .v<digits> "
        "suffix)"));
  }
  absl::StatusOr<std::vector<PemBlock>> blocks = PemDecodeAll(text);
  if (!blocks.ok()) return blocks.status();
  if (blocks->size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected exactly 1 PEM block, found ", blocks->size()));
  }
  PemBlock& block = (*blocks)[0];
  StoredKey key;
  key.key_id = std::string(key_id);
  const absl::string_view der = SecretDataAsStringView(block.der);
  if (block.label == "SM4 KEY" || block.label == "AES KEY" || block.label == "HMAC KEY") {
    key.is_symmetric = true;
    if (block.label == "SM4 KEY") {
      if (der.size() != 16 && der.size() != 32) {
        return absl::InvalidArgumentError(absl::StrCat(
            "SM4 KEY must be 16 bytes (or 32 for SM4-XTS: K1 ‖ K2), got ", der.size()));
      }
      key.family = der.size() == 16 ? KeyFamily::kSm4 : KeyFamily::kSm4Xts;
    } else if (block.label == "AES KEY") {
      if (der.size() != 16 && der.size() != 32) {
        return absl::InvalidArgumentError(
            absl::StrCat("AES KEY must be 16 or 32 bytes, got ", der.size()));
      }
      key.family = der.size() == 16 ? KeyFamily::kAes128 : KeyFamily::kAes256;
    } else {
      if (der.empty()) return absl::InvalidArgumentError("HMAC KEY must not be empty");
      key.family = KeyFamily::kHmac;
    }
    key.material = std::move(block.der);
    return key;
  }
  if (block.label != "PRIVATE KEY" && block.label != "PUBLIC KEY") {
    return absl::InvalidArgumentError(absl::StrCat(
        "PEM type '", block.label,
        "' is not one of PRIVATE KEY, PUBLIC KEY, SM4 KEY, AES KEY, HMAC KEY"));
  }
  key.is_private = block.label == "PRIVATE KEY";
  // Each candidate refuses a key of another family with FailedPrecondition; the error
  // worth reporting is the first other one: why the key of its own family was refused
  // (an SM2 scalar outside [1, n-2], a point off the curve, a bad DER), else the last.
  absl::Status last;
  absl::Status reason;
  for (const AsymmetricCandidate& c : kAsymmetricCandidates) {
    if (key.is_private) {
      absl::StatusOr<std::string> pub = PublicKeyFromPrivate(c.alg, der);
      if (pub.ok()) {
        key.family = c.family;
        key.public_key_der = *std::move(pub);
        key.public_key_sha256 = Sha256(key.public_key_der);
        key.material = std::move(block.der);
        return key;
      }
      last = pub.status();
      if (reason.ok() && !absl::IsFailedPrecondition(last)) reason = last;
    } else {
      absl::StatusOr<std::unique_ptr<PublicKeyVerify>> v = NewPublicKeyVerify(c.alg, der);
      if (v.ok()) {
        key.family = c.family;
        key.public_key_der = std::string(der);
        key.public_key_sha256 = Sha256(key.public_key_der);
        key.material = std::move(block.der);
        return key;
      }
      last = v.status();
      if (reason.ok() && !absl::IsFailedPrecondition(last)) reason = last;
    }
  }
  if (reason.ok()) reason = last;
  return absl::InvalidArgumentError(
      absl::StrCat(block.label,
                   " is not an SM2, EC P-256, EC secp256k1, RSA-2048 or RSA-3072 key (",
                   reason.message(), ")"));
}

namespace {

// KeyFiles: the files of one key: versions (path by number), the min_version and primary
// files.
struct KeyFiles {
  std::map<uint32_t, std::string> versions;
  std::string min_version_path;
  std::string primary_path;
  bool versioned = false;  // some version file is `<key_id>.v<n>.pem`
};

// Permission: a failed permission check is an error, or a warning under
// --allow_insecure_key_permissions.
absl::Status Permission(const KeyStoreOptions& options, absl::Status s) {
  if (s.ok() || s.code() != absl::StatusCode::kPermissionDenied) return s;
  if (!options.allow_insecure_permissions) return s;
  LogWarning(absl::StrCat("keyring (--allow_insecure_key_permissions): ", s.message()));
  return absl::OkStatus();
}

// AddKeyFile files `path`, named `f`, among the files of its key.
absl::Status AddKeyFile(const KeyFileName& f, const std::string& path,
                        std::map<std::string, KeyFiles>* files) {
  KeyFiles& k = (*files)[f.key_id];
  if (f.kind == KeyFileName::Kind::kMinVersion) {
    k.min_version_path = path;
    return absl::OkStatus();
  }
  if (f.kind == KeyFileName::Kind::kPrimary) {
    k.primary_path = path;
    return absl::OkStatus();
  }
  k.versioned = k.versioned || f.versioned;
  auto [slot, inserted] = k.versions.emplace(f.version, path);
  if (!inserted) {
    // Only `<id>.pem` and `<id>.v1.pem` can name the same version.
    return absl::InvalidArgumentError(absl::StrCat(
        slot->second, " and ", path, " both hold version 1 of key '", f.key_id,
        "' (<key_id>.pem is version 1); keep one of them"));
  }
  return absl::OkStatus();
}

// ListKeyFiles groups the files of `root` (--keys_dir `dir`) by key. Names are sorted
// first, so the error a directory gets does not depend on the listing order.
absl::StatusOr<std::map<std::string, KeyFiles>> ListKeyFiles(const std::filesystem::path& root,
                                                             absl::string_view dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(root, ec), end;
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": ", ec.message()));
  }
  std::vector<fs::path> paths;
  for (; it != end; it.increment(ec)) {
    if (ec) return absl::InvalidArgumentError(absl::StrCat(dir, ": ", ec.message()));
    paths.push_back(it->path());
  }
  std::sort(paths.begin(), paths.end());
  std::map<std::string, KeyFiles> files;
  for (const fs::path& path : paths) {
    const std::string name = path.filename().string();
    if (name.empty() || name[0] == '.') continue;  // ..data, ..2024_..., dotfiles
    // is_directory follows symlinks (Kubernetes Secret volumes). A directory under another
    // name is skipped; one under a keyring file's name (`k.pem`, `k.primary`, ...) is a
    // load error, never an absent file (an absent min_version or primary changes which
    // versions serve).
    const bool is_directory = fs::is_directory(path, ec);
    absl::StatusOr<std::optional<KeyFileName>> parsed = ParseKeyFileName(name);
    if (is_directory && (!parsed.ok() || !parsed->has_value())) continue;
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ": ", parsed.status().message()));
    }
    if (is_directory) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ": a directory, where a keyring file is expected"));
    }
    if (!parsed->has_value()) {
      LogWarning(absl::StrCat("keyring: skipping ", path.string(),
                              " (not <key_id>.pem, <key_id>.v<n>.pem, <key_id>.min_version "
                              "or <key_id>.primary)"));
      continue;
    }
    if (absl::Status s = AddKeyFile(**parsed, path.string(), &files); !s.ok()) return s;
  }
  return files;
}

// SameBytes: `a` and `b` hold the same key (compared in constant time).
bool SameBytes(const StoredKey& a, const StoredKey& b) {
  return a.family == b.family && a.is_private == b.is_private &&
         a.material.size() == b.material.size() &&
         (a.material.empty() ||
          CRYPTO_memcmp(a.material.data(), b.material.data(), a.material.size()) == 0);
}

// LoadTime: the load_time of `key` (version `version` of `key_id`): that of `previous`'s
// entry when it holds the same bytes, else `now`.
absl::Time LoadTime(const KeyStore* previous, const StoredKey& key, absl::Time now) {
  if (previous == nullptr) return now;
  for (const StoredKey* e : previous->AllVersions(key.key_id)) {
    if (e->version == key.version) return SameBytes(*e, key) ? e->load_time : now;
  }
  return now;
}

// LoadVersions reads and parses the version files of key `key_id` into `versions`,
// oldest first; a version file being removed (Kubernetes Secret volumes) is skipped.
absl::Status LoadVersions(const std::string& key_id, const KeyFiles& k,
                          const KeyStoreOptions& options, const KeyStore* previous,
                          absl::Time now, std::vector<std::unique_ptr<StoredKey>>* versions) {
  for (const auto& [version, path] : k.versions) {
    struct stat st {};
    absl::StatusOr<SecretData> text = ReadSecretFile(path, kMaxKeyFileSize, &st);
    if (!text.ok()) {
      if (absl::IsNotFound(text.status()) && IsDroppedSecretKey(path)) continue;
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", text.status().message()));
    }
    absl::StatusOr<StoredKey> key = KeyStore::ParseEntry(key_id, SecretDataAsStringView(*text));
    if (!key.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", key.status().message()));
    }
    if (absl::Status s = Permission(options, CheckFileMode(path, st, *key)); !s.ok()) return s;
    if (!versions->empty() && versions->front()->family != key->family) {
      const StoredKey& first = *versions->front();
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": version ", version, " of key '", key_id, "' is an ",
          KeyFamilyName(key->family), " key, version ", first.version, " (",
          k.versions.at(first.version), ") an ", KeyFamilyName(first.family),
          " key; all versions of a key must be of one family"));
    }
    key->version = version;
    key->versioned = k.versioned;
    key->load_time = LoadTime(previous, *key, now);
    versions->push_back(std::make_unique<StoredKey>(*std::move(key)));
  }
  return absl::OkStatus();
}

// LoadVersionFile reads the version number file `path` (`<key_id>.min_version` or
// `<key_id>.primary`, `what` names it) of a key with `versions`; 0 when the file is
// being removed.
absl::StatusOr<uint32_t> LoadVersionFile(const std::string& path, absl::string_view what,
                                         const std::string& key_id,
                                         const KeyStoreOptions& options,
                                         const std::vector<std::unique_ptr<StoredKey>>& versions) {
  struct stat st {};
  absl::StatusOr<SecretData> text = ReadSecretFile(path, 64, &st);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status()) && IsDroppedSecretKey(path)) {
      return 0;  // being removed: as without the file
    }
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", text.status().message()));
  }
  absl::StatusOr<uint32_t> n =
      ParseKeyVersion(absl::StripAsciiWhitespace(SecretDataAsStringView(*text)));
  if (!n.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": <key_id>.", what, " holds one decimal version number (",
        n.status().message(), ")"));
  }
  StoredKey as_public;  // the mode rule of a PUBLIC KEY file: not writable by "other"
  if (absl::Status s = Permission(options, CheckFileMode(path, st, as_public)); !s.ok()) return s;
  if (versions.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": key '", key_id, "' has no ", key_id, ".pem or ", key_id,
        ".v<n>.pem file"));
  }
  return *n;
}

// CheckVersions checks the min_version `min` (0: none) and the primary `primary` (0:
// none) of key `key_id` against its `versions` and returns the primary's index.
absl::StatusOr<size_t> CheckVersions(const std::string& key_id, const KeyFiles& k,
                                     const std::vector<std::unique_ptr<StoredKey>>& versions,
                                     uint32_t min, uint32_t primary) {
  const uint32_t newest = versions.back()->version;
  if (min > newest) {
    return absl::InvalidArgumentError(absl::StrCat(
        k.min_version_path, ": min_version ", min, " of key '", key_id,
        "' is above its newest version ", newest, " (", k.versions.at(newest), "); add ",
        key_id, ".v", min, ".pem first or lower the minimum"));
  }
  size_t retained = 0;
  for (const auto& e : versions) retained += e->version >= min ? 1 : 0;
  if (retained > kMaxRetainedVersions) {
    const std::string& path =
        k.min_version_path.empty() ? k.versions.at(newest) : k.min_version_path;
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": key '", key_id, "' retains ", retained, " versions (", std::max(min, 1u),
        " to ", newest, "); a key retains at most ", kMaxRetainedVersions,
        ": raise ", key_id, ".min_version (or remove old version files)"));
  }
  if (primary == 0) return versions.size() - 1;
  for (size_t i = 0; i < versions.size(); ++i) {
    if (versions[i]->version != primary) continue;
    if (primary < min) {
      return absl::InvalidArgumentError(absl::StrCat(
          k.primary_path, ": primary version ", primary, " of key '", key_id,
          "' is below its minimum version ", min, " (", k.min_version_path,
          "); a retired version cannot be the primary"));
    }
    return i;
  }
  std::vector<uint32_t> have;
  for (const auto& e : versions) have.push_back(e->version);
  return absl::InvalidArgumentError(absl::StrCat(
      k.primary_path, ": primary version ", primary, " of key '", key_id,
      "' is not loaded (its versions: ", absl::StrJoin(have, ", "), "); add ", key_id, ".v",
      primary, ".pem first or name a loaded version"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<KeyStore>> KeyStore::LoadFromDirectory(
    absl::string_view dir, const KeyStoreOptions& options, const KeyStore* previous) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root{std::string(dir)};
  if (!fs::is_directory(root, ec)) {
    return absl::NotFoundError(absl::StrCat("--keys_dir ", dir, " is not a directory"));
  }
  if (absl::Status s = Permission(options, CheckDirMode(root.string())); !s.ok()) return s;
  std::unique_ptr<KeyStore> store(new KeyStore());
  store->load_time_ = absl::Now();
  absl::StatusOr<std::map<std::string, KeyFiles>> files = ListKeyFiles(root, dir);
  if (!files.ok()) return files.status();
  for (auto& [key_id, k] : *files) {
    KeyVersions entry;
    if (absl::Status s = LoadVersions(key_id, k, options, previous, store->load_time_,
                                      &entry.versions);
        !s.ok()) {
      return s;
    }
    uint32_t primary = 0;
    if (!k.min_version_path.empty()) {
      absl::StatusOr<uint32_t> min =
          LoadVersionFile(k.min_version_path, "min_version", key_id, options, entry.versions);
      if (!min.ok()) return min.status();
      entry.min_version = *min;
    }
    if (!k.primary_path.empty()) {
      absl::StatusOr<uint32_t> p =
          LoadVersionFile(k.primary_path, "primary", key_id, options, entry.versions);
      if (!p.ok()) return p.status();
      primary = *p;
    }
    if (entry.versions.empty()) continue;  // every version being removed
    absl::StatusOr<size_t> index =
        CheckVersions(key_id, k, entry.versions, entry.min_version, primary);
    if (!index.ok()) return index.status();
    entry.primary = *index;
    store->key_ids_.push_back(key_id);  // std::map: in byte order
    store->keys_.emplace(key_id, std::move(entry));
  }
  return store;
}

absl::StatusOr<const StoredKey*> KeyStore::Find(absl::string_view key_id,
                                                uint32_t version) const {
  if (!IsValidKeyId(key_id)) {
    const size_t v = VersionSuffixStart(key_id);
    if (v != absl::string_view::npos && IsValidKeyId(key_id.substr(0, v))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "key_id '", key_id, "' ends in .v<digits>, the suffix of a key version file; send "
          "key_id '", key_id.substr(0, v), "' with key_version ", key_id.substr(v + 2)));
    }
    // Not echoed: it may be long or hold any bytes.
    return absl::InvalidArgumentError(absl::StrCat(
        "key_id (", key_id.size(),
        " bytes) is not 1-128 characters of [A-Za-z0-9._-] (no leading dot)"));
  }
  auto it = keys_.find(key_id);
  if (it == keys_.end()) {
    return WithReason(absl::NotFoundError(absl::StrCat("unknown key_id '", key_id, "'")),
                      reason::kKeyNotFound, {{"key_id", key_id}});
  }
  const KeyVersions& k = it->second;
  if (version == 0) return k.versions[k.primary].get();
  const std::string version_text = absl::StrCat(version);
  auto v = std::lower_bound(
      k.versions.begin(), k.versions.end(), version,
      [](const std::unique_ptr<StoredKey>& e, uint32_t n) { return e->version < n; });
  if (v == k.versions.end() || (*v)->version != version) {
    std::vector<uint32_t> have;
    for (const auto& e : k.versions) {
      if (e->version >= k.min_version) have.push_back(e->version);
    }
    return WithReason(
        absl::NotFoundError(absl::StrCat("key '", key_id, "' has no version ", version,
                                         " (its versions: ", absl::StrJoin(have, ", "), ")")),
        reason::kKeyVersionNotFound, {{"key_id", key_id}, {"key_version", version_text}});
  }
  if (version < k.min_version) {
    return WithReason(
        absl::FailedPreconditionError(absl::StrCat(
            "key '", key_id, "' version ", version, " is below its minimum version ",
            k.min_version, " (", key_id, ".min_version): it is retired; use version ",
            k.min_version, " or later, or name no version for the primary (",
            k.versions[k.primary]->version, ")")),
        reason::kKeyVersionRetired,
        {{"key_id", key_id},
         {"key_version", version_text},
         {"min_version", absl::StrCat(k.min_version)}});
  }
  return v->get();
}

std::vector<const StoredKey*> KeyStore::Versions(absl::string_view key_id) const {
  std::vector<const StoredKey*> out;
  auto it = keys_.find(key_id);
  if (it == keys_.end()) return out;
  for (const auto& e : it->second.versions) {
    if (e->version >= it->second.min_version) out.push_back(e.get());
  }
  return out;
}

std::vector<const StoredKey*> KeyStore::AllVersions(absl::string_view key_id) const {
  std::vector<const StoredKey*> out;
  auto it = keys_.find(key_id);
  if (it == keys_.end()) return out;
  for (const auto& e : it->second.versions) out.push_back(e.get());
  return out;
}

uint32_t KeyStore::MinVersion(absl::string_view key_id) const {
  auto it = keys_.find(key_id);
  if (it == keys_.end()) return 0;
  return std::max(it->second.min_version, 1u);
}

uint32_t KeyStore::PrimaryVersion(absl::string_view key_id) const {
  auto it = keys_.find(key_id);
  return it == keys_.end() ? 0 : it->second.versions[it->second.primary]->version;
}

std::vector<const StoredKey*> KeyStore::entries() const {
  std::vector<const StoredKey*> out;
  out.reserve(keys_.size());
  for (const auto& [id, key] : keys_) {
    for (const auto& e : key.versions) out.push_back(e.get());
  }
  return out;
}

}  // namespace smcrypt::server
