// BackupStore: checks the destination, checkpoints the store into a
// temporary sibling, opens the copy once to count it, then renames it into
// place.
#include "store/backup.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace cairn {
namespace {

namespace fs = std::filesystem;

// A path for an error message: quoted, and cut short so that the message
// stays small whatever the caller sent.
std::string Quote(const fs::path& path) {
  constexpr size_t kMax = 200;
  std::string s = path.string();
  if (s.size() > kMax) s = absl::StrCat(s.substr(0, kMax), "...");
  return absl::StrCat("'", s, "'");
}

// True if `path` is `base` or lies under it (both absolute and normalized).
bool IsWithin(const fs::path& path, const fs::path& base) {
  auto p = path.begin();
  for (auto b = base.begin(); b != base.end(); ++b, ++p) {
    if (b->empty()) continue;  // A trailing separator.
    if (p == path.end() || *p != *b) return false;
  }
  return true;
}

// `dest` made absolute-and-normal, after the checks of BackupStore's
// contract that need no file system access.
absl::StatusOr<fs::path> NormalDestination(const std::string& dest) {
  if (dest.empty()) {
    return absl::InvalidArgumentError(
        "backup destination must be non-empty: name a new directory on the "
        "cairnd machine");
  }
  const fs::path path(dest);
  if (!path.is_absolute()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "backup destination ", Quote(path),
        " must be an absolute path (it is a path on the cairnd machine)"));
  }
  fs::path normal = path.lexically_normal();
  if (!normal.has_filename() && normal.has_parent_path() &&
      normal != normal.root_path()) {
    normal = normal.parent_path();  // "/a/b/" -> "/a/b".
  }
  return normal;
}

// InvalidArgument if `dest` is the data dir or inside it, symlinks resolved.
absl::Status CheckOutsideDataDir(const fs::path& dest,
                                 const std::string& data_dir) {
  std::error_code ec;
  const fs::path data = fs::weakly_canonical(fs::absolute(data_dir), ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot resolve the data dir ", Quote(data_dir), ": ", ec.message()));
  }
  const fs::path resolved = fs::weakly_canonical(dest, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot resolve backup destination ", Quote(dest), ": ", ec.message()));
  }
  if (IsWithin(resolved, data)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "backup destination ", Quote(dest), " is inside the data dir ",
        Quote(data), "; name a directory outside it"));
  }
  return absl::OkStatus();
}

// FailedPrecondition unless `dest` is absent or an empty directory and its
// parent is a directory.
absl::Status CheckFreeDestination(const fs::path& dest) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dest, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) {
      return absl::FailedPreconditionError(
          absl::StrCat("backup destination ", Quote(dest),
                       " exists and is not a directory"));
    }
    const bool empty = fs::is_empty(dest, ec);
    if (ec) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot read backup destination ", Quote(dest), ": ", ec.message()));
    }
    if (!empty) {
      return absl::FailedPreconditionError(
          absl::StrCat("backup destination ", Quote(dest),
                       " is a non-empty directory; name a new or empty one"));
    }
    return absl::OkStatus();
  }
  if (!fs::is_directory(dest.parent_path(), ec)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "parent directory ", Quote(dest.parent_path()),
        " of backup destination ", Quote(dest), " does not exist"));
  }
  return absl::OkStatus();
}

// A fresh directory `<dest>.tmp-XXXXXX`, removed with everything in it on
// destruction unless Release()d.
class TempDir {
 public:
  static absl::StatusOr<std::unique_ptr<TempDir>> Create(const fs::path& dest) {
    std::string name = dest.string() + ".tmp-XXXXXX";
    if (mkdtemp(name.data()) == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create a temporary directory beside backup "
                       "destination ",
                       Quote(dest), ": ", std::strerror(errno)));
    }
    return std::unique_ptr<TempDir>(new TempDir(std::move(name)));
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  void Release() { path_.clear(); }

 private:
  explicit TempDir(fs::path path) : path_(std::move(path)) {}
  fs::path path_;
};

// fsyncs a directory, so that the entries made in it survive a crash.
absl::Status SyncDir(const fs::path& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    const std::string error = std::strerror(errno);
    if (fd >= 0) close(fd);
    return absl::InternalError(
        absl::StrCat("cannot fsync directory ", Quote(dir), ": ", error));
  }
  close(fd);
  return absl::OkStatus();
}

// Opens the copy in `store_dir` as cairnd would and counts what it holds.
absl::Status CountBackup(const fs::path& store_dir, BackupResult* result) {
  StoreOptions options;
  options.create_if_missing = false;
  absl::StatusOr<std::unique_ptr<Store>> copy =
      Store::Open(options, store_dir.string());
  if (!copy.ok()) {
    return absl::Status(
        copy.status().code(),
        absl::StrCat("the backup does not open: ", copy.status().message()));
  }
  absl::StatusOr<std::vector<StoredStudy>> studies = (*copy)->LoadAll();
  if (!studies.ok()) return studies.status();
  result->studies = static_cast<int64_t>(studies->size());
  for (const StoredStudy& s : *studies) {
    result->trials += static_cast<int64_t>(s.trials.size());
  }
  return absl::OkStatus();
}

// Counts the regular files under `dir` and their sizes.
void CountFiles(const fs::path& dir, BackupResult* result) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    ++result->files;
    result->size_bytes += it->file_size(ec);
  }
}

// Writes the backup into `tmp` (a fresh directory) and fills *result.
absl::Status WriteBackup(AdminStore& store, const fs::path& tmp,
                         BackupResult* result) {
  const fs::path store_dir = tmp / kStoreDirName;
  absl::StatusOr<uint64_t> sequence = store.Checkpoint(store_dir.string());
  if (!sequence.ok()) return sequence.status();
  result->sequence_number = *sequence;
  if (absl::Status s = CountBackup(store_dir, result); !s.ok()) return s;
  CountFiles(tmp, result);
  if (absl::Status s = SyncDir(store_dir); !s.ok()) return s;
  return SyncDir(tmp);
}

// Renames `tmp` to `dest` (replacing it if it is an empty directory).
absl::Status MoveIntoPlace(const fs::path& tmp, const fs::path& dest) {
  if (rename(tmp.c_str(), dest.c_str()) != 0) {
    const int error = errno;
    const std::string what =
        absl::StrCat("cannot rename ", Quote(tmp), " to backup destination ",
                     Quote(dest), ": ", std::strerror(error));
    if (error == ENOTEMPTY || error == EEXIST || error == ENOTDIR) {
      return absl::FailedPreconditionError(what);
    }
    return absl::InternalError(what);
  }
  return SyncDir(dest.parent_path());
}

}  // namespace

absl::StatusOr<BackupResult> BackupStore(AdminStore& store,
                                         const std::string& data_dir,
                                         const std::string& dest) {
  const absl::Time start = absl::Now();
  absl::StatusOr<fs::path> path = NormalDestination(dest);
  if (!path.ok()) return path.status();
  if (absl::Status s = CheckOutsideDataDir(*path, data_dir); !s.ok()) return s;
  if (absl::Status s = CheckFreeDestination(*path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<TempDir>> tmp = TempDir::Create(*path);
  if (!tmp.ok()) return tmp.status();
  BackupResult result;
  result.path = path->string();
  if (absl::Status s = WriteBackup(store, (*tmp)->path(), &result); !s.ok()) {
    return s;
  }
  if (absl::Status s = MoveIntoPlace((*tmp)->path(), *path); !s.ok()) return s;
  (*tmp)->Release();
  result.elapsed = absl::Now() - start;
  return result;
}

}  // namespace cairn
