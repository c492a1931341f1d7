// Training jobs' logs served the way CloudWatch Logs serves SageMaker's:
// log group /aws/sagemaker/TrainingJobs, one stream per host of a job
// named <TrainingJobName>/algo-<host>-<epoch seconds of its start>, each
// line an event (log_stream.h) stamped with the time cairnd first saw it
// (log_times.h), in milliseconds. The operations are the ones the AWS CLI
// (`aws logs tail`, `get-log-events`) and the SageMaker SDK read logs
// with; requests come parsed (cloudwatch_logs_request.h), responses are
// the JSON of botocore's output shapes. Paging tokens are cairnd's own and
// checked like any input: a token that does not point where an event may
// begin is an InvalidParameterException.
//
//  - GetLogEvents: startFromHead true reads forward from startTime (or the
//    start), false (the default) the newest events; tokens "f/<offset>"
//    and "b/<offset>" go on forward and backward, and at the end of the
//    stream the token given comes back.
//  - FilterLogEvents: the events of the selected streams interleaved in
//    the order (timestamp, stream name, position); nextToken is the last
//    event's place in that order, absent once every stream is read to its
//    end (or endTime), so `aws logs tail` stops and `--follow` polls on.
//  - DescribeLogStreams: by name or last event time; nextToken only when
//    more streams remain.
#ifndef CAIRN_SAGEMAKER_CLOUDWATCH_LOGS_H_
#define CAIRN_SAGEMAKER_CLOUDWATCH_LOGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/study.pb.h"
#include "nlohmann/json.hpp"
#include "sagemaker/cloudwatch_logs_request.h"

namespace cairn::sagemaker {

// One host's log of a training job.
struct TrainingLogStream {
  std::string name;      // <job>/algo-<host>-<epoch seconds>
  std::string log_path;  // The host's job log.
  int64_t creation_ms = 0;
  bool finished = false;  // The log no longer grows.
};

// "<job>/algo-<host>-<epoch_seconds>".
std::string LogStreamName(absl::string_view job, int host,
                          int64_t epoch_seconds);

// The streams of the training job that `trial` of `study` runs (a
// training job's study, or a tuning job's), one per instance; none before
// its job started.
absl::StatusOr<std::vector<TrainingLogStream>> TrainingJobStreams(
    const cairn::v1::Study& study, const cairn::v1::Trial& trial);

// The responses. `streams` are those the caller may read; each operation
// picks the ones its request selects.
absl::StatusOr<nlohmann::json> DescribeLogStreams(
    const DescribeLogStreamsRequest& request,
    const std::vector<TrainingLogStream>& streams);
// NotFound (ResourceNotFoundException) when no stream has the name.
absl::StatusOr<nlohmann::json> GetLogEvents(
    const GetLogEventsRequest& request,
    const std::vector<TrainingLogStream>& streams);
absl::StatusOr<nlohmann::json> FilterLogEvents(
    const FilterLogEventsRequest& request,
    const std::vector<TrainingLogStream>& streams);
nlohmann::json DescribeLogGroups(const DescribeLogGroupsRequest& request);

// `response` as the body to send: log messages are the job's bytes, so
// any that are not UTF-8 become U+FFFD.
std::string LogsResponseBody(const nlohmann::json& response);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_CLOUDWATCH_LOGS_H_
