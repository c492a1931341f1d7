// Metrics: recorded values, scrape-time snapshot gauges, cardinality rules,
// process metrics and the HTTP exposer.
#include "monitoring/metrics.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/match.h"
#include "api/trial_states.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "monitoring/study_observer.h"
#include "monitoring/study_summary.h"
#include "tests/monitoring/test_util.h"
#include "trials/optimal.h"

namespace cairn::monitoring {
namespace {

using ::cairn::monitoring::testing::HttpGet;
using ::cairn::monitoring::testing::Sample;
using ::testing::HasSubstr;
using ::testing::Optional;

std::unique_ptr<Metrics> StartWithoutHttp(MetricsOptions options = {}) {
  options.listen_address = "";
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Start(options);
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  return std::move(*metrics);
}

TEST(MetricsTest, RejectsMalformedListenAddress) {
  for (const char* address : {"9464", "127.0.0.1", "127.0.0.1:", ":9464",
                              "127.0.0.1:70000", "127.0.0.1:9x", "a:-1"}) {
    MetricsOptions options;
    options.listen_address = address;
    absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Start(options);
    ASSERT_FALSE(metrics.ok()) << address;
    EXPECT_EQ(metrics.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(metrics.status().message()), HasSubstr(address));
  }
  MetricsOptions options;
  options.listen_address = "";
  options.http_threads = 0;
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Start(options);
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(metrics.status().message()),
              HasSubstr("http_threads"));
}

TEST(MetricsTest, PortInUseIsUnavailable) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
            0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  MetricsOptions options;
  options.listen_address =
      "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Start(options);
  close(fd);
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(metrics.status().message()),
              HasSubstr(options.listen_address));
}

