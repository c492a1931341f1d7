// See job_manager.h.
#include "aiplatform/job_manager.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "aiplatform/job_id.h"
#include "aiplatform/job_study.h"
#include "aiplatform/job_view.h"
#include "google/protobuf/util/time_util.h"
#include "spdlog/spdlog.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;
using cairn::v1::JobRecord;
using cairn::v1::Trial;

google::protobuf::Timestamp ToProto(absl::Time t) {
  return google::protobuf::util::TimeUtil::NanosecondsToTimestamp(
      absl::ToUnixNanos(t));
}

// The prefix every error of a submission carries.
absl::Status InJob(const std::string& job_id, const absl::Status& s) {
  return absl::Status(s.code(),
                      absl::StrCat("job ", job_id, ": ", s.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Open(
    Store* store, StudyManager* studies, Clock* clock,
    const JobManagerOptions& options) {
  absl::StatusOr<std::vector<JobRecord>> records = store->LoadJobRecords();
  if (!records.ok()) return records.status();
  std::unique_ptr<JobManager> manager(
      new JobManager(store, studies, clock, options));
  absl::MutexLock lock(&manager->mu_);
  for (JobRecord& r : *records) {
    // A cancel whose study stop was lost in a crash: stop it now.
    if (r.cancel_requested()) {
      (void)studies->SetStudyState(r.study_name(), cairn::v1::Study::INACTIVE);
    }
    std::string id = r.job().job_id();
    manager->records_.emplace(std::move(id), std::move(r));
  }
  return manager;
}

std::string JobManager::StagingDir(const std::string& job_id) const {
  return (std::filesystem::path(options_.jobs_root) / (job_id + ".package"))
      .string();
}

absl::Status JobManager::Reserve(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  if (records_.contains(job_id) || !reserved_.insert(job_id).second) {
    return absl::AlreadyExistsError(absl::StrCat(
        "job id '", job_id, "' is already in use: job ids are unique"));
  }
  return absl::OkStatus();
}

void JobManager::Release(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  reserved_.erase(job_id);
}

absl::StatusOr<Job> JobManager::Submit(const Job& job,
                                       const PackageFiles& package,
                                       const std::string& creator) {
  if (absl::Status s = ValidateJobId(job.job_id()); !s.ok()) return s;
  StudyOptions study_options;
  study_options.staging_dir = StagingDir(job.job_id());
  study_options.python = options_.python;
  // The config alone (the study is made again, for real, in CreateJob).
  if (absl::Status s = MakeJobStudy(job, study_options).status(); !s.ok()) {
    return InJob(job.job_id(), s);
  }
  if (absl::Status s =
          CheckPackage(package, job.training_input().python_module());
      !s.ok()) {
    return InJob(job.job_id(), s);
  }
  if (absl::Status s = Reserve(job.job_id()); !s.ok()) return s;
  absl::StatusOr<JobRecord> record = CreateJob(job, package, creator);
  absl::MutexLock lock(&mu_);
  reserved_.erase(job.job_id());
  if (!record.ok()) return InJob(job.job_id(), record.status());
  records_[job.job_id()] = *record;
  spdlog::info("job {}: submitted as {}", job.job_id(), record->study_name());
  Job out = record->job();
  out.set_state(Job::QUEUED);
  return out;
}

absl::StatusOr<JobRecord> JobManager::CreateJob(const Job& job,
                                                const PackageFiles& package,
                                                const std::string& creator) {
  const std::string staging = StagingDir(job.job_id());
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);  // Left by a crashed submit.
  if (absl::Status s = StagePackage(package, staging); !s.ok()) return s;
  StudyOptions study_options;
  study_options.staging_dir = staging;
  study_options.python = options_.python;
  absl::StatusOr<cairn::v1::Study> study = MakeJobStudy(job, study_options);
  if (!study.ok()) return study.status();
  study->set_creator(creator);
  const std::string& previous =
      job.training_input().hyperparameters().resume_previous_job_id();
  std::vector<Trial> prior;
  if (!previous.empty()) {
    absl::StatusOr<std::vector<Trial>> found = PriorTrials(previous);
    if (!found.ok()) {
      std::filesystem::remove_all(staging, ec);
      return found.status();
    }
    prior = *std::move(found);
    // The new job runs its own maxTrials besides the prior ones.
    study->mutable_spec()->set_max_trials(study->spec().max_trials() +
                                          static_cast<int>(prior.size()));
  }
  absl::StatusOr<cairn::v1::Study> created = studies_->CreateStudy(*study);
  if (!created.ok()) {
    std::filesystem::remove_all(staging, ec);
    return created.status();
  }
  JobRecord record;
  *record.mutable_job() = job;
  record.mutable_job()->clear_state();
  record.mutable_job()->clear_training_output();
  *record.mutable_job()->mutable_create_time() = ToProto(clock_->Now());
  record.set_study_name(created->name());
  record.set_staging_dir(staging);
  absl::Status s;
  if (!prior.empty()) {
    absl::StatusOr<std::vector<int64_t>> ids =
        CopyTrials(prior, previous, created->name());
    if (ids.ok()) {
      for (int64_t id : *ids) record.add_prior_trial_ids(id);
    } else {
      s = ids.status();
    }
  }
  if (s.ok()) s = store_->PutJobRecord(record);
  if (!s.ok()) {
    (void)studies_->DeleteStudy(created->name());
    std::filesystem::remove_all(staging, ec);
    return s;
  }
  return record;
}

absl::StatusOr<std::vector<Trial>> JobManager::PriorTrials(
    const std::string& previous_job_id) {
  absl::StatusOr<JobRecord> previous = Record(previous_job_id);
  if (!previous.ok()) {
    return absl::Status(
        previous.status().code(),
        absl::StrCat("trainingInput.hyperparameters.resumePreviousJobId: ",
                     previous.status().message()));
  }
  absl::StatusOr<std::vector<Trial>> trials =
      StudyTrials(previous->study_name(), false);
  if (!trials.ok()) return trials.status();
  std::vector<Trial> done;
  for (const Trial& t : *trials) {
    if (t.state() == Trial::SUCCEEDED) done.push_back(t);
  }
  return done;
}

absl::StatusOr<std::vector<int64_t>> JobManager::CopyTrials(
    const std::vector<Trial>& done, const std::string& previous_job_id,
    const std::string& study_name) {
  std::vector<int64_t> ids;
  for (const Trial& t : done) {
    Trial copy;
    *copy.mutable_parameters() = t.parameters();
    *copy.mutable_final_measurement() = t.final_measurement();
    (*copy.mutable_labels())["aiplatform_prior_job"] = previous_job_id;
    absl::StatusOr<Trial> created = studies_->CreateTrial(study_name, copy);
    if (!created.ok()) {
      return absl::Status(
          created.status().code(),
          absl::StrCat("resumePreviousJobId ", previous_job_id, ": trial ",
                       t.id(), " does not fit this job's parameters: ",
                       created.status().message()));
    }
    ids.push_back(created->id());
  }
  return ids;
}

absl::StatusOr<JobRecord> JobManager::Record(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  auto it = records_.find(job_id);
  if (it == records_.end()) {
    return absl::NotFoundError(
        absl::StrCat("job '", job_id.substr(0, 128), "' not found"));
  }
  return it->second;
}

absl::StatusOr<std::vector<Trial>> JobManager::StudyTrials(
    const std::string& study_name, bool include_measurements) {
  std::vector<Trial> out;
  std::string token;
  do {
    absl::StatusOr<TrialPage> page =
        studies_->ListTrials(study_name, 0, token, include_measurements);
    if (!page.ok()) return page.status();
    for (Trial& t : page->trials) out.push_back(std::move(t));
    token = page->next_page_token;
  } while (!token.empty());
  return out;
}

absl::StatusOr<Job> JobManager::View(const JobRecord& record) {
  absl::StatusOr<cairn::v1::Study> study =
      studies_->GetStudy(record.study_name());
  if (absl::IsNotFound(study.status())) {
    Job job = record.job();
    job.set_state(Job::FAILED);
    job.set_error_message(
        absl::StrCat("its study ", record.study_name(), " was deleted"));
    return job;
  }
  if (!study.ok()) return study.status();
  absl::StatusOr<std::vector<Trial>> trials =
      StudyTrials(record.study_name(), true);
  if (!trials.ok()) return trials.status();
  return JobView(record, *study, *trials);
}

absl::StatusOr<Job> JobManager::Get(const std::string& job_id) {
  absl::StatusOr<JobRecord> record = Record(job_id);
  if (!record.ok()) return record.status();
  return View(*record);
}

absl::StatusOr<std::vector<Job>> JobManager::List(Job::State state) {
  std::vector<JobRecord> records;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, r] : records_) records.push_back(r);
  }
  std::sort(records.begin(), records.end(),
            [](const JobRecord& a, const JobRecord& b) {
              return a.job().job_id() < b.job().job_id();
            });
  std::vector<Job> out;
  for (const JobRecord& r : records) {
    absl::StatusOr<Job> job = View(r);
    if (!job.ok()) return job.status();
    if (state == Job::STATE_UNSPECIFIED || job->state() == state) {
      out.push_back(*std::move(job));
    }
  }
  return out;
}

