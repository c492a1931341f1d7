// See manifest_state.h.
#include "store/manifest_state.h"

#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/file_system.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/utilities/debug.h"
#include "store/db_options.h"
#include "store/rocksdb_store_util.h"

namespace cairn {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using store_internal::FromRocks;

// RocksDB's ValueType of a put (KeyVersion::type).
constexpr int kTypeValue = 1;
// SST entries looked up at once, and the versions one lookup may return.
constexpr size_t kEntriesPerLookup = 1024;
constexpr size_t kMaxVersionsPerLookup = 1 << 20;

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

using Entry = std::pair<std::string, std::string>;  // Key, value.

// Looks up `entries` (sorted by key) in `db`: the first one that `db` holds
// in no version, as "key <key>"; nullopt if it holds all.
absl::StatusOr<std::optional<std::string>> FirstNotHeld(
    const std::vector<Entry>& entries, rocksdb::DB& db) {
  size_t next = 0;
  while (next < entries.size()) {
    std::vector<rocksdb::KeyVersion> versions;
    rocksdb::Status s = rocksdb::GetAllKeyVersions(
        &db, entries[next].first, entries.back().first, kMaxVersionsPerLookup,
        &versions);
    if (!s.ok()) return FromRocks(s, "reading the MANIFEST's SSTs");
    // A lookup cut short by the bound may miss versions of its last key.
    const bool cut = versions.size() >= kMaxVersionsPerLookup;
    std::set<Entry> held;
    for (const rocksdb::KeyVersion& v : versions) {
      if (v.type == kTypeValue) held.emplace(v.user_key, v.value);
    }
    const size_t first = next;
    for (; next < entries.size(); ++next) {
      if (cut && entries[next].first >= versions.back().user_key) break;
      if (!held.count(entries[next])) {
        return absl::StrCat("key ", entries[next].first);
      }
    }
    // One key with more versions than the bound: too many to tell, so it
    // counts as held.
    if (next == first) ++next;
  }
  return std::nullopt;
}

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

absl::StatusOr<std::optional<std::string>> FindEntryNotHeld(
    const std::string& sst_path, rocksdb::DB& db) {
  rocksdb::SstFileReader reader{rocksdb::Options()};
  if (rocksdb::Status s = reader.Open(sst_path); !s.ok()) {
    return FromRocks(s, absl::StrCat("opening ", sst_path));
  }
  std::unique_ptr<rocksdb::Iterator> it(
      reader.NewIterator(rocksdb::ReadOptions()));
  std::vector<Entry> entries;
  for (it->SeekToFirst();; it->Next()) {
    const bool valid = it->Valid();
    if (valid) {
      entries.emplace_back(it->key().ToString(), it->value().ToString());
    }
    if (entries.size() == kEntriesPerLookup || (!valid && !entries.empty())) {
      absl::StatusOr<std::optional<std::string>> missing =
          FirstNotHeld(entries, db);
      if (!missing.ok() || missing->has_value()) return missing;
      entries.clear();
    }
    if (!valid) break;
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), absl::StrCat("reading ", sst_path));
  }
  return std::nullopt;
}

}  // namespace cairn
