// Finding damage in a store before RocksDB opens it read-write (a read-write
// open deletes files it believes obsolete, and opens some damage silently).
// The check opens the store read-only, writes nothing, and looks for:
//  - damage RocksDB itself reports (a corrupt WAL, MANIFEST or SST);
//  - an SST the MANIFEST does not reference that holds data nothing else
//    holds (the MANIFEST is damaged or old), told apart from the harmless
//    leftovers of a flush or compaction interrupted by a crash by its
//    sequence numbers (see FindStoreDamage);
//  - writes that were durable (store/durable_mark.h) but that RocksDB no
//    longer recovers: the WAL that held them is missing, empty or cut short.
#ifndef CAIRN_STORE_DAMAGE_CHECK_H_
#define CAIRN_STORE_DAMAGE_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cairn {

// Returns one line per damage found in the store at `path`, each naming the
// file and the kind of damage ("file 000012.log is missing: ...", "the
// MANIFEST does not reference 000010.sst: ..."); empty when none is found.
// Never writes to the directory.
//
// An SST on disk that the MANIFEST does not reference is harmless when the
// store holds its writes elsewhere: when its largest sequence number is at
// most the MANIFEST's last one (manifest_state.h: the referenced SSTs hold
// every write up to there; so the output of an interrupted compaction, or
// the input of a finished one that a crash kept RocksDB from deleting), or
// when all its sequence numbers lie in the range the WALs on disk replay
// (the output of an interrupted flush, whose WAL RocksDB deletes only after
// the MANIFEST records the flush), or when it is not a complete table (a
// MANIFEST only references complete, synced SSTs, so one cut short is what
// a kill -9 left of a flush or compaction). Any other such SST, or a
// complete one whose range is unknown (written by a cairnd older than the
// range collector), is damage.
//
// Errors other than damage (no database at `path`, unreadable directory)
// come back as a non-OK status.
absl::StatusOr<std::vector<std::string>> FindStoreDamage(
    const std::string& path);

}  // namespace cairn

#endif  // CAIRN_STORE_DAMAGE_CHECK_H_
