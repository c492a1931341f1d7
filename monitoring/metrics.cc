// MetricsImpl: a prometheus-cpp Registry for the pushed counters and
// histograms, a Collectable computing gauges from the snapshot provider at
// scrape time, and an optional HttpExposer serving both.
#include "monitoring/metrics.h"

#include <initializer_list>
#include <sstream>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "monitoring/gauge_families.h"
#include "monitoring/http_exposer.h"
#include "monitoring/process_metrics.h"
#include "monitoring/series_cache.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace cairn::monitoring {

std::string_view TrialOutcomeLabel(TrialOutcome outcome) {
  switch (outcome) {
    case TrialOutcome::kSucceeded:
      return "succeeded";
    case TrialOutcome::kInfeasible:
      return "infeasible";
    case TrialOutcome::kFailed:
      return "failed";
    case TrialOutcome::kStoppedEarly:
      return "stopped_early";
    case TrialOutcome::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

std::optional<TrialOutcome> TrialOutcomeFromLabel(std::string_view label) {
  for (TrialOutcome outcome :
       {TrialOutcome::kSucceeded, TrialOutcome::kInfeasible,
        TrialOutcome::kFailed, TrialOutcome::kStoppedEarly,
        TrialOutcome::kCancelled}) {
    if (TrialOutcomeLabel(outcome) == label) return outcome;
  }
  return std::nullopt;
}

namespace {

using prometheus::Counter;
using prometheus::Histogram;
using prometheus::MetricFamily;

constexpr TrialOutcome kOutcomes[] = {
    TrialOutcome::kSucceeded, TrialOutcome::kInfeasible, TrialOutcome::kFailed,
    TrialOutcome::kStoppedEarly, TrialOutcome::kCancelled};

// Designer calls: from sub-millisecond (random) to a minute (GP on many
// trials).
const Histogram::BucketBoundaries kSuggestionBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
    0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
const Histogram::BucketBoundaries kRpcBuckets = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
// Parts of a call: a microsecond (a lock taken at once) to seconds (a GP
// designer, a stalled disk).
const Histogram::BucketBoundaries kPhaseBuckets = {
    0.000001, 0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
    0.005,    0.01,    0.025,   0.05,   0.1,     0.25,   1,     10};
// Synced RocksDB writes: tens of microseconds (tmpfs) to tens of ms (disk).
const Histogram::BucketBoundaries kStoreWriteBuckets = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1};

absl::Status ValidateOptions(const MetricsOptions& options) {
  if (options.http_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MetricsOptions.http_threads must be >= 1, got ",
                     options.http_threads));
  }
  return ValidateListenAddress(options.listen_address);
}

class MetricsImpl;

// Computes the scrape-time families; registered with the exposer before the
// registry so that counters it pre-creates appear in the same scrape.
class SnapshotCollector : public prometheus::Collectable {
 public:
  explicit SnapshotCollector(MetricsImpl* metrics) : metrics_(metrics) {}
  std::vector<MetricFamily> Collect() const override;

 private:
  MetricsImpl* const metrics_;
};

