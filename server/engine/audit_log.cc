#include "server/engine/audit_log.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/engine/error_reason.h"
#include "server/engine/logging.h"

namespace smcrypt::server {

namespace {

// Client-supplied strings are cut to this many bytes (at a UTF-8 boundary) in a line.
constexpr size_t kMaxFieldSize = 256;

absl::string_view Cut(absl::string_view s) {
  if (s.size() <= kMaxFieldSize) return s;
  size_t end = kMaxFieldSize;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

// AppendString appends `s` as a JSON string exactly as nlohmann::json's dump with
// ensure_ascii and the replace error handler writes it: ASCII only, control characters
// and every non-ASCII character escaped (\uXXXX), bytes that are not UTF-8 replaced by
// U+FFFD, so a line is one line and a log reader cannot be fed terminal escapes. Strings
// of printable ASCII without '"' or '\\' (every line's usual content) are copied as they
// are; any other goes through nlohmann::json.
void AppendString(std::string* out, absl::string_view s) {
  for (const char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      out->append(nlohmann::json(std::string(s)).dump(
          -1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace));
      return;
    }
  }
  out->push_back('"');
  out->append(s.data(), s.size());
  out->push_back('"');
}

// AppendTime appends `now` as "2026-11-30T02:00:00.123Z" (UTC, milliseconds); the text
// up to the second is kept per thread and made again when the second changes.
void AppendTime(std::string* out, absl::Time now) {
  thread_local int64_t cached_second = -1;
  thread_local char cached[24];
  const int64_t ms = absl::ToUnixMillis(now);
  const int64_t second = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  if (second != cached_second) {
    const std::string text = absl::FormatTime("%Y-%m-%dT%H:%M:%S", absl::FromUnixSeconds(second),
                                              absl::UTCTimeZone());
    std::snprintf(cached, sizeof(cached), "%s", text.c_str());
    cached_second = second;
  }
  char frac[8];
  std::snprintf(frac, sizeof(frac), ".%03dZ", static_cast<int>(ms - second * 1000));
  absl::StrAppend(out, cached, frac);
}

int OpenFile(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

}  // namespace

void AuditLog::AppendLine(std::string* out, const AuditRecord& r) {
  static const ClientIdentity kAnonymous;
  const ClientIdentity& client = r.client != nullptr ? *r.client : kAnonymous;
  absl::string_view source = "none";
  if (r.key.kind == AccessKey::Kind::kKeyId) source = "keyring";
  if (r.key.kind == AccessKey::Kind::kInline) source = "inline";
  // The JSON is written here, not built as a nlohmann::json object: a line is formatted
  // on every audited call, and its fields are known. audit_writer_test checks that a line
  // is what nlohmann::json writes of it.
  std::string& line = *out;
  line.append("{\"time\":\"");
  AppendTime(&line, absl::Now());
  line.append("\",\"type\":\"audit\",\"client\":");
  AppendString(&line, Cut(client.Name()));
  line.append(client.authenticated ? ",\"authenticated\":true,\"peer\":"
                                   : ",\"authenticated\":false,\"peer\":");
  AppendString(&line, Cut(client.peer));
  line.append(",\"method\":");
  AppendString(&line, Cut(r.method));
  line.append(",\"operation\":");
  AppendString(&line, AccessOperationName(r.operation));
  line.append(",\"algorithm\":");
  AppendString(&line, Cut(r.algorithm));
  line.append(",\"key_source\":");
  AppendString(&line, source);
  if (r.key.kind == AccessKey::Kind::kKeyId) {
    line.append(",\"key_id\":");
    AppendString(&line, Cut(r.key.key_id));
    if (r.key_version != 0) absl::StrAppend(&line, ",\"key_version\":", r.key_version);
    if (r.key_versions_tried.size() > 1) {
      line.append(",\"key_versions_tried\":[");
      for (size_t i = 0; i < r.key_versions_tried.size(); ++i) {
        absl::StrAppend(&line, i == 0 ? "" : ",", r.key_versions_tried[i]);
      }
      line.push_back(']');
    }
  }
  line.append(",\"status\":");
  AppendString(&line, absl::StatusCodeToString(r.code));
  line.append("}\n");
}

std::string AuditLog::FormatLine(const AuditRecord& record) {
  std::string line;
  line.reserve(320);
  AppendLine(&line, record);
  return line;
}

// ---- The queue and its writer -----------------------------------------------------------

// Writer is the queue and the thread that drains it (audit_log.h, "Writing" and
// "Failure"). The queue is two buffers of whole lines: calls append to pending_; the
// writer takes it whole (swapping it with out_, whose memory pending_ then reuses) and
// writes out_ without mu_. So a line costs no allocation once the buffers have grown,
// and no memory moves between threads. The thread alone writes, reopens and closes fd_
// and reads out_.
class AuditLog::Writer {
 public:
  Writer(std::string path, int fd, const AuditLogOptions& o)
      : path_(std::move(path)),
        closed_(o.failure == AuditFailure::kClosed),
        max_lines_(o.max_queue_lines),
        max_bytes_(o.max_queue_bytes),
        fd_(fd) {
    // To stderr that is not a regular file (a pipe: a container's log), whole lines of at
    // most PIPE_BUF bytes per write (one atomic pipe write), so a write never interleaves
    // with another writer's line; a longer line goes alone.
    struct stat st {};
    if (path_.empty() && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) byte_cap_ = PIPE_BUF;
    thread_ = std::thread([this] { Run(); });
  }

