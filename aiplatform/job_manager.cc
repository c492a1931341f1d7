// See job_manager.h.
#include "aiplatform/job_manager.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "aiplatform/job_container.h"
#include "aiplatform/job_id.h"
#include "aiplatform/job_schedule.h"
#include "aiplatform/job_study.h"
#include "aiplatform/job_view.h"
#include "aiplatform/package_read.h"
#include "spdlog/spdlog.h"
#include "util/time_proto.h"

namespace cairn::aiplatform {
namespace {

using cairn::v1::Job;
using cairn::v1::JobRecord;
using cairn::v1::Trial;

// inactive_reason of a job's study while its submission is under way.
constexpr char kSubmitting[] = "the job's submission is under way";

// Whether `study` is the paused study of job `job_id`'s submission.
bool IsSubmitting(const cairn::v1::Study& study, const std::string& job_id) {
  return study.state() == cairn::v1::Study::INACTIVE &&
         study.inactive_reason() == kSubmitting &&
         study.spec().job_template().ai_platform_job_id() == job_id;
}

// The prefix every error of a submission carries.
absl::Status InJob(const std::string& job_id, const absl::Status& s) {
  return absl::Status(s.code(),
                      absl::StrCat("job ", job_id, ": ", s.message()));
}

// The files of trainingInput.packageUris when the client sent none (read
// here, on cairnd's machine); empty when it sent some.
absl::StatusOr<PackageFiles> PackageOf(const Job& job,
                                       const PackageFiles& sent) {
  PackageFiles out;
  if (!sent.empty() || job.training_input().package_uris().empty()) return out;
  absl::StatusOr<PackageFileList> read = ReadPackageUris(job.training_input());
  if (!read.ok()) return read.status();
  for (cairn::v1::PackageFile& f : *read) *out.Add() = std::move(f);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JobManager>> JobManager::Open(
    JobRecordStore* store, StudyManager* studies, util::Clock* clock,
    const JobManagerOptions& options) {
  absl::StatusOr<std::vector<JobRecord>> records = store->LoadJobRecords();
  if (!records.ok()) return records.status();
  std::unique_ptr<JobManager> manager(
      new JobManager(store, studies, clock, options));
  for (JobRecord& r : *records) {
    if (absl::Status s = manager->Recover(r); !s.ok()) {
      // Tried again at the next start; cairnd still serves.
      spdlog::warn("job {}: repairing its submission failed: {}",
                   r.job().job_id(), std::string(s.message()));
    }
    if (r.submit_pending()) continue;  // Undone.
    absl::MutexLock lock(&manager->mu_);
    std::string id = r.job().job_id();
    manager->records_.emplace(std::move(id), std::move(r));
  }
  if (options.schedule_interval > absl::ZeroDuration()) {
    JobManager* m = manager.get();
    manager->schedule_thread_ = std::thread([m] { m->ScheduleLoop(); });
  }
  return manager;
}

JobManager::~JobManager() {
  stop_.Notify();
  if (schedule_thread_.joinable()) schedule_thread_.join();
}

absl::Status JobManager::Recover(const JobRecord& r) {
  const std::string& id = r.job().job_id();
  if (r.submit_pending()) {
    spdlog::warn("job {}: undoing a submission cut short by a crash", id);
    std::string study_name;
    absl::StatusOr<cairn::v1::Study> study = studies_->LookupStudy(id);
    if (study.ok() && IsSubmitting(*study, id)) study_name = study->name();
    return Undo(r, study_name);
  }
  // A cancel whose study stop was lost in a crash: stop it now.
  if (r.cancel_requested()) {
    (void)studies_->SetStudyState(r.study_name(), cairn::v1::Study::INACTIVE);
    return absl::OkStatus();
  }
  // A submission whose record was complete but whose study was not started.
  absl::StatusOr<cairn::v1::Study> study = studies_->GetStudy(r.study_name());
  if (study.ok() && IsSubmitting(*study, id)) {
    spdlog::info("job {}: starting its study after a crash", id);
    return studies_->SetStudyState(r.study_name(), cairn::v1::Study::ACTIVE)
        .status();
  }
  return absl::OkStatus();
}

absl::Status JobManager::Undo(const JobRecord& record,
                              const std::string& study_name) {
  if (!study_name.empty()) {
    absl::Status s = studies_->DeleteStudy(study_name);
    if (!s.ok() && !absl::IsNotFound(s)) return s;
  }
  std::error_code ec;
  std::filesystem::remove_all(StagingDir(record.job().job_id()), ec);
  return store_->DeleteJobRecord(record.job().job_id());
}

void JobManager::Step(absl::string_view name) const {
  if (options_.submit_hook) options_.submit_hook(name);
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
  absl::StatusOr<PackageFiles> read = PackageOf(job, package);
  if (!read.ok()) return InJob(job.job_id(), read.status());
  const PackageFiles& files = package.empty() ? *read : package;
  // A custom container brings its own code (job_container.h).
  if (absl::Status s =
          UsesCustomContainer(job.training_input())
              ? absl::OkStatus()
              : CheckPackage(files, job.training_input().python_module());
      !s.ok()) {
    return InJob(job.job_id(), s);
  }
  if (absl::Status s = Reserve(job.job_id()); !s.ok()) return s;
  absl::StatusOr<JobRecord> record = CreateJob(job, files, creator);
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
  StudyOptions study_options;
  study_options.staging_dir = staging;
  study_options.python = options_.python;
  absl::StatusOr<cairn::v1::Study> study = MakeJobStudy(job, study_options);
  if (!study.ok()) return study.status();
  study->set_creator(creator);
  study->set_state(cairn::v1::Study::INACTIVE);  // Started when complete.
  study->set_inactive_reason(kSubmitting);
  const std::string& previous =
      job.training_input().hyperparameters().resume_previous_job_id();
  std::vector<Trial> prior;
  if (!previous.empty()) {
    absl::StatusOr<std::vector<Trial>> found = PriorTrials(previous);
    if (!found.ok()) return found.status();
    prior = *std::move(found);
    // The new job runs its own maxTrials besides the prior ones.
    study->mutable_spec()->set_max_trials(study->spec().max_trials() +
                                          static_cast<int>(prior.size()));
  }
  JobRecord record;
  *record.mutable_job() = job;
  record.mutable_job()->clear_state();
  record.mutable_job()->clear_training_output();
  *record.mutable_job()->mutable_create_time() =
      util::ToProtoTimestamp(clock_->Now());
  record.set_staging_dir(staging);
  record.set_submit_pending(true);
  if (absl::Status s = store_->PutJobRecord(record); !s.ok()) return s;
  Step("record_pending");
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);  // Left by a crashed submit.
  absl::Status s = StagePackage(package, staging);
  if (s.ok()) s = StartStudy(*study, prior, previous, record);
  if (!s.ok()) {
    (void)Undo(record, record.study_name());  // Else Open undoes it.
    return s;
  }
  return record;
}

absl::Status JobManager::StartStudy(const cairn::v1::Study& study,
                                    const std::vector<Trial>& prior,
                                    const std::string& previous_job_id,
                                    JobRecord& record) {
  absl::StatusOr<cairn::v1::Study> created = studies_->CreateStudy(study);
  if (!created.ok()) return created.status();
  Step("study_created");
  record.set_study_name(created->name());
  absl::StatusOr<std::vector<int64_t>> ids =
      CopyTrials(prior, previous_job_id, created->name());
  if (!ids.ok()) return ids.status();
  for (int64_t id : *ids) record.add_prior_trial_ids(id);
  Step("trials_copied");
  record.set_submit_pending(false);
  if (absl::Status s = store_->PutJobRecord(record); !s.ok()) return s;
  Step("record_written");
  return studies_->SetStudyState(created->name(), cairn::v1::Study::ACTIVE)
      .status();
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

absl::StatusOr<Job> JobManager::View(const JobRecord& record, bool measurements,
                                     cairn::v1::Study* study_out) {
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
      StudyTrials(record.study_name(), measurements);
  if (!trials.ok()) return trials.status();
  if (study_out != nullptr) *study_out = *study;
  return JobView(record, *study, *trials);
}

absl::StatusOr<Job> JobManager::Get(const std::string& job_id) {
  absl::StatusOr<JobRecord> record = Record(job_id);
  if (!record.ok()) return record.status();
  return View(*record);
}

absl::StatusOr<JobManager::JobPage> JobManager::List(
    const JobFilter& filter, int page_size, const std::string& page_token) {
  if (page_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size ", page_size, " is negative"));
  }
  std::vector<JobRecord> records;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, r] : records_) {
      if (id > page_token && filter.MayMatch(r.job())) records.push_back(r);
    }
  }
  std::sort(records.begin(), records.end(),
            [](const JobRecord& a, const JobRecord& b) {
              return a.job().job_id() < b.job().job_id();
            });
  JobPage out;
  for (size_t i = 0; i < records.size(); ++i) {
    if (page_size > 0 && out.jobs.size() == static_cast<size_t>(page_size)) {
      out.next_page_token = out.jobs.back().job_id();
      break;
    }
    absl::StatusOr<Job> job = View(records[i]);
    if (!job.ok()) return job.status();
    if (filter.Matches(*job)) {
      out.jobs.push_back(*std::move(job));
    }
  }
  return out;
}

