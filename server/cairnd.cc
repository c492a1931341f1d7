// Assembles and runs the server components.
#include "server/cairnd.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/server_builder.h"
#include "jobs/container_executor.h"
#include "jobs/gpu_detect.h"
#include "jobs/job_template.h"
#include "jobs/python_sdk.h"
#include "jobs/slurm_container.h"
#include "jobs/slurm_executor.h"
#include "monitoring/grpc_metrics_interceptor.h"
#include "monitoring/study_summary.h"
#include "sagemaker/training_run.h"
#include "server/audit_interceptor.h"
#include "server/call_slots_interceptor.h"
#include "server/listen_policy.h"
#include "server/reflection_service.h"
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

// The Python SDK directory jobs get (--python-sdk, else the one beside this
// binary), logged.
absl::StatusOr<std::string> JobPythonSdk(const std::string& flag) {
  std::error_code ec;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  absl::StatusOr<std::string> sdk = jobs::ResolvePythonSdk(flag, exe);
  if (!sdk.ok()) return sdk;
  if (sdk->empty()) {
    spdlog::warn(
        "cairnd: no Python SDK beside {} (../lib/cairn/python): jobs "
        "cannot import cairn unless they bring it (--python-sdk)",
        exe.string());
  } else {
    spdlog::info(
        "cairnd: jobs import the Python SDK from {} "
        "(CAIRN_PYTHON_SDK, first on PYTHONPATH; --python-sdk)",
        *sdk);
  }
  return sdk;
}

}  // namespace

std::string StorePath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / kStoreDirName).string();
}

absl::StatusOr<std::unique_ptr<Cairnd>> Cairnd::Start(
    const CairndOptions& options) {
  std::unique_ptr<Cairnd> d(new Cairnd());
  const std::string store_path = StorePath(options.data_dir);
  const jobs::JobRoots roots{
      options.jobs_root.empty()
          ? (std::filesystem::path(options.data_dir) / "jobs").string()
          : options.jobs_root,
      options.allowed_job_dirs};
  const int gpus = options.gpus >= 0 ? options.gpus : jobs::DetectGpuCount();
  const ListenSecurity listen_security{options.listen, options.auth,
                                       options.tls.enabled(), options.insecure};
  absl::Status s = CheckListenSecurity(listen_security);
  if (s.ok() && options.tls.enabled()) s = CheckServerTlsFiles(options.tls);
  if (s.ok() && !options.job_tls_ca.empty() && options.job_server.empty()) {
    s = absl::InvalidArgumentError(
        "--job-tls-ca: needs --job-server (jobs on the loopback job port "
        "connect without TLS)");
  }
  // The port is a placeholder: only the value's form is checked here, before
  // the store is opened or anything listens.
  if (s.ok()) s = JobServerAddress(options.job_server, 1, 1).status();
  if (s.ok() && ServesPlaintextOnNetwork(listen_security)) {
    spdlog::warn(
        "cairnd: --insecure: serving plaintext on {}, reachable from the "
        "network: tokens and data travel unencrypted (serve TLS with "
        "--tls-cert and --tls-key)",
        options.listen);
  }
  if (s.ok() && options.executor == "local") {
    absl::StatusOr<std::string> runtime =
        jobs::FindContainerRuntime(options.container_runtime);
    s = runtime.status();
    if (s.ok()) d->container_runtime_ = *std::move(runtime);
  } else if (s.ok()) {
    // Slurm: the runtime runs on the nodes, found there by this name.
    absl::StatusOr<std::string> runtime =
        jobs::SlurmContainerRuntime(options.container_runtime);
    s = runtime.status();
    if (s.ok()) d->container_runtime_ = *std::move(runtime);
  }
  if (s.ok()) s = CreateDir("--data-dir", store_path);
  if (s.ok()) s = d->StartMetrics(options);
  if (s.ok()) s = d->OpenController(store_path, roots, gpus, options);
  if (s.ok()) s = d->StartJobUser(options, roots);
  if (s.ok()) s = d->StartAuth(options);
  if (s.ok()) s = d->StartAudit(options);
  if (s.ok()) s = d->StartGrpc(options);
  if (s.ok()) s = d->StartHttp(options);
  if (s.ok()) s = d->StartJobs(options, roots, gpus);
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
                                    const jobs::JobRoots& roots, int gpus,
                                    const CairndOptions& options) {
  absl::StatusOr<std::unique_ptr<Store>> store =
      Store::Open(StoreOptions(), store_path);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  absl::Status s = CreateDir("--jobs-root", roots.jobs_root);
  if (!s.ok()) return s;
  StudyManagerOptions manager_options;
  manager_options.observer = observer_.get();
  manager_options.min_free_bytes = options.min_free_space;
  manager_options.gp_workers = options.gp_workers;
  manager_options.gp_queue_deadline_seconds =
      options.gp_suggest_deadline_seconds;
  tuner::DesignerOptions designers;
  designers.gp_suggest_deadline_seconds = options.gp_suggest_deadline_seconds;
  manager_options.create_designer =
      [designers](const cairn::v1::StudySpec& spec) {
        return tuner::CreateDesigner(spec, designers);
      };
  manager_options.validate_spec = [roots, gpus, runtime = container_runtime_](
                                      const cairn::v1::StudySpec& spec) {
    return jobs::ValidateJobTemplate(roots, gpus, spec, runtime);
  };
  absl::StatusOr<std::unique_ptr<StudyManager>> manager =
      StudyManager::Open(store_.get(), manager_options);
  if (!manager.ok()) return manager.status();
  manager_ = std::move(*manager);
  aiplatform::JobManagerOptions job_options;
  job_options.jobs_root = std::filesystem::absolute(roots.jobs_root).string();
  absl::StatusOr<std::unique_ptr<aiplatform::JobManager>> jobs =
      aiplatform::JobManager::Open(store_.get(), manager_.get(),
                                   util::Clock::Real(), job_options);
  if (!jobs.ok()) return jobs.status();
  job_manager_ = std::move(*jobs);
  return absl::OkStatus();
}

