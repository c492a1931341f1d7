// cairnd: the Cairn server process, assembled from the components: the store,
// the study controller and the gRPC services (StudyService, AdminService,
// health, reflection).
#ifndef CAIRN_SERVER_CAIRND_H_
#define CAIRN_SERVER_CAIRND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "aiplatform/job_manager.h"
#include "audit/audit_log.h"
#include "auth/authorizer.h"
#include "auth/aws_keys.h"
#include "auth/token_registry.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/server_interceptor.h"
#include "http/cloudwatch_logs_api.h"
#include "http/http_server.h"
#include "http/sagemaker_api.h"
#include "jobs/job_runner.h"
#include "jobs/job_template.h"
#include "jobs/job_user.h"
#include "monitoring/metrics.h"
#include "monitoring/study_observer.h"
#include "server/admin_service.h"
#include "server/job_service.h"
#include "server/reflection_service.h"
#include "server/sagemaker_key_service.h"
#include "server/study_service.h"
#include "server/tls.h"
#include "store/store.h"
#include "trials/study_manager.h"
#include "tuner/designer.h"

namespace cairn {

struct CairndOptions {
  // Directory of the embedded store (RocksDB lives in <data_dir>/store).
  // Default: ./cairn-data.
  std::string data_dir = "cairn-data";
  // gRPC listen address. Port 0 picks a free port (see port_file).
  // Default: 127.0.0.1:50051.
  std::string listen = "127.0.0.1:50051";
  // If non-empty, the bound port is written there once serving (for tests
  // and scripts that start cairnd on port 0).
  std::string port_file;
  // Root of every study's trial job dirs. Empty means <data_dir>/jobs. The
  // job user must be able to reach it (checked at start).
  std::string jobs_root;
  // Further roots a job template's absolute job_dir may lie in
  // (--allowed-job-dirs); each must be an existing directory.
  std::vector<std::string> allowed_job_dirs;
  // As root, cairnd runs jobs as this user (jobs/job_user.h) and gives it
  // their job dirs. Ignored when cairnd is not root: jobs then run as
  // cairnd's own user. Default: nobody.
  std::string job_user = "nobody";
  // As root: run jobs as root (an explicit opt-out, warned at every start).
  bool allow_root_jobs = false;
  // At most this many jobs run at once; 0 means jobs::DefaultMaxRunningJobs
  // (the GPU count, or the CPU cores without GPUs).
  int max_running_jobs = 0;
  // GPUs the job runner schedules; -1 asks the CUDA driver (jobs/gpu_detect.h).
  int gpus = -1;
  // Seconds a job has between SIGTERM and SIGKILL.
  double grace_seconds = 10;
  // Who runs trial jobs: "local" (child processes of cairnd) or "slurm"
  // (one Slurm batch job per attempt, jobs/slurm_executor.h; --gpus is then
  // the GPUs cairnd's trials may hold on the cluster at once, -1 meaning
  // 64). The slurm_* options apply to "slurm" only.
  std::string executor = "local";
  // Container jobs (job_template.container, docs/containers.md), with the
  // local executor only: the runtime's path, "" for podman on PATH (none
  // found: such jobs are refused at submission); and whether it may pull an
  // image missing from its local store ("missing") or not ("never").
  std::string container_runtime;
  std::string image_pull = "never";
  std::string slurm_partition;
  std::string slurm_account;
  // Whitespace-separated sbatch options added to every job.
  std::string slurm_extra_args;
  // The address training jobs get as CAIRN_SERVER, for jobs on other
  // machines (Slurm nodes): HOST:PORT, or HOST alone for HOST and cairnd's
  // gRPC port (`listen`'s, TLS included). "" (default): 127.0.0.1 and the
  // port cairnd keeps for jobs (`listen`'s, or the plaintext loopback one
  // with TLS).
  std::string job_server;
  // With job_server: a PEM CA file given to jobs as CAIRN_TLS_CA, to verify
  // cairnd's certificate there. It must be readable by the job user on the
  // nodes (a shared filesystem).
  std::string job_tls_ca;
  // Directory holding the `cairn` Python package, put first on every job's
  // PYTHONPATH and named in CAIRN_PYTHON_SDK. Default "": the one beside
  // this binary (jobs/python_sdk.h), none when there is none.
  std::string python_sdk;
  // Prometheus /metrics address; "" disables the HTTP endpoint.
  // Default: 127.0.0.1:9464.
  std::string metrics_listen = "127.0.0.1:9464";
  // Free bytes the store's disk must keep for new studies and trials to be
  // accepted (running trials can still report below it). 0 disables it.
  uint64_t min_free_space = uint64_t{256} << 20;
  // Every RPC needs a token (auth/authorizer.h); on first start cairnd
  // makes the token "admin" and writes it to <data_dir>/admin.token (0600).
  // false (--auth=none): no checks, for one user on loopback only: Start
  // refuses it with a non-loopback `listen`. Default: true.
  bool auth = true;
  // The audit log (audit/audit_log.h): every call that changes state and
  // every refused call, kept this long. Default: 90 days.
  absl::Duration audit_retention = absl::Hours(24 * 90);
  // Also record the calls that only read. Default: false.
  bool audit_reads = false;
  // Calls one principal (token) may have in progress at once; past it a
  // call gets RESOURCE_EXHAUSTED (auth/call_slots.h). 0: no bound.
  // Default: 256.
  int max_calls_per_token = 256;
  // GP_BANDIT: seconds a suggestion may compute before quasi-random points
  // answer instead (tuner::DesignerOptions); 0: no deadline.
  double gp_suggest_deadline_seconds = 0.5;
  // Threads that run GP_BANDIT suggestions, studies taking turns, one
  // study's waiting calls sharing one designer run (trials/suggest_pool.h).
  // A call still queued at gp_suggest_deadline_seconds gets quasi-random
  // points. Default: 1.
  int gp_workers = 1;
  // false: no audit log at all (no flag: only for benchmarks that measure
  // its cost; ListAuditEvents is then UNIMPLEMENTED). Default: true.
  bool audit = true;
  // TLS on `listen` (server/tls.h); off unless cert and key are set. With
  // TLS, cairnd's own training jobs reach it through a second, plaintext
  // port on 127.0.0.1 (tokens still checked), since they are handed
  // CAIRN_SERVER and no certificates.
  ServerTlsOptions tls;
  // Serve plaintext on a non-loopback `listen` anyway (warned at every
  // start); without it Start refuses that (server/listen_policy.h).
  bool insecure = false;
  // The REST API and web UI (http/web_handler.h) address HOST:PORT; port 0
  // picks a free one (logged, and see http_port()); "" disables them. The
  // loopback rule and --insecure apply as to `listen`. With `tls` set they
  // serve HTTPS only, with the same files (http/server_tls.h).
  // Default: 127.0.0.1:8080.
  std::string http_listen = "127.0.0.1:8080";
  // SageMaker's s3://BUCKET/KEY is DIR/BUCKET/KEY (sagemaker/object_root.h);
  // "" serves no object root (s3:// URIs are refused). Default: "".
  std::string object_root;
};

// The store directory of a data dir: <data_dir>/store.
std::string StorePath(const std::string& data_dir);

// A running cairnd. Thread-safe: Shutdown may be called from any thread.
class Cairnd {
 public:
  // Opens the store, recovers every study and starts serving. Errors name
  // the data dir or address that failed.
  static absl::StatusOr<std::unique_ptr<Cairnd>> Start(
      const CairndOptions& options);
  ~Cairnd();

