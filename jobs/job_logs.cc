// Reading and opening job logs. See job_logs.h.
#include "jobs/job_logs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/resource_names.h"
#include "api/trial_states.h"
#include "jobs/job_command.h"
#include "jobs/job_files.h"
#include "jobs/tf_config.h"
#include "util/quote.h"

namespace cairn::jobs {
namespace {

using cairn::v1::Trial;
using cairn::v1::TrialJob;

// The chunk of a trial that has no log file yet.
absl::StatusOr<LogChunk> ChunkWithoutLog(const Trial& trial, int64_t offset) {
  LogChunk chunk;
  chunk.next_offset = offset;
  if (api::IsPendingState(trial.state())) return chunk;
  if (trial.job().state() == TrialJob::STATE_UNSPECIFIED) {
    return absl::FailedPreconditionError(absl::StrCat(
        "trial ", trial.name(), " did not run as a job: it has no log"));
  }
  chunk.complete = true;
  return chunk;
}

// The log of `replica` of `trial` ("" while its job has not started), or
// InvalidArgument if the study's template has no such replica.
absl::StatusOr<std::string> ReplicaLog(StudyManager* manager,
                                       const Trial& trial,
                                       const std::string& replica) {
  if (replica.empty() || replica == "master-replica-0") {
    return trial.job().log_path();
  }
  absl::StatusOr<api::TrialName> name =
      api::ParseTrialName(trial.name(), "name");
  if (!name.ok()) return name.status();
  absl::StatusOr<cairn::v1::Study> study =
      manager->GetStudy(api::StudyName(name->study_id));
  if (!study.ok()) return study.status();
  std::vector<std::string> names;
  for (const ReplicaTask& r : ExpandReplicas(study->spec().job_template())) {
    names.push_back(r.Name());
    if (r.Name() != replica) continue;
    if (trial.job().job_dir().empty()) return std::string();
    return ReplicaLogPath(trial.job().job_dir(), replica).string();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("replica: ", util::QuoteForError(replica),
                   " is not a replica of trial ", trial.name(), "; it has ",
                   util::ShortenForError(absl::StrJoin(names, ", "), 300)));
}

}  // namespace

absl::StatusOr<LogChunk> ReadJobLog(StudyManager* manager,
                                    const std::string& trial_name,
                                    int64_t offset, int max_bytes,
                                    const std::string& replica) {
  if (offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("offset: ", offset, " is negative"));
  }
  if (max_bytes <= 0) max_bytes = 1 << 20;
  absl::StatusOr<Trial> trial = manager->GetTrialBasic(trial_name);
  if (!trial.ok()) return trial.status();
  absl::StatusOr<std::string> path = ReplicaLog(manager, *trial, replica);
  if (!path.ok()) return path.status();
  if (path->empty()) return ChunkWithoutLog(*trial, offset);
  LogChunk chunk;
  absl::StatusOr<ScopedFd> fd = OpenJobFile(*path, O_RDONLY);
  if (fd.ok()) {
    struct stat st;
    const int64_t left = fstat(fd->get(), &st) == 0 ? st.st_size - offset : 0;
    absl::StatusOr<std::string> data =
        ReadAt(fd->get(), offset,
               static_cast<size_t>(std::clamp<int64_t>(left, 0, max_bytes)));
    if (!data.ok()) return data.status();
    chunk.data = *std::move(data);
  } else if (!absl::IsNotFound(fd.status())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job log of trial ", trial_name, ": ", fd.status().message()));
  }
  chunk.next_offset = offset + static_cast<int64_t>(chunk.data.size());
  const bool at_end = static_cast<int>(chunk.data.size()) < max_bytes;
  chunk.complete = at_end && JobLogFinal(*trial);
  return chunk;
}

bool JobLogFinal(const Trial& trial) {
  return !api::IsPendingState(trial.state()) &&
         trial.job().state() != TrialJob::RUNNING &&
         trial.job().state() != TrialJob::STOPPING;
}

absl::Status AppendAttemptHeader(const std::string& log_path,
                                 const std::string& trial_name, int attempt,
                                 bool resume, absl::Time now,
                                 const std::vector<std::string>& argv) {
  absl::StatusOr<ScopedFd> fd =
      OpenJobFile(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (!fd.ok()) return fd.status();
  const std::string line =
      absl::StrCat(kAttemptHeaderPrefix, attempt, resume ? " (resume)" : "",
                   " of trial ", trial_name, " at ", absl::FormatTime(now),
                   ": ", absl::StrJoin(argv, " "), "\n");
  if (write(fd->get(), line.data(), line.size()) !=
      static_cast<ssize_t>(line.size())) {
    return absl::InternalError(
        absl::StrCat("cannot write job log '", log_path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace cairn::jobs
