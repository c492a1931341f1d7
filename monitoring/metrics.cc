// MetricsImpl: a prometheus-cpp Registry for the pushed counters and
// histograms, a Collectable computing gauges from the snapshot provider at
// scrape time, and an optional Exposer serving both.
#include "monitoring/metrics.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "monitoring/process_metrics.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
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

using prometheus::ClientMetric;
using prometheus::Counter;
using prometheus::Histogram;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr std::string_view kStudyStates[] = {"active", "inactive", "completed",
                                             "failed"};
constexpr std::string_view kTrialStates[] = {
    "requested",  "active", "stopping", "succeeded",
    "infeasible", "failed", "cancelled"};
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
// Synced RocksDB writes: tens of microseconds (tmpfs) to tens of ms (disk).
const Histogram::BucketBoundaries kStoreWriteBuckets = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01,    0.025,  0.05,    0.1,    0.25,  0.5,    1};

// The series of one family, cached by label values: Family::Add constructs a
// metric object on every call, even when the series exists, which is too
// slow for the hot path.
template <typename T>
class SeriesCache {
 public:
  using AddFn =
      std::function<T&(prometheus::Family<T>&, const prometheus::Labels&)>;

  SeriesCache(prometheus::Family<T>& family,
              std::vector<std::string> label_names, AddFn add)
      : family_(family),
        label_names_(std::move(label_names)),
        add_(std::move(add)) {}

  // Runs `op` on the series with these label values, creating it first if
  // needed. `op` runs under the cache's lock, so a concurrent
  // RetainFirstLabelIn cannot free the series under it.
  // REQUIRES: values.size() == label names given to the constructor.
  template <typename Op>
  void Apply(std::initializer_list<std::string_view> values, Op&& op) {
    Apply(values.begin(), values.size(), std::forward<Op>(op));
  }

  // Creates the series (value 0) if it does not exist.
  void Touch(std::initializer_list<std::string_view> values) {
    Apply(values.begin(), values.size(), [](T&) {});
  }

  // Removes the series whose first label value is not in `keep`.
  void RetainFirstLabelIn(const absl::flat_hash_set<std::string>& keep) {
    absl::MutexLock lock(&mu_);
    for (auto it = series_.begin(); it != series_.end();) {
      if (keep.contains(it->second.values.front())) {
        ++it;
        continue;
      }
      family_.Remove(it->second.metric);
      series_.erase(it++);
    }
  }

 private:
  struct Entry {
    T* metric;
    std::vector<std::string> values;
  };

  template <typename S, typename Op>
  void Apply(const S* values, size_t size, Op&& op) {
    std::string key;
    for (size_t i = 0; i < size; ++i) {
      key.append(values[i].data(), values[i].size());
      key.push_back('\0');
    }
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = series_.find(key);
      if (it != series_.end()) {
        op(*it->second.metric);
        return;
      }
    }
    absl::MutexLock lock(&mu_);
    auto it = series_.find(key);
    if (it == series_.end()) {
      prometheus::Labels labels;
      std::vector<std::string> copies;
      for (size_t i = 0; i < size; ++i) {
        copies.emplace_back(values[i]);
        labels.emplace(label_names_[i], copies.back());
      }
      T& metric = add_(family_, labels);
      it = series_.emplace(std::move(key), Entry{&metric, std::move(copies)})
               .first;
    }
    op(*it->second.metric);
  }

  prometheus::Family<T>& family_;
  const std::vector<std::string> label_names_;
  const AddFn add_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> series_ ABSL_GUARDED_BY(mu_);
};

SeriesCache<Counter>::AddFn AddCounter() {
  return [](prometheus::Family<Counter>& family,
            const prometheus::Labels& labels) -> Counter& {
    return family.Add(labels);
  };
}

SeriesCache<Histogram>::AddFn AddHistogram(
    const Histogram::BucketBoundaries& buckets) {
  return [&buckets](prometheus::Family<Histogram>& family,
                    const prometheus::Labels& labels) -> Histogram& {
    return family.Add(labels, buckets);
  };
}

// Builders for the gauge families computed at scrape time.
MetricFamily GaugeFamily(std::string name, std::string help) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = MetricType::Gauge;
  return family;
}

void AddGauge(MetricFamily& family,
              std::vector<std::pair<std::string, std::string>> labels,
              double value) {
  ClientMetric metric;
  for (auto& [name, label_value] : labels) {
    metric.label.push_back({std::move(name), std::move(label_value)});
  }
  metric.gauge.value = value;
  family.metric.push_back(std::move(metric));
}

