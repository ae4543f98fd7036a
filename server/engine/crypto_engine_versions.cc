// crypto_engine_versions.cc — trying the versions of a keyring key named without one
// (crypto.proto, KeyRef "Key versions"; docs/keys.md, "Versions"): which keys a check
// tries, in which order, and what it records.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/crypto_engine_internal.h"
#include "server/engine/error_reason.h"

namespace smcrypt::server {

namespace engine_internal {

bool IsDecryptionFailure(const absl::Status& s) {
  if (s.code() != absl::StatusCode::kInvalidArgument) return false;
  return s.message() == "decryption failed" ||
         ReasonOf(s).reason == reason::kDecryptionFailed;
}

absl::Status VersionsFailed(absl::string_view key_id, absl::Span<const uint32_t> tried) {
  return WithReason(absl::InvalidArgumentError(absl::StrCat(
                        "decryption failed (tried key '", key_id, "' versions ",
                        absl::StrJoin(tried, ", "), ")")),
                    reason::kDecryptionFailed,
                    {{"key_id", key_id}, {"key_versions_tried", absl::StrJoin(tried, ",")}});
}

void NoteTrial(EngineObserver* observer, Operation op, KeyTrial* trial, const KeyTrial& t,
               bool authenticated) {
  if (trial != nullptr) *trial = t;
  if (observer != nullptr && t.tried.size() > 1) {
    observer->OnKeyVersionTrials(op, authenticated, static_cast<uint32_t>(t.tried.size() - 1));
  }
}

}  // namespace engine_internal

std::vector<KeyInput> CryptoEngine::TrialKeys(const Ring& ring, const KeyInput& key,
                                              bool private_only) const {
  std::vector<KeyInput> keys = {key};
  if (key.kind != KeyInput::Kind::kKeyId || key.trial == nullptr) return keys;
  // The primary: the call's one lookup (CryptoEngine::Resolve), else Find's.
  const absl::StatusOr<const StoredKey*> primary =
      key.keyring != nullptr ? key.entry : ring.keys->Find(key.value, key.version);
  if (!primary.ok()) return keys;
  keys[0].trial = nullptr;
  keys[0].version = (*primary)->version;
  const std::vector<const StoredKey*> versions = ring.keys->Versions(key.value);
  for (auto it = versions.rbegin(); it != versions.rend() && keys.size() < kMaxTrialVersions;
       ++it) {
    if (*it == *primary) continue;
    KeyInput k = keys[0];
    k.version = (*it)->version;
    k.entry = *it;
    keys.push_back(std::move(k));
  }
  if (private_only && keys.size() > 1) {
    std::vector<KeyInput> with_private;
    for (const KeyInput& k : keys) {
      const StoredKey* e = k.entry.ok() ? *k.entry : nullptr;
      if (k.version == (*primary)->version) e = *primary;
      if (e != nullptr && e->is_private) with_private.push_back(k);
    }
    if (!with_private.empty()) keys = std::move(with_private);
  }
  return keys;
}

size_t CryptoEngine::TrialWidth(const KeyInput& key) const {
  return TrialKeys(*RingFor(key), key).size();
}

absl::Status CryptoEngine::RequireOneVersion(const Ring& ring, const KeyInput& key,
                                             absl::string_view why) const {
  if (key.kind != KeyInput::Kind::kKeyId || key.trial == nullptr) return absl::OkStatus();
  std::vector<uint32_t> retained;
  for (const StoredKey* e : ring.keys->Versions(key.value)) retained.push_back(e->version);
  if (retained.size() <= 1) return absl::OkStatus();
  key.trial->version_required = true;
  std::reverse(retained.begin(), retained.end());
  return WithReason(
      absl::FailedPreconditionError(absl::StrCat(
          "key '", key.value, "' has ", retained.size(), " retained versions (",
          absl::StrJoin(retained, ", "), ") and ", why,
          ", so no version can be tried: set key.key_version to the version that made it "
          "(data made while the key was one plain <key_id>.pem is version 1)")),
      reason::kKeyVersionRequired,
      {{"key_id", key.value}, {"retained_versions", absl::StrJoin(retained, ",")}});
}

void CryptoEngine::EndTrial(Operation op, const KeyInput& key, const KeyTrial& t,
                            bool authenticated) const {
  engine_internal::NoteTrial(observer_, op, key.trial.get(), t, authenticated);
}

}  // namespace smcrypt::server
