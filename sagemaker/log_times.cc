// See log_times.h.
#include "sagemaker/log_times.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace cairn::sagemaker {
namespace {

constexpr int64_t kRecordBytes = 16;
// A slice holds at most this many records (16 MiB).
constexpr int64_t kMaxSliceRecords = int64_t{1} << 20;

int64_t LoadInt64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return static_cast<int64_t>(v);
}

void StoreInt64(int64_t value, char* p) {
  uint64_t v = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
}

LogTimeRecord Decode(const char* p) { return {LoadInt64(p), LoadInt64(p + 8)}; }

int64_t FileSize(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

}  // namespace

std::string LogTimesPath(const std::string& log_path) {
  return absl::StrCat(log_path, ".times");
}

void LogTimesWriter::LoadLast() {
  loaded_ = true;
  absl::StatusOr<jobs::ScopedFd> fd =
      jobs::OpenJobFile(LogTimesPath(log_path_), O_RDWR);
  if (!fd.ok()) return;
  const int64_t size = FileSize(fd->get());
  const int64_t count = size / kRecordBytes;
  // A record torn by a crash would shift every record after it.
  if (size % kRecordBytes != 0 &&
      ftruncate(fd->get(), count * kRecordBytes) != 0) {
    failed_ = true;
    return;
  }
  if (count == 0) return;
  char buf[kRecordBytes];
  if (pread(fd->get(), buf, kRecordBytes, (count - 1) * kRecordBytes) !=
      kRecordBytes) {
    return;
  }
  const LogTimeRecord last = Decode(buf);
  last_end_ = std::max<int64_t>(last.end, 0);
  last_ms_ = std::max<int64_t>(last.ms, 0);
}

