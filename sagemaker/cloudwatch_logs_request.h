// The CloudWatch Logs requests cairnd serves for training jobs' logs
// (cloudwatch_logs.h), parsed and checked against botocore's model of the
// logs service (data/logs/2014-03-28/service-2.json): member names and
// types, lengths, patterns and ranges. A member the model does not have,
// or one Cairn does not serve (logGroupIdentifier of another group, a
// filterPattern beyond plain terms), is refused by name. Refusals are
// InvalidArgument statuses with the AWS code InvalidParameterException
// (aws_error.h) naming the member and value, under 1 KB; a log group other
// than kTrainingJobsLogGroup is NotFound (ResourceNotFoundException).
#ifndef CAIRN_SAGEMAKER_CLOUDWATCH_LOGS_REQUEST_H_
#define CAIRN_SAGEMAKER_CLOUDWATCH_LOGS_REQUEST_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::sagemaker {

// SageMaker's log group for training jobs, the only one cairnd has.
inline constexpr char kTrainingJobsLogGroup[] = "/aws/sagemaker/TrainingJobs";

// arn:aws:logs:local:000000000000:log-group:/aws/sagemaker/TrainingJobs.
std::string TrainingJobsLogGroupArn();

// InvalidArgument with the code InvalidParameterException: "`member`:
// 'value' (quoted, shortened) `why`".
absl::Status InvalidParameter(absl::string_view member, absl::string_view value,
                              absl::string_view why);

// Which streams a request names: exact names, a prefix, or all.
struct StreamSelection {
  std::vector<std::string> names;  // logStreamName(s); empty: by prefix
  std::string prefix;              // logStreamNamePrefix; "" matches all

  bool Matches(absl::string_view stream) const;
  // The training job all matching streams belong to ("<job>/..."), or ""
  // when they may belong to several.
  std::string JobName() const;
};

struct DescribeLogStreamsRequest {
  StreamSelection selection;
  bool by_last_event_time = false;  // orderBy LastEventTime
  bool descending = false;
  std::string next_token;
  int limit = 50;
};

struct GetLogEventsRequest {
  std::string stream;
  int64_t start_ms = 0;
  int64_t end_ms = std::numeric_limits<int64_t>::max();
  std::string next_token;
  int limit = 10000;
  bool start_from_head = false;
};

struct FilterLogEventsRequest {
  StreamSelection selection;
  int64_t start_ms = 0;
  int64_t end_ms = std::numeric_limits<int64_t>::max();
  // The terms of filterPattern, each to appear in a message (empty: all).
  std::vector<std::string> terms;
  std::string next_token;
  int limit = 10000;
};

struct DescribeLogGroupsRequest {
  std::string prefix;  // logGroupNamePrefix
  int limit = 50;
};

absl::StatusOr<DescribeLogStreamsRequest> ParseDescribeLogStreams(
    absl::string_view body);
absl::StatusOr<GetLogEventsRequest> ParseGetLogEvents(absl::string_view body);
// filterPattern: terms separated by spaces, a term either a word or a
// "double-quoted phrase", matched case-sensitively like CloudWatch's term
// patterns; ?, JSON ({...}) and space-delimited ([...]) patterns and
// metric operators are refused.
absl::StatusOr<FilterLogEventsRequest> ParseFilterLogEvents(
    absl::string_view body);
absl::StatusOr<DescribeLogGroupsRequest> ParseDescribeLogGroups(
    absl::string_view body);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_CLOUDWATCH_LOGS_REQUEST_H_