TEST(MetricsTest, CountersAndHistograms) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  metrics->RecordSuggestion("random_search", 0.003, 2);
  metrics->RecordSuggestion("random_search", 0.004, 3);
  metrics->RecordSuggestion("gp_bandit", 1.5, 1);
  metrics->RecordTrialFinished("s1", TrialOutcome::kFailed);
  metrics->RecordTrialFinished("s1", TrialOutcome::kFailed);
  metrics->RecordTrialFinished("s1", TrialOutcome::kStoppedEarly);
  metrics->RecordEarlyStoppingDecision("s1", "median", true);
  metrics->RecordEarlyStoppingDecision("s1", "median", false);
  metrics->RecordEarlyStoppingDecision("s1", "median", false);
  metrics->RecordStoreWrite(0.0002);
  metrics->RecordStoreWrite(0.02);
  metrics->RecordMeasurementsWritten(7);
  metrics->RecordMeasurementsWritten(5);
  metrics->RecordJobRestart("s1");
  metrics->RecordRpc("SuggestTrials", "OK", 0.002);
  metrics->RecordRpc("SuggestTrials", "OK", 0.004);
  metrics->RecordRpc("GetStudy", "NOT_FOUND", 0.0001);

  std::string text = metrics->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_suggestion_duration_seconds_count",
                     {{"algorithm", "random_search"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_suggestion_duration_seconds_sum",
                     {{"algorithm", "random_search"}}),
              Optional(::testing::DoubleNear(0.007, 1e-12)));
  EXPECT_THAT(Sample(text, "cairn_suggestion_duration_seconds_bucket",
                     {{"algorithm", "random_search"}, {"le", "0.0025"}}),
              Optional(0.0));
  EXPECT_THAT(Sample(text, "cairn_suggestion_duration_seconds_bucket",
                     {{"algorithm", "random_search"}, {"le", "0.005"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_suggestion_duration_seconds_bucket",
                     {{"algorithm", "gp_bandit"}, {"le", "1"}}),
              Optional(0.0));
  EXPECT_THAT(Sample(text, "cairn_suggestion_duration_seconds_bucket",
                     {{"algorithm", "gp_bandit"}, {"le", "2.5"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_suggested_trials_total",
                     {{"algorithm", "random_search"}}),
              Optional(5.0));
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "s1"}, {"outcome", "failed"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "s1"}, {"outcome", "stopped_early"}}),
              Optional(1.0));
  EXPECT_THAT(
      Sample(text, "cairn_early_stopping_decisions_total",
             {{"study", "s1"}, {"rule", "median"}, {"decision", "continue"}}),
      Optional(2.0));
  EXPECT_THAT(
      Sample(text, "cairn_early_stopping_decisions_total",
             {{"study", "s1"}, {"rule", "median"}, {"decision", "stop"}}),
      Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_store_write_duration_seconds_count", {}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_store_write_duration_seconds_bucket",
                     {{"le", "0.00025"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_measurements_written_total", {}),
              Optional(12.0));
  EXPECT_THAT(Sample(text, "cairn_job_restarts_total", {{"study", "s1"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "SuggestTrials"}, {"code", "OK"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "GetStudy"}, {"code", "NOT_FOUND"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_grpc_request_duration_seconds_count",
                     {{"method", "SuggestTrials"}}),
              Optional(2.0));
  // No snapshot provider: no snapshot gauges.
  EXPECT_FALSE(absl::StrContains(text, "cairn_trials{"));
  EXPECT_FALSE(absl::StrContains(text, "cairn_jobs"));
}

TEST(MetricsTest, BuildInfoAndProcessMetrics) {
  MetricsOptions options;
  options.build.version = "1.2.3";
  options.build.cuda_enabled = true;
  options.data_dir = ::testing::TempDir();
  std::unique_ptr<Metrics> metrics = StartWithoutHttp(options);
  std::string text = metrics->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_build_info",
                     {{"version", "1.2.3"}, {"cuda", "true"}}),
              Optional(1.0));
  std::optional<double> rss = Sample(text, "process_resident_memory_bytes", {});
  ASSERT_TRUE(rss.has_value());
  EXPECT_GT(*rss, 1e6);
  std::optional<double> start = Sample(text, "process_start_time_seconds", {});
  ASSERT_TRUE(start.has_value());
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  EXPECT_LE(*start, now + 2);
  EXPECT_GT(*start, now - 3600);
  std::optional<double> fds = Sample(text, "process_open_fds", {});
  ASSERT_TRUE(fds.has_value());
  EXPECT_GE(*fds, 3);
  EXPECT_TRUE(Sample(text, "process_cpu_seconds_total", {}).has_value());
  EXPECT_GT(Sample(text, "process_max_fds", {}).value_or(0), 0);
  std::optional<double> size =
      Sample(text, "cairn_store_filesystem_size_bytes", {});
  std::optional<double> avail =
      Sample(text, "cairn_store_filesystem_avail_bytes", {});
  ASSERT_TRUE(size.has_value());
  ASSERT_TRUE(avail.has_value());
  EXPECT_GT(*size, 0);
  EXPECT_LE(*avail, *size);
}

Snapshot TwoStudies(bool trial_3_running) {
  Snapshot snapshot;
  StudySnapshot a;
  a.name = "studies/1";
  a.display_name = "mnist";
  a.state = "active";
  a.algorithm = "gp_bandit";
  a.early_stopping_rule = "median";
  a.trials_by_state = {
      {"succeeded", 4}, {"failed", 1}, {"active", trial_3_running ? 1 : 0}};
  a.best_objective = {{"accuracy", 0.93}};
  if (trial_3_running) {
    a.running_trial_metrics = {{3, "accuracy", 0.5}, {3, "loss", 1.25}};
  }
  StudySnapshot b;
  b.name = "studies/2";
  b.display_name = "cifar \"big\"";
  b.state = "completed";
  b.algorithm = "random_search";
  snapshot.studies = {a, b};
  snapshot.jobs_queued = 2;
  snapshot.jobs_running = 1;
  snapshot.jobs_max_running = 4;
  snapshot.gpu_slots_used = 1;
  snapshot.gpu_slots_total = 4;
  snapshot.store_bytes = 123456;
  snapshot.cluster_jobs_by_state = {{"PENDING", 2}, {"RUNNING", 3}};
  return snapshot;
}

TEST(MetricsTest, SnapshotGaugesAtScrapeTime) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  std::atomic<bool> running{true};
  std::atomic<int> calls{0};
  metrics->SetSnapshotProvider([&] {
    ++calls;
    return TwoStudies(running.load());
  });
  std::string text = metrics->ScrapeText();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_THAT(Sample(text, "cairn_studies", {{"state", "active"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_studies", {{"state", "completed"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_studies", {{"state", "failed"}}),
              Optional(0.0));
  EXPECT_THAT(Sample(text, "cairn_study_info",
                     {{"study", "mnist"},
                      {"name", "studies/1"},
                      {"state", "active"},
                      {"algorithm", "gp_bandit"},
                      {"driver", "client"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_trials",
                     {{"study", "mnist"}, {"state", "succeeded"}}),
              Optional(4.0));
  // Known states that the snapshot left out are exported as 0.
  EXPECT_THAT(Sample(text, "cairn_trials",
                     {{"study", "mnist"}, {"state", "infeasible"}}),
              Optional(0.0));
  EXPECT_THAT(Sample(text, "cairn_trials",
                     {{"study", "cifar \"big\""}, {"state", "requested"}}),
              Optional(0.0));
  EXPECT_THAT(Sample(text, "cairn_study_best_objective",
                     {{"study", "mnist"}, {"metric", "accuracy"}}),
              Optional(0.93));
  EXPECT_THAT(Sample(text, "cairn_trial_metric_latest",
                     {{"study", "mnist"}, {"trial", "3"}, {"metric", "loss"}}),
              Optional(1.25));
  EXPECT_THAT(Sample(text, "cairn_jobs", {{"state", "queued"}}), Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_jobs", {{"state", "running"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_jobs_max_running", {}), Optional(4.0));
  EXPECT_THAT(Sample(text, "cairn_gpu_slots", {{"state", "used"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_gpu_slots", {{"state", "free"}}),
              Optional(3.0));
  EXPECT_THAT(Sample(text, "cairn_store_bytes", {}), Optional(123456.0));
  EXPECT_THAT(Sample(text, "cairn_cluster_jobs", {{"state", "PENDING"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_cluster_jobs", {{"state", "RUNNING"}}),
              Optional(3.0));
  // Per-study counters exist at 0 before any event.
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "cifar \"big\""}, {"outcome", "infeasible"}}),
              Optional(0.0));
  EXPECT_THAT(Sample(text, "cairn_job_restarts_total", {{"study", "mnist"}}),
              Optional(0.0));
  EXPECT_THAT(
      Sample(text, "cairn_early_stopping_decisions_total",
             {{"study", "mnist"}, {"rule", "median"}, {"decision", "stop"}}),
      Optional(0.0));
  // The label value is escaped in the exposition.
  EXPECT_THAT(text, HasSubstr("study=\"cifar \\\"big\\\"\""));

  // Once trial 3 finishes its series are gone.
  running = false;
  text = metrics->ScrapeText();
  EXPECT_FALSE(absl::StrContains(text, "cairn_trial_metric_latest{"));
  EXPECT_THAT(
      Sample(text, "cairn_trials", {{"study", "mnist"}, {"state", "active"}}),
      Optional(0.0));
}

TEST(MetricsTest, DeletedStudyCountersAreRemoved) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  Snapshot snapshot = TwoStudies(false);
  metrics->SetSnapshotProvider([&] { return snapshot; });
  metrics->RecordTrialFinished("mnist", TrialOutcome::kSucceeded);
  metrics->RecordJobRestart("mnist");
  std::string text = metrics->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "succeeded"}}),
              Optional(1.0));
  snapshot.studies.erase(snapshot.studies.begin());  // delete "mnist"
  metrics->ScrapeText();                             // prunes
  text = metrics->ScrapeText();
  EXPECT_FALSE(absl::StrContains(text, "study=\"mnist\"")) << text;
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "cifar \"big\""}, {"outcome", "succeeded"}}),
              Optional(0.0));
}

