// ct_valgrind_test.cc — constant-time check of the SM back ends under valgrind memcheck
// (the ctgrind / TIMECOP technique; BoringSSL's CONSTTIME_SECRET does the same).
//
// Secret inputs — SM4 keys and plaintext, HMAC-SM3 keys and messages, SM3 input of the
// SM2 KDF, SM2 private keys d, nonces k and key-exchange scalars r — are marked undefined
// (SMCRYPT_CT_SECRET, crypto/common/ct_annotations.h). Memcheck tracks definedness bit
// by bit through every instruction, so any conditional jump or move whose condition,
// and any load or store whose address, depends on a secret is reported ("Conditional
// jump or move depends on uninitialised value(s)", "Use of uninitialised value of size
// 8"); ctest runs this binary under `valgrind --error-exitcode=1`, so one report fails
// the test. Outputs the protocol publishes (ciphertext, tags, signatures, MACs, public
// keys) are declassified below before the test looks at them, each with the reason;
// decisions inside the library that are public by contract are declassified there
// (grep SMCRYPT_CT_DECLASSIFY / CtDeclassify).
//
// Which back ends: every back end whose instructions valgrind 3.19 decodes — the ones
// whose CPU features valgrind's virtual CPU reports (AES-NI, PCLMULQDQ, AVX, AVX2,
// BMI2; it hides AVX-512, VAES, VPCLMULQDQ, GFNI and SHA, so dispatch cannot pick them
// by accident) plus ADX: valgrind 3.19 translates ADCX/ADOX but clears the CPUID bit,
// so the SM2 mulx_adx back ends are selected explicitly. Each back end's outputs are
// compared with generic's on the same inputs, so a mistranslated instruction would
// fail the test rather than pass it silently. The AVX-512 / GFNI / VAES back ends are
// covered by the statistical test ct_dudect (label slow) instead; the output lists both.
//
// This binary is the Release build (optimized code is what ships): the compiler may
// turn masks into branches, and this is where that would show.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "crypto/common/bytes.h"
#include "crypto/common/ct_annotations.h"
#include "crypto/cpu/backends.h"
#include "crypto/sm2/sm2_batch.h"
#include "crypto/sm2/sm2_ecdh.h"
#include "crypto/sm2/sm2_field.h"
#include "crypto/sm2/sm2_internal.h"
#include "crypto/sm2/sm2_point.h"
#include "crypto/sm2/sm2_testing.h"
#include "crypto/sm3/sm3_internal.h"
#include "crypto/sm4/ghash.h"
#include "crypto/sm4/sm4_internal.h"
#include "smcrypt/cpu.h"
#include "smcrypt/hpke.h"
#include "smcrypt/pem.h"
#include "smcrypt/sm2.h"
#include "smcrypt/sm2_key_exchange.h"
#include "smcrypt/sm3.h"
#include "smcrypt/sm4.h"

namespace smcrypt {
namespace {

int g_failures = 0;

#define CT_CHECK(cond)                                                         \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                            \
    }                                                                          \
  } while (0)

// Deterministic test data (splitmix64): every back end sees the same inputs, so their
// outputs must be equal.
std::string Bytes(uint64_t seed, size_t n) {
  std::string s(n, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    s[i] = static_cast<char>(z ^ (z >> 31));
  }
  return s;
}

// Secret marks `s` (a test-owned copy) undefined and returns a view of it.
absl::string_view Secret(std::string& s) {
  SMCRYPT_CT_SECRET(s.data(), s.size());
  return s;
}
// Public declassifies an output before the test compares it.
std::string Public(std::string s) {
  SMCRYPT_CT_DECLASSIFY(s.data(), s.size());
  return s;
}

// ---- Which back ends run here -------------------------------------------------------

// Instructions valgrind 3.19's VEX translates. ADX is not in its CPUID but ADCX/ADOX
// are translated (checked: the mulx_adx results equal generic's).
constexpr uint32_t kValgrindDecodes =
    kCpuAesni | kCpuPclmul | kCpuAvx | kCpuAvx2 | kCpuBmi2 | kCpuAdx;

uint32_t Usable() {
  uint32_t f = GetCpuFeatures();
  // Under valgrind GetCpuFeatures() is valgrind's virtual CPU; ADX is translated though
  // not advertised. Natively the binary restricts itself to the same set.
  if (SMCRYPT_CT_RUNNING_ON_VALGRIND() && (f & kCpuBmi2)) f |= kCpuAdx;
  return f & kValgrindDecodes;
}

