// YAML/JSON -> StudySpec conversion of study config files.
#include "cli/study_config.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace cairn::cli {
namespace {

using ::cairn::v1::ParameterSpec;
using ::cairn::v1::StudySpec;
using ::testing::HasSubstr;

std::string SourceDir() {
  const char* dir = std::getenv("CAIRN_SOURCE_DIR");
  return dir != nullptr ? dir : CAIRN_SOURCE_DIR_FALLBACK;
}

std::string ExampleStudy(const std::string& name) {
  return SourceDir() + "/examples/studies/" + name;
}

TEST(StudySpecFromYamlTest, ProtoNamesAndCamelCaseAreEquivalent) {
  auto snake = StudySpecFromYaml(R"(
parameters:
  - parameter_id: lr
    type: DOUBLE
    min_value: 0.001
    max_value: 1
    scale_type: UNIT_LOG_SCALE
metrics: [{metric_id: loss, goal: MINIMIZE}]
max_parallel_trials: 2
)");
  auto camel = StudySpecFromYaml(R"(
parameters:
  - parameterId: lr
    type: DOUBLE
    minValue: 0.001
    maxValue: 1
    scaleType: UNIT_LOG_SCALE
metrics: [{metricId: loss, goal: MINIMIZE}]
maxParallelTrials: 2
)");
  ASSERT_TRUE(snake.ok()) << snake.status();
  ASSERT_TRUE(camel.ok()) << camel.status();
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(*snake, *camel));
  EXPECT_EQ(snake->parameters(0).scale_type(), ParameterSpec::UNIT_LOG_SCALE);
  EXPECT_DOUBLE_EQ(snake->parameters(0).min_value(), 0.001);
  EXPECT_EQ(snake->max_parallel_trials(), 2);
}

TEST(StudySpecFromYamlTest, UnknownFieldIsNamedWithItsPath) {
  auto spec = StudySpecFromYaml(R"(
parameters:
  - parameter_id: x
    type: DOUBLE
    minvalue: 0
metrics: [{metric_id: loss, goal: MINIMIZE}]
)");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(spec.status().message(),
            "unknown field \"minvalue\" in parameters[0]");

  auto top = StudySpecFromYaml("max_trails: 3\n");
  ASSERT_FALSE(top.ok());
  EXPECT_THAT(top.status().message(), HasSubstr("\"max_trails\""));
}

TEST(StudySpecFromYamlTest, BadEnumListsAllowedValues) {
  auto spec =
      StudySpecFromYaml("parameters: [{parameter_id: x, type: DUBLE}]\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("parameters[0].type"));
  EXPECT_THAT(spec.status().message(), HasSubstr("\"DUBLE\""));
  EXPECT_THAT(spec.status().message(), HasSubstr("DOUBLE, INTEGER"));
}

TEST(StudySpecFromYamlTest, WrongValueTypeNamesField) {
  auto spec = StudySpecFromYaml("max_trials: lots\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("max_trials"));
  EXPECT_THAT(spec.status().message(), HasSubstr("lots"));
  // A quoted number is a string; protobuf's JSON mapping accepts numeric
  // strings for numeric fields, so it still parses.
  auto quoted = StudySpecFromYaml("max_trials: \"12\"\n");
  ASSERT_TRUE(quoted.ok()) << quoted.status();
  EXPECT_EQ(quoted->max_trials(), 12);
  // Non-finite YAML values reach the spec (the server rejects them there).
  auto inf = StudySpecFromYaml(
      "parameters: [{parameter_id: x, type: DOUBLE, max_value: .inf}]\n");
  ASSERT_TRUE(inf.ok()) << inf.status();
  EXPECT_TRUE(std::isinf(inf->parameters(0).max_value()));
}

TEST(StudySpecFromYamlTest, RejectsEmptyNonMappingAndSyntaxErrors) {
  auto empty = StudySpecFromYaml("");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("empty"));

  auto list = StudySpecFromYaml("- a\n- b\n");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(), HasSubstr("mapping"));

  auto syntax = StudySpecFromYaml("parameters: [\n  {a: 1\nmetrics: x\n");
  ASSERT_FALSE(syntax.ok());
  EXPECT_THAT(syntax.status().message(), HasSubstr("YAML syntax error"));
  EXPECT_THAT(syntax.status().message(), HasSubstr("line"));
}

