// cairn jobs submit training / describe / list / cancel / stream-logs: AI
// Platform Training's gcloud commands against cairnd's JobService.
#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "aiplatform/job_config.h"
#include "aiplatform/job_filter.h"
#include "aiplatform/job_rest.h"
#include "aiplatform/package_read.h"
#include "api/trial_states.h"
#include "cli/format.h"
#include "cli/handlers.h"
#include "google/protobuf/util/time_util.h"

namespace cairn::cli {
namespace {

using cairn::v1::Job;
using JobStub = StudyClient::JobStub;
using aiplatform::PackageFileList;
using aiplatform::ReadPackageArchives;
using aiplatform::ReadPackageDir;

// Flags win over the config, as with gcloud.
absl::Status ApplyFlags(const Options& o, Job& job) {
  cairn::v1::TrainingInput& in = *job.mutable_training_input();
  if (!o.module_name.empty()) in.set_python_module(o.module_name);
  if (!o.region.empty()) in.set_region(o.region);
  if (!o.runtime_version.empty()) in.set_runtime_version(o.runtime_version);
  if (!o.python_version.empty()) in.set_python_version(o.python_version);
  // Sent as written: cairnd resolves a relative job dir in its jobs root,
  // the same rule as a config's jobDir (jobs/job_template.h).
  if (!o.job_dir.empty()) in.set_job_dir(o.job_dir);
  if (!o.scale_tier.empty()) {
    cairn::v1::TrainingInput::ScaleTier tier;
    if (!cairn::v1::TrainingInput::ScaleTier_Parse(
            absl::AsciiStrToUpper(o.scale_tier), &tier)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--scale-tier: '", o.scale_tier,
          "' is not BASIC, BASIC_GPU, STANDARD_1, PREMIUM_1 or CUSTOM"));
    }
    in.set_scale_tier(tier);
  }
  for (const std::string& list : o.labels) {
    for (absl::string_view kv : absl::StrSplit(list, ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, '=');
      if (p.first.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--labels: '", kv, "' is not KEY=VALUE"));
      }
      (*job.mutable_labels())[p.first] = p.second;
    }
  }
  for (const auto& [flag, config] :
       {std::pair{&o.master_image_uri, in.mutable_master_config()},
        std::pair{&o.worker_image_uri, in.mutable_worker_config()},
        std::pair{&o.parameter_server_image_uri,
                  in.mutable_parameter_server_config()}}) {
    if (!flag->empty()) config->set_image_uri(*flag);
  }
  if (!o.user_args.empty()) {
    in.clear_args();
    for (const std::string& a : o.user_args) in.add_args(a);
  }
  return absl::OkStatus();
}

// cairnd names a bad job dir by its config field, trainingInput.jobDir;
// when the user gave it as --job-dir, the message names the flag instead.
absl::Status NameJobDirFlag(const Options& o, const absl::Status& s) {
  if (o.job_dir.empty()) return s;
  return absl::Status(
      s.code(), absl::StrReplaceAll(
                    s.message(), {{"trainingInput.jobDir: ", "--job-dir: "}}));
}

absl::StatusOr<PackageFileList> ReadPackage(const Options& o,
                                            const std::string& module) {
  if (!o.package_path.empty() && !o.packages.empty()) {
    return absl::InvalidArgumentError(
        "give --package-path or --packages, not both");
  }
  if (!o.package_path.empty()) return ReadPackageDir(o.package_path);
  std::vector<std::string> archives;
  for (const std::string& list : o.packages) {
    for (absl::string_view a : absl::StrSplit(list, ',', absl::SkipEmpty())) {
      archives.emplace_back(a);
    }
  }
  return ReadPackageArchives(archives, module);
}

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return "-";
  return google::protobuf::util::TimeUtil::ToString(t);
}

// Why each early-stopped trial of `job` stopped (by trial id), from the
// metadata of its study's trials: the study cairnd made for the job, found
// by its display name (the job id) and checked by its job template.
absl::StatusOr<std::map<std::string, std::string>> EarlyStoppingReasons(
    Context& c, const Job& job) {
  std::map<std::string, std::string> reasons;
  const auto& trials = job.training_output().trials();
  if (std::none_of(trials.begin(), trials.end(),
                   [](const auto& t) { return t.is_trial_stopped_early(); })) {
    return reasons;
  }
  cairn::v1::LookupStudyRequest lookup;
  lookup.set_display_name(job.job_id());
  auto study = c.Client().Call(&StudyClient::Stub::LookupStudy, lookup);
  if (!study.ok()) return study.status();
  if (study->spec().job_template().ai_platform_job_id() != job.job_id()) {
    return reasons;
  }
  cairn::v1::ListTrialsRequest request;
  request.set_parent(study->name());
  do {
    auto response = c.Client().Call(&StudyClient::Stub::ListTrials, request);
    if (!response.ok()) return response.status();
    for (const cairn::v1::Trial& t : response->trials()) {
      auto reason = t.metadata().find(api::kEarlyStoppingReasonKey);
      if (reason != t.metadata().end()) {
        reasons[absl::StrCat(t.id())] = reason->second;
      }
    }
    request.set_page_token(response->next_page_token());
  } while (!request.page_token().empty());
  return reasons;
}

