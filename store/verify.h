// Verifying a store without writing to it: the checks of damage_check.h,
// every block checksum of every SST, and decoding every record.
#ifndef CAIRN_STORE_VERIFY_H_
#define CAIRN_STORE_VERIFY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cairn {

// Records of a store by kind.
struct RecordCounts {
  int64_t studies = 0;
  int64_t trials = 0;
  int64_t measurements = 0;
  int64_t other = 0;  // meta/, n/, k/ and prefixes of later components.
};

struct VerifyReport {
  int64_t files_checked = 0;  // SSTs, WALs and MANIFESTs read.
  RecordCounts records;       // Records that decoded.
  // One line per problem, each naming the file or the key.
  std::vector<std::string> problems;
  // What was found that is not damage (a WAL record torn by a crash, which
  // was never acknowledged: store/wal_tail.h).
  std::vector<std::string> notes;
};

// Verifies the store at `path` (read-only; holds the store's lock while it
// reads, so it refuses with Unavailable while a cairnd has the store open).
// Damage comes back as problems in an OK report; a non-OK status means the
// store could not be checked (NotFound: no database at `path`).
absl::StatusOr<VerifyReport> VerifyStore(const std::string& path);

// The report as cairnd --verify prints it (several lines, ending in "\n").
std::string FormatVerifyReport(const std::string& path,
                               const VerifyReport& report);

}  // namespace cairn

#endif  // CAIRN_STORE_VERIFY_H_
