// End to end: a real cairnd on a free loopback port with a temp data dir, and
// the real cairn binary run as child processes, checking stdout, the one-line
// errors and exit codes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/test_util.h"

namespace {

using json = nlohmann::json;
using ::cairn::testing::Branin;
using ::cairn::testing::CairndProcess;
using ::cairn::testing::CommandResult;
using ::cairn::testing::RunCommand;
using ::cairn::testing::SuiteCairnd;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

// Helpers over the protobuf JSON mapping that every --json prints: int64 ids
// are strings, parameters a list of {parameterId, value}.
int64_t Id(const json& trial) {
  return std::stoll(trial["id"].get<std::string>());
}
json Params(const json& trial) {
  json out = json::object();
  for (const json& p : trial["parameters"]) out[p["parameterId"]] = p["value"];
  return out;
}
double FinalMetric(const json& trial, const std::string& metric) {
  for (const json& m : trial["finalMeasurement"]["metrics"]) {
    if (m["metricId"] == metric) return m["value"].get<double>();
  }
  ADD_FAILURE() << "no final " << metric << " in " << trial;
  return 0;
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

class CliIntegrationTest : public ::testing::Test {
 protected:
  // One cairnd (metrics off) serves every test of the suite.
  static void SetUpTestSuite() {
    bin_dir_ = new std::string(Env("CAIRN_BIN_DIR", CAIRN_BIN_DIR_FALLBACK));
    source_dir_ =
        new std::string(Env("CAIRN_SOURCE_DIR", CAIRN_SOURCE_DIR_FALLBACK));
    cairnd_ = new SuiteCairnd(*bin_dir_ + "/cairnd");
  }

  static void TearDownTestSuite() { delete cairnd_; }

  void SetUp() override {
    ASSERT_EQ(cairnd_->start_error(), "") << "cairnd did not start; its log:\n"
                                          << server().Log();
  }

  static CairndProcess& server() { return cairnd_->server(); }

  // Runs `cairn --server ADDR args...` and collects its output.
  static CommandResult Cairn(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {*bin_dir_ + "/cairn", "--server",
                                     server().address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv);
  }

  // Runs a command that must succeed and returns its stdout.
  static std::string CairnOk(const std::vector<std::string>& args) {
    CommandResult r = Cairn(args);
    EXPECT_EQ(r.exit_code, 0)
        << args[0] << " " << (args.size() > 1 ? args[1] : "") << ": " << r.err;
    return r.out;
  }

  static json CairnJson(const std::vector<std::string>& args) {
    const std::string out = CairnOk(args);
    json j = json::parse(out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << out;
    return j;
  }

  // A failure: exit 1, nothing on stdout, one "cairn: error:" line.
  static void ExpectError(const std::vector<std::string>& args,
                          const std::string& fragment) {
    const CommandResult r = Cairn(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("cairn: error: "));
    EXPECT_THAT(r.err, HasSubstr(fragment));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }

  static std::string WriteConfig(const std::string& name,
                                 const std::string& text) {
    const std::string path = cairnd_->dir().path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  static std::string Example(const std::string& name) {
    return *source_dir_ + "/examples/studies/" + name;
  }

  static std::string* bin_dir_;
  static std::string* source_dir_;
  static SuiteCairnd* cairnd_;
};

std::string* CliIntegrationTest::bin_dir_ = nullptr;
std::string* CliIntegrationTest::source_dir_ = nullptr;
SuiteCairnd* CliIntegrationTest::cairnd_ = nullptr;

TEST_F(CliIntegrationTest, MixedStudyRunsToMaxTrials) {
  const std::string name =
      CairnOk({"study", "create", "--config", Example("mixed.yaml"), "--name",
               "it-mixed"});
  ASSERT_THAT(name, MatchesRegex("studies/[0-9]+\n"));
  const std::string study = name.substr(0, name.size() - 1);
  const json spec = CairnJson({"study", "get", "it-mixed"})["spec"];
  const int max_trials = spec["maxTrials"].get<int>();
  ASSERT_EQ(max_trials, 40);

  std::map<int64_t, double> accuracy;  // trial id -> reported final value
  for (int round = 0; round < 100; ++round) {
    const json trials =
        CairnJson({"trial", "suggest", "it-mixed", "--count", "4",
                   "--client-id", "w1", "--json"})["trials"];
    ASSERT_TRUE(trials.is_array());
    if (trials.empty()) break;
    for (const json& t : trials) {
      const int64_t id = Id(t);
      const json p = Params(t);
      ASSERT_TRUE(p["learning_rate"].is_number()) << t;
      EXPECT_GE(p["learning_rate"].get<double>(), 1e-5);
      EXPECT_LE(p["learning_rate"].get<double>(), 0.1);
      ASSERT_TRUE(p["layers"].is_number()) << t;
      EXPECT_GE(p["layers"].get<double>(), 1);
      EXPECT_LE(p["layers"].get<double>(), 4);
      ASSERT_TRUE(p["units"].is_number()) << t;
      EXPECT_THAT((std::set<double>{32, 64, 128, 256}),
                  ::testing::Contains(p["units"].get<double>()));
      ASSERT_TRUE(p["optimizer"].is_string()) << t;
      const std::string opt = p["optimizer"];
      EXPECT_EQ(p.contains("momentum"), opt == "sgd") << t;
      EXPECT_EQ(p.contains("beta2"), opt == "adam") << t;

      const double acc =
          1.0 /
          (1.0 + std::fabs(std::log10(p["learning_rate"].get<double>()) + 3));
      CairnOk({"trial", "report", study, std::to_string(id), "--step", "1",
               "accuracy=" + std::to_string(acc / 2)});
      if (id % 2 == 0) {
        // Final values given on the command line.
        CairnOk({"trial", "complete", study, std::to_string(id),
                 "accuracy=" + std::to_string(acc)});
      } else {
        // No values: the last reported measurement becomes final.
        CairnOk({"trial", "report", study,
                 study + "/trials/" + std::to_string(id), "--step", "2",
                 "--elapsed", "1.5", "accuracy=" + std::to_string(acc)});
        CairnOk({"trial", "complete", study, std::to_string(id)});
      }
      accuracy[id] = std::stod(std::to_string(acc));
    }
  }
  EXPECT_EQ(accuracy.size(), 40u);

  // Done: no trials, exit 0, the reason on stderr and in the reply.
  const CommandResult done =
      Cairn({"trial", "suggest", "it-mixed", "--json", "--count", "2"});
  EXPECT_EQ(done.exit_code, 0);
  const json done_json = json::parse(done.out);
  EXPECT_EQ(done_json["trials"], json::array());
  EXPECT_EQ(done_json["studyState"], "COMPLETED");
  EXPECT_THAT(done_json["message"].get<std::string>(), HasSubstr("40"));
  EXPECT_THAT(done.err, HasSubstr("no trials suggested"));

  const json list = CairnJson({"trial", "list", study, "--json"})["trials"];
  ASSERT_EQ(list.size(), 40u);
  for (const json& t : list) {
    const int64_t id = Id(t);
    EXPECT_EQ(t["state"], "SUCCEEDED") << t;
    ASSERT_TRUE(accuracy.count(id)) << t;
    EXPECT_DOUBLE_EQ(FinalMetric(t, "accuracy"), accuracy[id]);
    EXPECT_EQ(t["finalMeasurement"]["stepCount"], id % 2 == 0 ? "0" : "2") << t;
    EXPECT_EQ(t["clientId"], "w1");
    EXPECT_TRUE(t.contains("startTime"));
    EXPECT_TRUE(t.contains("endTime"));
  }
  // The same trials as CSV: a header, then one row per trial.
  const std::string csv = CairnOk({"trial", "list", study, "--csv"});
  EXPECT_THAT(csv, StartsWith("id,state,learning_rate,"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 41);

  // The best trial is the one with the highest accuracy.
  auto best_it = std::max_element(
      accuracy.begin(), accuracy.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  const json best =
      CairnJson({"study", "best", study, "--json"})["optimalTrials"];
  ASSERT_EQ(best.size(), 1u);
  EXPECT_DOUBLE_EQ(FinalMetric(best[0], "accuracy"), best_it->second);
  const std::string best_text = CairnOk({"study", "best", study});
  EXPECT_THAT(best_text, HasSubstr("accuracy="));
  EXPECT_THAT(best_text, HasSubstr("optimizer="));

  // The learning curve of an odd trial has both reported steps.
  const int64_t odd = accuracy.begin()->first % 2 == 1
                          ? accuracy.begin()->first
                          : std::next(accuracy.begin())->first;
  const json history =
      CairnJson({"trial", "history", study, std::to_string(odd), "accuracy",
                 "--json"})["points"];
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0]["stepCount"], "1");
  EXPECT_EQ(history[1]["stepCount"], "2");
  EXPECT_DOUBLE_EQ(history[1]["value"].get<double>(), accuracy[odd]);
  EXPECT_EQ(history[1]["elapsedDuration"], "1.500s");

  // Human views.
  const std::string table = CairnOk({"trial", "list", study});
  EXPECT_THAT(table, StartsWith("ID"));
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 41);
  const std::string studies = CairnOk({"study", "list"});
  EXPECT_THAT(studies, HasSubstr("it-mixed"));
  EXPECT_THAT(studies, HasSubstr("40/40"));
  const json study_json = CairnJson({"study", "list", "--json"})["studies"];
  bool found = false;
  for (const json& s : study_json) found |= s["displayName"] == "it-mixed";
  EXPECT_TRUE(found);

  // Completing twice is a wrong state.
  ExpectError({"trial", "complete", study, std::to_string(odd), "accuracy=1"},
              "FAILED_PRECONDITION: ");

  // Delete: then it is gone.
  EXPECT_EQ(CairnOk({"study", "delete", "it-mixed"}),
            "deleted " + study + "\n");
  ExpectError({"study", "get", study}, "NOT_FOUND: ");
  ExpectError({"trial", "list", "it-mixed"}, "NOT_FOUND: ");
}

TEST_F(CliIntegrationTest, BraninDefaultNameAndTrialLifecycle) {
  // The display name defaults to the config file's stem.
  const std::string name =
      CairnOk({"study", "create", "--config", Example("branin.yaml")});
  ASSERT_THAT(name, MatchesRegex("studies/[0-9]+\n"));
  const json study = CairnJson({"study", "get", "branin"});
  EXPECT_EQ(study["name"].get<std::string>() + "\n", name);
  EXPECT_EQ(study["spec"]["parameters"].size(), 2u);
  // The same display name again is refused.
  ExpectError({"study", "create", "--config", Example("branin.yaml")},
              "ALREADY_EXISTS: ");

  const json trials = CairnJson(
      {"trial", "suggest", "branin", "--count", "3", "--json"})["trials"];
  ASSERT_EQ(trials.size(), 3u);
  const std::string s = study["name"];
  std::vector<std::string> ids;
  for (const json& t : trials) {
    const double x1 = Params(t)["x1"], x2 = Params(t)["x2"];
    EXPECT_GE(x1, -5);
    EXPECT_LE(x1, 10);
    EXPECT_GE(x2, 0);
    EXPECT_LE(x2, 15);
    ids.push_back(t["id"]);
  }
  const double x1 = Params(trials[0])["x1"];
  const double x2 = Params(trials[0])["x2"];
  const std::string done =
      CairnOk({"trial", "complete", "branin", ids[0], "--step", "010",
               "--elapsed", "90m", "loss=" + std::to_string(Branin(x1, x2))});
  EXPECT_THAT(done, StartsWith(s + "/trials/" + ids[0] + " SUCCEEDED loss="));

  // Metric not in the spec.
  ExpectError({"trial", "complete", "branin", ids[1], "accuracy=0.5"},
              "INVALID_ARGUMENT: ");

  // Infeasible with a reason.
  CairnOk({"trial", "complete", "branin", ids[1], "--infeasible", "diverged"});
  // Stop asks the trial to stop.
  EXPECT_THAT(CairnOk({"trial", "stop", "branin", ids[2]}),
              HasSubstr("STOPPING"));

  const json list = CairnJson({"trial", "list", "branin", "--json"})["trials"];
  ASSERT_EQ(list.size(), 3u);
  std::map<std::string, json> by_id;
  for (const json& t : list) by_id[t["id"]] = t;
  EXPECT_EQ(by_id[ids[0]]["state"], "SUCCEEDED");
  // Decimal (not octal 8), and a duration where seconds go.
  EXPECT_EQ(by_id[ids[0]]["finalMeasurement"]["stepCount"], "10");
  EXPECT_EQ(by_id[ids[0]]["finalMeasurement"]["elapsedDuration"], "5400s");
  EXPECT_EQ(by_id[ids[1]]["state"], "INFEASIBLE");
  EXPECT_EQ(by_id[ids[1]]["infeasibleReason"], "diverged");
  EXPECT_EQ(by_id[ids[2]]["state"], "STOPPING");

  // trial get: the same shape as each trial of trial list.
  const json got = CairnJson({"trial", "get", "branin", ids[0], "--json"});
  EXPECT_EQ(got["state"], "SUCCEEDED");
  EXPECT_EQ(got["parameters"].size(), 2u);
  EXPECT_EQ(got["id"], ids[0]);
  EXPECT_EQ(Params(got), Params(by_id[ids[0]]));
  // study get takes --json too (its output is JSON either way).
  EXPECT_EQ(CairnJson({"study", "get", "branin", "--json"})["spec"],
            study["spec"]);
  // CSV: parameters and final metrics as columns, the reason last.
  const std::string csv = CairnOk({"trial", "list", "branin", "--csv"});
  EXPECT_THAT(csv, StartsWith("id,state,x1,x2,loss,infeasible_reason\r\n"));
  EXPECT_THAT(csv, HasSubstr("\r\n" + ids[1] + ",INFEASIBLE,"));
  EXPECT_THAT(csv, HasSubstr(",,diverged\r\n"));
  EXPECT_THAT(CairnOk({"trial", "get", s, s + "/trials/" + ids[0]}),
              HasSubstr("state: SUCCEEDED"));

  // Paused: no suggestions (exit 0, no trials); resumed: suggestions again.
  EXPECT_EQ(CairnOk({"study", "set-state", "branin", "inactive"}),
            s + " INACTIVE\n");
  const CommandResult paused = Cairn({"trial", "suggest", "branin", "--json"});
  EXPECT_EQ(paused.exit_code, 0);
  EXPECT_EQ(json::parse(paused.out)["trials"], json::array());
  EXPECT_EQ(json::parse(paused.out)["studyState"], "INACTIVE");
  EXPECT_THAT(paused.err, HasSubstr("no trials suggested"));
  EXPECT_EQ(CairnOk({"study", "set-state", s, "ACTIVE"}), s + " ACTIVE\n");
  EXPECT_EQ(
      CairnJson({"trial", "suggest", "branin", "--json"})["trials"].size(), 1u);

  EXPECT_EQ(CairnOk({"study", "delete", s}), "deleted " + s + "\n");
}

TEST_F(CliIntegrationTest, StudyLabelSetsAndRemovesLabelsDurably) {
  std::string s = CairnOk(
      {"study", "create", "--config", Example("branin.yaml"), "--name", "lb"});
  s.pop_back();  // the newline
  EXPECT_EQ(CairnOk({"study", "label", "lb", "team=ml", "owner=ana"}),
            s + " labels: owner=ana team=ml\n");
  EXPECT_EQ(CairnOk({"study", "label", s, "team=cv", "--remove", "owner"}),
            s + " labels: team=cv\n");
  ExpectError({"study", "label", s, "=x"}, "'=x' is not KEY=VALUE");
  ExpectError({"study", "label", s, "a=1", "--remove", "a"},
              "INVALID_ARGUMENT: remove_keys: 'a' is also among");
  std::vector<std::string> many = {"study", "label", s};
  for (int i = 0; i < 64; ++i) many.push_back("k" + std::to_string(i) + "=v");
  ExpectError(many, "labels: the study would have 65 labels; at most 64");
  // The refusals changed nothing, and the change outlives kill -9.
  server().Kill9();
  std::string error;
  ASSERT_TRUE(server().RestartOnSamePort(&error)) << error;
  EXPECT_EQ(CairnJson({"study", "get", s})["spec"]["labels"],
            json({{"team", "cv"}}));
  EXPECT_EQ(CairnOk({"study", "delete", s}), "deleted " + s + "\n");
}

TEST_F(CliIntegrationTest, ParetoFrontForTwoMetrics) {
  const std::string config = WriteConfig("two.json", R"({
    "parameters": [{"parameterId": "x", "type": "DOUBLE",
                    "minValue": 0, "maxValue": 1}],
    "metrics": [{"metricId": "a", "goal": "MAXIMIZE"},
                {"metricId": "b", "goal": "MAXIMIZE"}],
    "algorithm": "RANDOM_SEARCH"
  })");
  const std::string name =
      CairnOk({"study", "create", "--config", config, "--name", "it-pareto"});
  const json trials = CairnJson(
      {"trial", "suggest", "it-pareto", "--count", "3", "--json"})["trials"];
  ASSERT_EQ(trials.size(), 3u);
  const std::vector<std::pair<std::string, std::string>> values = {
      {"1", "1"}, {"2", "0.5"}, {"0.5", "0.5"}};  // the third is dominated
  std::set<int64_t> front;
  for (size_t i = 0; i < 3; ++i) {
    const int64_t id = Id(trials[i]);
    CairnOk({"trial", "complete", "it-pareto", std::to_string(id),
             "a=" + values[i].first, "b=" + values[i].second});
    if (i < 2) front.insert(id);
  }
  const json best =
      CairnJson({"study", "best", "it-pareto", "--json"})["optimalTrials"];
  std::set<int64_t> got;
  for (const json& t : best) got.insert(Id(t));
  EXPECT_EQ(got, front);
}

TEST_F(CliIntegrationTest, BadInputsAreOneLineErrors) {
  // Unknown field in the config: named with the file, before any RPC.
  const std::string typo = WriteConfig(
      "typo.yaml",
      "parameters:\n  - parameter_id: x\n    type: DOUBLE\n    min: 0\n");
  ExpectError({"study", "create", "--config", typo},
              typo + ": unknown field \"min\" in parameters[0]");
  // A spec the server rejects: min > max.
  const std::string inverted = WriteConfig("inverted.yaml", R"(
parameters:
  - parameter_id: x
    type: DOUBLE
    min_value: 2
    max_value: 1
metrics: [{metric_id: loss, goal: MINIMIZE}]
)");
  ExpectError({"study", "create", "--config", inverted}, "INVALID_ARGUMENT: ");
  ExpectError({"study", "get", "no-such-study"}, "NOT_FOUND: ");
  ExpectError({"trial", "suggest", "studies/999999", "--json"}, "NOT_FOUND: ");
  ExpectError({"study", "delete", "999999"}, "NOT_FOUND: ");

  const std::string name =
      CairnOk({"study", "create", "--config", Example("branin.yaml"), "--name",
               "it-bad"});
  ExpectError({"trial", "complete", "it-bad", "424242", "loss=1"},
              "NOT_FOUND: ");
  ExpectError({"trial", "report", "it-bad", "1", "--step", "1", "loss=oops"},
              "bad metric \"loss=oops\"");
  // Usage errors exit 2.
  EXPECT_EQ(Cairn({"trial", "report", "it-bad", "1", "loss=1"}).exit_code, 2);
  EXPECT_EQ(Cairn({"study", "frobnicate"}).exit_code, 2);
  CairnOk({"study", "delete", "it-bad"});
}

}  // namespace
