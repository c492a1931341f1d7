// cairnd: serves the Cairn API over gRPC on an embedded RocksDB store.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "jobs/slurm_launch.h"
#include "server/cairnd.h"
#include "spdlog/spdlog.h"
#include "store/repair.h"
#include "store/verify.h"
#include "util/flags/byte_size.h"
#include "util/flags/durations.h"
#include "util/flags/flag_validators.h"

namespace {

// --verify: prints the report; exits 0 when the store is intact.
int VerifyAndExit(const std::string& data_dir) {
  const std::string store_path = cairn::StorePath(data_dir);
  absl::StatusOr<cairn::VerifyReport> report = cairn::VerifyStore(store_path);
  if (!report.ok()) {
    std::fprintf(stderr, "cairnd: error: %s\n",
                 std::string(report.status().message()).c_str());
    return 1;
  }
  std::fputs(cairn::FormatVerifyReport(store_path, *report).c_str(), stdout);
  return report->problems.empty() ? 0 : 1;
}

// --repair: sets the store aside, salvages it and prints what it recovered.
int RepairAndExit(const std::string& data_dir) {
  const std::string store_path = cairn::StorePath(data_dir);
  absl::StatusOr<cairn::RepairReport> report =
      cairn::RepairStore(store_path, absl::Now());
  if (!report.ok()) {
    std::fprintf(stderr, "cairnd: error: repair failed: %s\n",
                 std::string(report.status().message()).c_str());
    return 1;
  }
  std::fputs(cairn::FormatRepairReport(store_path, *report).c_str(), stdout);
  std::printf("start cairnd --data-dir %s as usual to serve it\n",
              data_dir.c_str());
  return 0;
}
// The flags, and the values cairnd parses further after CLI11 (sizes,
// durations, the auth mode) before they go into `options`.
struct Flags {
  cairn::CairndOptions options;
  std::string min_free_space = "256MB";
  std::string auth_mode = "token";
  std::string audit_retention = "90d";
  bool verify = false;
  bool repair = false;
};

// The flags are added in the order --help lists them.

// Where the store lives and where the API listens.
void AddServerFlags(CLI::App& app, cairn::CairndOptions& options) {
  app.add_option("--data-dir", options.data_dir,
                 "Directory of the embedded store")
      ->capture_default_str();
  app.add_option("--listen", options.listen,
                 "gRPC listen address HOST:PORT (port 0 picks a free one)")
      ->capture_default_str();
  app.add_option("--port-file", options.port_file,
                 "Write the bound port to this file once serving");
}

// Where trial jobs run, as whom and how many at once.
void AddJobFlags(CLI::App& app, cairn::CairndOptions& options) {
  app.add_option("--jobs-root", options.jobs_root,
                 "Root of the trial job dirs (default <data-dir>/jobs)");
  app.add_option("--allowed-job-dirs", options.allowed_job_dirs,
                 "DIR[,DIR...]: further roots a job template's absolute "
                 "job_dir may lie in (besides --jobs-root)")
      ->delimiter(',');
  app.add_option("--job-user", options.job_user,
                 "As root, run trial jobs as this user and give it their job "
                 "dirs (ignored when cairnd is not root: jobs run as cairnd's "
                 "user)")
      ->capture_default_str();
  app.add_flag("--allow-root-jobs", options.allow_root_jobs,
               "As root, run trial jobs as root instead of --job-user "
               "(dangerous; warned at every start)");
  app.add_option("--max-running-jobs", options.max_running_jobs,
                 "At most N trial jobs run at once, all studies together; "
                 "the others stay QUEUED (0: the GPU count, or the CPU cores "
                 "without GPUs)")
      ->transform(cairn::util::flags::IntegerFlag(0, 100000))
      ->capture_default_str();
  app.add_option("--gpus", options.gpus,
                 "GPUs to schedule trial jobs on (-1: ask the CUDA driver)")
      ->transform(cairn::util::flags::IntegerFlag(-1, 4096))
      ->capture_default_str();
  app.add_option("--grace-seconds", options.grace_seconds,
                 "Seconds between SIGTERM and SIGKILL when a job is stopped "
                 "(or a duration such as 1m)")
      ->transform(cairn::util::flags::SecondsFlag(/*allow_zero=*/true))
      ->capture_default_str();
}

// Who runs trial jobs (local or Slurm) and how jobs reach cairnd.
void AddExecutorFlags(CLI::App& app, cairn::CairndOptions& options) {
  app.add_option("--executor", options.executor,
                 "Who runs trial jobs: local (child processes) or slurm (one "
                 "Slurm batch job per attempt; needs a shared filesystem)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  app.add_option("--container-runtime", options.container_runtime,
                 "Runs jobs whose template names an image (default: podman "
                 "on PATH; none, or none found: such jobs are refused; with "
                 "--executor=slurm, found on each node's PATH)");
  app.add_option("--image-pull", options.image_pull,
                 "never: images only from the local store; missing: the "
                 "runtime may pull an absent image")
      ->check(CLI::IsMember({"never", "missing"}))
      ->capture_default_str();
  app.add_option("--slurm-partition", options.slurm_partition,
                 "With --executor=slurm: the partition (default: Slurm's)");
  app.add_option("--slurm-account", options.slurm_account,
                 "With --executor=slurm: the account to charge");
  app.add_option("--slurm-extra-args", options.slurm_extra_args,
                 "With --executor=slurm: whitespace-separated sbatch options "
                 "added to every job (e.g. \"--qos=low --constraint=a100\")");
  app.add_option("--job-server", options.job_server,
                 "The address training jobs get as CAIRN_SERVER, for jobs "
                 "on other machines (Slurm nodes): HOST:PORT, or HOST for "
                 "HOST and --listen's port (default: 127.0.0.1 and cairnd's "
                 "port for jobs)");
  app.add_option("--job-tls-ca", options.job_tls_ca,
                 "With --job-server on a TLS port: PEM CA file jobs get as "
                 "CAIRN_TLS_CA (readable by the job user on the nodes)")
      ->check(CLI::ExistingFile);
  app.add_option("--python-sdk", options.python_sdk,
                 "Absolute directory holding the cairn Python package that "
                 "every job gets first on PYTHONPATH and as CAIRN_PYTHON_SDK "
                 "(default: ../lib/cairn/python beside cairnd, as the build "
                 "tree and the .deb lay it out)");
}

// Metrics, REST, free-space reserve, authentication, audit and call limits.
void AddServingFlags(CLI::App& app, Flags& flags) {
  app.add_option("--metrics-listen", flags.options.metrics_listen,
                 "Prometheus /metrics address HOST:PORT (\"\" disables)")
      ->capture_default_str();
  app.add_option("--http-listen", flags.options.http_listen,
                 "REST API and web UI address HOST:PORT (port 0 picks a free "
                 "one; \"\" disables); HTTPS only when --tls-cert is given")
      ->capture_default_str();
  app.add_option("--object-root", flags.options.object_root,
                 "SageMaker jobs' s3://BUCKET/KEY is DIR/BUCKET/KEY (a plain "
                 "directory; \"\" refuses s3:// URIs)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--min-free-space", flags.min_free_space,
                 "Refuse new studies and trials while the store's disk has "
                 "less free space (BYTES, or with a KB/MB/GB suffix; 0 "
                 "disables it); running trials can still report")
      ->capture_default_str();
  app.add_option("--auth", flags.auth_mode,
                 "token: every call needs a token (the admin's is written to "
                 "<data-dir>/admin.token on first start); none: no checks, "
                 "for one user on loopback only")
      ->check(CLI::IsMember({"token", "none"}))
      ->capture_default_str();
  app.add_option("--audit-retention", flags.audit_retention,
                 "Keep audit events this long (e.g. 90d, 12h); older ones "
                 "are deleted at start and hourly")
      ->capture_default_str();
  app.add_flag("--audit-reads", flags.options.audit_reads,
               "Also record the calls that only read in the audit log");
  app.add_option("--gp-suggest-deadline",
                 flags.options.gp_suggest_deadline_seconds,
                 "GP_BANDIT: SECONDS a suggestion may compute before "
                 "quasi-random points answer instead (suggestion_kind "
                 "quasi_random_deadline; the GP work finishes in the "
                 "background); 0: no deadline")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--gp-workers", flags.options.gp_workers,
                 "GP_BANDIT: threads computing suggestions; studies take "
                 "turns and one study's waiting calls share one computation")
      ->transform(cairn::util::flags::IntegerFlag(1, 64))
      ->capture_default_str();
  app.add_option("--max-calls-per-token", flags.options.max_calls_per_token,
                 "Calls one token may have in progress at once (each holds "
                 "a thread); more get RESOURCE_EXHAUSTED (0: no limit)")
      ->transform(cairn::util::flags::IntegerFlag(0, 1000000))
      ->capture_default_str();
}

