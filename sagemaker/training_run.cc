// See training_run.h.
#include "sagemaker/training_run.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "sagemaker/channel_mounts.h"
#include "sagemaker/container_files.h"
#include "sagemaker/instance_types.h"
#include "sagemaker/job_timeline.h"
#include "sagemaker/tar_gz.h"
#include "sagemaker/tuning_job_view.h"
#include "spdlog/spdlog.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;
using cairn::v1::SageMakerCreateTrainingJobRequest;

constexpr char kOptMl[] = "/opt/ml";

double Now() { return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()); }

absl::Status Failed(const std::string& what, const fs::path& path,
                    const std::error_code& ec) {
  return absl::FailedPreconditionError(absl::StrCat(
      "sagemaker: cannot ", what, " ", path.string(), ": ", ec.message()));
}

// Gives `path` (never followed if a link) to the job user.
absl::Status GiveTo(const fs::path& path, const jobs::JobUser& user) {
  if (!user.switch_user) return absl::OkStatus();
  if (lchown(path.c_str(), user.uid, user.gid) != 0) {
    return Failed("chown", path,
                  std::error_code(errno, std::generic_category()));
  }
  return absl::OkStatus();
}

// A fresh directory at `dir`, cairnd's own: whatever is there (an earlier
// attempt's tree, or a link a job put in its place) is removed first,
// links unfollowed.
absl::Status FreshDir(const fs::path& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) return Failed("remove", dir, ec);
  fs::create_directory(dir, ec);
  if (ec) return Failed("create", dir, ec);
  return absl::OkStatus();
}

// JOB_DIR/ml, kept when it is a directory of cairnd's user, else made
// afresh: the job owns JOB_DIR and may have put a link there.
absl::Status OwnDir(const fs::path& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == geteuid()) {
    return absl::OkStatus();
  }
  return FreshDir(dir);
}

// True when `p` is a directory and no link.
bool RealDir(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::directory;
}

// Packs `src` (a real directory, else nothing) to the object root's `dest`.
absl::Status PackTo(const fs::path& src, const std::string& dest) {
  if (!RealDir(src)) return absl::OkStatus();
  std::error_code ec;
  fs::create_directories(fs::path(dest).parent_path(), ec);
  if (ec) return Failed("create", fs::path(dest).parent_path(), ec);
  return PackTarGz(src.string(), dest);
}

// Creates the mount point of `m` in the host tree `host` (mounted at
// /opt/ml) when `m` lands inside it: a directory for a directory, an empty
// file for a file (a manifest channel's object), so podman need not.
absl::Status MountPoint(const fs::path& host, const jobs::ContainerMount& m) {
  absl::string_view inside = m.container_path;
  if (!absl::ConsumePrefix(&inside, absl::StrCat(kOptMl, "/"))) {
    return absl::OkStatus();
  }
  const fs::path point = host / std::string(inside);
  std::error_code ec;
  if (fs::is_directory(m.host_path, ec)) {
    fs::create_directories(point, ec);
    if (ec) return Failed("create", point, ec);
    return absl::OkStatus();
  }
  fs::create_directories(point.parent_path(), ec);
  if (ec) return Failed("create", point.parent_path(), ec);
  const int fd =
      open(point.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) {
    return Failed("create", point,
                  std::error_code(errno, std::generic_category()));
  }
  close(fd);
  return absl::OkStatus();
}

// Notes each host's log times; a failure costs only the times, so it is
// logged (once: the writer then gives up).
void NoteTimes(std::vector<LogTimesWriter>& writers,
               const std::string& trial_name, absl::Time now, bool force) {
  for (size_t i = 0; i < writers.size(); ++i) {
    absl::Status s = writers[i].Note(now, force);
    if (!s.ok()) {
      spdlog::warn("sagemaker: job {} host algo-{}: log times: {}", trial_name,
                   i + 1, std::string(s.message()));
    }
  }
}

}  // namespace

