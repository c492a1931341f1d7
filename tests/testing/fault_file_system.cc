// FaultFileSystem: see fault_file_system.h.
#include "tests/testing/fault_file_system.h"

#include <filesystem>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cairn::testing {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

std::string Normalize(const std::string& path) {
  std::string out = std::filesystem::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string ParentOf(const std::string& normalized_path) {
  return Normalize(
      std::filesystem::path(normalized_path).parent_path().string());
}

}  // namespace

FileKind KindOfFile(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const absl::string_view name =
      slash == absl::string_view::npos ? path : path.substr(slash + 1);
  if (absl::EndsWith(name, ".log")) return kWalFile;
  if (absl::EndsWith(name, ".sst")) return kSstFile;
  if (absl::StartsWith(name, "MANIFEST-")) return kManifestFile;
  return kOtherFile;
}

// A writable file that asks its file system whether each operation fails and
// reports what it appended and synced.
class FaultFileSystem::File final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  File(FaultFileSystem* fs, std::string path,
       std::unique_ptr<rocksdb::FSWritableFile> base)
      : FSWritableFileOwnerWrapper(std::move(base)),
        fs_(fs),
        path_(std::move(path)) {}

  IOStatus Append(const rocksdb::Slice& data, const IOOptions& options,
                  IODebugContext* dbg) override {
    uint64_t allowed = data.size();
    const IOStatus fault = fs_->MaybeFail(path_, kAppendOp, &allowed);
    const rocksdb::Slice part(data.data(), allowed);
    if (part.size() > 0) {
      IOStatus s = target()->Append(part, options, dbg);
      if (!s.ok()) return s;
      fs_->Appended(path_, part.size());
    }
    return fault;
  }
  IOStatus Append(const rocksdb::Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& /*info*/,
                  IODebugContext* dbg) override {
    return Append(data, options, dbg);
  }
  IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                            const IOOptions& options,
                            IODebugContext* dbg) override {
    uint64_t allowed = data.size();
    const IOStatus fault = fs_->MaybeFail(path_, kAppendOp, &allowed);
    const rocksdb::Slice part(data.data(), allowed);
    if (part.size() > 0) {
      IOStatus s = target()->PositionedAppend(part, offset, options, dbg);
      if (!s.ok()) return s;
      fs_->ExtendedTo(path_, offset + part.size());
    }
    return fault;
  }
  IOStatus PositionedAppend(const rocksdb::Slice& data, uint64_t offset,
                            const IOOptions& options,
                            const rocksdb::DataVerificationInfo& /*info*/,
                            IODebugContext* dbg) override {
    return PositionedAppend(data, offset, options, dbg);
  }
  IOStatus Truncate(uint64_t size, const IOOptions& options,
                    IODebugContext* dbg) override {
    IOStatus s = target()->Truncate(size, options, dbg);
    if (s.ok()) fs_->Truncated(path_, size);
    return s;
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
    return SyncWith([&] { return target()->Sync(options, dbg); });
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return SyncWith([&] { return target()->Fsync(options, dbg); });
  }
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    const IOStatus fault = fs_->MaybeFail(path_, kCloseOp, nullptr);
    IOStatus s = target()->Close(options, dbg);
    return s.ok() ? fault : s;
  }

 private:
  template <typename SyncFn>
  IOStatus SyncWith(SyncFn sync) {
    fs_->MaybeStallSync(path_);
    IOStatus fault = fs_->MaybeFail(path_, kSyncOp, nullptr);
    if (!fault.ok()) return fault;
    // Only what was appended before the sync started is surely durable.
    const uint64_t size = fs_->SizeOf(path_);
    IOStatus s = sync();
    if (s.ok()) fs_->Synced(path_, size);
    return s;
  }

  FaultFileSystem* const fs_;
  const std::string path_;
};

// A directory whose successful fsyncs make its new files' names durable.
class FaultFileSystem::Directory final : public rocksdb::FSDirectoryWrapper {
 public:
  Directory(FaultFileSystem* fs, std::string path,
            std::unique_ptr<rocksdb::FSDirectory> base)
      : FSDirectoryWrapper(std::move(base)), fs_(fs), path_(std::move(path)) {}

  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = FSDirectoryWrapper::Fsync(options, dbg);
    if (s.ok()) fs_->DirectorySynced(path_);
    return s;
  }
  IOStatus FsyncWithDirOptions(
      const IOOptions& options, IODebugContext* dbg,
      const rocksdb::DirFsyncOptions& dir_fsync_options) override {
    IOStatus s = FSDirectoryWrapper::FsyncWithDirOptions(options, dbg,
                                                         dir_fsync_options);
    if (s.ok()) fs_->DirectorySynced(path_);
    return s;
  }

 private:
  FaultFileSystem* const fs_;
  const std::string path_;
};

FaultFileSystem::FaultFileSystem(std::shared_ptr<rocksdb::FileSystem> base)
    : FileSystemWrapper(std::move(base)) {}