class MetricsImpl final : public Metrics {
 public:
  explicit MetricsImpl(const MetricsOptions& options)
      : options_(options),
        registry_(std::make_shared<prometheus::Registry>()),
        collector_(std::make_shared<SnapshotCollector>(this)),
        suggestion_seconds_(
            prometheus::BuildHistogram()
                .Name("cairn_suggestion_duration_seconds")
                .Help("Wall time of one designer call producing suggestions.")
                .Register(*registry_),
            {"algorithm"}, AddHistogram(kSuggestionBuckets)),
        suggested_trials_(prometheus::BuildCounter()
                              .Name("cairn_suggested_trials_total")
                              .Help("Trials proposed by designers.")
                              .Register(*registry_),
                          {"algorithm"}, AddCounter()),
        deadline_fallbacks_(
            prometheus::BuildCounter()
                .Name("cairn_suggestion_deadline_fallbacks_total")
                .Help("Suggested trials that came from the quasi-random "
                      "fallback because the designer missed its deadline.")
                .Register(*registry_),
            {"algorithm"}, AddCounter()),
        trials_finished_(prometheus::BuildCounter()
                             .Name("cairn_trials_finished_total")
                             .Help("Trials that ended, by outcome "
                                   "(succeeded, infeasible, failed, "
                                   "stopped_early, cancelled).")
                             .Register(*registry_),
                         {"study", "outcome"}, AddCounter()),
        early_stopping_decisions_(
            prometheus::BuildCounter()
                .Name("cairn_early_stopping_decisions_total")
                .Help("Early-stopping decisions, by rule and decision "
                      "(stop, continue).")
                .Register(*registry_),
            {"study", "rule", "decision"}, AddCounter()),
        job_restarts_(prometheus::BuildCounter()
                          .Name("cairn_job_restarts_total")
                          .Help("Training jobs restarted after a failure.")
                          .Register(*registry_),
                      {"study"}, AddCounter()),
        grpc_requests_(prometheus::BuildCounter()
                           .Name("cairn_grpc_requests_total")
                           .Help("gRPC calls handled, by method and status "
                                 "code.")
                           .Register(*registry_),
                       {"method", "code"}, AddCounter()),
        grpc_seconds_(prometheus::BuildHistogram()
                          .Name("cairn_grpc_request_duration_seconds")
                          .Help("Latency of gRPC calls, from the start of the "
                                "call to its status.")
                          .Register(*registry_),
                      {"method"}, AddHistogram(kRpcBuckets)),
        call_phase_seconds_(
            prometheus::BuildHistogram()
                .Name("cairn_call_phase_duration_seconds")
                .Help("Latency of each part of a call (auth, limits, "
                      "study_lock, designer, append, sync, audit).")
                .Register(*registry_),
            {"method", "phase"}, AddHistogram(kPhaseBuckets)),
        store_write_seconds_(
            prometheus::BuildHistogram()
                .Name("cairn_store_write_duration_seconds")
                .Help("Latency of durable store writes (one batch each).")
                .Register(*registry_)
                .Add({}, kStoreWriteBuckets)),
        measurements_written_(
            prometheus::BuildCounter()
                .Name("cairn_measurements_written_total")
                .Help("Measurements made durable in the store.")
                .Register(*registry_)
                .Add({})) {}

  // Stops serving (waiting for in-flight scrapes) before the collector and
  // registry go away.
  ~MetricsImpl() override { exposer_.reset(); }

  absl::Status StartExposer() {
    if (options_.listen_address.empty()) return absl::OkStatus();
    absl::StatusOr<std::unique_ptr<HttpExposer>> exposer =
        HttpExposer::Start(options_.listen_address, options_.http_threads,
                           {collector_, registry_});
    if (!exposer.ok()) return exposer.status();
    exposer_ = std::move(*exposer);
    return absl::OkStatus();
  }

  void RecordSuggestion(std::string_view algorithm, double seconds,
                        int64_t count) override {
    suggestion_seconds_.Apply({algorithm},
                              [&](Histogram& h) { h.Observe(seconds); });
    if (count > 0) {
      suggested_trials_.Apply({algorithm}, [&](Counter& c) {
        c.Increment(static_cast<double>(count));
      });
    }
  }

  void RecordDeadlineFallbacks(std::string_view algorithm,
                               int64_t count) override {
    deadline_fallbacks_.Apply({algorithm}, [&](Counter& c) {
      c.Increment(static_cast<double>(count));
    });
  }

  void RecordTrialFinished(std::string_view study,
                           TrialOutcome outcome) override {
    trials_finished_.Apply({study, TrialOutcomeLabel(outcome)},
                           [](Counter& c) { c.Increment(); });
  }

  void RecordEarlyStoppingDecision(std::string_view study,
                                   std::string_view rule, bool stop) override {
    early_stopping_decisions_.Apply({study, rule, stop ? "stop" : "continue"},
                                    [](Counter& c) { c.Increment(); });
  }

  void RecordStoreWrite(double seconds) override {
    store_write_seconds_.Observe(seconds);
  }

  void RecordMeasurementsWritten(int64_t n) override {
    if (n > 0) measurements_written_.Increment(static_cast<double>(n));
  }

  void RecordJobRestart(std::string_view study) override {
    job_restarts_.Apply({study}, [](Counter& c) { c.Increment(); });
  }

  void RecordRpc(std::string_view method, std::string_view code,
                 double seconds) override {
    grpc_requests_.Apply({method, code}, [](Counter& c) { c.Increment(); });
    grpc_seconds_.Apply({method}, [&](Histogram& h) { h.Observe(seconds); });
  }

  void RecordCallPhase(std::string_view method, std::string_view phase,
                       double seconds) override {
    call_phase_seconds_.Apply({method, phase},
                              [&](Histogram& h) { h.Observe(seconds); });
  }