struct Coverage {
  std::vector<std::string> checked, skipped;
};

bool Runs(Coverage& cov, const char* name, uint32_t required) {
  if (internal::HasFeatures(Usable(), required)) {
    cov.checked.push_back(name);
    return true;
  }
  const uint32_t missing = required & ~Usable();
  cov.skipped.push_back(absl::StrCat(name, " (", FormatCpuFeatureList(missing), ")"));
  return false;
}

// ---- SM4 and GHASH --------------------------------------------------------------------

// Sm4Outputs runs every SM4 entry point on the active back end with a secret key and
// plaintext: ECB, CBC (both ways, PKCS#7), CTR, CFB, OFB, XTS (both tweak orders, with a
// stolen final block), GCM and CCM (seal and open, and open of a forged tag), the
// multi-buffer CBC batch. Returns the public outputs, concatenated.
std::string Sm4Outputs() {
  std::string out;
  std::string key = Bytes(1, 16), msg = Bytes(2, 16 * 19 + 5);  // odd tail for padding
  const std::string iv = Bytes(3, 16), nonce = Bytes(4, 12), aad = Bytes(5, 20);
  Secret(key);
  Secret(msg);
  // ECB/CBC/CTR: the ciphertext is public (it is what goes on the wire); the plaintext
  // that decryption returns is secret and stays undefined, so it is checked by
  // re-encrypting and comparing ciphertexts.
  auto ecb = NewSm4Ecb(key);
  auto cbc = NewSm4Cbc(key);
  auto ctr = NewSm4Ctr(key);
  auto cfb = NewSm4Cfb(key);
  auto ofb = NewSm4Ofb(key);
  std::string xts_key = Bytes(6, 32);
  Secret(xts_key);
  auto xts_ieee = NewSm4Xts(xts_key, Sm4XtsVariant::kIeee1619);
  auto xts_gb = NewSm4Xts(xts_key, Sm4XtsVariant::kGbT17964);
  CT_CHECK(ecb.ok() && cbc.ok() && ctr.ok() && cfb.ok() && ofb.ok() && xts_ieee.ok() &&
           xts_gb.ok());
  if (!ecb.ok() || !cbc.ok() || !ctr.ok() || !cfb.ok() || !ofb.ok() || !xts_ieee.ok() ||
      !xts_gb.ok()) {
    return out;
  }
  for (Cipher* c : {ecb->get(), cbc->get(), ctr->get(), cfb->get(), ofb->get(),
                    xts_ieee->get(), xts_gb->get()}) {
    const absl::string_view c_iv = absl::string_view(iv).substr(0, c->iv_size());
    auto ct = c->Encrypt(c_iv, msg);
    CT_CHECK(ct.ok());
    if (!ct.ok()) continue;
    const std::string pub = Public(*ct);
    out += pub;
    auto pt = c->Decrypt(c_iv, pub);  // secret plaintext, padding checked in constant time
    CT_CHECK(pt.ok());
    if (!pt.ok()) continue;
    auto again = c->Encrypt(c_iv, *pt);
    CT_CHECK(again.ok() && Public(*again) == pub);
  }
  // SM4-ECB/CBC block entry points and the multi-buffer CBC batch (four jobs, their own
  // keys; lengths are public).
  {
    std::vector<std::string> keys, pts;
    std::vector<Sm4CbcBatchItem> items;
    for (int i = 0; i < 4; ++i) {
      keys.push_back(Bytes(10 + i, 16));
      pts.push_back(Bytes(20 + i, 16 * (i + 1) + i));
    }
    for (int i = 0; i < 4; ++i) {
      items.push_back({Secret(keys[i]), iv, Secret(pts[i])});
    }
    for (auto& r : Sm4CbcEncryptBatch(items)) {
      CT_CHECK(r.ok());
      if (r.ok()) out += Public(*r);
    }
  }
  // Multi-buffer CBC-MAC (CCM's MAC in the lanes): three jobs with their own secret
  // keys, secret data; the MAC values stand for tags, public.
  {
    std::string kb[3] = {Bytes(30, 16), Bytes(31, 16), Bytes(32, 16)};
    std::string data = Bytes(33, 16 * 6);
    std::string ys = Bytes(34, 48);
    Secret(data);
    Secret(ys);
    Sm4Key keys[3];
    Sm4MultiJob jobs[3];
    for (size_t i = 0; i < 3; ++i) {
      CT_CHECK(Sm4ExpandKey(Secret(kb[i]), &keys[i]).ok());
      jobs[i] = {keys[i].rk_enc, BytePtr(&ys[16 * i]), BytePtr(data.data()) + 16 * i,
                 nullptr, i + 1};
    }
    Sm4CbcMacMulti(jobs, 3);
    out += Public(ys);
  }
  // GCM and CCM: ciphertext and tag are public; Open compares tags in constant time
  // and only its verdict is public. A forged tag must be rejected.
  auto gcm = NewSm4Gcm(key);
  auto ccm = NewSm4Ccm(key);
  CT_CHECK(gcm.ok() && ccm.ok());
  if (!gcm.ok() || !ccm.ok()) return out;
  for (Aead* a : {gcm->get(), ccm->get()}) {
    auto sealed = a->Seal(nonce, msg, aad);
    CT_CHECK(sealed.ok());
    if (!sealed.ok()) continue;
    const std::string pub = Public(*sealed);
    out += pub;
    auto opened = a->Open(nonce, pub, aad);
    CT_CHECK(opened.ok());
    std::string forged = pub;
    forged.back() ^= 1;
    CT_CHECK(!a->Open(nonce, forged, aad).ok());
  }
  return out;
}

