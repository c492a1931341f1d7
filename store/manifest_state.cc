// See manifest_state.h.
#include "store/manifest_state.h"

#include <filesystem>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/file_system.h"
#include "store/db_options.h"
#include "store/rocksdb_store_util.h"

namespace cairn {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using store_internal::FromRocks;

bool IsWal(const std::string& name) { return absl::EndsWith(name, ".log"); }

// A file that reads as empty.
class EmptySequentialFile final : public rocksdb::FSSequentialFileOwnerWrapper {
 public:
  using FSSequentialFileOwnerWrapper::FSSequentialFileOwnerWrapper;

  IOStatus Read(size_t /*n*/, const IOOptions& /*options*/,
                rocksdb::Slice* result, char* scratch,
                IODebugContext* /*dbg*/) override {
    *result = rocksdb::Slice(scratch, 0);
    return IOStatus::OK();
  }

  IOStatus PositionedRead(uint64_t /*offset*/, size_t /*n*/,
                          const IOOptions& /*options*/, rocksdb::Slice* result,
                          char* scratch, IODebugContext* /*dbg*/) override {
    *result = rocksdb::Slice(scratch, 0);
    return IOStatus::OK();
  }
};

// The store directory with every WAL file reading as empty, so that an open
// replays none. The files are still listed with their sizes: RocksDB checks
// the WALs its MANIFEST tracks against them (and Debian's RocksDB 7.8
// asserts in a read-only open that turns that tracking off).
class WalEmptyingFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit WalEmptyingFileSystem(std::shared_ptr<rocksdb::FileSystem> base)
      : rocksdb::FileSystemWrapper(std::move(base)) {}

  const char* Name() const override { return "CairnWalEmptyingFileSystem"; }

  IOStatus NewSequentialFile(const std::string& fname,
                             const rocksdb::FileOptions& options,
                             std::unique_ptr<rocksdb::FSSequentialFile>* result,
                             IODebugContext* dbg) override {
    IOStatus s = target()->NewSequentialFile(fname, options, result, dbg);
    if (s.ok() && IsWal(std::filesystem::path(fname).filename().string())) {
      *result = std::make_unique<EmptySequentialFile>(std::move(*result));
    }
    return s;
  }
};

}  // namespace

absl::StatusOr<ManifestState> OpenManifestState(const std::string& path) {
  ManifestState state;
  state.env = rocksdb::NewCompositeEnv(
      std::make_shared<WalEmptyingFileSystem>(rocksdb::FileSystem::Default()));
  rocksdb::Options options = StoreDbOptions(state.env.get());
  options.info_log = NewDiscardingLogger();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::OpenForReadOnly(options, path, &raw);
  if (!s.ok()) {
    return FromRocks(s, absl::StrCat("opening the MANIFEST of ", path));
  }
  state.db.reset(raw);
  state.last_seqno = state.db->GetLatestSequenceNumber();
  return state;
}

}  // namespace cairn
