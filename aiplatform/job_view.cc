// See job_view.h.
#include "aiplatform/job_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "aiplatform/job_study.h"
#include "api/trial_states.h"
#include "google/protobuf/util/time_util.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;
using cairn::v1::Trial;
using google::protobuf::Timestamp;
using google::protobuf::util::TimeUtil;

// The shortest decimal text that reads back as `v` ("3", "0.01").
std::string NumberText(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

Job::State TrialState(const Trial& t) {
  switch (t.state()) {
    case Trial::SUCCEEDED:
      return Job::SUCCEEDED;
    case Trial::FAILED:
    case Trial::INFEASIBLE:
      return Job::FAILED;
    case Trial::CANCELLED:
      return Job::CANCELLED;
    default:
      return api::HasLiveJob(t) ? Job::RUNNING : Job::QUEUED;
  }
}

bool MetricOf(const cairn::v1::Measurement& m, const std::string& tag,
              cairn::v1::HyperparameterMetric* out) {
  for (const cairn::v1::Metric& metric : m.metrics()) {
    if (metric.metric_id() != tag) continue;
    out->set_training_step(m.step_count());
    out->set_objective_value(metric.value());
    return true;
  }
  return false;
}

cairn::v1::HyperparameterOutput TrialOutput(const Trial& t,
                                            const std::string& tag) {
  cairn::v1::HyperparameterOutput out;
  out.set_trial_id(absl::StrCat(t.id()));
  for (const cairn::v1::Parameter& p : t.parameters()) {
    (*out.mutable_hyperparameters())[p.parameter_id()] =
        p.value().has_string_value() ? p.value().string_value()
                                     : NumberText(p.value().number_value());
  }
  if (t.has_final_measurement()) {
    MetricOf(t.final_measurement(), tag, out.mutable_final_metric());
  }
  for (const cairn::v1::Measurement& m : t.measurements()) {
    cairn::v1::HyperparameterMetric metric;
    if (MetricOf(m, tag, &metric)) *out.add_all_metrics() = metric;
  }
  out.set_is_trial_stopped_early(t.stopped_early());
  if (t.has_start_time()) *out.mutable_start_time() = t.start_time();
  if (t.has_end_time()) *out.mutable_end_time() = t.end_time();
  out.set_state(TrialState(t));
  return out;
}

// Why a job without a successful trial failed.
std::string FailureMessage(const cairn::v1::Study& study,
                           const std::vector<const Trial*>& own) {
  for (const Trial* t : own) {
    if (t->state() != Trial::FAILED && t->state() != Trial::INFEASIBLE) {
      continue;
    }
    std::string why =
        !t->job().message().empty() ? t->job().message()
        : !t->infeasible_reason().empty()
            ? t->infeasible_reason()
            : absl::StrCat("exit code ", t->job().last_exit_code());
    std::string out = absl::StrCat("trial ", t->id(), " failed: ", why);
    if (!study.inactive_reason().empty()) {
      absl::StrAppend(&out, " (", study.inactive_reason(), ")");
    }
    return out;
  }
  if (!study.inactive_reason().empty()) return study.inactive_reason();
  return "the job ended without a successful trial";
}

Job::State DeriveState(const cairn::v1::JobRecord& record,
                       const cairn::v1::Study& study,
                       const std::vector<const Trial*>& own, int succeeded) {
  bool pending = false, process = false, started = false;
  for (const Trial* t : own) {
    pending |= api::IsPendingState(t->state());
    // A process may outlive its trial (completed through the API).
    process |= api::HasLiveJob(*t);
    started |= api::HasLiveJob(*t) || !api::IsPendingState(t->state());
  }
  if (record.cancel_requested()) {
    return process ? Job::CANCELLING : Job::CANCELLED;
  }
  const int max_trials =
      study.spec().max_trials() - record.prior_trial_ids_size();
  const bool ended =
      !pending &&
      (study.state() == cairn::v1::Study::FAILED ||
       study.state() == cairn::v1::Study::COMPLETED ||
       (max_trials > 0 && static_cast<int>(own.size()) >= max_trials));
  if (ended) {
    if (study.state() == cairn::v1::Study::FAILED || succeeded == 0) {
      return Job::FAILED;
    }
    return Job::SUCCEEDED;
  }
  if (started) return Job::RUNNING;
  return own.empty() ? Job::QUEUED : Job::PREPARING;
}

void SetTimes(const cairn::v1::JobRecord& record,
              const std::vector<const Trial*>& own, Job& job) {
  Timestamp start, end;
  for (const Trial* t : own) {
    if (t->has_start_time() &&
        (!job.has_start_time() || t->start_time() < start)) {
      start = t->start_time();
      *job.mutable_start_time() = start;
    }
    if (t->has_end_time() && (end.seconds() == 0 || end < t->end_time())) {
      end = t->end_time();
    }
  }
  if (!IsFinal(job.state())) return;
  if (record.has_cancel_time() &&
      (end.seconds() == 0 || end < record.cancel_time())) {
    end = record.cancel_time();
  }
  if (end.seconds() == 0) end = record.job().create_time();
  *job.mutable_end_time() = end;
  if (!job.has_start_time()) *job.mutable_start_time() = end;
}

}  // namespace

bool IsFinal(Job::State state) {
  return state == Job::SUCCEEDED || state == Job::FAILED ||
         state == Job::CANCELLED;
}

Job JobView(const cairn::v1::JobRecord& record, const cairn::v1::Study& study,
            const std::vector<Trial>& trials) {
  Job job = record.job();
  const absl::flat_hash_set<int64_t> prior(record.prior_trial_ids().begin(),
                                           record.prior_trial_ids().end());
  std::vector<const Trial*> own;
  int succeeded = 0;
  for (const Trial& t : trials) {
    if (prior.contains(t.id())) continue;
    own.push_back(&t);
    if (t.state() == Trial::SUCCEEDED) ++succeeded;
  }
  job.set_state(DeriveState(record, study, own, succeeded));
  if (job.state() == Job::FAILED) {
    job.set_error_message(FailureMessage(study, own));
  } else if (job.state() == Job::CANCELLING || job.state() == Job::CANCELLED) {
    job.set_error_message(record.cancel_reason().empty()
                              ? kUserCancelReason
                              : record.cancel_reason());
  }
  SetTimes(record, own, job);
  cairn::v1::TrainingOutput& out = *job.mutable_training_output();
  out.set_completed_trial_count(succeeded);
  const auto& input = record.job().training_input();
  if (input.has_hyperparameters()) {
    const std::string& tag =
        input.hyperparameters().hyperparameter_metric_tag();
    out.set_is_hyperparameter_tuning_job(true);
    out.set_hyperparameter_metric_tag(tag.empty() ? kDefaultMetricTag : tag);
    for (const Trial* t : own)
      *out.add_trials() = TrialOutput(*t, out.hyperparameter_metric_tag());
  }
  return job;
}

}  // namespace cairn::aiplatform
