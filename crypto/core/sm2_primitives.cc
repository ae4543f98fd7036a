#include "crypto/core/sm2_primitives.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/common/status_macros.h"
#include "crypto/sm2/sm2_batch.h"
#include "smcrypt/sm3.h"

namespace smcrypt {
namespace {

// DigestFor returns e: the given 32 bytes when prehashed, else SM3(Z ‖ M) (§6.1 A1–A2).
absl::StatusOr<std::array<uint8_t, 32>> DigestFor(const std::array<uint8_t, 32>& z,
                                                  bool prehashed, absl::string_view data) {
  std::array<uint8_t, 32> e;
  if (prehashed) {
    if (data.size() != e.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SM2 digest must be 32 bytes (e = SM3(Z || M)), got ", data.size()));
    }
    std::copy(data.begin(), data.end(), e.begin());
    return e;
  }
  Sm3 h;
  h.Update(z.data(), z.size());
  h.Update(data);
  h.FinishTo(e.data());
  return e;
}

absl::string_view View(const std::array<uint8_t, 32>& a) {
  return absl::string_view(reinterpret_cast<const char*>(a.data()), a.size());
}

}  // namespace

absl::StatusOr<std::unique_ptr<PublicKeySign>> Sm2Sign::New(Sm2PrivateKey key,
                                                            const SignatureOptions& options) {
  SMCRYPT_ASSIGN_OR_RETURN(auto z, Sm2ComputeZ(key.public_key(), options.user_id));
  return std::unique_ptr<PublicKeySign>(
      new Sm2Sign(std::move(key), z, options.encoding, options.prehashed));
}

absl::StatusOr<std::string> Sm2Sign::Sign(absl::string_view data) const {
  SMCRYPT_ASSIGN_OR_RETURN(auto e, DigestFor(z_, prehashed_, data));
  SMCRYPT_ASSIGN_OR_RETURN(std::string raw, Sm2SignDigest(key_, View(e)));
  if (encoding_ == SignatureEncoding::kRaw) return raw;
  return Sm2SignatureToDer(raw);
}

void Sm2Sign::SignMany(absl::Span<const Sm2Sign* const> signers,
                       absl::Span<const absl::string_view> data,
                       absl::Span<absl::StatusOr<std::string>> out) {
  const size_t n = out.size();
  std::vector<std::array<uint8_t, 32>> digests(n);
  std::vector<const Sm2PrivateKey*> keys;
  std::vector<absl::string_view> es;
  std::vector<size_t> index;
  keys.reserve(n);
  es.reserve(n);
  index.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<std::array<uint8_t, 32>> e =
        DigestFor(signers[i]->z_, signers[i]->prehashed_, data[i]);
    if (!e.ok()) {
      out[i] = e.status();
      continue;
    }
    digests[i] = *e;
    keys.push_back(&signers[i]->key_);
    es.push_back(View(digests[i]));
    index.push_back(i);
  }
  std::vector<absl::StatusOr<std::string>> raw(keys.size());
  internal::Sm2SignDigestBatch(keys, es, absl::MakeSpan(raw));
  for (size_t j = 0; j < index.size(); ++j) {
    const size_t i = index[j];
    if (!raw[j].ok() || signers[i]->encoding_ == SignatureEncoding::kRaw) {
      out[i] = std::move(raw[j]);
    } else {
      out[i] = Sm2SignatureToDer(*raw[j]);
    }
  }
}

std::vector<absl::StatusOr<std::string>> Sm2Sign::SignMany(
    absl::Span<const absl::string_view> data) const {
  std::vector<const Sm2Sign*> signers(data.size(), this);
  std::vector<absl::StatusOr<std::string>> out(data.size());
  SignMany(signers, data, absl::MakeSpan(out));
  return out;
}

absl::StatusOr<std::unique_ptr<PublicKeyVerify>> Sm2Verify::New(
    Sm2PublicKey key, const SignatureOptions& options) {
  SMCRYPT_ASSIGN_OR_RETURN(auto z, Sm2ComputeZ(key, options.user_id));
  return std::unique_ptr<PublicKeyVerify>(
      new Sm2Verify(std::move(key), z, options.encoding, options.prehashed));
}

