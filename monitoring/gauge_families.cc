// Snapshot -> gauge families, one family per metric name.
#include "monitoring/gauge_families.h"

#include <cstdint>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace cairn::monitoring {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

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

MetricFamily BuildInfoFamily(const BuildInfo& build) {
  MetricFamily family = GaugeFamily(
      "cairn_build_info", "Build of this cairnd: version and CUDA backend.");
  AddGauge(family,
           {{"version", build.version},
            {"cuda", build.cuda_enabled ? "true" : "false"}},
           1);
  return family;
}

namespace {

// The per-study gauge families of one scrape.
struct StudyFamilies {
  MetricFamily studies = GaugeFamily("cairn_studies", "Studies, by state.");
  MetricFamily study_info = GaugeFamily(
      "cairn_study_info",
      "Always 1 per study: its resource name, state, algorithm and driver.");
  MetricFamily trials =
      GaugeFamily("cairn_trials", "Trials of a study, by state.");
  MetricFamily best = GaugeFamily(
      "cairn_study_best_objective",
      "Best final value so far of a study's metric, by the metric's goal.");
  MetricFamily latest =
      GaugeFamily("cairn_trial_metric_latest",
                  "Latest reported value of a metric of a running trial.");
};

void AddTrialCounts(const StudySnapshot& study, MetricFamily& trials) {
  std::map<std::string, int64_t> counts;
  for (std::string_view known : kTrialStates) counts[std::string(known)] = 0;
  for (const auto& [trial_state, count] : study.trials_by_state) {
    counts[absl::AsciiStrToLower(trial_state)] += count;
  }
  for (const auto& [trial_state, count] : counts) {
    AddGauge(trials, {{"study", study.display_name}, {"state", trial_state}},
             static_cast<double>(count));
  }
}

void AddStudyGauges(const StudySnapshot& study, StudyFamilies& f) {
  const std::string& name = study.display_name;
  AddGauge(f.study_info,
           {{"study", name},
            {"name", study.name},
            {"state", absl::AsciiStrToLower(study.state)},
            {"algorithm", absl::AsciiStrToLower(study.algorithm)},
            {"driver", study.driver}},
           1);
  AddTrialCounts(study, f.trials);
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

StudyFamilies StudyGaugeFamilies(const Snapshot& snapshot) {
  StudyFamilies f;
  std::map<std::string, int64_t> studies_by_state;
  for (std::string_view state : kStudyStates) {
    studies_by_state[std::string(state)] = 0;
  }
  for (const StudySnapshot& study : snapshot.studies) {
    ++studies_by_state[absl::AsciiStrToLower(study.state)];
    AddStudyGauges(study, f);
  }
  for (const auto& [state, count] : studies_by_state) {
    AddGauge(f.studies, {{"state", state}}, static_cast<double>(count));
  }
  return f;
}

// Appends a family with one unlabelled sample.
void AddSingleGauge(std::string name, std::string help, double value,
                    std::vector<MetricFamily>& out) {
  MetricFamily family = GaugeFamily(std::move(name), std::move(help));
  AddGauge(family, {}, value);
  out.push_back(std::move(family));
}

// cairn_jobs, cairn_cluster_jobs and cairn_jobs_max_running.
void AddJobFamilies(const Snapshot& snapshot, std::vector<MetricFamily>& out) {
  MetricFamily jobs =
      GaugeFamily("cairn_jobs", "Training jobs, by state (queued, running).");
  AddGauge(jobs, {{"state", "queued"}},
           static_cast<double>(snapshot.jobs_queued));
  AddGauge(jobs, {{"state", "running"}},
           static_cast<double>(snapshot.jobs_running));
  out.push_back(std::move(jobs));
  MetricFamily cluster_jobs = GaugeFamily(
      "cairn_cluster_jobs",
      "Training jobs handed to a cluster scheduler (--executor=slurm), by "
      "the scheduler's state as of cairnd's last poll.");
  for (const auto& [state, n] : snapshot.cluster_jobs_by_state) {
    AddGauge(cluster_jobs, {{"state", state}}, static_cast<double>(n));
  }
  out.push_back(std::move(cluster_jobs));
  AddSingleGauge("cairn_jobs_max_running",
                 "Most training jobs that run at once (--max-running-jobs; 0: "
                 "no cap); the rest wait queued.",
                 static_cast<double>(snapshot.jobs_max_running), out);
}

// cairn_gpu_slots, cairn_store_bytes and cairn_store_writable.
void AddResourceFamilies(const Snapshot& snapshot,
                         std::vector<MetricFamily>& out) {
  MetricFamily gpus = GaugeFamily(
      "cairn_gpu_slots",
      "GPU slots for training jobs, by state (used, free); sum is the "
      "total.");
  AddGauge(gpus, {{"state", "used"}},
           static_cast<double>(snapshot.gpu_slots_used));
  AddGauge(
      gpus, {{"state", "free"}},
      static_cast<double>(snapshot.gpu_slots_total - snapshot.gpu_slots_used));
  out.push_back(std::move(gpus));
  AddSingleGauge("cairn_store_bytes",
                 "Approximate bytes of data in the store (SST files plus "
                 "unflushed memtables).",
                 static_cast<double>(snapshot.store_bytes), out);
  AddSingleGauge("cairn_store_writable",
                 "1 while the store accepts writes; 0 after a failed write "
                 "(disk full, I/O error) until it recovers.",
                 snapshot.store_writable ? 1 : 0, out);
}

}  // namespace

std::vector<MetricFamily> SnapshotGaugeFamilies(const Snapshot& snapshot) {
  std::vector<MetricFamily> all;
  AddJobFamilies(snapshot, all);
  AddResourceFamilies(snapshot, all);
  StudyFamilies f = StudyGaugeFamilies(snapshot);
  for (MetricFamily* family :
       {&f.studies, &f.study_info, &f.trials, &f.best, &f.latest}) {
    all.push_back(std::move(*family));
  }
  std::vector<MetricFamily> families;
  for (MetricFamily& family : all) {
    if (!family.metric.empty()) families.push_back(std::move(family));
  }
  return families;
}

}  // namespace cairn::monitoring