TEST(LoadStudySpecFileTest, Branin) {
  auto spec = LoadStudySpecFile(ExampleStudy("branin.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->parameters_size(), 2);
  EXPECT_EQ(spec->parameters(0).parameter_id(), "x1");
  EXPECT_EQ(spec->parameters(0).type(), ParameterSpec::DOUBLE);
  EXPECT_EQ(spec->parameters(0).min_value(), -5);
  EXPECT_EQ(spec->parameters(0).max_value(), 10);
  EXPECT_EQ(spec->parameters(1).parameter_id(), "x2");
  EXPECT_EQ(spec->parameters(1).min_value(), 0);
  EXPECT_EQ(spec->parameters(1).max_value(), 15);
  ASSERT_EQ(spec->metrics_size(), 1);
  EXPECT_EQ(spec->metrics(0).metric_id(), "loss");
  EXPECT_EQ(spec->metrics(0).goal(), cairn::v1::MetricSpec::MINIMIZE);
  EXPECT_EQ(spec->algorithm(), StudySpec::ALGORITHM_UNSPECIFIED);
  EXPECT_EQ(spec->max_trials(), 30);
}

TEST(LoadStudySpecFileTest, PyTorchGlooHasReplicas) {
  auto spec =
      LoadStudySpecFile(SourceDir() + "/examples/pytorch_gloo/study.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const cairn::v1::TrialJobTemplate& t = spec->job_template();
  ASSERT_EQ(t.replicas_size(), 2);
  EXPECT_EQ(t.replicas(0).type(), cairn::v1::ReplicaGroup::MASTER);
  EXPECT_EQ(t.replicas(0).count(), 1);
  EXPECT_EQ(t.replicas(1).type(), cairn::v1::ReplicaGroup::WORKER);
  EXPECT_EQ(t.replicas(1).count(), 2);
  EXPECT_EQ(t.max_restarts(), 2);
}

TEST(StudySpecFromYamlTest, ReplicaFieldsInEitherSpelling) {
  auto spec = StudySpecFromYaml(R"(
job_template:
  command: [train]
  use_chief_in_tf_config: true
  tfConfigJobJson: '{"scaleTier": "CUSTOM"}'
  replicas:
    - {type: MASTER, count: 1, gpusPerReplica: 2}
    - {type: PARAMETER_SERVER, count: 3}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const cairn::v1::TrialJobTemplate& t = spec->job_template();
  EXPECT_TRUE(t.use_chief_in_tf_config());
  EXPECT_EQ(t.tf_config_job_json(), R"({"scaleTier": "CUSTOM"})");
  EXPECT_EQ(t.replicas(0).gpus_per_replica(), 2);
  EXPECT_EQ(t.replicas(1).type(), cairn::v1::ReplicaGroup::PARAMETER_SERVER);
  auto bad =
      StudySpecFromYaml("job_template: {replicas: [{type: CHIEF, count: 1}]}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("CHIEF"), std::string::npos)
      << bad.status();
}

TEST(LoadStudySpecFileTest, MixedHasEveryTypeLogScaleAndConditions) {
  auto spec = LoadStudySpecFile(ExampleStudy("mixed.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  std::map<ParameterSpec::Type, int> types;
  bool log_scale = false;
  int children = 0;
  for (const ParameterSpec& p : spec->parameters()) {
    ++types[p.type()];
    log_scale |= p.scale_type() == ParameterSpec::UNIT_LOG_SCALE;
    children += p.conditional_parameter_specs_size();
  }
  EXPECT_GT(types[ParameterSpec::DOUBLE], 0);
  EXPECT_GT(types[ParameterSpec::INTEGER], 0);
  EXPECT_GT(types[ParameterSpec::CATEGORICAL], 0);
  EXPECT_GT(types[ParameterSpec::DISCRETE], 0);
  EXPECT_TRUE(log_scale);
  EXPECT_GE(children, 1);
  const ParameterSpec& optimizer = spec->parameters(3);
  ASSERT_EQ(optimizer.parameter_id(), "optimizer");
  ASSERT_EQ(optimizer.conditional_parameter_specs_size(), 2);
  EXPECT_THAT(
      optimizer.conditional_parameter_specs(0).parent_categorical_values(),
      ::testing::ElementsAre("sgd"));
  EXPECT_EQ(
      optimizer.conditional_parameter_specs(0).parameter_spec().parameter_id(),
      "momentum");
  EXPECT_THAT(spec->parameters(1).discrete_values(),
              ::testing::ElementsAre(32, 64, 128, 256));
  // Quoted YAML values stay strings in the labels map.
  EXPECT_EQ(spec->labels().at("version"), "3");
  EXPECT_EQ(spec->seed(), 42);
}

TEST(LoadStudySpecFileTest, EveryExampleStudyParses) {
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(SourceDir() + "/examples/studies")) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".yml" && ext != ".json") continue;
    // Parsed only: digits.yaml's command names build/bin/cairn-train, which
    // a sanitizer build tree does not have.
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)),
                           std::istreambuf_iterator<char>());
    auto spec = StudySpecFromYaml(text);
    EXPECT_TRUE(spec.ok()) << entry.path() << ": " << spec.status();
    if (spec.ok()) {
      EXPECT_GT(spec->parameters_size(), 0) << entry.path();
      EXPECT_GT(spec->metrics_size(), 0) << entry.path();
    }
    ++count;
  }
  EXPECT_GE(count, 2);
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cairn_cli_config_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(TempDirTest, JsonFileParsesWithTheJsonParser) {
  const std::string path = Write("s.json", R"({
  "parameters": [{"parameterId": "x", "type": "INTEGER",
                  "minValue": 1, "maxValue": 8}],
  "metrics": [{"metric_id": "acc", "goal": "MAXIMIZE"}],
  "algorithm": "GRID_SEARCH"
})");
  auto spec = LoadStudySpecFile(path);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->parameters(0).type(), ParameterSpec::INTEGER);
  EXPECT_EQ(spec->parameters(0).max_value(), 8);
  EXPECT_EQ(spec->algorithm(), StudySpec::GRID_SEARCH);
}

