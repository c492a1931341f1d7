// Study controller: a metric's learning curve, paged or downsampled, read
// from the store without loading the whole curve. See study_manager.h.
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "trials/curve_downsampler.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"

namespace cairn {

using cairn::api::kDefaultHistoryPageSize;
using cairn::api::kMaxHistoryPageSize;
using cairn::v1::Measurement;
using study_manager_internal::ParsePageToken;

namespace {

absl::Status CheckRange(const char* field, int value, int min) {
  if (value == 0 || (value >= min && value <= kMaxHistoryPageSize)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value,
                                                 " must be 0 or between ", min,
                                                 " and ", kMaxHistoryPageSize));
}

absl::Status ValidateQuery(const MetricHistoryQuery& q) {
  if (q.metric_id.empty()) {
    return absl::InvalidArgumentError("metric_id: must not be empty");
  }
  if (absl::Status s = CheckRange("page_size", q.page_size, 1); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRange("max_points", q.max_points, 2); !s.ok()) {
    return s;
  }
  if (q.start_step.has_value() && q.end_step.has_value() &&
      *q.start_step > *q.end_step) {
    return absl::InvalidArgumentError(absl::StrCat(
        "start_step: ", *q.start_step, " is after end_step ", *q.end_step));
  }
  return absl::OkStatus();
}

// The point of the queried metric in `m`, if it has one in the step range.
std::optional<Measurement> PointOf(const Measurement& m,
                                   const MetricHistoryQuery& q) {
  if ((q.start_step.has_value() && m.step_count() < *q.start_step) ||
      (q.end_step.has_value() && m.step_count() > *q.end_step)) {
    return std::nullopt;
  }
  for (const auto& metric : m.metrics()) {
    if (metric.metric_id() != q.metric_id) continue;
    Measurement point;
    point.set_step_count(m.step_count());
    *point.mutable_elapsed_duration() = m.elapsed_duration();
    *point.add_metrics() = metric;
    return point;
  }
  return std::nullopt;
}

// Up to page_size points from the measurement with sequence number
// `start_seq` on; the token names the measurement of the next point.
absl::StatusOr<MetricHistoryPage> ReadPage(MeasurementStore* store,
                                           int64_t study_id, int64_t trial_id,
                                           int64_t start_seq,
                                           const MetricHistoryQuery& q) {
  const size_t page_size =
      q.page_size == 0 ? kDefaultHistoryPageSize : q.page_size;
  MetricHistoryPage page;
  absl::Status s = store->ScanMeasurements(
      study_id, trial_id, {start_seq, false},
      [&](int64_t seq, const Measurement& m) {
        std::optional<Measurement> point = PointOf(m, q);
        if (!point.has_value()) return true;
        if (page.points.size() == page_size) {
          page.next_page_token = absl::StrCat(seq);
          return false;
        }
        page.points.push_back(*std::move(point));
        return true;
      });
  if (!s.ok()) return s;
  return page;
}

// Every point of the range, downsampled to q.max_points: one pass counts the
// points, a second feeds them to the downsampler (points appended meanwhile
// are left out).
absl::StatusOr<MetricHistoryPage> ReadDownsampled(MeasurementStore* store,
                                                  int64_t study_id,
                                                  int64_t trial_id,
                                                  const MetricHistoryQuery& q) {
  int64_t count = 0;
  absl::Status s = store->ScanMeasurements(study_id, trial_id, {},
                                           [&](int64_t, const Measurement& m) {
                                             if (PointOf(m, q).has_value())
                                               ++count;
                                             return true;
                                           });
  if (!s.ok()) return s;
  CurveDownsampler sampler(count, q.max_points);
  int64_t added = 0;
  s = store->ScanMeasurements(study_id, trial_id, {},
                              [&](int64_t, const Measurement& m) {
                                if (added == count) return false;
                                std::optional<Measurement> p = PointOf(m, q);
                                if (p.has_value()) {
                                  sampler.Add(*std::move(p));
                                  ++added;
                                }
                                return true;
                              });
  if (!s.ok()) return s;
  MetricHistoryPage page;
  page.points = sampler.Finish();
  return page;
}

}  // namespace

absl::StatusOr<MetricHistoryPage> StudyManager::GetMetricHistory(
    const std::string& trial_name, const MetricHistoryQuery& query) {
  if (absl::Status s = ValidateQuery(query); !s.ok()) return s;
  absl::StatusOr<int64_t> start_seq = ParsePageToken(query.page_token);
  if (!start_seq.ok()) return start_seq.status();
  absl::StatusOr<TrialRef> tn = ResolveTrial(trial_name, "trial_name");
  if (!tn.ok()) return tn.status();
  StudyState& st = *tn->study;
  WriteScope scope;
  {
    LockedStudy lock(st, &scope);
    if (absl::Status s = st.FindTrial(tn->trial_id, trial_name).status();
        !s.ok()) {
      return s;
    }
  }
  // Every measurement acknowledged so far is on disk once this returns.
  if (absl::Status s = AwaitScope(scope); !s.ok()) return s;
  if (query.max_points > 0) {
    return ReadDownsampled(store_, st.id, tn->trial_id, query);
  }
  return ReadPage(store_, st.id, tn->trial_id, *start_seq, query);
}

}  // namespace cairn
