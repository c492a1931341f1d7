// The encoding of a study's c/ record (TrialSummary, store/store.h). Private
// to store/ (and its tests).
//
// Text, one entry per line, so that `ldb` shows it readably:
//   s <Trial::State number> <count>
//   b <value, %.17g> <C-escaped metric id>
//   j <count> live_jobs_of_ended      (only when not 0)
#ifndef CAIRN_STORE_SUMMARY_RECORD_H_
#define CAIRN_STORE_SUMMARY_RECORD_H_

#include <string>

#include "absl/strings/string_view.h"
#include "store/store.h"

namespace cairn {
namespace store_keys {

std::string EncodeSummary(const TrialSummary& summary);
// false if `value` is not an encoded summary (counts must be >= 0).
bool DecodeSummary(absl::string_view value, TrialSummary* summary);

}  // namespace store_keys
}  // namespace cairn

#endif  // CAIRN_STORE_SUMMARY_RECORD_H_