  ~Writer() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
      cv_.Signal();
    }
    thread_.join();
    if (!path_.empty() && fd_ >= 0) ::close(fd_);
  }

  absl::Status Admit() {
    if (!closed_) return absl::OkStatus();
    absl::MutexLock lock(&mu_);
    if (!healthy_ || QueuedLines() + reserved_lines_ >= max_lines_ ||
        QueuedBytes() + reserved_bytes_ + kMaxLineBytes > max_bytes_) {
      return WithReason(absl::UnavailableError(
                            "the audit log cannot take a line (--audit_failure=closed): the "
                            "call was refused before its key was used"),
                        reason::kAuditUnavailable);
    }
    ++reserved_lines_;
    reserved_bytes_ += kMaxLineBytes;
    return absl::OkStatus();
  }

  void Push(absl::string_view line, bool admitted) {
    bool now_unhealthy = false;
    {
      absl::MutexLock lock(&mu_);
      if (admitted && closed_) {
        --reserved_lines_;
        reserved_bytes_ -= kMaxLineBytes;
      } else if (QueuedLines() + reserved_lines_ >= max_lines_ ||
                 QueuedBytes() + reserved_bytes_ + line.size() > max_bytes_) {
        ++dropped_;
        now_unhealthy = healthy_;
        healthy_ = false;
        line = {};
      }
      if (!line.empty()) {
        pending_.append(line.data(), line.size());
        ++pending_lines_;
        ++pushed_;
        if (idle_) cv_.Signal();
      }
    }
    if (now_unhealthy) LogError("audit log: the queue is full; lines are dropped");
  }

  void Reopen() {
    if (path_.empty()) return;
    absl::MutexLock lock(&mu_);
    reopen_ = true;
    cv_.Signal();
  }

  bool Flush(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    absl::MutexLock lock(&mu_);
    const uint64_t target = pushed_;
    while (popped_ < target) {
      if (done_cv_.WaitWithDeadline(&mu_, deadline)) return popped_ >= target;
    }
    return true;
  }

  AuditStats stats() {
    absl::MutexLock lock(&mu_);
    AuditStats s;
    s.lines_written = written_;
    s.lines_dropped = dropped_;
    s.write_errors = errors_;
    s.queue_lines = QueuedLines();
    s.queue_bytes = QueuedBytes();
    s.healthy = healthy_;
    return s;
  }

