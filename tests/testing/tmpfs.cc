// ScopedTmpfs: see tmpfs.h.
#include "tests/testing/tmpfs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"

namespace cairn {
namespace testing {

ScopedTmpfs::ScopedTmpfs(uint64_t size_bytes) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "cairn-tmpfs-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    status_ = absl::InternalError(absl::StrCat("mkdtemp: ", strerror(errno)));
    return;
  }
  path_ = tmpl;
  // 0755: a root cairnd with its data dir here runs jobs as nobody, which
  // must reach the jobs root inside (cairnd checks at start).
  const std::string opts = absl::StrCat("size=", size_bytes, ",mode=0755");
  if (mount("tmpfs", path_.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
    status_ = absl::FailedPreconditionError(
        absl::StrCat("cannot mount a tmpfs on ", path_, " (", strerror(errno),
                     "; mounting needs root)"));
    return;
  }
  mounted_ = true;
}

ScopedTmpfs::~ScopedTmpfs() {
  if (mounted_) umount2(path_.c_str(), MNT_DETACH);
  if (!path_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

uint64_t ScopedTmpfs::Fill(const std::string& name, uint64_t bytes) const {
  const std::string file = absl::StrCat(path_, "/", name);
  const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  if (fd < 0) return 0;
  std::vector<char> block(64 << 10, 0);
  uint64_t written = 0;
  while (written < bytes) {
    const size_t n = std::min<uint64_t>(block.size(), bytes - written);
    const ssize_t w = write(fd, block.data(), n);
    if (w <= 0) break;
    written += static_cast<uint64_t>(w);
  }
  close(fd);
  return written;
}

uint64_t ScopedTmpfs::FreeBytes() const {
  struct statvfs st;
  if (statvfs(path_.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
}

}  // namespace testing
}  // namespace cairn
