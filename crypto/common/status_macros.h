// status_macros.h — early return on error for absl::Status / absl::StatusOr.
#ifndef SMCRYPT_CRYPTO_COMMON_STATUS_MACROS_H_
#define SMCRYPT_CRYPTO_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SMCRYPT_STATUS_CONCAT_INNER_(a, b) a##b
#define SMCRYPT_STATUS_CONCAT_(a, b) SMCRYPT_STATUS_CONCAT_INNER_(a, b)

// SMCRYPT_RETURN_IF_ERROR(expr) returns the status of `expr` when it is not OK.
#define SMCRYPT_RETURN_IF_ERROR(expr)                   \
  do {                                                  \
    const ::absl::Status smcrypt_status_ = (expr);      \
    if (!smcrypt_status_.ok()) return smcrypt_status_;  \
  } while (0)

// SMCRYPT_ASSIGN_OR_RETURN(lhs, expr) evaluates the StatusOr `expr`; on error it
// returns its status, otherwise it moves the value into `lhs` (which may declare).
#define SMCRYPT_ASSIGN_OR_RETURN(lhs, expr) \
  SMCRYPT_ASSIGN_OR_RETURN_IMPL_(SMCRYPT_STATUS_CONCAT_(smcrypt_statusor_, __LINE__), lhs, expr)
#define SMCRYPT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();       \
  lhs = std::move(tmp).value()

#endif  // SMCRYPT_CRYPTO_COMMON_STATUS_MACROS_H_
