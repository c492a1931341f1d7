// Prometheus metrics of cairnd: push-style counters and histograms recorded on
// the hot path, and gauges computed from a snapshot of the service at scrape
// time. Served by a prometheus-cpp pull exposer at http://ADDRESS/metrics.
//
// Metric names (all `cairn_` metrics use base units; `study` is always the
// study's display_name, which is unique and human-readable):
//   cairn_build_info{version,cuda="true|false"}                   gauge = 1
//   cairn_studies{state}                                           gauge
//   cairn_study_info{study,name,state,algorithm,driver}            gauge = 1
//   cairn_trials{study,state}                                      gauge
//   cairn_trials_finished_total{study,outcome}                     counter
//   cairn_study_best_objective{study,metric}                       gauge
//   cairn_trial_metric_latest{study,trial,metric}     gauge, running trials
//   cairn_suggestion_duration_seconds{algorithm}                   histogram
//   cairn_suggested_trials_total{algorithm}                        counter
//   cairn_suggestion_deadline_fallbacks_total{algorithm}           counter
//   cairn_early_stopping_decisions_total{study,rule,decision}      counter
//   cairn_grpc_requests_total{method,code}                         counter
//   cairn_grpc_request_duration_seconds{method}                    histogram
//   cairn_call_phase_duration_seconds{method,phase}                histogram
//   cairn_store_write_duration_seconds                             histogram
//   cairn_store_bytes                                              gauge
//   cairn_store_writable                                           gauge
//   cairn_store_filesystem_avail_bytes, cairn_store_filesystem_size_bytes
//   cairn_measurements_written_total                               counter
//   cairn_jobs{state="queued|running"}                             gauge
//   cairn_job_restarts_total{study}                                counter
//   cairn_gpu_slots{state="used|free"}                             gauge
//   process_cpu_seconds_total, process_resident_memory_bytes,
//   process_virtual_memory_bytes, process_start_time_seconds,
//   process_open_fds, process_max_fds
// Label values: study states active|inactive|completed|failed; trial states
// requested|active|stopping|succeeded|infeasible|failed|cancelled (see
// monitoring/study_summary.h for the conversions from the API enums).
//
// Wiring in cairnd:
//   MetricsOptions options;
//   options.listen_address = flag;            // "" disables the HTTP exposer
//   options.build = {kVersion, cuda_enabled};
//   options.data_dir = data_dir;
//   auto started = Metrics::Start(options);
//   if (!started.ok()) return started.status();
//   std::unique_ptr<Metrics> metrics = std::move(*started);
//   metrics->SetSnapshotProvider([&] { return controller.MetricsSnapshot(); });
//   builder.experimental().SetInterceptorCreators(
//       MakeGrpcMetricsInterceptors(metrics.get()));   // grpc_metrics_...h
//   ... on shutdown: server->Shutdown(); metrics.reset(); controller dies.
#ifndef CAIRN_MONITORING_METRICS_H_
#define CAIRN_MONITORING_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cairn::monitoring {

struct BuildInfo {
  // cairnd's version string, e.g. "0.1.0". Default: "".
  std::string version;
  // Whether this build has the CUDA backend. Default: false.
  bool cuda_enabled = false;
};

struct MetricsOptions {
  // host:port the /metrics HTTP endpoint binds to ("[::1]:9464" for IPv6).
  // Port 0 binds a free port (see Metrics::http_port()). "" starts no HTTP
  // server: metrics are still recorded and ScrapeText() works (tests, bench).
  // Default: "127.0.0.1:9464".
  std::string listen_address = "127.0.0.1:9464";
  // Exported as cairn_build_info.
  BuildInfo build;
  // cairnd's data directory: the free and total bytes of its filesystem are
  // exported at scrape time. "" exports neither. Default: "".
  std::string data_dir;
  // Threads serving HTTP scrapes. Default: 2.
  int http_threads = 2;
};

// How a trial ended, for cairn_trials_finished_total{outcome}.
enum class TrialOutcome {
  kSucceeded,     // "succeeded"
  kInfeasible,    // "infeasible"
  kFailed,        // "failed": its job failed beyond max_restarts
  kStoppedEarly,  // "stopped_early": completed after an early-stop decision
  kCancelled,     // "cancelled": stopped before it reported a result
};

// The label value of an outcome ("succeeded", ...).
std::string_view TrialOutcomeLabel(TrialOutcome outcome);

// The outcome of a label value; nullopt for anything else.
std::optional<TrialOutcome> TrialOutcomeFromLabel(std::string_view label);

// The latest reported value of one metric of one running trial.
struct RunningTrialMetric {
  int64_t trial_id = 0;
  std::string metric;  // metric_id
  double value = 0.0;
};

// State of one study at scrape time.
struct StudySnapshot {
  // Resource name "studies/7" (exported in cairn_study_info).
  std::string name;
  // Unique display name: the `study` label of every per-study series.
  std::string display_name;
  // "active" | "inactive" | "completed" | "failed" (StudyStateLabel()).
  // State and algorithm values and trials_by_state keys are exported in
  // lower case, so the enum names ("ACTIVE", "GP_BANDIT") work as well.
  std::string state;
  // Designer in use, e.g. "gp_bandit" (AlgorithmLabel()).
  std::string algorithm;
  // Who asks for its trials (DriverLabel()): "jobs", "optuna" or "client".
  std::string driver = "client";
  // "" when the study has no early stopping, else "median" | "asha". The
  // decision counters of this rule are created at 0 so they exist early.
  std::string early_stopping_rule;
  // Trial counts by state label (TrialStateLabel()); the six known states
  // that are missing are exported as 0.
  std::map<std::string, int64_t> trials_by_state;
  // metric_id -> best final value so far (by that metric's goal). Only
  // metrics that have a value; exported as cairn_study_best_objective.
  std::map<std::string, double> best_objective;
  // Latest value of each metric reported by trials that are running
  // (REQUESTED, ACTIVE, STOPPING). Finished trials must not appear: their
  // series vanish, so cardinality stays bounded by the running trials.
  std::vector<RunningTrialMetric> running_trial_metrics;
};