void CheckSm4(Coverage& sm4, Coverage& ghash) {
  std::vector<const internal::GhashKernels*> ghashes;
  for (const internal::GhashKernels* g : internal::GhashAllKernelsForTesting()) {
    if (Runs(ghash, g->name, g->required_features)) ghashes.push_back(g);
  }
  std::string reference;
  for (const Sm4Kernels* k : Sm4AllKernelsForTesting()) {
    if (!Runs(sm4, k->name, k->required_features)) continue;
    Sm4SetKernelsForTesting(k);
    for (const internal::GhashKernels* g : ghashes) {  // GCM on every GHASH back end
      internal::GhashSetKernelsForTesting(g);
      const std::string got = Sm4Outputs();
      if (reference.empty()) reference = got;
      if (got != reference) {
        std::fprintf(stderr, "SM4 %s with GHASH %s: outputs differ from the first back end\n",
                     k->name, g->name);
        ++g_failures;
      }
    }
  }
  internal::GhashSetKernelsForTesting(nullptr);
  Sm4SetKernelsForTesting(nullptr);
}

// ---- SM3, HMAC-SM3, SM3 KDF ---------------------------------------------------------

std::string Sm3Outputs() {
  std::string out;
  // SM3 of secret data (the digest is declassified: here it stands for a public hash of
  // a secret, as C3 of SM2 encryption; inputs of 0, 55, 64 and 200 bytes hit each
  // padding case).
  for (size_t len : {0, 55, 64, 200}) {
    std::string m = Bytes(30 + len, len);
    Secret(m);
    const auto d = Sm3Digest(m);
    out += Public(std::string(reinterpret_cast<const char*>(d.data()), d.size()));
  }
  // Batch of secret messages (the multi-buffer lanes), lengths public.
  {
    std::vector<std::string> msgs;
    for (size_t i = 0; i < 9; ++i) msgs.push_back(Bytes(40 + i, 13 * i + 1));
    std::vector<absl::string_view> views;
    for (std::string& m : msgs) views.push_back(Secret(m));
    std::string digests(32 * views.size(), '\0');
    Sm3Batch(views, BytePtr(&digests[0]));
    out += Public(digests);
  }
  // HMAC-SM3: key (short, one block, longer than a block) and message secret; the MAC
  // is public, VerifyMac's verdict is public.
  std::vector<std::unique_ptr<HmacSm3>> macs;
  for (size_t klen : {16, 64, 100}) {
    std::string key = Bytes(50 + klen, klen), msg = Bytes(60 + klen, 100);
    auto h = HmacSm3::New(Secret(key));
    CT_CHECK(h.ok());
    if (!h.ok()) continue;
    auto mac = (*h)->ComputeMac(Secret(msg));
    CT_CHECK(mac.ok());
    if (!mac.ok()) continue;
    const std::string pub = Public(*mac);
    out += pub;
    CT_CHECK((*h)->VerifyMac(pub, msg).ok());
    std::string bad = pub;
    bad[7] ^= 0x10;
    CT_CHECK(!(*h)->VerifyMac(bad, msg).ok());
    macs.push_back(std::move(*h));
  }
  // HMAC-SM3 batch: inner and outer hashes in the lanes.
  if (macs.size() == 3) {
    std::string m0 = Bytes(70, 10), m1 = Bytes(71, 70), m2 = Bytes(72, 130);
    const HmacSm3* keys[3] = {macs[0].get(), macs[1].get(), macs[2].get()};
    const absl::string_view msgs[3] = {Secret(m0), Secret(m1), Secret(m2)};
    std::string tags(96, '\0');
    internal::HmacSm3Batch(keys, msgs, 3, BytePtr(&tags[0]));
    out += Public(tags);
  }
  // The SM2 KDF over a secret Z (x2 ‖ y2), XORed into a secret message; the all-zero
  // test of its output must not branch.
  {
    std::string z = Bytes(80, 64), m = Bytes(81, 300);
    Secret(z);
    Secret(m);
    std::string c(m.size(), '\0');
    const uint64_t zero = Sm3Kdf(BytePtr(z.data()), z.size(), BytePtr(m.data()),
                                 BytePtr(&c[0]), c.size());
    CT_CHECK(CtDeclassify(zero) == 0);  // the verdict is public (A5/B4 reject on it)
    out += Public(c);  // stands for C2, public
  }
  return out;
}

