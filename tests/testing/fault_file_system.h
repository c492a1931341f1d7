// A RocksDB FileSystem for tests that injects disk errors (ENOSPC, EIO) into
// writes and syncs, and models a power loss by dropping every byte that was
// never made durable. Plug it into a Store with StoreOptions::wrap_file_system
// (see FaultFileSystem::Hook).
#ifndef CAIRN_TESTS_TESTING_FAULT_FILE_SYSTEM_H_
#define CAIRN_TESTS_TESTING_FAULT_FILE_SYSTEM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "rocksdb/file_system.h"

namespace cairn::testing {

// What a file is to RocksDB, from its name. Bit flags (FaultSpec::kinds).
enum FileKind : uint32_t {
  kWalFile = 1,       // <number>.log: write-ahead log
  kSstFile = 2,       // <number>.sst: table file
  kManifestFile = 4,  // MANIFEST-<number>
  kOtherFile = 8,     // CURRENT, OPTIONS-*, IDENTITY, LOG (info log), ...
  kAnyFile = 15,
};
FileKind KindOfFile(absl::string_view path);

// File operations a fault can hit. Bit flags (FaultSpec::ops).
enum FaultOp : uint32_t {
  kAppendOp = 1,  // Append, PositionedAppend
  kSyncOp = 2,    // Sync, Fsync (not RangeSync, which promises nothing)
  kCloseOp = 4,   // Close (the file is closed all the same)
};

// Which operations fail, and how. Fields default to "every append and sync
// of every file fails with ENOSPC from now on".
struct FaultSpec {
  enum class Error {
    kNoSpace,  // IOStatus::NoSpace (ENOSPC: disk full)
    kIoError,  // IOStatus::IOError (EIO: failing disk)
  };
  Error error = Error::kNoSpace;
  // FaultOp bits: the operations that fail. Default: appends and syncs.
  uint32_t ops = kAppendOp | kSyncOp;
  // FileKind bits: only files of these kinds fail (and count toward
  // after_bytes). Default: every file.
  uint32_t kinds = kAnyFile;
  // Faults start once this many more bytes have been appended to matching
  // files (0: at once). When appends can fail, the Append that crosses the
  // threshold writes the bytes up to it (a torn write) and fails.
  uint64_t after_bytes = 0;
  // Once started, each matching operation fails with this probability,
  // drawn from a generator seeded with `seed` (1: every one fails).
  double probability = 1.0;
  uint64_t seed = 0;
};

// Forwards everything to its base file system, except that:
//  - the writable files it opens fail as the current FaultSpec says (none
//    until InjectFaults, or Hook's `faults`). A failed append writes nothing
//    past the threshold; a failed sync makes nothing durable (the bytes stay
//    in the file, as in a page cache whose fsync failed, and a power loss
//    drops them).
//  - while syncs are stalled (StallSyncs), a sync of a matching file waits
//    until ReleaseSyncs, so that a test can hold a write in its fsync.
//  - it remembers, for every file it created or reopened for writing, how
//    many bytes were appended and how many of them were synced, and whether
//    the file's directory was fsynced since the file was created, so that
//    DropUnsyncedData can model a power loss.
// Model limits: a rename of a durable name is durable at once (only new
// files wait for a directory fsync); files it did not create or reopen are
// left alone; WAL recycling (ReuseWritableFile) and random-write files are
// not supported (NotSupported / untracked). Faults hit only writable files.
//
// Thread-safe. The file system must outlive the files it opens (the DB's Env
// holds it; the Store closes its files before dropping its Env).
class FaultFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit FaultFileSystem(std::shared_ptr<rocksdb::FileSystem> base);
  ~FaultFileSystem() override;

  // A StoreOptions::wrap_file_system hook: wraps the store's file system in
  // a new FaultFileSystem and stores it in *out (which must outlive the
  // store's Open call). With `faults`, they are in force from the start, so
  // that Open itself meets them.
  static std::function<std::shared_ptr<rocksdb::FileSystem>(
      std::shared_ptr<rocksdb::FileSystem>)>
  Hook(std::shared_ptr<FaultFileSystem>* out,
       std::optional<FaultSpec> faults = std::nullopt);

  // Replaces the faults in force (none at first); after_bytes counts from now.
  void InjectFaults(const FaultSpec& spec) ABSL_LOCKS_EXCLUDED(mu_);
  // No more faults.
  void ClearFaults() ABSL_LOCKS_EXCLUDED(mu_);
  // Number of operations failed by injection so far.
  int64_t injected_faults() const ABSL_LOCKS_EXCLUDED(mu_);

