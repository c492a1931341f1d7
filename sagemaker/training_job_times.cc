// See training_job_times.h.
#include "sagemaker/training_job_times.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"

namespace cairn::sagemaker {
namespace {

using nlohmann::json;

struct Step {
  const char* status;
  double start;
  std::string message;
};

// The terminal step of an ended job, at `at`.
Step FinalStep(const JobStanding& s, double at) {
  if (s.status == "Completed")
    return {"Completed", at, "Training job completed"};
  if (s.status == "Failed") return {"Failed", at, "Training job failed"};
  if (s.secondary == "MaxRuntimeExceeded") {
    return {"MaxRuntimeExceeded", at,
            "Training job stopped: it ran longer than MaxRuntimeInSeconds"};
  }
  return {"Stopped", at, "Training job stopped"};
}

std::vector<Step> Steps(const JobMoments& m, const JobStanding& s) {
  std::vector<Step> steps = {
      {"Starting", m.created, "Starting the training job"}};
  const JobTimeline& t = m.timeline;
  if (t.training_start) {
    steps.push_back({"Training", *t.training_start, "Training in progress"});
  }
  const bool stopping = s.status == "Stopping" || s.status == "Stopped";
  if (t.exited && s.status != "Failed") {
    if (stopping) {
      steps.push_back(
          {"Stopping", *t.exited,
           s.stop_detail.empty()
               ? std::string("Stopping the training job")
               : absl::StrCat("Stopping the training job: ", s.stop_detail)});
    } else {
      steps.push_back(
          {"Uploading", *t.exited, "Uploading generated training model"});
    }
  }
  const bool ended =
      s.status == "Completed" || s.status == "Failed" || s.status == "Stopped";
  if (ended) {
    const double at = t.packed && s.status != "Failed"
                          ? *t.packed
                          : m.ended.value_or(steps.back().start);
    steps.push_back(FinalStep(s, std::max(at, steps.back().start)));
  }
  return steps;
}

bool Ended(const JobStanding& s) {
  return s.status == "Completed" || s.status == "Failed" ||
         s.status == "Stopped";
}

}  // namespace

json SecondaryStatusTransitions(const JobMoments& moments,
                                const JobStanding& standing) {
  const std::vector<Step> steps = Steps(moments, standing);
  json out = json::array();
  for (size_t i = 0; i < steps.size(); ++i) {
    json t = {{"Status", steps[i].status},
              {"StartTime", steps[i].start},
              {"StatusMessage", steps[i].message}};
    if (i + 1 < steps.size()) {
      t["EndTime"] = steps[i + 1].start;
    } else if (Ended(standing)) {
      t["EndTime"] = steps[i].start;
    }
    out.push_back(std::move(t));
  }
  return out;
}

double LastModifiedTime(const JobMoments& moments,
                        const JobStanding& standing) {
  return Steps(moments, standing).back().start;
}

void AddJobTimes(const JobMoments& moments, const JobStanding& standing,
                 json* out) {
  json& o = *out;
  o["SecondaryStatusTransitions"] =
      SecondaryStatusTransitions(moments, standing);
  o["LastModifiedTime"] = LastModifiedTime(moments, standing);
  const std::optional<double>& start = moments.timeline.training_start;
  if (start) o["TrainingStartTime"] = *start;
  if (!Ended(standing) || !moments.ended) return;
  o["TrainingEndTime"] = *moments.ended;
  if (!start) return;
  // SageMaker counts at least one second.
  const int64_t seconds =
      std::max<int64_t>(1, std::llround(*moments.ended - *start));
  o["TrainingTimeInSeconds"] = seconds;
  o["BillableTimeInSeconds"] = seconds;
}

}  // namespace cairn::sagemaker
