// Job runner implementation. See job_runner.h for what a tick does.
#include "jobs/job_runner.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "jobs/hypertune.h"
#include "trials/resource_names.h"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;
using cairn::v1::Study;
using cairn::v1::Trial;
using cairn::v1::TrialJob;

bool IsPending(Trial::State s) {
  return s == Trial::REQUESTED || s == Trial::ACTIVE || s == Trial::STOPPING;
}

// Shortest text that parses back to the same double; integers without ".0".
std::string FormatNumber(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, end);
}

std::string FormatValue(const google::protobuf::Value& v) {
  if (v.kind_case() == google::protobuf::Value::kStringValue) {
    return v.string_value();
  }
  if (v.kind_case() == google::protobuf::Value::kBoolValue) {
    return v.bool_value() ? "true" : "false";
  }
  return FormatNumber(v.number_value());
}

// Resolves a template's job_dir against the jobs root; InvalidArgument if
// it escapes the root.
absl::StatusOr<fs::path> ResolveUnderRoot(const std::string& root,
                                          const std::string& job_dir,
                                          const std::string& default_name) {
  std::error_code ec;
  const fs::path root_c = fs::weakly_canonical(fs::absolute(root), ec);
  fs::path p = job_dir.empty()                   ? root_c / default_name
               : fs::path(job_dir).is_absolute() ? fs::path(job_dir)
                                                 : root_c / job_dir;
  p = fs::weakly_canonical(p, ec);
  const fs::path rel = p.lexically_relative(root_c);
  if (rel.empty() || rel == "." || *rel.begin() == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("job_template.job_dir: '", job_dir,
                     "' is outside the jobs root '", root_c.string(), "'"));
  }
  return p;
}

int64_t DurationSeconds(const google::protobuf::Duration& d) {
  return d.seconds() + (d.nanos() > 0 ? 1 : 0);
}

}  // namespace

absl::Status JobRunner::ValidateTemplate(const std::string& jobs_root,
                                         const cairn::v1::StudySpec& spec) {
  if (!spec.has_job_template()) return absl::OkStatus();
  const cairn::v1::TrialJobTemplate& t = spec.job_template();
  if (t.command().empty()) {
    return absl::InvalidArgumentError(
        "job_template.command: must name the training program (argv)");
  }
  if (t.command(0).empty()) {
    return absl::InvalidArgumentError(
        "job_template.command[0]: must not be empty");
  }
  if (t.gpus_per_trial() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job_template.gpus_per_trial: ", t.gpus_per_trial(), " is negative"));
  }
  if (t.max_restarts() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job_template.max_restarts: ", t.max_restarts(), " is negative"));
  }
  if (t.max_running_time().seconds() < 0 || t.max_running_time().nanos() < 0) {
    return absl::InvalidArgumentError(
        "job_template.max_running_time: must not be negative");
  }
  for (const auto& [k, v] : t.env()) {
    if (k.empty() || k.find('=') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("job_template.env: invalid variable name '", k, "'"));
    }
  }
  absl::StatusOr<fs::path> dir = ResolveUnderRoot(jobs_root, t.job_dir(), "x");
  return dir.ok() ? absl::OkStatus() : dir.status();
}

JobRunner::JobRunner(StudyManager* manager, Executor* executor,
                     const JobRunnerOptions& options)
    : manager_(manager),
      executor_(executor),
      options_(options),
      gpus_(options.gpus >= 0 ? options.gpus : DetectGpuCount()) {}

JobRunner::~JobRunner() { Stop(); }

void JobRunner::Start() {
  Recover();
  thread_ = std::thread([this] { Loop(); });
}

void JobRunner::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void JobRunner::Loop() {
  while (true) {
    Tick();
    absl::MutexLock lock(&mu_);
    auto stopped = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopped), options_.poll_interval);
    if (stop_) return;
  }
}

void JobRunner::SetJob(const std::string& trial_name, const TrialJob& job) {
  // A failure here (e.g. the study was deleted) only loses bookkeeping.
  (void)manager_->UpdateTrialJob(trial_name, job);
}