void PrintSummary(const Job& job,
                  const std::map<std::string, std::string>& reasons,
                  std::ostream& out) {
  out << "jobId: " << job.job_id()
      << "\nstate: " << Job::State_Name(job.state())
      << "\ncreateTime: " << Time(job.create_time())
      << "\nstartTime: " << Time(job.start_time())
      << "\nendTime: " << Time(job.end_time()) << "\n";
  if (!job.error_message().empty()) {
    out << "errorMessage: " << job.error_message() << "\n";
  }
  const cairn::v1::TrainingOutput& o = job.training_output();
  out << "completedTrialCount: " << o.completed_trial_count() << "\n";
  if (!o.is_hyperparameter_tuning_job()) return;
  out << "hyperparameterMetricTag: " << o.hyperparameter_metric_tag() << "\n"
      << JobTrialsTable(job, reasons);
}

bool IsFinal(Job::State s) {
  return s == Job::SUCCEEDED || s == Job::FAILED || s == Job::CANCELLED;
}

// One log as it is followed: read offset and a partial last line.
struct Follow {
  int64_t offset = 0;
  std::string partial;
  bool complete = false;
};

// The logs followed: (trial id, replica name; "" for a one-process trial).
using LogKey = std::pair<int64_t, std::string>;

std::string LinePrefix(const LogKey& key) {
  return key.second.empty()
             ? absl::StrCat("[trial ", key.first, "] ")
             : absl::StrCat("[trial ", key.first, " ", key.second, "] ");
}

// Prints the complete lines of `f` (all of it once `f` is complete).
void PrintLines(Context& c, const LogKey& key, Follow& f) {
  size_t nl;
  while ((nl = f.partial.find('\n')) != std::string::npos) {
    *c.out << LinePrefix(key) << f.partial.substr(0, nl + 1);
    f.partial.erase(0, nl + 1);
  }
  if (f.complete && !f.partial.empty()) {
    *c.out << LinePrefix(key) << f.partial << "\n";
    f.partial.clear();
  }
}

// Reads what is new in one log; NotFound while its trial has not started.
absl::Status ReadNewLog(Context& c, const cairn::v1::ReadJobLogsRequest& list,
                        bool job_final, const LogKey& key, Follow& f) {
  while (!f.complete) {
    cairn::v1::ReadJobLogsRequest request = list;
    request.set_trial_id(key.first);
    request.set_replica(key.second);
    request.set_offset(f.offset);
    auto chunk = c.Client().Call(&JobStub::ReadJobLogs, request);
    if (!chunk.ok()) return chunk.status();
    f.partial += chunk->data();
    f.offset = chunk->next_offset();
    f.complete = chunk->complete() && job_final;
    PrintLines(c, key, f);
    if (chunk->data().empty()) break;
  }
  return absl::OkStatus();
}

// Reads what is new in every replica's log of every trial; returns the
// job's state.
absl::StatusOr<Job::State> ReadNewLogs(Context& c,
                                       std::map<LogKey, Follow>& logs) {
  cairn::v1::ReadJobLogsRequest list;
  list.set_job_id(c.opt.job_id);
  auto ids = c.Client().Call(&JobStub::ReadJobLogs, list);
  if (!ids.ok()) return ids.status();
  for (int64_t id : ids->trial_ids()) {
    if (ids->replicas().empty()) logs.try_emplace(LogKey(id, ""));
    for (const std::string& r : ids->replicas())
      logs.try_emplace(LogKey(id, r));
  }
  const bool job_final = IsFinal(ids->state());
  for (auto& [key, f] : logs) {
    absl::Status s = ReadNewLog(c, list, job_final, key, f);
    if (absl::IsNotFound(s)) {  // Not started yet, or never will.
      f.complete = job_final;
      continue;
    }
    if (!s.ok()) return s;
  }
  c.out->flush();
  return ids->state();
}

