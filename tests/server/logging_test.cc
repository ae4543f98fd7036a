// logging_test.cc — server/engine/logging.h: the text and JSON line formats, every byte
// of a message escaped so that a line stays one line (and valid JSON), and the flag
// parsers (label unit).
#include "server/engine/logging.h"

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace smcrypt::server {
namespace {

using ::testing::HasSubstr;

const absl::Time kAt = absl::FromUnixMillis(1796470496789);  // 2026-12-05T11:34:56.789Z

TEST(LoggingTest, TextLineIsTimeLevelMessageAndFields) {
  EXPECT_EQ(FormatLogLine(LogFormat::kText, kAt, LogSeverity::kWarning, "disk full", {}),
            "2026-12-05T11:34:56.789Z W disk full\n");
  EXPECT_EQ(FormatLogLine(LogFormat::kText, kAt, LogSeverity::kInfo, "listening",
                          {{"port", "50051"}, {"transport", "TLS"}}),
            "2026-12-05T11:34:56.789Z I listening port=50051 transport=TLS\n");
  // A control character cannot start a forged line.
  EXPECT_EQ(FormatLogLine(LogFormat::kText, kAt, LogSeverity::kError, "a\nb\x7f", {}),
            "2026-12-05T11:34:56.789Z E a\\x0ab\\x7f\n");
}

TEST(LoggingTest, JsonLineHasTsLevelMsgAndFields) {
  const std::string line = FormatLogLine(LogFormat::kJson, kAt, LogSeverity::kError,
                                         "reload failed", {{"certificate", "server"}});
  EXPECT_EQ(line,
            "{\"ts\":\"2026-12-05T11:34:56.789Z\",\"level\":\"error\",\"msg\":\"reload "
            "failed\",\"certificate\":\"server\"}\n");
  for (auto [severity, name] : {std::pair{LogSeverity::kInfo, "info"},
                                {LogSeverity::kWarning, "warning"},
                                {LogSeverity::kError, "error"}}) {
    const nlohmann::json j = nlohmann::json::parse(
        FormatLogLine(LogFormat::kJson, kAt, severity, "m", {}));
    EXPECT_EQ(j["level"], name);
  }
}

// Integer fields are JSON numbers (text: the same digits).
TEST(LoggingTest, IntegerFieldsAreJsonNumbers) {
  const std::string line = FormatLogLine(LogFormat::kJson, kAt, LogSeverity::kInfo, "listening",
                                         {{"port", 50051}, {"transport", "TLS"}});
  EXPECT_EQ(line,
            "{\"ts\":\"2026-12-05T11:34:56.789Z\",\"level\":\"info\",\"msg\":\"listening\","
            "\"port\":50051,\"transport\":\"TLS\"}\n");
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_TRUE(j["port"].is_number_integer());
  EXPECT_EQ(j["port"], 50051);
  EXPECT_EQ(nlohmann::json::parse(FormatLogLine(LogFormat::kJson, kAt, LogSeverity::kInfo, "m",
                                                {{"n", int64_t{-7}}}))["n"],
            -7);
  EXPECT_EQ(FormatLogLine(LogFormat::kText, kAt, LogSeverity::kInfo, "listening",
                          {{"port", 50051}}),
            "2026-12-05T11:34:56.789Z I listening port=50051\n");
}

TEST(LoggingTest, DurationsHaveUnitsZeroIncluded) {
  EXPECT_EQ(FormatLogDuration(absl::ZeroDuration()), "0s");
  EXPECT_EQ(FormatLogDuration(absl::Milliseconds(200)), "200ms");
  EXPECT_EQ(FormatLogDuration(absl::Seconds(90)), "1m30s");
}

// Every byte value, alone and inside text, in the message, a key and a value: the line is
// one line of valid JSON whose strings give the input back (bytes that are not UTF-8 as
// U+FFFD).
TEST(LoggingTest, JsonEscapesEveryByte) {
  for (int b = 0; b < 256; ++b) {
    const std::string byte(1, static_cast<char>(b));
    const std::string msg = "x" + byte + "y";
    const std::string line =
        FormatLogLine(LogFormat::kJson, kAt, LogSeverity::kInfo, msg, {{"k", byte}});
    ASSERT_EQ(line.find('\n'), line.size() - 1) << b;
    for (char c : line.substr(0, line.size() - 1)) {
      ASSERT_GE(static_cast<unsigned char>(c), 0x20) << b;
      ASSERT_LT(static_cast<unsigned char>(c), 0x7f) << b;
    }
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << b << ": " << line;
    const std::string expect_byte = b < 0x80 ? byte : "\xef\xbf\xbd";
    EXPECT_EQ(j["msg"], "x" + expect_byte + "y") << b;
    EXPECT_EQ(j["k"], expect_byte) << b;
  }
  // Valid UTF-8 comes back as it was; quotes and backslashes are escaped.
  const std::string text = "\xe5\xaf\x86\xe9\x92\xa5 \"q\" \\ \xf0\x9f\x94\x91";
  const nlohmann::json j =
      nlohmann::json::parse(FormatLogLine(LogFormat::kJson, kAt, LogSeverity::kInfo, text, {}));
  EXPECT_EQ(j["msg"], text);
}

TEST(LoggingTest, FlagValuesParseAndBadOnesSayWhatIsAccepted) {
  EXPECT_EQ(*ParseLogLevel("info"), LogSeverity::kInfo);
  EXPECT_EQ(*ParseLogLevel("warning"), LogSeverity::kWarning);
  EXPECT_EQ(*ParseLogLevel("error"), LogSeverity::kError);
  EXPECT_EQ(*ParseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
  for (const char* bad : {"", "INFO", "debug", "warn"}) {
    absl::StatusOr<LogSeverity> s = ParseLogLevel(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(s.status().message()),
                HasSubstr("--log_level must be info, warning or error, got '"));
  }
  absl::StatusOr<LogFormat> f = ParseLogFormat("logfmt");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "--log_format must be text or json, got 'logfmt'");
}

}  // namespace
}  // namespace smcrypt::server
