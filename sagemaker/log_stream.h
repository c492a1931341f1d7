// A training job host's log file read as CloudWatch log events
// (cloudwatch_logs.h serves them). The file is untrusted bytes: an event
// is one line without its newline, and a line longer than kLogPieceBytes
// is cut into pieces, so no event exceeds 2 * kLogPieceBytes - 1 bytes
// (CloudWatch's limit is 256 KB). Where events begin (the boundaries) is
// decided by the bytes nearby alone, so reading forward from any
// boundary or backward from any offset cuts the same events:
//  - offset 0 and every offset after a '\n';
//  - every multiple of kLogPieceBytes whose preceding kLogPieceBytes
//    bytes hold no '\n' (only lines over kLogPieceBytes are cut).
// An event's position is its first byte's offset, its timestamp that of
// its last byte (log_times.h); only bytes with a time are read, so a
// running job's events appear as cairnd notes them, and a line still being
// written waits for its newline (or for the job's end). Empty lines are
// skipped. Messages are raw bytes (the caller makes them valid UTF-8).
#ifndef CAIRN_SAGEMAKER_LOG_STREAM_H_
#define CAIRN_SAGEMAKER_LOG_STREAM_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "jobs/job_files.h"
#include "sagemaker/log_times.h"

namespace cairn::sagemaker {

inline constexpr int64_t kLogPieceBytes = 128000;

// The boundaries p with base < p <= base + bytes.size() of a log whose
// bytes from offset `base` are `bytes` (and 0 when base is 0), ascending.
// Exact for p >= base + kLogPieceBytes, or everywhere when base is 0;
// below that a piece boundary may be missed (line starts never are).
std::vector<int64_t> LogBoundaries(absl::string_view bytes, int64_t base);

struct LogEvent {
  int64_t start = 0;  // Offset of its first byte.
  int64_t end = 0;    // Offset after it (after its newline).
  int64_t timestamp_ms = 0;
  std::string message;  // Without the newline.
};

struct LogReadLimits {
  int max_events = 10000;
  int64_t max_bytes = 1 << 20;  // Of messages; at least one event is read.
  int64_t start_ms = 0;         // Events before are left out.
  int64_t end_ms = std::numeric_limits<int64_t>::max();  // Exclusive.
};

struct LogPage {
  std::vector<LogEvent> events;  // In log order.
  // Forward: the boundary to go on from; backward: the first boundary
  // read (the events before it remain).
  int64_t next = 0;
  // Backward: the last boundary at or before the offset read back from
  // (where reading forward would go on).
  int64_t last_cut = 0;
  // Nothing more in this direction now: the covered end (or end_ms)
  // forward, the log's start (or start_ms) backward.
  bool done = false;
};

// Thread-compatible.
class LogStreamFile {
 public:
  // Opens the log at `log_path` without following a link and its times.
  // `finished`: the job is over (its log no longer grows). A missing log
  // is an empty one; FailedPrecondition for a link or a non-regular file.
  static absl::StatusOr<LogStreamFile> Open(const std::string& log_path,
                                            bool finished);

  // The end of what can be read: the log's bytes that have a time.
  int64_t end() const { return times_.covered_end(); }
  bool finished() const { return finished_; }
  const LogTimes& times() const { return times_; }

  // Whether an event may begin (or the log end) at `offset`.
  absl::StatusOr<bool> IsBoundary(int64_t offset) const;
  // The boundary to read forward from for the events at or after `ms`.
  absl::StatusOr<int64_t> StartOfTime(int64_t ms) const;
  // The time of the byte at `offset` (< end()).
  absl::StatusOr<int64_t> TimeAt(int64_t offset) const;

  // Events from boundary `from` onward, within `limits`; events at or
  // after end_ms end the page (done). Reads at most a few MiB of the log;
  // a page may hold no event while more remain (not done).
  absl::StatusOr<LogPage> Forward(int64_t from,
                                  const LogReadLimits& limits) const;
  // The last events that end at or before `before`, within `limits`, in
  // log order; events before start_ms end the page (done).
  absl::StatusOr<LogPage> Backward(int64_t before,
                                   const LogReadLimits& limits) const;

 private:
  LogStreamFile(std::shared_ptr<jobs::ScopedFd> fd, LogTimes times,
                bool finished)
      : fd_(std::move(fd)), times_(std::move(times)), finished_(finished) {}
  // Bytes [lo, hi) of the log (hi <= end()).
  absl::StatusOr<std::string> Read(int64_t lo, int64_t hi) const;
  // The boundaries in (lo, hi] (and lo itself if it is one), exact, with
  // end() counted when the job is finished.
  absl::StatusOr<std::vector<int64_t>> BoundariesIn(int64_t lo,
                                                    int64_t hi) const;
  // The events between consecutive `cuts`, stamped.
  absl::StatusOr<std::vector<LogEvent>> EventsOf(
      const std::vector<int64_t>& cuts) const;

  std::shared_ptr<jobs::ScopedFd> fd_;  // Null for a missing log.
  LogTimes times_;
  bool finished_ = false;
};

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_LOG_STREAM_H_
