// Opening the files cairnd reads and writes in a job dir (the job's log, its
// hypertune metric file). A job owns its job dir and its output is hostile:
// it may replace a file with a symbolic link (to /etc/shadow), a hard link, a
// FIFO or a directory. These opens never follow a link at the file's name
// (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has
// it, else openat with O_NOFOLLOW), never block on a FIFO, and accept only a
// regular file with one link.
#ifndef CAIRN_JOBS_JOB_FILES_H_
#define CAIRN_JOBS_JOB_FILES_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace cairn::jobs {

// A file descriptor, closed on destruction. Move-only.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd();

  int get() const { return fd_; }
  // Gives up ownership.
  int Release();

 private:
  int fd_ = -1;
};

// Opens the file at `path` (flags as for open(2), O_CLOEXEC added; `mode`
// for O_CREAT) without following a link at its last component. The
// directories above it are the job dir and cairnd's own, and are followed.
// Errors name the path: NotFound when it does not exist (and O_CREAT is not
// given); FailedPrecondition for a symbolic link, something other than a
// regular file, a file with more than one link, or another open error.
absl::StatusOr<ScopedFd> OpenJobFile(const std::string& path, int flags,
                                     mode_t mode = 0);

// Reads up to `max_bytes` from `fd` at `offset` (pread until EOF or
// max_bytes). Internal on a read error.
absl::StatusOr<std::string> ReadAt(int fd, int64_t offset, size_t max_bytes);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_FILES_H_
