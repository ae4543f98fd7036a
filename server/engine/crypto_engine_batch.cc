// crypto_engine_batch.cc — the CryptoEngine's batch calls (HashBatch, SignBatch,
// VerifyBatch, EncryptBatch, PublicKeyEncryptBatch, HybridEncryptBatch): items that one
// primitive serves are resolved once and handed to its *Many call.
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/engine/crypto_engine.h"
#include "server/engine/crypto_engine_internal.h"
#include "smcrypt/random.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"

namespace smcrypt::server {

using engine_internal::CheckSymmetricParams;
using engine_internal::CountsAsVerified;

std::vector<absl::StatusOr<std::string>> CryptoEngine::HashBatch(
    absl::Span<const HashItem> items) const {
  std::vector<absl::StatusOr<std::string>> results(items.size(), std::string());
  std::vector<size_t> sm3_index;
  std::vector<absl::string_view> sm3_messages;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].algorithm == Algorithm::kSm3) {
      sm3_index.push_back(i);
      sm3_messages.push_back(items[i].data);
    } else {
      results[i] = Hash(items[i].algorithm, items[i].data);
    }
  }
  if (!sm3_messages.empty()) {
    std::string out(kSm3DigestSize * sm3_messages.size(), '\0');
    Sm3Batch(sm3_messages, reinterpret_cast<uint8_t*>(out.data()));
    size_t total = 0;
    for (size_t j = 0; j < sm3_index.size(); ++j) {
      results[sm3_index[j]] = out.substr(j * kSm3DigestSize, kSm3DigestSize);
      total += sm3_messages[j].size();
    }
    Record(Algorithm::kSm3, Operation::kHash, total);
  }
  return results;
}

namespace {

// Groups of batch items that one primitive serves: same algorithm, key (kind and value:
// a key_id or the inline key bytes) and options; positions in order of first appearance.
// The views point into the items, which outlive the groups.
template <typename Item, typename KeyOf>
std::vector<std::vector<size_t>> GroupItems(absl::Span<const Item> items, KeyOf key_of) {
  using GroupKey = decltype(key_of(items[0]));
  absl::flat_hash_map<GroupKey, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < items.size(); ++i) {
    auto [pos, inserted] = group_of.try_emplace(key_of(items[i]), groups.size());
    if (inserted) groups.emplace_back();
    groups[pos->second].push_back(i);
  }
  return groups;
}

template <typename Item>
auto SignatureGroupKey(const Item& it) {
  return std::make_tuple(it.algorithm, it.key.kind, it.key.value, it.key.version,
                         it.key.keyring.get(), absl::string_view(it.options.user_id), it.options.encoding,
                         it.options.prehashed, it.user_id_set);
}

// RingOf: the keyring an item's key was resolved in for its call, else the batch's.
const Keyring& RingOf(const KeyInput& key, const Keyring& batch) {
  return key.keyring != nullptr ? *key.keyring : batch;
}

absl::Status ManyMismatch(absl::string_view what, size_t got, size_t want) {
  return absl::InternalError(absl::StrCat(what, " returned ", got, " results for ", want,
                                          " inputs"));
}

}  // namespace

std::vector<absl::StatusOr<std::string>> CryptoEngine::SignBatch(
    absl::Span<const SignItem> items) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  std::vector<absl::StatusOr<std::string>> out(items.size(),
                                               absl::InternalError("SignBatch item not run"));
  // Items one signer serves are signed by its PublicKeySign::SignMany in one call (SM2:
  // the IFMA lanes); the signer is resolved once per group, so its error is Sign's.
  std::vector<absl::string_view> data;
  for (const std::vector<size_t>& group :
       GroupItems(items, [](const SignItem& it) { return SignatureGroupKey(it); })) {
    const SignItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const PublicKeySign>> signer =
        SignerFor(RingOf(first.key, *ring), first.algorithm, first.key, first.options, first.user_id_set);
    if (!signer.ok()) {
      for (size_t i : group) out[i] = signer.status();
      continue;
    }
    data.clear();
    for (size_t i : group) data.push_back(items[i].data);
    std::vector<absl::StatusOr<std::string>> sigs =
        group.size() == 1 ? std::vector<absl::StatusOr<std::string>>{(*signer)->Sign(data[0])}
                          : (*signer)->SignMany(data);
    if (sigs.size() != group.size()) {  // a broken SignMany must not shift results
      for (size_t i : group) out[i] = ManyMismatch("PublicKeySign::SignMany", sigs.size(), group.size());
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      if (sigs[j].ok()) Record(first.algorithm, Operation::kSign, data[j].size());
      out[group[j]] = std::move(sigs[j]);
    }
  }
  return out;
}

