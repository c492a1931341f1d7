// NewStoreEnv: see wal_tail.h. A file system view that shows one WAL file
// shorter than it is on disk (its size, directory listings, reads).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "store/wal_file_system.h"
#include "store/wal_tail.h"

namespace cairn {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;

// A sequential file that ends after `length` bytes.
class ClippedSequentialFile final
    : public rocksdb::FSSequentialFileOwnerWrapper {
 public:
  ClippedSequentialFile(std::unique_ptr<rocksdb::FSSequentialFile> file,
                        uint64_t length)
      : FSSequentialFileOwnerWrapper(std::move(file)), length_(length) {}

  IOStatus Read(size_t n, const IOOptions& options, rocksdb::Slice* result,
                char* scratch, IODebugContext* dbg) override {
    IOStatus s = target()->Read(Clip(pos_, n), options, result, scratch, dbg);
    if (s.ok()) pos_ += result->size();
    return s;
  }

  IOStatus Skip(uint64_t n) override {
    n = Clip(pos_, n);
    pos_ += n;
    return target()->Skip(n);
  }

  IOStatus PositionedRead(uint64_t offset, size_t n, const IOOptions& options,
                          rocksdb::Slice* result, char* scratch,
                          IODebugContext* dbg) override {
    return target()->PositionedRead(offset, Clip(offset, n), options, result,
                                    scratch, dbg);
  }

 private:
  uint64_t Clip(uint64_t at, uint64_t n) const {
    return at >= length_ ? 0 : std::min(n, length_ - at);
  }

  const uint64_t length_;
  uint64_t pos_ = 0;
};

// A random-access file that ends after `length` bytes.
class ClippedRandomAccessFile final
    : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  ClippedRandomAccessFile(std::unique_ptr<rocksdb::FSRandomAccessFile> file,
                          uint64_t length)
      : FSRandomAccessFileOwnerWrapper(std::move(file)), length_(length) {}

  IOStatus Read(uint64_t offset, size_t n, const IOOptions& options,
                rocksdb::Slice* result, char* scratch,
                IODebugContext* dbg) const override {
    const size_t clipped =
        offset >= length_ ? 0 : std::min<uint64_t>(n, length_ - offset);
    return target()->Read(offset, clipped, options, result, scratch, dbg);
  }

 private:
  const uint64_t length_;
};

class TornTailHidingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  TornTailHidingFileSystem(std::shared_ptr<rocksdb::FileSystem> base,
                           TornWalTail tail)
      : rocksdb::FileSystemWrapper(std::move(base)), tail_(std::move(tail)) {}

  const char* Name() const override { return "CairnTornTailHidingFileSystem"; }

  IOStatus NewSequentialFile(const std::string& fname,
                             const rocksdb::FileOptions& options,
                             std::unique_ptr<rocksdb::FSSequentialFile>* result,
                             IODebugContext* dbg) override {
    IOStatus s = target()->NewSequentialFile(fname, options, result, dbg);
    if (s.ok() && IsTorn(fname)) {
      *result = std::make_unique<ClippedSequentialFile>(std::move(*result),
                                                        tail_.torn_at);
    }
    return s;
  }

  IOStatus NewRandomAccessFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      IODebugContext* dbg) override {
    IOStatus s = target()->NewRandomAccessFile(fname, options, result, dbg);
    if (s.ok() && IsTorn(fname)) {
      *result = std::make_unique<ClippedRandomAccessFile>(std::move(*result),
                                                          tail_.torn_at);
    }
    return s;
  }

  IOStatus GetFileSize(const std::string& fname, const IOOptions& options,
                       uint64_t* size, IODebugContext* dbg) override {
    IOStatus s = target()->GetFileSize(fname, options, size, dbg);
    if (s.ok() && IsTorn(fname)) *size = std::min(*size, tail_.torn_at);
    return s;
  }

  IOStatus GetChildrenFileAttributes(
      const std::string& dir, const IOOptions& options,
      std::vector<rocksdb::FileAttributes>* result,
      IODebugContext* dbg) override {
    IOStatus s = target()->GetChildrenFileAttributes(dir, options, result, dbg);
    if (!s.ok()) return s;
    for (rocksdb::FileAttributes& a : *result) {
      if (a.name == tail_.file) {
        a.size_bytes = std::min(a.size_bytes, tail_.torn_at);
      }
    }
    return s;
  }

 private:
  bool IsTorn(const std::string& fname) const {
    return std::filesystem::path(fname).filename() == tail_.file;
  }

  const TornWalTail tail_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<rocksdb::Env>> NewStoreEnv(
    const std::string& dir,
    const std::function<std::shared_ptr<rocksdb::FileSystem>(
        std::shared_ptr<rocksdb::FileSystem>)>& wrap,
    std::optional<TornWalTail>* torn, std::optional<CutWal>* cut) {
  absl::StatusOr<NewestWalEnd> end = InspectNewestWal(dir);
  if (!end.ok()) return end.status();
  if (cut != nullptr) *cut = end->cut;
  const std::optional<TornWalTail>* tail = &end->torn;
  if (torn != nullptr) *torn = *tail;
  if (!tail->has_value()) return NewStableSizeWalEnv(wrap);
  return NewStableSizeWalEnv([&](std::shared_ptr<rocksdb::FileSystem> base) {
    std::shared_ptr<rocksdb::FileSystem> view =
        std::make_shared<TornTailHidingFileSystem>(std::move(base), **tail);
    return wrap ? wrap(std::move(view)) : view;
  });
}

}  // namespace cairn
