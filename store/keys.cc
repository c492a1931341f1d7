// Key encoding for the RocksDB store layout (see store/store.h).
#include "store/keys.h"

#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cairn {
namespace store_keys {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Consumes "<16 hex>" from the front of *s into *id.
bool ConsumeId(absl::string_view* s, int64_t* id) {
  if (s->size() < kIdWidth) return false;
  if (!ParseHexId(s->substr(0, kIdWidth), id)) return false;
  s->remove_prefix(kIdWidth);
  return true;
}

bool ConsumeSlash(absl::string_view* s) {
  if (s->empty() || s->front() != '/') return false;
  s->remove_prefix(1);
  return true;
}

}  // namespace

void AppendHexId(int64_t id, std::string* out) {
  char buf[kIdWidth];
  uint64_t v = static_cast<uint64_t>(id);
  for (int i = static_cast<int>(kIdWidth) - 1; i >= 0; --i) {
    buf[i] = kHexDigits[v & 0xf];
    v >>= 4;
  }
  out->append(buf, kIdWidth);
}

std::string HexId(int64_t id) {
  std::string out;
  AppendHexId(id, &out);
  return out;
}

bool ParseHexId(absl::string_view hex, int64_t* id) {
  if (hex.size() != kIdWidth) return false;
  uint64_t v = 0;
  for (char c : hex) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else {
      return false;
    }
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return false;
  }
  *id = static_cast<int64_t>(v);
  return true;
}

std::string StudyKey(int64_t study_id) {
  std::string key(kStudyPrefix);
  AppendHexId(study_id, &key);
  return key;
}

std::string NameKey(absl::string_view display_name) {
  return absl::StrCat(kNamePrefix, display_name);
}

std::string TokenKey(absl::string_view token_name) {
  return absl::StrCat(kTokenPrefix, token_name);
}

std::string JobKey(absl::string_view job_id) {
  return absl::StrCat(kJobPrefix, job_id);
}

std::string AuditKey(int64_t event_id) {
  std::string key(kAuditPrefix);
  AppendHexId(event_id, &key);
  return key;
}

std::string MaxTrialKey(int64_t study_id) {
  std::string key(kMaxTrialPrefix);
  AppendHexId(study_id, &key);
  return key;
}

std::string SummaryKey(int64_t study_id) {
  std::string key(kSummaryPrefix);
  AppendHexId(study_id, &key);
  return key;
}

std::string TrialStudyPrefix(int64_t study_id) {
  std::string key(kTrialPrefix);
  AppendHexId(study_id, &key);
  key.push_back('/');
  return key;
}

std::string TrialKey(int64_t study_id, int64_t trial_id) {
  std::string key = TrialStudyPrefix(study_id);
  AppendHexId(trial_id, &key);
  return key;
}

std::string MeasurementStudyPrefix(int64_t study_id) {
  std::string key;
  key.reserve(kMeasurementPrefix.size() + 3 * kIdWidth + 2);
  key.append(kMeasurementPrefix.data(), kMeasurementPrefix.size());
  AppendHexId(study_id, &key);
  key.push_back('/');
  return key;
}

std::string MeasurementTrialPrefix(int64_t study_id, int64_t trial_id) {
  std::string key = MeasurementStudyPrefix(study_id);
  AppendHexId(trial_id, &key);
  key.push_back('/');
  return key;
}

std::string MeasurementKey(int64_t study_id, int64_t trial_id, int64_t seq) {
  std::string key = MeasurementTrialPrefix(study_id, trial_id);
  AppendHexId(seq, &key);
  return key;
}

std::string PrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
  return end;
}

bool ParseStudyKey(absl::string_view key, int64_t* study_id) {
  if (!absl::ConsumePrefix(&key, kStudyPrefix)) return false;
  return ConsumeId(&key, study_id) && key.empty();
}

bool ParseMaxTrialKey(absl::string_view key, int64_t* study_id) {
  if (!absl::ConsumePrefix(&key, kMaxTrialPrefix)) return false;
  return ConsumeId(&key, study_id) && key.empty();
}

bool ParseSummaryKey(absl::string_view key, int64_t* study_id) {
  if (!absl::ConsumePrefix(&key, kSummaryPrefix)) return false;
  return ConsumeId(&key, study_id) && key.empty();
}

bool ParseAuditKey(absl::string_view key, int64_t* event_id) {
  if (!absl::ConsumePrefix(&key, kAuditPrefix)) return false;
  return ConsumeId(&key, event_id) && key.empty();
}

bool ParseTrialKey(absl::string_view key, int64_t* study_id,
                   int64_t* trial_id) {
  if (!absl::ConsumePrefix(&key, kTrialPrefix)) return false;
  return ConsumeId(&key, study_id) && ConsumeSlash(&key) &&
         ConsumeId(&key, trial_id) && key.empty();
}

bool ParseMeasurementKey(absl::string_view key, int64_t* study_id,
                         int64_t* trial_id, int64_t* seq) {
  if (!absl::ConsumePrefix(&key, kMeasurementPrefix)) return false;
  return ConsumeId(&key, study_id) && ConsumeSlash(&key) &&
         ConsumeId(&key, trial_id) && ConsumeSlash(&key) &&
         ConsumeId(&key, seq) && key.empty();
}

}  // namespace store_keys
}  // namespace cairn