// TLS files and the plaintext override.
void AddTlsFlags(CLI::App& app, cairn::CairndOptions& options) {
  app.add_option("--tls-cert", options.tls.cert_file,
                 "PEM certificate chain to serve TLS with (needs --tls-key); "
                 "re-read when the file changes")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", options.tls.key_file,
                 "PEM private key of --tls-cert")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-client-ca", options.tls.client_ca_file,
                 "PEM CA certificates: require every client to present a "
                 "certificate signed by one (mTLS; needs --tls-cert)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-refresh-seconds", options.tls.refresh_seconds,
                 "How often the TLS files are checked for changes")
      ->transform(cairn::util::flags::IntegerFlag(1, 86400))
      ->capture_default_str();
  app.add_flag("--insecure", options.insecure,
               "Serve plaintext on a non-loopback --listen (refused "
               "without it); warned at every start");
}

// --verify and --repair: check or salvage the store instead of serving.
void AddMaintenanceFlags(CLI::App& app, Flags& flags) {
  CLI::Option* verify_flag = app.add_flag(
      "--verify", flags.verify,
      "Check the store read-only, print a report and exit (0: intact, 1: "
      "damaged); does not serve");
  app.add_flag("--repair", flags.repair,
               "Move a damaged store aside to store.damaged-YYYYMMDD-HHMMSS, "
               "salvage it into a fresh store, print what was recovered and "
               "exit; does not serve")
      ->excludes(verify_flag);
}

