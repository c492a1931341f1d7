// AI Platform jobs end to end: a real cairnd on loopback and the cairn CLI
// submit the example trainer package (examples/aiplatform) as a tuning job
// and as a plain job, read them back with describe --json and list, refuse
// bad ids and packages without storing anything, cancel a running job, and
// keep every job across a kill -9 of cairnd; resumePreviousJobId continues
// a job's study; scheduling.maxRunningTime cancels the whole job; a
// relative --job-dir or jobDir lies in the jobs root.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/test_util.h"

namespace cairn::testing {
namespace {

using nlohmann::json;

const std::string kExample =
    std::string(CAIRN_SOURCE_DIR) + "/examples/aiplatform";

class JobsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cairnd_ = std::make_unique<CairndProcess>(dir_.path() + "/data");
    std::string error;
    ASSERT_TRUE(cairnd_->Start(&error)) << error;
  }

  CommandResult Cairn(std::vector<std::string> args) {
    args.insert(args.begin(),
                {BinDir() + "/cairn", "--server", cairnd_->address()});
    return RunCommand(args);
  }

  CommandResult Submit(const std::string& id, const std::string& config,
                       std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"jobs",           "submit",
                                     "training",       id,
                                     "--module-name",  "trainer.task",
                                     "--package-path", kExample + "/trainer"};
    if (!config.empty()) {
      args.push_back("--config");
      args.push_back(kExample + "/" + config);
    }
    args.insert(args.end(), more.begin(), more.end());
    return Cairn(args);
  }

  json Describe(const std::string& id) {
    CommandResult r = Cairn({"jobs", "describe", id, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  TempDir dir_;
  std::unique_ptr<CairndProcess> cairnd_;
};

TEST_F(JobsCliTest, TuningJobPlainJobAndDescribe) {
  CommandResult r =
      Submit("tune1", "hptuning_config.yaml",
             {"--stream-logs", "--labels", "owner=ci", "--", "--steps", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Job [tune1] submitted successfully."),
            std::string::npos);
  EXPECT_NE(r.out.find("[trial 1] step 3 accuracy"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("ignored on one machine: trainingInput.region"),
            std::string::npos);
  json job = Describe("tune1");
  EXPECT_EQ(job["jobId"], "tune1");
  EXPECT_EQ(job["state"], "SUCCEEDED");
  EXPECT_EQ(job["labels"]["team"], "vision");
  EXPECT_EQ(job["labels"]["owner"], "ci");
  for (const char* t : {"createTime", "startTime", "endTime"}) {
    EXPECT_TRUE(job.contains(t)) << t;
  }
  EXPECT_EQ(job["trainingInput"]["hyperparameters"]["maxTrials"], 4);
  const json& out = job["trainingOutput"];
  EXPECT_EQ(out["completedTrialCount"], "4");  // int64: a string in JSON.
  EXPECT_EQ(out["isHyperparameterTuningJob"], true);
  EXPECT_EQ(out["hyperparameterMetricTag"], "accuracy");
  ASSERT_EQ(out["trials"].size(), 4u);
  for (const json& t : out["trials"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED");
    EXPECT_EQ(t["finalMetric"]["trainingStep"], "3");
    EXPECT_TRUE(t["finalMetric"].contains("objectiveValue"));
    EXPECT_EQ(t["allMetrics"].size(), 3u);
    EXPECT_EQ(t["hyperparameters"].size(), 4u);
    EXPECT_TRUE(t.contains("startTime") && t.contains("endTime"));
    // Per-trial job dir: <jobs-root>/tune1/<trial id>.
    EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/data/jobs/tune1/" +
                                        t["trialId"].get<std::string>() +
                                        "/model.txt"));
  }

  // The text view: objectives with 6 significant digits, best (MAXIMIZE)
  // first and marked.
  double best = -1;
  for (const json& t : out["trials"]) {
    best = std::max(best, t["finalMetric"]["objectiveValue"].get<double>());
  }
  r = Cairn({"jobs", "describe", "tune1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TRIAL  STATE      OBJECTIVE  STEP  HYPERPARAMETERS"),
            std::string::npos)
      << r.out;
  char best_text[32];
  std::snprintf(best_text, sizeof(best_text), "%.6g", best);
  const size_t header = r.out.find("TRIAL ");
  const std::string first_row =
      r.out.substr(r.out.find('\n', header) + 1,
                   r.out.find('\n', r.out.find('\n', header) + 1) -
                       r.out.find('\n', header) - 1);
  EXPECT_NE(first_row.find(absl::StrCat("SUCCEEDED  ", best_text)),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(absl::EndsWith(first_row, "  best")) << r.out;
  EXPECT_EQ(r.out.find("best\n"), r.out.rfind("best\n")) << r.out;

  r = Submit("plain1", "training_config.yaml", {"--stream-logs"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  job = Describe("plain1");
  EXPECT_EQ(job["state"], "SUCCEEDED");
  EXPECT_EQ(job["trainingOutput"]["completedTrialCount"], "1");
  EXPECT_FALSE(job["trainingOutput"].contains("trials"));
  EXPECT_TRUE(
      std::filesystem::exists(dir_.path() + "/data/jobs/plain1/model.txt"));

  r = Cairn({"jobs", "list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json list = json::parse(r.out);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["jobId"], "plain1");
  r = Cairn({"jobs", "list", "--filter", "state=RUNNING"});
  EXPECT_EQ(r.out.find("tune1"), std::string::npos);
  r = Cairn({"jobs", "list", "--json", "--filter",
             "jobId:plain* AND state:SUCCEEDED"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  list = json::parse(r.out);
  ASSERT_EQ(list.size(), 1u) << r.out;
  EXPECT_EQ(list[0]["jobId"], "plain1");
  r = Cairn({"jobs", "list", "--filter", "createTime>1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(r.err, "--filter: \"createTime>1\"")) << r.err;

  // The job's study is a study like any other.
  r = Cairn({"study", "get", "tune1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // resumePreviousJobId: tune1's trials are prior data; 2 new trials run.
  const std::string cfg = dir_.path() + "/resume.yaml";
  {
    std::ifstream in(kExample + "/hptuning_config.yaml");
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    s.replace(s.find("maxTrials: 4"), 12,
              "maxTrials: 2\n    resumePreviousJobId: tune1");
    std::ofstream(cfg) << s;
  }
  r = Cairn({"jobs", "submit", "training", "tune2", "--config", cfg,
             "--module-name", "trainer.task", "--package-path",
             kExample + "/trainer", "--stream-logs", "--", "--steps", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  job = Describe("tune2");
  EXPECT_EQ(job["state"], "SUCCEEDED");
  EXPECT_EQ(job["trainingOutput"]["trials"].size(), 2u);  // Its own only.
  r = Cairn({"study", "get", "tune2"});
  EXPECT_NE(r.out.find("\"trialCount\": 6"), std::string::npos) << r.out;
}

// The "trainer: env {...}" line a replica of the example trainer printed
// into `log` (TF_CONFIG parsed), or null.
json ReplicaEnv(const std::string& log) {
  std::ifstream in(log);
  const std::string prefix = "trainer: env ";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    json env = json::parse(line.substr(prefix.size()));
    env["TF_CONFIG"] = json::parse(env["TF_CONFIG"].get<std::string>());
    return env;
  }
  return nullptr;
}

// The unchanged CUSTOM tuning config (master + 2 workers + 1 parameter
// server, 2 trials at once): every trial is four processes, each with its
// own task in its trial's one cluster.
// Learning rates above 0.5 overshoot (the trainer's x *= 1 - 2 * lr), so the
// last grid points are worse at every step and the median rule stops them.
TEST_F(JobsCliTest, DescribeAndTrialGetShowTheEarlyStoppingReason) {
  const std::string config = dir_.path() + "/early.yaml";
  std::ofstream(config) << R"(trainingInput:
  hyperparameters:
    goal: MAXIMIZE
    hyperparameterMetricTag: accuracy
    maxTrials: 6
    maxParallelTrials: 1
    enableTrialEarlyStopping: TRUE
    algorithm: GRID_SEARCH
    params:
    - parameterName: learning_rate
      type: DISCRETE
      discreteValues: [0.3, 0.5, 0.8, 0.9, 0.95, 0.99]
)";
  CommandResult r = Cairn(
      {"jobs", "submit", "training", "early1", "--module-name", "trainer.task",
       "--package-path", kExample + "/trainer", "--config", config,
       "--stream-logs", "--", "--steps", "6", "--sleep", "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Cairn({"jobs", "describe", "early1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string last_row;
  for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
    if (absl::StrContains(line, "learning_rate=0.99"))
      last_row = std::string(line);
  }
  EXPECT_NE(last_row.find("  stopped early: median rule: best accuracy"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("best\n"), r.out.rfind("best\n")) << r.out;
  EXPECT_NE(
      r.out.find(
          "2      SUCCEEDED  0.979      6     learning_rate=0.5   best\n"),
      std::string::npos)
      << r.out;

  r = Cairn({"trial", "get", "early1", "6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stopped_early: true\n"
                       "early_stopping_reason: median rule: best accuracy"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nattempts: 1\nexit_code: "), std::string::npos)
      << r.out;
}

TEST_F(JobsCliTest, CustomTierRunsEveryReplicaWithOneCluster) {
  CommandResult r =
      Submit("dist1", "distributed_config.yaml",
             {"--stream-logs", "--", "--steps", "8", "--sleep", "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json job = Describe("dist1");
  EXPECT_EQ(job["state"], "SUCCEEDED") << job.dump();
  const json& trials = job["trainingOutput"]["trials"];
  ASSERT_EQ(trials.size(), 2u) << job.dump();
  std::vector<json> clusters;
  for (const json& trial : trials) {
    const std::string id = trial["trialId"];
    EXPECT_EQ(trial["state"], "SUCCEEDED");
    EXPECT_EQ(trial["finalMetric"]["trainingStep"], "8");
    // --stream-logs followed every replica's log, each line prefixed.
    for (const char* replica : {"master-replica-0", "worker-replica-0",
                                "worker-replica-1", "ps-replica-0"}) {
      EXPECT_NE(r.out.find(absl::StrCat("[trial ", id, " ", replica,
                                        "] trainer: env")),
                std::string::npos)
          << replica << "\n"
          << r.out;
    }
    const std::string dir = dir_.path() + "/data/jobs/dist1/" + id + "/";
    const std::vector<std::pair<std::string, std::string>> replicas = {
        {"job.log", "master/0"},
        {"worker-replica-0.log", "worker/0"},
        {"worker-replica-1.log", "worker/1"},
        {"ps-replica-0.log", "ps/0"}};
    json cluster;
    for (const auto& [log, task] : replicas) {
      const json env = ReplicaEnv(dir + log);
      ASSERT_FALSE(env.is_null()) << dir << log;
      const json& tf = env["TF_CONFIG"];
      EXPECT_EQ(absl::StrCat(tf["task"]["type"].get<std::string>(), "/",
                             tf["task"]["index"].get<int>()),
                task);
      EXPECT_EQ(tf["task"]["trial"], id);
      EXPECT_EQ(tf["environment"], "cloud");
      EXPECT_EQ(tf["job"]["scaleTier"], "CUSTOM") << tf.dump();
      EXPECT_EQ(env["CLOUD_ML_JOB_ID"], "dist1");
      if (cluster.is_null()) cluster = tf["cluster"];
      EXPECT_EQ(tf["cluster"], cluster) << log;  // One cluster per trial.
    }
    EXPECT_EQ(cluster["master"].size(), 1u);
    EXPECT_EQ(cluster["worker"].size(), 2u);
    EXPECT_EQ(cluster["ps"].size(), 1u);
    clusters.push_back(cluster);
  }
  // Two trials at once: each trial's replicas have their own ports.
  EXPECT_NE(clusters[0], clusters[1]);
}

TEST_F(JobsCliTest, RefusalsStoreNothing) {
  CommandResult r = Submit("1bad", "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("must start with a letter"), std::string::npos) << r.err;
  r = Cairn({"jobs", "submit", "training", "nopkg", "--module-name",
             "trainer.nope", "--package-path", kExample + "/trainer"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("module 'trainer.nope' is not in the training package"),
            std::string::npos)
      << r.err;
  r = Cairn({"jobs", "submit", "training", "nodir", "--module-name", "m",
             "--package-path", dir_.path() + "/missing"});
  EXPECT_NE(r.err.find("--package-path"), std::string::npos) << r.err;
  const std::string bad = dir_.path() + "/bad.yaml";
  std::ofstream(bad) << "trainingInput:\n  scaleTier: BASIC\n  regin: x\n";
  r = Cairn({"jobs", "submit", "training", "badcfg", "--config", bad,
             "--module-name", "trainer.task", "--package-path",
             kExample + "/trainer"});
  EXPECT_NE(r.err.find("unknown field \"trainingInput.regin\""),
            std::string::npos)
      << r.err;
  r = Cairn({"jobs", "list", "--json"});
  EXPECT_EQ(json::parse(r.out).size(), 0u) << r.out;
  EXPECT_FALSE(
      std::filesystem::exists(dir_.path() + "/data/jobs/nopkg.package"));
  ASSERT_EQ(Submit("dup", "training_config.yaml").exit_code, 0);
  r = Submit("dup", "training_config.yaml");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("already in use"), std::string::npos) << r.err;
}

TEST_F(JobsCliTest, RelativeJobDirResolvesInTheJobsRoot) {
  // Relative to cairnd's jobs root, never to the CLI's working directory.
  CommandResult r = Submit("sgd1", "training_config.yaml",
                           {"--job-dir", "sgd_1", "--stream-logs"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/data/jobs/sgd_1/job.log"))
      << r.out;
  EXPECT_EQ(Describe("sgd1")["trainingInput"]["jobDir"], "sgd_1");
  // Outside the jobs root: the error names what the user wrote.
  r = Submit("esc1", "training_config.yaml", {"--job-dir", "../../escape"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--job-dir: '../../escape' resolves to"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("job_template"), std::string::npos) << r.err;
  const std::string config = dir_.path() + "/escape.yaml";
  std::ofstream(config) << "trainingInput:\n  jobDir: ../escape\n";
  r = Cairn({"jobs", "submit", "training", "esc2", "--config", config,
             "--module-name", "trainer.task", "--package-path",
             kExample + "/trainer"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trainingInput.jobDir: '../escape' resolves to"),
            std::string::npos)
      << r.err;
  r = Cairn({"jobs", "list", "--json"});
  EXPECT_EQ(json::parse(r.out).size(), 1u) << r.out;
}

// cairnd puts its Python SDK on every job's PYTHONPATH (CAIRN_PYTHON_SDK):
// a trainer package without the SDK in it reports through cairn.job.
TEST_F(JobsCliTest, TrainerImportsCairnJobWithNoPackaging) {
  const std::string pkg = dir_.path() + "/sdkpkg/trainer";
  std::filesystem::create_directories(pkg);
  std::ofstream(pkg + "/__init__.py") << "";
  std::ofstream(pkg + "/task.py")
      << "import os\nimport cairn\nimport cairn.job\n"
         "sdk = os.environ['CAIRN_PYTHON_SDK']\n"
         "assert os.path.dirname(os.path.dirname(cairn.__file__)) == sdk\n"
         "assert os.environ['PYTHONPATH'].split(':')[0] == sdk\n"
         "x = cairn.job.parameters()['x']\n"
         "for step in (1, 2):\n"
         "    cairn.job.report(step, accuracy=x * step)\n"
         "cairn.job.complete(accuracy=2 * x)\n";
  const std::string config = dir_.path() + "/sdk.yaml";
  std::ofstream(config) << "trainingInput:\n  hyperparameters:\n"
                           "    goal: MAXIMIZE\n"
                           "    hyperparameterMetricTag: accuracy\n"
                           "    maxTrials: 1\n    params:\n"
                           "    - {parameterName: x, type: DOUBLE, "
                           "minValue: 0.1, maxValue: 0.4}\n";
  CommandResult r = Cairn({"jobs", "submit", "training", "sdk1", "--config",
                           config, "--module-name", "trainer.task",
                           "--package-path", pkg, "--stream-logs"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json job = Describe("sdk1");
  EXPECT_EQ(job["state"], "SUCCEEDED") << job.dump() << r.out;
  const json& t = job["trainingOutput"]["trials"][0];
  const double x = std::stod(t["hyperparameters"]["x"].get<std::string>());
  EXPECT_DOUBLE_EQ(t["finalMetric"]["objectiveValue"].get<double>(), 2 * x)
      << job.dump();
}

TEST_F(JobsCliTest, CancelAndKill9) {
  ASSERT_EQ(
      Submit("slow", "", {"--", "--steps", "200", "--sleep", "0.1"}).exit_code,
      0);
  ASSERT_EQ(Submit("done", "training_config.yaml", {"--stream-logs"}).exit_code,
            0);
  cairnd_->Kill9();
  std::string error;
  ASSERT_TRUE(cairnd_->RestartOnSamePort(&error)) << error;
  EXPECT_EQ(Describe("done")["state"], "SUCCEEDED");
  EXPECT_EQ(Describe("slow")["state"], "RUNNING");
  CommandResult r = Cairn({"jobs", "cancel", "slow"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cairn({"jobs", "stream-logs", "slow"});
  EXPECT_EQ(r.exit_code, 1);  // It ended CANCELLED.
  json job = Describe("slow");
  EXPECT_EQ(job["state"], "CANCELLED");
  EXPECT_TRUE(job.contains("errorMessage"));
  EXPECT_TRUE(job.contains("endTime"));
  r = Cairn({"jobs", "cancel", "slow"});
  EXPECT_EQ(r.exit_code, 1);
}

// Three trials one after another, each about 2.6 s: no attempt is longer
// than maxRunningTime (4s), the whole job (about 8 s) is, and it is
// cancelled within the second after 4 s (with a per-attempt limit it would
// have succeeded).
TEST_F(JobsCliTest, MaxRunningTimeCancelsTheWholeJob) {
  const std::string config = dir_.path() + "/limited.yaml";
  std::ofstream(config) << R"(trainingInput:
  scheduling: {maxRunningTime: 4s}
  hyperparameters:
    goal: MAXIMIZE
    hyperparameterMetricTag: accuracy
    maxTrials: 3
    maxParallelTrials: 1
    params:
    - {parameterName: learning_rate, type: DOUBLE, minValue: 0.01, maxValue: 0.1}
)";
  CommandResult r =
      Cairn({"jobs", "submit", "training", "limited", "--config", config,
             "--module-name", "trainer.task", "--package-path",
             kExample + "/trainer", "--", "--steps", "25", "--sleep", "0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json job;
  for (int i = 0; i < 150; ++i) {
    job = Describe("limited");
    if (job["state"] == "CANCELLED") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_EQ(job["state"], "CANCELLED") << job.dump();
  EXPECT_EQ(job["errorMessage"],
            "the job ran longer than scheduling.maxRunningTime (4s)");
  // Cut short: not every trial succeeded.
  EXPECT_NE(job["trainingOutput"].value("completedTrialCount", "0"), "3");
  std::ofstream(config) << "trainingInput:\n  scheduling: {maxWaitTime: 60s}\n";
  r = Cairn({"jobs", "submit", "training", "badwait", "--config", config,
             "--module-name", "trainer.task", "--package-path",
             kExample + "/trainer"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trainingInput.scheduling.maxWaitTime: 60s is less "
                       "than 1800s"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace cairn::testing
