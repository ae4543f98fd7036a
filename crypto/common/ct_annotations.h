// ct_annotations.h — marks for the constant-time check under valgrind memcheck (the
// ctgrind / TIMECOP technique, as BoringSSL's CONSTTIME_SECRET / CONSTTIME_DECLASSIFY).
//
// tests/ct/ct_valgrind_test.cc marks keys, nonces, scalars and plaintext as undefined
// memory (SMCRYPT_CT_SECRET). Memcheck then reports every conditional jump and every
// memory address that depends on them, which is exactly a secret-dependent branch or
// table index. Values that the protocol makes public anyway — an accept/reject verdict
// returned to the caller, a ciphertext, a signature, a public key computed from a
// private one, the outcome of a rejection-sampling draw that is thrown away — are
// declassified where the code branches on them (SMCRYPT_CT_DECLASSIFY / CtDeclassify),
// each with a comment saying why it is public.
//
// Outside valgrind the marks are valgrind "client requests": a fixed sequence of a few
// register instructions with no effect (no call, no memory access), and they sit only
// at per-operation decision points, never in a kernel's inner loop. Without
// <valgrind/memcheck.h> at build time they compile to nothing.
#ifndef SMCRYPT_CRYPTO_COMMON_CT_ANNOTATIONS_H_
#define SMCRYPT_CRYPTO_COMMON_CT_ANNOTATIONS_H_

#include <cstddef>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define SMCRYPT_HAVE_CT_ANNOTATIONS 1
#endif
#endif

#if defined(SMCRYPT_HAVE_CT_ANNOTATIONS)
// SMCRYPT_CT_SECRET(ptr, len) marks `len` bytes at `ptr` as secret (undefined for memcheck).
#define SMCRYPT_CT_SECRET(ptr, len) \
  ((void)VALGRIND_MAKE_MEM_UNDEFINED((ptr), (len)))
// SMCRYPT_CT_DECLASSIFY(ptr, len) marks `len` bytes at `ptr` as public (defined).
#define SMCRYPT_CT_DECLASSIFY(ptr, len) \
  ((void)VALGRIND_MAKE_MEM_DEFINED((ptr), (len)))
// SMCRYPT_CT_RUNNING_ON_VALGRIND is non-zero under valgrind.
#define SMCRYPT_CT_RUNNING_ON_VALGRIND() (RUNNING_ON_VALGRIND)
#else
#define SMCRYPT_CT_SECRET(ptr, len) ((void)(ptr), (void)(len))
#define SMCRYPT_CT_DECLASSIFY(ptr, len) ((void)(ptr), (void)(len))
#define SMCRYPT_CT_RUNNING_ON_VALGRIND() 0
#endif

namespace smcrypt {

// CtDeclassify returns `v`, marked public: use it on a secret-derived value (a mask, a
// verdict) immediately before the code branches on it, with a comment saying why the
// value is public. It costs nothing outside valgrind.
template <typename T>
inline T CtDeclassify(T v) {
  SMCRYPT_CT_DECLASSIFY(&v, sizeof(v));
  return v;
}

}  // namespace smcrypt

#endif  // SMCRYPT_CRYPTO_COMMON_CT_ANNOTATIONS_H_
