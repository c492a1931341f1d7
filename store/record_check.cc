// See record_check.h.
#include "store/record_check.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cairn/v1/admin_service.pb.h"
#include "cairn/v1/job_service.pb.h"
#include "cairn/v1/study.pb.h"
#include "store/keys.h"
#include "store/summary_record.h"

namespace cairn {
namespace {

namespace keys = store_keys;

absl::Status Bad(absl::string_view key, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("key \"", absl::CHexEscape(key), "\": ", what));
}

template <typename Proto>
bool Parses(absl::string_view value) {
  Proto proto;
  return proto.ParseFromArray(value.data(), static_cast<int>(value.size()));
}

// Decimal number >= min.
bool IsNumber(absl::string_view value, int64_t min) {
  int64_t n = 0;
  return absl::SimpleAtoi(value, &n) && n >= min;
}

absl::StatusOr<RecordInfo> CheckIds(absl::string_view key,
                                    absl::string_view value) {
  RecordInfo info;
  int64_t trial = 0;
  int64_t seq = 0;
  if (absl::StartsWith(key, keys::kStudyPrefix)) {
    info.kind = RecordKind::kStudy;
    if (!keys::ParseStudyKey(key, &info.study_id)) return Bad(key, "bad key");
    if (!Parses<cairn::v1::Study>(value)) return Bad(key, "not a Study");
  } else if (absl::StartsWith(key, keys::kMaxTrialPrefix)) {
    info.kind = RecordKind::kMaxTrialId;
    if (!keys::ParseMaxTrialKey(key, &info.study_id)) {
      return Bad(key, "bad key");
    }
    if (!IsNumber(value, 0)) return Bad(key, "not a trial id");
  } else if (absl::StartsWith(key, keys::kSummaryPrefix)) {
    info.kind = RecordKind::kSummary;
    if (!keys::ParseSummaryKey(key, &info.study_id)) return Bad(key, "bad key");
    TrialSummary summary;
    if (!keys::DecodeSummary(value, &summary)) {
      return Bad(key, "not a trial summary");
    }
  } else if (absl::StartsWith(key, keys::kTrialPrefix)) {
    info.kind = RecordKind::kTrial;
    if (!keys::ParseTrialKey(key, &info.study_id, &trial)) {
      return Bad(key, "bad key");
    }
    if (!Parses<cairn::v1::Trial>(value)) return Bad(key, "not a Trial");
  } else if (absl::StartsWith(key, keys::kMeasurementPrefix)) {
    info.kind = RecordKind::kMeasurement;
    if (!keys::ParseMeasurementKey(key, &info.study_id, &trial, &seq)) {
      return Bad(key, "bad key");
    }
    if (!Parses<cairn::v1::Measurement>(value)) {
      return Bad(key, "not a Measurement");
    }
  }
  return info;
}

}  // namespace

absl::StatusOr<RecordInfo> CheckRecord(absl::string_view key,
                                       absl::string_view value) {
  RecordInfo info;
  if (key == keys::kSchemaVersionKey || key == keys::kNextStudyIdKey) {
    info.kind = RecordKind::kMeta;
    if (!IsNumber(value, 1)) return Bad(key, "not a positive number");
    return info;
  }
  if (key == keys::kLastResumeKey) {
    info.kind = RecordKind::kMeta;
    if (!IsNumber(value, 0)) return Bad(key, "not a number");
    return info;
  }
  if (absl::StartsWith(key, keys::kTokenPrefix)) {
    if (!Parses<cairn::v1::TokenRecord>(value)) {
      return Bad(key, "not a TokenRecord");
    }
    return info;  // kOther: kept by --repair.
  }
  if (absl::StartsWith(key, keys::kJobPrefix)) {
    if (!Parses<cairn::v1::JobRecord>(value))
      return Bad(key, "not a JobRecord");
    return info;  // kOther: kept by --repair.
  }
  if (absl::StartsWith(key, keys::kAuditPrefix)) {
    int64_t id = 0;
    if (!keys::ParseAuditKey(key, &id)) return Bad(key, "bad key");
    if (!Parses<cairn::v1::AuditEvent>(value)) {
      return Bad(key, "not an AuditEvent");
    }
    return info;  // kOther: kept by --repair.
  }
  if (absl::StartsWith(key, keys::kNamePrefix)) {
    info.kind = RecordKind::kNameIndex;
    if (key.size() == keys::kNamePrefix.size()) return Bad(key, "no name");
    if (!absl::SimpleAtoi(value, &info.study_id) || info.study_id < 1) {
      return Bad(key, "not a study id");
    }
    return info;
  }
  return CheckIds(key, value);
}

}  // namespace cairn