TEST(MetricsTest, ProviderCanBeClearedAndReplaced) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  metrics->SetSnapshotProvider([] { return TwoStudies(true); });
  EXPECT_TRUE(Sample(metrics->ScrapeText(), "cairn_store_bytes", {}));
  metrics->SetSnapshotProvider(nullptr);
  EXPECT_FALSE(Sample(metrics->ScrapeText(), "cairn_store_bytes", {}));
  metrics->SetSnapshotProvider([] {
    Snapshot snapshot;
    snapshot.store_bytes = 7;
    return snapshot;
  });
  EXPECT_THAT(Sample(metrics->ScrapeText(), "cairn_store_bytes", {}),
              Optional(7.0));
}

TEST(MetricsTest, ConcurrentRecordingAndScraping) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  metrics->SetSnapshotProvider([] { return TwoStudies(true); });
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        metrics->RecordRpc(t % 2 ? "GetStudy" : "SuggestTrials", "OK", 0.001);
        metrics->RecordTrialFinished("mnist", TrialOutcome::kSucceeded);
        metrics->RecordMeasurementsWritten(1);
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 20; ++i) metrics->ScrapeText();
  });
  for (std::thread& thread : threads) thread.join();
  std::string text = metrics->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "GetStudy"}, {"code", "OK"}}),
              Optional(kThreads / 2 * kPerThread * 1.0));
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "succeeded"}}),
              Optional(kThreads * kPerThread * 1.0));
  EXPECT_THAT(Sample(text, "cairn_measurements_written_total", {}),
              Optional(kThreads * kPerThread * 1.0));
}

