// Reading and opening job logs. See job_logs.h.
#include "jobs/job_logs.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/cairn/v1/trial_states.h"

namespace cairn::jobs {
namespace {

using cairn::v1::Trial;
using cairn::v1::TrialJob;

// The chunk of a trial that has no log file yet.
absl::StatusOr<LogChunk> ChunkWithoutLog(const Trial& trial, int64_t offset) {
  LogChunk chunk;
  chunk.next_offset = offset;
  if (IsPendingState(trial.state())) return chunk;
  if (trial.job().state() == TrialJob::STATE_UNSPECIFIED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "trial ", trial.name(), " did not run as a job: it has no log"));
  }
  chunk.complete = true;
  return chunk;
}

}  // namespace

absl::StatusOr<LogChunk> ReadJobLog(StudyManager* manager,
                                    const std::string& trial_name,
                                    int64_t offset, int max_bytes) {
  if (offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("offset: ", offset, " is negative"));
  }
  if (max_bytes <= 0) max_bytes = 1 << 20;
  absl::StatusOr<Trial> trial = manager->GetTrialBasic(trial_name);
  if (!trial.ok()) return trial.status();
  if (trial->job().log_path().empty()) return ChunkWithoutLog(*trial, offset);
  LogChunk chunk;
  std::ifstream in(trial->job().log_path(), std::ios::binary);
  if (in) {
    in.seekg(offset);
    chunk.data.resize(max_bytes);
    in.read(chunk.data.data(), max_bytes);
    chunk.data.resize(static_cast<size_t>(in.gcount()));
  }
  chunk.next_offset = offset + static_cast<int64_t>(chunk.data.size());
  const bool at_end = static_cast<int>(chunk.data.size()) < max_bytes;
  chunk.complete = at_end && !IsPendingState(trial->state()) &&
                   trial->job().state() != TrialJob::RUNNING &&
                   trial->job().state() != TrialJob::STOPPING;
  return chunk;
}

absl::Status AppendAttemptHeader(const std::string& log_path,
                                 const std::string& trial_name, int attempt,
                                 bool resume, absl::Time now,
                                 const std::vector<std::string>& argv) {
  std::ofstream log(log_path, std::ios::app);
  log << "=== cairn: attempt " << attempt << (resume ? " (resume)" : "")
      << " of trial " << trial_name << " at " << absl::FormatTime(now) << ": "
      << absl::StrJoin(argv, " ") << "\n";
  log.close();
  if (!log) {
    return absl::InternalError(
        absl::StrCat("cannot write job log '", log_path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace cairn::jobs