absl::StatusOr<Job> JobManager::Cancel(const std::string& job_id) {
  absl::StatusOr<JobRecord> record = Record(job_id);
  if (!record.ok()) return record.status();
  absl::StatusOr<Job> now = View(*record, /*measurements=*/false);
  if (!now.ok()) return now.status();
  if (now->state() == Job::CANCELLING) {
    // Cancelled, but a process still runs: stop its study again (this
    // also reaches a job whose trial ended while it runs).
    absl::StatusOr<cairn::v1::Study> stopped = studies_->SetStudyState(
        record->study_name(), cairn::v1::Study::INACTIVE);
    if (!stopped.ok()) return stopped.status();
    return View(*record);
  }
  if (IsFinal(now->state()) || record->cancel_requested()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", job_id, " is ", Job::State_Name(now->state()),
        record->cancel_requested() ? " (already cancelled)" : ": it ended"));
  }
  if (absl::Status s = CancelFor(*record, kUserCancelReason); !s.ok()) {
    return s;
  }
  return View(*record);
}

absl::Status JobManager::CancelFor(JobRecord& record,
                                   const std::string& reason) {
  const std::string& job_id = record.job().job_id();
  record.set_cancel_requested(true);
  *record.mutable_cancel_time() = util::ToProtoTimestamp(clock_->Now());
  record.set_cancel_reason(reason);
  // Durable first: a crash before the study stops is finished by Open.
  if (absl::Status s = store_->PutJobRecord(record); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    records_[job_id] = record;
  }
  absl::StatusOr<cairn::v1::Study> stopped =
      studies_->SetStudyState(record.study_name(), cairn::v1::Study::INACTIVE);
  if (!stopped.ok()) return stopped.status();
  spdlog::info("job {}: cancelled: {}", job_id, reason);
  return absl::OkStatus();
}