void CheckSm3(Coverage& cov) {
  std::string reference;
  for (const Sm3Kernels* k : Sm3AllKernelsForTesting()) {
    if (!Runs(cov, k->name, k->required_features)) continue;
    Sm3SetKernelsForTesting(k);
    const std::string got = Sm3Outputs();
    if (reference.empty()) reference = got;
    if (got != reference) {
      std::fprintf(stderr, "SM3 %s: outputs differ from the first back end\n", k->name);
      ++g_failures;
    }
  }
  Sm3SetKernelsForTesting(nullptr);
}

// ---- SM2 ----------------------------------------------------------------------------

// A fixed k per call from a list, marked secret as the CSPRNG's would be.
struct SecretNonces {
  std::vector<std::string> ks;
  size_t next = 0;
  absl::Status operator()(uint64_t k[4]) {
    std::string kb = ks[next++ % ks.size()];
    internal::LimbsFromBytes(k, BytePtr(kb.data()));
    SMCRYPT_CT_SECRET(k, 32);
    return absl::OkStatus();
  }
};

std::string Sm2Outputs() {
  std::string out;
  // Key generation from a secret scalar: d·G by the comb, (1 + d)⁻¹ mod n, range check.
  std::string d = Bytes(90, 32), d2 = Bytes(91, 32);
  d[0] &= 0x7f;  // below n
  d2[0] &= 0x7f;
  auto key = Sm2PrivateKey::FromScalar(Secret(d));
  auto peer = Sm2PrivateKey::FromScalar(Secret(d2));
  CT_CHECK(key.ok() && peer.ok());
  if (!key.ok() || !peer.ok()) return out;
  // The public key P = dG is public.
  out += Public(key->public_key().ToPoint());
  // PKCS#8 encoding of d (secret output, not compared: it must only not branch on d).
  CT_CHECK(!Sm2PrivateKeyToPkcs8(*key).empty());
  const internal::Sm2Kernels& kern = internal::Sm2ActiveKernels();

  // Signing with secret d and secret k (two signatures). r ‖ s is public.
  SecretNonces nonces;
  nonces.ks = {Bytes(92, 32), Bytes(93, 32)};
  for (std::string& k : nonces.ks) k[0] &= 0x7f;
  auto next_k = [&nonces](uint64_t k[4]) { return nonces(k); };
  const std::string e = Bytes(94, 32);  // the digest of a public message
  for (int i = 0; i < 2; ++i) {
    auto sig = internal::Sm2SignDigestCore(*key, e, next_k);
    CT_CHECK(sig.ok());
    if (!sig.ok()) continue;
    const std::string pub = Public(*sig);
    out += pub;
    CT_CHECK(Sm2VerifyDigest(key->public_key(), e, pub).ok());
  }
  // Batch signing (Sm2SignDigestBatchCore, the service's SignBatch): valgrind has no
  // IFMA, so this is the batch code on the single-operation path; the ifma_avx512 lanes
  // are timed by ct_dudect instead.
  {
    const Sm2PrivateKey* keys[3] = {&*key, &*peer, &*key};
    const absl::string_view digests[3] = {e, e, e};
    std::vector<absl::StatusOr<std::string>> sigs(3);
    internal::Sm2SignDigestBatchCore(keys, digests, next_k, absl::MakeSpan(sigs));
    for (size_t i = 0; i < 3; ++i) {
      CT_CHECK(sigs[i].ok());
      if (!sigs[i].ok()) continue;
      const std::string pub = Public(*sigs[i]);  // r ‖ s is public
      out += pub;
      CT_CHECK(Sm2VerifyDigest(keys[i]->public_key(), e, pub).ok());
    }
  }
  // Encryption with secret k and a secret message, by fixed windows and by the comb
  // table of the recipient's key; decryption with secret d (and of a forged C3).
  auto table_point = [&] {
    internal::Sm2Affine p;
    internal::Sm2PublicKeyToAffine(kern, peer->public_key(), &p);
    return internal::Sm2PointTable::Build(kern, p);
  }();
  std::string msg = Bytes(95, 45);
  Secret(msg);
  const internal::Sm2PointTable* tables[] = {nullptr, table_point.get()};
  for (const internal::Sm2PointTable* table : tables) {
    auto ct = internal::Sm2EncryptCore(peer->public_key(), msg, Sm2CiphertextFormat::kC1C3C2,
                                       /*compress_c1=*/table != nullptr, next_k, table);
    CT_CHECK(ct.ok());
    if (!ct.ok()) continue;
    const std::string pub = Public(*ct);  // C1 ‖ C3 ‖ C2 is public
    out += pub;
    auto pt = Sm2Decrypt(*peer, pub);
    CT_CHECK(pt.ok());
    std::string forged = pub;
    forged[pub.size() - 46] ^= 4;  // inside C3
    CT_CHECK(!Sm2Decrypt(*peer, forged).ok());
  }
  // HPKE-SM2-SM3-SM4GCM: DeriveKeyPair from secret ikm (HKDF-SM3, rejection sampling),
  // SetupBaseS/SetupBaseR (ECDH, key schedule) and Seal/Open of a secret message with a
  // secret recipient key. enc and the ciphertext are public.
  {
    std::string ikm = Bytes(96, 32);
    auto pair = HpkeDeriveKeyPair(HpkeSuite::kSm2Sm3Sm4Gcm, Secret(ikm));
    CT_CHECK(pair.ok());
    if (pair.ok()) {
      const std::string pk = Public(pair->public_key);  // the public key is public
      out += pk;
      const std::string info = "ct", aad = "aad";
      auto sender = HpkeContext::SetupBaseS(HpkeSuite::kSm2Sm3Sm4Gcm, pk, info);
      CT_CHECK(sender.ok());
      if (sender.ok()) {
        auto sealed = sender->context->Seal(aad, msg);
        CT_CHECK(sealed.ok());
        const std::string enc = Public(sender->enc);
        auto receiver = HpkeContext::SetupBaseR(HpkeSuite::kSm2Sm3Sm4Gcm, enc,
                                                SecretDataAsStringView(pair->private_key),
                                                info);
        CT_CHECK(receiver.ok());
        if (sealed.ok() && receiver.ok()) {
          CT_CHECK((*receiver)->Open(aad, Public(*sealed)).ok());
        }
      }
    }
  }
  // ECDH: x(d·P) is a secret output; it is declassified only to compare both sides.
  auto ab = Sm2Ecdh(*key, peer->public_key());
  auto ba = Sm2Ecdh(*peer, key->public_key());
  CT_CHECK(ab.ok() && ba.ok());
  if (ab.ok() && ba.ok()) {
    const std::string x_ab = Public(std::string(SecretDataAsStringView(*ab)));
    CT_CHECK(x_ab == Public(std::string(SecretDataAsStringView(*ba))));
    out += x_ab;
  }
  // SM2 key exchange (GB/T 32918.3 §6.1) with confirmation between key (initiator, secret
  // d) and peer (responder, secret d2), with secret ephemeral scalars r: t, U/V, K and
  // the S hashes. R_A, R_B, S_B and S_A are the protocol's messages (public); K is secret
  // and declassified only to compare both sides.
  {
    Sm2KeyExchangeParams pa{Sm2KeyExchangeRole::kInitiator, "alice", "bob", 48, true};
    Sm2KeyExchangeParams pb{Sm2KeyExchangeRole::kResponder, "bob", "alice", 48, true};
    auto a = Sm2KeyExchange::New(*key, peer->public_key(), pa);
    auto b = Sm2KeyExchange::New(*peer, key->public_key(), pb);
    std::string r_a = Bytes(97, 32), r_b = Bytes(98, 32);
    r_a[0] &= 0x7f;
    r_b[0] &= 0x7f;
    CT_CHECK(a.ok() && b.ok());
    if (a.ok() && b.ok()) {
      auto ra = testing::Sm2KeyExchangeStartWithRForTesting(*a, Secret(r_a));
      auto rb = testing::Sm2KeyExchangeStartWithRForTesting(*b, Secret(r_b));
      CT_CHECK(ra.ok() && rb.ok());
      if (ra.ok() && rb.ok()) {
        const std::string pub_ra = Public(*ra), pub_rb = Public(*rb);
        out += pub_ra + pub_rb;
        auto bo = b->ComputeKey(pub_ra);
        CT_CHECK(bo.ok());
        if (bo.ok()) {
          const std::string s_b = Public(bo->confirmation);
          auto ao = a->ComputeKey(pub_rb, s_b);
          CT_CHECK(ao.ok());
          if (ao.ok()) {
            const std::string s_a = Public(ao->confirmation);
            out += s_b + s_a;
            auto kb = b->ConfirmPeer(s_a);
            CT_CHECK(kb.ok());
            if (kb.ok()) {
              const std::string k_a = Public(std::string(SecretDataAsStringView(ao->key)));
              CT_CHECK(k_a == Public(std::string(SecretDataAsStringView(*kb))));
              out += k_a;
            }
          }
        }
      }
    }
  }
  return out;
}

