// A small tmpfs mounted for one test (disk-full tests). Mounting needs root
// (CAP_SYS_ADMIN); without it the mount fails and the test skips, saying so.
#ifndef CAIRN_TESTS_TESTING_TMPFS_H_
#define CAIRN_TESTS_TESTING_TMPFS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace cairn {
namespace testing {

class ScopedTmpfs {
 public:
  // Creates a fresh directory and mounts a tmpfs of `size_bytes` on it;
  // status() says whether that worked (and why not).
  explicit ScopedTmpfs(uint64_t size_bytes);
  // Unmounts (lazily, so open files do not keep it busy) and removes the
  // directory.
  ~ScopedTmpfs();
  ScopedTmpfs(const ScopedTmpfs&) = delete;
  ScopedTmpfs& operator=(const ScopedTmpfs&) = delete;

  const absl::Status& status() const { return status_; }
  const std::string& path() const { return path_; }

  // Writes a file of `bytes` zero bytes at path()/name (to fill the disk).
  // Returns how many bytes it could write (less when the disk filled up).
  uint64_t Fill(const std::string& name, uint64_t bytes) const;
  // Free bytes for an unprivileged user (statvfs f_bavail), 0 on error.
  uint64_t FreeBytes() const;

 private:
  std::string path_;
  bool mounted_ = false;
  absl::Status status_;
};

}  // namespace testing
}  // namespace cairn

#endif  // CAIRN_TESTS_TESTING_TMPFS_H_