// State of the whole service at scrape time.
struct Snapshot {
  std::vector<StudySnapshot> studies;
  int64_t jobs_queued = 0;
  int64_t jobs_running = 0;
  // --max-running-jobs: the cap on running jobs (0: none).
  int64_t jobs_max_running = 0;
  int64_t gpu_slots_used = 0;
  int64_t gpu_slots_total = 0;
  // A cluster executor's jobs by the scheduler's state
  // (Executor::JobsByState; empty with local jobs): cairn_cluster_jobs.
  std::map<std::string, int64_t> cluster_jobs_by_state;
  // Store::ApproximateSizeBytes().
  uint64_t store_bytes = 0;
  // The store accepts writes (false after a failed write, e.g. disk full,
  // until it recovers).
  bool store_writable = true;
};

// The metrics of one cairnd process.
//
// Record* methods are cheap (a hash lookup and an atomic add or a short
// mutex-protected histogram update) and may be called on the hot path.
// Label values are used as given: callers pass bounded sets (method names,
// algorithm names, study names), never free-form text.
//
// Methods taking a `study` take its display name, the `study` label as
// given (MetricsStudyObserver passes the one each observer event carries).
//
// Per-study counter series (trials finished, early-stopping decisions, job
// restarts) of a study that is missing from the snapshot are removed at the
// next scrape, so deleting a study drops its series.
//
// A Metrics is safe for concurrent use without external locking.
class Metrics {
 public:
  // Creates the metrics and, unless options.listen_address is "", starts the
  // HTTP exposer serving GET /metrics.
  // Returns InvalidArgument for a malformed listen_address (it must be
  // HOST:PORT with PORT in [0, 65535]) or http_threads < 1, and Unavailable
  // when the address cannot be bound (e.g. already in use).
  static absl::StatusOr<std::unique_ptr<Metrics>> Start(
      const MetricsOptions& options);

  Metrics() = default;
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;
  // Stops the HTTP server (waiting for in-flight scrapes; milliseconds, not
  // civetweb's 2 s poll interval), then frees all.
  virtual ~Metrics() = default;

  // A designer proposed `count` trials for a study using `algorithm` in
  // `seconds` of wall time (one observation per call, count may be 0).
  virtual void RecordSuggestion(std::string_view algorithm, double seconds,
                                int64_t count) = 0;

  // `count` suggested trials of `algorithm` came from the quasi-random
  // fallback because the designer missed its deadline (GP_BANDIT's
  // --gp-suggest-deadline).
  virtual void RecordDeadlineFallbacks(std::string_view algorithm,
                                       int64_t count) = 0;

  // A trial of `study` (display name) ended with `outcome`.
  virtual void RecordTrialFinished(std::string_view study,
                                   TrialOutcome outcome) = 0;

  // An early-stopping `rule` ("median", "asha") decided for a trial of
  // `study` whether it should stop.
  virtual void RecordEarlyStoppingDecision(std::string_view study,
                                           std::string_view rule,
                                           bool stop) = 0;

  // One durable store write (batch) took `seconds`.
  virtual void RecordStoreWrite(double seconds) = 0;

  // `n` measurements became durable.
  virtual void RecordMeasurementsWritten(int64_t n) = 0;

  // A training job of `study` was restarted after a failure.
  virtual void RecordJobRestart(std::string_view study) = 0;

  // A gRPC call of `method` (short name, e.g. "SuggestTrials") finished
  // with status `code` (canonical name, e.g. "OK", "NOT_FOUND") after
  // `seconds`. grpc_metrics_interceptor.h records this for every call.
  virtual void RecordRpc(std::string_view method, std::string_view code,
                         double seconds) = 0;

  // One part of a call of `method` (e.g. "SuggestTrials") took `seconds`;
  // `phase` is one of trials/observer.h's call_phase names ("auth",
  // "limits", "study_lock", "designer", "append", "sync", "audit"), so
  // that a slow method shows which of its parts is slow.
  virtual void RecordCallPhase(std::string_view method, std::string_view phase,
                               double seconds) = 0;

  // Sets the function called at each scrape to produce the gauges above;
  // nullptr (the default) exports no study, job, GPU or store gauges.
  // The provider runs on an HTTP server thread, concurrently with anything
  // else the caller does, so it must be thread-safe; scrapes call it one at
  // a time. This call waits until an in-flight call of the previous provider
  // returns, so after SetSnapshotProvider(nullptr) returns the old provider
  // (and what it references) is no longer used.
  virtual void SetSnapshotProvider(std::function<Snapshot()> provider) = 0;

  // The text exposition (format 0.0.4) of every cairn_ and process_ metric,
  // as GET /metrics serves it minus prometheus-cpp's own exposer_ metrics.
  virtual std::string ScrapeText() = 0;

  // The TCP port /metrics is served on (the bound one when the options asked
  // for port 0), or 0 when no HTTP exposer runs.
  virtual int http_port() const = 0;
};

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_METRICS_H_
