// sm2_batch.cc — SM2 signing, verification and ephemeral Diffie–Hellman of many items at
// once: lanes of 8 on the IFMA kernels (sm2_ifma.cc) when Sm2BatchUsesIfma()
// (sm2_dispatch.cc), the single-operation cores otherwise.
//
// Constant time (signing, ephemeral DH): nonces, k·G and everything derived from them are
// handled as in Sm2SignDigestCore (sm2_sign.cc): k·G by the constant-time 8-lane comb;
// the batch's Z coordinates are inverted together by Montgomery's trick with the
// constant-time field operations and ONE constant-time safegcd inversion (a Z of 0, which
// k ∈ [1, n − 1] cannot give, is replaced by 1 with a mask so it cannot zero the other
// items' inverses); r and s by the masked arithmetic mod n. Branches are on public facts
// only: an item's digest size and nonce range (reported as errors), the lane count, and
// the rejection conditions of §6.1, after which that item is signed again on the single
// path with a fresh k (as the single path itself does). Verification is variable time
// (public data).
#include "crypto/sm2/sm2_batch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/common/bytes.h"
#include "crypto/common/constant_time.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_key_cache.h"
#include "crypto/sm2/sm2_montgomery.h"
#include "crypto/sm2/sm2_point.h"
#include "smcrypt/secure_zero.h"
#include "smcrypt/sm3.h"

