// ListTrainingJobs (and ListHyperParameterTuningJobs): its request (filters,
// sort, paging) and the page of TrainingJobSummaries it selects. NextToken is
// the offset of the next summary in the sorted, filtered list, so a list that
// changes between pages may repeat or skip a job (as a SageMaker list may).
#ifndef CAIRN_SAGEMAKER_LIST_QUERY_H_
#define CAIRN_SAGEMAKER_LIST_QUERY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {

struct ListQuery {
  int max_results = 10;  // 1 to 100
  size_t offset = 0;     // from NextToken
  std::string name_contains;
  std::string status_equals;  // "" or a TrainingJobStatus
  std::optional<double> creation_after, creation_before;  // epoch seconds
  std::string sort_by = "CreationTime";  // Name, CreationTime, Status
  bool descending = true;
  // The summary members Name/Status refer to: a training job's, or
  // HyperParameterTuningJobName/Status for ListHyperParameterTuningJobs.
  std::string name_key = "TrainingJobName";
  std::string status_key = "TrainingJobStatus";
};

// Parses a ListTrainingJobs body; InvalidArgument naming the member and
// value for a bad one (an unknown member included).
absl::StatusOr<ListQuery> ParseListQuery(absl::string_view body);

struct ListPage {
  nlohmann::json summaries = nlohmann::json::array();
  std::string next_token;  // "" on the last page
};

// The page of `summaries` (TrainingJobSummary objects) that `query`
// selects.
ListPage SelectPage(std::vector<nlohmann::json> summaries,
                    const ListQuery& query);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_LIST_QUERY_H_
