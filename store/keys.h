// Key encoding for the RocksDB layout documented in store/store.h. Private to
// store/ (and its tests): nothing outside store/ should build keys.
//
// Ids are encoded as 16-digit lower-case hex so that byte order equals numeric
// order; every id in a key must be > 0 (sequence numbers may be 0).
#ifndef CAIRN_STORE_KEYS_H_
#define CAIRN_STORE_KEYS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace cairn {
namespace store_keys {

inline constexpr absl::string_view kSchemaVersionKey = "meta/schema_version";
inline constexpr absl::string_view kNextStudyIdKey = "meta/next_study_id";
// When the store last resumed after a failed write (decimal Unix seconds);
// written to move RocksDB onto a fresh WAL (see RocksDbStore::Resume).
inline constexpr absl::string_view kLastResumeKey = "meta/last_resume";

inline constexpr absl::string_view kStudyPrefix = "s/";
inline constexpr absl::string_view kNamePrefix = "n/";
inline constexpr absl::string_view kMaxTrialPrefix = "k/";
inline constexpr absl::string_view kTrialPrefix = "t/";
inline constexpr absl::string_view kMeasurementPrefix = "m/";
inline constexpr absl::string_view kSummaryPrefix = "c/";
inline constexpr absl::string_view kTokenPrefix = "u/";
inline constexpr absl::string_view kAuditPrefix = "a/";
inline constexpr absl::string_view kJobPrefix = "j/";

// Number of characters of one encoded id.
inline constexpr size_t kIdWidth = 16;

// Appends the 16-digit lower-case hex form of `id` to `out`.
// REQUIRES: id >= 0.
void AppendHexId(int64_t id, std::string* out);
std::string HexId(int64_t id);
// Parses exactly 16 lower-case hex digits. Returns false on anything else
// (wrong length, other characters, value above INT64_MAX).
bool ParseHexId(absl::string_view hex, int64_t* id);

std::string StudyKey(int64_t study_id);                 // s/<study>
std::string NameKey(absl::string_view display_name);    // n/<display_name>
std::string TokenKey(absl::string_view token_name);     // u/<token name>
std::string AuditKey(int64_t event_id);                 // a/<event>
std::string JobKey(absl::string_view job_id);           // j/<job id>
std::string MaxTrialKey(int64_t study_id);              // k/<study>
std::string TrialKey(int64_t study_id, int64_t trial);  // t/<study>/<trial>
std::string SummaryKey(int64_t study_id);               // c/<study>
std::string TrialStudyPrefix(int64_t study_id);         // t/<study>/
// m/<study>/<trial>/<seq>
std::string MeasurementKey(int64_t study_id, int64_t trial_id, int64_t seq);
// m/<study>/<trial>/
std::string MeasurementTrialPrefix(int64_t study_id, int64_t trial_id);
// m/<study>/
std::string MeasurementStudyPrefix(int64_t study_id);

// The smallest key greater than every key starting with `prefix`, for use as
// an exclusive upper bound. REQUIRES: prefix is non-empty and its last byte is
// not 0xff (true for every prefix above, which end in '/').
std::string PrefixEnd(absl::string_view prefix);

// Parse the ids back out of full keys. Return false if `key` is not of the
// given form.
bool ParseStudyKey(absl::string_view key, int64_t* study_id);
bool ParseMaxTrialKey(absl::string_view key, int64_t* study_id);
bool ParseSummaryKey(absl::string_view key, int64_t* study_id);
bool ParseAuditKey(absl::string_view key, int64_t* event_id);
bool ParseTrialKey(absl::string_view key, int64_t* study_id, int64_t* trial_id);
bool ParseMeasurementKey(absl::string_view key, int64_t* study_id,
                         int64_t* trial_id, int64_t* seq);

}  // namespace store_keys
}  // namespace cairn

#endif  // CAIRN_STORE_KEYS_H_