  // From now on every sync of a file of the FileKind bits `kinds` waits
  // (before it fails or syncs) until ReleaseSyncs.
  void StallSyncs(uint32_t kinds) ABSL_LOCKS_EXCLUDED(mu_);
  // Lets every waiting and later sync through.
  void ReleaseSyncs() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits up to `timeout` until at least one sync is waiting in StallSyncs;
  // whether one is.
  bool AwaitStalledSync(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

  // How much unsynced data a power loss keeps.
  struct PowerLoss {
    // false: none. true: a random prefix (drawn from `seed`) of each file's
    // unsynced bytes, as when the kernel had written part of the page cache
    // back; new names never made durable are lost all the same.
    bool keep_random_prefix = false;
    uint64_t seed = 0;
  };

  // Power loss: truncates every tracked file to the bytes it had when last
  // synced successfully (plus a random prefix of the rest if asked) and
  // deletes every tracked file whose directory was not fsynced after the
  // file was created (a file created but never synced has no synced bytes
  // either). Afterwards nothing is tracked. Works on the local files directly
  // (REQUIRES: the base file system is the local one, as RocksDB's default).
  // Returns the first error met (it still handles the rest).
  // REQUIRES: no file opened through this file system is still open: close
  // the DB (destroy the Store) first. Otherwise the open handles keep
  // writing past the truncation.
  absl::Status DropUnsyncedData(const PowerLoss& power_loss)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status DropUnsyncedData() ABSL_LOCKS_EXCLUDED(mu_) {
    return DropUnsyncedData(PowerLoss());
  }

  // Successful syncs (Sync, Fsync) so far of the files of the FileKind bits
  // `kinds` (e.g. kWalFile: one per group commit the store made durable).
  int64_t Syncs(uint32_t kinds) const ABSL_LOCKS_EXCLUDED(mu_);

  // Bytes of `path` made durable so far, or -1 if the file is not tracked.
  int64_t SyncedBytes(const std::string& path) const ABSL_LOCKS_EXCLUDED(mu_);

  const char* Name() const override { return "CairnFaultFileSystem"; }
  rocksdb::IOStatus NewWritableFile(const std::string& fname,
                                    const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* r,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* r,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& fname, const std::string& old_fname,
      const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* r,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewDirectory(const std::string& name,
                                 const rocksdb::IOOptions& io_opts,
                                 std::unique_ptr<rocksdb::FSDirectory>* r,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src,
                               const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(const std::string& fname, size_t size,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;

 private:
  class File;
  class Directory;

  // What is known about one file written through this file system.
  struct FileState {
    uint64_t size = 0;          // bytes appended (the file's logical length)
    uint64_t synced = 0;        // bytes made durable by a successful sync
    bool entry_synced = false;  // directory fsynced since creation
  };

  // Decides whether an operation `op` on `path` fails now. For appends,
  // `*allowed` (in: the append's length) is set to the bytes that may still
  // be written before the failure. Returns the error to report, or OK.
  rocksdb::IOStatus MaybeFail(const std::string& path, FaultOp op,
                              uint64_t* allowed) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits while syncs of `path`'s kind are stalled (see StallSyncs).
  void MaybeStallSync(const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);

  // Bookkeeping called by File after its base operation succeeded.
  // Appended: n more bytes at the end; ExtendedTo: the file reaches `end`.
  void Appended(const std::string& path, uint64_t n) ABSL_LOCKS_EXCLUDED(mu_);
  void ExtendedTo(const std::string& path, uint64_t end)
      ABSL_LOCKS_EXCLUDED(mu_);
  uint64_t SizeOf(const std::string& path) const ABSL_LOCKS_EXCLUDED(mu_);
  void Synced(const std::string& path, uint64_t size) ABSL_LOCKS_EXCLUDED(mu_);
  void Truncated(const std::string& path, uint64_t size)
      ABSL_LOCKS_EXCLUDED(mu_);
  void DirectorySynced(const std::string& dir) ABSL_LOCKS_EXCLUDED(mu_);

  mutable absl::Mutex mu_;
  // Tracked files by normalized path.
  std::map<std::string, FileState> files_ ABSL_GUARDED_BY(mu_);
  bool faults_on_ ABSL_GUARDED_BY(mu_) = false;
  FaultSpec spec_ ABSL_GUARDED_BY(mu_);
  uint64_t bytes_to_go_ ABSL_GUARDED_BY(mu_) = 0;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  int64_t injected_ ABSL_GUARDED_BY(mu_) = 0;
  // FileKind bits of the files whose syncs wait (0: none), and how many
  // syncs wait now.
  uint32_t stall_kinds_ ABSL_GUARDED_BY(mu_) = 0;
  int stalled_syncs_ ABSL_GUARDED_BY(mu_) = 0;
  // Successful syncs by FileKind.
  std::map<uint32_t, int64_t> syncs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_FAULT_FILE_SYSTEM_H_