FaultFileSystem::~FaultFileSystem() = default;

std::function<
    std::shared_ptr<rocksdb::FileSystem>(std::shared_ptr<rocksdb::FileSystem>)>
FaultFileSystem::Hook(std::shared_ptr<FaultFileSystem>* out,
                      std::optional<FaultSpec> faults) {
  return [out, faults](std::shared_ptr<rocksdb::FileSystem> base) {
    *out = std::make_shared<FaultFileSystem>(std::move(base));
    if (faults) (*out)->InjectFaults(*faults);
    return std::shared_ptr<rocksdb::FileSystem>(*out);
  };
}

void FaultFileSystem::InjectFaults(const FaultSpec& spec) {
  absl::MutexLock lock(&mu_);
  faults_on_ = true;
  spec_ = spec;
  bytes_to_go_ = spec.after_bytes;
  rng_.seed(spec.seed);
}

void FaultFileSystem::ClearFaults() {
  absl::MutexLock lock(&mu_);
  faults_on_ = false;
}

int64_t FaultFileSystem::injected_faults() const {
  absl::MutexLock lock(&mu_);
  return injected_;
}

void FaultFileSystem::StallSyncs(uint32_t kinds) {
  absl::MutexLock lock(&mu_);
  stall_kinds_ = kinds;
}

void FaultFileSystem::ReleaseSyncs() {
  absl::MutexLock lock(&mu_);
  stall_kinds_ = 0;
}

bool FaultFileSystem::AwaitStalledSync(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto stalled = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stalled_syncs_ > 0;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&stalled), timeout);
}

void FaultFileSystem::MaybeStallSync(const std::string& path) {
  absl::MutexLock lock(&mu_);
  const uint32_t kind = KindOfFile(path);
  if ((stall_kinds_ & kind) == 0) return;
  ++stalled_syncs_;
  auto released = [this, kind]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (stall_kinds_ & kind) == 0;
  };
  mu_.Await(absl::Condition(&released));
  --stalled_syncs_;
}

IOStatus FaultFileSystem::MaybeFail(const std::string& path, FaultOp op,
                                    uint64_t* allowed) {
  absl::MutexLock lock(&mu_);
  if (!faults_on_ || (spec_.kinds & KindOfFile(path)) == 0) return {};
  uint64_t before_threshold = 0;
  if (bytes_to_go_ > 0) {
    if (op != kAppendOp) return {};
    if (*allowed <= bytes_to_go_) {
      bytes_to_go_ -= *allowed;
      return {};
    }
    before_threshold = bytes_to_go_;
    bytes_to_go_ = 0;
  }
  if ((spec_.ops & op) == 0) return {};
  if (spec_.probability < 1.0 &&
      std::uniform_real_distribution<double>(0, 1)(rng_) >= spec_.probability) {
    return {};
  }
  if (op == kAppendOp) *allowed = before_threshold;
  ++injected_;
  const char* what = op == kAppendOp ? "append"
                     : op == kSyncOp ? "sync"
                                     : "close";
  return spec_.error == FaultSpec::Error::kNoSpace
             ? IOStatus::NoSpace(absl::StrCat("injected ENOSPC on ", what),
                                 path)
             : IOStatus::IOError(absl::StrCat("injected EIO on ", what), path);
}

void FaultFileSystem::Appended(const std::string& path, uint64_t n) {
  absl::MutexLock lock(&mu_);
  auto it = files_.find(Normalize(path));
  if (it != files_.end()) it->second.size += n;
}

void FaultFileSystem::ExtendedTo(const std::string& path, uint64_t end) {
  absl::MutexLock lock(&mu_);
  auto it = files_.find(Normalize(path));
  if (it != files_.end() && it->second.size < end) it->second.size = end;
}

uint64_t FaultFileSystem::SizeOf(const std::string& path) const {
  absl::MutexLock lock(&mu_);
  auto it = files_.find(Normalize(path));
  return it == files_.end() ? 0 : it->second.size;
}

void FaultFileSystem::Synced(const std::string& path, uint64_t size) {
  absl::MutexLock lock(&mu_);
  ++syncs_[KindOfFile(path)];
  auto it = files_.find(Normalize(path));
  if (it != files_.end() && it->second.synced < size) it->second.synced = size;
}

void FaultFileSystem::Truncated(const std::string& path, uint64_t size) {
  absl::MutexLock lock(&mu_);
  auto it = files_.find(Normalize(path));
  if (it == files_.end()) return;
  it->second.size = size;
  if (it->second.synced > size) it->second.synced = size;
}

void FaultFileSystem::DirectorySynced(const std::string& dir) {
  const std::string normalized = Normalize(dir);
  absl::MutexLock lock(&mu_);
  for (auto& [path, state] : files_) {
    if (ParentOf(path) == normalized) state.entry_synced = true;
  }
}