std::string JobRunner::StudyJobDir(const JobStudyView& view) const {
  absl::StatusOr<fs::path> dir = ResolveUnderRoot(
      options_.jobs_root, view.study.spec().job_template().job_dir(),
      absl::StrCat("study-", view.study_id));
  return dir.ok() ? dir->string() : std::string();
}

void JobRunner::Recover() {
  for (const JobStudyView& view : manager_->JobStudies()) {
    for (const Trial& t : view.pending) {
      TrialJob job = t.job();
      if (job.pid() > 0 &&
          executor_->KillOrphan(job.pid(), job.proc_start_ticks())) {
        job.set_message("orphan of a previous cairnd killed; resuming");
      }
      if (job.state() == TrialJob::STATE_UNSPECIFIED ||
          job.state() == TrialJob::QUEUED) {
        continue;
      }
      job.set_pid(0);
      job.set_proc_start_ticks(0);
      job.set_state(TrialJob::QUEUED);
      job.clear_gpus();
      SetJob(t.name(), job);
    }
  }
}

void JobRunner::Tick() {
  absl::MutexLock lock(&mu_);
  // 1. Running jobs first: collect metrics, end, reap. Exits free slots that
  //    step 2 fills in the same tick (dispatch latency is one tick at most).
  std::vector<JobStudyView> views = manager_->JobStudies();
  std::map<std::string, std::pair<const JobStudyView*, const Trial*>> pending;
  for (const JobStudyView& view : views) {
    for (const Trial& trial : view.pending) {
      pending[trial.name()] = {&view, &trial};
    }
  }
  bool exited = false;
  for (auto it = running_.begin(); it != running_.end();) {
    auto p = pending.find(it->first);
    if (p == pending.end()) {
      CheckRunning(it->second, nullptr, nullptr);  // Completed via the API.
    } else {
      CheckRunning(it->second, p->second.first, p->second.second);
    }
    if (it->second.job.state() == TrialJob::STATE_UNSPECIFIED) {
      it = running_.erase(it);  // Finished and handled.
      exited = true;
    } else {
      ++it;
    }
  }
  if (exited) views = manager_->JobStudies();

  // 2. Top up each ACTIVE study and start (or cancel) what is not running.
  int queued = 0;
  for (JobStudyView& view : views) {
    if (view.study.state() == Study::ACTIVE) TopUp(view);
    for (const Trial& trial : view.pending) {
      if (running_.count(trial.name()) > 0) continue;
      if (view.study.state() != Study::ACTIVE) {
        TrialJob job = trial.job();
        job.set_state(TrialJob::CANCELLED);
        job.set_message(absl::StrCat("cancelled: study is ",
                                     Study::State_Name(view.study.state())));
        (void)manager_->FailTrial(trial.name(), job.message());
        SetJob(trial.name(), job);
        continue;
      }
      if (trial.state() == Trial::STOPPING) {
        TrialJob job = trial.job();
        job.set_state(TrialJob::CANCELLED);
        job.set_message("stopped before it started");
        if (!manager_->CompleteTrial(trial.name(), std::nullopt, false, "")
                 .ok()) {
          (void)manager_->FailTrial(trial.name(), "stopped before reporting");
        }
        SetJob(trial.name(), job);
        continue;
      }
      StartQueued(view, trial);
      if (running_.count(trial.name()) == 0) ++queued;
    }
  }
  queued_ = queued;
}

void JobRunner::TopUp(const JobStudyView& view_in) {
  JobStudyView& view = const_cast<JobStudyView&>(view_in);
  const cairn::v1::StudySpec& spec = view.study.spec();
  const int per_trial = spec.job_template().gpus_per_trial();
  int limit = spec.max_parallel_trials();
  if (limit <= 0) {
    limit = per_trial > 0 ? std::max(1, gpus_.total() / per_trial)
                          : static_cast<int>(std::max(
                                1u, std::thread::hardware_concurrency()));
  }
  const int want = limit - static_cast<int>(view.pending.size());
  if (want <= 0) return;
  absl::StatusOr<SuggestResult> result =
      manager_->SuggestTrials(view.study.name(), want, "");
  if (!result.ok()) return;
  // New trials have no job state yet; StartQueued records RUNNING, or
  // QUEUED when their GPUs are busy (one write instead of two).
  for (Trial& t : result->trials) view.pending.push_back(std::move(t));
  view.study.set_state(result->study_state);
}