absl::StatusOr<Job> JobManager::Cancel(const std::string& job_id) {
  absl::StatusOr<JobRecord> record = Record(job_id);
  if (!record.ok()) return record.status();
  absl::StatusOr<Job> now = View(*record);
  if (!now.ok()) return now.status();
  if (IsFinal(now->state()) || record->cancel_requested()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job_id, " is ", Job::State_Name(now->state()),
        record->cancel_requested() ? " (already cancelled)" : ": it ended"));
  }
  record->set_cancel_requested(true);
  *record->mutable_cancel_time() = ToProto(clock_->Now());
  // Durable first: a crash before the study stops is finished by Open.
  if (absl::Status s = store_->PutJobRecord(*record); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    records_[job_id] = *record;
  }
  absl::StatusOr<cairn::v1::Study> stopped =
      studies_->SetStudyState(record->study_name(), cairn::v1::Study::INACTIVE);
  if (!stopped.ok()) return stopped.status();
  spdlog::info("job {}: cancelled", job_id);
  return View(*record);
}

absl::StatusOr<JobManager::Trials> JobManager::JobTrials(
    const std::string& job_id) {
  absl::StatusOr<JobRecord> record = Record(job_id);
  if (!record.ok()) return record.status();
  absl::StatusOr<Job> job = View(*record);
  if (!job.ok()) return job.status();
  Trials out;
  out.study_name = record->study_name();
  out.state = job->state();
  if (absl::StatusOr<cairn::v1::Study> study =
          studies_->GetStudy(record->study_name());
      study.ok()) {
    out.job_template = study->spec().job_template();
  }
  absl::StatusOr<std::vector<Trial>> trials =
      StudyTrials(record->study_name(), false);
  if (!trials.ok()) return out;  // The study is gone: no logs.
  for (const Trial& t : *trials) {
    if (std::find(record->prior_trial_ids().begin(),
                  record->prior_trial_ids().end(),
                  t.id()) == record->prior_trial_ids().end()) {
      out.trial_ids.push_back(t.id());
    }
  }
  return out;
}

}  // namespace cairn::aiplatform