namespace smcrypt::internal {
namespace {

absl::Status SignatureInvalid() { return absl::UnauthenticatedError("signature invalid"); }

// One signing item that takes a lane.
struct SignLane {
  size_t item;
  uint64_t k[4];
  uint64_t e[4];
};

}  // namespace

void Sm2SignDigestBatchCore(absl::Span<const Sm2PrivateKey* const> keys,
                            absl::Span<const absl::string_view> digests, Sm2NonceSource next_k,
                            absl::Span<absl::StatusOr<std::string>> out) {
  const size_t count = out.size();
  if (!Sm2BatchUsesIfma()) {
    for (size_t i = 0; i < count; ++i) out[i] = Sm2SignDigestCore(*keys[i], digests[i], next_k);
    return;
  }
  const Sm2Kernels& kern = Sm2ActiveKernels();
  std::vector<SignLane> lanes;
  lanes.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (digests[i].size() != kSm3DigestSize) {
      out[i] = absl::InvalidArgumentError(
          absl::StrCat("SM2 digest e: expected ", kSm3DigestSize, " bytes, got ", digests[i].size()));
      continue;
    }
    SignLane lane;
    lane.item = i;
    const absl::Status st = next_k(lane.k);
    if (!st.ok()) {
      out[i] = st;
      SecureZero(lane.k, sizeof(lane.k));
      continue;
    }
    if (!(LtN(lane.k) & ~ScIsZero(lane.k))) {
      out[i] = absl::InvalidArgumentError("SM2 nonce k out of range [1, n-1]");
      SecureZero(lane.k, sizeof(lane.k));
      continue;
    }
    LimbsFromBytes(lane.e, BytePtr(digests[i].data()));
    ScReduceOnce(lane.e, lane.e);
    lanes.push_back(lane);  // reserved: no reallocation leaves a copy of k behind
    SecureZero(&lane, sizeof(lane));
  }
  // A short last group (fewer than kSm2IfmaMinLanes items) costs the lanes' full price:
  // those items take the single path, each with the nonce already drawn for it.
  size_t m = lanes.size();
  const size_t tail = m % kSm2IfmaLanes;
  if (tail != 0 && tail < kSm2IfmaMinLanes) {
    for (size_t i = m - tail; i < m; ++i) {
      SignLane& lane = lanes[i];
      bool drawn = false;
      out[lane.item] = Sm2SignDigestCore(*keys[lane.item], digests[lane.item],
                                         [&](uint64_t k[4]) -> absl::Status {
                                           if (drawn) return next_k(k);
                                           drawn = true;
                                           std::memcpy(k, lane.k, sizeof(lane.k));
                                           return absl::OkStatus();
                                         });
    }
    m -= tail;
  }
  if (m == 0) {
    SecureZero(lanes.data(), lanes.size() * sizeof(SignLane));
    return;
  }
  // k·G for every lane, 8 at a time (spare lanes compute 0·G and are dropped).
  std::vector<Sm2Jacobian> kg(m);
  for (size_t base = 0; base < m; base += kSm2IfmaLanes) {
    uint64_t ks[kSm2IfmaLanes][4] = {};
    Sm2Jacobian r[kSm2IfmaLanes];
    const size_t used = std::min<size_t>(kSm2IfmaLanes, m - base);
    for (size_t l = 0; l < used; ++l) std::memcpy(ks[l], lanes[base + l].k, sizeof(ks[l]));
    Sm2IfmaMulBase8(r, ks);
    for (size_t l = 0; l < used; ++l) kg[base + l] = r[l];
    SecureZero(ks, sizeof(ks));
    SecureZero(r, sizeof(r));
  }
  // Affine x of every k·G with one inversion.
  std::vector<Sm2Affine> kga(m);
  uint64_t t[4];
  PointsToAffine(kern, kg.data(), m, kga.data());
  // A5–A6 for each lane, as in Sm2SignDigestCore.
  for (size_t i = 0; i < m; ++i) {
    SignLane& lane = lanes[i];
    const Sm2PrivateKey& key = *keys[lane.item];
    uint64_t x1[4], r[4], s[4], d1_inv_mont[4];
    FeToPlain(kern, x1, kga[i].x);
    ScReduceOnce(x1, x1);
    ScAdd(r, lane.e, x1);  // r = (e + x1) mod n
    ScAdd(t, r, lane.k);   // r + k
    const uint64_t reject_r = ScIsZero(r) | ScIsZero(t);
    LimbsFromBytes(d1_inv_mont, Sm2PrivateKeyAccess::d1_inv_mont(key).data());
    ScMontMul(s, d1_inv_mont, t);  // (1 + d)⁻¹·(k + r)
    ScSub(s, s, r);
    const uint64_t reject = ValueBarrier(reject_r | ScIsZero(s));
    if (!reject) {
      std::string sig(kSm2RawSignatureSize, '\0');
      LimbsToBytes(BytePtr(&sig[0]), r);
      LimbsToBytes(BytePtr(&sig[32]), s);
      out[lane.item] = std::move(sig);
    } else {
      // §6.1 says to choose a new k: the single path does that.
      out[lane.item] = Sm2SignDigestCore(key, digests[lane.item], next_k);
    }
    SecureZero(x1, sizeof(x1));
    SecureZero(s, sizeof(s));
    SecureZero(d1_inv_mont, sizeof(d1_inv_mont));
  }
  SecureZero(t, sizeof(t));
  SecureZero(lanes.data(), lanes.size() * sizeof(SignLane));
  SecureZero(kg.data(), kg.size() * sizeof(Sm2Jacobian));
  SecureZero(kga.data(), kga.size() * sizeof(Sm2Affine));
}

void Sm2SignDigestBatch(absl::Span<const Sm2PrivateKey* const> keys,
                        absl::Span<const absl::string_view> digests,
                        absl::Span<absl::StatusOr<std::string>> out) {
  Sm2SignDigestBatchCore(keys, digests, Sm2RandomNonce, out);
}

Sm2EphemeralDh::~Sm2EphemeralDh() { SecureZero(shared, sizeof(shared)); }

absl::Status Sm2EphemeralDhBatchCore(const Sm2PublicKeyCache& recipient, Sm2NonceSource next_k,
                                     absl::Span<Sm2EphemeralDh> out) {
  if (out.empty()) return absl::OkStatus();
  // A batch is one use of the key: the table (about 120 KB with its IFMA copy) is built
  // for keys used in kBuildAfterUses calls, not for a key seen once in one large batch
  // (inline keys fill an LRU of up to --public_key_cache_size entries).
  const Sm2PointTable* table = recipient.Table();
  return Sm2EphemeralDhCore(recipient.key(), table, next_k, out);
}

