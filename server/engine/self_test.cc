#include "server/engine/self_test.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "server/engine/logging.h"
#include "smcrypt/registry.h"
#include "smcrypt/sm2_key_exchange.h"
#include "smcrypt/sm3.h"

namespace smcrypt::server {
namespace {

std::string Hex(absl::string_view hex) { return absl::HexStringToBytes(hex); }

absl::Status Expect(absl::string_view what, const absl::StatusOr<std::string>& got,
                    absl::string_view want) {
  if (!got.ok()) return absl::InternalError(absl::StrCat(what, ": ", got.status().ToString()));
  if (*got != want) {
    return absl::InternalError(absl::StrCat(what, ": got ", absl::BytesToHexString(*got),
                                            ", want ", absl::BytesToHexString(want)));
  }
  return absl::OkStatus();
}

#define SELFTEST_RETURN_IF_ERROR(expr)        \
  do {                                        \
    absl::Status self_test_status_ = (expr);  \
    if (!self_test_status_.ok()) return self_test_status_; \
  } while (0)

absl::Status HashKat(Algorithm alg, absl::string_view msg, absl::string_view digest_hex) {
  absl::StatusOr<std::unique_ptr<Hash>> h = NewHash(alg);
  if (!h.ok()) return h.status();
  // Split the message so the incremental path is exercised too.
  (*h)->Update(msg.substr(0, msg.size() / 2));
  (*h)->Update(msg.substr(msg.size() / 2));
  return Expect("digest", (*h)->Finish(), Hex(digest_hex));
}

absl::Status Sm3BatchKat() {
  // GB/T 32905-2016 A.1 and A.2, through the batch (multi-buffer) path.
  std::string m2;
  for (int i = 0; i < 16; ++i) m2 += "abcd";
  const absl::string_view msgs[] = {"abc", m2, "abc", m2, "abc", m2, "abc", m2, "abc"};
  std::string out(kSm3DigestSize * 9, '\0');
  Sm3Batch(msgs, reinterpret_cast<uint8_t*>(out.data()));
  for (int i = 0; i < 9; ++i) {
    SELFTEST_RETURN_IF_ERROR(Expect(
        absl::StrCat("item ", i), out.substr(i * kSm3DigestSize, kSm3DigestSize),
        Hex(i % 2 == 0 ? "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"
                       : "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732")));
  }
  return absl::OkStatus();
}

absl::Status HmacSha256Kat() {
  // RFC 4231 §4.2, test case 1.
  absl::StatusOr<std::unique_ptr<Mac>> mac = NewMac(Algorithm::kHmacSha256, std::string(20, '\x0b'));
  if (!mac.ok()) return mac.status();
  SELFTEST_RETURN_IF_ERROR(
      Expect("mac", (*mac)->ComputeMac("Hi There"),
             Hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")));
  return (*mac)->VerifyMac(Hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
                           "Hi There");
}

absl::Status HmacSm3Kat() {
  // No standard publishes an HMAC-SM3 vector: check the RFC 2104 construction
  // H((K ^ opad) || H((K ^ ipad) || m)) computed here over the SM3 KAT-tested above.
  const std::string key = "smcrypt HMAC-SM3 self-test key";
  const std::string msg = "abc";
  std::string ipad(64, '\x36'), opad(64, '\x5c');
  for (size_t i = 0; i < key.size(); ++i) {
    ipad[i] ^= key[i];
    opad[i] ^= key[i];
  }
  Sm3 inner;
  inner.Update(ipad);
  inner.Update(msg);
  Sm3 outer;
  outer.Update(opad);
  outer.Update(inner.Finish());
  const std::string want = outer.Finish();
  absl::StatusOr<std::unique_ptr<Mac>> mac = NewMac(Algorithm::kHmacSm3, key);
  if (!mac.ok()) return mac.status();
  return Expect("mac", (*mac)->ComputeMac(msg), want);
}

absl::Status CipherKat(Algorithm alg, absl::string_view key, absl::string_view iv,
                       absl::string_view pt, absl::string_view ct) {
  absl::StatusOr<std::unique_ptr<Cipher>> c = NewCipher(alg, Hex(key), Padding::kNone);
  if (!c.ok()) return c.status();
  SELFTEST_RETURN_IF_ERROR(Expect("encrypt", (*c)->Encrypt(Hex(iv), Hex(pt)), Hex(ct)));
  return Expect("decrypt", (*c)->Decrypt(Hex(iv), Hex(ct)), Hex(pt));
}

absl::Status AeadKat(Algorithm alg, absl::string_view key, absl::string_view iv,
                     absl::string_view aad, absl::string_view pt, absl::string_view ct_tag) {
  absl::StatusOr<std::unique_ptr<Aead>> a = NewAead(alg, Hex(key), 16);
  if (!a.ok()) return a.status();
  SELFTEST_RETURN_IF_ERROR(Expect("seal", (*a)->Seal(Hex(iv), Hex(pt), Hex(aad)), Hex(ct_tag)));
  SELFTEST_RETURN_IF_ERROR(Expect("open", (*a)->Open(Hex(iv), Hex(ct_tag), Hex(aad)), Hex(pt)));
  std::string bad = Hex(ct_tag);
  bad[0] ^= 1;
  if ((*a)->Open(Hex(iv), bad, Hex(aad)).ok()) {
    return absl::InternalError("open accepted a modified ciphertext");
  }
  return absl::OkStatus();
}

// The long-input SM4 tests run 119 blocks (64 + 32 + 16 + 4 + 3: every batch size of
// the widest back end, masked tails included; the standard's one-block examples above
// take only the single-block path) over the fixed public pattern byte i = (31·i + 7)
// mod 256, with GB/T 32907's example key, and compare the SM3 digest of the output.
// The digests were derived once outside smcrypt:
//   python3 -c "import sys; sys.stdout.buffer.write(bytes((i*31+7)&0xff for i in range(1904)))" >in
//   openssl enc -sm4-ecb -K 0123456789abcdeffedcba9876543210 -nopad -in in | openssl dgst -sm3
//   (and -sm4-cbc -iv 000102030405060708090a0b0c0d0e0f, -sm4-ctr -iv
//   00102030ffffffffffffffffffffffc3, whose counter carries through 96 bits after 61
//   blocks; OpenSSL 3.0.19), and for SM4-GCM, which OpenSSL 3.0 lacks, with Botan 2.19
//   ("SM4/GCM(16)", then "SM3") over 1909 bytes of the pattern with RFC 8998 A.1's nonce
//   and AAD: the ciphertext and tag, 1925 bytes, hashed.
constexpr absl::string_view kSm4ExampleKey = "0123456789abcdeffedcba9876543210";

std::string LongPattern(size_t len) {
  std::string out(len, '\0');
  for (size_t i = 0; i < len; ++i) out[i] = static_cast<char>((i * 31 + 7) & 0xff);
  return out;
}

absl::StatusOr<std::string> Sm3Of(const absl::StatusOr<std::string>& data) {
  if (!data.ok()) return data.status();
  absl::StatusOr<std::unique_ptr<Hash>> h = NewHash(Algorithm::kSm3);
  if (!h.ok()) return h.status();
  (*h)->Update(*data);
  return (*h)->Finish();
}

absl::Status Sm4CipherLongKat(Algorithm alg, absl::string_view iv, absl::string_view sm3_hex) {
  absl::StatusOr<std::unique_ptr<Cipher>> c = NewCipher(alg, Hex(kSm4ExampleKey), Padding::kNone);
  if (!c.ok()) return c.status();
  const std::string pt = LongPattern(1904);
  absl::StatusOr<std::string> ct = (*c)->Encrypt(Hex(iv), pt);
  SELFTEST_RETURN_IF_ERROR(Expect("SM3 of the ciphertext", Sm3Of(ct), Hex(sm3_hex)));
  return Expect("decrypt", (*c)->Decrypt(Hex(iv), *ct), pt);
}

absl::Status Sm4GcmLongKat() {
  absl::StatusOr<std::unique_ptr<Aead>> a = NewAead(Algorithm::kSm4Gcm, Hex(kSm4ExampleKey), 16);
  if (!a.ok()) return a.status();
  const std::string pt = LongPattern(1909);
  const std::string nonce = Hex("00001234567800000000abcd");
  const std::string aad = Hex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
  absl::StatusOr<std::string> sealed = (*a)->Seal(nonce, pt, aad);
  SELFTEST_RETURN_IF_ERROR(
      Expect("SM3 of the ciphertext and tag", Sm3Of(sealed),
             Hex("b70b8a3438f6d8cfc54e40af0858d980d23ffb4b67b9728496cca8045b49be4c")));
  SELFTEST_RETURN_IF_ERROR(Expect("open", (*a)->Open(nonce, *sealed, aad), pt));
  std::string bad = *sealed;
  bad[1500] ^= 1;
  if ((*a)->Open(nonce, bad, aad).ok()) {
    return absl::InternalError("open accepted a modified ciphertext");
  }
  return absl::OkStatus();
}

// SignatureVerifyKat verifies a published signature and rejects a modified one.
absl::Status SignatureVerifyKat(Algorithm alg, absl::string_view pub, absl::string_view msg,
                                absl::string_view sig_der) {
  absl::StatusOr<std::unique_ptr<PublicKeyVerify>> v = NewPublicKeyVerify(alg, pub);
  if (!v.ok()) return v.status();
  absl::Status s = (*v)->Verify(sig_der, msg);
  if (!s.ok()) return absl::InternalError(absl::StrCat("known signature: ", s.ToString()));
  std::string other(msg);
  other[0] ^= 1;
  if ((*v)->Verify(sig_der, other).code() != absl::StatusCode::kUnauthenticated) {
    return absl::InternalError("a signature over another message was not rejected");
  }
  return absl::OkStatus();
}

// SignaturePct: sign, verify, reject a modified message (pairwise consistency).
absl::Status SignaturePct(Algorithm alg, absl::string_view priv, absl::string_view pub) {
  absl::StatusOr<std::unique_ptr<PublicKeySign>> s = NewPublicKeySign(alg, priv);
  if (!s.ok()) return s.status();
  absl::StatusOr<std::unique_ptr<PublicKeyVerify>> v = NewPublicKeyVerify(alg, pub);
  if (!v.ok()) return v.status();
  absl::StatusOr<std::string> sig = (*s)->Sign("smcrypt self-test");
  if (!sig.ok()) return sig.status();
  absl::Status ok = (*v)->Verify(*sig, "smcrypt self-test");
  if (!ok.ok()) return absl::InternalError(absl::StrCat("own signature: ", ok.ToString()));
  if ((*v)->Verify(*sig, "smcrypt self-tesT").code() != absl::StatusCode::kUnauthenticated) {
    return absl::InternalError("a signature over another message was not rejected");
  }
  return absl::OkStatus();
}

absl::Status EncryptionPct(Algorithm alg, absl::string_view priv, absl::string_view pub) {
  absl::StatusOr<std::unique_ptr<PublicKeyEncrypt>> e = NewPublicKeyEncrypt(alg, pub);
  if (!e.ok()) return e.status();
  absl::StatusOr<std::unique_ptr<PublicKeyDecrypt>> d = NewPublicKeyDecrypt(alg, priv);
  if (!d.ok()) return d.status();
  absl::StatusOr<std::string> ct = (*e)->Encrypt("smcrypt self-test");
  if (!ct.ok()) return ct.status();
  SELFTEST_RETURN_IF_ERROR(Expect("decrypt", (*d)->Decrypt(*ct), "smcrypt self-test"));
  (*ct)[ct->size() - 1] ^= 1;
  if ((*d)->Decrypt(*ct).ok()) return absl::InternalError("a modified ciphertext decrypted");
  return absl::OkStatus();
}

// GB/T 32918.5-2017 (GM/T 0003.5) example on sm2p256v1: d, P, and the signature of
// "message digest" with ID "1234567812345678".
constexpr absl::string_view kSm2D =
    "3945208f7b2144b13f36e38ac6d39f95889393692860b51a42fb81ef4df7c5b8";
constexpr absl::string_view kSm2P =
    "0409f9df311e5421a150dd7d161e4bc5c672179fad1833fc076bb08ff356f35020"
    "ccea490ce26775a52dc6ea718cc1aa600aed05fbf35e084a6632f6072da9ad13";
constexpr absl::string_view kSm2Sig =
    "3046022100f5a03b0648d2c4630eeac513e1bb81a15944da3827d5b74143ac7eaceee720b3"
    "022100b1b6aa29df212fd8763182bc0d421ca1bb9038fd1f7f42d4840b69c485bbc1aa";

absl::Status Sm2Kat() {
  absl::StatusOr<std::string> spki = PublicKeyFromPrivate(Algorithm::kSm2, Hex(kSm2D));
  if (!spki.ok()) return spki.status();
  absl::StatusOr<Sm2PublicKey> pub = Sm2PublicKeyFromSpki(*spki);
  if (!pub.ok()) return pub.status();
  SELFTEST_RETURN_IF_ERROR(Expect("public key dG", pub->ToPoint(), Hex(kSm2P)));
  SELFTEST_RETURN_IF_ERROR(
      SignatureVerifyKat(Algorithm::kSm2, Hex(kSm2P), "message digest", Hex(kSm2Sig)));
  return SignaturePct(Algorithm::kSm2, Hex(kSm2D), Hex(kSm2P));
}

absl::Status Sm2EncryptionPct() {
  return EncryptionPct(Algorithm::kSm2, Hex(kSm2D), Hex(kSm2P));
}

// Sm2KeyExchangePct runs one exchange (GB/T 32918.3 §6, with confirmation, klen 48)
// between the GB/T 32918.5 key as A and a fresh key as B, each party checking the
// other's confirmation value, and compares K_A with K_B.
absl::Status Sm2KeyExchangePct() {
  absl::StatusOr<Sm2PrivateKey> a = Sm2PrivateKey::FromScalar(Hex(kSm2D));
  if (!a.ok()) return a.status();
  absl::StatusOr<Sm2PrivateKey> b = Sm2PrivateKey::Generate();
  if (!b.ok()) return b.status();
  Sm2KeyExchangeParams pa;
  pa.role = Sm2KeyExchangeRole::kInitiator;
  pa.own_id = "ALICE123@YAHOO.COM";
  pa.peer_id = "BILL456@YAHOO.COM";
  pa.key_size = 48;
  pa.confirmation = true;
  Sm2KeyExchangeParams pb = pa;
  pb.role = Sm2KeyExchangeRole::kResponder;
  std::swap(pb.own_id, pb.peer_id);
  absl::StatusOr<Sm2KeyExchange> ka = Sm2KeyExchange::New(*a, b->public_key(), pa);
  if (!ka.ok()) return ka.status();
  absl::StatusOr<Sm2KeyExchange> kb = Sm2KeyExchange::New(*b, a->public_key(), pb);
  if (!kb.ok()) return kb.status();
  absl::StatusOr<std::string> r_a = ka->Start();
  if (!r_a.ok()) return r_a.status();
  absl::StatusOr<std::string> r_b = kb->Start();
  if (!r_b.ok()) return r_b.status();
  absl::StatusOr<Sm2KeyExchangeOutput> out_b = kb->ComputeKey(*r_a);
  if (!out_b.ok()) return out_b.status();
  absl::StatusOr<Sm2KeyExchangeOutput> out_a = ka->ComputeKey(*r_b, out_b->confirmation);
  if (!out_a.ok()) return out_a.status();
  absl::StatusOr<SecretData> key_b = kb->ConfirmPeer(out_a->confirmation);
  if (!key_b.ok()) return key_b.status();
  if (out_a->key.size() != 48 ||
      SecretDataAsStringView(out_a->key) != SecretDataAsStringView(*key_b)) {
    return absl::InternalError("SM2 key exchange: K_A differs from K_B");
  }
  return absl::OkStatus();
}

absl::Status EcdsaP256Kat() {
  // RFC 6979 A.2.5: P-256, SHA-256, message "sample".
  const std::string pub = Hex(
      "0460fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"
      "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299");
  SELFTEST_RETURN_IF_ERROR(SignatureVerifyKat(
      Algorithm::kEcdsaP256, pub, "sample",
      Hex("3046022100efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
          "022100f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8")));
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(Algorithm::kEcdsaP256);
  if (!kp.ok()) return kp.status();
  return SignaturePct(Algorithm::kEcdsaP256, SecretDataAsStringView(kp->private_key_der),
                      kp->public_key_der);
}

absl::Status GeneratedKeyPct(Algorithm alg) {
  absl::StatusOr<KeyPair> kp = GenerateKeyPair(alg);
  if (!kp.ok()) return kp.status();
  return SignaturePct(alg, SecretDataAsStringView(kp->private_key_der), kp->public_key_der);
}

// Fixed RSA test keys (generated for this self-test; not secret, used for nothing else),
// so start-up does not pay for RSA key generation.
constexpr absl::string_view kRsa2048Key = R"PEM(
-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDdbZWJX3i5adje
YXK8qm7mXWXrlYPm+fff0aa8zrC1wyo3zBoHGpt43MKwJz9l9ahCCTw47qaNyA98
vZVt3nWrPs0SaD8LJx1GumtJ3oZvKMWsohcK264f/y7d3KQuywulEoTycKduD6iW
evnyOHZavdHAWJ93qwd/qGdX39CIYJg7QAhPY/tGQ6dI++a7tOcIozlBa0vi0jeo
Zn+ahmKoKa3cYY5JfTYb0IxOLsShnIF71XGr1PZ6AinHFHztezauF4XBSs+JopCO
e8jOI/Xes5kgtYPPauLBJSg/Wb1yBK1rAfq/3nFL3+RhCtvIMXCOxcn7TdRpLCxK
1d66ca3RAgMBAAECggEABoGavy4KKmMOAXdKL3lfz7aq+O+UUA40YowKzuGRI08e
M4Rkl6S4UKZmdVX65LphmLqkHY1kIRaBv33j2RYMPbVXQeEkqJWMNHzD7ChM6ZFg
cRKUdCAJO1UUhcX+4EXctEuRctz863TL9Kt9goi2kBMjqZflDCdvLYjni/dGbapg
bvReF2Qg+W4msTv1Wwc1vLz3b68Z/BJMpu6gmfNpxsoHI1tjbQD0XDD0Dqng0dO0
vxGHFBkQJpzex2jc9F2aF+tqdat3tT8R83Ctb8Jd0Yj0OMAUMMrRc5LjosRw3stn
WWOTv9Pz0ak0d4fndpi4TDNrmlNPYwu9lvcWgiPdIQKBgQD5dMMw1SRgeUHWZDs0
l3Q11AgWTf8S9XHuDd8sxgNxXD7OfSUYkBbwHPCi2nk+380SNyUlv5kJx21h8VP3
5n5yNQ+/ucGriByjS8snIk5ugj4dT1FunRNyAWcQNFED3fdhQeYQlolY409TdElX
5GTU8c9YHNuaytIBSZl5OTxCIQKBgQDjPJkAjgCTdNOaa5MtVBgLPMV0X3j+0WeJ
RptLE3TYfjg0Avsdn+QaJ/HNAQYpLc/bYM1biOjQCLcCo99c8MdqEA6HKZ6Tp69+
eH0M/r1hr5fOXOM9L+GKXu8URmokmtqFOj48evJziCBZIBZ0vjHONykBKWTlA21v
O84vUXNVsQKBgQCIOKbOZ9YxiIXXWWyrT3l6W4r/AyCjbb0FTjXs8US4BrOVdulm
/GhKPsN5auyC1RvbMpnqfzJHEMw+i9ZarVenbipnfDyyOuXIln8do7JIzn606reB
O+1+eB2bz7Xd8rxANAg6Tro5/Ac5f2r9wA7/6fxcFYYmhVMguNxCQmsRgQKBgQCl
Mx/UnGfky7EueXilIpbcTJEMWoBfWKOZ1D//46Q15AU+ItCnJ9+v+Ew9CrqM42ZS
idyh6DXBUCSkgbhYHCANhqDZOLO1itn16uiWsvfBdeO6PiNiD1Y7v2q2Zb6y3/Vv
l/k5BPUQcu15fe91bfRNhCKGWq6kI8rCbEsocWGU8QKBgDXKVT6ae0MOWzfAzQUW
MkpuSsV0IFLVpeR9627tHRR2zrfXV00QrL8FxXbsg6iTqIIT4nNetm3rZEKcDyZd
KZ5pdc+agUXzoCnCMih2a3IRTzLPZ4cMKSOfPT4jvsOPqAVkScsqc4c6V+a6LM8v
mVT8/vZJHO2k/N5kh/lv171M
-----END PRIVATE KEY-----
)PEM";
constexpr absl::string_view kRsa3072Key = R"PEM(
-----BEGIN PRIVATE KEY-----
MIIG/QIBADANBgkqhkiG9w0BAQEFAASCBucwggbjAgEAAoIBgQCXNv19mkL7elsW
BX/G0r2VGLMkm7Kw54skfzRs6yOwaa6OhwfEONWylG/iH84HLA6waZ754ORv7FqH
eIh4t5Dy9KOEz2IqrCUD+5W8KibfkGBsayMmqN9VfW7coM2B+pK4GZelc6ND0CN5
ZRdn6de9VyC1pMQmzwMVx9khxo1YvxD6ay9GyhfFHpnE54KEus2jFwk+8G6PeiLI
LGgDxgpFAWPMMjowrrKf9/8afQpVNz8LB4bCbne02T2ulZxnU/Hlsyg8vBql6Ma3
vW9ZIGOyvlYHANRqkpufiVlWCcdsxYsZI5oAIei09A1V74Rk1gicFoJqv0KKF+Ad
dvlD9xJRdwTwvqCpmYfDE6unwYo8X0CEbk5MPoy/V4bUnYHsC+MUmSOeeYuplB+F
jbo81rntXDn/ERWDz7gmVr17OFQG1QFIVLozzi0zHjwYrZk9AuJ29R0wrd9lw5Ot
QGN1hbVgkGFxtANMOwAFwKE7Rumvlldu6U+gGxIhaMpfdcO5L0sCAwEAAQKCAYAb
b7PQvVOX81xhg3/qoEQbsE6YvtNOO8TIS3hEpulj0dkFLUTgentzmnEucxzbuke0
BIX+yqpIEHdgiyMf3BalrnOY3lPucCuLLHO/n1pMSBLmuQ24rv1OsqKRz29aPQ+v
7ZzRPUkLPdGh7hCwHwKw7QUXUBzy+a6Snh8sfK0axBgdh6MdUf+8GVBHJMZOtOIo
zD42OEOnLr7u2PfKb31fheAIpbhfKuNoGQQlVzivu4Vpx+TQlGCN5LjHW4f0S4uZ
/ENb9YWKCbTla0lvEfmfMVR6M/LdXcmPm1UOspNVsTZD+QkxkkUgrrl/F+Jxxbqc
UN1Wg9+BWmxvuGxBCy/1oDmez3bQfrcYTn/MH/pT+aVYgETb7ZEypoue9auuBNhb
UQWWPh8hR5dljLh3LRYL4kTKXoH92Tmru/Jb5CPg/vm1kayI9Ma7iterLHbYVvVS
GJSMrAwSzsWv5tb2+eu4Lf4lyi0EhC7DZRW+7nZaxJQp/n05Zqyf0JhnU+R8DiEC
gcEAyCBql+me9cshdlVvAkgSXoOOR4FyTUErr7Pt+3cYwoRvxqzKdhdypfYQ/9XJ
7VxupFMTbX4gPG74SgIQLbvb1lgh0Aq4NQWDm93+spFpRTVv0kJ9Tpp300MyaF0d
vQ7d24RGxT6kHRHURfJUR/BkjLg16aMqQKU/x1S547vDOnufCAQfYHlISIhCHH4G
bTg+Q3wZK/CETC+W2AiIJ/kyZr08m7peM75ao1Sx073ebGdP3BQ6Cm43HFHJoZys
hR5xAoHBAMFuty4t102HnLSwg4dRuciYIvnabW6TXDq8JtOjR8XSMNjXRy8HPQIO
c5E1625HR7n8nymp+q9yDfNYD/U9UpSFUP0oIQjAB7R4LRWSgYuKfpppXBWt9fV+
OXq2cSaPLAO5igryUpT0S96o8IpR4xTPJTPzbvJoCBlOOWreND4cZhfalMirCblQ
vCzhnfJDeAXKYYjZf+VaMYVmNhKa8Umo+7hot3HkXb7TrgrZVzCbECE12hpLm+h+
qOfHqAH/ewKBwQC+GsUG/57H4CkuTqO/6BTDAXczh8y7hE/qfSJxQMYdaU8AzH0a
xtVav6+QR1alCqvznxMSbMBUiBmFvAYAW7bOGzQrezNW8qD9fFkI6ca1Pri1ZAHC
nEt9PRTyPJoWULwBXdsYXZPqJVifBT54g+wQHKDiCuQFOrSmNl7K7T7cHDiKldf0
feFjPUSH6lNShx3mX0lOCxCxindhSmGEj10IaXTcfaIkxws0oiy2dmOGWHFtHy2v
YNkrJqpBwiHD5pECgcAonlk1B0dI7otHnjFgfxbmOpxNn0KPj740T0JP+t+deM/t
GPfHtltnTSWTfqEbnThAo/3AQAN2SBsJ2JoxQ1lN+tjQ8FZPghOcIAhHmWY+qSyA
vFMr8kXN8V2cmScVk8cIWTPVrKEOymYMMamhQiTPP9huGlZX7OSWe8iu2k5aJJiD
tdC8er4l/gAl5JLIRsazYJYuqI2k2dXAT4BXU9YLQ8LoLIUpE21kHwtTF+SpPkaa
0rYkA3CP19kcIt7y3HUCgcAjm0qp8m/edK8iMMxN17Dgvf5iY2Lsqbk2wqCxfkXz
xplSy76/qHOjp6akZkEYo0WKcEzuuQ+ljO285dP9xS1fJTsLD3F+JIhTD6K7jcFh
Eykge6YB4Kt65rscnQvS4lk4n2n18uQ+ukpBZWgKwhtKGAdNqpC8BkBKvCyt7jA1
y9RWRGhLGJgz17j6EAq24O4AregMKEF2PM6W7RTT1ZCd5rHYZwnzjfxsdJE1+++9
l2NLc/72xvJMKj2RkHjepys=
-----END PRIVATE KEY-----
)PEM";

absl::Status RsaPct(Algorithm sign_alg, Algorithm enc_alg, absl::string_view pem) {
  absl::StatusOr<std::string> pub = PublicKeyFromPrivate(sign_alg, pem);
  if (!pub.ok()) return pub.status();
  SELFTEST_RETURN_IF_ERROR(SignaturePct(sign_alg, pem, *pub));
  return EncryptionPct(enc_alg, pem, *pub);
}

struct TestCase {
  const char* name;
  absl::Status (*run)();
};

const TestCase kTests[] = {
    {"SM3 GB/T 32905 A.1/A.2",
     [] {
       SELFTEST_RETURN_IF_ERROR(HashKat(
           Algorithm::kSm3, "abc", "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0"));
       return HashKat(Algorithm::kSm3,
                      "abcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcd",
                      "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732");
     }},
    {"SM3 batch GB/T 32905 A.1/A.2", Sm3BatchKat},
    {"SHA-256 FIPS 180-2 B.1",
     [] {
       return HashKat(Algorithm::kSha256, "abc",
                      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
     }},
    {"HMAC-SHA-256 RFC 4231 4.2", HmacSha256Kat},
    {"HMAC-SM3 RFC 2104 construction", HmacSm3Kat},
    {"SM4-ECB GB/T 32907 A.1",
     [] {
       return CipherKat(Algorithm::kSm4Ecb, "0123456789abcdeffedcba9876543210", "",
                        "0123456789abcdeffedcba9876543210", "681edf34d206965e86b3e94f536e4246");
     }},
    {"SM4-CBC GB/T 32907 A.1 (IV 0)",
     [] {
       return CipherKat(Algorithm::kSm4Cbc, "0123456789abcdeffedcba9876543210",
                        "00000000000000000000000000000000", "0123456789abcdeffedcba9876543210",
                        "681edf34d206965e86b3e94f536e4246");
     }},
    {"SM4-CTR GB/T 32907 A.1 (keystream)",
     [] {
       return CipherKat(Algorithm::kSm4Ctr, "0123456789abcdeffedcba9876543210",
                        "0123456789abcdeffedcba9876543210", "00000000000000000000000000000000",
                        "681edf34d206965e86b3e94f536e4246");
     }},
    {"SM4-CFB draft-ribose-cfrg-sm4 (OpenSSL evpciph_sm4)",
     [] {
       return CipherKat(Algorithm::kSm4Cfb, "0123456789abcdeffedcba9876543210",
                        "0123456789abcdeffedcba9876543210",
                        "0123456789abcdeffedcba98765432100123456789abcdeffedcba9876543210",
                        "693d9a535bad5bb1786f53d7253a70569ed258a85a0467cc92aab393dd978995");
     }},
    {"SM4-OFB draft-ribose-cfrg-sm4 (OpenSSL evpciph_sm4)",
     [] {
       return CipherKat(Algorithm::kSm4Ofb, "0123456789abcdeffedcba9876543210",
                        "0123456789abcdeffedcba9876543210",
                        "0123456789abcdeffedcba98765432100123456789abcdeffedcba9876543210",
                        "693d9a535bad5bb1786f53d7253a7056f2075d28b5235f58d50027e4177d2bce");
     }},
    {"SM4-XTS-GB GB/T 17964-2021 example (OpenSSL evpciph_sm4), ciphertext stealing",
     [] {
       return CipherKat(Algorithm::kSm4XtsGb,
                        "2b7e151628aed2a6abf7158809cf4f3c000102030405060708090a0b0c0d0e0f",
                        "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
                        "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46"
                        "a35ce411e5fbc1191a0a52eff69f2445df4f9b17",
                        "e9538251c71d7b80bbe4483fef497bd12c5c581bd6242fc51e08964fb4f60fdb0ba42f63"
                        "499279213d318d2c11f6886e903be7f93a1b3479");
     }},
    {"SM4-XTS (IEEE 1619) on the same input (OpenSSL evpciph_sm4)",
     [] {
       return CipherKat(Algorithm::kSm4Xts,
                        "2b7e151628aed2a6abf7158809cf4f3c000102030405060708090a0b0c0d0e0f",
                        "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
                        "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46"
                        "a35ce411e5fbc1191a0a52eff69f2445df4f9b17",
                        "e9538251c71d7b80bbe4483fef497bd1b3db1a3e60408c575d63ff7db39f83260869f9e2"
                        "585fec9f0b863bf8fd784b8627d16c0db6d2cfc7");
     }},
    {"SM4-GCM RFC 8998 A.1",
     [] {
       return AeadKat(Algorithm::kSm4Gcm, "0123456789abcdeffedcba9876543210",
                      "00001234567800000000abcd", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                      "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccdddddddddddddddd"
                      "eeeeeeeeeeeeeeeeffffffffffffffffeeeeeeeeeeeeeeeeaaaaaaaaaaaaaaaa",
                      "17f399f08c67d5ee19d0dc9969c4bb7d5fd46fd3756489069157b282bb200735"
                      "d82710ca5c22f0ccfa7cbf93d496ac15a56834cbcf98c397b4024a2691233b8d"
                      "83de3541e4c2b58177e065a9bf7b62ec");
     }},
    {"SM4-CCM RFC 8998 A.2",
     [] {
       return AeadKat(Algorithm::kSm4Ccm, "0123456789abcdeffedcba9876543210",
                      "00001234567800000000abcd", "feedfacedeadbeeffeedfacedeadbeefabaddad2",
                      "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccccccccccdddddddddddddddd"
                      "eeeeeeeeeeeeeeeeffffffffffffffffeeeeeeeeeeeeeeeeaaaaaaaaaaaaaaaa",
                      "48af93501fa62adbcd414cce6034d895dda1bf8f132f042098661572e7483094"
                      "fd12e518ce062c98acee28d95df4416bed31a2f04476c18bb40c84a74b97dc5b"
                      "16842d4fa186f56ab33256971fa110f4");
     }},
    {"SM4-ECB 119 blocks (wide path), SM3 of output from OpenSSL",
     [] {
       return Sm4CipherLongKat(Algorithm::kSm4Ecb, "",
                               "37c1657bffdf8895f1aff29a60861c0e23491d182af5715d8df6f21d0f2c8c22");
     }},
    {"SM4-CBC 119 blocks (wide decryption), SM3 of output from OpenSSL",
     [] {
       return Sm4CipherLongKat(Algorithm::kSm4Cbc, "000102030405060708090a0b0c0d0e0f",
                               "4ba20e6d37d1ce51f19d82db72b483ff093054c8236e75cdaa1061d80b5e3122");
     }},
    {"SM4-CTR 119 blocks (wide path, 96-bit carry), SM3 of output from OpenSSL",
     [] {
       return Sm4CipherLongKat(Algorithm::kSm4Ctr, "00102030ffffffffffffffffffffffc3",
                               "96f4ed80c357a3e5aa71e665931a5a57654ccbcb94e145e2cf6ee01ac1044f71");
     }},
    {"SM4-GCM 1909 bytes (wide CTR and GHASH), SM3 of output from Botan", Sm4GcmLongKat},
    {"AES-128-ECB FIPS 197 C.1",
     [] {
       return CipherKat(Algorithm::kAes128Ecb, "000102030405060708090a0b0c0d0e0f", "",
                        "00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a");
     }},
    {"AES-256-ECB FIPS 197 C.3",
     [] {
       return CipherKat(Algorithm::kAes256Ecb,
                        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "",
                        "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089");
     }},
    {"AES-128-CBC SP 800-38A F.2.1",
     [] {
       return CipherKat(Algorithm::kAes128Cbc, "2b7e151628aed2a6abf7158809cf4f3c",
                        "000102030405060708090a0b0c0d0e0f", "6bc1bee22e409f96e93d7e117393172a",
                        "7649abac8119b246cee98e9b12e9197d");
     }},
    {"AES-128-CTR SP 800-38A F.5.1",
     [] {
       return CipherKat(Algorithm::kAes128Ctr, "2b7e151628aed2a6abf7158809cf4f3c",
                        "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", "6bc1bee22e409f96e93d7e117393172a",
                        "874d6191b620e3261bef6864990db6ce");
     }},
    {"AES-128-GCM GCM spec test case 3",
     [] {
       return AeadKat(Algorithm::kAes128Gcm, "feffe9928665731c6d6a8f9467308308",
                      "cafebabefacedbaddecaf888", "",
                      "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
                      "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
                      "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
                      "4d5c2af327cd64a62cf35abd2ba6fab4");
     }},
    {"AES-256-GCM GCM spec test case 15",
     [] {
       return AeadKat(Algorithm::kAes256Gcm,
                      "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
                      "cafebabefacedbaddecaf888", "",
                      "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
                      "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                      "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
                      "b094dac5d93471bdec1a502270e3cc6c");
     }},
    {"SM2 GB/T 32918.5 key, signature; sign/verify", Sm2Kat},
    {"SM2 encryption pairwise consistency", Sm2EncryptionPct},
    {"SM2 key exchange pairwise consistency (both roles, confirmation)", Sm2KeyExchangePct},
    {"ECDSA-P256 RFC 6979 A.2.5; sign/verify", EcdsaP256Kat},
    {"ECDSA-SECP256K1 sign/verify", [] { return GeneratedKeyPct(Algorithm::kEcdsaSecp256k1); }},
    {"RSA-2048 PSS and OAEP pairwise consistency",
     [] { return RsaPct(Algorithm::kRsa2048Pss, Algorithm::kRsa2048Oaep, kRsa2048Key); }},
    {"RSA-3072 PSS and OAEP pairwise consistency",
     [] { return RsaPct(Algorithm::kRsa3072Pss, Algorithm::kRsa3072Oaep, kRsa3072Key); }},
};

}  // namespace

std::vector<SelfTestResult> RunSelfTests() {
  std::vector<SelfTestResult> results;
  for (const TestCase& t : kTests) {
    absl::Status s = t.run();
    results.push_back({t.name, s.ok(), std::string(s.message())});
  }
  return results;
}

SelfTests::SelfTests(std::function<void(bool)> on_result) : on_result_(std::move(on_result)) {}

bool SelfTests::Run() {
  std::vector<SelfTestResult> results = RunSelfTests();
  bool all = true;
  for (const SelfTestResult& r : results) {
    if (!r.passed) {
      all = false;
      LogError(absl::StrCat("self-test FAILED: ", r.name, ": ", r.message));
    }
  }
  LogInfo(absl::StrCat("self-tests: ", results.size(), " run, ", all ? "all passed" : "FAILURES"));
  {
    absl::MutexLock lock(&mu_);
    results_ = std::move(results);
    all_passed_ = all;
  }
  if (on_result_) on_result_(all);
  return all;
}

std::vector<SelfTestResult> SelfTests::results() const {
  absl::MutexLock lock(&mu_);
  return results_;
}

bool SelfTests::all_passed() const {
  absl::MutexLock lock(&mu_);
  return all_passed_;
}

}  // namespace smcrypt::server
