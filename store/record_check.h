// Decoding one stored record (key and value) of the layout in store/store.h,
// for the checks that read a store record by record: verify and repair.
#ifndef CAIRN_STORE_RECORD_CHECK_H_
#define CAIRN_STORE_RECORD_CHECK_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn {

enum class RecordKind {
  kMeta,         // meta/...
  kStudy,        // s/<study>
  kNameIndex,    // n/<display_name>
  kMaxTrialId,   // k/<study>
  kSummary,      // c/<study>
  kTrial,        // t/<study>/<trial>
  kMeasurement,  // m/<study>/<trial>/<seq>
  kOther,        // A prefix this layout does not know (a later component's).
};

// A decoded record: its kind and the study it belongs to (0 for kMeta and
// kOther; the id the value names for kNameIndex).
struct RecordInfo {
  RecordKind kind = RecordKind::kOther;
  int64_t study_id = 0;
};

// Decodes `key` and `value`: the key must have its prefix's form and the
// value must parse as that prefix's proto or decimal number. DataLoss
// naming the (escaped) key and what is wrong otherwise.
absl::StatusOr<RecordInfo> CheckRecord(absl::string_view key,
                                       absl::string_view value);

}  // namespace cairn

#endif  // CAIRN_STORE_RECORD_CHECK_H_
