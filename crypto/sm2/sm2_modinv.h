// sm2_modinv.h — constant-time inversion modulo the sm2p256v1 field prime p
// (Bernstein–Yang safegcd), shared by every SM2 back end.
#ifndef SMCRYPT_CRYPTO_SM2_SM2_MODINV_H_
#define SMCRYPT_CRYPTO_SM2_SM2_MODINV_H_

#include <cstdint>

namespace smcrypt::internal {

// Sm2ModInvP sets r = a⁻¹ mod p for a plain (not Montgomery) value a ∈ [0, p), r ∈ [0, p);
// a = 0 gives 0 (the convention of the Fermat inversion a^(p−2)). Little-endian 64-bit
// limbs; r may alias a. Constant time in a (fixed 590 divsteps, masks only); wipes its
// intermediates. Defined in sm2_modinv.cc.
void Sm2ModInvP(uint64_t r[4], const uint64_t a[4]);

}  // namespace smcrypt::internal

#endif  // SMCRYPT_CRYPTO_SM2_SM2_MODINV_H_