  void SetSnapshotProvider(std::function<Snapshot()> provider) override {
    absl::MutexLock lock(&provider_mu_);
    provider_ = std::move(provider);
  }

  std::string ScrapeText() override {
    std::vector<MetricFamily> families = collector_->Collect();
    std::vector<MetricFamily> pushed = registry_->Collect();
    families.insert(families.end(), std::make_move_iterator(pushed.begin()),
                    std::make_move_iterator(pushed.end()));
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families);
    return out.str();
  }

  int http_port() const override {
    return exposer_ == nullptr ? 0 : exposer_->port();
  }

  // The families computed at scrape time (SnapshotCollector::Collect).
  std::vector<MetricFamily> CollectScrapeTime() {
    std::vector<MetricFamily> families;
    families.push_back(BuildInfoFamily(options_.build));
    if (absl::StatusOr<ProcessStats> stats = ReadProcessStats(); stats.ok()) {
      for (MetricFamily& family : ProcessMetricFamilies(*stats)) {
        families.push_back(std::move(family));
      }
    }
    for (MetricFamily& family : FilesystemMetricFamilies(options_.data_dir)) {
      families.push_back(std::move(family));
    }
    Snapshot snapshot;
    {
      // Held while the provider runs: SetSnapshotProvider waits for it.
      absl::MutexLock lock(&provider_mu_);
      if (!provider_) return families;
      snapshot = provider_();
    }
    SyncStudyCounters(snapshot);
    for (MetricFamily& family : SnapshotGaugeFamilies(snapshot)) {
      families.push_back(std::move(family));
    }
    return families;
  }

 private:
  // Creates the counters of the studies in `snapshot` and drops those of
  // studies no longer in it, so deleting a study drops its series.
  void SyncStudyCounters(const Snapshot& snapshot) {
    absl::flat_hash_set<std::string> names;
    for (const StudySnapshot& study : snapshot.studies) {
      names.insert(study.display_name);
      TouchStudyCounters(study);
    }
    trials_finished_.RetainFirstLabelIn(names);
    job_restarts_.RetainFirstLabelIn(names);
    early_stopping_decisions_.RetainFirstLabelIn(names);
  }

  // Counters exist from the start, so rate() and increase() see the first
  // event and dashboards show 0 rather than "no data".
  void TouchStudyCounters(const StudySnapshot& study) {
    const std::string& name = study.display_name;
    for (TrialOutcome outcome : kOutcomes) {
      trials_finished_.Touch({name, TrialOutcomeLabel(outcome)});
    }
    job_restarts_.Touch({name});
    if (!study.early_stopping_rule.empty()) {
      early_stopping_decisions_.Touch(
          {name, study.early_stopping_rule, "stop"});
      early_stopping_decisions_.Touch(
          {name, study.early_stopping_rule, "continue"});
    }
  }

  const MetricsOptions options_;
  const std::shared_ptr<prometheus::Registry> registry_;
  const std::shared_ptr<SnapshotCollector> collector_;

  SeriesCache<Histogram> suggestion_seconds_;
  SeriesCache<Counter> suggested_trials_;
  SeriesCache<Counter> deadline_fallbacks_;
  SeriesCache<Counter> trials_finished_;
  SeriesCache<Counter> early_stopping_decisions_;
  SeriesCache<Counter> job_restarts_;
  SeriesCache<Counter> grpc_requests_;
  SeriesCache<Histogram> grpc_seconds_;
  SeriesCache<Histogram> call_phase_seconds_;
  Histogram& store_write_seconds_;
  Counter& measurements_written_;

  absl::Mutex provider_mu_;
  std::function<Snapshot()> provider_ ABSL_GUARDED_BY(provider_mu_);

  // Declared last: destroyed first (also reset explicitly in the destructor).
  std::unique_ptr<HttpExposer> exposer_;
};

std::vector<MetricFamily> SnapshotCollector::Collect() const {
  return metrics_->CollectScrapeTime();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Metrics>> Metrics::Start(
    const MetricsOptions& options) {
  if (absl::Status status = ValidateOptions(options); !status.ok()) {
    return status;
  }
  auto metrics = std::make_unique<MetricsImpl>(options);
  if (absl::Status status = metrics->StartExposer(); !status.ok()) {
    return status;
  }
  return metrics;
}

}  // namespace cairn::monitoring
