// CreateTrainingJob's request: parsed from the JSON body boto3 sends and
// checked against SageMaker's published constraints (name patterns,
// lengths, enums) plus what Cairn can run locally. Every refusal is
// InvalidArgument (SageMaker's ValidationException) naming the field and
// its value, quoted to at most 100 bytes.
#ifndef CAIRN_SAGEMAKER_TRAINING_JOB_REQUEST_H_
#define CAIRN_SAGEMAKER_TRAINING_JOB_REQUEST_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/sagemaker.pb.h"

namespace cairn::sagemaker {

// Longest run a job may ask for (SageMaker's 28 days) and the default
// when StoppingCondition.MaxRuntimeInSeconds is absent (1 day).
inline constexpr int kMaxRuntimeSeconds = 28 * 24 * 3600;
inline constexpr int kDefaultRuntimeSeconds = 24 * 3600;
// Most containers (hosts) one job may run.
inline constexpr int kMaxInstanceCount = 8;
inline constexpr char kDefaultCheckpointPath[] = "/opt/ml/checkpoints";

// Parses and validates a body; fills defaults (MaxRuntimeInSeconds,
// CheckpointConfig.LocalPath, InstanceCount 1, TrainingInputMode File).
// Members Cairn does not know are refused by name.
absl::StatusOr<cairn::v1::SageMakerCreateTrainingJobRequest>
ParseCreateTrainingJob(absl::string_view body);

// The checks ParseCreateTrainingJob applies after parsing.
absl::Status ValidateCreateTrainingJob(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request);

// OK for a TrainingJobName: 1 to 63 of [A-Za-z0-9-], starting and ending
// with a letter or digit. `field` names it in the error.
absl::Status ValidateJobName(absl::string_view field, absl::string_view name,
                             size_t max_length = 63);

// InvalidArgument "FIELD 'VALUE': WHY" with VALUE escaped and cut.
absl::Status InvalidField(absl::string_view field, absl::string_view value,
                          absl::string_view why);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TRAINING_JOB_REQUEST_H_
