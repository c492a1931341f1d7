// A RocksDB Env whose write-ahead log files keep a stable size while they
// are written, so each synced commit costs one data write instead of a data
// write plus an inode (file size) write.
//
// RocksDB preallocates each WAL file with fallocate(FALLOC_FL_KEEP_SIZE) by
// default: the blocks are reserved but the file size still grows with every
// append, so fdatasync() must also write the inode. On ext4 without a
// journal (and similarly with one) that is a second synchronous I/O per
// commit. This Env turns KEEP_SIZE off for WAL files only: the file takes its
// preallocated size up front (once per preallocation block), and an
// fdatasync() after an append then only flushes the data and the
// unwritten-extent conversion (docs/architecture.md, "Store", has the
// figures).
//
// Recovery: RocksDB's log reader skips the zeroed preallocated tail of a WAL
// left by a crash, and a cleanly closed WAL is truncated to its real length.
// A record torn by a crash in the middle of its append is followed by zeros
// instead of the file's end, which RocksDB reports as corruption; the store
// opens WALs through NewStoreEnv (wal_tail.h), which tells that apart from
// damage.
#ifndef CAIRN_STORE_WAL_FILE_SYSTEM_H_
#define CAIRN_STORE_WAL_FILE_SYSTEM_H_

#include <functional>
#include <memory>

#include "rocksdb/env.h"
#include "rocksdb/file_system.h"

namespace cairn {

// An Env over RocksDB's default file system with the WAL setting above. The
// Env must outlive every DB opened with it. When `wrap` is set, the Env's
// file system is wrap(the stable-size WAL file system) (fault injection in
// tests).
std::unique_ptr<rocksdb::Env> NewStableSizeWalEnv(
    const std::function<std::shared_ptr<rocksdb::FileSystem>(
        std::shared_ptr<rocksdb::FileSystem>)>& wrap = nullptr);

}  // namespace cairn

#endif  // CAIRN_STORE_WAL_FILE_SYSTEM_H_
