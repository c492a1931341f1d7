// DescribeHyperParameterTuningJob and ListHyperParameterTuningJobs'
// summaries from a tuning job's study and trials: the request echoed as
// SageMaker echoes it (HyperParameterTuningJobConfig and
// TrainingJobDefinition, rebuilt from the study: the spec keeps what the
// request asked for, defaults filled in), status, counters, times, the
// best training job and, for a Failed job, FailureReason.
//
// Rebuilt, not stored: range bounds come back in shortest form ("1e-4"
// reads "0.0001"), a range given no ScalingType reads Auto,
// TrainingJobEarlyStoppingType is always present (Off by default) and
// Hyperband's MinResource (default 1) too.
#ifndef CAIRN_SAGEMAKER_TUNING_CONFIG_VIEW_H_
#define CAIRN_SAGEMAKER_TUNING_CONFIG_VIEW_H_

#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {

// HyperParameterTuningJobConfig: Strategy, StrategyConfig (Hyperband),
// HyperParameterTuningJobObjective, ResourceLimits, ParameterRanges,
// TrainingJobEarlyStoppingType.
nlohmann::json TuningJobConfigJson(const cairn::v1::Study& study,
                                   const std::vector<cairn::v1::Trial>& trials);

// TrainingJobDefinition: the definition as requested (StaticHyperParameters,
// AlgorithmSpecification, RoleArn, channels, output, resources, stopping
// condition, ...), defaults filled in.
nlohmann::json TrainingJobDefinitionJson(const cairn::v1::Study& study);

// DescribeHyperParameterTuningJob's response, all but
// OverallBestTrainingJob (which may need the parents' studies): name,
// ARN, config, definition, status, CreationTime, LastModifiedTime (the
// latest change of the job or one of its training jobs),
// HyperParameterTuningEndTime once it ended (its last training job's
// end), counters, BestTrainingJob, WarmStartConfig and, when Failed,
// FailureReason (why the study failed and the last failed job's reason,
// at most 1024 bytes).
nlohmann::json DescribeTuningJobJson(
    const cairn::v1::Study& study, const std::vector<cairn::v1::Trial>& trials);

// One HyperParameterTuningJobSummary of ListHyperParameterTuningJobs.
nlohmann::json TuningJobSummaryJson(
    const cairn::v1::Study& study, const std::vector<cairn::v1::Trial>& trials);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TUNING_CONFIG_VIEW_H_
