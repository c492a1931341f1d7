// Assembles and runs the server components.
#include "server/cairnd.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_builder.h"
#include "jobs/job_template.h"
#include "monitoring/grpc_metrics_interceptor.h"
#include "monitoring/study_summary.h"
#include "server/unparsable_request_interceptor.h"
#include "spdlog/spdlog.h"
#include "store/backup.h"

namespace cairn {

namespace {

// Creates `dir` (and its parents); FailedPrecondition naming `flag`.
absl::Status CreateDir(const std::string& flag, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(flag, ": cannot create '", dir, "': ", ec.message()));
}

// Writes the bound port to `path` atomically (a temporary file, renamed).
absl::Status WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << port << "\n";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (!ec) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("--port-file: cannot write '", path, "'"));
}

bool IsLoopbackHost(absl::string_view host) {
  return host == "localhost" || host == "[::1]" || host == "::1" ||
         absl::StartsWith(host, "127.");
}

}  // namespace

absl::Status CheckAuthListen(bool auth, const std::string& listen) {
  if (auth) return absl::OkStatus();
  const size_t colon = listen.rfind(':');
  const absl::string_view host = absl::string_view(listen).substr(
      0, colon == std::string::npos ? listen.size() : colon);
  if (IsLoopbackHost(host)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--auth=none is for a single user on loopback only, but --listen is '",
      listen.substr(0, 128),
      "': listen on 127.0.0.1 or drop --auth=none and use tokens"));
}

std::string StorePath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / kStoreDirName).string();
}

absl::StatusOr<std::unique_ptr<Cairnd>> Cairnd::Start(
    const CairndOptions& options) {
  std::unique_ptr<Cairnd> d(new Cairnd());
  const std::string store_path = StorePath(options.data_dir);
  const std::string jobs_root =
      options.jobs_root.empty()
          ? (std::filesystem::path(options.data_dir) / "jobs").string()
          : options.jobs_root;
  const int gpus = options.gpus >= 0 ? options.gpus : jobs::DetectGpuCount();
  absl::Status s = CheckAuthListen(options.auth, options.listen);
  if (s.ok()) s = CreateDir("--data-dir", store_path);
  if (s.ok()) s = d->StartMetrics(options);
  if (s.ok()) {
    s = d->OpenController(store_path, jobs_root, gpus, options.min_free_space);
  }
  if (s.ok()) s = d->StartAuth(options);
  if (s.ok()) s = d->StartGrpc(options.listen, options.data_dir);
  if (s.ok()) s = d->StartJobs(jobs_root, gpus, options.grace_seconds);
  if (s.ok() && !options.port_file.empty()) {
    s = WritePortFile(options.port_file, d->port_);
  }
  if (!s.ok()) return s;
  spdlog::info(
      "cairnd {} started: store {} holds {} studies and {} trials; "
      "serving on port {}",
      CAIRN_VERSION, std::filesystem::absolute(store_path).string(),
      d->manager_->num_studies(), d->manager_->num_trials(), d->port_);
  return d;
}

absl::Status Cairnd::StartMetrics(const CairndOptions& options) {
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
  metrics_ = std::move(*metrics);
  observer_ =
      std::make_unique<monitoring::MetricsStudyObserver>(metrics_.get());
  return absl::OkStatus();
}

absl::Status Cairnd::OpenController(const std::string& store_path,
                                    const std::string& jobs_root, int gpus,
                                    uint64_t min_free_space) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(StoreOptions(), store_path);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  absl::Status s = CreateDir("--jobs-root", jobs_root);
  if (!s.ok()) return s;
  StudyManagerOptions manager_options;
  manager_options.observer = observer_.get();
  manager_options.min_free_bytes = min_free_space;
  manager_options.validate_spec = [jobs_root,
                                   gpus](const cairn::v1::StudySpec& spec) {
    return jobs::ValidateJobPlacement(jobs_root, gpus, spec);
  };
  absl::StatusOr<std::unique_ptr<StudyManager>> manager =
      StudyManager::Open(store_.get(), manager_options);
  if (!manager.ok()) return manager.status();
  manager_ = std::move(*manager);
  return absl::OkStatus();
}

absl::Status Cairnd::StartAuth(const CairndOptions& options) {
  if (!options.auth) {
    spdlog::warn(
        "cairnd: --auth=none: every call is allowed without a token (one "
        "user, loopback only)");
    authorizer_ = std::make_unique<auth::Authorizer>(nullptr);
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<auth::TokenRegistry>> tokens =
      auth::TokenRegistry::Open(store_.get());
  if (!tokens.ok()) return tokens.status();
  tokens_ = std::move(*tokens);
  absl::StatusOr<std::string> written =
      auth::BootstrapAdminToken(tokens_.get(), options.data_dir, absl::Now());
  if (!written.ok()) return written.status();
  if (!written->empty()) {
    spdlog::info(
        "cairnd: created the admin token; its secret is in {} (mode 0600): "
        "export CAIRN_TOKEN_FILE={} to use it",
        std::filesystem::absolute(*written).string(),
        std::filesystem::absolute(*written).string());
  }
  authorizer_ = std::make_unique<auth::Authorizer>(tokens_.get());
  return absl::OkStatus();
}

absl::Status Cairnd::StartGrpc(const std::string& listen,
                               const std::string& data_dir) {
  executor_ = jobs::NewLocalProcessExecutor(Clock::Real());
  service_ = std::make_unique<StudyServiceImpl>(manager_.get());
  admin_service_ = std::make_unique<AdminServiceImpl>(store_.get(), data_dir);
  service_->set_authorizer(authorizer_.get());
  admin_service_->set_authorizer(authorizer_.get());
  admin_service_->set_token_registry(tokens_.get());
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port_);
  // One port, one server: without this gRPC sets SO_REUSEPORT, and a second
  // cairnd on the same port would silently take half the connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(service_.get());
  builder.RegisterService(admin_service_.get());
  // First, so the metrics interceptor records the status it rewrites.
  auto interceptors = monitoring::MakeGrpcMetricsInterceptors(metrics_.get());
  interceptors.insert(interceptors.begin(),
                      std::make_unique<UnparsableRequestInterceptorFactory>());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.SetMaxReceiveMessageSize(64 << 20);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("--listen: cannot listen on '", listen,
                     "' (address in use or invalid)"));
  }
  return absl::OkStatus();
}

absl::Status Cairnd::StartJobs(const std::string& jobs_root, int gpus,
                               double grace_seconds) {
  jobs::JobRunnerOptions runner_options;
  runner_options.jobs_root = jobs_root;
  runner_options.server_address = absl::StrCat("127.0.0.1:", port_);
  runner_options.gpus = gpus;
  runner_options.grace_period = absl::Seconds(grace_seconds);
  runner_options.observer = observer_.get();
  if (tokens_ != nullptr) {
    runner_options.mint_token = [tokens =
                                     tokens_.get()](const std::string& trial) {
      return tokens->MintTrialToken(trial);
    };
  }
  runner_ = std::make_unique<jobs::JobRunner>(manager_.get(), executor_.get(),
                                              Clock::Real(), runner_options);
  service_->set_job_runner(runner_.get());
  runner_->Start();
  metrics_->SetSnapshotProvider([this] { return MetricsSnapshot(); });
  return absl::OkStatus();
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
  snapshot.store_writable = store_->WriteHealth().ok();
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