TEST(MetricsTest, RecordingWhileStudiesComeAndGo) {
  // Scrapes remove the series of studies missing from the snapshot while
  // other threads record into them; nothing may be lost or freed under a
  // recorder (run under ASan to see the latter).
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  std::atomic<bool> present{true};
  metrics->SetSnapshotProvider([&] {
    Snapshot snapshot = TwoStudies(false);
    if (!present.load()) snapshot.studies.erase(snapshot.studies.begin());
    return snapshot;
  });
  std::atomic<bool> stop{false};
  std::vector<std::thread> recorders;
  for (int t = 0; t < 3; ++t) {
    recorders.emplace_back([&] {
      while (!stop.load()) {
        metrics->RecordTrialFinished("mnist", TrialOutcome::kFailed);
        metrics->RecordJobRestart("studies/1");
        metrics->RecordEarlyStoppingDecision("mnist", "median", false);
      }
    });
  }
  for (int i = 0; i < 200; ++i) {
    present = i % 2 == 0;
    metrics->ScrapeText();
  }
  stop = true;
  for (std::thread& thread : recorders) thread.join();
  present = true;
  std::string text = metrics->ScrapeText();
  EXPECT_TRUE(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "failed"}})
                  .has_value());
}

TEST(MetricsTest, ServesMetricsOverHttp) {
  MetricsOptions options;
  options.listen_address = "127.0.0.1:0";
  options.build.version = "9.9.9";
  absl::StatusOr<std::unique_ptr<Metrics>> metrics = Metrics::Start(options);
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  int port = (*metrics)->http_port();
  ASSERT_GT(port, 0);
  (*metrics)->RecordRpc("CreateStudy", "ALREADY_EXISTS", 0.01);
  (*metrics)->SetSnapshotProvider([] { return TwoStudies(true); });
  absl::StatusOr<testing::HttpResponse> response = HttpGet(port, "/metrics");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  const std::string& text = response->body;
  EXPECT_THAT(Sample(text, "cairn_grpc_requests_total",
                     {{"method", "CreateStudy"}, {"code", "ALREADY_EXISTS"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_build_info",
                     {{"version", "9.9.9"}, {"cuda", "false"}}),
              Optional(1.0));
  EXPECT_THAT(
      Sample(text, "cairn_trial_metric_latest",
             {{"study", "mnist"}, {"trial", "3"}, {"metric", "accuracy"}}),
      Optional(0.5));
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "failed"}}),
              Optional(0.0));
  // Without an exposer there is no port.
  std::unique_ptr<Metrics> quiet = StartWithoutHttp();
  EXPECT_EQ(quiet->http_port(), 0);
  // The port is released on destruction.
  metrics->reset();
  EXPECT_FALSE(HttpGet(port, "/metrics").ok());
}

