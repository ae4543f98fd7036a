// tsan_absl_sync.cc — ThreadSanitizer annotations for Debian's Abseil synchronization
// (TSan build only: tests/CMakeLists.txt adds this file to every test executable when
// SMCRYPT_SANITIZE contains "thread").
//
// Debian's libabsl_synchronization.so is not built with TSan, so TSan never sees
// absl::Mutex, absl::CondVar or absl::Notification synchronize: every access guarded by
// them would be reported as a data race, real races drowned in false ones. A
// suppression file cannot fix that (it would hide the guarded accesses too). Instead
// the executable defines the library's entry points itself (the dynamic linker binds
// every caller, the library's own callers included, to these), forwards each call to
// the library's definition (dlsym RTLD_NEXT) and tells TSan the happens-before edges
// the call creates: __tsan_release before a mutex is given up (Unlock, and the waits
// that unlock inside: Await, CondVar::Wait), __tsan_acquire after it is taken, and the
// same for Notify → WaitForNotification, and an acquire/release of the mutex around
// each Condition the library evaluates while it holds it. Lock ordering (deadlock detection) is not
// modelled; races on data are.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

extern "C" {
void __tsan_acquire(void* addr);
void __tsan_release(void* addr);
}

namespace {

template <typename Fn>
Fn Next(const char* mangled) {
  void* f = dlsym(RTLD_NEXT, mangled);
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_absl_sync: %s not found\n", mangled);
    std::abort();
  }
  return reinterpret_cast<Fn>(f);
}

#define SMCRYPT_NEXT(type, mangled)                       \
  static const auto next = Next<type>(mangled)

void* Key(const void* p) { return const_cast<void*>(p); }

// The mutex whose library call is running on this thread. Abseil evaluates Conditions
// inside its calls, with that mutex held, on whichever thread is there (an unlocking
// thread evaluates the waiters' conditions): Condition::Eval below brackets each
// evaluation with an acquire and a release of that mutex.
thread_local const void* tl_mutex = nullptr;
class InCall {
 public:
  explicit InCall(const void* mu) : prev_(tl_mutex) { tl_mutex = mu; }
  ~InCall() { tl_mutex = prev_; }

 private:
  const void* prev_;
};

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

