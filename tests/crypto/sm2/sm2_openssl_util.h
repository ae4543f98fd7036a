// sm2_openssl_util.h — OpenSSL 3 helpers shared by the SM2 tests: BIGNUM conversions for
// 4×64-bit limbs, the sm2p256v1 group, and EVP_PKEY SM2 keys built from raw bytes.
#ifndef SMCRYPT_TESTS_CRYPTO_SM2_SM2_OPENSSL_UTIL_H_
#define SMCRYPT_TESTS_CRYPTO_SM2_SM2_OPENSSL_UTIL_H_

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include <cstdint>
#include <memory>
#include <string>

#include "crypto/sm2/sm2_field.h"
#include "gtest/gtest.h"

namespace smcrypt::testing {

struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct BnCtxFree {
  void operator()(BN_CTX* c) const { BN_CTX_free(c); }
};
struct GroupFree {
  void operator()(EC_GROUP* g) const { EC_GROUP_free(g); }
};
struct PointFree {
  void operator()(EC_POINT* p) const { EC_POINT_free(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;
using BnCtxPtr = std::unique_ptr<BN_CTX, BnCtxFree>;
using GroupPtr = std::unique_ptr<EC_GROUP, GroupFree>;
using PointPtr = std::unique_ptr<EC_POINT, PointFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

inline BnPtr BnFromLimbs(const uint64_t a[4]) {
  uint8_t buf[32];
  internal::LimbsToBytes(buf, a);
  return BnPtr(BN_bin2bn(buf, 32, nullptr));
}

// LimbsFromBn requires 0 ≤ b < 2^256.
inline void LimbsFromBn(uint64_t r[4], const BIGNUM* b) {
  uint8_t buf[32];
  EXPECT_EQ(BN_bn2binpad(b, buf, 32), 32);
  internal::LimbsFromBytes(r, buf);
}

inline std::string BnTo32(const BIGNUM* b) {
  std::string s(32, '\0');
  EXPECT_EQ(BN_bn2binpad(b, reinterpret_cast<uint8_t*>(&s[0]), 32), 32);
  return s;
}

inline GroupPtr Sm2Group() { return GroupPtr(EC_GROUP_new_by_curve_name(NID_sm2)); }

// Sm2EvpKey builds an OpenSSL SM2 key from a 65-byte public point and, if not empty, the
// 32-byte private scalar.
inline PkeyPtr Sm2EvpKey(const std::string& pub, const std::string& priv) {
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "SM2", 0);
  OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub.data(), pub.size());
  BnPtr d;
  if (!priv.empty()) {
    d.reset(BN_bin2bn(reinterpret_cast<const uint8_t*>(priv.data()), priv.size(), nullptr));
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d.get());
  }
  OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "SM2", nullptr));
  EVP_PKEY* pkey = nullptr;
  EXPECT_EQ(EVP_PKEY_fromdata_init(ctx.get()), 1);
  EXPECT_EQ(EVP_PKEY_fromdata(ctx.get(), &pkey,
                              priv.empty() ? EVP_PKEY_PUBLIC_KEY : EVP_PKEY_KEYPAIR, params),
            1);
  OSSL_PARAM_free(params);
  OSSL_PARAM_BLD_free(bld);
  return PkeyPtr(pkey);
}

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_CRYPTO_SM2_SM2_OPENSSL_UTIL_H_
