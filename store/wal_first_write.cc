// See wal_first_write.h.
#include "store/wal_first_write.h"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "store/wal_format.h"

namespace cairn {
namespace {

using rocksdb::DataVerificationInfo;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

// A WAL's first bytes kept to find its first write batch; a WAL whose first
// batch is larger is left to the recorder.
constexpr size_t kMaxPrefix = 4 << 20;

// The number of the WAL file `fname` ("/dir/000014.log": 14), or nullopt
// for any other file.
std::optional<uint64_t> WalNumber(const std::string& fname) {
  const std::string name = std::filesystem::path(fname).filename().string();
  uint64_t number = 0;
  if (!absl::EndsWith(name, ".log") ||
      !absl::SimpleAtoi(name.substr(0, name.size() - 4), &number)) {
    return std::nullopt;
  }
  return number;
}

class MarkingWalFile final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  MarkingWalFile(std::unique_ptr<rocksdb::FSWritableFile> file,
                 std::string fname, uint64_t number, rocksdb::FileSystem* fs,
                 std::shared_ptr<DurableMarkWriter> writer)
      : FSWritableFileOwnerWrapper(std::move(file)),
        fname_(std::move(fname)),
        number_(number),
        fs_(fs),
        writer_(std::move(writer)) {}

  IOStatus Append(const Slice& data, const IOOptions& options,
                  IODebugContext* dbg) override {
    IOStatus s = target()->Append(data, options, dbg);
    return s.ok() ? AfterAppend(data, options, dbg) : s;
  }

  IOStatus Append(const Slice& data, const IOOptions& options,
                  const DataVerificationInfo& info,
                  IODebugContext* dbg) override {
    IOStatus s = target()->Append(data, options, info, dbg);
    return s.ok() ? AfterAppend(data, options, dbg) : s;
  }

 private:
  // RocksDB appends to a WAL from one writer at a time.
  IOStatus AfterAppend(const Slice& data, const IOOptions& options,
                       IODebugContext* dbg) {
    if (done_) return IOStatus::OK();
    prefix_.append(data.data(), data.size());
    const std::optional<wal_format::WriteBatchInfo> batch =
        wal_format::FirstWriteBatch(prefix_);
    if (!batch.has_value()) {
      if (prefix_.size() > kMaxPrefix) Stop();
      return IOStatus::OK();
    }
    const uint64_t appended = prefix_.size();
    Stop();
    if (IOStatus s = target()->Sync(options, dbg); !s.ok()) return s;
    uint64_t on_disk = 0;
    const bool preallocated =
        fs_->GetFileSize(fname_, options, &on_disk, dbg).ok() &&
        on_disk > appended;
    (void)writer_->WalStarted(number_, batch->first_sequence, preallocated);
    return IOStatus::OK();
  }

  void Stop() {
    done_ = true;
    std::string().swap(prefix_);
  }

  const std::string fname_;
  const uint64_t number_;
  rocksdb::FileSystem* const fs_;  // Outlives the files it opens.
  const std::shared_ptr<DurableMarkWriter> writer_;
  bool done_ = false;
  std::string prefix_;  // The bytes appended so far, until done_.
};

class WalFirstWriteMarkingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  WalFirstWriteMarkingFileSystem(std::shared_ptr<rocksdb::FileSystem> base,
                                 std::shared_ptr<DurableMarkWriter> writer)
      : rocksdb::FileSystemWrapper(std::move(base)),
        writer_(std::move(writer)) {}

  const char* Name() const override {
    return "CairnWalFirstWriteMarkingFileSystem";
  }

  IOStatus NewWritableFile(const std::string& fname,
                           const rocksdb::FileOptions& options,
                           std::unique_ptr<rocksdb::FSWritableFile>* result,
                           IODebugContext* dbg) override {
    IOStatus s = target()->NewWritableFile(fname, options, result, dbg);
    return s.ok() ? Wrap(fname, result) : s;
  }

  IOStatus ReuseWritableFile(const std::string& fname,
                             const std::string& old_fname,
                             const rocksdb::FileOptions& options,
                             std::unique_ptr<rocksdb::FSWritableFile>* result,
                             IODebugContext* dbg) override {
    IOStatus s =
        target()->ReuseWritableFile(fname, old_fname, options, result, dbg);
    return s.ok() ? Wrap(fname, result) : s;
  }

 private:
  IOStatus Wrap(const std::string& fname,
                std::unique_ptr<rocksdb::FSWritableFile>* result) {
    const std::optional<uint64_t> number = WalNumber(fname);
    if (number.has_value()) {
      *result = std::make_unique<MarkingWalFile>(std::move(*result), fname,
                                                 *number, target(), writer_);
    }
    return IOStatus::OK();
  }

  const std::shared_ptr<DurableMarkWriter> writer_;
};

}  // namespace

std::shared_ptr<rocksdb::FileSystem> NewWalFirstWriteMarkingFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base,
    std::shared_ptr<DurableMarkWriter> writer) {
  return std::make_shared<WalFirstWriteMarkingFileSystem>(std::move(base),
                                                          std::move(writer));
}

}  // namespace cairn