TEST_F(TempDirTest, ErrorsStartWithThePath) {
  const std::string path = Write("bad.yaml", "metrics: [{metric: loss}]\n");
  auto spec = LoadStudySpecFile(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            path + ": unknown field \"metric\" in metrics[0]");

  const std::string json_path = Write("bad.json", "{\"seed\": }");
  auto json_spec = LoadStudySpecFile(json_path);
  ASSERT_FALSE(json_spec.ok());
  EXPECT_THAT(json_spec.status().message(), HasSubstr(json_path + ": "));

  auto missing = LoadStudySpecFile((dir_ / "nope.yaml").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.yaml"));
}

TEST(LoadStudySpecFileTest, CommandPathsResolveInTheConfigsDirectory) {
  auto spec = LoadStudySpecFile(ExampleStudy("python-trainer.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& command = spec->job_template().command();
  ASSERT_GE(command.size(), 3);
  EXPECT_EQ(command[0], "/usr/bin/python3");
  EXPECT_EQ(command[1],
            std::filesystem::path(SourceDir() + "/examples/trainers/train.py")
                .lexically_normal()
                .string());
  EXPECT_EQ(command[2], "--epochs=10");
}

TEST_F(TempDirTest, CommandPathsKeepProgramsFlagsAndAbsolutePaths) {
  std::filesystem::create_directories(dir_ / "conf" / "bin");
  std::ofstream((dir_ / "conf" / "bin" / "train.sh").string()) << "";
  std::ofstream((dir_ / "conf" / "run.py").string()) << "";
  const std::string path = (dir_ / "conf" / "s.yaml").string();
  std::ofstream(path) << "parameters: [{parameter_id: x, type: DOUBLE, "
                         "min_value: 0, max_value: 1}]\n"
                         "job_template: {command: [bin/train.sh, python3, "
                         "run.py, --out=x/y, /abs/p, ./run.py]}\n";
  auto spec = LoadStudySpecFile(path);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& c = spec->job_template().command();
  const std::string conf = (dir_ / "conf").string();
  EXPECT_THAT(std::vector<std::string>(c.begin(), c.end()),
              ::testing::ElementsAre(conf + "/bin/train.sh", "python3",
                                     conf + "/run.py", "--out=x/y", "/abs/p",
                                     conf + "/run.py"));
}

TEST_F(TempDirTest, CommandPathThatNamesNoFileNamesTheField) {
  const std::string path =
      Write("t.yaml",
            "parameters: [{parameter_id: x, type: DOUBLE, min_value: 0, "
            "max_value: 1}]\njob_template: {command: [/usr/bin/python3, "
            "examples/trainers/train.py]}\n");
  auto spec = LoadStudySpecFile(path);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("job_template.command[1]: 'examples/trainers/train.py' "
                        "is not a file relative to the study config's "
                        "directory '" +
                        dir_.string() + "'"));
  EXPECT_LT(spec.status().message().size(), 1024u);
}

TEST(DisplayNameFromPathTest, StemOfTheFileName) {
  EXPECT_EQ(DisplayNameFromPath("examples/studies/branin.yaml"), "branin");
  EXPECT_EQ(DisplayNameFromPath("/a/b/my.study.json"), "my.study");
  EXPECT_EQ(DisplayNameFromPath("plain"), "plain");
  EXPECT_EQ(DisplayNameFromPath(".hidden"), ".hidden");
}

}  // namespace
}  // namespace cairn::cli
