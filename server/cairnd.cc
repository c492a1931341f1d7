// Assembles and runs the server components.
#include "server/cairnd.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_builder.h"
#include "jobs/job_template.h"
#include "monitoring/grpc_metrics_interceptor.h"
#include "monitoring/study_summary.h"
#include "spdlog/spdlog.h"

namespace cairn {

absl::StatusOr<std::unique_ptr<Cairnd>> Cairnd::Start(
    const CairndOptions& options) {
  std::unique_ptr<Cairnd> d(new Cairnd());
  std::error_code ec;
  const std::filesystem::path store_path =
      std::filesystem::path(options.data_dir) / "store";
  std::filesystem::create_directories(store_path, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("--data-dir: cannot create '", store_path.string(),
                     "': ", ec.message()));
  }
  monitoring::MetricsOptions metrics_options;
  metrics_options.listen_address = options.metrics_listen;
  metrics_options.build = {CAIRN_VERSION, CAIRN_CUDA_ENABLED != 0};
  metrics_options.data_dir = options.data_dir;
  absl::StatusOr<std::unique_ptr<monitoring::Metrics>> metrics =
      monitoring::Metrics::Start(metrics_options);
  if (!metrics.ok()) {
    return absl::Status(
        metrics.status().code(),
        absl::StrCat("--metrics-listen: ", metrics.status().message()));
  }
  d->metrics_ = std::move(*metrics);
  d->observer_ =
      std::make_unique<monitoring::MetricsStudyObserver>(d->metrics_.get());
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(StoreOptions(), store_path.string());
  if (!store.ok()) return store.status();
  d->store_ = std::move(*store);
  const std::string jobs_root =
      options.jobs_root.empty()
          ? (std::filesystem::path(options.data_dir) / "jobs").string()
          : options.jobs_root;
  std::filesystem::create_directories(jobs_root, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--jobs-root: cannot create '", jobs_root, "': ", ec.message()));
  }
  const int gpus = options.gpus >= 0 ? options.gpus : jobs::DetectGpuCount();
  StudyManagerOptions manager_options;
  manager_options.observer = d->observer_.get();
  manager_options.validate_spec =
      [jobs_root, gpus](const cairn::v1::StudySpec& spec) {
        return jobs::ValidateJobPlacement(jobs_root, gpus, spec);
      };
  absl::StatusOr<std::unique_ptr<StudyManager>> manager =
      StudyManager::Open(d->store_.get(), manager_options);
  if (!manager.ok()) return manager.status();
  d->manager_ = std::move(*manager);
  d->executor_ = jobs::NewLocalProcessExecutor(Clock::Real());
  d->service_ = std::make_unique<StudyServiceImpl>(d->manager_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(),
                           &d->port_);
  builder.RegisterService(d->service_.get());
  builder.experimental().SetInterceptorCreators(
      monitoring::MakeGrpcMetricsInterceptors(d->metrics_.get()));
  builder.SetMaxReceiveMessageSize(64 << 20);
  d->server_ = builder.BuildAndStart();
  if (d->server_ == nullptr || d->port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("--listen: cannot listen on '", options.listen,
                     "' (address in use or invalid)"));
  }
  jobs::JobRunnerOptions runner_options;
  runner_options.jobs_root = jobs_root;
  runner_options.server_address = absl::StrCat("127.0.0.1:", d->port_);
  runner_options.gpus = gpus;
  runner_options.grace_period = absl::Seconds(options.grace_seconds);
  runner_options.observer = d->observer_.get();
  d->runner_ = std::make_unique<jobs::JobRunner>(
      d->manager_.get(), d->executor_.get(), Clock::Real(), runner_options);
  d->service_->set_job_runner(d->runner_.get());
  d->runner_->Start();
  Cairnd* raw = d.get();
  d->metrics_->SetSnapshotProvider([raw] { return raw->MetricsSnapshot(); });
  if (!options.port_file.empty()) {
    const std::string tmp = options.port_file + ".tmp";
    {
      std::ofstream out(tmp);
      out << d->port_ << "\n";
    }
    std::filesystem::rename(tmp, options.port_file, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("--port-file: cannot write '", options.port_file, "'"));
    }
  }
  spdlog::info(
      "cairnd {} started: store {} holds {} studies and {} trials; "
      "serving on port {}",
      CAIRN_VERSION, std::filesystem::absolute(store_path).string(),
      d->manager_->num_studies(), d->manager_->num_trials(), d->port_);
  return d;
}

monitoring::Snapshot Cairnd::MetricsSnapshot() {
  monitoring::Snapshot snapshot;
  for (const StudySummary& s : manager_->Summaries()) {
    snapshot.studies.push_back(monitoring::MakeStudySnapshot(
        s.study, s.trials_by_state, s.best_by_metric, s.running_metrics));
  }
  const jobs::JobCounts counts = runner_->Counts();
  snapshot.jobs_queued = counts.queued;
  snapshot.jobs_running = counts.running;
  snapshot.gpu_slots_used = counts.gpus_in_use;
  snapshot.gpu_slots_total = counts.gpus_total;
  snapshot.store_bytes = store_->ApproximateSizeBytes();
  return snapshot;
}

int Cairnd::metrics_port() const { return metrics_->http_port(); }

Cairnd::~Cairnd() {
  if (metrics_ != nullptr) metrics_->SetSnapshotProvider(nullptr);
  if (server_ != nullptr) {
    Shutdown();
    server_->Wait();
  }
  if (runner_ != nullptr) runner_->Stop();
}

void Cairnd::Wait() { server_->Wait(); }

void Cairnd::Shutdown() {
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

}  // namespace cairn
