// SlurmExecutor. See slurm_executor.h.
#include "jobs/slurm_executor.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "jobs/image_store.h"
#include "jobs/job_files.h"
#include "jobs/slurm_launch.h"
#include "jobs/subprocess.h"
#include "spdlog/spdlog.h"

namespace cairn::jobs {
namespace {

// The batch script: the job's argv follows it on sbatch's command line.
constexpr char kScript[] = "#!/bin/sh\nexec \"$@\"\n";

// The batch script in a fresh private dir, removed with this object: sbatch
// has copied it by the time it returns, so nothing is left in /tmp.
class ScopedScript {
 public:
  static absl::StatusOr<ScopedScript> Write();
  ScopedScript(ScopedScript&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ScopedScript& operator=(ScopedScript&&) = delete;
  ~ScopedScript() {
    if (path_.empty()) return;
    unlink(path_.c_str());
    rmdir(path_.substr(0, path_.rfind('/')).c_str());
  }
  const std::string& path() const { return path_; }

 private:
  explicit ScopedScript(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::StatusOr<ScopedScript> ScopedScript::Write() {
  char tmpl[] = "/tmp/cairn-slurm-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    return absl::InternalError("cannot create the Slurm batch script dir");
  }
  ScopedScript script(absl::StrCat(tmpl, "/exec.sh"));
  const int fd = open(script.path().c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
  if (fd < 0) return absl::InternalError("cannot write " + script.path());
  const ssize_t n = write(fd, kScript, sizeof(kScript) - 1);
  close(fd);
  if (n != static_cast<ssize_t>(sizeof(kScript) - 1)) {
    return absl::InternalError("cannot write " + script.path());
  }
  chmod(tmpl, 0755);
  return script;
}

// A single job's replica name: its container's cairn.replica label.
std::string ReplicaName(const JobSpec& spec) {
  auto it = spec.container->labels.find("cairn.replica");
  return it == spec.container->labels.end() ? "master" : it->second;
}

std::string Trimmed(const std::string& s) {
  return std::string(absl::StripAsciiWhitespace(s.substr(0, 800)));
}

class SlurmExecutor : public Executor {
 public:
  SlurmExecutor(const SlurmOptions& options, util::Clock* clock,
                const JobUser& user, std::string bin_dir)
      : options_(options),
        clock_(clock),
        user_(user),
        bin_(std::move(bin_dir)) {}

  // Runs a Slurm client tool with cairnd's SLURM_CONF only.
  absl::StatusOr<ProgramOutput> Tool(const std::string& name,
                                     std::vector<std::string> args) const {
    args.insert(args.begin(), absl::StrCat(bin_, "/", name));
    return RunProgram(args, ToolEnv());
  }

  std::vector<std::string> ToolEnv() const {
    std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                    "LANG=C.UTF-8"};
    if (!options_.slurm_conf.empty()) {
      env.push_back("SLURM_CONF=" + options_.slurm_conf);
    }
    return env;
  }

  absl::StatusOr<JobHandle> Start(const JobSpec& spec) override {
    // A container is started by a task (jobs/slurm_container.h), which
    // stops and removes it: a group of one.
    if (spec.container) return StartGroup({ReplicaName(spec)}, {spec});
    if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
    absl::StatusOr<ScopedScript> script = ScopedScript::Write();
    if (!script.ok()) return script.status();
    absl::StatusOr<int64_t> id = Submit(
        SbatchArgv(bin_ + "/sbatch", options_, user_, spec, script->path()),
        SlurmEnvironment(user_, spec, options_.slurm_conf));
    if (!id.ok()) return id.status();
    Track(*id);
    return JobHandle{*id, *id, 0};
  }

  bool StartsGroups() const override { return true; }

  absl::StatusOr<JobHandle> StartGroup(
      const std::vector<std::string>& names,
      const std::vector<JobSpec>& specs) override {
    for (const JobSpec& spec : specs) {
      if (absl::Status ok = CheckSpec(spec); !ok.ok()) return ok;
    }
    if (access(absl::StrCat(bin_, "/srun").c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "multi-replica trials need srun (", bin_, "/srun not found)"));
    }
    if (options_.launcher.empty()) {
      return absl::FailedPreconditionError(
          "multi-replica trials need cairnd's own path (/proc/self/exe)");
    }
    const std::string job_dir =
        specs[0].log_path.substr(0, specs[0].log_path.rfind('/'));
    absl::StatusOr<std::string> file = WriteGroupFile(job_dir, names, specs);
    if (!file.ok()) return file.status();
    absl::StatusOr<ScopedScript> script = ScopedScript::Write();
    if (!script.ok()) return script.status();
    // The tasks' environment is the clean base only: each replica's own
    // variables (the master's token among them) travel in the group file.
    JobSpec base;
    base.env["CAIRN_JOB_DIR"] = job_dir;
    absl::StatusOr<int64_t> id =
        Submit(SbatchGroupArgv(bin_ + "/sbatch", options_, user_, specs,
                               script->path(),
                               {options_.launcher, "--slurm-batch", *file}),
               SlurmEnvironment(user_, base, options_.slurm_conf));
    if (!id.ok()) {
      unlink(file->c_str());
      return id.status();
    }
    Track(*id);
    {
      absl::MutexLock lock(&mu_);
      group_files_[*id] = *file;
    }
    return JobHandle{*id, *id, 0};
  }

  std::optional<JobExit> Poll(const JobHandle& job) override {
    Track(job.id);
    Refresh();
    bool kill_now = false;
    std::optional<JobExit> exit = Lookup(job.id, kill_now);
    if (kill_now) Cancel(job.id, {});
    if (exit.has_value()) RemoveGroupFile(job.id);
    return exit;
  }

  void Terminate(const JobHandle& job, absl::Duration grace) override {
    {
      absl::MutexLock lock(&mu_);
      kill_at_[job.id] = clock_->Now() + grace;
    }
    Cancel(job.id, {"--signal=TERM", "--full"});
  }

  int Requeues(const JobHandle& job) override {
    absl::MutexLock lock(&mu_);
    auto it = restarts_.find(job.id);
    auto base = restart_base_.find(job.id);
    if (it == restarts_.end()) return 0;
    return it->second - (base == restart_base_.end() ? 0 : base->second);
  }

  bool Queued(const JobHandle& job) override {
    absl::MutexLock lock(&mu_);
    auto it = status_.find(job.id);
    return it != status_.end() && it->second.has_value() &&
           it->second->state == "PENDING";
  }

  bool KillOrphan(int64_t, int64_t) override { return false; }
  bool JobsOutliveServer() const override { return true; }
  JobHandle Reattach(int64_t pid, int64_t) override {
    Track(pid);
    {
      absl::MutexLock lock(&mu_);
      reattached_.insert(pid);
    }
    spdlog::info("slurm: reattached to job {}", pid);
    return JobHandle{pid, pid, 0};
  }

 private:
  // InvalidArgument for an empty argv or a variable Slurm reserves;
  // FailedPrecondition when the log cannot be handed to the job user.
  absl::Status CheckSpec(const JobSpec& spec) const {
    if (spec.argv.empty() && !spec.container) {
      return absl::InvalidArgumentError("empty argv");
    }
    if (spec.container && options_.containers.runtime.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "container image '", spec.container->image.substr(0, 100),
          "': cairnd runs no containers (--container-runtime=none)"));
    }
    // A missing image fails the submission, not the job on its node.
    if (spec.container && options_.containers.pull == "never") {
      absl::Status image = CheckJobUserImage(options_.containers.runtime,
                                             spec.container->image, user_);
      if (!image.ok()) return image;
    }
    for (const auto& [k, v] : spec.env) {
      const std::string why = SlurmReservedVariableReason(k);
      if (!why.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "job_template.env[", k, "] is not allowed with Slurm: ", why));
      }
    }
    // slurmstepd (or the replica's task) opens the log as the job user:
    // hand it the file (never through a link) that cairnd's attempt header
    // created.
    if (spec.log_path.empty()) return absl::OkStatus();
    absl::StatusOr<ScopedFd> log =
        OpenJobFile(spec.log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (!log.ok()) return log.status();
    if (user_.switch_user && fchown(log->get(), user_.uid, user_.gid) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot give job log ", spec.log_path, " to user ", user_.name));
    }
    return absl::OkStatus();
  }