TEST(MetricsTest, ObserverEventsAreRecordedUnderDisplayNames) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  MetricsStudyObserver observer(metrics.get());
  const ObservedStudy mnist{"studies/1", "mnist"};
  // Recorded before any snapshot named the study.
  observer.OnTrialFinished(mnist, "succeeded");
  observer.OnTrialFinished(mnist, "succeeded");
  observer.OnJobRestart(mnist);
  metrics->SetSnapshotProvider([] { return TwoStudies(false); });
  metrics->ScrapeText();
  // Recorded after.
  observer.OnTrialFinished(mnist, "succeeded");
  observer.OnEarlyStoppingDecision(mnist, "median", true);
  std::string text = metrics->ScrapeText();
  EXPECT_FALSE(absl::StrContains(text, "study=\"studies/1\"")) << text;
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "succeeded"}}),
              Optional(3.0));
  EXPECT_THAT(Sample(text, "cairn_job_restarts_total", {{"study", "mnist"}}),
              Optional(1.0));
  EXPECT_THAT(
      Sample(text, "cairn_early_stopping_decisions_total",
             {{"study", "mnist"}, {"rule", "median"}, {"decision", "stop"}}),
      Optional(1.0));
}

TEST(MetricsTest, EnumNamesAreExportedInLowerCase) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  metrics->SetSnapshotProvider([] {
    Snapshot snapshot;
    StudySnapshot study;
    study.name = "studies/3";
    study.display_name = "upper";
    study.state = "ACTIVE";
    study.algorithm = "GP_BANDIT";
    study.trials_by_state = {{"SUCCEEDED", 2}, {"ACTIVE", 1}};
    snapshot.studies = {study};
    return snapshot;
  });
  std::string text = metrics->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_trials",
                     {{"study", "upper"}, {"state", "succeeded"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_studies", {{"state", "active"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_study_info",
                     {{"study", "upper"},
                      {"name", "studies/3"},
                      {"state", "active"},
                      {"algorithm", "gp_bandit"},
                      {"driver", "client"}}),
              Optional(1.0));
  EXPECT_FALSE(absl::StrContains(text, "SUCCEEDED"));
}

TEST(MetricsTest, StudyObserverForwardsHooks) {
  std::unique_ptr<Metrics> metrics = StartWithoutHttp();
  MetricsStudyObserver observer(metrics.get());
  StudyObserver& hooks = observer;
  const ObservedStudy mnist{"studies/1", "mnist"};
  hooks.OnSuggest("RANDOM_SEARCH", 0.002, 3);
  hooks.OnDeadlineFallbacks("GP_BANDIT", 2);
  hooks.OnTrialFinished(mnist, "stopped_early");
  hooks.OnTrialFinished(mnist, "infeasible");
  hooks.OnTrialFinished(mnist, "cancelled");
  hooks.OnTrialFinished(mnist, "no such outcome");
  hooks.OnStoreWrite(0.001);
  hooks.OnMeasurementsWritten(4);
  hooks.OnEarlyStoppingDecision(mnist, "median", true);
  hooks.OnEarlyStoppingDecision(mnist, "median", false);
  hooks.OnEarlyStoppingDecision(mnist, "ASHA", true);
  hooks.OnJobRestart(mnist);
  hooks.OnJobRestart(mnist);
  std::string text = metrics->ScrapeText();
  EXPECT_THAT(Sample(text, "cairn_suggested_trials_total",
                     {{"algorithm", "random_search"}}),
              Optional(3.0));
  EXPECT_THAT(Sample(text, "cairn_suggestion_deadline_fallbacks_total",
                     {{"algorithm", "gp_bandit"}}),
              Optional(2.0));
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "stopped_early"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "infeasible"}}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_trials_finished_total",
                     {{"study", "mnist"}, {"outcome", "cancelled"}}),
              Optional(1.0));
  EXPECT_FALSE(absl::StrContains(text, "no such outcome"));
  EXPECT_THAT(Sample(text, "cairn_store_write_duration_seconds_count", {}),
              Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_measurements_written_total", {}),
              Optional(4.0));
  EXPECT_THAT(
      Sample(text, "cairn_early_stopping_decisions_total",
             {{"study", "mnist"}, {"rule", "median"}, {"decision", "stop"}}),
      Optional(1.0));
  EXPECT_THAT(
      Sample(
          text, "cairn_early_stopping_decisions_total",
          {{"study", "mnist"}, {"rule", "median"}, {"decision", "continue"}}),
      Optional(1.0));
  EXPECT_THAT(
      Sample(text, "cairn_early_stopping_decisions_total",
             {{"study", "mnist"}, {"rule", "asha"}, {"decision", "stop"}}),
      Optional(1.0));
  EXPECT_THAT(Sample(text, "cairn_job_restarts_total", {{"study", "mnist"}}),
              Optional(2.0));
  EXPECT_EQ(TrialOutcomeFromLabel("failed"), TrialOutcome::kFailed);
  EXPECT_EQ(TrialOutcomeFromLabel("FAILED"), std::nullopt);
}

