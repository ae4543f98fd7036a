#include "server/key_store.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "server/logging.h"
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

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError("cannot open the file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InvalidArgumentError("read error");
  return text;
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
      return KeyFamily::kSm4;
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

bool FamilyServes(KeyFamily family, Algorithm alg) {
  if (alg == Algorithm::kSm3 || alg == Algorithm::kSha256) return false;
  return KeyFamilyForAlgorithm(alg) == family;
}

bool IsValidKeyId(absl::string_view key_id) {
  if (key_id.empty() || key_id.size() > 128 || key_id[0] == '.') return false;
  for (char c : key_id) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::unique_ptr<KeyStore> KeyStore::Empty() { return std::unique_ptr<KeyStore>(new KeyStore()); }

absl::StatusOr<StoredKey> KeyStore::ParseEntry(absl::string_view key_id, absl::string_view text) {
  if (!IsValidKeyId(key_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "key_id '", key_id, "' is not 1-128 characters of [A-Za-z0-9._-] (no leading dot)"));
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
      if (der.size() != 16) {
        return absl::InvalidArgumentError(
            absl::StrCat("SM4 KEY must be 16 bytes, got ", der.size()));
      }
      key.family = KeyFamily::kSm4;
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
  absl::Status last;
  for (const AsymmetricCandidate& c : kAsymmetricCandidates) {
    if (key.is_private) {
      absl::StatusOr<std::string> pub = PublicKeyFromPrivate(c.alg, der);
      if (pub.ok()) {
        key.family = c.family;
        key.public_key_der = *std::move(pub);
        key.material = std::move(block.der);
        return key;
      }
      last = pub.status();
    } else {
      absl::StatusOr<std::unique_ptr<PublicKeyVerify>> v = NewPublicKeyVerify(c.alg, der);
      if (v.ok()) {
        key.family = c.family;
        key.public_key_der = std::string(der);
        key.material = std::move(block.der);
        return key;
      }
      last = v.status();
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(block.label,
                   " is not an SM2, EC P-256, EC secp256k1, RSA-2048 or RSA-3072 key (",
                   last.message(), ")"));
}

absl::StatusOr<std::unique_ptr<KeyStore>> KeyStore::LoadFromDirectory(absl::string_view dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root{std::string(dir)};
  if (!fs::is_directory(root, ec)) {
    return absl::NotFoundError(absl::StrCat("--keys_dir ", dir, " is not a directory"));
  }
  std::unique_ptr<KeyStore> store(new KeyStore());
  fs::directory_iterator it(root, ec), end;
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": ", ec.message()));
  }
  for (; it != end; it.increment(ec)) {
    if (ec) return absl::InvalidArgumentError(absl::StrCat(dir, ": ", ec.message()));
    const fs::path path = it->path();
    const std::string name = path.filename().string();
    if (name.empty() || name[0] == '.') continue;  // ..data, ..2024_..., dotfiles
    // is_directory/is_regular_file follow symlinks (Kubernetes Secret volumes).
    if (fs::is_directory(path, ec)) continue;
    if (!absl::EndsWith(name, ".pem")) {
      LogWarning(absl::StrCat("keyring: skipping ", path.string(), " (not <key_id>.pem)"));
      continue;
    }
    if (!fs::is_regular_file(path, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ": not a regular file (or a broken symlink)"));
    }
    const std::string key_id = name.substr(0, name.size() - 4);
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path.string(), ": ", text.status().message()));
    }
    absl::StatusOr<StoredKey> key = ParseEntry(key_id, *text);
    SecureZero(text->data(), text->size());
    if (!key.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path.string(), ": ", key.status().message()));
    }
    auto entry = std::make_unique<StoredKey>(*std::move(key));
    store->keys_.emplace(entry->key_id, std::move(entry));
  }
  return store;
}

absl::StatusOr<const StoredKey*> KeyStore::Find(absl::string_view key_id) const {
  auto it = keys_.find(key_id);
  if (it == keys_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown key_id '", key_id, "'"));
  }
  return it->second.get();
}

std::vector<const StoredKey*> KeyStore::entries() const {
  std::vector<const StoredKey*> out;
  out.reserve(keys_.size());
  for (const auto& [id, key] : keys_) out.push_back(key.get());
  return out;
}

}  // namespace smcrypt::server