absl::Status Cairnd::StartAuth(const CairndOptions& options) {
  if (options.max_calls_per_token > 0) {
    call_slots_ =
        std::make_unique<auth::CallSlots>(options.max_calls_per_token);
  }
  if (!options.auth) {
    spdlog::warn(
        "cairnd: --auth=none: every call is allowed without a token (one "
        "user, loopback only)");
    authorizer_ = std::make_unique<auth::Authorizer>(nullptr);
    authorizer_->set_call_slots(call_slots_.get());
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
  absl::StatusOr<std::unique_ptr<auth::AwsKeys>> keys = auth::AwsKeys::Open(
      (std::filesystem::path(options.data_dir) / "aws-keys.key").string());
  if (!keys.ok()) return keys.status();
  aws_keys_ = std::move(*keys);
  authorizer_ = std::make_unique<auth::Authorizer>(tokens_.get());
  authorizer_->set_call_slots(call_slots_.get());
  return absl::OkStatus();
}

absl::Status Cairnd::StartAudit(const CairndOptions& options) {
  if (!options.audit) return absl::OkStatus();
  audit::AuditLogOptions audit_options;
  audit_options.retention = options.audit_retention;
  audit_options.record_reads = options.audit_reads;
  absl::StatusOr<std::unique_ptr<audit::AuditLog>> log =
      audit::AuditLog::Open(store_.get(), audit_options);
  if (!log.ok()) return log.status();  // Errors name the store or retention.
  audit_log_ = std::move(*log);
  return absl::OkStatus();
}

std::vector<
    std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
Cairnd::Interceptors() {
  // The unparsable-request rewrite first, so that the audit log and the
  // metrics see the status it sends; audit before metrics, so that the
  // latency the metrics record includes the audit write.
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(
      std::make_unique<UnparsableRequestInterceptorFactory>());
  if (call_slots_ != nullptr) {
    interceptors.push_back(
        std::make_unique<CallSlotsInterceptorFactory>(call_slots_.get()));
  }
  if (audit_log_ != nullptr) {
    interceptors.push_back(std::make_unique<AuditInterceptorFactory>(
        audit_log_.get(), authorizer_.get(), observer_.get()));
  }
  for (auto& metrics :
       monitoring::MakeGrpcMetricsInterceptors(metrics_.get())) {
    interceptors.push_back(std::move(metrics));
  }
  return interceptors;
}

void Cairnd::MakeServices(const CairndOptions& options) {
  service_ = std::make_unique<StudyServiceImpl>(manager_.get());
  admin_service_ =
      std::make_unique<AdminServiceImpl>(store_.get(), options.data_dir);
  service_->set_authorizer(authorizer_.get());
  service_->set_observer(observer_.get());
  job_service_ = std::make_unique<JobServiceImpl>(job_manager_.get());
  job_service_->set_authorizer(authorizer_.get());
  admin_service_->set_authorizer(authorizer_.get());
  admin_service_->set_token_registry(tokens_.get());
  admin_service_->set_audit_log(audit_log_.get());
  sagemaker_key_service_ = std::make_unique<SageMakerKeyServiceImpl>(
      authorizer_.get(), tokens_.get(), aws_keys_.get());
  reflection_service_ = std::make_unique<ReflectionService>(
      std::vector<std::string>{
          cairn::v1::StudyService::service_full_name(),
          cairn::v1::AdminService::service_full_name(),
          cairn::v1::JobService::service_full_name(),
          cairn::v1::SageMakerKeyService::service_full_name(),
          grpc::reflection::v1alpha::ServerReflection::service_full_name()},
      authorizer_.get());
}

void Cairnd::AddPorts(const CairndOptions& options,
                      grpc::ServerBuilder& builder) {
  const std::string& listen = options.listen;
  if (options.tls.enabled()) {
    builder.AddListeningPort(listen, NewServerTlsCredentials(options.tls),
                             &port_);
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &jobs_port_);
  } else {
    builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &port_);
  }
  // One port, one server: without this gRPC sets SO_REUSEPORT, and a second
  // cairnd on the same port would silently take half the connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
}