 private:
  size_t QueuedLines() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pending_lines_ + out_lines_;
  }
  size_t QueuedBytes() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pending_.size() + out_bytes_;
  }

  // Run: reopen when asked, retry a failed open, else write the queue in batches; at
  // stop, write what is queued (dropping it after a failure) and return.
  void Run() ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    bool waited = false;  // the batch delay has passed for the lines queued
    for (;;) {
      if (reopen_) {
        reopen_ = false;
        OpenAgain();
      } else if (fd_ < 0) {
        if (!closed_ || stop_) DropQueued(absl::StrCat("cannot open ", path_));
        if (stop_) return;
        cv_.WaitWithTimeout(&mu_, kRetryInterval);
        if (!stop_ && !reopen_) OpenAgain();
      } else if (QueuedLines() == 0) {
        if (stop_) return;
        idle_ = true;
        cv_.Wait(&mu_);
        idle_ = false;
      } else if (!waited && !stop_ && out_lines_ == 0 && pending_lines_ < kBatchLines) {
        // Lines that come while it waits kBatchDelay (not woken by them) join the batch,
        // so the writer writes at most about 1/kBatchDelay times a second, however many
        // calls write lines.
        cv_.WaitWithTimeout(&mu_, kBatchDelay);
        waited = true;
      } else {
        waited = false;
        if (out_lines_ == 0) TakePending();
        WriteOut();
      }
    }
  }

  // TakePending makes the pending lines the ones to write (out_ is empty).
  void TakePending() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    out_.clear();
    if (out_.capacity() > kKeepBytes) std::string().swap(out_);
    out_.swap(pending_);
    out_off_ = 0;
    out_lines_ = pending_lines_;
    out_bytes_ = out_.size();
    pending_lines_ = 0;
  }

  // WriteOut writes what is left of out_ with one write(2), mu_ released meanwhile.
  void WriteOut() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    size_t len = out_.size() - out_off_;
    if (len > byte_cap_) {
      // Whole lines up to byte_cap_, or the first line alone when it is longer.
      size_t end = out_.rfind('\n', out_off_ + byte_cap_ - 1);
      if (end == std::string::npos || end < out_off_) end = out_.find('\n', out_off_);
      len = end + 1 - out_off_;
    }
    mu_.Unlock();
    ssize_t n = ::write(fd_, out_.data() + out_off_, len);
    const int err = n == 0 ? EIO : errno;  // 0 bytes of a non-empty write: no progress
    if (n == 0) n = -1;
    mu_.Lock();
    if (n < 0 && err == EINTR) return;
    if (n > 0) {
      const char* p = out_.data() + out_off_;
      const size_t lines = static_cast<size_t>(std::count(p, p + n, '\n'));
      out_off_ += static_cast<size_t>(n);
      out_bytes_ -= static_cast<size_t>(n);
      Popped(lines, /*written=*/true);
      if (!healthy_) {
        healthy_ = true;
        Unlocked([] { LogInfo("audit log: writing again"); });
      }
      return;
    }
    ++errors_;
    if (healthy_) {
      healthy_ = false;
      const std::string msg = absl::StrCat(
          "audit log: write failed: ", std::strerror(err),
          closed_ ? "; calls that need an audit line are refused (AUDIT_UNAVAILABLE)"
                  : "; lines are dropped (--audit_failure=open)",
          " until a write succeeds");
      Unlocked([&msg] { LogError(msg); });
    }
    if (stop_) {
      DropQueued(absl::StrCat("write failed: ", std::strerror(err)));
      return;
    }
    if (!closed_) {
      DropOut();
      return;
    }
    cv_.WaitWithTimeout(&mu_, kRetryInterval);  // a failed write is retried
  }

  void Popped(size_t lines, bool written) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    out_lines_ -= lines;
    (written ? written_ : dropped_) += lines;
    popped_ += lines;
    if (lines > 0) done_cv_.SignalAll();
  }

  void DropOut() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Popped(out_lines_, /*written=*/false);
    out_.clear();
    out_off_ = 0;
    out_bytes_ = 0;
  }

  // DropQueued drops every queued line (counted in dropped_); at stop, one error line
  // names how many and `why` they could not be written.
  void DropQueued(absl::string_view why) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t n = QueuedLines();
    DropOut();
    TakePending();
    DropOut();
    if (n > 0 && stop_) {
      const std::string msg = absl::StrCat("audit log: ", n, n == 1 ? " line" : " lines",
                                           " dropped at shutdown (", why, ")");
      Unlocked([&msg] { LogError(msg); });
    }
  }

  // OpenAgain opens path_ again in place of fd_ (closed either way, so that lines never
  // go to a file logrotate has renamed); on failure fd_ is -1 and the open is retried.
  void OpenAgain() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    mu_.Unlock();
    const int fd = OpenFile(path_);
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
    if (fd >= 0) {
      LogInfo(absl::StrCat("audit log: reopened ", path_));
    } else if (last_open_ok_) {
      LogError(absl::StrCat("audit log: cannot reopen ", path_, ": ", std::strerror(err),
                            "; retrying every ", absl::FormatDuration(kRetryInterval)));
    }
    last_open_ok_ = fd >= 0;
    mu_.Lock();
    if (fd < 0) ++errors_;
    healthy_ = fd >= 0;
  }

  template <typename Fn>
  void Unlocked(const Fn& fn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    mu_.Unlock();
    fn();
    mu_.Lock();
  }

  // kBatchLines: pending lines that are written without the batch delay. kKeepBytes: an
  // empty buffer larger than this (after a burst) is freed.
  static constexpr size_t kBatchLines = 1024;
  static constexpr size_t kKeepBytes = size_t{1} << 20;

  const std::string path_;  // "": stderr
  const bool closed_;
  const size_t max_lines_;
  const size_t max_bytes_;
  size_t byte_cap_ = ~size_t{0};  // bytes per write at most (whole lines)
  int fd_;                        // the writer thread's
  bool last_open_ok_ = true;      // the writer thread's
  absl::Mutex mu_;
  absl::CondVar cv_;       // the writer waits for lines, a reopen or the stop
  absl::CondVar done_cv_;  // Flush waits for lines to leave the queue
  std::string pending_ ABSL_GUARDED_BY(mu_);  // whole lines, queued by calls
  size_t pending_lines_ ABSL_GUARDED_BY(mu_) = 0;
  // out_: the lines being written (swapped in by the writer under mu_, then its own);
  // out_off_ bytes of it are written; out_lines_ and out_bytes_ are what is left.
  std::string out_;
  size_t out_off_ = 0;
  size_t out_lines_ ABSL_GUARDED_BY(mu_) = 0;
  size_t out_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  size_t reserved_lines_ ABSL_GUARDED_BY(mu_) = 0;  // admitted, not yet queued
  size_t reserved_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t pushed_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t popped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t written_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  bool healthy_ ABSL_GUARDED_BY(mu_) = true;
  bool reopen_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool idle_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

