// Job-runner benchmark: dispatch latency (a trial's job exit to the next
// trial's process start) and the cost of metric collection per report, on
// this machine, with real child processes and a real durable store.
//
//   build/bin/cairn_bench_jobs [--trials N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jobs/hypertune.h"
#include "jobs/job_runner.h"
#include "tests/testing/test_util.h"
#include "trials/study_manager.h"

namespace {

using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 30;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--trials" && i + 1 < argc) {
      trials = std::atoi(argv[++i]);
    }
  }
  const cairn::testing::TempDir temp_dir;
  const std::string& dir = temp_dir.path();
  auto store = cairn::Store::Open(cairn::StoreOptions(), dir + "/store");
  if (!store.ok()) return Fail(store.status());
  auto manager =
      cairn::StudyManager::Open(store->get(), cairn::StudyManagerOptions());
  if (!manager.ok()) return Fail(manager.status());

  // --- Dispatch latency: a one-at-a-time study of trivial jobs that stamp
  // their start and end (CLOCK_REALTIME ns) and report one metric.
  const std::string record = dir + "/record.txt";
  cairn::v1::Study study;
  study.set_display_name("dispatch");
  *study.mutable_spec() = cairn::testing::ShellJobSpec(
      absl::StrCat(
          "echo start $(date +%s%N) >> ", record,
          R"(; echo '{"global_step": "1", "loss": "0.5", "timestamp": 1.0}' > $CLOUD_ML_HP_METRIC_FILE; echo end $(date +%s%N) >> )",
          record),
      "sh");
  study.mutable_spec()->set_max_parallel_trials(1);
  study.mutable_spec()->set_max_trials(trials);
  auto created = (*manager)->CreateStudy(study);
  if (!created.ok()) return Fail(created.status());
  auto executor =
      cairn::jobs::NewLocalProcessExecutor(cairn::util::Clock::Real());
  cairn::jobs::JobRunnerOptions options;
  options.jobs_root = dir + "/jobs";
  options.server_address = "127.0.0.1:1";
  options.gpus = 0;
  cairn::jobs::JobRunner runner(manager->get(), executor.get(),
                                cairn::util::Clock::Real(), options);
  const auto t0 = Clock::now();
  runner.Start();
  while ((*manager)->GetStudy(created->name())->state() ==
         cairn::v1::Study::ACTIVE) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  runner.Stop();
  std::vector<double> starts, ends;
  std::ifstream in(record);
  std::string kind;
  double ns;
  while (in >> kind >> ns) (kind == "start" ? starts : ends).push_back(ns);
  std::vector<double> latency_ms;
  for (size_t i = 0; i + 1 < starts.size() && i < ends.size(); ++i) {
    latency_ms.push_back((starts[i + 1] - ends[i]) / 1e6);
  }
  const auto done = (*manager)->GetStudy(created->name());
  std::printf("dispatch: %d trials in %.2f s (%d succeeded)\n", trials, wall,
              done->succeeded_count());
  if (latency_ms.empty()) {
    std::fprintf(stderr, "error: no job ran\n");
    return 1;
  }
  std::printf(
      "dispatch latency (job exit -> next job start): median %.1f ms, p90 "
      "%.1f ms, max %.1f ms (runner tick %.0f ms)\n",
      Percentile(latency_ms, 0.5), Percentile(latency_ms, 0.9),
      Percentile(latency_ms, 1.0),
      absl::ToDoubleMilliseconds(options.poll_interval));

  // --- Metric collection: per report, the hypertune path (read + parse the
  // rewritten file, durable write) against a direct AddMeasurement call.
  cairn::v1::Study tracking;
  tracking.set_display_name("collect");
  *tracking.mutable_spec() = created->spec();
  tracking.mutable_spec()->clear_job_template();
  tracking.mutable_spec()->set_max_trials(0);
  auto ts = (*manager)->CreateStudy(tracking);
  if (!ts.ok()) return Fail(ts.status());
  auto suggested = (*manager)->SuggestTrials(ts->name(), 1, "");
  const std::string trial = suggested->trials[0].name();
  const std::string file = dir + "/collect.metrics";
  const int reports = 300;
  std::vector<std::string> lines;
  double collect_s = 0;
  double last_ts = 0;
  cairn::v1::TrialJob job;
  job.set_state(cairn::v1::TrialJob::RUNNING);
  for (int i = 1; i <= reports; ++i) {
    lines.push_back(absl::StrCat(R"({"global_step": ")", i,
                                 R"(", "loss": "0.5", "timestamp": )", i,
                                 R"(.5, "trial": "1"})"));
    if (lines.size() > 100) lines.erase(lines.begin());
    {
      std::ofstream out(file, std::ios::trunc);
      for (const auto& l : lines) out << l << "\n";
    }
    const auto start = Clock::now();
    auto entries = cairn::jobs::ReadHypertuneSince(file, last_ts);
    std::vector<cairn::MeasurementReport> batch;
    for (const auto& e : entries) {
      cairn::MeasurementReport r;
      r.trial_name = trial;
      r.measurement.set_step_count(e.global_step);
      auto* m = r.measurement.add_metrics();
      m->set_metric_id("loss");
      m->set_value(e.metrics.at("loss"));
      batch.push_back(std::move(r));
      last_ts = e.timestamp;
    }
    // As the job runner does: the measurements and the job record's read
    // position in one durable write.
    job.set_hypertune_timestamp(last_ts);
    if (!(*manager)->AddMeasurementsWithJob(batch, trial, job).ok()) return 1;
    collect_s += std::chrono::duration<double>(Clock::now() - start).count();
  }
  double direct_s = 0;
  for (int i = 1; i <= reports; ++i) {
    cairn::v1::Measurement m;
    m.set_step_count(reports + i);
    auto* metric = m.add_metrics();
    metric->set_metric_id("loss");
    metric->set_value(0.5);
    const auto start = Clock::now();
    if (!(*manager)->AddMeasurement(trial, m).ok()) return 1;
    direct_s += std::chrono::duration<double>(Clock::now() - start).count();
  }
  const double collect_us = collect_s / reports * 1e6;
  const double direct_us = direct_s / reports * 1e6;
  std::printf(
      "metric collection per report: hypertune file %.0f us (read of a "
      "100-line file, parse of the new line, one durable write of the "
      "measurement and the job record) vs direct AddMeasurement %.0f us: "
      "overhead %.0f us (%.2fx)\n",
      collect_us, direct_us, collect_us - direct_us, collect_us / direct_us);
  std::filesystem::remove_all(dir);
  return 0;
}