  // sbatch `argv` with `env`; the new job's id. FailedPrecondition with
  // Slurm's message when sbatch refuses the job.
  absl::StatusOr<int64_t> Submit(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env) const {
    absl::StatusOr<ProgramOutput> out = RunProgram(argv, env);
    if (!out.ok()) return out.status();
    if (out->exit_code != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("sbatch refused the job: ", Trimmed(out->err)));
    }
    return ParseSbatchId(out->out);
  }

  // Writes the group file (jobs/slurm_launch.h) of `specs` into
  // <job_dir>/.cairn-slurm, readable by the job user only (it holds the
  // master's token). Returns its path.
  absl::StatusOr<std::string> WriteGroupFile(
      const std::string& job_dir, const std::vector<std::string>& names,
      const std::vector<JobSpec>& specs) const {
    SlurmGroup group;
    group.srun = bin_ + "/srun";
    group.scontrol = bin_ + "/scontrol";
    group.launcher = options_.launcher;
    group.run_root = job_dir + "/.cairn-slurm";
    group.grace = options_.grace_period;
    for (size_t i = 0; i < specs.size(); ++i) {
      group.replicas.push_back({names[i], specs[i].argv, specs[i].env,
                                specs[i].working_dir, specs[i].log_path,
                                specs[i].container});
      if (specs[i].container) group.containers = options_.containers;
    }
    struct stat st;
    if ((mkdir(group.run_root.c_str(), 0755) != 0 && errno != EEXIST) ||
        lstat(group.run_root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        (user_.switch_user &&
         lchown(group.run_root.c_str(), user_.uid, user_.gid) != 0)) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create ", group.run_root));
    }
    const std::string path = absl::StrCat(
        group.run_root, "/group-", absl::ToUnixNanos(absl::Now()), ".json");
    absl::StatusOr<ScopedFd> fd =
        OpenJobFile(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (!fd.ok()) return fd.status();
    const std::string text = SlurmGroupJson(group);
    if ((user_.switch_user && fchown(fd->get(), user_.uid, user_.gid) != 0) ||
        write(fd->get(), text.data(), text.size()) !=
            static_cast<ssize_t>(text.size())) {
      unlink(path.c_str());
      return absl::FailedPreconditionError(absl::StrCat("cannot write ", path));
    }
    return path;
  }

  void RemoveGroupFile(int64_t id) ABSL_LOCKS_EXCLUDED(mu_) {
    std::string path;
    {
      absl::MutexLock lock(&mu_);
      auto it = group_files_.find(id);
      if (it == group_files_.end()) return;
      path = std::move(it->second);
      group_files_.erase(it);
    }
    unlink(path.c_str());
  }

  // The exit of job `id` from the last squeue; `kill_now` when its grace
  // period is over and it still runs.
  std::optional<JobExit> Lookup(int64_t id, bool& kill_now)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    auto it = status_.find(id);
    if (it == status_.end()) return std::nullopt;  // Not looked up yet.
    if (!it->second.has_value()) {
      Forget(id);
      JobExit exit;
      exit.exit_code = 1;
      exit.detail =
          absl::StrCat("Slurm job ", id, " is no longer known to Slurm");
      return exit;
    }
    NoteRequeue(*it->second);
    std::optional<JobExit> exit = SlurmExit(*it->second);
    if (exit.has_value()) {
      Forget(id);
      return exit;
    }
    auto kill = kill_at_.find(id);
    if (kill != kill_at_.end() && clock_->Now() >= kill->second) {
      kill_at_.erase(kill);
      kill_now = true;
    }
    return std::nullopt;
  }

  void Cancel(int64_t id, std::vector<std::string> args) {
    args.push_back(absl::StrCat(id));
    absl::StatusOr<ProgramOutput> out = Tool("scancel", args);
    if (!out.ok() || out->exit_code != 0) {
      spdlog::warn("slurm: scancel {} failed: {}", id,
                   out.ok() ? Trimmed(out->err) : out.status().ToString());
    }
  }

  void Track(int64_t id) {
    absl::MutexLock lock(&mu_);
    tracked_.insert(id);
  }

  void Forget(int64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    tracked_.erase(id);
    status_.erase(id);
    kill_at_.erase(id);
    restarts_.erase(id);
    restart_base_.erase(id);
    reattached_.erase(id);
  }

  void NoteRequeue(const SlurmJobStatus& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    // A reattached job's earlier requeues were counted by the last cairnd.
    if (reattached_.erase(s.id) > 0) restart_base_[s.id] = s.restarts;
    int& seen = restarts_[s.id];
    if (s.restarts > seen) {
      spdlog::info("slurm: job {} was requeued by Slurm (restart {}): {}", s.id,
                   s.restarts, s.reason);
    }
    seen = s.restarts;
  }

  std::map<std::string, int64_t> JobsByState() override
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    std::map<std::string, int64_t> out;
    for (int64_t id : tracked_) {
      auto it = status_.find(id);
      if (it != status_.end() && it->second.has_value()) {
        ++out[it->second->state];
      }
    }
    return out;
  }

  // One squeue for every tracked job, at most once per status_interval.
  void Refresh() ABSL_LOCKS_EXCLUDED(mu_) {
    std::vector<int64_t> ids;
    {
      absl::MutexLock lock(&mu_);
      const absl::Time now = clock_->Now();
      if (now - last_refresh_ < options_.status_interval) return;
      last_refresh_ = now;
      ids.assign(tracked_.begin(), tracked_.end());
    }
    if (ids.empty()) return;
    absl::StatusOr<ProgramOutput> out =
        Tool("squeue", {"-h", "-t", "all", "-j", absl::StrJoin(ids, ","), "-O",
                        kSqueueFormat});
    absl::StatusOr<std::map<int64_t, SlurmJobStatus>> jobs =
        out.ok() ? ParseSqueue(out->out) : out.status();
    // squeue fails outright when every listed id is unknown.
    const bool all_unknown =
        out.ok() && out->exit_code != 0 &&
        out->err.find("Invalid job id") != std::string::npos;
    if (!jobs.ok() || (out->exit_code != 0 && !all_unknown)) {
      spdlog::warn("slurm: squeue failed (jobs count as running): {}",
                   jobs.ok() ? Trimmed(out->err) : jobs.status().ToString());
      return;
    }
    absl::MutexLock lock(&mu_);
    for (int64_t id : ids) {
      auto it = jobs->find(id);
      status_[id] = it == jobs->end()
                        ? std::nullopt
                        : std::optional<SlurmJobStatus>(it->second);
    }
  }

  const SlurmOptions options_;
  util::Clock* const clock_;
  const JobUser user_;
  const std::string bin_;

  absl::Mutex mu_;
  std::set<int64_t> tracked_ ABSL_GUARDED_BY(mu_);
  // Per job: its last status, or nullopt when squeue no longer knows it.
  std::map<int64_t, std::optional<SlurmJobStatus>> status_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, absl::Time> kill_at_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, int> restarts_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, int> restart_base_ ABSL_GUARDED_BY(mu_);
  std::set<int64_t> reattached_ ABSL_GUARDED_BY(mu_);
  // The group file of each multi-replica job this executor started.
  std::map<int64_t, std::string> group_files_ ABSL_GUARDED_BY(mu_);
  absl::Time last_refresh_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace

absl::StatusOr<std::unique_ptr<Executor>> NewSlurmExecutor(
    const SlurmOptions& options, util::Clock* clock, const JobUser& user) {
  SlurmOptions opts = options;
  if (opts.slurm_conf.empty()) {
    const char* conf = std::getenv("SLURM_CONF");
    if (conf != nullptr) opts.slurm_conf = conf;
  }
  if (!opts.slurm_conf.empty() && access(opts.slurm_conf.c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--executor=slurm: SLURM_CONF ", opts.slurm_conf, " is not readable"));
  }
  std::string bin = opts.bin_dir;
  if (bin.empty()) {
    const char* path = std::getenv("PATH");
    const std::string sbatch =
        FindProgram("sbatch", path != nullptr ? path : "/usr/bin:/bin");
    if (sbatch.empty()) {
      return absl::FailedPreconditionError(
          "--executor=slurm: sbatch not found in PATH (install slurm-client)");
    }
    bin = sbatch.substr(0, sbatch.rfind('/'));
  }
  for (const char* tool : {"sbatch", "squeue", "scancel"}) {
    if (access(absl::StrCat(bin, "/", tool).c_str(), X_OK) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("--executor=slurm: ", bin, "/", tool, " not found"));
    }
  }
  if (opts.launcher.empty()) {
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) opts.launcher.assign(self, n);
  }
  auto executor = std::make_unique<SlurmExecutor>(opts, clock, user, bin);
  absl::StatusOr<ProgramOutput> ping =
      executor->Tool("squeue", {"-h", "-o", "%i", "-j", "0"});
  // Job 0 never exists: a reachable cluster says so; an unreachable one
  // says it cannot connect.
  if (!ping.ok()) return ping.status();
  if (ping->err.find("Invalid job id") == std::string::npos &&
      ping->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--executor=slurm: Slurm is not reachable: ", Trimmed(ping->err)));
  }
  if (!opts.partition.empty()) {
    absl::StatusOr<ProgramOutput> part =
        executor->Tool("sinfo", {"-h", "-o", "%P", "-p", opts.partition});
    if (part.ok() && part->exit_code == 0 && Trimmed(part->out).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--slurm-partition: no partition \"", opts.partition,
                       "\" in the cluster"));
    }
  }
  return std::unique_ptr<Executor>(std::move(executor));
}

}  // namespace cairn::jobs
