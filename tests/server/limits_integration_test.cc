// Input limits through a real cairnd and the real CLI: a 1 MB parameter_id
// is refused with a short message, conditional parameters nested far too
// deep give INVALID_ARGUMENT (not INTERNAL), and a refused CreateStudy
// stores nothing.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;
namespace v1 = cairn::v1;

class LimitsIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cairnd_ = new testing::SuiteCairnd(); }

  static void TearDownTestSuite() { delete cairnd_; }

  void SetUp() override {
    ASSERT_EQ(cairnd_->start_error(), "") << server().Log();
    stub_ = server().NewStub();
  }

  static testing::CairndProcess& server() { return cairnd_->server(); }

  grpc::Status Create(const v1::Study& study) {
    grpc::ClientContext ctx;
    v1::CreateStudyRequest request;
    *request.mutable_study() = study;
    v1::Study response;
    return stub_->CreateStudy(&ctx, request, &response);
  }

  int StudyCount() {
    grpc::ClientContext ctx;
    v1::ListStudiesResponse response;
    EXPECT_TRUE(
        stub_->ListStudies(&ctx, v1::ListStudiesRequest(), &response).ok());
    return response.studies_size();
  }

  // A valid study with a parameter x, conditional children nested `depth`
  // deep under it (each CATEGORICAL parent with value "a").
  static v1::Study Nested(int depth) {
    v1::Study study = Simple("nested");
    v1::ParameterSpec* p = study.mutable_spec()->mutable_parameters(0);
    for (int d = 1; d <= depth; ++d) {
      p->set_type(v1::ParameterSpec::CATEGORICAL);
      p->clear_max_value();
      p->add_categorical_values("a");
      v1::ConditionalParameterSpec* c = p->add_conditional_parameter_specs();
      c->add_parent_categorical_values("a");
      p = c->mutable_parameter_spec();
      p->set_parameter_id(absl::StrCat("x", d));
      p->set_type(v1::ParameterSpec::DOUBLE);
      p->set_max_value(1);
    }
    return study;
  }

  // The name of an ACTIVE trial of a new Simple(display_name) study; "" (and
  // a test failure) if that fails.
  std::string ActiveTrial(const std::string& display_name) {
    grpc::ClientContext ctx;
    v1::CreateStudyRequest create;
    *create.mutable_study() = Simple(display_name);
    v1::Study study;
    const grpc::Status created = stub_->CreateStudy(&ctx, create, &study);
    EXPECT_TRUE(created.ok()) << created.error_message();
    grpc::ClientContext suggest_ctx;
    v1::SuggestTrialsRequest suggest;
    suggest.set_parent(study.name());
    suggest.set_suggestion_count(1);
    v1::SuggestTrialsResponse suggested;
    const grpc::Status s =
        stub_->SuggestTrials(&suggest_ctx, suggest, &suggested);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return suggested.trials_size() == 1 ? suggested.trials(0).name() : "";
  }

  static v1::Study Simple(const std::string& name) {
    v1::Study study;
    study.set_display_name(name);
    v1::ParameterSpec* p = study.mutable_spec()->add_parameters();
    p->set_parameter_id("x");
    p->set_type(v1::ParameterSpec::DOUBLE);
    p->set_max_value(1);
    v1::MetricSpec* m = study.mutable_spec()->add_metrics();
    m->set_metric_id("loss");
    m->set_goal(v1::MetricSpec::MINIMIZE);
    return study;
  }

  static testing::SuiteCairnd* cairnd_;
  std::unique_ptr<v1::StudyService::Stub> stub_;
};

testing::SuiteCairnd* LimitsIntegrationTest::cairnd_ = nullptr;

TEST_F(LimitsIntegrationTest, MegabyteParameterIdIsRefusedBriefly) {
  const int before = StudyCount();
  v1::Study study = Simple("huge-id");
  study.mutable_spec()->mutable_parameters(0)->set_parameter_id(
      std::string(1 << 20, 'q'));
  const grpc::Status s = Create(study);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("study.spec.parameters[0].parameter_id: 1048576 "
                        "characters, more than the limit of 128"));
  EXPECT_LT(s.error_message().size(), 1024u);
  EXPECT_EQ(StudyCount(), before);  // nothing stored
}

