// End to end: a real cairnd serving /metrics, a small study run through its
// gRPC API, a real Prometheus scraping it every second with Cairn's alert
// rules loaded, then every PromQL expression of every panel of
// monitoring/grafana/cairn.json evaluated through Prometheus's HTTP API must
// return data. All traffic stays on 127.0.0.1.
//
// Skipped (with a message) only when the `prometheus` binary is absent.
// $CAIRN_CAIRND overrides the cairnd binary ($CAIRN_BIN_DIR/cairnd).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/monitoring/test_util.h"
#include "tests/testing/test_util.h"

namespace cairn::monitoring {
namespace {

using ::cairn::monitoring::testing::CommandResult;
using ::cairn::monitoring::testing::FindExecutable;
using ::cairn::monitoring::testing::FreeLoopbackPort;
using ::cairn::monitoring::testing::HttpGet;
using ::cairn::monitoring::testing::HttpResponse;
using ::cairn::monitoring::testing::MakeTempDir;
using ::cairn::monitoring::testing::RemoveTree;
using ::cairn::monitoring::testing::RunCommand;
using ::cairn::monitoring::testing::SourceDir;
using ::cairn::monitoring::testing::UrlEncode;
using ::cairn::testing::BinDir;
using ::cairn::testing::CairndProcess;
using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

constexpr char kStudy[] = "monitoring-it";
// How much of a log a failure message quotes (its end).
constexpr size_t kLogTail = 4000;

// A child process (Prometheus), stopped (SIGTERM, then SIGKILL) when
// destroyed.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::string& log_path)
      : log_path_(log_path) {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> args;
      for (const std::string& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str()));
      }
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~Child() { Stop(); }

  bool Running() {
    if (pid_ <= 0) return false;
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }

  void Stop() {
    if (!Running()) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    return text.size() > kLogTail ? text.substr(text.size() - kLogTail) : text;
  }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

class PrometheusIntegrationTest : public ::testing::Test {
 protected:
  // What a real cairnd serves after real work passes `promtool check
  // metrics`, Prometheus's own lint of the exposition format (names, types,
  // help, units): the same check as promtool_test's, on every series that
  // cairnd's own code paths created rather than a hand-made set.
  void ExpectPromtoolAcceptsScrape(int metrics_port) {
    const std::string promtool = FindExecutable("promtool");
    ASSERT_FALSE(promtool.empty())
        << "promtool not found (Debian's prometheus)";
    absl::StatusOr<HttpResponse> scrape = HttpGet(metrics_port, "/metrics");
    ASSERT_TRUE(scrape.ok()) << scrape.status();
    ASSERT_THAT(scrape->body, ::testing::HasSubstr("cairn_trials{"));
    CommandResult check =
        RunCommand("'" + promtool + "' check metrics", scrape->body);
    EXPECT_EQ(check.exit_code, 0) << check.output;
  }

  void SetUp() override {
    prometheus_ = FindExecutable("prometheus");
    if (prometheus_.empty()) {
      GTEST_SKIP() << "prometheus not found in PATH or /usr/bin: install "
                      "Debian's `prometheus` package to run this test";
    }
    const char* override_path = getenv("CAIRN_CAIRND");
    cairnd_ =
        override_path && *override_path ? override_path : BinDir() + "/cairnd";
    ASSERT_EQ(access(cairnd_.c_str(), X_OK), 0)
        << "cairnd binary not found at " << cairnd_
        << " (build the cairnd target or set CAIRN_CAIRND)";
    CommandResult help = RunCommand("'" + cairnd_ + "' --help");
    ASSERT_THAT(help.output, ::testing::HasSubstr("--metrics-listen"))
        << "cairnd has no --metrics-listen flag: monitoring is not wired "
           "into server/ (see monitoring/metrics.h)";
    dir_ = MakeTempDir("cairn-monitoring-it");
    ASSERT_FALSE(dir_.empty());
  }

  void TearDown() override {
    prometheus_process_.reset();
    if (cairnd_process_ != nullptr) cairnd_process_->Terminate(seconds(5));
    cairnd_process_.reset();
    if (!HasFailure()) RemoveTree(dir_);
  }

  // Runs a PromQL instant query; returns the JSON response or an error.
  absl::StatusOr<nlohmann::json> Query(const std::string& expr) {
    absl::StatusOr<HttpResponse> response =
        HttpGet(prometheus_port_, "/api/v1/query?query=" + UrlEncode(expr));
    if (!response.ok()) return response.status();
    nlohmann::json body = nlohmann::json::parse(response->body, nullptr, false);
    if (body.is_discarded() || body.value("status", "") != "success") {
      return absl::InternalError(absl::StrCat("HTTP ", response->status, ": ",
                                              response->body.substr(0, 500)));
    }
    return body;
  }

