// status_matchers.h — IsOk() and StatusIs() for GoogleTest; Abseil 20220623 has none.
#ifndef SMCRYPT_TESTS_TESTING_STATUS_MATCHERS_H_
#define SMCRYPT_TESTS_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace smcrypt::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status is " << s;
  return s.ok();
}

// StatusIs(code) or StatusIs(code, message_matcher).
MATCHER_P(StatusIs, code, "has code " + std::string(absl::StatusCodeToString(code))) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code;
}
MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + std::string(absl::StatusCodeToString(code))) {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status is " << s;
  return s.code() == code &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()),
                                       result_listener);
}

// ASSERT_OK_AND_ASSIGN(lhs, expr): asserts `expr` is OK and moves its value into lhs.
#define SMCRYPT_TESTING_CONCAT_INNER_(a, b) a##b
#define SMCRYPT_TESTING_CONCAT_(a, b) SMCRYPT_TESTING_CONCAT_INNER_(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(SMCRYPT_TESTING_CONCAT_(statusor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  ASSERT_TRUE(tmp.ok()) << tmp.status();           \
  lhs = std::move(tmp).value()

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::smcrypt::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::smcrypt::testing::IsOk())

}  // namespace smcrypt::testing

#endif  // SMCRYPT_TESTS_TESTING_STATUS_MATCHERS_H_