std::vector<absl::StatusOr<bool>> CryptoEngine::VerifyBatch(
    absl::Span<const VerifyItem> items) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  std::vector<absl::StatusOr<bool>> out(items.size(),
                                        absl::InternalError("VerifyBatch item not run"));
  std::vector<VerifyInput> inputs;
  for (const std::vector<size_t>& group :
       GroupItems(items, [](const VerifyItem& it) { return SignatureGroupKey(it); })) {
    const VerifyItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const PublicKeyVerify>> verifier =
        VerifierFor(RingOf(first.key, *ring), first.algorithm, first.key, first.options, first.user_id_set);
    if (!verifier.ok()) {
      for (size_t i : group) out[i] = verifier.status();
      continue;
    }
    inputs.clear();
    for (size_t i : group) inputs.push_back({items[i].signature, items[i].data});
    std::vector<absl::Status> res =
        group.size() == 1
            ? std::vector<absl::Status>{(*verifier)->Verify(inputs[0].signature, inputs[0].data)}
            : (*verifier)->VerifyMany(inputs);
    if (res.size() != group.size()) {
      for (size_t i : group) {
        out[i] = ManyMismatch("PublicKeyVerify::VerifyMany", res.size(), group.size());
      }
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      const VerifyItem& it = items[group[j]];
      if (!CountsAsVerified(res[j])) {
        out[group[j]] = res[j];
        continue;
      }
      // An item whose key was named without a version and that failed under the
      // primary is verified again on its own, trying every version (Verify).
      if (!res[j].ok() && it.key.trial != nullptr &&
          TrialKeys(RingOf(it.key, *ring), it.key).size() > 1) {
        out[group[j]] = Verify(it.algorithm, it.key, it.data, it.signature, it.options,
                               it.user_id_set);
        continue;
      }
      if (it.key.trial != nullptr) {
        *it.key.trial = KeyTrial{{it.key.version}, res[j].ok() ? it.key.version : 0u};
      }
      RecordVerified(first.algorithm, inputs[j].data.size(), res[j].ok());
      out[group[j]] = res[j].ok();
    }
  }
  return out;
}

std::vector<absl::StatusOr<SymmetricCiphertext>> CryptoEngine::EncryptBatch(
    absl::Span<const SymmetricParams> params,
    absl::Span<const absl::string_view> plaintexts) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  std::vector<absl::StatusOr<SymmetricCiphertext>> results(params.size());
  // SM4-CBC items whose parameters and key check out gather here for the multi-buffer
  // path; the rest (and every error) go through Encrypt.
  std::vector<size_t> cbc;
  std::vector<absl::string_view> cbc_keys;
  for (size_t i = 0; i < params.size(); ++i) {
    const SymmetricParams& p = params[i];
    if (p.algorithm != Algorithm::kSm4Cbc || !CheckSymmetricParams(p).ok()) {
      results[i] = EncryptWith(RingOf(p.key, *ring), p, plaintexts[i]);
      continue;
    }
    absl::StatusOr<absl::string_view> key = SymmetricKey(RingOf(p.key, *ring), p.algorithm, p.key);
    if (!key.ok()) {
      results[i] = key.status();
      continue;
    }
    SymmetricCiphertext out;
    if (p.nonce.has_value()) {
      out.nonce = std::string(*p.nonce);
    } else {
      absl::StatusOr<std::string> n = RandomString(kSm4BlockSize);
      if (!n.ok()) {
        results[i] = n.status();
        continue;
      }
      out.nonce = *std::move(n);
    }
    results[i] = std::move(out);
    cbc.push_back(i);
    cbc_keys.push_back(*key);
  }
  std::vector<Sm4CbcBatchItem> items;
  items.reserve(cbc.size());
  for (size_t j = 0; j < cbc.size(); ++j) {
    const size_t i = cbc[j];
    items.push_back(Sm4CbcBatchItem{cbc_keys[j], results[i]->nonce, plaintexts[i],
                                    params[i].padding.value_or(Padding::kPkcs7)});
  }
  std::vector<absl::StatusOr<std::string>> cts = Sm4CbcEncryptBatch(items);
  for (size_t j = 0; j < cbc.size(); ++j) {
    const size_t i = cbc[j];
    if (!cts[j].ok()) {
      results[i] = cts[j].status();
      continue;
    }
    results[i]->ciphertext = *std::move(cts[j]);
    Record(Algorithm::kSm4Cbc, Operation::kEncrypt, plaintexts[i].size());
  }
  return results;
}