void JobRunner::StartQueued(const JobStudyView& view, const Trial& trial) {
  const cairn::v1::TrialJobTemplate& tmpl = view.study.spec().job_template();
  TrialJob job = trial.job();
  std::optional<std::vector<int>> gpus = gpus_.Acquire(tmpl.gpus_per_trial());
  if (!gpus.has_value()) {
    if (job.state() != TrialJob::QUEUED) {
      job.set_state(TrialJob::QUEUED);
      SetJob(trial.name(), job);
    }
    return;
  }
  auto fail = [&](const std::string& reason) {
    gpus_.Release(*gpus);
    job.set_state(TrialJob::FAILED);
    job.set_message(reason);
    (void)manager_->FailTrial(trial.name(), reason);
    SetJob(trial.name(), job);
  };
  const std::string study_dir = StudyJobDir(view);
  if (study_dir.empty())
    return fail("job_template.job_dir is outside the jobs root");
  const fs::path dir = fs::path(study_dir) / absl::StrCat("trial-", trial.id());
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return fail(absl::StrCat("cannot create job dir '", dir.string(),
                             "': ", ec.message()));
  }
  const bool resume = job.attempts() > 0;
  job.set_attempts(job.attempts() + 1);
  job.set_job_dir(dir.string());
  job.set_log_path((dir / "job.log").string());
  job.clear_gpus();
  for (int g : *gpus) job.add_gpus(g);

  JobSpec spec;
  spec.argv.assign(tmpl.command().begin(), tmpl.command().end());
  for (const auto& p : trial.parameters()) {
    spec.argv.push_back(
        absl::StrCat("--", p.parameter_id(), "=", FormatValue(p.value())));
  }
  spec.argv.push_back(absl::StrCat("--job-dir=", dir.string()));
  // Jobs run in cairnd's working directory, so relative paths in the
  // command resolve there; their own directory is --job-dir.
  spec.log_path = job.log_path();
  for (const auto& [k, v] : tmpl.env()) spec.env[k] = v;
  const std::string trial_id = absl::StrCat(trial.id());
  const std::string hypertune = (dir / "hypertune.metrics").string();
  spec.env["CAIRN_SERVER"] = options_.server_address;
  spec.env["CAIRN_STUDY"] = view.study.name();
  spec.env["CAIRN_TRIAL_ID"] = trial_id;
  spec.env["CAIRN_JOB_DIR"] = dir.string();
  if (resume) spec.env["CAIRN_RESUME"] = "1";
  spec.env["CLOUD_ML_TRIAL_ID"] = trial_id;
  spec.env["CLOUD_ML_HP_METRIC_FILE"] = hypertune;
  spec.env["CUDA_VISIBLE_DEVICES"] = absl::StrJoin(*gpus, ",");
  nlohmann::json tf_config = {
      {"cluster", {{"master", {"127.0.0.1:0"}}}},
      {"task", {{"type", "master"}, {"index", 0}, {"trial", trial_id}}},
      {"job", {{"job_dir", dir.string()}}},
      {"environment", "cloud"}};
  spec.env["TF_CONFIG"] = tf_config.dump();
  {
    std::ofstream log(job.log_path(), std::ios::app);
    log << "=== cairn: attempt " << job.attempts()
        << (resume ? " (resume)" : "") << " of trial " << trial.name() << " at "
        << absl::FormatTime(absl::Now()) << ": "
        << absl::StrJoin(spec.argv, " ") << "\n";
  }
  absl::StatusOr<JobHandle> handle = executor_->Start(spec);
  if (!handle.ok()) return fail(std::string(handle.status().message()));
  job.set_state(TrialJob::RUNNING);
  job.set_pid(handle->pid);
  job.set_proc_start_ticks(handle->start_ticks);
  job.set_message("");
  SetJob(trial.name(), job);

  Running r;
  r.trial_name = trial.name();
  r.study_id = view.study_id;
  r.handle = *handle;
  r.gpus = *gpus;
  r.started = absl::Now();
  if (tmpl.has_max_running_time() &&
      DurationSeconds(tmpl.max_running_time()) > 0) {
    r.timeout = absl::Seconds(tmpl.max_running_time().seconds()) +
                absl::Nanoseconds(tmpl.max_running_time().nanos());
  }
  r.hypertune_path = hypertune;
  r.hypertune_timestamp = job.hypertune_timestamp();
  r.job = job;
  running_.emplace(trial.name(), std::move(r));
}