absl::Status ValidateOptions(const MetricsOptions& options) {
  if (options.http_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MetricsOptions.http_threads must be >= 1, got ",
                     options.http_threads));
  }
  const std::string& address = options.listen_address;
  if (address.empty()) return absl::OkStatus();
  size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535 ||
      address.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics listen address must be HOST:PORT with PORT in "
                     "[0, 65535], got \"",
                     address, "\""));
  }
  return absl::OkStatus();
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

  ~MetricsImpl() override {
    // Stop serving before the collector and registry go away. civetweb's
    // accept loop polls with a 2 s timeout and only then sees the stop
    // request; connecting to the listening socket wakes it at once, so
    // cairnd shuts down without that delay.
    if (exposer_ == nullptr) return;
    std::atomic<bool> stopped{false};
    std::thread waker([this, &stopped] {
      while (!stopped.load()) {
        WakeListener();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    exposer_.reset();
    stopped = true;
    waker.join();
  }

  absl::Status StartExposer() {
    if (options_.listen_address.empty()) return absl::OkStatus();
    try {
      exposer_ = std::make_unique<prometheus::Exposer>(
          options_.listen_address, static_cast<size_t>(options_.http_threads));
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat(
          "cannot serve metrics on ", options_.listen_address, ": ", e.what()));
    }
    std::vector<int> ports = exposer_->GetListeningPorts();
    if (ports.empty()) {
      exposer_.reset();
      return absl::UnavailableError(absl::StrCat(
          "cannot serve metrics on ", options_.listen_address, ": not bound"));
    }
    http_port_ = ports.front();
    exposer_->RegisterCollectable(collector_);
    exposer_->RegisterCollectable(registry_);
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

  int http_port() const override { return http_port_; }

  // The families computed at scrape time (SnapshotCollector::Collect).
  std::vector<MetricFamily> CollectScrapeTime() {
    std::vector<MetricFamily> families;

    MetricFamily build = GaugeFamily(
        "cairn_build_info", "Build of this cairnd: version and CUDA backend.");
    AddGauge(build,
             {{"version", options_.build.version},
              {"cuda", options_.build.cuda_enabled ? "true" : "false"}},
             1);
    families.push_back(std::move(build));

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
    AddSnapshotFamilies(snapshot, families);
    return families;
  }

 private:
  // The per-study gauge families of one scrape.
  struct StudyFamilies {
    MetricFamily studies = GaugeFamily("cairn_studies", "Studies, by state.");
    MetricFamily study_info = GaugeFamily(
        "cairn_study_info",
        "Always 1 per study: its resource name, state and algorithm.");
    MetricFamily trials =
        GaugeFamily("cairn_trials", "Trials of a study, by state.");
    MetricFamily best = GaugeFamily(
        "cairn_study_best_objective",
        "Best final value so far of a study's metric, by the metric's goal.");
    MetricFamily latest =
        GaugeFamily("cairn_trial_metric_latest",
                    "Latest reported value of a metric of a running trial.");
  };

  void AddSnapshotFamilies(const Snapshot& snapshot,
                           std::vector<MetricFamily>& families) {
    StudyFamilies f;
    std::map<std::string, int64_t> studies_by_state;
    for (std::string_view state : kStudyStates) {
      studies_by_state[std::string(state)] = 0;
    }
    absl::flat_hash_set<std::string> names;
    for (const StudySnapshot& study : snapshot.studies) {
      names.insert(study.display_name);
      ++studies_by_state[absl::AsciiStrToLower(study.state)];
      AddStudyGauges(study, f);
      TouchStudyCounters(study);
    }
    for (const auto& [state, count] : studies_by_state) {
      AddGauge(f.studies, {{"state", state}}, static_cast<double>(count));
    }
    ForgetRemovedStudies(names);
    std::vector<MetricFamily> all = ServiceFamilies(snapshot);
    for (MetricFamily* family :
         {&f.studies, &f.study_info, &f.trials, &f.best, &f.latest}) {
      all.push_back(std::move(*family));
    }
    for (MetricFamily& family : all) {
      // An empty family would be a HELP/TYPE header without samples.
      if (!family.metric.empty()) families.push_back(std::move(family));
    }
  }

  static void AddStudyGauges(const StudySnapshot& study, StudyFamilies& f) {
    const std::string& name = study.display_name;
    AddGauge(f.study_info,
             {{"study", name},
              {"name", study.name},
              {"state", absl::AsciiStrToLower(study.state)},
              {"algorithm", absl::AsciiStrToLower(study.algorithm)}},
             1);
    std::map<std::string, int64_t> counts;
    for (std::string_view known : kTrialStates) counts[std::string(known)] = 0;
    for (const auto& [trial_state, count] : study.trials_by_state) {
      counts[absl::AsciiStrToLower(trial_state)] += count;
    }
    for (const auto& [trial_state, count] : counts) {
      AddGauge(f.trials, {{"study", name}, {"state", trial_state}},
               static_cast<double>(count));
    }
    for (const auto& [metric, value] : study.best_objective) {
      AddGauge(f.best, {{"study", name}, {"metric", metric}}, value);
    }
    for (const RunningTrialMetric& point : study.running_trial_metrics) {
      AddGauge(f.latest,
               {{"study", name},
                {"trial", absl::StrCat(point.trial_id)},
                {"metric", point.metric}},
               point.value);
    }
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

  // Drops the counters of studies no longer in the snapshot.
  void ForgetRemovedStudies(const absl::flat_hash_set<std::string>& names) {
    trials_finished_.RetainFirstLabelIn(names);
    job_restarts_.RetainFirstLabelIn(names);
    early_stopping_decisions_.RetainFirstLabelIn(names);
  }

  // cairn_jobs, cairn_jobs_max_running, cairn_gpu_slots, cairn_store_bytes
  // and cairn_store_writable.
  static std::vector<MetricFamily> ServiceFamilies(const Snapshot& snapshot) {
    MetricFamily jobs =
        GaugeFamily("cairn_jobs", "Training jobs, by state (queued, running).");
    AddGauge(jobs, {{"state", "queued"}},
             static_cast<double>(snapshot.jobs_queued));
    AddGauge(jobs, {{"state", "running"}},
             static_cast<double>(snapshot.jobs_running));
    MetricFamily cluster_jobs = GaugeFamily(
        "cairn_cluster_jobs",
        "Training jobs handed to a cluster scheduler (--executor=slurm), by "
        "the scheduler's state as of cairnd's last poll.");
    for (const auto& [state, n] : snapshot.cluster_jobs_by_state) {
      AddGauge(cluster_jobs, {{"state", state}}, static_cast<double>(n));
    }
    MetricFamily max_running = GaugeFamily(
        "cairn_jobs_max_running",
        "Most training jobs that run at once (--max-running-jobs; 0: no "
        "cap); the rest wait queued.");
    AddGauge(max_running, {}, static_cast<double>(snapshot.jobs_max_running));
    MetricFamily gpus = GaugeFamily(
        "cairn_gpu_slots",
        "GPU slots for training jobs, by state (used, free); sum is the "
        "total.");
    AddGauge(gpus, {{"state", "used"}},
             static_cast<double>(snapshot.gpu_slots_used));
    AddGauge(gpus, {{"state", "free"}},
             static_cast<double>(snapshot.gpu_slots_total -
                                 snapshot.gpu_slots_used));
    MetricFamily store_bytes = GaugeFamily(
        "cairn_store_bytes",
        "Approximate bytes of data in the store (SST files plus unflushed "
        "memtables).");
    AddGauge(store_bytes, {}, static_cast<double>(snapshot.store_bytes));
    MetricFamily writable = GaugeFamily(
        "cairn_store_writable",
        "1 while the store accepts writes; 0 after a failed write (disk "
        "full, I/O error) until it recovers.");
    AddGauge(writable, {}, snapshot.store_writable ? 1 : 0);
    std::vector<MetricFamily> out;
    out.push_back(std::move(jobs));
    if (!cluster_jobs.metric.empty()) out.push_back(std::move(cluster_jobs));
    out.push_back(std::move(max_running));
    out.push_back(std::move(gpus));
    out.push_back(std::move(store_bytes));
    out.push_back(std::move(writable));
    return out;
  }

  // Opens and closes a TCP connection to the exposer's listening socket.
  void WakeListener() const {
    std::string host =
        options_.listen_address.substr(0, options_.listen_address.rfind(':'));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
    if (host == "::") host = "::1";
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* addresses = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(http_port_).c_str(), &hints,
                    &addresses) != 0) {
      return;
    }
    for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
      int fd =
          socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
      if (fd < 0) continue;
      connect(fd, a->ai_addr, a->ai_addrlen);  // non-blocking: SYN is enough
      close(fd);
      break;
    }
    freeaddrinfo(addresses);
  }

  const MetricsOptions options_;
  const std::shared_ptr<prometheus::Registry> registry_;
  const std::shared_ptr<SnapshotCollector> collector_;

  SeriesCache<Histogram> suggestion_seconds_;
  SeriesCache<Counter> suggested_trials_;
  SeriesCache<Counter> trials_finished_;
  SeriesCache<Counter> early_stopping_decisions_;
  SeriesCache<Counter> job_restarts_;
  SeriesCache<Counter> grpc_requests_;
  SeriesCache<Histogram> grpc_seconds_;
  Histogram& store_write_seconds_;
  Counter& measurements_written_;

  absl::Mutex provider_mu_;
  std::function<Snapshot()> provider_ ABSL_GUARDED_BY(provider_mu_);

  int http_port_ = 0;
  // Declared last: destroyed first (also reset explicitly in the destructor).
  std::unique_ptr<prometheus::Exposer> exposer_;
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