absl::Status LogTimesWriter::Note(absl::Time now, bool force) {
  if (failed_) return absl::OkStatus();
  if (!loaded_) LoadLast();
  if (!force && now - last_note_ < min_gap_) return absl::OkStatus();
  struct stat st;  // Never through a link: readers refuse one anyway.
  if (lstat(log_path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::OkStatus();
  }
  const int64_t size = static_cast<int64_t>(st.st_size);
  if (size <= last_end_) return absl::OkStatus();
  const int64_t ms = std::max(absl::ToUnixMillis(now), last_ms_);
  absl::StatusOr<jobs::ScopedFd> fd = jobs::OpenJobFile(
      LogTimesPath(log_path_), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (!fd.ok()) {
    failed_ = true;
    return fd.status();
  }
  char buf[kRecordBytes];
  StoreInt64(size, buf);
  StoreInt64(ms, buf + 8);
  if (write(fd->get(), buf, kRecordBytes) != kRecordBytes) {
    failed_ = true;
    return absl::InternalError(absl::StrCat("cannot append to the log times '",
                                            LogTimesPath(log_path_), "'"));
  }
  last_end_ = size;
  last_ms_ = ms;
  last_note_ = now;
  return absl::OkStatus();
}

absl::StatusOr<LogTimes> LogTimes::Open(const std::string& log_path,
                                        int64_t log_size, bool finished,
                                        int64_t mtime_ms) {
  std::shared_ptr<jobs::ScopedFd> fd;
  int64_t count = 0;
  absl::StatusOr<jobs::ScopedFd> opened =
      jobs::OpenJobFile(LogTimesPath(log_path), O_RDONLY);
  if (opened.ok()) {
    fd = std::make_shared<jobs::ScopedFd>(*std::move(opened));
    count = FileSize(fd->get()) / kRecordBytes;
  } else if (!absl::IsNotFound(opened.status())) {
    return opened.status();
  }
  LogTimes times(std::move(fd), count, log_size);
  int64_t last_ms = 0;
  if (count > 0) {
    absl::StatusOr<LogTimeRecord> last = times.Record(count - 1);
    if (!last.ok()) return last.status();
    times.covered_end_ = std::clamp<int64_t>(last->end, 0, log_size);
    last_ms = std::max<int64_t>(last->ms, 0);
  }
  if (finished && times.covered_end_ < log_size) {
    times.tail_ = {log_size, std::max(last_ms, mtime_ms)};
    times.covered_end_ = log_size;
  }
  return times;
}

absl::StatusOr<LogTimeRecord> LogTimes::Record(int64_t i) const {
  if (i >= count_) return tail_;
  char buf[kRecordBytes];
  if (pread(fd_->get(), buf, kRecordBytes, i * kRecordBytes) != kRecordBytes) {
    return absl::InternalError("cannot read a job's log times");
  }
  return Clamped(Decode(buf));
}

LogTimeRecord LogTimes::Clamped(LogTimeRecord r) const {
  r.end = std::clamp<int64_t>(r.end, 0, log_size_);
  r.ms = std::max<int64_t>(r.ms, 0);
  return r;
}

int64_t LogTimes::first_ms() const {
  if (count_ == 0) return tail_.ms;
  absl::StatusOr<LogTimeRecord> r = Record(0);
  return r.ok() ? r->ms : 0;
}

int64_t LogTimes::last_ms() const {
  if (total() == 0) return 0;
  absl::StatusOr<LogTimeRecord> r = Record(total() - 1);
  return r.ok() ? r->ms : 0;
}

template <typename Pred>
absl::StatusOr<int64_t> LogTimes::FirstWhere(Pred pred) const {
  int64_t lo = 0;
  int64_t hi = total();
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    absl::StatusOr<LogTimeRecord> r = Record(mid);
    if (!r.ok()) return r.status();
    if (pred(*r)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

absl::StatusOr<int64_t> LogTimes::FirstEndingAbove(int64_t offset) const {
  return FirstWhere(
      [offset](const LogTimeRecord& r) { return r.end > offset; });
}

absl::StatusOr<int64_t> LogTimes::OffsetAt(int64_t ms) const {
  absl::StatusOr<int64_t> first =
      FirstWhere([ms](const LogTimeRecord& r) { return r.ms >= ms; });
  if (!first.ok()) return first.status();
  const int64_t lo = *first;
  if (lo == 0) return int64_t{0};
  absl::StatusOr<LogTimeRecord> before = Record(lo - 1);
  if (!before.ok()) return before.status();
  return std::min(before->end, covered_end_);
}

absl::StatusOr<std::vector<LogTimeRecord>> LogTimes::Slice(int64_t lo,
                                                           int64_t hi) const {
  std::vector<LogTimeRecord> out;
  if (hi <= lo) return out;
  absl::StatusOr<int64_t> first = FirstEndingAbove(lo);
  if (!first.ok()) return first.status();
  absl::StatusOr<int64_t> last = FirstEndingAbove(hi - 1);
  if (!last.ok()) return last.status();
  const int64_t end = std::min({*last + 1, total(), *first + kMaxSliceRecords});
  const int64_t in_file = std::max<int64_t>(std::min(end, count_) - *first, 0);
  std::string buf(static_cast<size_t>(in_file * kRecordBytes), '\0');
  if (in_file > 0 &&
      pread(fd_->get(), buf.data(), buf.size(), *first * kRecordBytes) !=
          static_cast<ssize_t>(buf.size())) {
    return absl::InternalError("cannot read a job's log times");
  }
  for (int64_t i = *first; i < end; ++i) {
    LogTimeRecord r =
        i < count_ ? Decode(&buf[(i - *first) * kRecordBytes]) : tail_;
    r.end = std::clamp<int64_t>(r.end, 0, log_size_);
    r.ms = std::max<int64_t>(r.ms, 0);
    if (!out.empty()) {  // A damaged file must not go backwards.
      r.end = std::max(r.end, out.back().end);
      r.ms = std::max(r.ms, out.back().ms);
    }
    out.push_back(r);
  }
  return out;
}

int64_t TimeOf(const std::vector<LogTimeRecord>& slice, int64_t offset,
               int64_t fallback) {
  auto it = std::upper_bound(
      slice.begin(), slice.end(), offset,
      [](int64_t o, const LogTimeRecord& r) { return o < r.end; });
  return it == slice.end() ? fallback : it->ms;
}

}  // namespace cairn::sagemaker
