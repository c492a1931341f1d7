// Marking the first write of each write-ahead log before it is
// acknowledged.
//
// The durable mark (durable_mark.h) is otherwise recorded about once a
// second, so the writes of the last second before a kill -9 may be newer
// than it: with their WAL then deleted or emptied, the store would open
// without them and the mark would not tell. This file system wrapper closes
// that gap. When RocksDB appends the first write batch (with entries) to a
// new WAL file, the wrapper syncs the file and records the mark naming that
// WAL and that batch's sequence number before the append returns, so before
// the write is acknowledged. Every later acknowledged write goes to that WAL
// or a newer one, marked the same way, so the newest WAL holding
// acknowledged writes is always one the mark names with one of its writes.
// It costs one fsync of the WAL and one mark write per WAL file (a WAL
// holds one memtable, 16 MB).
//
// The mark also says whether the WAL's file was preallocated (its size on
// disk runs past the batch), which the damage check needs to tell a WAL cut
// short from one torn by a crash (wal_tail.h).
#ifndef CAIRN_STORE_WAL_FIRST_WRITE_H_
#define CAIRN_STORE_WAL_FIRST_WRITE_H_

#include <memory>

#include "rocksdb/file_system.h"
#include "store/durable_mark.h"

namespace cairn {

// `base` with the marking above for every WAL file (NNNNNN.log) it creates.
// A failed sync fails the append (its write is not durable); a failed mark
// write is ignored (the check is only weaker). REQUIRES: `writer` is the
// mark of the store directory the files are created in.
std::shared_ptr<rocksdb::FileSystem> NewWalFirstWriteMarkingFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base,
    std::shared_ptr<DurableMarkWriter> writer);

}  // namespace cairn

#endif  // CAIRN_STORE_WAL_FIRST_WRITE_H_