TEST(StudySummaryTest, MakesSnapshotFromParts) {
  cairn::v1::Study study;
  study.set_name("studies/9");
  study.set_display_name("parts");
  study.set_state(cairn::v1::Study::INACTIVE);
  study.mutable_spec()->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  StudySnapshot snapshot = MakeStudySnapshot(
      study, {{"SUCCEEDED", 3}}, {{"loss", 0.25}},
      {{4, {{"loss", 0.5}, {"acc", 0.7}}}, {6, {{"loss", 0.9}}}});
  EXPECT_EQ(snapshot.name, "studies/9");
  EXPECT_EQ(snapshot.display_name, "parts");
  EXPECT_EQ(snapshot.state, "inactive");
  EXPECT_EQ(snapshot.algorithm, "random_search");
  EXPECT_EQ(snapshot.trials_by_state,
            (std::map<std::string, int64_t>{{"SUCCEEDED", 3}}));
  EXPECT_EQ(snapshot.best_objective,
            (std::map<std::string, double>{{"loss", 0.25}}));
  ASSERT_EQ(snapshot.running_trial_metrics.size(), 3u);
  EXPECT_EQ(snapshot.running_trial_metrics[0].trial_id, 4);
  EXPECT_EQ(snapshot.running_trial_metrics[0].metric, "acc");
  EXPECT_EQ(snapshot.running_trial_metrics[2].trial_id, 6);
  EXPECT_EQ(snapshot.running_trial_metrics[2].value, 0.9);
}

// The snapshot of `study` built as cairnd builds it (MakeStudySnapshot from
// the controller's parts), with trial states as labels, the best values by
// BestFinalValues, and the latest value of every metric of pending trials.
StudySnapshot SnapshotAsCairndBuildsIt(
    const cairn::v1::Study& study,
    const std::vector<cairn::v1::Trial>& trials) {
  std::map<std::string, int64_t> by_state;
  std::map<int64_t, std::map<std::string, double>> running;
  std::vector<const cairn::v1::Trial*> pointers;
  for (const cairn::v1::Trial& trial : trials) {
    pointers.push_back(&trial);
    ++by_state[std::string(TrialStateLabel(trial.state()))];
    if (!api::IsPendingState(trial.state())) continue;
    for (const cairn::v1::Measurement& measurement : trial.measurements()) {
      for (const cairn::v1::Metric& metric : measurement.metrics()) {
        running[trial.id()][metric.metric_id()] = metric.value();
      }
    }
  }
  return MakeStudySnapshot(study, by_state,
                           BestFinalValues(study.spec(), pointers), running);
}