int64_t FaultFileSystem::Syncs(uint32_t kinds) const {
  absl::MutexLock lock(&mu_);
  int64_t n = 0;
  for (const auto& [kind, count] : syncs_) {
    if ((kind & kinds) != 0) n += count;
  }
  return n;
}

int64_t FaultFileSystem::SyncedBytes(const std::string& path) const {
  absl::MutexLock lock(&mu_);
  auto it = files_.find(Normalize(path));
  return it == files_.end() ? -1 : static_cast<int64_t>(it->second.synced);
}

IOStatus FaultFileSystem::NewWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* r, IODebugContext* dbg) {
  const std::string path = Normalize(fname);
  // Overwriting an existing name keeps its directory entry.
  const bool existed = target()->FileExists(fname, IOOptions(), dbg).ok();
  std::unique_ptr<rocksdb::FSWritableFile> base;
  IOStatus s = target()->NewWritableFile(fname, options, &base, dbg);
  if (!s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    auto it = files_.find(path);
    FileState state;
    state.entry_synced = it == files_.end() ? existed : it->second.entry_synced;
    files_[path] = state;
  }
  *r = std::make_unique<File>(this, path, std::move(base));
  return s;
}

IOStatus FaultFileSystem::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* r, IODebugContext* dbg) {
  const std::string path = Normalize(fname);
  std::unique_ptr<rocksdb::FSWritableFile> base;
  IOStatus s = target()->ReopenWritableFile(fname, options, &base, dbg);
  if (!s.ok()) return s;
  uint64_t size = 0;
  if (!target()->GetFileSize(fname, IOOptions(), &size, dbg).ok()) size = 0;
  {
    absl::MutexLock lock(&mu_);
    // A file it did not write counts as durable as it is now.
    files_.try_emplace(path, FileState{size, size, true});
  }
  *r = std::make_unique<File>(this, path, std::move(base));
  return s;
}

IOStatus FaultFileSystem::ReuseWritableFile(
    const std::string& /*fname*/, const std::string& /*old_fname*/,
    const rocksdb::FileOptions& /*options*/,
    std::unique_ptr<rocksdb::FSWritableFile>* /*r*/, IODebugContext* /*dbg*/) {
  return IOStatus::NotSupported(
      "FaultFileSystem does not model WAL recycling (recycle_log_file_num)");
}

IOStatus FaultFileSystem::NewDirectory(const std::string& name,
                                       const IOOptions& io_opts,
                                       std::unique_ptr<rocksdb::FSDirectory>* r,
                                       IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSDirectory> base;
  IOStatus s = target()->NewDirectory(name, io_opts, &base, dbg);
  if (!s.ok()) return s;
  *r = std::make_unique<Directory>(this, Normalize(name), std::move(base));
  return s;
}

IOStatus FaultFileSystem::DeleteFile(const std::string& fname,
                                     const IOOptions& options,
                                     IODebugContext* dbg) {
  IOStatus s = target()->DeleteFile(fname, options, dbg);
  if (s.ok()) {
    absl::MutexLock lock(&mu_);
    files_.erase(Normalize(fname));
  }
  return s;
}

IOStatus FaultFileSystem::RenameFile(const std::string& src,
                                     const std::string& target_name,
                                     const IOOptions& options,
                                     IODebugContext* dbg) {
  IOStatus s = target()->RenameFile(src, target_name, options, dbg);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  auto it = files_.find(Normalize(src));
  if (it == files_.end()) {
    files_.erase(Normalize(target_name));
    return s;
  }
  const FileState state = it->second;
  files_.erase(it);
  files_[Normalize(target_name)] = state;
  return s;
}

IOStatus FaultFileSystem::Truncate(const std::string& fname, size_t size,
                                   const IOOptions& options,
                                   IODebugContext* dbg) {
  IOStatus s = target()->Truncate(fname, size, options, dbg);
  if (s.ok()) Truncated(fname, size);
  return s;
}

absl::Status FaultFileSystem::DropUnsyncedData(const PowerLoss& power_loss) {
  std::mt19937_64 rng(power_loss.seed);
  std::map<std::string, FileState> files;
  {
    absl::MutexLock lock(&mu_);
    files.swap(files_);
  }
  // RocksDB's POSIX file system has no FileSystem::Truncate, so this works on
  // the local files directly.
  absl::Status first;
  for (const auto& [path, state] : files) {
    std::error_code ec;
    if (!state.entry_synced) {
      std::filesystem::remove(path, ec);
    } else if (std::filesystem::exists(path, ec)) {
      const uint64_t size = std::filesystem::file_size(path, ec);
      uint64_t keep = state.synced;
      if (power_loss.keep_random_prefix && size > keep) {
        keep += rng() % (size - keep + 1);
      }
      if (!ec && size > keep) std::filesystem::resize_file(path, keep, ec);
    }
    if (ec && first.ok()) {
      first = absl::InternalError(
          absl::StrCat("dropping unsynced data of ", path, ": ", ec.message()));
    }
  }
  return first;
}

}  // namespace cairn::testing