absl::Status StreamUntilDone(Context& c) {
  std::map<LogKey, Follow> logs;
  while (true) {
    absl::StatusOr<Job::State> state = ReadNewLogs(c, logs);
    if (!state.ok()) return state.status();
    bool all = true;
    for (const auto& [id, f] : logs) all = all && f.complete;
    if (IsFinal(*state) && all) {
      *c.err << "Job [" << c.opt.job_id << "] " << Job::State_Name(*state)
             << "\n";
      if (*state != Job::SUCCEEDED) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job ", c.opt.job_id, " ended ", Job::State_Name(*state)));
      }
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

}  // namespace

absl::Status JobSubmit(Context& c) {
  const Options& o = c.opt;
  cairn::v1::SubmitTrainingJobRequest request;
  Job& job = *request.mutable_job();
  if (!o.config.empty()) {
    absl::StatusOr<aiplatform::JobConfig> config =
        aiplatform::LoadJobConfigFile(o.config);
    if (!config.ok()) return config.status();
    job = config->job;
  }
  job.set_job_id(o.job_id);
  if (absl::Status s = ApplyFlags(o, job); !s.ok()) return s;
  std::vector<std::string> ignored =
      aiplatform::IgnoredFields(job.training_input());
  // Without --package-path and --packages, cairnd reads packageUris itself.
  if (o.package_path.empty() && o.packages.empty()) {
    ignored.erase(std::remove(ignored.begin(), ignored.end(),
                              "trainingInput.packageUris"),
                  ignored.end());
  }
  if (!ignored.empty()) {
    *c.err << "cairn: note: ignored on one machine: "
           << absl::StrJoin(ignored, ", ") << "\n";
  }
  // A custom container brings its code: no package unless one is named.
  const bool package = o.package_path.size() + o.packages.size() > 0 ||
                       job.training_input().master_config().image_uri().empty();
  absl::StatusOr<PackageFileList> files =
      package ? ReadPackage(o, job.training_input().python_module())
              : PackageFileList{};
  if (!files.ok()) return files.status();
  for (cairn::v1::PackageFile& f : *files) {
    *request.add_package_files() = std::move(f);
  }
  auto submitted = c.Client().Call(&JobStub::SubmitTrainingJob, request);
  if (!submitted.ok()) return NameJobDirFlag(o, submitted.status());
  *c.out << "Job [" << submitted->job_id() << "] submitted successfully.\n";
  if (o.stream_logs) return StreamUntilDone(c);
  *c.out << "Your job is still active. You may view the status of your job "
            "with the command\n\n  $ cairn jobs describe "
         << submitted->job_id()
         << "\n\nor continue streaming the logs with the command\n\n  $ cairn "
            "jobs stream-logs "
         << submitted->job_id() << "\n";
  return absl::OkStatus();
}

absl::Status JobDescribe(Context& c) {
  cairn::v1::GetJobRequest request;
  request.set_job_id(c.opt.job_id);
  auto job = c.Client().Call(&JobStub::GetJob, request);
  if (!job.ok()) return job.status();
  if (c.opt.json) {
    absl::StatusOr<std::string> text = AiPlatformJson(*job);
    if (!text.ok()) return text.status();
    *c.out << *text << "\n";
  } else {
    absl::StatusOr<std::map<std::string, std::string>> reasons =
        EarlyStoppingReasons(c, *job);
    if (!reasons.ok()) return reasons.status();
    PrintSummary(*job, *reasons, *c.out);
  }
  return absl::OkStatus();
}

absl::Status JobList(Context& c) {
  cairn::v1::ListJobsRequest request;
  // Checked here too, so that an error names the flag.
  absl::StatusOr<aiplatform::JobFilter> filter =
      aiplatform::JobFilter::Parse(c.opt.filter, "--filter");
  if (!filter.ok()) return filter.status();
  request.set_filter(c.opt.filter);
  auto jobs = c.Client().Call(&JobStub::ListJobs, request);
  if (!jobs.ok()) return jobs.status();
  if (c.opt.json) {
    std::string out = "[";
    for (int i = 0; i < jobs->jobs_size(); ++i) {
      absl::StatusOr<std::string> text = AiPlatformJson(jobs->jobs(i));
      if (!text.ok()) return text.status();
      absl::StrAppend(&out, i > 0 ? ",\n" : "\n", *text);
    }
    *c.out << out << "\n]\n";
    return absl::OkStatus();
  }
  *c.out << absl::StrFormat("%-40s %-11s %s\n", "JOB_ID", "STATUS", "CREATED");
  for (const Job& job : jobs->jobs()) {
    *c.out << absl::StrFormat("%-40s %-11s %s\n", job.job_id(),
                              Job::State_Name(job.state()),
                              Time(job.create_time()));
  }
  return absl::OkStatus();
}

absl::Status JobCancel(Context& c) {
  cairn::v1::CancelJobRequest request;
  request.set_job_id(c.opt.job_id);
  auto job = c.Client().Call(&JobStub::CancelJob, request);
  if (!job.ok()) return job.status();
  *c.out << "Cancelled job [" << job->job_id()
         << "]: " << Job::State_Name(job->state()) << "\n";
  return absl::OkStatus();
}

absl::Status JobStreamLogs(Context& c) { return StreamUntilDone(c); }

}  // namespace cairn::cli
