// The List operations' requests (filters, sort, paging) and the page of
// summaries each selects: ListTrainingJobs, ListHyperParameterTuningJobs
// and ListTrainingJobsForHyperParameterTuningJob, each with SageMaker's
// members, sort keys and defaults. NextToken is the offset of the next
// summary in the sorted, filtered list, so a list that changes between
// pages may repeat or skip a job (as a SageMaker list may).
#ifndef CAIRN_SAGEMAKER_LIST_QUERY_H_
#define CAIRN_SAGEMAKER_LIST_QUERY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {

// Which List operation a query is for.
enum class ListKind {
  // ListTrainingJobs: SortBy Name, CreationTime (default), Status.
  kTrainingJobs,
  // ListHyperParameterTuningJobs: SortBy Name (default), CreationTime,
  // Status.
  kTuningJobs,
  // ListTrainingJobsForHyperParameterTuningJob: SortBy Name (default),
  // CreationTime, Status, FinalObjectiveMetricValue (which leaves out the
  // jobs without an objective value); no name or time filters.
  kTuningTrainingJobs,
};

struct ListQuery {
  ListKind kind = ListKind::kTrainingJobs;
  int max_results = 10;  // 1 to 100
  size_t offset = 0;     // from NextToken
  std::string name_contains;
  std::string status_equals;  // "" or a TrainingJobStatus
  // Epoch seconds, exclusive bounds.
  std::optional<double> creation_after, creation_before;
  std::optional<double> modified_after, modified_before;
  std::string sort_by;      // one of the kind's keys
  bool descending = false;  // SortOrder; Ascending by default
  // The summary members Name/Status refer to.
  std::string name_key;
  std::string status_key;
};

// Parses a List body of `kind` (for kTuningTrainingJobs the
// HyperParameterTuningJobName member is left to the caller);
// InvalidArgument naming the member and value for a bad one, an unknown
// member included.
absl::StatusOr<ListQuery> ParseListQuery(
    absl::string_view body, ListKind kind = ListKind::kTrainingJobs);

struct ListPage {
  nlohmann::json summaries = nlohmann::json::array();
  std::string next_token;  // "" on the last page
};

// The page of `summaries` (objects with the query's name and status keys,
// CreationTime and, when set, LastModifiedTime and
// FinalHyperParameterTuningJobObjectiveMetric) that `query` selects.
ListPage SelectPage(std::vector<nlohmann::json> summaries,
                    const ListQuery& query);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_LIST_QUERY_H_