// ---- Key encodings (not back-end specific; run once) -----------------------------------

// Keys arrive as PEM (the keyring, inline keys) and PKCS#8. The base64 codec must not
// index a table or branch by a secret character; the line layout (where the line feeds
// are) and the length are public. Only the key bytes are secret in a PKCS#8 DER: its
// tags and lengths are public structure.
void CheckEncodings() {
  // PEM of a raw 16-byte SM4 key: the base64 body is all secret, line feeds public.
  std::string key = Bytes(200, 16);
  std::string text = PemEncode("SM4 KEY", Secret(key));  // body secret (encoded key)
  // Declassify everything but the body characters: the BEGIN/END lines and line feeds.
  const std::string layout = Public(text);  // a copy, only to find the positions
  SMCRYPT_CT_SECRET(text.data(), text.size());
  for (size_t i = 0; i < layout.size(); ++i) {
    if (layout[i] == '\n') SMCRYPT_CT_DECLASSIFY(&text[i], 1);
  }
  const size_t body = layout.find('\n') + 1;
  SMCRYPT_CT_DECLASSIFY(text.data(), body);
  const size_t end = layout.find("-----END");
  SMCRYPT_CT_DECLASSIFY(text.data() + end, text.size() - end);
  auto block = PemDecode(text);
  CT_CHECK(block.ok());
  if (block.ok()) {
    CT_CHECK(Public(std::string(SecretDataAsStringView(block->der))) == Public(key));
  }
  // Format detection of a long raw key (an HMAC key): no branch on its bytes, even
  // when they start like whitespace.
  std::string raw = Bytes(202, 100);
  raw[0] = ' ';
  raw[1] = '\n';
  CT_CHECK(!LooksLikePem(Secret(raw)));
  // PKCS#8 of an SM2 key, with only d's 32 bytes secret.
  std::string d = Bytes(201, 32);
  d[0] &= 0x7f;
  auto k = Sm2PrivateKey::FromScalar(d);
  CT_CHECK(k.ok());
  if (!k.ok()) return;
  const SecretData der = Sm2PrivateKeyToPkcs8(*k);
  std::string der_s(SecretDataAsStringView(der));
  const size_t at = der_s.find(d);
  CT_CHECK(at != std::string::npos);
  if (at == std::string::npos) return;
  SMCRYPT_CT_SECRET(&der_s[at], 32);
  auto parsed = Sm2PrivateKeyFromPkcs8(der_s);
  CT_CHECK(parsed.ok());
  if (parsed.ok()) {
    CT_CHECK(Public(parsed->public_key().ToPoint()) == k->public_key().ToPoint());
  }
}