absl::Status Sm2Verify::Verify(absl::string_view signature, absl::string_view data) const {
  std::string raw;
  if (encoding_ == SignatureEncoding::kRaw) {
    if (signature.size() != kSm2RawSignatureSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "raw SM2 signature must be 64 bytes (r || s), got ", signature.size()));
    }
    raw = std::string(signature);
  } else {
    SMCRYPT_ASSIGN_OR_RETURN(raw, Sm2SignatureFromDer(signature));
  }
  SMCRYPT_ASSIGN_OR_RETURN(auto e, DigestFor(z_, prehashed_, data));
  return Sm2VerifyDigestCached(cache_, View(e), raw);
}

void Sm2Verify::VerifyMany(absl::Span<const Sm2Verify* const> verifiers,
                           absl::Span<const absl::string_view> signatures,
                           absl::Span<const absl::string_view> data, absl::Span<absl::Status> out) {
  const size_t n = out.size();
  std::vector<std::array<uint8_t, 32>> digests(n);
  std::vector<std::string> raws(n);
  std::vector<internal::Sm2VerifyBatchItem> items;
  std::vector<size_t> index;
  items.reserve(n);
  index.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Sm2Verify& v = *verifiers[i];
    if (v.encoding_ == SignatureEncoding::kRaw) {
      if (signatures[i].size() != kSm2RawSignatureSize) {
        out[i] = absl::InvalidArgumentError(absl::StrCat(
            "raw SM2 signature must be 64 bytes (r || s), got ", signatures[i].size()));
        continue;
      }
      raws[i] = std::string(signatures[i]);
    } else {
      absl::StatusOr<std::string> raw = Sm2SignatureFromDer(signatures[i]);
      if (!raw.ok()) {
        out[i] = raw.status();
        continue;
      }
      raws[i] = *std::move(raw);
    }
    absl::StatusOr<std::array<uint8_t, 32>> e = DigestFor(v.z_, v.prehashed_, data[i]);
    if (!e.ok()) {
      out[i] = e.status();
      continue;
    }
    digests[i] = *e;
    items.push_back({&v.cache_, View(digests[i]), raws[i]});
    index.push_back(i);
  }
  std::vector<absl::Status> results(items.size());
  internal::Sm2VerifyDigestBatch(items, absl::MakeSpan(results));
  for (size_t j = 0; j < index.size(); ++j) out[index[j]] = std::move(results[j]);
}

std::vector<absl::Status> Sm2Verify::VerifyMany(absl::Span<const VerifyInput> inputs) const {
  std::vector<const Sm2Verify*> verifiers(inputs.size(), this);
  std::vector<absl::string_view> signatures, data;
  signatures.reserve(inputs.size());
  data.reserve(inputs.size());
  for (const VerifyInput& in : inputs) {
    signatures.push_back(in.signature);
    data.push_back(in.data);
  }
  std::vector<absl::Status> out(inputs.size());
  VerifyMany(verifiers, signatures, data, absl::MakeSpan(out));
  return out;
}

std::vector<absl::StatusOr<std::string>> Sm2PublicKeyEncrypt::EncryptMany(
    absl::Span<const absl::string_view> plaintexts) const {
  std::vector<absl::StatusOr<std::string>> out(plaintexts.size());
  Sm2EncryptManyCached(cache_, plaintexts, absl::MakeSpan(out), format_);
  return out;
}

absl::StatusOr<std::string> Sm2PublicKeyEncrypt::Encrypt(absl::string_view plaintext) const {
  return Sm2EncryptCached(cache_, plaintext, format_);
}

absl::StatusOr<std::string> Sm2PublicKeyDecrypt::Decrypt(absl::string_view ciphertext) const {
  return Sm2Decrypt(key_, ciphertext, format_);
}

}  // namespace smcrypt
