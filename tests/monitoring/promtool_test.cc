// The Prometheus side of monitoring/, checked with the real promtool: alert
// rules and their unit tests, the scrape config, the exposition cairnd
// serves (promtool check metrics), and the dashboard's metric names against
// what the Metrics class exports.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "monitoring/metrics.h"
#include "nlohmann/json.hpp"
#include "tests/monitoring/test_util.h"

namespace cairn::monitoring {
namespace {

using ::cairn::monitoring::testing::CommandResult;
using ::cairn::monitoring::testing::FindExecutable;
using ::cairn::monitoring::testing::HttpGet;
using ::cairn::monitoring::testing::RunCommand;
using ::cairn::monitoring::testing::SourceDir;

class PromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    promtool_ = FindExecutable("promtool");
    if (promtool_.empty()) {
      GTEST_SKIP() << "promtool not found in PATH or /usr/bin: install "
                      "Debian's `prometheus` package to run this test";
    }
    dir_ = SourceDir() + "/monitoring/prometheus";
  }

  std::string promtool_;
  std::string dir_;
};

// Everything recorded once and a snapshot with two studies, one with label
// values that need escaping.
std::unique_ptr<Metrics> PopulatedMetrics(const std::string& listen) {
  MetricsOptions options;
  options.listen_address = listen;
  options.build = {"0.1.0", false};
  options.data_dir = "/tmp";
  absl::StatusOr<std::unique_ptr<Metrics>> started = Metrics::Start(options);
  EXPECT_TRUE(started.ok()) << started.status();
  std::unique_ptr<Metrics> metrics = std::move(*started);
  metrics->RecordSuggestion("gp_bandit", 0.2, 1);
  metrics->RecordTrialFinished("mnist", TrialOutcome::kSucceeded);
  metrics->RecordEarlyStoppingDecision("mnist", "median", true);
  metrics->RecordStoreWrite(0.001);
  metrics->RecordMeasurementsWritten(3);
  metrics->RecordJobRestart("mnist");
  metrics->RecordRpc("SuggestTrials", "OK", 0.003);
  metrics->RecordRpc("GetStudy", "NOT_FOUND", 0.0001);
  metrics->SetSnapshotProvider([] {
    Snapshot snapshot;
    StudySnapshot study;
    study.name = "studies/1";
    study.display_name = "mnist";
    study.state = "active";
    study.algorithm = "gp_bandit";
    study.early_stopping_rule = "median";
    study.trials_by_state = {{"succeeded", 1}, {"active", 1}};
    study.best_objective = {{"accuracy", 0.9}};
    study.running_trial_metrics = {{2, "accuracy", 0.5}};
    StudySnapshot odd;
    odd.name = "studies/2";
    odd.display_name = "a \"quoted\\\" name\nwith newline";
    odd.state = "inactive";
    odd.algorithm = "random_search";
    snapshot.studies = {study, odd};
    snapshot.jobs_queued = 1;
    snapshot.gpu_slots_total = 2;
    snapshot.store_bytes = 4096;
    return snapshot;
  });
  return metrics;
}

// The values of `key: VALUE` lines of a YAML file (enough for our files).
std::set<std::string> YamlValues(const std::string& path,
                                 const std::string& key) {
  std::ifstream in(path);
  std::set<std::string> values;
  std::string line;
  const std::regex pattern("^\\s*(- )?" + key + ":\\s*(\\S+)\\s*$");
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, pattern)) values.insert(match[2]);
  }
  return values;
}

