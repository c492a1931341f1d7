// NewInfoLog: see info_log.h.
#include "store/info_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cairn {
namespace {

absl::StatusOr<int> OpenLog(const std::string& file) {
  const int fd =
      open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("opening ", file, ": ", strerror(errno)));
  }
  return fd;
}

class FileInfoLog final : public rocksdb::Logger {
 public:
  FileInfoLog(std::string file, int fd, size_t size, size_t max_bytes)
      : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL),
        file_(std::move(file)),
        max_bytes_(max_bytes),
        fd_(fd),
        size_(size) {}
  ~FileInfoLog() override {
    absl::MutexLock lock(&mu_);
    CloseLocked();
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char body[4096];
    const int n = vsnprintf(body, sizeof(body), format, ap);
    if (n < 0) return;
    const std::string line = absl::StrCat(
        absl::FormatTime("%Y/%m/%d-%H:%M:%E6S ", absl::Now(),
                         absl::LocalTimeZone()),
        syscall(SYS_gettid), " ",
        absl::string_view(body, std::min<size_t>(n, sizeof(body) - 1)), "\n");
    absl::MutexLock lock(&mu_);
    if (size_ + line.size() > max_bytes_) RollLocked();
    if (fd_ < 0) return;
    // One write per line; a line that does not fit on a full disk is lost.
    const ssize_t w = write(fd_, line.data(), line.size());
    if (w > 0) size_ += static_cast<size_t>(w);
  }

  size_t GetLogFileSize() const override {
    absl::MutexLock lock(&mu_);
    return size_;
  }

 protected:
  rocksdb::Status CloseImpl() override {
    absl::MutexLock lock(&mu_);
    CloseLocked();
    return rocksdb::Status::OK();
  }

 private:
  void CloseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  // Renames LOG to LOG.old and starts a new LOG. On failure keeps the
  // current file (and tries again at the next line).
  void RollLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::string old = file_ + ".old";
    if (rename(file_.c_str(), old.c_str()) != 0) return;
    absl::StatusOr<int> fd = OpenLog(file_);
    if (!fd.ok()) return;
    CloseLocked();
    fd_ = *fd;
    size_ = 0;
  }

  const std::string file_;
  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_);
  size_t size_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::shared_ptr<rocksdb::Logger>> NewInfoLog(
    const std::string& dir, size_t max_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string file = dir + "/LOG";
  absl::StatusOr<int> fd = OpenLog(file);
  if (!fd.ok()) return fd.status();
  struct stat st;
  const size_t size =
      fstat(*fd, &st) == 0 ? static_cast<size_t>(st.st_size) : 0;
  return std::make_shared<FileInfoLog>(file, *fd, size, max_bytes);
}

}  // namespace cairn