void JobRunner::Collect(Running& r) {
  // Every tick polls every running job: skip the read and parse unless the
  // writer replaced or grew the file since the last look.
  std::error_code ec;
  const auto mtime = fs::last_write_time(r.hypertune_path, ec);
  if (ec) return;  // Not written yet.
  const std::uintmax_t size = fs::file_size(r.hypertune_path, ec);
  if (ec || (mtime == r.hypertune_mtime && size == r.hypertune_size)) return;
  r.hypertune_mtime = mtime;
  r.hypertune_size = size;
  std::vector<HypertuneEntry> entries =
      ReadHypertuneSince(r.hypertune_path, r.hypertune_timestamp);
  if (entries.empty()) return;
  std::vector<MeasurementReport> reports;
  for (const HypertuneEntry& e : entries) {
    MeasurementReport m;
    m.trial_name = r.trial_name;
    m.measurement.set_step_count(e.global_step);
    for (const auto& [k, v] : e.metrics) {
      auto* metric = m.measurement.add_metrics();
      metric->set_metric_id(k);
      metric->set_value(v);
    }
    reports.push_back(std::move(m));
  }
  r.hypertune_timestamp = entries.back().timestamp;
  r.job.set_hypertune_timestamp(r.hypertune_timestamp);
  // The measurements and how far the file was read, in one durable write.
  if (!manager_->AddMeasurementsWithJob(reports, r.trial_name, r.job).ok()) {
    // Rejected measurements (e.g. a NaN) are dropped; move past them.
    SetJob(r.trial_name, r.job);
  }
}

void JobRunner::CheckRunning(Running& r, const JobStudyView* view,
                             const Trial* trial) {
  Collect(r);
  if (std::optional<JobExit> exit = executor_->Poll(r.handle)) {
    HandleExit(r, *exit);
    r.job.set_state(TrialJob::STATE_UNSPECIFIED);  // Marks it handled.
    return;
  }
  if (r.terminating) return;
  std::string reason;
  if (absl::Now() - r.started > r.timeout) {
    reason = "timeout";
  } else if (view == nullptr) {
    if (!manager_->GetTrialBasic(r.trial_name).ok()) reason = "cancelled";
  } else if (view->study.state() != Study::ACTIVE) {
    reason = "cancelled";
  } else if (trial != nullptr && trial->state() == Trial::STOPPING) {
    reason = "stopped";
  }
  if (reason.empty()) return;
  executor_->Terminate(r.handle, options_.grace_period);
  r.terminating = true;
  r.terminate_reason = reason;
  r.job.set_state(TrialJob::STOPPING);
  r.job.set_message(reason);
  SetJob(r.trial_name, r.job);
}