TEST_F(PromtoolTest, AlertRulesAreValid) {
  CommandResult result =
      RunCommand("'" + promtool_ + "' check rules '" + dir_ + "/alerts.yml'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  std::set<std::string> alerts = YamlValues(dir_ + "/alerts.yml", "alert");
  EXPECT_GE(alerts.size(), 5u);
  EXPECT_THAT(result.output,
              ::testing::HasSubstr("SUCCESS: " + std::to_string(alerts.size()) +
                                   " rules found"));
}

TEST(AlertTestsTest, EveryAlertHasAUnitTest) {
  std::string dir = SourceDir() + "/monitoring/prometheus";
  std::set<std::string> alerts = YamlValues(dir + "/alerts.yml", "alert");
  std::set<std::string> tested =
      YamlValues(dir + "/alerts_test.yml", "alertname");
  ASSERT_FALSE(alerts.empty());
  for (const std::string& alert :
       {"CairndDown", "CairnTrialFailureRateHigh", "CairnStudyStalled",
        "CairnSuggestionLatencyHigh", "CairnStoreDiskFillingUp"}) {
    EXPECT_TRUE(alerts.count(alert)) << "alerts.yml lacks " << alert;
  }
  for (const std::string& alert : alerts) {
    EXPECT_TRUE(tested.count(alert))
        << alert << " has no test in alerts_test.yml";
  }
}

std::string ReadSource(const std::string& relative) {
  std::ifstream in(SourceDir() + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Each fact has one home: the Prometheus steps and the alerts in
// docs/monitoring.md, the metric table in monitoring/README.md, which
// links to the steps instead of repeating them.
TEST(MonitoringDocsTest, EveryAlertAndMetricIsDocumentedInItsHome) {
  const std::string guide = ReadSource("docs/monitoring.md");
  const std::string reference = ReadSource("monitoring/README.md");
  ASSERT_FALSE(guide.empty());
  ASSERT_FALSE(reference.empty());
  for (const std::string& alert :
       YamlValues(SourceDir() + "/monitoring/prometheus/alerts.yml", "alert")) {
    EXPECT_THAT(guide, ::testing::HasSubstr("`" + alert + "`"))
        << "docs/monitoring.md does not name alert " << alert;
  }
  std::istringstream lines(PopulatedMetrics("")->ScrapeText());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE cairn_", 0) != 0) continue;
    const std::string name = line.substr(7, line.find(' ', 7) - 7);
    EXPECT_THAT(reference, ::testing::HasSubstr("`" + name + "`"))
        << "monitoring/README.md's table lacks " << name;
  }
  EXPECT_THAT(reference, ::testing::HasSubstr("(../docs/monitoring.md)"));
  EXPECT_THAT(reference,
              ::testing::Not(::testing::HasSubstr("prometheus --config.file")))
      << "monitoring/README.md repeats docs/monitoring.md's steps";
}

TEST_F(PromtoolTest, AlertRuleUnitTestsPass) {
  CommandResult result = RunCommand("cd '" + dir_ + "' && '" + promtool_ +
                                    "' test rules alerts_test.yml");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_THAT(result.output, ::testing::HasSubstr("SUCCESS"));
}

TEST_F(PromtoolTest, ScrapeConfigIsValid) {
  CommandResult result = RunCommand("cd '" + dir_ + "' && '" + promtool_ +
                                    "' check config prometheus.yml");
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

TEST_F(PromtoolTest, ExpositionPassesCheckMetrics) {
  // Scraped over HTTP, so prometheus-cpp's own exposer_ metrics are checked
  // too, exactly as Prometheus would receive them.
  std::unique_ptr<Metrics> metrics = PopulatedMetrics("127.0.0.1:0");
  absl::StatusOr<testing::HttpResponse> response =
      HttpGet(metrics->http_port(), "/metrics");
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->status, 200);
  ASSERT_THAT(response->body, ::testing::HasSubstr("cairn_trials{"));
  CommandResult result =
      RunCommand("'" + promtool_ + "' check metrics", response->body);
  EXPECT_EQ(result.exit_code, 0) << result.output << "\n" << response->body;
  EXPECT_EQ(result.output, "") << response->body;
}

// Collects every "expr" of every panel (rows may nest panels).
void CollectExprs(const nlohmann::json& panels,
                  std::vector<std::pair<std::string, std::string>>& out) {
  for (const nlohmann::json& panel : panels) {
    if (panel.contains("targets")) {
      for (const nlohmann::json& target : panel["targets"]) {
        out.emplace_back(panel.value("title", "?"), target.value("expr", ""));
      }
    }
    if (panel.contains("panels")) CollectExprs(panel["panels"], out);
  }
}

TEST(DashboardTest, UsesOnlyExportedMetricsAndHasStudyVariable) {
  std::ifstream file(SourceDir() + "/monitoring/grafana/cairn.json");
  ASSERT_TRUE(file) << "monitoring/grafana/cairn.json missing";
  nlohmann::json dashboard = nlohmann::json::parse(file);
  bool has_study = false;
  for (const nlohmann::json& variable : dashboard["templating"]["list"]) {
    if (variable.value("name", "") == "study") {
      has_study = true;
      EXPECT_EQ(variable.value("definition", ""),
                "label_values(cairn_trials, study)");
    }
  }
  EXPECT_TRUE(has_study);

  std::vector<std::pair<std::string, std::string>> exprs;
  CollectExprs(dashboard["panels"], exprs);
  ASSERT_GE(exprs.size(), 15u);

  std::string exported = PopulatedMetrics("")->ScrapeText();
  std::set<std::string> names;
  std::istringstream lines(exported);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name;
      words >> name;
      names.insert(name);
    }
  }
  const std::regex metric_name("\\b((cairn|process)_[a-z_]+)\\b");
  const std::regex suffix("_(bucket|sum|count)$");
  std::set<std::string> used;
  for (const auto& [title, expr] : exprs) {
    EXPECT_FALSE(expr.empty()) << "panel \"" << title << "\" has no expr";
    for (auto it = std::sregex_iterator(expr.begin(), expr.end(), metric_name);
         it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[1];
      if (!names.count(name)) name = std::regex_replace(name, suffix, "");
      used.insert(name);
      EXPECT_TRUE(names.count(name))
          << "panel \"" << title << "\" uses " << (*it)[1]
          << ", which cairnd does not export: " << expr;
    }
  }
  // The dashboard covers each area of the issue.
  for (const char* name :
       {"cairn_trials", "cairn_study_best_objective",
        "cairn_trial_metric_latest", "cairn_suggestion_duration_seconds",
        "cairn_grpc_requests_total", "cairn_jobs", "cairn_gpu_slots",
        "cairn_store_bytes", "cairn_store_write_duration_seconds"}) {
    EXPECT_TRUE(used.count(name)) << "dashboard does not show " << name;
  }
}

}  // namespace
}  // namespace cairn::monitoring
