// WarmStartConfig of CreateHyperParameterTuningJob: which earlier tuning
// jobs (parents) a new one starts from, and the parents' completed training
// jobs as prior trials of the new job's study. The study is created paused,
// told these trials (SUCCEEDED, with the objective as final measurement),
// then started, so its designer's first suggestions already see them (the
// GP bandit models them instead of running its initial design).
//
// Rules (SageMaker's warm-start restrictions): 1 to 5 distinct parents,
// each a finished tuning job (not InProgress) with the same objective
// metric; IdenticalDataAndAlgorithm also keeps the training image, the
// input channels and the number of static plus tunable hyperparameters.
// A parent's training job carries over when it Completed with an
// objective value and each of the new job's ranges holds its value for
// that hyperparameter (tuned or static in the parent); others are left
// out, as are hyperparameters the new job does not tune.
#ifndef CAIRN_SAGEMAKER_WARM_START_H_
#define CAIRN_SAGEMAKER_WARM_START_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {

inline constexpr int kMaxWarmStartParents = 5;
// Trial label of a prior trial: the parent tuning job it came from. Such
// trials are not training jobs of the new tuning job.
inline constexpr char kWarmStartTrialLabel[] = "sagemaker-warm-start";
// Trial label of a prior trial: the id of the parent's trial it copies
// (so OverallBestTrainingJob can name the parent's training job).
inline constexpr char kWarmStartTrialIdLabel[] = "sagemaker-warm-start-trial";
// Study labels keeping WarmStartConfig for Describe: the type, and the
// parents' names joined by ','.
inline constexpr char kWarmStartTypeLabel[] = "sagemaker-warm-start-type";
inline constexpr char kWarmStartParentsLabel[] = "sagemaker-warm-start-parents";

struct WarmStartConfig {
  std::string type;  // IdenticalDataAndAlgorithm or TransferLearning
  std::vector<std::string> parents;  // HyperParameterTuningJobName of each
};

// Parses and validates WarmStartConfig (the JSON member). InvalidArgument
// naming the field and value otherwise.
absl::StatusOr<WarmStartConfig> ParseWarmStartConfig(
    const nlohmann::json& config);

// A parent as read from the store: its study and trials.
struct WarmStartParent {
  cairn::v1::Study study;
  std::vector<cairn::v1::Trial> trials;
};

// The prior trials for `child` (the new tuning job's study, as
// TuningJobStudy makes it) from `parents` (in config.parents order),
// each with parameters of the child's spec, the objective as final
// measurement, kWarmStartTrialLabel and kWarmStartTrialIdLabel. InvalidArgument
// when a parent is not finished or breaks a rule above.
absl::StatusOr<std::vector<cairn::v1::Trial>> WarmStartTrials(
    const WarmStartConfig& config, const cairn::v1::Study& child,
    const std::vector<WarmStartParent>& parents);

// Sets the warm-start labels on `study` (from `config`).
void SetWarmStartLabels(const WarmStartConfig& config, cairn::v1::Study* study);

// WarmStartConfig as Describe returns it; null when `study` has none.
nlohmann::json WarmStartConfigJson(const cairn::v1::Study& study);

// Whether `trial` is a prior trial copied from a parent.
bool IsWarmStartTrial(const cairn::v1::Trial& trial);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_WARM_START_H_
