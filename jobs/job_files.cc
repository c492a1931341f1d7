// Link-safe opens of files in job dirs. See job_files.h.
#include "jobs/job_files.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cairn::jobs {
namespace {

// openat2(dir, name) confined to `dir` with no symbolic link anywhere;
// openat with O_NOFOLLOW where the kernel lacks openat2 (before 5.6) or a
// seccomp filter refuses it. Returns the fd or -1 with errno set.
int OpenBeneath(int dir_fd, const char* name, int flags, mode_t mode) {
#ifdef SYS_openat2
  struct open_how how;
  memset(&how, 0, sizeof(how));
  how.flags = static_cast<uint64_t>(flags);
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
  const long fd = syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) {
    return static_cast<int>(fd);
  }
#endif
  return openat(dir_fd, name, flags, mode);
}

absl::Status OpenError(const std::string& path, int err) {
  if (err == ENOENT) {
    return absl::NotFoundError(absl::StrCat("'", path, "' does not exist"));
  }
  if (err == ELOOP || err == EXDEV) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path,
        "' is a symbolic link: not followed (a job may not point cairnd at "
        "other files)"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot open '", path, "': ", strerror(err)));
}

}  // namespace

ScopedFd& ScopedFd::operator=(ScopedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) close(fd_);
}

int ScopedFd::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

absl::StatusOr<ScopedFd> OpenJobFile(const std::string& path, int flags,
                                     mode_t mode) {
  const std::filesystem::path p(path);
  const std::string parent =
      p.has_parent_path() ? p.parent_path().string() : ".";
  const std::string name = p.filename().string();
  ScopedFd dir(open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return OpenError(parent, errno);
  ScopedFd fd(OpenBeneath(dir.get(), name.c_str(),
                          flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
  if (fd.get() < 0) return OpenError(path, errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return OpenError(path, errno);
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", path,
        "' is not a regular file with one link: not used (a job may not "
        "point cairnd at other files)"));
  }
  // Back to blocking I/O for a regular file (O_NONBLOCK only kept a FIFO
  // from blocking the open).
  fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  return fd;
}

absl::StatusOr<std::string> ReadAt(int fd, int64_t offset, size_t max_bytes) {
  std::string data(max_bytes, '\0');
  size_t done = 0;
  while (done < max_bytes) {
    const ssize_t n =
        pread(fd, data.data() + done, max_bytes - done,
              static_cast<off_t>(offset) + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InternalError(
          absl::StrCat("read failed: ", strerror(errno)));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

}  // namespace cairn::jobs