  // Blocks until Shutdown completes.
  void Wait();
  // Stops accepting calls, lets in-flight calls finish (up to a deadline).
  void Shutdown();

  int port() const { return port_; }
  // The plaintext loopback port of the training jobs when TLS is on, else
  // port().
  int jobs_port() const { return jobs_port_ != 0 ? jobs_port_ : port_; }
  // Port of the /metrics endpoint, 0 when disabled.
  int metrics_port() const;
  // Port of the REST API and web UI, 0 when disabled.
  int http_port() const;
  StudyManager* manager() { return manager_.get(); }
  jobs::JobRunner* runner() { return runner_.get(); }

 private:
  Cairnd() = default;
  // The steps of Start, in order; each error names the flag at fault.
  absl::Status StartMetrics(const CairndOptions& options);
  absl::Status OpenController(const std::string& store_path,
                              const jobs::JobRoots& roots, int gpus,
                              const CairndOptions& options);
  // Resolves the job user and checks that it reaches every job root.
  absl::Status StartJobUser(const CairndOptions& options,
                            const jobs::JobRoots& roots);
  absl::Status StartAuth(const CairndOptions& options);
  absl::Status StartAudit(const CairndOptions& options);
  absl::Status StartGrpc(const CairndOptions& options);
  // StartGrpc's parts: the services, and the listening ports (with TLS, the
  // TLS port and the jobs' plaintext loopback port).
  void MakeServices(const CairndOptions& options);
  void AddPorts(const CairndOptions& options, grpc::ServerBuilder& builder);
  // The server interceptors, in order (see cairnd.cc).
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
  Interceptors();
  // The REST API and web UI (server/cairnd_http.cc), after StartGrpc: they
  // call the gRPC services in-process.
  absl::Status StartHttp(const CairndOptions& options);
  // The SageMaker API on the HTTP port (server/cairnd_sagemaker.cc).
  std::unique_ptr<http::SageMakerApi> MakeSageMakerApi(
      const CairndOptions& options);
  // CloudWatch Logs' read API for training jobs' logs, on the HTTP port
  // (server/cairnd_sagemaker.cc).
  std::unique_ptr<http::CloudWatchLogsApi> MakeCloudWatchLogsApi();
  // The Slurm executor of --executor=slurm (FailedPrecondition if Slurm
  // cannot be reached).
  absl::StatusOr<std::unique_ptr<jobs::Executor>> MakeSlurmExecutor(
      const CairndOptions& options);
  // Local processes, and containers when a runtime was found (removing the
  // containers an earlier cairnd left).
  absl::StatusOr<std::unique_ptr<jobs::Executor>> MakeLocalExecutor(
      const CairndOptions& options);
  absl::Status StartJobs(const CairndOptions& options,
                         const jobs::JobRoots& roots, int gpus);
  // The service's state for a Prometheus scrape.
  monitoring::Snapshot MetricsSnapshot();
  std::unique_ptr<monitoring::Metrics> metrics_;
  std::unique_ptr<monitoring::MetricsStudyObserver> observer_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<StudyManager> manager_;
  jobs::JobUser job_user_;
  std::unique_ptr<jobs::Executor> executor_;
  // Runs SageMaker training jobs' containers under SageMaker's contract.
  std::unique_ptr<jobs::AttemptHooks> attempt_hooks_;
  // The container runtime's path, "" when container jobs are refused.
  std::string container_runtime_;
  std::unique_ptr<jobs::JobRunner> runner_;
  // Null with --auth=none.
  std::unique_ptr<auth::TokenRegistry> tokens_;
  std::unique_ptr<auth::AwsKeys> aws_keys_;  // With tokens only.
  // Null with max_calls_per_token 0. Outlives server_ (its interceptors).
  std::unique_ptr<auth::CallSlots> call_slots_;
  std::unique_ptr<auth::Authorizer> authorizer_;
  std::unique_ptr<audit::AuditLog> audit_log_;
  std::unique_ptr<StudyServiceImpl> service_;
  std::unique_ptr<aiplatform::JobManager> job_manager_;
  std::unique_ptr<JobServiceImpl> job_service_;
  std::unique_ptr<AdminServiceImpl> admin_service_;
  std::unique_ptr<SageMakerKeyServiceImpl> sagemaker_key_service_;
  std::unique_ptr<ReflectionService> reflection_service_;
  std::unique_ptr<grpc::Server> server_;
  // After server_: stopped before it (it calls server_ in-process).
  std::unique_ptr<http::HttpServer> http_server_;
  int port_ = 0;
  int jobs_port_ = 0;  // 0 without TLS.
};

}  // namespace cairn

#endif  // CAIRN_SERVER_CAIRND_H_