  // Polls `expr` until it returns data or the deadline passes.
  bool WaitForData(const std::string& expr, seconds timeout) {
    auto deadline = steady_clock::now() + timeout;
    while (steady_clock::now() < deadline) {
      absl::StatusOr<nlohmann::json> result = Query(expr);
      if (result.ok() && !(*result)["data"]["result"].empty()) return true;
      std::this_thread::sleep_for(milliseconds(200));
    }
    return false;
  }

  std::string prometheus_;
  std::string cairnd_;
  std::string dir_;
  int prometheus_port_ = 0;
  std::unique_ptr<CairndProcess> cairnd_process_;
  std::unique_ptr<Child> prometheus_process_;
};

cairn::v1::Measurement MakeMeasurement(int64_t step, double loss) {
  cairn::v1::Measurement measurement;
  measurement.set_step_count(step);
  cairn::v1::Metric* metric = measurement.add_metrics();
  metric->set_metric_id("loss");
  metric->set_value(loss);
  return measurement;
}

// Runs trials [first, last) of the study: suggest, report intermediate
// measurements (unary and streaming), complete. Trial 3 is infeasible.
void RunTrials(cairn::v1::StudyService::Stub& stub, const std::string& study,
               int first, int last) {
  for (int i = first; i < last; ++i) {
    grpc::ClientContext suggest_context;
    cairn::v1::SuggestTrialsRequest suggest;
    suggest.set_parent(study);
    suggest.set_suggestion_count(1);
    suggest.set_client_id("worker-" + std::to_string(i));
    cairn::v1::SuggestTrialsResponse suggested;
    grpc::Status status =
        stub.SuggestTrials(&suggest_context, suggest, &suggested);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(suggested.trials_size(), 1) << suggested.message();
    const std::string trial = suggested.trials(0).name();
    double x = suggested.trials(0).parameters(0).value().number_value();

    grpc::ClientContext add_context;
    cairn::v1::AddTrialMeasurementRequest add;
    add.set_trial_name(trial);
    *add.mutable_measurement() = MakeMeasurement(1, 2 + x);
    cairn::v1::Trial updated;
    status = stub.AddTrialMeasurement(&add_context, add, &updated);
    ASSERT_TRUE(status.ok()) << status.error_message();

    grpc::ClientContext stream_context;
    cairn::v1::ReportMeasurementsResponse written;
    auto writer = stub.ReportMeasurements(&stream_context, &written);
    for (int step = 2; step <= 4; ++step) {
      cairn::v1::ReportMeasurementsRequest report;
      report.set_trial_name(trial);
      *report.mutable_measurement() =
          MakeMeasurement(step, (x - 0.3) * (x - 0.3) + 1.0 / step);
      ASSERT_TRUE(writer->Write(report));
    }
    writer->WritesDone();
    status = writer->Finish();
    ASSERT_TRUE(status.ok()) << status.error_message();

    grpc::ClientContext complete_context;
    cairn::v1::CompleteTrialRequest complete;
    complete.set_name(trial);
    if (i == 3) {
      complete.set_trial_infeasible(true);
      complete.set_infeasible_reason("diverged");
    } else {
      *complete.mutable_final_measurement() =
          MakeMeasurement(5, (x - 0.3) * (x - 0.3));
    }
    cairn::v1::Trial completed;
    status = stub.CompleteTrial(&complete_context, complete, &completed);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
}

TEST_F(PrometheusIntegrationTest, EveryDashboardPanelHasData) {
  const int metrics_port = FreeLoopbackPort();
  prometheus_port_ = FreeLoopbackPort();

  // 1. cairnd with metrics on a loopback port (gRPC on a port it picks).
  cairnd_process_ = std::make_unique<CairndProcess>(
      dir_ + "/data",
      std::vector<std::string>{"--metrics-listen",
                               absl::StrCat("127.0.0.1:", metrics_port)},
      cairnd_);
  std::string start_error;
  ASSERT_TRUE(cairnd_process_->Start(&start_error))
      << "cairnd did not start: " << start_error << "\n"
      << cairnd_process_->Log(kLogTail);
  ASSERT_NE(cairnd_process_->port(), metrics_port);
  auto stub = cairnd_process_->NewStub();
  absl::StatusOr<HttpResponse> scrape;
  for (int i = 0; i < 100; ++i) {
    scrape = HttpGet(metrics_port, "/metrics");
    if (scrape.ok()) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(scrape.ok()) << "no /metrics on port " << metrics_port << ":\n"
                           << cairnd_process_->Log(kLogTail);

  // 2. Prometheus scraping it every second with the shipped config (its
  // alert rules, and its target from targets/*.yml, file-based discovery).
  {
    const std::string shipped = SourceDir() + "/monitoring/prometheus/";
    std::ifstream in(shipped + "prometheus.yml");
    std::string config((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
    ASSERT_TRUE(absl::StrContains(config, "interval: 15s")) << config;
    config = absl::StrReplaceAll(config, {{"interval: 15s", "interval: 1s"}});
    std::ofstream(dir_ + "/prometheus.yml") << config;
    std::filesystem::copy_file(shipped + "alerts.yml", dir_ + "/alerts.yml");
    std::filesystem::create_directories(dir_ + "/targets");
    std::ofstream(dir_ + "/targets/cairnd.yml")
        << "- targets: ['127.0.0.1:" << metrics_port << "']\n";
  }
  prometheus_process_ = std::make_unique<Child>(
      std::vector<std::string>{
          prometheus_, "--config.file=" + dir_ + "/prometheus.yml",
          "--storage.tsdb.path=" + dir_ + "/tsdb",
          absl::StrCat("--web.listen-address=127.0.0.1:", prometheus_port_)},
      dir_ + "/prometheus.log");
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    absl::StatusOr<HttpResponse> response =
        HttpGet(prometheus_port_, "/-/ready");
    ready = response.ok() && response->status == 200;
    if (!ready) std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(ready) << "Prometheus did not become ready:\n"
                     << prometheus_process_->Log();
  ASSERT_TRUE(WaitForData("up{job=\"cairnd\"} == 1", seconds(20)))
      << "Prometheus does not scrape cairnd:\n"
      << prometheus_process_->Log();

  // 3. A small study, spread over a few scrapes so rates see increases.
  cairn::v1::CreateStudyRequest create;
  create.mutable_study()->set_display_name(kStudy);
  cairn::v1::StudySpec* spec = create.mutable_study()->mutable_spec();
  cairn::v1::ParameterSpec* x = spec->add_parameters();
  x->set_parameter_id("x");
  x->set_type(cairn::v1::ParameterSpec::DOUBLE);
  x->set_min_value(0);
  x->set_max_value(1);
  cairn::v1::ParameterSpec* layers = spec->add_parameters();
  layers->set_parameter_id("layers");
  layers->set_type(cairn::v1::ParameterSpec::INTEGER);
  layers->set_min_value(1);
  layers->set_max_value(4);
  cairn::v1::MetricSpec* loss = spec->add_metrics();
  loss->set_metric_id("loss");
  loss->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  spec->set_algorithm(cairn::v1::StudySpec::RANDOM_SEARCH);
  spec->set_seed(7);
  spec->mutable_early_stopping()->mutable_median()->set_min_steps(2);
  cairn::v1::Study study;
  {
    grpc::ClientContext context;
    grpc::Status status = stub->CreateStudy(&context, create, &study);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  ASSERT_NO_FATAL_FAILURE(RunTrials(*stub, study.name(), 0, 6));
  std::this_thread::sleep_for(milliseconds(2500));
  ASSERT_NO_FATAL_FAILURE(RunTrials(*stub, study.name(), 6, 12));
  {
    // One trial left running, with a reported metric.
    grpc::ClientContext context;
    cairn::v1::SuggestTrialsRequest suggest;
    suggest.set_parent(study.name());
    suggest.set_suggestion_count(1);
    suggest.set_client_id("worker-running");
    cairn::v1::SuggestTrialsResponse suggested;
    ASSERT_TRUE(stub->SuggestTrials(&context, suggest, &suggested).ok());
    ASSERT_EQ(suggested.trials_size(), 1);
    grpc::ClientContext add_context;
    cairn::v1::AddTrialMeasurementRequest add;
    add.set_trial_name(suggested.trials(0).name());
    *add.mutable_measurement() = MakeMeasurement(1, 0.75);
    cairn::v1::Trial updated;
    ASSERT_TRUE(stub->AddTrialMeasurement(&add_context, add, &updated).ok());
    grpc::ClientContext check_context;
    cairn::v1::CheckTrialEarlyStoppingStateRequest check;
    check.set_trial_name(suggested.trials(0).name());
    cairn::v1::CheckTrialEarlyStoppingStateResponse decision;
    stub->CheckTrialEarlyStoppingState(&check_context, check, &decision);
  }
  {
    // A client error, as users make them: the RPC error panel shows it.
    grpc::ClientContext context;
    cairn::v1::GetStudyRequest get;
    get.set_name("studies/987654");
    cairn::v1::Study missing;
    EXPECT_EQ(stub->GetStudy(&context, get, &missing).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  ASSERT_NO_FATAL_FAILURE(RunTrials(*stub, study.name(), 12, 13));

  // 4. Wait until Prometheus has scraped the final state twice.
  ASSERT_TRUE(WaitForData(absl::StrCat("cairn_trials{study=\"", kStudy,
                                       "\",state=\"succeeded\"} == 12"),
                          seconds(20)))
      << "Prometheus never saw 12 succeeded trials";
  std::this_thread::sleep_for(milliseconds(2500));
  ExpectPromtoolAcceptsScrape(metrics_port);

  // 5. Every panel expression returns data.
  std::ifstream file(SourceDir() + "/monitoring/grafana/cairn.json");
  ASSERT_TRUE(file);
  nlohmann::json dashboard = nlohmann::json::parse(file);
  std::vector<std::pair<std::string, std::string>> exprs;
  std::function<void(const nlohmann::json&)> collect =
      [&](const nlohmann::json& panels) {
        for (const nlohmann::json& panel : panels) {
          if (panel.contains("targets")) {
            for (const nlohmann::json& target : panel["targets"]) {
              exprs.emplace_back(panel.value("title", "?"),
                                 target.value("expr", ""));
            }
          }
          if (panel.contains("panels")) collect(panel["panels"]);
        }
      };
  collect(dashboard["panels"]);
  ASSERT_GE(exprs.size(), 15u);
  int checked = 0;
  for (const auto& [title, raw] : exprs) {
    std::string expr = absl::StrReplaceAll(raw, {{"${study}", kStudy},
                                                 {"$study", kStudy},
                                                 {"$__rate_interval", "30s"},
                                                 {"$__interval", "5s"},
                                                 {"$__range", "5m"}});
    absl::StatusOr<nlohmann::json> result = Query(expr);
    if (!result.ok()) {
      ADD_FAILURE() << "panel \"" << title << "\": query failed: " << expr
                    << "\n  " << result.status();
      continue;
    }
    const nlohmann::json& data = (*result)["data"]["result"];
    EXPECT_FALSE(data.empty())
        << "panel \"" << title << "\": no data for " << expr;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(exprs.size()));

  // Spot checks of values, not just presence.
  absl::StatusOr<nlohmann::json> running = Query(absl::StrCat(
      "cairn_trial_metric_latest{study=\"", kStudy, "\",metric=\"loss\"}"));
  ASSERT_TRUE(running.ok());
  ASSERT_EQ((*running)["data"]["result"].size(), 1u)
      << "exactly one running trial reported loss";
  EXPECT_EQ((*running)["data"]["result"][0]["value"][1], "0.75");
  absl::StatusOr<nlohmann::json> infeasible = Query(absl::StrCat(
      "cairn_trials{study=\"", kStudy, "\",state=\"infeasible\"}"));
  ASSERT_TRUE(infeasible.ok());
  ASSERT_EQ((*infeasible)["data"]["result"].size(), 1u);
  EXPECT_EQ((*infeasible)["data"]["result"][0]["value"][1], "1");

  // 6. The alert rules evaluate without errors against real data.
  absl::StatusOr<HttpResponse> rules =
      HttpGet(prometheus_port_, "/api/v1/rules");
  ASSERT_TRUE(rules.ok());
  nlohmann::json groups = nlohmann::json::parse(rules->body)["data"]["groups"];
  int rule_count = 0;
  for (const nlohmann::json& group : groups) {
    for (const nlohmann::json& rule : group["rules"]) {
      ++rule_count;
      EXPECT_EQ(rule.value("health", ""), "ok")
          << rule.value("name", "?") << ": " << rule.value("lastError", "");
    }
  }
  EXPECT_GE(rule_count, 5);

  // 7. cairnd's exposition passes promtool's lint.
  std::string promtool = FindExecutable("promtool");
  if (!promtool.empty()) {
    absl::StatusOr<HttpResponse> text = HttpGet(metrics_port, "/metrics");
    ASSERT_TRUE(text.ok());
    CommandResult lint =
        RunCommand("'" + promtool + "' check metrics", text->body);
    EXPECT_EQ(lint.exit_code, 0) << lint.output;
    EXPECT_EQ(lint.output, "");
  }
  if (HasFailure()) {
    std::cerr << "cairnd log:\n" << cairnd_process_->Log(kLogTail) << "\n";
  }
}

}  // namespace
}  // namespace cairn::monitoring