std::string HostDir(const std::string& job_dir, int index) {
  return (fs::path(job_dir) / "ml" / HostName(index)).string();
}

std::string OutputUri(const SageMakerCreateTrainingJobRequest& request,
                      const std::string& file) {
  std::string base = request.output_data_config().s3_output_path();
  while (!base.empty() && base.back() == '/') base.pop_back();
  return absl::StrCat(base, "/", request.training_job_name(), "/output/", file);
}

absl::StatusOr<std::vector<jobs::ContainerMount>> TrainingRunHooks::DataMounts(
    const SageMakerCreateTrainingJobRequest& request) const {
  std::vector<jobs::ContainerMount> mounts;
  for (const auto& c : request.input_data_config()) {
    absl::StatusOr<std::vector<jobs::ContainerMount>> channel =
        ChannelMounts(objects_, c);
    if (!channel.ok()) return channel.status();
    mounts.insert(mounts.end(), channel->begin(), channel->end());
  }
  if (request.has_checkpoint_config()) {
    absl::StatusOr<std::string> dir = objects_.Resolve(
        "CheckpointConfig.S3Uri", request.checkpoint_config().s3_uri());
    if (!dir.ok()) return dir.status();
    std::error_code ec;
    fs::create_directories(*dir, ec);
    if (ec) return Failed("create", *dir, ec);
    if (absl::Status s = GiveTo(*dir, job_user_); !s.ok()) return s;
    mounts.push_back({*dir, request.checkpoint_config().local_path(), false});
  }
  return mounts;
}

absl::Status TrainingRunHooks::PrepareHost(
    const SageMakerCreateTrainingJobRequest& request,
    const std::string& job_dir, int index,
    const std::vector<jobs::ContainerMount>& data, jobs::JobSpec& spec) const {
  const fs::path host(HostDir(job_dir, index));
  if (absl::Status s = OwnDir(host.parent_path()); !s.ok()) return s;
  if (absl::Status s = FreshDir(host); !s.ok()) return s;
  if (absl::Status s = PrepareHostDir(host.string(), request, index); !s.ok()) {
    return s;
  }
  // The config stays root's; what the trainer writes is the job user's.
  for (const char* sub : {"model", "output", "output/data", "checkpoints"}) {
    if (absl::Status s = GiveTo(host / sub, job_user_); !s.ok()) return s;
  }
  for (const jobs::ContainerMount& m : data) {
    if (absl::Status s = MountPoint(host, m); !s.ok()) return s;
  }
  if (!spec.container) {
    return absl::FailedPreconditionError(
        "sagemaker: a training job runs only in a container");
  }
  jobs::ContainerJob& box = *spec.container;
  box.mounts.push_back({host.string(), kOptMl, false});
  box.mounts.insert(box.mounts.end(), data.begin(), data.end());
  const auto& algo = request.algorithm_specification();
  spec.argv.assign(algo.container_arguments().begin(),
                   algo.container_arguments().end());
  if (spec.argv.empty() && algo.container_entrypoint().empty()) {
    spec.argv = {"train"};
  }
  for (const auto& [name, value] : ContainerEnvironment(request)) {
    spec.env[name] = value;
  }
  absl::StatusOr<InstanceType> type =
      LookUpInstanceType(request.resource_config().instance_type());
  if (!type.ok()) return type.status();
  int64_t memory = int64_t{type->memory_gib} << 30;
  if (host_memory_bytes_ > 0) memory = std::min(memory, host_memory_bytes_);
  box.memory_bytes = memory;
  return absl::OkStatus();
}

