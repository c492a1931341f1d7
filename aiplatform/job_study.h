// An AI Platform job as a Cairn study: the HyperparameterSpec becomes the
// StudySpec (a plain training job: no parameters, one trial), the scale tier
// the job template's GPUs and replica groups, the package the command
// `python3 -m MODULE ARGS...` with the staged package on PYTHONPATH, or a
// custom container (masterConfig.imageUri) the template's container
// (job_container.h).
#ifndef CAIRN_AIPLATFORM_JOB_STUDY_H_
#define CAIRN_AIPLATFORM_JOB_STUDY_H_

#include <string>

#include "absl/status/statusor.h"
#include "cairn/v1/aiplatform.pb.h"
#include "cairn/v1/study.pb.h"

namespace cairn::aiplatform {

// The metric a job optimizes when hyperparameterMetricTag is empty.
inline constexpr char kDefaultMetricTag[] = "training/hptuning/metric";

struct StudyOptions {
  // Directory of the staged package (PYTHONPATH). Required.
  std::string staging_dir;
  // The Python interpreter. Default: python3 (found on PATH).
  std::string python = "python3";
};

// The study that runs `job` (display name: the job id). InvalidArgument
// naming the field (as a config path, e.g.
// "trainingInput.hyperparameters.params[1].minValue") for what Cairn cannot
// run: no pythonModule (and no imageUri), the container rules of
// AddContainer, a scheduling time out of range (job_schedule.h), a CUSTOM tier
// without masterType or with a count and no type, counts without CUSTOM,
// BASIC_TPU, a gs:// jobDir, a bad parameter. (Checks that need the server,
// such as job dir placement and GPU counts, are the study's own when it is
// created.)
absl::StatusOr<cairn::v1::Study> MakeJobStudy(const cairn::v1::Job& job,
                                              const StudyOptions& options);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_JOB_STUDY_H_