absl::Status Sm2EphemeralDhCore(const Sm2PublicKey& recipient, const Sm2PointTable* table,
                                Sm2NonceSource next_k, absl::Span<Sm2EphemeralDh> out) {
  const size_t m = out.size();
  if (m == 0) return absl::OkStatus();
  const Sm2Kernels& kern = Sm2ActiveKernels();
  struct Scalar {
    uint64_t k[4];
  };
  std::vector<Scalar> ks(m);
  std::vector<Sm2Jacobian> pts(2 * m);  // [2i] = k_i·G, [2i + 1] = k_i·P
  std::vector<Sm2Affine> aff(2 * m);
  auto wipe = [&] {
    SecureZero(ks.data(), ks.size() * sizeof(Scalar));
    SecureZero(pts.data(), pts.size() * sizeof(Sm2Jacobian));
    SecureZero(aff.data(), aff.size() * sizeof(Sm2Affine));
  };
  for (size_t i = 0; i < m; ++i) {
    const absl::Status st = next_k(ks[i].k);
    if (!st.ok()) {
      wipe();
      return st;
    }
    // Public: a nonce source only ever yields k in range (see Sm2SignDigestCore).
    if (!CtDeclassify(LtN(ks[i].k) & ~ScIsZero(ks[i].k))) {
      wipe();
      return absl::InvalidArgumentError("SM2 nonce k out of range [1, n-1]");
    }
  }
  Sm2Affine p;
  Sm2PublicKeyToAffine(kern, recipient, &p);
  size_t lanes_done = 0;
  if (Sm2BatchUsesIfma()) {
    const uint64_t* table52 = table != nullptr ? table->points52() : nullptr;
    for (size_t base = 0; base + kSm2IfmaMinLanes <= m; base += kSm2IfmaLanes) {
      const size_t used = std::min<size_t>(kSm2IfmaLanes, m - base);
      uint64_t k8[kSm2IfmaLanes][4] = {};
      Sm2Jacobian r[kSm2IfmaLanes];
      for (size_t l = 0; l < used; ++l) std::memcpy(k8[l], ks[base + l].k, sizeof(k8[l]));
      Sm2IfmaMulBase8(r, k8);
      for (size_t l = 0; l < used; ++l) pts[2 * (base + l)] = r[l];
      if (table52 != nullptr) {
        Sm2IfmaMulPointTable8(r, k8, table52);
        for (size_t l = 0; l < used; ++l) pts[2 * (base + l) + 1] = r[l];
      } else {
        for (size_t l = 0; l < used; ++l) ScalarMulPoint(kern, &pts[2 * (base + l) + 1], p, k8[l]);
      }
      SecureZero(k8, sizeof(k8));
      SecureZero(r, sizeof(r));
      lanes_done = base + used;
    }
  }
  for (size_t i = lanes_done; i < m; ++i) {
    ScalarMulBase(kern, &pts[2 * i], ks[i].k);
    if (table != nullptr) {
      ScalarMulComb(kern, &pts[2 * i + 1], table->comb(), ks[i].k);
    } else {
      ScalarMulPoint(kern, &pts[2 * i + 1], p, ks[i].k);
    }
  }
  PointsToAffine(kern, pts.data(), pts.size(), aff.data());
  for (size_t i = 0; i < m; ++i) {
    // C1 = k·G is public (the ciphertext's first part).
    SMCRYPT_CT_DECLASSIFY(&aff[2 * i], sizeof(Sm2Affine));
    out[i].c1[0] = 0x04;
    FeToBytes(kern, out[i].c1 + 1, aff[2 * i].x);
    FeToBytes(kern, out[i].c1 + 1 + kSm2ScalarSize, aff[2 * i].y);
    FeToBytes(kern, out[i].shared, aff[2 * i + 1].x);
    FeToBytes(kern, out[i].shared + kSm2ScalarSize, aff[2 * i + 1].y);
  }
  wipe();
  return absl::OkStatus();
}

absl::Status Sm2EphemeralDhBatch(const Sm2PublicKeyCache& recipient,
                                 absl::Span<Sm2EphemeralDh> out) {
  return Sm2EphemeralDhBatchCore(recipient, Sm2RandomNonce, out);
}

namespace {

struct VerifyLane {
  size_t item;
  const uint64_t* table;
  uint64_t r[4], s[4], t[4], e[4];
};

}  // namespace