void CheckSm2(Coverage& cov) {
  size_t count = 0;
  const internal::Sm2Kernels* const* all = internal::Sm2AllKernelsForTesting(&count);
  std::string reference;
  for (size_t i = 0; i < count; ++i) {
    const internal::Sm2Kernels* k = all[i];
    if (!Runs(cov, k->name, k->required_features)) continue;
    internal::Sm2SetKernelsForTesting(k);
    const std::string got = Sm2Outputs();
    if (reference.empty()) reference = got;
    if (got != reference) {
      std::fprintf(stderr, "SM2 %s: outputs differ from the first back end\n", k->name);
      ++g_failures;
    }
  }
  internal::Sm2SetKernelsForTesting(nullptr);
  // The 8-lane IFMA batch back end (sm2_batch.h) is not in the table above.
  if (!Runs(cov, "ifma_avx512", kCpuAvx512 | kCpuIfma)) return;
}

// ---- Canaries: the check itself must be able to fail ---------------------------------

// Canary runs one deliberate leak on a secret; ctest expects valgrind to fail on each
// (WILL_FAIL), which shows that the marks reach the code and memcheck reports both
// kinds of leak, in this file and inside the library.
int Canary(absl::string_view kind) {
  static const uint8_t kTable[256] = {1, 2, 3};
  std::string secret = Bytes(99, 65);
  secret[0] = 0x04;
  Secret(secret);
  volatile uint8_t sink = 0;
  if (kind == "branch") {  // a branch on a secret byte
    if (static_cast<uint8_t>(secret[1]) > 0x80) sink = 1;
  } else if (kind == "index") {  // a table index from a secret byte
    sink = kTable[static_cast<uint8_t>(secret[1])];
  } else if (kind == "library") {  // a library routine for public data given a secret
    sink = Sm2PublicKey::FromPoint(secret).ok() ? 1 : 0;
  } else {
    std::fprintf(stderr, "unknown canary %s\n", std::string(kind).c_str());
    return 2;
  }
  std::printf("ct_valgrind canary %s ran (valgrind must report it)\n", std::string(kind).c_str());
  (void)sink;
  return 0;
}

