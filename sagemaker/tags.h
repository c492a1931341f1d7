// SageMaker tags (AddTags, ListTags, DeleteTags, and Tags on Create) as
// labels of the job's study: tag KEY is label "aws-tag:KEY", so tags never
// clash with the labels Cairn itself keeps on the study; a tuning job's
// training job (a trial of the tuning job's study) keeps its own as
// "aws-trial-tag:TRIAL:KEY" there, sharing the study's label limit. A resource
// is named by its ARN (training-job/NAME or hyper-parameter-tuning-job/NAME).
// Limits are SageMaker's: at most 50 tags per resource, keys 1 to 128 and
// values up to 256 characters of letters, digits, spaces and _.:/=+-@,
// keys not starting with "aws:".
#ifndef CAIRN_SAGEMAKER_TAGS_H_
#define CAIRN_SAGEMAKER_TAGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/sagemaker.pb.h"
#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {

inline constexpr int kMaxTags = 50;
inline constexpr char kTagLabelPrefix[] = "aws-tag:";
inline constexpr char kTrialTagLabelPrefix[] = "aws-trial-tag:";

// The job an ARN names.
struct TaggedResource {
  bool tuning_job = false;  // hyper-parameter-tuning-job/, else training-job/
  std::string name;
};

// ResourceArn of one of Cairn's jobs (as TrainingJobArn / TuningJobArn
// make them). InvalidArgument naming ResourceArn otherwise.
absl::StatusOr<TaggedResource> ParseResourceArn(absl::string_view arn);

// Validates `tags` (field names them in errors): at most kMaxTags, each
// key and value as above, no key twice.
absl::Status ValidateTags(absl::string_view field,
                          const std::vector<cairn::v1::SageMakerTag>& tags);

// Parses a JSON list of {"Key", "Value"} and validates it.
absl::StatusOr<std::vector<cairn::v1::SageMakerTag>> ParseTags(
    absl::string_view field, const nlohmann::json& tags);

// The label prefix of a resource's own tags: kTagLabelPrefix for a job's
// study (trial_id 0), "aws-trial-tag:N:" for trial N of a tuning job's
// study (one of its training jobs).
std::string TagLabelPrefix(int64_t trial_id = 0);

// The study labels holding `tags` of the resource `trial_id` names.
std::map<std::string, std::string> TagLabels(
    const std::vector<cairn::v1::SageMakerTag>& tags, int64_t trial_id = 0);

// The tags of the resource, as ListTags returns them, sorted by key: a
// tuning job's training job has its tuning job's tags (SageMaker adds them
// to every training job the tuning job launches) and its own, which win.
nlohmann::json TagsJson(const cairn::v1::Study& study, int64_t trial_id = 0);

// ResourceExhausted (ResourceLimitExceeded) when adding `tags` to the
// resource's would leave more than kMaxTags.
absl::Status CheckTagRoom(const cairn::v1::Study& study,
                          const std::vector<cairn::v1::SageMakerTag>& tags,
                          int64_t trial_id = 0);

// InvalidArgument naming TagKeys when deleting `key` from a tuning job's
// training job would have to delete its tuning job's tag (inherited, not
// its own); OK otherwise.
absl::Status CheckOwnTag(const cairn::v1::Study& study, const std::string& key,
                         int64_t trial_id);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_TAGS_H_