// Parses the flag values CLI11 keeps as text into flags->options. On error
// the message names the flag.
absl::Status FinishOptions(Flags* flags) {
  absl::StatusOr<uint64_t> reserve = cairn::util::flags::ParseByteSize(
      "--min-free-space", flags->min_free_space);
  if (!reserve.ok()) return reserve.status();
  flags->options.min_free_space = *reserve;
  absl::StatusOr<absl::Duration> retention =
      cairn::util::flags::ParseFlagDuration("--audit-retention",
                                            flags->audit_retention);
  if (!retention.ok()) return retention.status();
  flags->options.audit_retention = *retention;
  flags->options.auth = flags->auth_mode != "none";
  return absl::OkStatus();
}

// Serves until SIGTERM or SIGINT; the exit status of cairnd.
int Serve(const cairn::CairndOptions& options) {
  // Debian's Abseil records every Mutex acquisition in a global lock-order
  // graph (deadlock detection). The tests keep it on to catch lock-order
  // bugs; the server drops it from every request's path.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);

  // Block the shutdown signals in every thread; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  absl::StatusOr<std::unique_ptr<cairn::Cairnd>> server =
      cairn::Cairnd::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "cairnd: error: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  std::thread waiter([&signals, &server] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    spdlog::info("cairnd: received signal {}, shutting down", signal_number);
    (*server)->Shutdown();
  });
  (*server)->Wait();
  waiter.join();
  server->reset();
  spdlog::info("cairnd: stopped cleanly");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Inside a multi-replica Slurm job (jobs/slurm_launch.h), not a server.
  if (argc == 3 && std::string(argv[1]) == "--slurm-batch") {
    return cairn::jobs::RunSlurmBatch(argv[2]);
  }
  if (argc == 3 && std::string(argv[1]) == "--slurm-replica") {
    return cairn::jobs::RunSlurmReplica(argv[2]);
  }
  Flags flags;
  CLI::App app{"cairnd: the Cairn hyperparameter-tuning server"};
  AddServerFlags(app, flags.options);
  AddJobFlags(app, flags.options);
  AddExecutorFlags(app, flags.options);
  AddServingFlags(app, flags);
  AddTlsFlags(app, flags.options);
  AddMaintenanceFlags(app, flags);
  app.set_version_flag("--version", CAIRN_VERSION);
  CLI11_PARSE(app, argc, argv);
  if (flags.verify) return VerifyAndExit(flags.options.data_dir);
  if (flags.repair) return RepairAndExit(flags.options.data_dir);
  if (absl::Status st = FinishOptions(&flags); !st.ok()) {
    std::fprintf(stderr, "cairnd: error: %s\n",
                 std::string(st.message()).c_str());
    return 2;
  }
  return Serve(flags.options);
}
