// End-to-end tests of the cairn-train binary ($CAIRN_BIN_DIR/cairn-train):
// SIGKILL-and-resume determinism, SIGTERM, corrupt checkpoints, export and
// predict, reporting and command-line errors.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "absl/strings/str_split.h"
#include "tests/testing/child_process.h"
#include "tests/testing/test_util.h"
#include "tests/trainer/test_util.h"
#include "trainer/checkpoint.h"

namespace cairn::trainer {
namespace {

using ::cairn::testing::TempDir;
using ::cairn::trainer::testing::BlobsCsv;
using ::cairn::trainer::testing::ReadText;
using ::cairn::trainer::testing::WriteText;

std::string Binary() {
  const char* dir = std::getenv("CAIRN_BIN_DIR");
  return std::string(dir ? dir : "build/bin") + "/cairn-train";
}

// A child process of cairn-train with stdout/stderr captured in files.
class Child : public ::cairn::testing::ChildProcess {
 public:
  Child(const std::vector<std::string>& args, const std::string& out_prefix,
        const std::vector<std::string>& env = {})
      : ChildProcess(Binary(), args, out_prefix, env) {}
};

struct Result {
  int code;
  std::string out, err;
};

Result RunBinary(const std::vector<std::string>& args,
                 const std::string& prefix,
                 const std::vector<std::string>& env = {}) {
  Child c(args, prefix, env);
  Result r;
  r.code = c.Wait();
  r.out = c.Stdout();
  r.err = c.Stderr();
  return r;
}

std::string LastLine(const std::string& text) {
  std::vector<std::string> lines =
      absl::StrSplit(text, '\n', absl::SkipEmpty());
  return lines.empty() ? "" : lines.back();
}

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// Highest checkpoint step in dir, or -1.
int64_t NewestStep(const std::string& dir) {
  std::vector<std::string> files = CheckpointManager(dir, 100).List();
  if (files.empty()) return -1;
  const std::string& f = files.back();
  return std::atoll(f.substr(f.rfind("ckpt-") + 5).c_str());
}

// Polls until NewestStep(dir) > after (or the timeout passes).
bool WaitForCheckpoint(const std::string& dir, int64_t after) {
  for (int i = 0; i < 2000; ++i) {
    if (NewestStep(dir) > after) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

class E2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_dir_ = new TempDir();
    dir_ = new std::string(temp_dir_->path());
    WriteText(*dir_ + "/train.csv", BlobsCsv(600, 8, 1, /*header=*/true));
    WriteText(*dir_ + "/test.csv", BlobsCsv(90, 8, 2, /*header=*/true));
    const Result r = RunBinary(Args(*dir_ + "/ref"), *dir_ + "/ref");
    ASSERT_EQ(r.code, 0) << r.err;
    ref_weights_ = new std::string(ReadText(*dir_ + "/ref/model/weights.bin"));
    ref_final_ = new std::string(LastLine(r.out));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete temp_dir_;
    delete ref_weights_;
    delete ref_final_;
  }

  // Training arguments of every deterministic run: dropout on, and batches
  // of 32 rows on 2 threads, so each step runs two shards.
  static std::vector<std::string> Args(const std::string& job_dir) {
    return {"--train=" + *dir_ + "/train.csv",
            "--label=label",
            "--epochs=6",
            "--hidden_units=16,16",
            "--batch_size=32",
            "--dropout=0.2",
            "--learning_rate=0.01",
            "--weight_decay=0.001",
            "--seed=3",
            "--threads=2",
            "--checkpoint-every=5",
            "--keep-checkpoints=3",
            "--backend=cpu",
            "--job-dir=" + job_dir};
  }

  static TempDir* temp_dir_;
  static std::string* dir_;
  static std::string* ref_weights_;
  static std::string* ref_final_;
};

TempDir* E2eTest::temp_dir_ = nullptr;
std::string* E2eTest::dir_ = nullptr;
std::string* E2eTest::ref_weights_ = nullptr;
std::string* E2eTest::ref_final_ = nullptr;

const std::vector<std::string> kSlow = {"CAIRN_TRAIN_TEST_STEP_SLEEP_US=4000"};

TEST_F(E2eTest, ReferenceRunReportsAndLearns) {
  nlohmann::json j = nlohmann::json::parse(*ref_final_);
  EXPECT_EQ(j["epochs"], 6);
  EXPECT_EQ(j["global_step"], 6 * 15);  // 480 rows / 32.
  EXPECT_GT(j["val_accuracy"].get<double>(), 0.9);
  EXPECT_LT(j["val_loss"].get<double>(), j["train_loss"].get<double>() + 1.0);
  EXPECT_FALSE(ref_weights_->empty());
}

TEST_F(E2eTest, SigkillAtAnyPointThenResumeIsBitIdentical) {
  const std::string job = *dir_ + "/killed";
  int64_t seen = -1;
  // Kill twice: right after the first checkpoint, then after a later one
  // plus a little more progress (mid-interval), then run to the end.
  for (int round = 0; round < 2; ++round) {
    Child c(Args(job), job + ".run", kSlow);
    ASSERT_TRUE(WaitForCheckpoint(job, seen)) << c.Stderr();
    if (round == 1) std::this_thread::sleep_for(std::chrono::milliseconds(37));
    c.Kill(SIGKILL);
    EXPECT_EQ(c.Wait(), 128 + SIGKILL);
    seen = NewestStep(job);
    ASSERT_FALSE(Exists(job + "/model/weights.bin"))
        << "run finished before the kill";
  }
  EXPECT_GT(seen, 0);
  const Result r = RunBinary(Args(job), job + ".final");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("resumed at step"), std::string::npos) << r.err;
  EXPECT_EQ(ReadText(job + "/model/weights.bin"), *ref_weights_);
  EXPECT_EQ(LastLine(r.out), *ref_final_);
  EXPECT_LE(CheckpointManager(job, 100).List().size(), 3u);
}

TEST_F(E2eTest, SigtermWritesCheckpointAndExits143) {
  const std::string job = *dir_ + "/term";
  Child c(Args(job), job + ".run", kSlow);
  ASSERT_TRUE(WaitForCheckpoint(job, -1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto t0 = std::chrono::steady_clock::now();
  c.Kill(SIGTERM);
  EXPECT_EQ(c.Wait(), 143);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_NE(c.Stderr().find("stopped by signal 15"), std::string::npos)
      << c.Stderr();
  const int64_t at = NewestStep(job);
  EXPECT_GT(at, 0);
  const Result r = RunBinary(Args(job), job + ".final");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(ReadText(job + "/model/weights.bin"), *ref_weights_);
}

TEST_F(E2eTest, CorruptNewestCheckpointIsSkipped) {
  const std::string job = *dir_ + "/corrupt";
  Child c(Args(job), job + ".run", kSlow);
  ASSERT_TRUE(WaitForCheckpoint(job, 20));
  c.Kill(SIGKILL);
  c.Wait();
  std::vector<std::string> files = CheckpointManager(job, 100).List();
  ASSERT_GE(files.size(), 2u);
  std::string bytes = ReadText(files.back());
  bytes[bytes.size() / 2] ^= 0x10;
  WriteText(files.back(), bytes);
  const Result r = RunBinary(Args(job), job + ".final");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("skipping checkpoint"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("checksum mismatch"), std::string::npos) << r.err;
  EXPECT_EQ(ReadText(job + "/model/weights.bin"), *ref_weights_);
}

TEST_F(E2eTest, DifferentArgumentsRefuseForeignCheckpoint) {
  std::vector<std::string> args = Args(*dir_ + "/ref");
  ASSERT_EQ(args[6], "--learning_rate=0.01");
  args[6] = "--learning_rate=0.02";
  const Result r = RunBinary(args, *dir_ + "/foreign");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("different run"), std::string::npos) << r.err;
}

TEST_F(E2eTest, ExportAndPredictRoundTrip) {
  const std::string model = *dir_ + "/ref/model";
  nlohmann::json m = nlohmann::json::parse(ReadText(model + "/model.json"));
  EXPECT_EQ(m["task"], "classification");
  EXPECT_EQ(m["layer_sizes"], nlohmann::json({8, 16, 16, 3}));
  EXPECT_EQ(m["activation"], "relu");
  EXPECT_EQ(m["label_classes"], nlohmann::json({"0", "1", "2"}));
  EXPECT_EQ(m["feature_names"][0], "x0");
  EXPECT_EQ(m["label_name"], "label");
  EXPECT_EQ(m["normalization"]["mean"].size(), 8u);

  const std::string out = *dir_ + "/pred.txt";
  Result r = RunBinary({"predict", "--model", model, "--input",
                        *dir_ + "/test.csv", "--output", out},
                       *dir_ + "/predict");
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> preds =
      absl::StrSplit(ReadText(out), '\n', absl::SkipEmpty());
  ASSERT_EQ(preds.size(), 90u);
  int correct = 0;
  for (int i = 0; i < 90; ++i) correct += preds[i] == std::to_string(i % 3);
  EXPECT_GE(correct, 80);

  // Features only, no header, to stdout: the same predictions.
  std::stringstream features;
  std::vector<std::string> rows =
      absl::StrSplit(ReadText(*dir_ + "/test.csv"), '\n', absl::SkipEmpty());
  for (size_t i = 1; i < rows.size(); ++i) {
    features << rows[i].substr(0, rows[i].rfind(',')) << "\n";
  }
  WriteText(*dir_ + "/features.csv", features.str());
  r = RunBinary(
      {"predict", "--model=" + model, "--input=" + *dir_ + "/features.csv"},
      *dir_ + "/predict2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(
      std::vector<std::string>(absl::StrSplit(r.out, '\n', absl::SkipEmpty())),
      preds);
}

TEST_F(E2eTest, HypertuneFileAndFinalJson) {
  const std::string metrics = *dir_ + "/ht/output.metrics";
  const Result r =
      RunBinary({"--train=" + *dir_ + "/train.csv", "--epochs=2",
                 "--hidden_units=8", "--backend=cpu"},
                *dir_ + "/ht_run",
                {"CLOUD_ML_HP_METRIC_FILE=" + metrics, "CLOUD_ML_TRIAL_ID=5"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines =
      absl::StrSplit(ReadText(metrics), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  nlohmann::json j = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(j["trial"], "5");
  EXPECT_EQ(j["global_step"], "16");  // 480 rows / batch 64 = 8 steps/epoch.
  EXPECT_TRUE(j["val_accuracy"].is_string());
  nlohmann::json fin = nlohmann::json::parse(LastLine(r.out));
  EXPECT_EQ(fin["epochs"], 2);
  EXPECT_EQ(std::to_string(fin["val_accuracy"].get<double>()).substr(0, 5),
            std::to_string(std::stod(j["val_accuracy"].get<std::string>()))
                .substr(0, 5));
}

TEST_F(E2eTest, RegressionTrainsAndPredictsValues) {
  std::stringstream csv;
  csv << "a,b,target\n";
  for (int i = 0; i < 400; ++i) {
    const double a = (i % 20) / 10.0 - 1, b = (i / 20) / 10.0 - 1;
    csv << a << "," << b << "," << 3 * a - 2 * b + 0.5 << "\n";
  }
  WriteText(*dir_ + "/reg.csv", csv.str());
  const std::string job = *dir_ + "/reg";
  const Result r =
      RunBinary({"--train=" + *dir_ + "/reg.csv", "--task=regression",
                 "--epochs=30", "--hidden_units=16", "--activation=tanh",
                 "--learning_rate=0.01", "--optimizer=sgd", "--momentum=0.9",
                 "--batch_size=32", "--job-dir=" + job, "--backend=cpu"},
                job);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json fin = nlohmann::json::parse(LastLine(r.out));
  EXPECT_LT(fin["val_loss"].get<double>(), 0.05);
  EXPECT_FALSE(fin.contains("val_accuracy"));
  WriteText(*dir_ + "/reg_in.csv", "a,b\n0.5,-0.5\n");
  const Result p = RunBinary(
      {"predict", "--model", job + "/model", "--input", *dir_ + "/reg_in.csv"},
      job + "_predict");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NEAR(std::stod(p.out), 3.0, 0.3);
}

TEST_F(E2eTest, ValidationFileAndTimedCheckpoints) {
  const std::string job = *dir_ + "/valfile";
  Child c({"--train=" + *dir_ + "/train.csv",
           "--validation=" + *dir_ + "/test.csv", "--label=label", "--epochs=3",
           "--hidden_units=8", "--batch_size=32", "--checkpoint-seconds=0.02",
           "--keep-checkpoints=50", "--backend=cpu", "--job-dir=" + job},
          job, {"CAIRN_TRAIN_TEST_STEP_SLEEP_US=5000"});
  ASSERT_EQ(c.Wait(), 0) << c.Stderr();
  EXPECT_NE(c.Stderr().find("600 train rows, 90 validation rows"),
            std::string::npos)
      << c.Stderr();
  // 57 steps of >= 5 ms with a 20 ms interval: several timed checkpoints
  // besides the final one.
  EXPECT_GE(CheckpointManager(job, 100).List().size(), 4u);
  nlohmann::json fin = nlohmann::json::parse(LastLine(c.Stdout()));
  EXPECT_EQ(fin["global_step"], 3 * 19);  // ceil(600 / 32) steps per epoch.
}

TEST_F(E2eTest, PredictRejectsMismatchedInput) {
  WriteText(*dir_ + "/narrow.csv", "1,2,3\n4,5,6\n");
  const Result r = RunBinary({"predict", "--model", *dir_ + "/ref/model",
                              "--input", *dir_ + "/narrow.csv"},
                             *dir_ + "/predict_bad");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("expected 8 feature columns"), std::string::npos)
      << r.err;
  const Result m = RunBinary({"predict", "--model", *dir_ + "/nowhere",
                              "--input", *dir_ + "/narrow.csv"},
                             *dir_ + "/predict_nomodel");
  EXPECT_EQ(m.code, 1);
  EXPECT_NE(m.err.find("model.json"), std::string::npos) << m.err;
}

struct CliCase {
  const char* name;
  std::vector<std::string> args;
  int code;
  const char* expect;
};

TEST_F(E2eTest, CommandLineAndInputErrors) {
  WriteText(*dir_ + "/bad.csv", "a,b,y\n1,2,0\n3,x,1\n");
  const std::string train = "--train=" + *dir_ + "/train.csv";
  const std::vector<CliCase> cases = {
      {"unknown_flag", {train, "--learning_rte=0.1"}, 2, "learning_rte"},
      {"bad_activation", {train, "--activation=swish"}, 2, "--activation"},
      {"bad_number",
       {train, "--learning_rate=fast"},
       2,
       "--learning_rate=fast"},
      {"bad_hidden", {train, "--hidden_units=12,x"}, 2, "--hidden_units=12,x"},
      {"bad_dropout", {train, "--dropout=1.5"}, 2, "--dropout=1.5"},
      {"no_train", {"--epochs=1"}, 2, "--train"},
      {"bad_csv",
       {"--train=" + *dir_ + "/bad.csv"},
       1,
       "bad.csv:3: column 2 ('b'): non-numeric value 'x'"},
      {"missing_label",
       {train, "--label=price"},
       1,
       "label column 'price' not found"},
      {"no_cuda", {train, "--backend=cuda", "--epochs=1"}, 1, "CUDA"},
  };
  for (const CliCase& c : cases) {
    const Result r = RunBinary(c.args, *dir_ + "/cli_" + c.name);
    if (std::string(c.name) == "no_cuda" && r.code == 0)
      continue;  // GPU present.
    EXPECT_EQ(r.code, c.code) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos)
        << c.name << ": " << r.err;
    EXPECT_NE(r.err.find("error"), std::string::npos) << c.name;
  }
  // Integer flags accept a tuner's float spelling.
  const Result ok = RunBinary({train, "--epochs=1.0", "--batch_size=64.0",
                               "--hidden_units=8", "--backend=cpu"},
                              *dir_ + "/cli_float_int");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

}  // namespace
}  // namespace cairn::trainer