TEST(StudySummaryTest, SummarizesStudyFromProtos) {
  cairn::v1::Study study;
  study.set_name("studies/5");
  study.set_display_name("resnet");
  study.set_state(cairn::v1::Study::ACTIVE);
  study.mutable_spec()->set_algorithm(cairn::v1::StudySpec::GP_BANDIT);
  study.mutable_spec()->mutable_early_stopping()->mutable_asha();
  auto* accuracy = study.mutable_spec()->add_metrics();
  accuracy->set_metric_id("accuracy");
  accuracy->set_goal(cairn::v1::MetricSpec::MAXIMIZE);
  auto* latency = study.mutable_spec()->add_metrics();
  latency->set_metric_id("latency");
  latency->set_goal(cairn::v1::MetricSpec::MINIMIZE);

  auto finished = [](int64_t id, cairn::v1::Trial::State state, double acc,
                     double lat) {
    cairn::v1::Trial trial;
    trial.set_id(id);
    trial.set_state(state);
    auto* m = trial.mutable_final_measurement();
    auto* a = m->add_metrics();
    a->set_metric_id("accuracy");
    a->set_value(acc);
    auto* l = m->add_metrics();
    l->set_metric_id("latency");
    l->set_value(lat);
    return trial;
  };
  std::vector<cairn::v1::Trial> trials = {
      finished(1, cairn::v1::Trial::SUCCEEDED, 0.8, 3.0),
      finished(2, cairn::v1::Trial::SUCCEEDED, 0.9, 5.0),
      // Infeasible values never count as best.
      finished(3, cairn::v1::Trial::INFEASIBLE, 0.99, 0.1),
      finished(4, cairn::v1::Trial::SUCCEEDED, 0.7, 2.0),
  };
  cairn::v1::Trial running;
  running.set_id(6);
  running.set_state(cairn::v1::Trial::ACTIVE);
  auto* m1 = running.add_measurements();
  m1->set_step_count(1);
  auto* x = m1->add_metrics();
  x->set_metric_id("accuracy");
  x->set_value(0.1);
  auto* y = m1->add_metrics();
  y->set_metric_id("loss");
  y->set_value(2.0);
  auto* m2 = running.add_measurements();
  m2->set_step_count(2);
  auto* z = m2->add_metrics();
  z->set_metric_id("accuracy");
  z->set_value(0.4);
  trials.push_back(running);
  cairn::v1::Trial requested;
  requested.set_id(7);
  requested.set_state(cairn::v1::Trial::REQUESTED);
  trials.push_back(requested);

  StudySnapshot snapshot = SnapshotAsCairndBuildsIt(study, trials);
  EXPECT_EQ(snapshot.name, "studies/5");
  EXPECT_EQ(snapshot.display_name, "resnet");
  EXPECT_EQ(snapshot.state, "active");
  EXPECT_EQ(snapshot.algorithm, "gp_bandit");
  EXPECT_EQ(snapshot.early_stopping_rule, "asha");
  EXPECT_EQ(snapshot.trials_by_state,
            (std::map<std::string, int64_t>{{"succeeded", 3},
                                            {"infeasible", 1},
                                            {"active", 1},
                                            {"requested", 1}}));
  EXPECT_EQ(snapshot.best_objective, (std::map<std::string, double>{
                                         {"accuracy", 0.9}, {"latency", 2.0}}));
  ASSERT_EQ(snapshot.running_trial_metrics.size(), 2u);
  EXPECT_EQ(snapshot.running_trial_metrics[0].trial_id, 6);
  EXPECT_EQ(snapshot.running_trial_metrics[0].metric, "accuracy");
  EXPECT_EQ(snapshot.running_trial_metrics[0].value, 0.4);
  EXPECT_EQ(snapshot.running_trial_metrics[1].metric, "loss");
  EXPECT_EQ(snapshot.running_trial_metrics[1].value, 2.0);

  cairn::v1::Trial early = finished(8, cairn::v1::Trial::SUCCEEDED, 0.5, 1.0);
  early.set_stopped_early(true);
  EXPECT_EQ(TrialOutcomeOf(early), TrialOutcome::kStoppedEarly);
  EXPECT_EQ(TrialOutcomeOf(trials[2]), TrialOutcome::kInfeasible);
  EXPECT_EQ(TrialOutcomeOf(trials[0]), TrialOutcome::kSucceeded);
  EXPECT_EQ(TrialOutcomeLabel(TrialOutcome::kStoppedEarly), "stopped_early");
  EXPECT_EQ(StudyStateLabel(cairn::v1::Study::FAILED), "failed");
  EXPECT_EQ(TrialStateLabel(cairn::v1::Trial::STOPPING), "stopping");
  EXPECT_EQ(AlgorithmLabel(cairn::v1::StudySpec::ALGORITHM_UNSPECIFIED),
            "gp_bandit");  // What runs.
  cairn::v1::StudySpec spec;
  EXPECT_EQ(DriverLabel(spec), "client");
  (*spec.mutable_labels())[kDriverLabelKey] = "optuna";
  EXPECT_EQ(DriverLabel(spec), "optuna");
  spec.mutable_job_template()->add_command("/bin/true");
  EXPECT_EQ(DriverLabel(spec), "jobs");
  EXPECT_EQ(EarlyStoppingRuleLabel(cairn::v1::EarlyStoppingConfig()), "");
}

}  // namespace
}  // namespace cairn::monitoring