absl::Status Cairnd::StartGrpc(const CairndOptions& options) {
  MakeServices(options);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  AddPorts(options, builder);
  builder.RegisterService(service_.get());
  builder.RegisterService(admin_service_.get());
  builder.RegisterService(job_service_.get());
  builder.RegisterService(sagemaker_key_service_.get());
  builder.RegisterService(reflection_service_.get());
  builder.experimental().SetInterceptorCreators(Interceptors());
  builder.SetMaxReceiveMessageSize(64 << 20);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0 ||
      (options.tls.enabled() && jobs_port_ == 0)) {
    return absl::UnavailableError(
        absl::StrCat("--listen: cannot listen on '", options.listen,
                     "' (address in use or invalid)"));
  }
  if (options.tls.enabled()) {
    spdlog::info(
        "cairnd: serving TLS on port {}{} (certificates re-read every {} s "
        "when changed); training jobs use plaintext 127.0.0.1:{}",
        port_,
        options.tls.client_ca_file.empty() ? ""
                                           : ", client certificates required",
        options.tls.refresh_seconds, jobs_port_);
  }
  return absl::OkStatus();
}

absl::Status Cairnd::StartJobUser(const CairndOptions& options,
                                  const jobs::JobRoots& roots) {
  absl::StatusOr<jobs::JobUser> user =
      jobs::ResolveJobUser(options.job_user, options.allow_root_jobs);
  if (!user.ok()) return user.status();
  job_user_ = *std::move(user);
  // The default jobs root lies in the data dir, which may be 0700 (a backup,
  // mktemp -d): let the job user pass through it (o+x, not o+r); the store
  // inside stays 0700 below.
  struct stat st;
  if (job_user_.switch_user && options.jobs_root.empty() &&
      stat(options.data_dir.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0 &&
      chmod(options.data_dir.c_str(), (st.st_mode & 07777) | S_IXOTH) == 0) {
    spdlog::info("cairnd: made --data-dir {} searchable (o+x) for the job user",
                 options.data_dir);
  }
  absl::Status s =
      jobs::CheckUserCanReach(job_user_, roots.jobs_root, "--jobs-root");
  for (const std::string& dir : roots.allowed_job_dirs) {
    if (!s.ok()) break;
    if (!std::filesystem::is_directory(dir)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--allowed-job-dirs: '", dir, "' is not an existing directory"));
    }
    s = jobs::CheckUserCanReach(job_user_, dir, "--allowed-job-dirs");
  }
  if (!s.ok()) return s;
  // Jobs run as another user: they must not read the store (every study,
  // token hashes) beside their jobs root.
  if (job_user_.switch_user) chmod(StorePath(options.data_dir).c_str(), 0700);
  if (geteuid() == 0 && !job_user_.switch_user) {
    spdlog::warn(
        "cairnd: --allow-root-jobs: TRIAL JOBS RUN AS ROOT: any study's "
        "job_template can do anything on this machine. Drop the flag to run "
        "them as --job-user (default nobody)");
  } else {
    spdlog::info("cairnd: jobs run as user {} (uid {}){}", job_user_.name,
                 job_user_.uid,
                 job_user_.switch_user
                     ? ""
                     : ": cairnd is not root, so --job-user does not apply");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<jobs::Executor>> Cairnd::MakeSlurmExecutor(
    const CairndOptions& options) {
  jobs::SlurmOptions slurm;
  slurm.partition = options.slurm_partition;
  slurm.account = options.slurm_account;
  slurm.extra_args = absl::StrSplit(
      options.slurm_extra_args, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  slurm.grace_period = absl::Seconds(options.grace_seconds);
  slurm.containers.runtime = container_runtime_;
  slurm.containers.pull = options.image_pull;
  slurm.containers.data_dir =
      std::filesystem::absolute(options.data_dir).string();
  spdlog::info(
      "cairnd: trial jobs run as Slurm batch jobs (--executor=slurm); "
      "container jobs with rootless {} on the nodes",
      container_runtime_.empty() ? "(none)" : container_runtime_);
  return jobs::NewSlurmExecutor(slurm, util::Clock::Real(), job_user_);
}

absl::StatusOr<std::unique_ptr<jobs::Executor>> Cairnd::MakeLocalExecutor(
    const CairndOptions& options) {
  std::unique_ptr<jobs::Executor> processes =
      jobs::NewLocalProcessExecutor(util::Clock::Real(), job_user_);
  if (container_runtime_.empty()) {
    spdlog::info(
        "cairnd: no container runtime (podman) found: jobs naming "
        "an image are refused (--container-runtime)");
    return processes;
  }
  jobs::ContainerOptions containers;
  containers.runtime = container_runtime_;
  containers.pull = options.image_pull;
  containers.data_dir = std::filesystem::absolute(options.data_dir).string();
  containers.state_dir = containers.data_dir + "/containers";
  containers.grace_period = absl::Seconds(options.grace_seconds);
  containers.host_cpus = static_cast<int>(std::thread::hardware_concurrency());
  spdlog::info("cairnd: container jobs run with {} (--image-pull={})",
               container_runtime_, options.image_pull);
  return jobs::NewContainerExecutor(containers, job_user_, std::move(processes),
                                    util::Clock::Real());
}

absl::Status Cairnd::StartJobs(const CairndOptions& options,
                               const jobs::JobRoots& roots, int gpus) {
  const bool slurm = options.executor == "slurm";
  if (slurm && gpus < 0) gpus = 64;
  jobs::JobRunnerOptions runner_options;
  runner_options.jobs_root = roots.jobs_root;
  runner_options.allowed_job_dirs = roots.allowed_job_dirs;
  runner_options.job_user = job_user_;
  runner_options.max_running_jobs = options.max_running_jobs > 0
                                        ? options.max_running_jobs
                                        : jobs::DefaultMaxRunningJobs(gpus);
  spdlog::info("cairnd: at most {} trial jobs run at once (--max-running-jobs)",
               runner_options.max_running_jobs);
  absl::StatusOr<std::string> job_server =
      JobServerAddress(options.job_server, port_, jobs_port());
  if (!job_server.ok()) return job_server.status();
  runner_options.server_address = *job_server;
  runner_options.server_tls_ca = options.job_tls_ca;
  if (!options.job_server.empty()) {
    spdlog::info("cairnd: training jobs reach cairnd at {}{} (--job-server)",
                 *job_server,
                 options.job_tls_ca.empty()
                     ? ""
                     : absl::StrCat(", CA ", options.job_tls_ca));
  }
  absl::StatusOr<std::string> sdk = JobPythonSdk(options.python_sdk);
  if (!sdk.ok()) return sdk.status();
  if (!sdk->empty()) {
    // Jobs that never import cairn still run: a warning, not a refusal.
    absl::Status reach =
        jobs::CheckUserCanReach(job_user_, *sdk, "--python-sdk");
    if (!reach.ok()) spdlog::warn("cairnd: {}", std::string(reach.message()));
  }
  runner_options.python_sdk = *sdk;
  runner_options.gpus = gpus;
  runner_options.grace_period = absl::Seconds(options.grace_seconds);
  runner_options.observer = observer_.get();
  attempt_hooks_ = std::make_unique<sagemaker::TrainingRunHooks>(
      sagemaker::ObjectRoot(options.object_root), job_user_,
      jobs::PhysicalMemoryBytes());
  runner_options.hooks = attempt_hooks_.get();
  if (tokens_ != nullptr) {
    runner_options.mint_token = [tokens =
                                     tokens_.get()](const std::string& trial) {
      return tokens->MintTrialToken(trial);
    };
    runner_options.forget_token =
        [tokens = tokens_.get()](const std::string& trial) {
          tokens->ForgetTrialToken(trial);
        };
  }
  if (slurm) {
    absl::StatusOr<std::unique_ptr<jobs::Executor>> executor =
        MakeSlurmExecutor(options);
    if (!executor.ok()) return executor.status();
    executor_ = *std::move(executor);
  } else {
    absl::StatusOr<std::unique_ptr<jobs::Executor>> executor =
        MakeLocalExecutor(options);
    if (!executor.ok()) return executor.status();
    executor_ = *std::move(executor);
  }
  runner_ = std::make_unique<jobs::JobRunner>(
      manager_.get(), executor_.get(), util::Clock::Real(), runner_options);
  service_->set_job_runner(runner_.get());
  job_service_->set_job_runner(runner_.get());
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
  snapshot.jobs_max_running = counts.max_running;
  snapshot.gpu_slots_used = counts.gpus_in_use;
  snapshot.gpu_slots_total = counts.gpus_total;
  snapshot.cluster_jobs_by_state = executor_->JobsByState();
  snapshot.store_bytes = store_->ApproximateSizeBytes();
  snapshot.store_writable = store_->WriteHealth().ok();
  return snapshot;
}

int Cairnd::metrics_port() const { return metrics_->http_port(); }

Cairnd::~Cairnd() {
  http_server_.reset();  // Its requests call server_.
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