bool JobRunner::HandleExit(Running& r, const JobExit& exit) {
  Collect(r);
  gpus_.Release(r.gpus);
  TrialJob job = r.job;
  job.set_pid(0);
  job.set_proc_start_ticks(0);
  job.set_last_exit_code(exit.signal != 0 ? 128 + exit.signal : exit.exit_code);
  absl::StatusOr<Trial> trial = manager_->GetTrialBasic(r.trial_name);
  if (!trial.ok()) return true;  // Deleted meanwhile.
  const std::string how = exit.ToString();
  if (!IsPending(trial->state())) {
    job.set_state(TrialJob::SUCCEEDED);
    job.set_message(absl::StrCat("trial completed by the program; job ", how));
  } else if (r.terminate_reason == "cancelled") {
    job.set_state(TrialJob::CANCELLED);
    job.set_message("cancelled");
    (void)manager_->FailTrial(r.trial_name, "cancelled: the study stopped");
  } else if (r.terminate_reason == "stopped" ||
             trial->state() == Trial::STOPPING) {
    job.set_state(TrialJob::CANCELLED);
    job.set_message(absl::StrCat("stopped early; job ", how));
    if (!manager_->CompleteTrial(r.trial_name, std::nullopt, false, "").ok()) {
      (void)manager_->FailTrial(r.trial_name,
                                "stopped before reporting its objective");
    }
  } else if (r.terminate_reason == "timeout") {
    job.set_state(TrialJob::FAILED);
    job.set_message("timeout: ran longer than job_template.max_running_time");
    (void)manager_->FailTrial(r.trial_name, job.message());
  } else if (exit.ok()) {
    absl::StatusOr<Trial> done =
        manager_->CompleteTrial(r.trial_name, std::nullopt, false, "");
    if (done.ok()) {
      job.set_state(TrialJob::SUCCEEDED);
      job.set_message("exit code 0");
    } else {
      job.set_state(TrialJob::FAILED);
      job.set_message(
          absl::StrCat("exit code 0 but ", done.status().message()));
      (void)manager_->FailTrial(r.trial_name, job.message());
    }
  } else {
    // Look the template up again: the view is not at hand here.
    absl::StatusOr<Study> study = manager_->GetStudy(StudyName(r.study_id));
    const int max_restarts =
        study.ok() ? study->spec().job_template().max_restarts() : 0;
    if (job.restarts() < max_restarts) {
      job.set_restarts(job.restarts() + 1);
      job.set_state(TrialJob::QUEUED);
      job.set_message(absl::StrCat(how, "; restart ", job.restarts(), " of ",
                                   max_restarts));
      ++restarts_total_;
      if (options_.observer != nullptr && study.ok()) {
        options_.observer->OnJobRestart(study->name());
      }
    } else {
      job.set_state(TrialJob::FAILED);
      job.set_message(
          absl::StrCat(how, " after ", job.restarts(), " restart(s)"));
      (void)manager_->FailTrial(r.trial_name,
                                absl::StrCat("job failed: ", job.message()));
    }
  }
  SetJob(r.trial_name, job);
  return true;
}

absl::StatusOr<JobRunner::LogChunk> JobRunner::ReadLogs(
    const std::string& trial_name, int64_t offset, int max_bytes) {
  if (offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("offset: ", offset, " is negative"));
  }
  if (max_bytes <= 0) max_bytes = 1 << 20;
  absl::StatusOr<Trial> trial = manager_->GetTrialBasic(trial_name);
  if (!trial.ok()) return trial.status();
  LogChunk chunk;
  chunk.next_offset = offset;
  if (trial->job().log_path().empty()) {
    if (!IsPending(trial->state())) chunk.complete = true;
    if (trial->job().state() == TrialJob::STATE_UNSPECIFIED &&
        !IsPending(trial->state())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "trial ", trial_name, " did not run as a job: it has no log"));
    }
    return chunk;
  }
  std::ifstream in(trial->job().log_path(), std::ios::binary);
  if (in) {
    in.seekg(offset);
    chunk.data.resize(max_bytes);
    in.read(chunk.data.data(), max_bytes);
    chunk.data.resize(static_cast<size_t>(in.gcount()));
  }
  chunk.next_offset = offset + static_cast<int64_t>(chunk.data.size());
  const bool at_end = static_cast<int>(chunk.data.size()) < max_bytes;
  chunk.complete = at_end && !IsPending(trial->state()) &&
                   trial->job().state() != TrialJob::RUNNING &&
                   trial->job().state() != TrialJob::STOPPING;
  return chunk;
}

JobCounts JobRunner::Counts() const {
  absl::MutexLock lock(&mu_);
  JobCounts c;
  c.queued = queued_;
  c.running = static_cast<int>(running_.size());
  c.gpus_in_use = gpus_.in_use();
  c.gpus_total = gpus_.total();
  c.restarts_total = restarts_total_;
  return c;
}

}  // namespace cairn::jobs
