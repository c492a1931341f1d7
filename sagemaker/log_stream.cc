// See log_stream.h.
#include "sagemaker/log_stream.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

namespace cairn::sagemaker {
namespace {

// How much of the log one Forward or Backward call scans at most.
constexpr int64_t kScanBytes = int64_t{2} << 20;

}  // namespace

std::vector<int64_t> LogBoundaries(absl::string_view bytes, int64_t base) {
  std::vector<int64_t> out;
  if (base == 0) out.push_back(0);
  // Unknown bytes before `base` count as holding a newline.
  int64_t last_newline = base - 1;
  const int64_t n = static_cast<int64_t>(bytes.size());
  for (int64_t i = 0; i <= n; ++i) {
    const int64_t pos = base + i;
    if (pos > base && pos % kLogPieceBytes == 0 &&
        last_newline < pos - kLogPieceBytes &&
        (out.empty() || out.back() != pos)) {
      out.push_back(pos);
    }
    if (i < n && bytes[i] == '\n') {
      last_newline = pos;
      out.push_back(pos + 1);
    }
  }
  return out;
}

absl::StatusOr<LogStreamFile> LogStreamFile::Open(const std::string& log_path,
                                                  bool finished) {
  std::shared_ptr<jobs::ScopedFd> fd;
  int64_t size = 0;
  int64_t mtime_ms = 0;
  absl::StatusOr<jobs::ScopedFd> opened = jobs::OpenJobFile(log_path, O_RDONLY);
  if (opened.ok()) {
    fd = std::make_shared<jobs::ScopedFd>(*std::move(opened));
    struct stat st;
    if (fstat(fd->get(), &st) == 0) {
      size = static_cast<int64_t>(st.st_size);
      mtime_ms =
          int64_t{st.st_mtim.tv_sec} * 1000 + st.st_mtim.tv_nsec / 1000000;
    }
  } else if (!absl::IsNotFound(opened.status())) {
    return opened.status();
  }
  absl::StatusOr<LogTimes> times =
      LogTimes::Open(log_path, size, finished, mtime_ms);
  if (!times.ok()) return times.status();
  return LogStreamFile(std::move(fd), *std::move(times), finished);
}

absl::StatusOr<std::string> LogStreamFile::Read(int64_t lo, int64_t hi) const {
  if (fd_ == nullptr || hi <= lo) return std::string();
  return jobs::ReadAt(fd_->get(), lo, static_cast<size_t>(hi - lo));
}

absl::StatusOr<std::vector<int64_t>> LogStreamFile::BoundariesIn(
    int64_t lo, int64_t hi) const {
  const int64_t base = std::max<int64_t>(0, lo - kLogPieceBytes);
  absl::StatusOr<std::string> bytes = Read(base, hi);
  if (!bytes.ok()) return bytes.status();
  std::vector<int64_t> all = LogBoundaries(*bytes, base);
  std::vector<int64_t> out;
  for (int64_t p : all) {
    if (p >= lo && p <= hi) out.push_back(p);
  }
  if (finished_ && hi == end() && (out.empty() || out.back() != hi)) {
    out.push_back(hi);
  }
  return out;
}

absl::StatusOr<std::vector<LogEvent>> LogStreamFile::EventsOf(
    const std::vector<int64_t>& cuts) const {
  std::vector<LogEvent> out;
  if (cuts.size() < 2) return out;
  const int64_t lo = cuts.front();
  absl::StatusOr<std::string> bytes = Read(lo, cuts.back());
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::vector<LogTimeRecord>> slice =
      times_.Slice(lo, cuts.back());
  if (!slice.ok()) return slice.status();
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    LogEvent e;
    e.start = cuts[i];
    e.end = cuts[i + 1];
    absl::string_view text =
        absl::string_view(*bytes).substr(static_cast<size_t>(e.start - lo),
                                         static_cast<size_t>(e.end - e.start));
    if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
    e.message = std::string(text);
    e.timestamp_ms = TimeOf(*slice, e.end - 1, times_.last_ms());
    out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<bool> LogStreamFile::IsBoundary(int64_t offset) const {
  if (offset < 0 || offset > end()) return false;
  absl::StatusOr<std::vector<int64_t>> cuts = BoundariesIn(offset, offset);
  if (!cuts.ok()) return cuts.status();
  return !cuts->empty() && cuts->front() == offset;
}

absl::StatusOr<int64_t> LogStreamFile::StartOfTime(int64_t ms) const {
  absl::StatusOr<int64_t> first = times_.OffsetAt(ms);
  if (!first.ok()) return first.status();
  const int64_t at = std::min(*first, end());
  // Every 2 * kLogPieceBytes bytes hold a boundary.
  absl::StatusOr<std::vector<int64_t>> cuts =
      BoundariesIn(std::max<int64_t>(0, at - 2 * kLogPieceBytes), at);
  if (!cuts.ok()) return cuts.status();
  return cuts->empty() ? int64_t{0} : cuts->back();
}

absl::StatusOr<int64_t> LogStreamFile::TimeAt(int64_t offset) const {
  absl::StatusOr<std::vector<LogTimeRecord>> slice =
      times_.Slice(offset, offset + 1);
  if (!slice.ok()) return slice.status();
  return TimeOf(*slice, offset, times_.last_ms());
}

absl::StatusOr<LogPage> LogStreamFile::Forward(
    int64_t from, const LogReadLimits& limits) const {
  LogPage page;
  page.next = from;
  const int64_t hi = std::min(end(), from + kScanBytes);
  absl::StatusOr<std::vector<int64_t>> cuts = BoundariesIn(from, hi);
  if (!cuts.ok()) return cuts.status();
  absl::StatusOr<std::vector<LogEvent>> events = EventsOf(*cuts);
  if (!events.ok()) return events.status();
  int64_t bytes = 0;
  for (LogEvent& e : *events) {
    if (e.timestamp_ms >= limits.end_ms) {
      page.done = true;
      return page;
    }
    const int64_t size = static_cast<int64_t>(e.message.size());
    if (static_cast<int>(page.events.size()) >= limits.max_events ||
        (!page.events.empty() && bytes + size > limits.max_bytes)) {
      return page;
    }
    page.next = e.end;
    if (e.message.empty() || e.timestamp_ms < limits.start_ms) continue;
    bytes += size;
    page.events.push_back(std::move(e));
  }
  page.done = hi == end();
  return page;
}

absl::StatusOr<LogPage> LogStreamFile::Backward(
    int64_t before, const LogReadLimits& limits) const {
  LogPage page;
  before = std::clamp<int64_t>(before, 0, end());
  page.next = before;
  absl::StatusOr<std::vector<int64_t>> cuts =
      BoundariesIn(std::max<int64_t>(0, before - kScanBytes), before);
  if (!cuts.ok()) return cuts.status();
  absl::StatusOr<std::vector<LogEvent>> events = EventsOf(*cuts);
  if (!events.ok()) return events.status();
  if (!cuts->empty()) page.next = page.last_cut = cuts->back();
  int64_t bytes = 0;
  for (auto it = events->rbegin(); it != events->rend(); ++it) {
    if (it->timestamp_ms < limits.start_ms) {
      page.done = true;
      break;
    }
    const int64_t size = static_cast<int64_t>(it->message.size());
    if (static_cast<int>(page.events.size()) >= limits.max_events ||
        (!page.events.empty() && bytes + size > limits.max_bytes)) {
      break;
    }
    page.next = it->start;
    if (it->message.empty() || it->timestamp_ms >= limits.end_ms) continue;
    bytes += size;
    page.events.push_back(std::move(*it));
  }
  std::reverse(page.events.begin(), page.events.end());
  if (page.next == 0) page.done = true;
  return page;
}

}  // namespace cairn::sagemaker
