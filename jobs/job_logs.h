// Job logs: each trial's job appends its stdout and stderr, attempt after
// attempt, to one file in its job dir (JobLogPath; each other replica of a
// multi-replica trial to its own, ReplicaLogPath); cairnd opens each
// attempt with a header line and serves the files in chunks (ReadTrialLogs,
// `cairn trial logs --follow [--replica NAME]`).
#ifndef CAIRN_JOBS_JOB_LOGS_H_
#define CAIRN_JOBS_JOB_LOGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cairn/v1/study.pb.h"
#include "trials/study_manager.h"

namespace cairn::jobs {

// A chunk of a trial's job log starting at some offset.
struct LogChunk {
  std::string data;
  int64_t next_offset = 0;
  // No more data will come: the log is read to its end and the trial and
  // its job are over.
  bool complete = false;
};

// Up to `max_bytes` (<= 0 means 1 MiB) of the log of trial `trial_name`
// from `offset`: the master's, or with `replica` (a ReplicaTask::Name of the
// study's template, e.g. "worker-replica-1") that replica's.
// InvalidArgument for a negative offset or a replica the template does not
// have (the message lists those it has); NotFound for an unknown trial;
// FailedPrecondition for a finished trial that never ran as a job. A
// pending trial whose job has not started yet gives an empty chunk.
// The log is opened with OpenJobFile (jobs/job_files.h): a job that replaced
// it with a link (or anything but a regular file) gets FailedPrecondition
// naming the trial and the path, never the link's target.
absl::StatusOr<LogChunk> ReadJobLog(StudyManager* manager,
                                    const std::string& trial_name,
                                    int64_t offset, int max_bytes,
                                    const std::string& replica = "");

// Whether the log of `trial` no longer grows: the trial has its result and
// its job (if any) is neither running nor stopping.
bool JobLogFinal(const cairn::v1::Trial& trial);

// How the line that opens an attempt starts: readers that parse a job's own
// output (SageMaker's MetricDefinitions) skip it, since it quotes the
// command line.
inline constexpr char kAttemptHeaderPrefix[] = "=== cairn: attempt ";

// Appends the line that opens an attempt ("=== cairn: attempt N (resume)
// of trial NAME at TIME: ARGV") to the log at `log_path`, created if
// missing, never through a link (OpenJobFile's errors). Internal if the file
// cannot be written.
absl::Status AppendAttemptHeader(const std::string& log_path,
                                 const std::string& trial_name, int attempt,
                                 bool resume, absl::Time now,
                                 const std::vector<std::string>& argv);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_JOB_LOGS_H_
