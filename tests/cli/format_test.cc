// JSON and table output of the cairn CLI.
#include "cli/format.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "api/formats/trials_csv.h"
#include "cli/audit_format.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace cairn::cli {
namespace {

using ::cairn::v1::StudySpec;
using ::cairn::v1::Trial;
using ::testing::HasSubstr;
using ::testing::Not;

template <typename T>
T ParseText(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

StudySpec MixedSpec() {
  return ParseText<StudySpec>(R"pb(
    parameters { parameter_id: "x1" type: DOUBLE min_value: -5 max_value: 10 }
    parameters {
      parameter_id: "units"
      type: DISCRETE
      discrete_values: [ 32, 64 ]
    }
    parameters {
      parameter_id: "ratio"
      type: DISCRETE
      discrete_values: [ 0.5, 1 ]
    }
    parameters {
      parameter_id: "opt"
      type: CATEGORICAL
      categorical_values: [ "sgd", "adam" ]
      conditional_parameter_specs {
        parent_categorical_values: "sgd"
        parameter_spec {
          parameter_id: "layers"
          type: INTEGER
          min_value: 1
          max_value: 4
        }
      }
    }
  )pb");
}

Trial SuggestedTrial() {
  return ParseText<Trial>(R"pb(
    name: "studies/1/trials/7"
    id: 7
    state: ACTIVE
    parameters {
      parameter_id: "x1"
      value { number_value: 1.23 }
    }
    parameters {
      parameter_id: "opt"
      value { string_value: "sgd" }
    }
    parameters {
      parameter_id: "units"
      value { number_value: 64 }
    }
    parameters {
      parameter_id: "ratio"
      value { number_value: 1 }
    }
    parameters {
      parameter_id: "layers"
      value { number_value: 3 }
    }
  )pb");
}

TEST(ParameterKindsTest, IntegersIncludeIntegralDiscreteAndChildren) {
  const api::formats::ParameterKinds kinds =
      api::formats::ParameterKindsOf(MixedSpec());
  EXPECT_EQ(kinds.at("x1"), api::formats::NumberKind::kDouble);
  EXPECT_EQ(kinds.at("units"), api::formats::NumberKind::kInteger);
  EXPECT_EQ(kinds.at("ratio"), api::formats::NumberKind::kDouble);
  EXPECT_EQ(kinds.at("layers"), api::formats::NumberKind::kInteger);
  EXPECT_EQ(kinds.count("nope"), 0u);
}

TEST(ProtoToJsonTest, TheProtobufJsonMappingWithEveryField) {
  StudySpec spec = MixedSpec();
  spec.set_max_trials(30);
  const std::string j = *ProtoToJson(spec);
  EXPECT_THAT(j, HasSubstr("\"maxTrials\": 30"));
  EXPECT_THAT(j, HasSubstr("\"type\": \"CATEGORICAL\""));
  EXPECT_THAT(j, HasSubstr("\"parameterId\": \"layers\""));
  // Zero fields are printed too, as cairnd's REST API prints them.
  EXPECT_THAT(j, HasSubstr("\"maxParallelTrials\": 0"));
  EXPECT_THAT(j, Not(HasSubstr("max_trials")));
  EXPECT_NE(j.back(), '\n');
  // int64 as strings; one line when not pretty.
  Trial t = SuggestedTrial();
  const std::string line = *ProtoToJson(t, /*pretty=*/false);
  EXPECT_THAT(line, HasSubstr("\"id\":\"7\""));
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

// What the mapping cannot hold (only an older cairnd stored it) fails
// `--json` with a message, instead of printing an {"error": ...} object with
// exit status 0.
TEST(ProtoToJsonTest, UnprintableValuesAreAnErrorAndNothingIsWritten) {
  Trial t = SuggestedTrial();
  t.mutable_start_time()->set_seconds(int64_t{1} << 50);
  const absl::StatusOr<std::string> j = ProtoToJson(t);
  EXPECT_EQ(j.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(j.status().message(),
              HasSubstr("cannot print the answer as JSON"));
  std::ostringstream out;
  EXPECT_FALSE(WriteJson(t, out).ok());
  EXPECT_EQ(out.str(), "");
  t.mutable_start_time()->set_seconds(1);
  EXPECT_TRUE(WriteJson(t, out).ok());
  EXPECT_EQ(out.str().back(), '\n');
}

TEST(TrialsCsvTest, ParametersAndMetricsAsColumnsQuotedWhenNeeded) {
  Trial done = SuggestedTrial();
  done.set_state(Trial::SUCCEEDED);
  auto* loss = done.mutable_final_measurement()->add_metrics();
  loss->set_metric_id("loss");
  loss->set_value(0.25);
  Trial bad = ParseText<Trial>(R"pb(
    id: 8
    state: INFEASIBLE
    infeasible_reason: "diverged, \"badly\""
    parameters {
      parameter_id: "opt"
      value { string_value: "adam" }
    }
  )pb");
  EXPECT_EQ(api::formats::TrialsCsv({done, bad}, MixedSpec()),
            "id,state,x1,units,ratio,opt,layers,loss,infeasible_reason\r\n"
            "7,SUCCEEDED,1.23,64,1.0,sgd,3,0.25,\r\n"
            "8,INFEASIBLE,,,,adam,,,\"diverged, \"\"badly\"\"\"\r\n");
  EXPECT_EQ(api::formats::CsvField("plain"), "plain");
  EXPECT_EQ(api::formats::CsvField("a\nb"), "\"a\nb\"");
  EXPECT_EQ(api::formats::CsvField(" pad"), "\" pad\"");
}

TEST(FormatTest, NumbersParametersAndMetricsAsText) {
  EXPECT_EQ(ParametersToText(SuggestedTrial(),
                             api::formats::ParameterKindsOf(MixedSpec())),
            "x1=1.23 opt=sgd units=64 ratio=1 layers=3");
  cairn::v1::Measurement m = ParseText<cairn::v1::Measurement>(R"pb(
    metrics { metric_id: "loss" value: 0.25 }
    metrics { metric_id: "acc" value: 0.9 }
  )pb");
  EXPECT_EQ(MetricsToText(m), "loss=0.25 acc=0.9");
}

TEST(FormatTableTest, AlignsColumnsAndTrimsTrailingSpace) {
  EXPECT_EQ(FormatTable({"ID", "STATE", "X"},
                        {{"1", "ACTIVE", "a"}, {"100", "SUCCEEDED"}}),
            "ID   STATE      X\n"
            "1    ACTIVE     a\n"
            "100  SUCCEEDED\n");
  EXPECT_EQ(FormatTable({"A"}, {}), "A\n");
}

TEST(StudiesTableTest, ShowsProgressAgainstMaxTrials) {
  cairn::v1::Study s = ParseText<cairn::v1::Study>(R"pb(
    name: "studies/1"
    display_name: "branin"
    state: ACTIVE
    spec { max_trials: 30 }
    trial_count: 16
    pending_count: 2
    succeeded_count: 11
    failed_count: 1
    infeasible_count: 1
    cancelled_count: 1
  )pb");
  cairn::v1::Study unlimited = ParseText<cairn::v1::Study>(R"pb(
    name: "studies/2"
    display_name: "open"
    state: COMPLETED
    trial_count: 5
    succeeded_count: 5
  )pb");
  EXPECT_EQ(StudiesTable({s, unlimited}),
            "NAME       DISPLAY NAME  STATE      TRIALS  PENDING  FAILED  "
            "INFEASIBLE\n"
            "studies/1  branin        ACTIVE     14/30   2        1       1\n"
            "studies/2  open          COMPLETED  5/5     0        0       0\n");
}

TEST(TrialsTableTest, OneRowPerTrial) {
  Trial done = SuggestedTrial();
  done.set_state(Trial::SUCCEEDED);
  done.mutable_final_measurement()->set_step_count(10);
  auto* metric = done.mutable_final_measurement()->add_metrics();
  metric->set_metric_id("loss");
  metric->set_value(2.5);
  const std::string table =
      TrialsTable({done}, api::formats::ParameterKindsOf(MixedSpec()));
  EXPECT_EQ(table,
            "ID  STATE      STEP  METRICS   PARAMETERS\n"
            "7   SUCCEEDED  10    loss=2.5  x1=1.23 opt=sgd units=64 ratio=1 "
            "layers=3\n");
}

TEST(TrialToTextTest, KeyValueLines) {
  Trial t = SuggestedTrial();
  t.set_infeasible_reason("diverged");
  const std::string text =
      TrialToText(t, api::formats::ParameterKindsOf(MixedSpec()));
  EXPECT_THAT(text, HasSubstr("name: studies/1/trials/7\n"));
  EXPECT_THAT(text, HasSubstr("state: ACTIVE\n"));
  EXPECT_THAT(text, HasSubstr("parameters: x1=1.23 opt=sgd units=64"));
  EXPECT_THAT(text, HasSubstr("infeasible_reason: diverged\n"));
  EXPECT_THAT(text, Not(HasSubstr("client_id")));
}

TEST(TrialToTextTest, AttemptsExitCodeAndEarlyStoppingReason) {
  Trial t = SuggestedTrial();
  t.set_state(Trial::SUCCEEDED);
  t.set_stopped_early(true);
  (*t.mutable_metadata())["early_stopping_reason"] = "median rule: worse";
  t.mutable_job()->set_state(cairn::v1::TrialJob::CANCELLED);
  t.mutable_job()->set_attempts(2);
  t.mutable_job()->set_last_exit_code(143);
  const std::string text =
      TrialToText(t, api::formats::ParameterKindsOf(MixedSpec()));
  EXPECT_THAT(text, HasSubstr("stopped_early: true\n"
                              "early_stopping_reason: median rule: worse\n"
                              "attempts: 2\n"
                              "exit_code: 143\n"));
}

TEST(TrialToTextTest, NoExitCodeWhileTheJobRuns) {
  Trial t = SuggestedTrial();
  t.mutable_job()->set_state(cairn::v1::TrialJob::RUNNING);
  t.mutable_job()->set_attempts(1);
  const std::string text =
      TrialToText(t, api::formats::ParameterKindsOf(MixedSpec()));
  EXPECT_THAT(text, HasSubstr("attempts: 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("exit_code")));
  EXPECT_THAT(text, Not(HasSubstr("early_stopping_reason")));
}

cairn::v1::Job TuningJob(const std::string& goal) {
  return ParseText<cairn::v1::Job>(absl::StrCat(
      "training_input { hyperparameters { goal: ", goal, " } }", R"pb(
        training_output {
          is_hyperparameter_tuning_job: true
          trials {
            trial_id: "1"
            state: SUCCEEDED
            hyperparameters { key: "lr" value: "0.012345678901234568" }
            hyperparameters { key: "units" value: "1234567" }
            final_metric { training_step: 40 objective_value: 0.91234567890123 }
          }
          trials {
            trial_id: "2"
            state: SUCCEEDED
            is_trial_stopped_early: true
            hyperparameters { key: "lr" value: "0.5" }
            hyperparameters { key: "units" value: "32" }
            final_metric { training_step: 10 objective_value: 0.25 }
          }
          trials {
            trial_id: "3"
            state: RUNNING
            hyperparameters { key: "lr" value: "1e-07" }
            hyperparameters { key: "units" value: "64" }
          }
          trials {
            trial_id: "10"
            state: FAILED
            hyperparameters { key: "lr" value: "0.1" }
            hyperparameters { key: "units" value: "8" }
            final_metric { training_step: 5 objective_value: 0.99 }
          }
        }
      )pb"));
}

TEST(JobTrialsTableTest, SixDigitsBestFirstAndEarlyStoppingReason) {
  const std::string table = JobTrialsTable(
      TuningJob("MAXIMIZE"), {{"2", "median rule: accuracy 0.25 is worse"}});
  // A FAILED trial is never the best, whatever its objective.
  EXPECT_EQ(table,
            "TRIAL  STATE      OBJECTIVE  STEP  HYPERPARAMETERS             "
            "NOTE\n"
            "10     FAILED     0.99       5     lr=0.1 units=8\n"
            "1      SUCCEEDED  0.912346   40    lr=0.0123457 units=1234567  "
            "best\n"
            "2      SUCCEEDED  0.25       10    lr=0.5 units=32             "
            "stopped early: median rule: accuracy 0.25 is worse\n"
            "3      RUNNING    -          -     lr=1e-07 units=64\n");
}

TEST(JobTrialsTableTest, MinimizeMarksTheLowestAndAReasonMayBeMissing) {
  const std::string table = JobTrialsTable(TuningJob("MINIMIZE"), {});
  EXPECT_THAT(table, HasSubstr("2      SUCCEEDED  0.25       10    lr=0.5 "
                               "units=32             best; stopped early\n"));
  EXPECT_THAT(table, HasSubstr("lr=0.0123457 units=1234567\n"));
}

TEST(StatusToLineTest, CodeNameAndOneLine) {
  EXPECT_EQ(StatusToLine(absl::InvalidArgumentError("bad\nvalue")),
            "INVALID_ARGUMENT: bad value");
  EXPECT_EQ(StatusToLine(absl::NotFoundError("studies/9")),
            "NOT_FOUND: studies/9");
}

TEST(AuditFormatTest, JsonNamesCodesAndRolesTableShowsDashes) {
  const auto event = ParseText<cairn::v1::AuditEvent>(R"pb(
    time { seconds: 1700000000 nanos: 5000 }
    principal: "alice"
    role: EDITOR
    method: "/cairn.v1.StudyService/CreateStudy"
    resource: "studies/3"
    code: 0
    peer: "ipv4:127.0.0.1:4242"
  )pb");
  const nlohmann::ordered_json j = AuditEventToJson(event);
  EXPECT_EQ(j["time"], "2023-11-14T22:13:20.000005Z");
  EXPECT_EQ(j["principal"], "alice");
  EXPECT_EQ(j["role"], "editor");
  EXPECT_EQ(j["method"], "/cairn.v1.StudyService/CreateStudy");
  EXPECT_EQ(j["resource"], "studies/3");
  EXPECT_EQ(j["code"], "OK");
  EXPECT_EQ(j["peer"], "ipv4:127.0.0.1:4242");

  auto refused = ParseText<cairn::v1::AuditEvent>(R"pb(
    time { seconds: 1700000000 }
    method: "/cairn.v1.StudyService/GetStudy"
    code: 16
  )pb");
  EXPECT_EQ(AuditEventToJson(refused)["code"], "UNAUTHENTICATED");
  EXPECT_EQ(AuditEventToJson(refused)["principal"], "");
  const std::string table = AuditTable({event, refused});
  EXPECT_THAT(table, HasSubstr("TIME"));
  EXPECT_THAT(table, HasSubstr("2023-11-14T22:13:20Z  alice"));
  EXPECT_THAT(table, HasSubstr("StudyService/CreateStudy"));
  EXPECT_THAT(table, Not(HasSubstr("/cairn.v1.")));
  // PRINCIPAL and ROLE of the refused call: "-" in columns 9 and 6 wide.
  EXPECT_THAT(table, HasSubstr("Z  -          -       StudyService/GetStudy"));
  EXPECT_THAT(table, HasSubstr("UNAUTHENTICATED"));
}

}  // namespace
}  // namespace cairn::cli