TEST_F(LimitsIntegrationTest, DeepNestingIsInvalidArgumentNotInternal) {
  const grpc::Status at_limit = Create(Nested(api::kMaxConditionalDepth));
  ASSERT_TRUE(at_limit.ok()) << at_limit.error_message();
  const int before = StudyCount();
  for (int depth : {api::kMaxConditionalDepth + 1, 49, 200}) {
    SCOPED_TRACE(depth);
    const grpc::Status s = Create(Nested(depth));
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << s.error_message();
    EXPECT_THAT(s.error_message(), HasSubstr("nest"));
    EXPECT_THAT(s.error_message(), HasSubstr("10"));
    EXPECT_LT(s.error_message().size(), 1024u);
  }
  EXPECT_EQ(StudyCount(), before);
}

TEST_F(LimitsIntegrationTest, OtherRequestsAreChecked) {
  grpc::ClientContext ctx;
  v1::SuggestTrialsRequest request;
  request.set_parent("studies/1");
  request.set_suggestion_count(api::kMaxSuggestionCount + 1);
  v1::SuggestTrialsResponse response;
  const grpc::Status s = stub_->SuggestTrials(&ctx, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("suggestion_count: 1001"));

  grpc::ClientContext ctx2;
  v1::ReadTrialLogsRequest logs;
  logs.set_name("studies/1/trials/1");
  logs.set_max_bytes(-1);
  v1::ReadTrialLogsResponse chunk;
  EXPECT_EQ(stub_->ReadTrialLogs(&ctx2, logs, &chunk).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// ReportMeasurementsRequest.measurements packs several points of a trial in
// one message (the Python SDK's batches): written in order, next to
// single-measurement messages, and bounded by kMaxRepeated.
TEST_F(LimitsIntegrationTest, PackedMeasurementsAreWrittenInOrderAndBounded) {
  const std::string trial = ActiveTrial("packed");
  ASSERT_FALSE(trial.empty());
  auto point = [](int64_t step) {
    v1::Measurement m;
    m.set_step_count(step);
    v1::Metric* metric = m.add_metrics();
    metric->set_metric_id("loss");
    metric->set_value(1.0 / static_cast<double>(step));
    return m;
  };
  auto stream = [&](const std::vector<v1::ReportMeasurementsRequest>& msgs,
                    v1::ReportMeasurementsResponse* written) {
    grpc::ClientContext ctx;
    auto writer = stub_->ReportMeasurements(&ctx, written);
    for (const auto& m : msgs) writer->Write(m);
    writer->WritesDone();
    return writer->Finish();
  };
  v1::ReportMeasurementsRequest packed;
  packed.set_trial_name(trial);
  for (int64_t step = 1; step <= 3; ++step) {
    *packed.add_measurements() = point(step);
  }
  v1::ReportMeasurementsRequest single;
  single.set_trial_name(trial);
  *single.mutable_measurement() = point(4);
  v1::ReportMeasurementsResponse written;
  ASSERT_TRUE(stream({packed, single}, &written).ok());
  EXPECT_EQ(written.measurements_written(), 4);
  grpc::ClientContext history_ctx;
  v1::GetMetricHistoryRequest history;
  history.set_trial_name(trial);
  history.set_metric_id("loss");
  v1::GetMetricHistoryResponse points;
  ASSERT_TRUE(stub_->GetMetricHistory(&history_ctx, history, &points).ok());
  ASSERT_EQ(points.points_size(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(points.points(i).step_count(), i + 1);

  v1::ReportMeasurementsRequest too_many;
  too_many.set_trial_name(trial);
  for (int i = 0; i <= api::kMaxRepeated; ++i) {
    *too_many.add_measurements() = point(10 + i);
  }
  const grpc::Status refused = stream({too_many}, &written);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("measurements"));
}

// A duration outside google.protobuf.Duration's range, once stored, made
// every JSON view of the trial fail (REST 500, `cairn trial get --json`
// printing an error); any editor, or a trial's own job, could send one.
TEST_F(LimitsIntegrationTest, OutOfRangeDurationIsRefusedAndNotStored) {
  const std::string trial = ActiveTrial("durations");
  ASSERT_FALSE(trial.empty());

  v1::AddTrialMeasurementRequest add;
  add.set_trial_name(trial);
  add.mutable_measurement()->set_step_count(1);
  v1::Metric* metric = add.mutable_measurement()->add_metrics();
  metric->set_metric_id("loss");
  metric->set_value(0.5);
  add.mutable_measurement()->mutable_elapsed_duration()->set_nanos(1999999999);
  grpc::ClientContext add_ctx;
  v1::Trial after;
  const grpc::Status s = stub_->AddTrialMeasurement(&add_ctx, add, &after);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("measurement.elapsed_duration: seconds 0, nanos "
                        "1999999999 is not a valid duration"));

  v1::CompleteTrialRequest complete;
  complete.set_name(trial);
  *complete.mutable_final_measurement() = add.measurement();
  complete.mutable_final_measurement()->mutable_elapsed_duration()->set_seconds(
      int64_t{1} << 50);
  complete.mutable_final_measurement()->mutable_elapsed_duration()->set_nanos(
      0);
  grpc::ClientContext complete_ctx;
  EXPECT_EQ(stub_->CompleteTrial(&complete_ctx, complete, &after).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  const testing::CommandResult r = testing::RunCommand(
      {testing::BinDir() + "/cairn", "--server", server().address(), "trial",
       "get", trial.substr(0, trial.find("/trials/")), trial, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"state\": \"ACTIVE\""));
  EXPECT_THAT(r.out, HasSubstr("\"measurements\": []"));
}

TEST_F(LimitsIntegrationTest, CliShowsTheMessageAndFails) {
  const int before = StudyCount();
  const std::string config = cairnd_->dir().path() + "/reserved.yaml";
  std::ofstream(config) << "parameters:\n"
                           "  - parameter_id: job-dir\n"
                           "    type: DOUBLE\n"
                           "    min_value: 0\n"
                           "    max_value: 1\n"
                           "metrics: [{metric_id: loss, goal: MINIMIZE}]\n";
  const testing::CommandResult r = testing::RunCommand(
      {testing::BinDir() + "/cairn", "--server", server().address(), "study",
       "create", "--config", config, "--name", "reserved"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: "
                               "study.spec.parameters[0].parameter_id: "
                               "\"job-dir\" is reserved"));
  EXPECT_EQ(StudyCount(), before);
}

// cairnd's numeric flags take the same decimal, bounded form as the CLI's
// (CLI11 alone read --max-running-jobs 010 as 8 and let --grace-seconds nan
// through): a bad one stops it before it touches the data dir.
TEST(CairndFlagsTest, NumbersAreDecimalAndInRange) {
  testing::TempDir dir;
  const std::string data = dir.path() + "/data";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-running-jobs", "0x2"},
       "--max-running-jobs: \"0x2\" is not a decimal integer from 0 to"},
      {{"--gpus", "-2"}, "--gpus: \"-2\" is not a decimal integer from -1"},
      {{"--grace-seconds", "nan"},
       "--grace-seconds: \"nan\" is not a number of seconds"},
      {{"--tls-refresh-seconds", "0"},
       "--tls-refresh-seconds: \"0\" is not a decimal integer from 1 to "
       "86400"},
  };
  for (const auto& [flags, error] : cases) {
    std::vector<std::string> argv = {testing::BinDir() + "/cairnd",
                                     "--data-dir", data, "--listen",
                                     "127.0.0.1:0"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    const testing::CommandResult r = testing::RunCommand(argv);
    EXPECT_NE(r.exit_code, 0) << error;
    EXPECT_THAT(r.err, HasSubstr(error));
    EXPECT_FALSE(std::filesystem::exists(data)) << error;
  }
  testing::CairndProcess server(
      data, {"--max-running-jobs", "010", "--grace-seconds", "1m",
             "--metrics-listen", ""});
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error << server.Log();
  EXPECT_THAT(server.Log(), HasSubstr("at most 10 trial jobs run at once"));
}

}  // namespace
}  // namespace cairn
