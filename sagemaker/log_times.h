// When cairnd first saw each byte of a SageMaker job's log, so that the
// log can be served as CloudWatch log events with timestamps
// (cloudwatch_logs.h). A job's stdout and stderr go straight to its log
// file, which keeps no times; as the job runner polls a running job
// (sagemaker/training_run.h), a LogTimesWriter notes how far the log had
// grown at what time, the way the CloudWatch agent stamps a line when it
// reads it. A line's time is that of the first note that covers its last
// byte, so it is late by at most the gap between notes.
//
// The notes live beside the log, in LogTimesPath(log): 16-byte records,
// each a little-endian int64 end offset (the log's size) then an int64
// time in Unix milliseconds, both non-decreasing. Readers treat the file
// as untrusted: a record past the log's size, or going backwards, is
// clamped, and a torn last record is ignored; a damaged file gives wrong
// times, never a read outside the log.
#ifndef CAIRN_SAGEMAKER_LOG_TIMES_H_
#define CAIRN_SAGEMAKER_LOG_TIMES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/job_files.h"

namespace cairn::sagemaker {

// "<log_path>.times".
std::string LogTimesPath(const std::string& log_path);

// Thread-compatible.
class LogTimesWriter {
 public:
  // Notes at most one record per `min_gap` unless forced.
  explicit LogTimesWriter(std::string log_path,
                          absl::Duration min_gap = absl::Milliseconds(200))
      : log_path_(std::move(log_path)), min_gap_(min_gap) {}

  // Appends {log size, now} when the log grew since the last record (of
  // this writer or, for a new attempt, of the file) and `min_gap` has
  // passed since it, or `force` (a job's last poll). Times never go
  // backwards. The file is opened without following a link
  // (jobs::OpenJobFile); Internal or FailedPrecondition when it cannot be
  // written, once: the writer then stops noting (the caller logs it; only
  // the times suffer, and a finished log is covered by its mtime).
  absl::Status Note(absl::Time now, bool force = false);

 private:
  // Loads the last record of an existing file, once.
  void LoadLast();

  const std::string log_path_;
  const absl::Duration min_gap_;
  bool loaded_ = false;
  bool failed_ = false;
  int64_t last_end_ = 0;
  int64_t last_ms_ = 0;
  absl::Time last_note_ = absl::InfinitePast();
};

// One record: bytes below `end` were seen by `ms`.
struct LogTimeRecord {
  int64_t end = 0;
  int64_t ms = 0;
};

// The times of one log, as read at Open. Thread-compatible.
class LogTimes {
 public:
  // Reads the notes of the log at `log_path`, whose size is `log_size`.
  // With `finished` (the job is over: no note will come), bytes past the
  // last note get `mtime_ms` (at least the last note's time), so the whole
  // log is covered. A missing notes file is no error (nothing covered, or
  // all at mtime_ms when finished); FailedPrecondition if it is a link or
  // not a regular file.
  static absl::StatusOr<LogTimes> Open(const std::string& log_path,
                                       int64_t log_size, bool finished,
                                       int64_t mtime_ms);

  // The end of the covered bytes: every byte below it has a time.
  int64_t covered_end() const { return covered_end_; }
  // Time of the first and last record (0 when none).
  int64_t first_ms() const;
  int64_t last_ms() const;

  // The first offset whose byte was seen at or after `ms` (covered_end()
  // if none).
  absl::StatusOr<int64_t> OffsetAt(int64_t ms) const;

  // The records that cover bytes [lo, hi), in memory, for TimeOf.
  absl::StatusOr<std::vector<LogTimeRecord>> Slice(int64_t lo,
                                                   int64_t hi) const;

 private:
  LogTimes(std::shared_ptr<jobs::ScopedFd> fd, int64_t count, int64_t size)
      : fd_(std::move(fd)), count_(count), log_size_(size) {}
  // Records in the file, and the virtual tail record if any.
  int64_t total() const { return count_ + (tail_.end > 0 ? 1 : 0); }
  // Record `i` (the tail's when i >= count_), clamped to the log.
  absl::StatusOr<LogTimeRecord> Record(int64_t i) const;
  LogTimeRecord Clamped(LogTimeRecord r) const;
  // The index of the first record for which `pred` holds, pred being
  // false up to some record and true from it on (total() if none).
  template <typename Pred>
  absl::StatusOr<int64_t> FirstWhere(Pred pred) const;
  // The index of the first record whose end is above `offset` (count_ if
  // none).
  absl::StatusOr<int64_t> FirstEndingAbove(int64_t offset) const;

  std::shared_ptr<jobs::ScopedFd> fd_;  // Null when there is no file.
  int64_t count_ = 0;                   // Whole records in the file.
  int64_t log_size_ = 0;
  // The virtual last record of a finished log, or end 0.
  LogTimeRecord tail_;
  int64_t covered_end_ = 0;
};

// The time of byte `offset` among `slice` (LogTimes::Slice): that of the
// first record ending above it; `fallback` if none does.
int64_t TimeOf(const std::vector<LogTimeRecord>& slice, int64_t offset,
               int64_t fallback);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_LOG_TIMES_H_
