// End to end: a real cairnd on a free loopback port with a temp data dir, and
// the real cairn binary run as child processes, checking stdout, the one-line
// errors and exit codes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Forks and execs argv with stdout/stderr redirected to files. Returns the pid.
pid_t Spawn(const std::vector<std::string>& argv, const fs::path& out,
            const fs::path& err) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

class CliIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    bin_dir_ = new std::string(Env("CAIRN_BIN_DIR", CAIRN_BIN_DIR_FALLBACK));
    source_dir_ =
        new std::string(Env("CAIRN_SOURCE_DIR", CAIRN_SOURCE_DIR_FALLBACK));
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("cairn_cli_it_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    const fs::path port_file = *dir_ / "port";
    server_pid_ =
        Spawn({*bin_dir_ + "/cairnd", "--data-dir", (*dir_ / "data").string(),
               "--listen", "127.0.0.1:0", "--port-file", port_file.string(),
               "--metrics-listen", ""},
              *dir_ / "cairnd.out", *dir_ / "cairnd.log");
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      std::string port = ReadFile(port_file);
      while (!port.empty() && std::isspace(port.back())) port.pop_back();
      if (!port.empty() &&
          port.find_first_not_of("0123456789") == std::string::npos) {
        server_ = new std::string("127.0.0.1:" + port);
        break;
      }
      int status = 0;
      if (::waitpid(server_pid_, &status, WNOHANG) == server_pid_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  static void TearDownTestSuite() {
    if (server_pid_ > 0) {
      ::kill(server_pid_, SIGTERM);
      int status = 0;
      for (int i = 0; i < 500; ++i) {
        if (::waitpid(server_pid_, &status, WNOHANG) == server_pid_) {
          server_pid_ = 0;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (server_pid_ > 0) {
        ::kill(server_pid_, SIGKILL);
        ::waitpid(server_pid_, &status, 0);
      }
    }
    fs::remove_all(*dir_);
  }

  void SetUp() override {
    ASSERT_NE(server_, nullptr) << "cairnd did not start; its log:\n"
                                << ReadFile(*dir_ / "cairnd.log");
  }

  // Runs `cairn --server ADDR args...` and collects its output.
  static Result Cairn(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {*bin_dir_ + "/cairn", "--server",
                                     *server_};
    argv.insert(argv.end(), args.begin(), args.end());
    const fs::path out = *dir_ / "cli.out";
    const fs::path err = *dir_ / "cli.err";
    const pid_t pid = Spawn(argv, out, err);
    int status = 0;
    ::waitpid(pid, &status, 0);
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  // Runs a command that must succeed and returns its stdout.
  static std::string CairnOk(const std::vector<std::string>& args) {
    Result r = Cairn(args);
    EXPECT_EQ(r.code, 0) << args[0] << " " << (args.size() > 1 ? args[1] : "")
                         << ": " << r.err;
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
    const Result r = Cairn(args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("cairn: error: "));
    EXPECT_THAT(r.err, HasSubstr(fragment));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }

  static std::string WriteConfig(const std::string& name,
                                 const std::string& text) {
    const fs::path path = *dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  static std::string Example(const std::string& name) {
    return *source_dir_ + "/examples/studies/" + name;
  }

  static std::string* bin_dir_;
  static std::string* source_dir_;
  static fs::path* dir_;
  static std::string* server_;
  static pid_t server_pid_;
};

std::string* CliIntegrationTest::bin_dir_ = nullptr;
std::string* CliIntegrationTest::source_dir_ = nullptr;
fs::path* CliIntegrationTest::dir_ = nullptr;
std::string* CliIntegrationTest::server_ = nullptr;
pid_t CliIntegrationTest::server_pid_ = 0;

double Branin(double x1, double x2) {
  const double pi = 3.14159265358979323846;
  const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
  return std::pow(x2 - b * x1 * x1 + c * x1 - 6, 2) +
         10 * (1 - t) * std::cos(x1) + 10;
}

TEST_F(CliIntegrationTest, MixedStudyRunsToMaxTrials) {
  const std::string name =
      CairnOk({"study", "create", "--config", Example("mixed.yaml"), "--name",
               "it-mixed"});
  ASSERT_THAT(name, MatchesRegex("studies/[0-9]+\n"));
  const std::string study = name.substr(0, name.size() - 1);
  const json spec = CairnJson({"study", "get", "it-mixed"})["spec"];
  const int max_trials = spec["max_trials"].get<int>();
  ASSERT_EQ(max_trials, 40);

  std::map<int64_t, double> accuracy;  // trial id -> reported final value
  for (int round = 0; round < 100; ++round) {
    const json trials = CairnJson({"trial", "suggest", "it-mixed", "--count",
                                   "4", "--client-id", "w1", "--json"});
    ASSERT_TRUE(trials.is_array());
    if (trials.empty()) break;
    for (const json& t : trials) {
      const int64_t id = t["id"].get<int64_t>();
      const json& p = t["parameters"];
      ASSERT_TRUE(p["learning_rate"].is_number_float()) << t;
      EXPECT_GE(p["learning_rate"].get<double>(), 1e-5);
      EXPECT_LE(p["learning_rate"].get<double>(), 0.1);
      ASSERT_TRUE(p["layers"].is_number_integer()) << t;
      EXPECT_GE(p["layers"].get<int>(), 1);
      EXPECT_LE(p["layers"].get<int>(), 4);
      ASSERT_TRUE(p["units"].is_number_integer()) << t;
      EXPECT_THAT((std::set<int>{32, 64, 128, 256}),
                  ::testing::Contains(p["units"].get<int>()));
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

  // Done: an empty array, exit 0, the reason on stderr.
  const Result done =
      Cairn({"trial", "suggest", "it-mixed", "--json", "--count", "2"});
  EXPECT_EQ(done.code, 0);
  EXPECT_EQ(done.out, "[]\n");
  EXPECT_THAT(done.err, HasSubstr("no trials suggested"));

  const json list = CairnJson({"trial", "list", study, "--json"});
  ASSERT_EQ(list.size(), 40u);
  for (const json& t : list) {
    const int64_t id = t["id"];
    EXPECT_EQ(t["state"], "SUCCEEDED") << t;
    ASSERT_TRUE(accuracy.count(id)) << t;
    EXPECT_DOUBLE_EQ(t["metrics"]["accuracy"].get<double>(), accuracy[id]);
    EXPECT_EQ(t["step"].get<int>(), id % 2 == 0 ? 0 : 2) << t;
    EXPECT_EQ(t["client_id"], "w1");
    EXPECT_TRUE(t.contains("start_time"));
    EXPECT_TRUE(t.contains("end_time"));
  }

  // The best trial is the one with the highest accuracy.
  auto best_it = std::max_element(
      accuracy.begin(), accuracy.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  const json best = CairnJson({"study", "best", study, "--json"});
  ASSERT_EQ(best.size(), 1u);
  EXPECT_DOUBLE_EQ(best[0]["metrics"]["accuracy"].get<double>(),
                   best_it->second);
  const std::string best_text = CairnOk({"study", "best", study});
  EXPECT_THAT(best_text, HasSubstr("accuracy="));
  EXPECT_THAT(best_text, HasSubstr("optimizer="));

  // The learning curve of an odd trial has both reported steps.
  const int64_t odd = accuracy.begin()->first % 2 == 1
                          ? accuracy.begin()->first
                          : std::next(accuracy.begin())->first;
  const json history = CairnJson(
      {"trial", "history", study, std::to_string(odd), "accuracy", "--json"});
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0]["step"], 1);
  EXPECT_EQ(history[1]["step"], 2);
  EXPECT_DOUBLE_EQ(history[1]["value"].get<double>(), accuracy[odd]);
  EXPECT_DOUBLE_EQ(history[1]["elapsed_seconds"].get<double>(), 1.5);

  // Human views.
  const std::string table = CairnOk({"trial", "list", study});
  EXPECT_THAT(table, StartsWith("ID"));
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 41);
  const std::string studies = CairnOk({"study", "list"});
  EXPECT_THAT(studies, HasSubstr("it-mixed"));
  EXPECT_THAT(studies, HasSubstr("40/40"));
  const json study_json = CairnJson({"study", "list", "--json"});
  bool found = false;
  for (const json& s : study_json) found |= s["display_name"] == "it-mixed";
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

  const json trials =
      CairnJson({"trial", "suggest", "branin", "--count", "3", "--json"});
  ASSERT_EQ(trials.size(), 3u);
  const std::string s = study["name"];
  std::vector<std::string> ids;
  for (const json& t : trials) {
    const double x1 = t["parameters"]["x1"], x2 = t["parameters"]["x2"];
    EXPECT_GE(x1, -5);
    EXPECT_LE(x1, 10);
    EXPECT_GE(x2, 0);
    EXPECT_LE(x2, 15);
    ids.push_back(std::to_string(t["id"].get<int64_t>()));
  }
  const double x1 = trials[0]["parameters"]["x1"];
  const double x2 = trials[0]["parameters"]["x2"];
  const std::string done =
      CairnOk({"trial", "complete", "branin", ids[0], "--step", "5",
               "loss=" + std::to_string(Branin(x1, x2))});
  EXPECT_THAT(done, StartsWith(s + "/trials/" + ids[0] + " SUCCEEDED loss="));

  // Metric not in the spec.
  ExpectError({"trial", "complete", "branin", ids[1], "accuracy=0.5"},
              "INVALID_ARGUMENT: ");

  // Infeasible with a reason.
  CairnOk({"trial", "complete", "branin", ids[1], "--infeasible", "diverged"});
  // Stop asks the trial to stop.
  EXPECT_THAT(CairnOk({"trial", "stop", "branin", ids[2]}),
              HasSubstr("STOPPING"));

  const json list = CairnJson({"trial", "list", "branin", "--json"});
  ASSERT_EQ(list.size(), 3u);
  std::map<std::string, json> by_id;
  for (const json& t : list) by_id[std::to_string(t["id"].get<int64_t>())] = t;
  EXPECT_EQ(by_id[ids[0]]["state"], "SUCCEEDED");
  EXPECT_EQ(by_id[ids[0]]["step"], 5);
  EXPECT_EQ(by_id[ids[1]]["state"], "INFEASIBLE");
  EXPECT_EQ(by_id[ids[1]]["infeasible_reason"], "diverged");
  EXPECT_EQ(by_id[ids[2]]["state"], "STOPPING");

  // trial get: the full proto, with parameter values.
  const json got = CairnJson({"trial", "get", "branin", ids[0], "--json"});
  EXPECT_EQ(got["state"], "SUCCEEDED");
  EXPECT_EQ(got["parameters"].size(), 2u);
  EXPECT_THAT(CairnOk({"trial", "get", s, s + "/trials/" + ids[0]}),
              HasSubstr("state: SUCCEEDED"));

  // Paused: no suggestions (exit 0, empty array); resumed: suggestions again.
  EXPECT_EQ(CairnOk({"study", "set-state", "branin", "inactive"}),
            s + " INACTIVE\n");
  const Result paused = Cairn({"trial", "suggest", "branin", "--json"});
  EXPECT_EQ(paused.code, 0);
  EXPECT_EQ(paused.out, "[]\n");
  EXPECT_THAT(paused.err, HasSubstr("no trials suggested"));
  EXPECT_EQ(CairnOk({"study", "set-state", s, "ACTIVE"}), s + " ACTIVE\n");
  EXPECT_EQ(CairnJson({"trial", "suggest", "branin", "--json"}).size(), 1u);

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
  const json trials =
      CairnJson({"trial", "suggest", "it-pareto", "--count", "3", "--json"});
  ASSERT_EQ(trials.size(), 3u);
  const std::vector<std::pair<std::string, std::string>> values = {
      {"1", "1"}, {"2", "0.5"}, {"0.5", "0.5"}};  // the third is dominated
  std::set<int64_t> front;
  for (size_t i = 0; i < 3; ++i) {
    const int64_t id = trials[i]["id"];
    CairnOk({"trial", "complete", "it-pareto", std::to_string(id),
             "a=" + values[i].first, "b=" + values[i].second});
    if (i < 2) front.insert(id);
  }
  const json best = CairnJson({"study", "best", "it-pareto", "--json"});
  std::set<int64_t> got;
  for (const json& t : best) got.insert(t["id"].get<int64_t>());
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
  EXPECT_EQ(Cairn({"trial", "report", "it-bad", "1", "loss=1"}).code, 2);
  EXPECT_EQ(Cairn({"study", "frobnicate"}).code, 2);
  CairnOk({"study", "delete", "it-bad"});
}

}  // namespace