std::vector<absl::StatusOr<std::string>> CryptoEngine::PublicKeyEncryptBatch(
    absl::Span<const PublicKeyEncryptItem> items) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  std::vector<absl::StatusOr<std::string>> out(
      items.size(), absl::InternalError("PublicKeyEncryptBatch item not run"));
  std::vector<absl::string_view> plaintexts;
  for (const std::vector<size_t>& group :
       GroupItems(items, [](const PublicKeyEncryptItem& it) {
         return std::make_tuple(it.algorithm, it.key.kind, it.key.value, it.key.version,
                                it.key.keyring.get(),
                                it.format);
       })) {
    const PublicKeyEncryptItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const smcrypt::PublicKeyEncrypt>> enc =
        EncrypterFor(RingOf(first.key, *ring), first.algorithm, first.key, first.format);
    if (!enc.ok()) {
      for (size_t i : group) out[i] = enc.status();
      continue;
    }
    plaintexts.clear();
    for (size_t i : group) plaintexts.push_back(items[i].plaintext);
    std::vector<absl::StatusOr<std::string>> cts =
        group.size() == 1
            ? std::vector<absl::StatusOr<std::string>>{(*enc)->Encrypt(plaintexts[0])}
            : (*enc)->EncryptMany(plaintexts);
    if (cts.size() != group.size()) {
      for (size_t i : group) {
        out[i] = ManyMismatch("PublicKeyEncrypt::EncryptMany", cts.size(), group.size());
      }
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      if (cts[j].ok()) Record(first.algorithm, Operation::kEncrypt, plaintexts[j].size());
      out[group[j]] = std::move(cts[j]);
    }
  }
  return out;
}

std::vector<absl::StatusOr<std::string>> CryptoEngine::HybridEncryptBatch(
    absl::Span<const HybridEncryptItem> items) const {
  const std::shared_ptr<const Ring> ring = this->ring();
  std::vector<absl::StatusOr<std::string>> out(
      items.size(), absl::InternalError("HybridEncryptBatch item not run"));
  // Groups of items with the same algorithm and key (kind, value and version: a key_id
  // and version, or the inline key bytes), in order of first appearance; the key is resolved once per group,
  // so its error (the same for every item of the group) is HybridEncrypt's.
  using GroupKey =
      std::tuple<Algorithm, KeyInput::Kind, absl::string_view, uint32_t, const Keyring*>;
  absl::flat_hash_map<GroupKey, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < items.size(); ++i) {
    const HybridEncryptItem& it = items[i];
    auto [pos, inserted] =
        group_of.try_emplace(GroupKey(it.algorithm, it.key.kind, it.key.value, it.key.version,
                                         it.key.keyring.get()),
                             groups.size());
    if (inserted) groups.emplace_back();
    groups[pos->second].push_back(i);
  }
  std::vector<HybridEncryptInput> inputs;
  for (const std::vector<size_t>& group : groups) {
    const HybridEncryptItem& first = items[group.front()];
    absl::StatusOr<std::shared_ptr<const smcrypt::HybridEncrypt>> enc =
        HybridEncrypterFor(RingOf(first.key, *ring), first.algorithm, first.key);
    if (!enc.ok()) {
      for (size_t i : group) out[i] = enc.status();
      continue;
    }
    inputs.clear();
    for (size_t i : group) inputs.push_back({items[i].plaintext, items[i].info});
    std::vector<absl::StatusOr<std::string>> cts = (*enc)->EncryptMany(inputs);
    if (cts.size() != group.size()) {  // a broken EncryptMany must not shift results
      for (size_t i : group) {
        out[i] = absl::InternalError(absl::StrCat("HybridEncrypt::EncryptMany returned ",
                                                  cts.size(), " results for ", group.size(),
                                                  " inputs"));
      }
      continue;
    }
    for (size_t j = 0; j < group.size(); ++j) {
      const HybridEncryptItem& it = items[group[j]];
      if (cts[j].ok()) Record(it.algorithm, Operation::kEncrypt, it.plaintext.size());
      out[group[j]] = std::move(cts[j]);
    }
  }
  return out;
}

}  // namespace smcrypt::server