int JobManager::EnforceSchedule() {
  std::vector<JobRecord> open;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, r] : records_) {
      if (!r.cancel_requested() && !ended_.contains(id)) open.push_back(r);
    }
  }
  int cancelled = 0;
  for (JobRecord& r : open) {
    absl::StatusOr<Job> job = View(r, /*measurements=*/false);
    if (!job.ok()) continue;  // Tried again next time.
    if (IsFinal(job->state())) {
      absl::MutexLock lock(&mu_);
      ended_.insert(r.job().job_id());
      continue;
    }
    const std::string why = ScheduleViolation(*job, clock_->Now());
    if (why.empty()) continue;
    if (absl::Status s = CancelFor(r, why); !s.ok()) {
      spdlog::warn("job {}: {}; cancelling it failed: {}", r.job().job_id(),
                   why, std::string(s.message()));
      continue;
    }
    ++cancelled;
  }
  return cancelled;
}

void JobManager::ScheduleLoop() {
  while (!stop_.WaitForNotificationWithTimeout(options_.schedule_interval)) {
    EnforceSchedule();
  }
}

absl::StatusOr<JobManager::Trials> JobManager::JobTrials(
    const std::string& job_id) {
  absl::StatusOr<JobRecord> record = Record(job_id);
  if (!record.ok()) return record.status();
  cairn::v1::Study study;
  absl::StatusOr<Job> job = View(*record, /*measurements=*/false, &study);
  if (!job.ok()) return job.status();
  Trials out;
  out.study_name = record->study_name();
  out.state = job->state();
  out.job_template = study.spec().job_template();
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