absl::Status TrainingRunHooks::BeforeStart(const cairn::v1::Study& study,
                                           const cairn::v1::Trial& trial,
                                           const std::string& job_dir,
                                           std::vector<jobs::JobSpec>& specs) {
  if (!study.spec().has_sagemaker_training_job()) return absl::OkStatus();
  absl::StatusOr<SageMakerCreateTrainingJobRequest> trial_request =
      TrialTrainingRequest(study, trial);
  if (!trial_request.ok()) return trial_request.status();
  const SageMakerCreateTrainingJobRequest& request = *trial_request;
  absl::StatusOr<std::vector<jobs::ContainerMount>> data = DataMounts(request);
  if (!data.ok()) return data.status();
  for (size_t i = 0; i < specs.size(); ++i) {
    absl::Status s =
        PrepareHost(request, job_dir, static_cast<int>(i), *data, specs[i]);
    if (!s.ok()) return s;
  }
  if (absl::Status s = RecordTimeline(job_dir, TimelineEvent::kStarted, Now());
      !s.ok()) {
    return s;
  }
  auto watch = std::make_shared<Watch>();
  for (const jobs::JobSpec& spec : specs) {
    watch->times.emplace_back(spec.log_path);
  }
  if (!request.algorithm_specification().metric_definitions().empty() &&
      !specs.empty()) {
    std::error_code ec;
    const uintmax_t size = fs::file_size(specs[0].log_path, ec);
    absl::StatusOr<LogMetrics> metrics =
        LogMetrics::Create(request.algorithm_specification(), specs[0].log_path,
                           ec ? 0 : static_cast<int64_t>(size));
    if (!metrics.ok()) return metrics.status();
    watch->metrics = std::make_unique<LogMetrics>(*std::move(metrics));
  }
  absl::MutexLock lock(&mu_);
  watches_.insert_or_assign(trial.name(), std::move(watch));
  return absl::OkStatus();
}

std::vector<jobs::HypertuneEntry> TrainingRunHooks::PollMetrics(
    const std::string& trial_name) {
  std::shared_ptr<Watch> watch;
  {
    absl::MutexLock lock(&mu_);
    auto it = watches_.find(trial_name);
    if (it == watches_.end()) return {};
    watch = it->second;
  }
  const absl::Time now = absl::Now();
  NoteTimes(watch->times, trial_name, now, false);
  if (watch->metrics == nullptr) return {};
  return watch->metrics->Poll(absl::ToDoubleSeconds(now - absl::UnixEpoch()));
}

absl::Status TrainingRunHooks::AfterExit(const cairn::v1::Study& study,
                                         const cairn::v1::Trial& trial,
                                         const std::string& job_dir,
                                         bool /*succeeded*/) {
  std::shared_ptr<Watch> watch;
  {
    absl::MutexLock lock(&mu_);
    auto it = watches_.find(trial.name());
    if (it != watches_.end()) {
      watch = std::move(it->second);
      watches_.erase(it);
    }
  }
  // The last lines the job wrote get their times before any reader takes
  // its log as final.
  if (watch != nullptr) {
    NoteTimes(watch->times, trial.name(), absl::Now(), true);
  }
  if (!study.spec().has_sagemaker_training_job() || job_dir.empty()) {
    return absl::OkStatus();
  }
  absl::StatusOr<SageMakerCreateTrainingJobRequest> request =
      TrialTrainingRequest(study, trial);
  if (!request.ok()) return request.status();
  absl::Status noted = RecordTimeline(job_dir, TimelineEvent::kExited, Now());
  const fs::path host(HostDir(job_dir, 0));
  for (const auto& [src, file] : {std::pair{"model", "model.tar.gz"},
                                  std::pair{"output/data", "output.tar.gz"}}) {
    absl::StatusOr<std::string> dest = objects_.Resolve(
        "OutputDataConfig.S3OutputPath", OutputUri(*request, file));
    if (!dest.ok()) return dest.status();
    if (absl::Status s = PackTo(host / src, *dest); !s.ok()) return s;
  }
  if (noted.ok()) {
    noted = RecordTimeline(job_dir, TimelineEvent::kPacked, Now());
  }
  return noted;
}

}  // namespace cairn::sagemaker