// ---- Mutex: acquisitions ----
void Mutex::Lock() {
  SMCRYPT_NEXT(void (*)(Mutex*), "_ZN4absl7debian35Mutex4LockEv");
  InCall in_call(this);
  next(this);
  __tsan_acquire(Key(this));
}
void Mutex::ReaderLock() {
  SMCRYPT_NEXT(void (*)(Mutex*), "_ZN4absl7debian35Mutex10ReaderLockEv");
  InCall in_call(this);
  next(this);
  __tsan_acquire(Key(this));
}
bool Mutex::TryLock() {
  SMCRYPT_NEXT(bool (*)(Mutex*), "_ZN4absl7debian35Mutex7TryLockEv");
  InCall in_call(this);
  const bool ok = next(this);
  if (ok) __tsan_acquire(Key(this));
  return ok;
}
bool Mutex::ReaderTryLock() {
  SMCRYPT_NEXT(bool (*)(Mutex*), "_ZN4absl7debian35Mutex13ReaderTryLockEv");
  InCall in_call(this);
  const bool ok = next(this);
  if (ok) __tsan_acquire(Key(this));
  return ok;
}
void Mutex::LockWhen(const Condition& c) {
  SMCRYPT_NEXT(void (*)(Mutex*, const Condition&), "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  InCall in_call(this);
  next(this, c);
  __tsan_acquire(Key(this));
}
void Mutex::ReaderLockWhen(const Condition& c) {
  SMCRYPT_NEXT(void (*)(Mutex*, const Condition&),
               "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE");
  InCall in_call(this);
  next(this, c);
  __tsan_acquire(Key(this));
}
bool Mutex::LockWhenWithTimeout(const Condition& c, absl::Duration t) {
  SMCRYPT_NEXT(bool (*)(Mutex*, const Condition&, absl::Duration),
               "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  InCall in_call(this);
  const bool r = next(this, c, t);
  __tsan_acquire(Key(this));  // held on return either way
  return r;
}
bool Mutex::LockWhenWithDeadline(const Condition& c, absl::Time d) {
  SMCRYPT_NEXT(bool (*)(Mutex*, const Condition&, absl::Time),
               "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  InCall in_call(this);
  const bool r = next(this, c, d);
  __tsan_acquire(Key(this));
  return r;
}
bool Mutex::ReaderLockWhenWithTimeout(const Condition& c, absl::Duration t) {
  SMCRYPT_NEXT(bool (*)(Mutex*, const Condition&, absl::Duration),
               "_ZN4absl7debian35Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  InCall in_call(this);
  const bool r = next(this, c, t);
  __tsan_acquire(Key(this));
  return r;
}
bool Mutex::ReaderLockWhenWithDeadline(const Condition& c, absl::Time d) {
  SMCRYPT_NEXT(bool (*)(Mutex*, const Condition&, absl::Time),
               "_ZN4absl7debian35Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  InCall in_call(this);
  const bool r = next(this, c, d);
  __tsan_acquire(Key(this));
  return r;
}

// ---- Mutex: releases ----
void Mutex::Unlock() {
  SMCRYPT_NEXT(void (*)(Mutex*), "_ZN4absl7debian35Mutex6UnlockEv");
  __tsan_release(Key(this));
  InCall in_call(this);
  next(this);
}
void Mutex::ReaderUnlock() {
  SMCRYPT_NEXT(void (*)(Mutex*), "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  __tsan_release(Key(this));
  InCall in_call(this);
  next(this);
}

// ---- Waits that release the held mutex and take it again ----
void Mutex::Await(const Condition& c) {
  SMCRYPT_NEXT(void (*)(Mutex*, const Condition&), "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  __tsan_release(Key(this));
  InCall in_call(this);
  next(this, c);
  __tsan_acquire(Key(this));
}
bool Mutex::AwaitWithTimeout(const Condition& c, absl::Duration t) {
  SMCRYPT_NEXT(bool (*)(Mutex*, const Condition&, absl::Duration),
               "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_release(Key(this));
  InCall in_call(this);
  const bool r = next(this, c, t);
  __tsan_acquire(Key(this));
  return r;
}
bool Mutex::AwaitWithDeadline(const Condition& c, absl::Time d) {
  SMCRYPT_NEXT(bool (*)(Mutex*, const Condition&, absl::Time),
               "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_release(Key(this));
  InCall in_call(this);
  const bool r = next(this, c, d);
  __tsan_acquire(Key(this));
  return r;
}
void CondVar::Wait(Mutex* mu) {
  SMCRYPT_NEXT(void (*)(CondVar*, Mutex*), "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  __tsan_release(Key(mu));
  InCall in_call(mu);
  next(this, mu);
  __tsan_acquire(Key(mu));
}
bool CondVar::WaitWithTimeout(Mutex* mu, absl::Duration t) {
  SMCRYPT_NEXT(bool (*)(CondVar*, Mutex*, absl::Duration),
               "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(Key(mu));
  InCall in_call(mu);
  const bool r = next(this, mu, t);
  __tsan_acquire(Key(mu));
  return r;
}
bool CondVar::WaitWithDeadline(Mutex* mu, absl::Time d) {
  SMCRYPT_NEXT(bool (*)(CondVar*, Mutex*, absl::Time),
               "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_release(Key(mu));
  InCall in_call(mu);
  const bool r = next(this, mu, d);
  __tsan_acquire(Key(mu));
  return r;
}

// ---- Condition evaluation inside the library's calls ----
bool Condition::Eval() const {
  SMCRYPT_NEXT(bool (*)(const Condition*), "_ZNK4absl7debian39Condition4EvalEv");
  const void* mu = tl_mutex;
  if (mu != nullptr) __tsan_acquire(Key(mu));
  const bool r = next(this);
  if (mu != nullptr) __tsan_release(Key(mu));
  return r;
}

// ---- Notification ----
void Notification::Notify() {
  SMCRYPT_NEXT(void (*)(Notification*), "_ZN4absl7debian312Notification6NotifyEv");
  __tsan_release(Key(this));
  next(this);
}
void Notification::WaitForNotification() const {
  SMCRYPT_NEXT(void (*)(const Notification*),
               "_ZNK4absl7debian312Notification19WaitForNotificationEv");
  next(this);
  __tsan_acquire(Key(this));
}
bool Notification::WaitForNotificationWithTimeout(absl::Duration t) const {
  SMCRYPT_NEXT(bool (*)(const Notification*, absl::Duration),
               "_ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE");
  const bool r = next(this, t);
  if (r) __tsan_acquire(Key(this));
  return r;
}
bool Notification::WaitForNotificationWithDeadline(absl::Time d) const {
  SMCRYPT_NEXT(bool (*)(const Notification*, absl::Time),
               "_ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE");
  const bool r = next(this, d);
  if (r) __tsan_acquire(Key(this));
  return r;
}

ABSL_NAMESPACE_END
}  // namespace absl