absl::StatusOr<AuditFailure> ParseAuditFailure(absl::string_view s) {
  if (s == "closed") return AuditFailure::kClosed;
  if (s == "open") return AuditFailure::kOpen;
  return absl::InvalidArgumentError(
      absl::StrCat("--audit_failure: expected closed or open, got '", s, "'"));
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const AuditLogOptions& o) {
  if (o.path == "none") return std::unique_ptr<AuditLog>(new AuditLog(o.failure, nullptr));
  if (o.max_queue_lines < 1) {
    return absl::InvalidArgumentError("--audit_queue_lines: must be at least 1");
  }
  if (o.max_queue_bytes < kMaxLineBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--audit_queue_bytes: must be at least ", kMaxLineBytes, ", got ", o.max_queue_bytes));
  }
  int fd = STDERR_FILENO;
  if (!o.path.empty()) {
    fd = OpenFile(o.path);
    if (fd < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--audit_log: cannot open ", o.path, ": ", std::strerror(errno)));
    }
  }
  return std::unique_ptr<AuditLog>(
      new AuditLog(o.failure, std::make_unique<Writer>(o.path, fd, o)));
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path) {
  AuditLogOptions o;
  o.path = path;
  return Open(o);
}

AuditLog::AuditLog(AuditFailure failure, std::unique_ptr<Writer> writer)
    : failure_(failure), writer_(std::move(writer)) {}

AuditLog::~AuditLog() = default;

absl::Status AuditLog::Admit() const {
  return writer_ != nullptr ? writer_->Admit() : absl::OkStatus();
}

void AuditLog::Write(const AuditRecord& record, bool admitted) const {
  if (writer_ == nullptr) return;
  // Formatted into this thread's buffer, then copied into the queue: no allocation per
  // line once the buffer has grown.
  thread_local std::string line;
  line.clear();
  AppendLine(&line, record);
  writer_->Push(line, admitted);
}

void AuditLog::Reopen() const {
  if (writer_ != nullptr) writer_->Reopen();
}

bool AuditLog::Flush(absl::Duration timeout) const {
  return writer_ == nullptr || writer_->Flush(timeout);
}

AuditStats AuditLog::stats() const {
  return writer_ != nullptr ? writer_->stats() : AuditStats();
}

}  // namespace smcrypt::server