void Sm2VerifyDigestBatch(absl::Span<const Sm2VerifyBatchItem> items, absl::Span<absl::Status> out) {
  const bool ifma = Sm2BatchUsesIfma();
  const Sm2Kernels& kern = Sm2ActiveKernels();
  // Lanes over the keys' comb tables, and lanes over bare points (doublings in lanes).
  std::vector<VerifyLane> tabled, points;
  tabled.reserve(items.size());
  points.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const Sm2VerifyBatchItem& it = items[i];
    const Sm2PointTable* table = it.key->Table();
    if (!ifma || it.e.size() != kSm3DigestSize || it.signature.size() != kSm2RawSignatureSize) {
      // Single path: no IFMA, or an error to report.
      out[i] = Sm2VerifyDigestCore(it.key->key(), it.e, it.signature, table);
      continue;
    }
    VerifyLane lane;
    lane.item = i;
    lane.table = table != nullptr ? table->points52() : nullptr;
    LimbsFromBytes(lane.r, BytePtr(it.signature.data()));
    LimbsFromBytes(lane.s, BytePtr(it.signature.data() + 32));
    // B1, B2: r, s ∈ [1, n − 1]; B5: t = (r + s) mod n ≠ 0.
    if (ScIsZero(lane.r) || !LtN(lane.r) || ScIsZero(lane.s) || !LtN(lane.s)) {
      out[i] = SignatureInvalid();
      continue;
    }
    ScAdd(lane.t, lane.r, lane.s);
    if (ScIsZero(lane.t)) {
      out[i] = SignatureInvalid();
      continue;
    }
    LimbsFromBytes(lane.e, BytePtr(it.e.data()));
    ScReduceOnce(lane.e, lane.e);
    (lane.table != nullptr ? tabled : points).push_back(lane);
  }
  for (const std::vector<VerifyLane>* group : {&tabled, &points}) {
    const bool with_tables = group == &tabled;
    for (size_t base = 0; base < group->size(); base += kSm2IfmaLanes) {
      const size_t used = std::min<size_t>(kSm2IfmaLanes, group->size() - base);
      if (used < kSm2IfmaMinLanes) {
        // A short last group costs the lanes' full price: the single path is cheaper.
        for (size_t l = 0; l < used; ++l) {
          const Sm2VerifyBatchItem& it = items[(*group)[base + l].item];
          out[(*group)[base + l].item] = Sm2VerifyDigestCore(
              it.key->key(), it.e, it.signature, with_tables ? it.key->Table() : nullptr);
        }
        continue;
      }
      uint64_t s[kSm2IfmaLanes][4] = {}, t[kSm2IfmaLanes][4] = {};
      const uint64_t* tables[kSm2IfmaLanes] = {};
      Sm2Affine p[kSm2IfmaLanes];
      for (size_t l = 0; l < kSm2IfmaLanes; ++l) p[l] = Sm2Generator();  // spare lanes: t = 0
      for (size_t l = 0; l < used; ++l) {
        const VerifyLane& lane = (*group)[base + l];
        std::memcpy(s[l], lane.s, sizeof(s[l]));
        std::memcpy(t[l], lane.t, sizeof(t[l]));
        tables[l] = lane.table;
        if (!with_tables) Sm2PublicKeyToAffine(kern, items[lane.item].key->key(), &p[l]);
      }
      Sm2Jacobian sum[kSm2IfmaLanes];
      uint8_t exceptional[kSm2IfmaLanes];
      if (with_tables) {
        Sm2IfmaMulTwo8Vt(sum, s, tables, t, exceptional);
      } else {
        Sm2IfmaMulTwo8PointsVt(sum, s, p, t, exceptional);
      }
      for (size_t l = 0; l < used; ++l) {
        const VerifyLane& lane = (*group)[base + l];
        const Sm2VerifyBatchItem& it = items[lane.item];
        if (exceptional[l]) {
          // The lane met ±(the added point): the single path's complete handling.
          out[lane.item] = Sm2VerifyDigestCore(it.key->key(), it.e, it.signature, nullptr);
        } else {
          out[lane.item] = Sm2VerifyFinalCheck(kern, sum[l], lane.r, lane.e);
        }
      }
    }
  }
}

}  // namespace smcrypt::internal
