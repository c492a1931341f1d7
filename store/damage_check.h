// Finding damage in a store before RocksDB opens it read-write (a read-write
// open deletes files it believes obsolete, and opens some damage silently).
// The check opens the store read-only, writes nothing, and looks for:
//  - damage RocksDB itself reports (a corrupt WAL, MANIFEST or SST);
//  - an SST the MANIFEST does not reference that holds data nothing else
//    holds (the MANIFEST is damaged or old), told apart from the harmless
//    leftovers of a flush or compaction interrupted by a crash by its
//    sequence numbers or, where a compaction zeroed them, its entries (see
//    FindStoreDamage);
//  - writes that neither the MANIFEST's SSTs nor the WALs it replays hold,
//    below the first write of those WALs (the MANIFEST is damaged or old);
//  - writes that were durable (store/durable_mark.h) but that RocksDB no
//    longer recovers: the WAL that held them is missing, empty or cut short;
//  - the newest WAL ending in the middle of a record when the mark says
//    that its file was preallocated (cut short after the fact: wal_tail.h).
#ifndef CAIRN_STORE_DAMAGE_CHECK_H_
#define CAIRN_STORE_DAMAGE_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cairn {

// Returns one line per damage found in the store at `path`, each naming the
// file and the kind of damage ("file 000012.log is missing: ...", "file
// MANIFEST-000012 does not reference 000010.sst: ..."); empty when none is
// found. Never writes to the directory.
//
// RocksDB reads a MANIFEST cut short as if its writer had died in the middle
// of a record: the edits before the cut are the store, the rest is dropped
// silently. So is a MANIFEST replaced by an older one. Either loses the SSTs
// added since, and RocksDB then replays whatever WALs are on disk, so the
// store opens with the writes of those WALs only. Such a MANIFEST is found
// in two ways:
//
// The sequence numbers. The MANIFEST's last sequence number is the newest
// write its SSTs hold (manifest_state.h); every later write is in a WAL it
// replays. When the first write of those WALs is further on, the writes in
// between are in neither: damage. (Every write goes to the WAL in sequence,
// and a WAL is deleted only once the MANIFEST records the flush of all its
// writes, so a store a crash left behind has no such gap.)
//
// The SSTs it does not reference. Such an SST is harmless when the store
// holds its writes elsewhere: when its largest sequence number is at most
// the MANIFEST's (the referenced SSTs hold every write up to there: the
// output of an interrupted compaction, or the input of a finished one that
// a crash kept RocksDB from deleting), or when all its sequence numbers lie
// in the range the WALs on disk replay (the output of an interrupted flush,
// whose WAL RocksDB deletes only after the MANIFEST records the flush), or
// when it is not a complete table (a MANIFEST only references complete,
// synced SSTs, so one cut short is what a kill -9 left of a flush or
// compaction). An SST whose sequence numbers a compaction to the bottom
// level zeroed is harmless when its file number is below one the MANIFEST
// records (a referenced SST's or its log number: it was created before the
// MANIFEST's last edit, so the compaction that made it read only SSTs the
// MANIFEST references or accounted for), or when the referenced SSTs hold
// each of its entries (the output of an interrupted compaction). Any other
// such SST, or a complete one whose range is unknown (written by a cairnd
// older than the range collector), is damage.
//
// Errors other than damage (no database at `path`, unreadable directory)
// come back as a non-OK status.
absl::StatusOr<std::vector<std::string>> FindStoreDamage(
    const std::string& path);

}  // namespace cairn

#endif  // CAIRN_STORE_DAMAGE_CHECK_H_
