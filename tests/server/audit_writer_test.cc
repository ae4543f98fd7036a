// audit_writer_test — the audit log's lines and its queue and writer thread
// (server/engine/audit_log.h, "Writing" and "Failure"), without gRPC: a line is exactly
// what nlohmann::json writes of its fields; lines written in order and all of them at
// shutdown, the queue's bounds in lines and bytes, /dev/full under --audit_failure
// closed and open, reopen after a rename (logrotate without copytruncate) and a path that
// cannot be opened on reopen.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/audit_log.h"
#include "server/engine/error_reason.h"
#include "server/engine/logging.h"
#include "tests/testing/status_matchers.h"

namespace smcrypt::server {
namespace {

namespace fs = std::filesystem;
using ::smcrypt::testing::IsOk;
using ::smcrypt::testing::StatusIs;
using ::testing::HasSubstr;

// Record: a line of method `method` for key_id `key` (the views are static strings).
AuditRecord Record(absl::string_view key) {
  static const ClientIdentity kClient;
  AuditRecord r;
  r.client = &kClient;
  r.method = "Encrypt";
  r.operation = AccessOperation::kEncrypt;
  r.algorithm = "SM4-GCM";
  r.key.kind = AccessKey::Kind::kKeyId;
  r.key.key_id = key;
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& path) {
  return absl::StrSplit(ReadFile(path), '\n', absl::SkipEmpty());
}

// WaitFor polls `done` every 10 ms for up to 10 s (the retry interval is 1 s).
bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

class AuditWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetMinLogSeverity(LogSeverity::kError);
    dir_ = fs::temp_directory_path() /
           absl::StrCat("smcrypt_audit_writer_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const char* name) const { return (dir_ / name).string(); }

  std::unique_ptr<AuditLog> Open(const std::string& path, AuditFailure failure,
                                 size_t lines = 65536, size_t bytes = size_t{16} << 20) {
    AuditLogOptions o;
    o.path = path;
    o.failure = failure;
    o.max_queue_lines = lines;
    o.max_queue_bytes = bytes;
    absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open(o);
    EXPECT_THAT(log.status(), IsOk());
    return log.ok() ? *std::move(log) : nullptr;
  }

  fs::path dir_;
};

// FormatLine writes its JSON by hand: for strings of every kind (plain, quotes and
// backslashes, control characters, UTF-8, bytes that are not UTF-8, long ones cut at a
// UTF-8 boundary) a line is what nlohmann::json writes of the same fields, in the same
// order (ensure_ascii, invalid UTF-8 replaced), so parsing it and writing it again gives
// the same bytes.
TEST(AuditLineTest, ALineIsWhatNlohmannJsonWritesOfIt) {
  std::vector<std::string> strings = {"", "signing", "a\"b\\c/d", "tab\there\n", "\x7f",
                                      "\x1b[31mred", "caf\xc3\xa9 \xe5\xaf\x86\xe9\x92\xa5 \xf0\x9f\x94\x91",
                                      "\xff\xfe bad", "\xc3", std::string(300, 'k'),
                                      std::string(255, 'k') + "\xe5\xaf\x86"};
  uint32_t seed = 12345;
  for (int i = 0; i < 200; ++i) {
    std::string random(static_cast<size_t>(seed % 40), '\0');
    for (char& c : random) {
      seed = seed * 1103515245 + 12345;
      c = static_cast<char>(seed >> 16);
    }
    strings.push_back(random);
  }
  for (size_t i = 0; i < strings.size(); ++i) {
    ClientIdentity client;
    client.authenticated = i % 2 == 0;
    client.sans = {strings[i]};
    client.peer = strings[(i + 1) % strings.size()];
    AuditRecord r;
    r.client = &client;
    r.method = "Decrypt";
    r.operation = AccessOperation::kDecrypt;
    r.algorithm = strings[(i + 2) % strings.size()];
    r.key.kind = i % 3 == 0 ? AccessKey::Kind::kInline : AccessKey::Kind::kKeyId;
    r.key.key_id = strings[(i + 3) % strings.size()];
    r.key_version = static_cast<uint32_t>(i % 4);
    r.code = absl::StatusCode::kInvalidArgument;
    const std::string line = AuditLog::FormatLine(r);
    ASSERT_EQ(line.back(), '\n');
    ASSERT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
    const nlohmann::ordered_json j =
        nlohmann::ordered_json::parse(line.substr(0, line.size() - 1), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    EXPECT_EQ(j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n", line);
    for (const char c : line) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << line;
    EXPECT_LE(line.size(), AuditLog::kMaxLineBytes);
  }
  // The longest line: every string field cut to 256 bytes of 6-character escapes.
  const std::string worst(300, '\x01');
  ClientIdentity client;
  client.authenticated = true;
  client.sans = {worst};
  client.peer = worst;
  AuditRecord longest;
  longest.client = &client;
  longest.method = worst;
  longest.algorithm = worst;
  longest.key.kind = AccessKey::Kind::kKeyId;
  longest.key.key_id = worst;
  longest.key_version = UINT32_MAX;
  longest.code = absl::StatusCode::kFailedPrecondition;
  EXPECT_LE(AuditLog::FormatLine(longest).size(), AuditLog::kMaxLineBytes);
  EXPECT_GT(AuditLog::FormatLine(longest).size(), 5u * 256 * 6);
  AuditRecord r = Record("k");
  EXPECT_THAT(AuditLog::FormatLine(r),
              ::testing::MatchesRegex("\\{\"time\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:"
                                      "[0-9]{2}\\.[0-9]{3}Z\",\"type\":\"audit\".*\n"));
}

// Lines from many threads all reach the file, whole and in each thread's order, and the
// destructor writes what is still queued.
TEST_F(AuditWriterTest, EveryLineIsWrittenWholeAndTheQueueIsDrainedAtShutdown) {
  const std::string path = Path("audit.log");
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  {
    std::unique_ptr<AuditLog> log = Open(path, AuditFailure::kOpen);
    std::vector<std::thread> threads;
    std::vector<std::string> keys;
    for (int t = 0; t < kThreads; ++t) keys.push_back(absl::StrCat("t", t));
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          AuditRecord r = Record(keys[t]);
          r.key_version = static_cast<uint32_t>(i + 1);
          log->Write(r);
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }  // the destructor drains the queue
  const std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  std::vector<uint32_t> next(kThreads, 1);
  for (const std::string& line : lines) {
    ASSERT_EQ(line.front(), '{');
    ASSERT_EQ(line.back(), '}');
    const size_t at = line.find("\"key_id\":\"t");
    ASSERT_NE(at, std::string::npos) << line;
    const int t = line[at + 11] - '0';
    EXPECT_THAT(line, HasSubstr(absl::StrCat("\"key_version\":", next[t], ",")));
    ++next[t];
  }
}

// A writer blocked on a full pipe: the queue holds at most its bound of lines (or bytes);
// under kOpen further lines are dropped and counted and the log is unhealthy; under
// kClosed Admit refuses once the lines admitted fill the queue. Once the pipe is read,
// everything queued is written and the log is healthy again.
void FillPipe(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  const std::string chunk(4096, 'x');
  while (write(fd, chunk.data(), chunk.size()) > 0) {
  }
  fcntl(fd, F_SETFL, flags);
}

// Drain reads `fd` until `want` audit lines ('{' at a line start after the filler) came.
size_t ReadLines(int fd, size_t want) {
  size_t lines = 0;
  char buf[65536];
  while (lines < want) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) lines += buf[i] == '\n';
  }
  return lines;
}

TEST_F(AuditWriterTest, TheQueueIsBoundedInLinesAndBytes) {
  for (const AuditFailure failure : {AuditFailure::kOpen, AuditFailure::kClosed}) {
    SCOPED_TRACE(failure == AuditFailure::kOpen ? "open" : "closed");
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    FillPipe(p[1]);
    constexpr size_t kLines = 8;
    std::unique_ptr<AuditLog> log =
        Open(absl::StrCat("/proc/self/fd/", p[1]), failure, kLines);
    // The first line is taken by the writer, which then blocks in writev on the full
    // pipe; the queue then fills up to its bound.
    size_t queued = 0;
    for (size_t i = 0; i < 4 * kLines; ++i) {
      const bool admitted = log->Admit().ok();
      if (failure == AuditFailure::kClosed && !admitted) {
        EXPECT_THAT(log->Admit(), StatusIs(absl::StatusCode::kUnavailable));
        EXPECT_EQ(ReasonOf(log->Admit()).reason, reason::kAuditUnavailable);
        break;
      }
      log->Write(Record("k"), admitted);
      ++queued;
    }
    const AuditStats s = log->stats();
    EXPECT_LE(s.queue_lines, kLines);
    if (failure == AuditFailure::kOpen) {
      EXPECT_EQ(queued, 4 * kLines);
      EXPECT_GE(s.lines_dropped, 4 * kLines - kLines);
      EXPECT_FALSE(s.healthy);
    } else {
      EXPECT_LE(queued, kLines) << "closed admits no more lines than the queue holds";
      EXPECT_EQ(s.lines_dropped, 0u);
      EXPECT_TRUE(s.healthy);
    }
    // Read the filler and the lines: everything queued is written.
    const uint64_t want = queued - s.lines_dropped;
    const size_t got = ReadLines(p[0], want);
    EXPECT_EQ(got, want);
    EXPECT_TRUE(log->Flush(absl::Seconds(10)));
    EXPECT_TRUE(WaitFor([&] { return log->stats().healthy; }));
    EXPECT_EQ(log->stats().lines_written, want);
    log.reset();
    close(p[0]);
    close(p[1]);
  }
  // The byte bound: one line's worth of room beyond kMaxLineBytes is refused by Admit.
  std::unique_ptr<AuditLog> log =
      Open(Path("bytes.log"), AuditFailure::kClosed, 65536, AuditLog::kMaxLineBytes);
  EXPECT_THAT(log->Admit(), IsOk());
  EXPECT_THAT(log->Admit(), StatusIs(absl::StatusCode::kUnavailable))
      << "a second line does not fit " << AuditLog::kMaxLineBytes << " bytes";
  log->Write(Record("k"), true);
  AuditLogOptions small;
  small.path = Path("small.log");
  small.max_queue_bytes = AuditLog::kMaxLineBytes - 1;
  EXPECT_THAT(AuditLog::Open(small).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--audit_queue_bytes")));
}

// /dev/full: every write fails with ENOSPC. Closed: the admitted line stays queued, the
// log turns unhealthy and Admit refuses with AUDIT_UNAVAILABLE. Open: Admit always
// succeeds and the lines are dropped and counted.
TEST_F(AuditWriterTest, DevFullRefusesUnderClosedAndDropsUnderOpen) {
  {
    std::unique_ptr<AuditLog> closed = Open("/dev/full", AuditFailure::kClosed);
    ASSERT_THAT(closed->Admit(), IsOk());
    closed->Write(Record("k"), true);
    ASSERT_TRUE(WaitFor([&] { return !closed->stats().healthy; }));
    const absl::Status s = closed->Admit();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit")));
    EXPECT_EQ(ReasonOf(s).reason, reason::kAuditUnavailable);
    const AuditStats st = closed->stats();
    EXPECT_GE(st.write_errors, 1u);
    EXPECT_EQ(st.queue_lines, 1u) << "the line is kept to be retried";
    EXPECT_EQ(st.lines_dropped, 0u);
    EXPECT_TRUE(WaitFor([&] { return closed->stats().write_errors >= 2; }))
        << "retried every " << AuditLog::kRetryInterval;
    // At shutdown the line that cannot be written is dropped, and one error line says so.
    ::testing::internal::CaptureStderr();
    closed.reset();
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_THAT(log, HasSubstr("audit log: 1 line dropped at shutdown (write failed: No space "
                               "left on device)"));
  }
  std::unique_ptr<AuditLog> open = Open("/dev/full", AuditFailure::kOpen);
  for (int i = 0; i < 100; ++i) {
    ASSERT_THAT(open->Admit(), IsOk());
    open->Write(Record("k"), true);
  }
  EXPECT_TRUE(open->Flush(absl::Seconds(10)));
  const AuditStats st = open->stats();
  EXPECT_EQ(st.lines_dropped, 100u);
  EXPECT_EQ(st.lines_written, 0u);
  EXPECT_GE(st.write_errors, 1u);
  EXPECT_FALSE(st.healthy);
  EXPECT_THAT(open->Admit(), IsOk());
}

// logrotate without copytruncate: rename, then Reopen; the next lines go to a new file
// created 0600, the earlier ones stay in the renamed one.
TEST_F(AuditWriterTest, ReopenAfterRenameWritesToANewFile) {
  const std::string path = Path("audit.log");
  const std::string rotated = Path("audit.log.1");
  std::unique_ptr<AuditLog> log = Open(path, AuditFailure::kClosed);
  ASSERT_THAT(log->Admit(), IsOk());
  log->Write(Record("before"), true);
  ASSERT_TRUE(log->Flush(absl::Seconds(10)));
  fs::rename(path, rotated);
  log->Reopen();
  ASSERT_TRUE(WaitFor([&] { return fs::exists(path); }));
  ASSERT_THAT(log->Admit(), IsOk());
  log->Write(Record("after"), true);
  ASSERT_TRUE(log->Flush(absl::Seconds(10)));
  EXPECT_THAT(ReadFile(rotated), HasSubstr("\"key_id\":\"before\""));
  EXPECT_THAT(ReadFile(rotated), ::testing::Not(HasSubstr("after")));
  EXPECT_THAT(ReadFile(path), HasSubstr("\"key_id\":\"after\""));
  EXPECT_EQ(Lines(path).size(), 1u);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(log->stats().healthy);
}

// A reopen that fails (the path is now a directory: EISDIR, as root too) leaves the log
// unhealthy: closed refuses, the lines wait; the open is retried, and once the path can
// be opened the waiting lines are written and Admit succeeds again.
TEST_F(AuditWriterTest, AnUnwritablePathOnReopenIsRetried) {
  const std::string path = Path("audit.log");
  std::unique_ptr<AuditLog> log = Open(path, AuditFailure::kClosed);
  fs::rename(path, Path("audit.log.1"));
  fs::create_directory(path);
  log->Reopen();
  ASSERT_TRUE(WaitFor([&] { return !log->stats().healthy; }));
  EXPECT_GE(log->stats().write_errors, 1u);
  EXPECT_THAT(log->Admit(), StatusIs(absl::StatusCode::kUnavailable));
  log->Write(Record("denied"));  // a line that needs no admission (a policy denial)
  EXPECT_EQ(log->stats().queue_lines, 1u);
  fs::remove(path);
  ASSERT_TRUE(WaitFor([&] { return log->stats().healthy; }));
  EXPECT_TRUE(log->Flush(absl::Seconds(10)));
  EXPECT_THAT(ReadFile(path), HasSubstr("\"key_id\":\"denied\""));
  EXPECT_THAT(log->Admit(), IsOk());
  log->Write(Record("k"), true);

  // Under kOpen the lines queued while the path cannot be opened are dropped.
  const std::string path2 = Path("open.log");
  std::unique_ptr<AuditLog> open = Open(path2, AuditFailure::kOpen);
  fs::remove(path2);
  fs::create_directory(path2);
  open->Reopen();
  ASSERT_TRUE(WaitFor([&] { return !open->stats().healthy; }));
  open->Write(Record("lost"), true);
  EXPECT_TRUE(open->Flush(absl::Seconds(10)));
  EXPECT_EQ(open->stats().lines_dropped, 1u);
}

}  // namespace
}  // namespace smcrypt::server