void Print(const char* alg, const Coverage& cov) {
  std::printf("  %-6s valgrind memcheck: %-40s not here: %s\n", alg,
              absl::StrJoin(cov.checked, " ").c_str(),
              cov.skipped.empty() ? "-" : absl::StrJoin(cov.skipped, ", ").c_str());
}

}  // namespace
}  // namespace smcrypt

int main(int argc, char** argv) {
  using namespace smcrypt;
  if (argc == 2 && absl::string_view(argv[1]).substr(0, 9) == "--canary=") {
    return Canary(absl::string_view(argv[1]).substr(9));
  }
  const bool on_valgrind = SMCRYPT_CT_RUNNING_ON_VALGRIND() != 0;
#if !defined(SMCRYPT_HAVE_CT_ANNOTATIONS)
  std::printf("ct_valgrind: built without <valgrind/memcheck.h>; install valgrind\n");
  return 1;
#endif
  std::printf("ct_valgrind: %s; CPU features seen: %s\n",
              on_valgrind ? "running under valgrind"
                          : "NOT under valgrind (no constant-time check, outputs only)",
              FormatCpuFeatureList(GetCpuFeatures()).c_str());
  Coverage sm4, ghash, sm3, sm2;
  CheckSm4(sm4, ghash);
  CheckSm3(sm3);
  CheckSm2(sm2);
  CheckEncodings();
  std::printf("ct_valgrind: back ends run with secrets marked undefined%s:\n",
              on_valgrind ? "" : " (not checked: not under valgrind)");
  Print("SM4", sm4);
  Print("GHASH", ghash);
  Print("SM3", sm3);
  Print("SM2", sm2);
  std::printf("  (back ends listed as \"not here\" valgrind 3.19 cannot run or this CPU lacks: "
              "the dudect test ct_dudect covers those this CPU has)\n");
  if (g_failures != 0) {
    std::printf("ct_valgrind: %d check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("ct_valgrind: outputs agree across back ends%s\n",
              on_valgrind ? "; memcheck reports decide the constant-time verdict" : "");
  return 0;
}
