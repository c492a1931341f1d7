// One home for serving a chunk of a trial's log: ReadTrialLogs
// (StudyService) and ReadJobLogs (JobService) both answer with data,
// next_offset and complete read by the job runner.
#ifndef CAIRN_SERVER_READ_LOGS_H_
#define CAIRN_SERVER_READ_LOGS_H_

#include <cstdint>
#include <string>
#include <utility>

#include "grpcpp/support/status.h"
#include "jobs/job_runner.h"
#include "server/status_util.h"

namespace cairn {

// Reads up to `max_bytes` from `offset` of the log of trial `trial_name`
// (replica `replica`, "" for the master or single process) into `response`.
// UNIMPLEMENTED when `runner` is null (the server runs no jobs); the
// runner's errors otherwise.
template <typename Response>
grpc::Status ReadLogChunk(jobs::JobRunner* runner,
                          const std::string& trial_name, int64_t offset,
                          int max_bytes, const std::string& replica,
                          Response* response) {
  if (runner == nullptr) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "this server runs no training jobs");
  }
  auto chunk = runner->ReadLogs(trial_name, offset, max_bytes, replica);
  if (!chunk.ok()) return ToGrpcStatus(chunk.status());
  response->set_data(std::move(chunk->data));
  response->set_next_offset(chunk->next_offset);
  response->set_complete(chunk->complete);
  return grpc::Status::OK;
}

}  // namespace cairn

#endif  // CAIRN_SERVER_READ_LOGS_H_
