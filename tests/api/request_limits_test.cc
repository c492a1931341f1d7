// Every input limit of api/limits.h, table-driven: a value just
// at the limit is accepted, one over it refused with INVALID_ARGUMENT naming
// the field and the limit, in under 1 KB, echoing at most 64 characters.
#include "api/request_limits.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "cairn/v1/admin_service.pb.h"
#include "cairn/v1/study_service.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "gtest/gtest.h"
#include "util/quote.h"

namespace cairn {
namespace {

using google::protobuf::Message;
using ::testing::HasSubstr;
namespace v1 = cairn::v1;

// A request whose limited field holds `n` (a length, a count or a value).
using Make = std::function<std::unique_ptr<Message>(int64_t n)>;

struct LimitCase {
  std::string field;  // the path the error must name
  int64_t limit;      // largest accepted n
  Make make;
};

// What every refusal must look like.
void ExpectRefusal(const absl::Status& s, const std::string& field,
                   int64_t limit) {
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr(field + ":")) << s;
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat(limit))) << s;
  EXPECT_LT(s.message().size(), 1024u);
  // Values are runs of 'q': at most 64 of them come back.
  EXPECT_THAT(std::string(s.message()),
              ::testing::Not(HasSubstr(std::string(65, 'q'))));
}

void RunCases(const std::vector<LimitCase>& cases) {
  for (const LimitCase& c : cases) {
    SCOPED_TRACE(c.field);
    EXPECT_TRUE(api::CheckRequestLimits(*c.make(c.limit)).ok())
        << api::CheckRequestLimits(*c.make(c.limit));
    ExpectRefusal(api::CheckRequestLimits(*c.make(c.limit + 1)), c.field,
                  c.limit);
  }
}

std::string Q(int64_t n) { return std::string(n, 'q'); }

// A CreateStudyRequest with one parameter and one metric, changed by `f`.
template <typename F>
Make Study(F f) {
  return [f](int64_t n) {
    auto r = std::make_unique<v1::CreateStudyRequest>();
    v1::Study* study = r->mutable_study();
    study->set_display_name("s");
    v1::StudySpec* spec = study->mutable_spec();
    spec->add_parameters()->set_parameter_id("x");
    spec->add_metrics()->set_metric_id("loss");
    f(n, *study);
    return r;
  };
}

template <typename M, typename F>
Make Req(F f) {
  return [f](int64_t n) {
    auto r = std::make_unique<M>();
    f(n, *r);
    return r;
  };
}

TEST(RequestLimitsTest, StringLengths) {
  RunCases({
      {"study.spec.parameters[0].parameter_id", api::kMaxIdLength,
       Study([](int64_t n, v1::Study& s) {
         s.mutable_spec()->mutable_parameters(0)->set_parameter_id(Q(n));
       })},
      {"study.spec.metrics[0].metric_id", api::kMaxIdLength,
       Study([](int64_t n, v1::Study& s) {
         s.mutable_spec()->mutable_metrics(0)->set_metric_id(Q(n));
       })},
      {"study.display_name", api::kMaxDisplayNameLength,
       Study([](int64_t n, v1::Study& s) { s.set_display_name(Q(n)); })},
      {"study.spec.parameters[0].categorical_values[0]",
       api::kMaxCategoricalValueLength, Study([](int64_t n, v1::Study& s) {
         s.mutable_spec()->mutable_parameters(0)->add_categorical_values(Q(n));
       })},
      {"study.spec.parameters[0].conditional_parameter_specs[0]."
       "parent_categorical_values[0]",
       api::kMaxCategoricalValueLength, Study([](int64_t n, v1::Study& s) {
         s.mutable_spec()
             ->mutable_parameters(0)
             ->add_conditional_parameter_specs()
             ->add_parent_categorical_values(Q(n));
       })},
      {"study.spec.labels key", api::kMaxLabelLength,
       Study([](int64_t n, v1::Study& s) {
         (*s.mutable_spec()->mutable_labels())[Q(n)] = "v";
       })},
      {"study.spec.labels[\"k\"]", api::kMaxLabelLength,
       Study([](int64_t n, v1::Study& s) {
         (*s.mutable_spec()->mutable_labels())["k"] = Q(n);
       })},
      {"study.spec.job_template.command[0]", api::kMaxPathLength,
       Study([](int64_t n, v1::Study& s) {
         s.mutable_spec()->mutable_job_template()->add_command(Q(n));
       })},
      {"study.spec.job_template.job_dir", api::kMaxPathLength,
       Study([](int64_t n, v1::Study& s) {
         s.mutable_spec()->mutable_job_template()->set_job_dir(Q(n));
       })},
      {"study.spec.job_template.env key", api::kMaxLabelLength,
       Study([](int64_t n, v1::Study& s) {
         (*s.mutable_spec()->mutable_job_template()->mutable_env())[Q(n)] = "";
       })},
      {"study.spec.job_template.env[\"K\"]", api::kMaxPathLength,
       Study([](int64_t n, v1::Study& s) {
         (*s.mutable_spec()->mutable_job_template()->mutable_env())["K"] = Q(n);
       })},
      {"name", api::kMaxResourceNameLength,
       Req<v1::GetStudyRequest>(
           [](int64_t n, v1::GetStudyRequest& r) { r.set_name(Q(n)); })},
      {"parent", api::kMaxResourceNameLength,
       Req<v1::SuggestTrialsRequest>(
           [](int64_t n, v1::SuggestTrialsRequest& r) { r.set_parent(Q(n)); })},
      {"trial_name", api::kMaxResourceNameLength,
       Req<v1::AddTrialMeasurementRequest>(
           [](int64_t n, v1::AddTrialMeasurementRequest& r) {
             r.set_trial_name(Q(n));
           })},
      {"page_token", api::kMaxResourceNameLength,
       Req<v1::ListStudiesRequest>([](int64_t n, v1::ListStudiesRequest& r) {
         r.set_page_token(Q(n));
       })},
      {"display_name", api::kMaxDisplayNameLength,
       Req<v1::LookupStudyRequest>([](int64_t n, v1::LookupStudyRequest& r) {
         r.set_display_name(Q(n));
       })},
      {"client_id", api::kMaxClientIdLength,
       Req<v1::SuggestTrialsRequest>(
           [](int64_t n, v1::SuggestTrialsRequest& r) {
             r.set_client_id(Q(n));
           })},
      {"measurement.metrics[0].metric_id", api::kMaxIdLength,
       Req<v1::AddTrialMeasurementRequest>(
           [](int64_t n, v1::AddTrialMeasurementRequest& r) {
             r.mutable_measurement()->add_metrics()->set_metric_id(Q(n));
           })},
      {"metric_id", api::kMaxIdLength,
       Req<v1::GetMetricHistoryRequest>(
           [](int64_t n, v1::GetMetricHistoryRequest& r) {
             r.set_metric_id(Q(n));
           })},
      {"trial.parameters[0].parameter_id", api::kMaxIdLength,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         r.mutable_trial()->add_parameters()->set_parameter_id(Q(n));
       })},
      {"trial.parameters[0].value.string_value",
       api::kMaxCategoricalValueLength,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         v1::Parameter* p = r.mutable_trial()->add_parameters();
         p->set_parameter_id("opt");
         p->mutable_value()->set_string_value(Q(n));
       })},
      {"trial.metadata[\"k\"]", api::kMaxFreeTextLength,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         (*r.mutable_trial()->mutable_metadata())["k"] = Q(n);
       })},
      {"trial.labels key", api::kMaxLabelLength,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         (*r.mutable_trial()->mutable_labels())[Q(n)] = "";
       })},
      {"infeasible_reason", api::kMaxFreeTextLength,
       Req<v1::CompleteTrialRequest>(
           [](int64_t n, v1::CompleteTrialRequest& r) {
             r.set_infeasible_reason(Q(n));
           })},
      {"destination", api::kMaxPathLength,
       Req<v1::BackupRequest>(
           [](int64_t n, v1::BackupRequest& r) { r.set_destination(Q(n)); })},
  });
}

TEST(RequestLimitsTest, Counts) {
  RunCases({
      {"study.spec.parameters", api::kMaxParametersPerStudy,
       Study([](int64_t n, v1::Study& s) {
         for (int64_t i = 1; i < n; ++i) {
           s.mutable_spec()->add_parameters()->set_parameter_id(
               absl::StrCat("p", i));
         }
       })},
      {"study.spec.parameters[0].categorical_values", api::kMaxParameterValues,
       Study([](int64_t n, v1::Study& s) {
         for (int64_t i = 0; i < n; ++i) {
           s.mutable_spec()->mutable_parameters(0)->add_categorical_values("c");
         }
       })},
      {"study.spec.parameters[0].discrete_values", api::kMaxParameterValues,
       Study([](int64_t n, v1::Study& s) {
         for (int64_t i = 0; i < n; ++i) {
           s.mutable_spec()->mutable_parameters(0)->add_discrete_values(i);
         }
       })},
      {"study.spec.parameters[0].conditional_parameter_specs[0]."
       "parent_int_values",
       api::kMaxParameterValues, Study([](int64_t n, v1::Study& s) {
         auto* c = s.mutable_spec()
                       ->mutable_parameters(0)
                       ->add_conditional_parameter_specs();
         for (int64_t i = 0; i < n; ++i) c->add_parent_int_values(i);
       })},
      {"study.spec.metrics", api::kMaxMetrics,
       Study([](int64_t n, v1::Study& s) {
         for (int64_t i = 1; i < n; ++i) {
           s.mutable_spec()->add_metrics()->set_metric_id(absl::StrCat("m", i));
         }
       })},
      {"study.spec.labels", api::kMaxLabels, Study([](int64_t n, v1::Study& s) {
         for (int64_t i = 0; i < n; ++i) {
           (*s.mutable_spec()->mutable_labels())[absl::StrCat("k", i)] = "v";
         }
       })},
      {"study.spec.job_template.command", api::kMaxCommandArgs,
       Study([](int64_t n, v1::Study& s) {
         for (int64_t i = 0; i < n; ++i) {
           s.mutable_spec()->mutable_job_template()->add_command("a");
         }
       })},
      {"study.spec.job_template.env", api::kMaxEnvVars,
       Study([](int64_t n, v1::Study& s) {
         for (int64_t i = 0; i < n; ++i) {
           (*s.mutable_spec()
                 ->mutable_job_template()
                 ->mutable_env())[absl::StrCat("V", i)] = "1";
         }
       })},
      {"measurement.metrics", api::kMaxMetrics,
       Req<v1::AddTrialMeasurementRequest>(
           [](int64_t n, v1::AddTrialMeasurementRequest& r) {
             for (int64_t i = 0; i < n; ++i) {
               r.mutable_measurement()->add_metrics()->set_metric_id(
                   absl::StrCat("m", i));
             }
           })},
      {"trial.parameters", api::kMaxParametersPerStudy,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         for (int64_t i = 0; i < n; ++i) {
           r.mutable_trial()->add_parameters()->set_parameter_id(
               absl::StrCat("p", i));
         }
       })},
      {"trial.labels", api::kMaxLabels,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         for (int64_t i = 0; i < n; ++i) {
           (*r.mutable_trial()->mutable_labels())[absl::StrCat("k", i)] = "";
         }
       })},
      {"trial.metadata", api::kMaxLabels,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         for (int64_t i = 0; i < n; ++i) {
           (*r.mutable_trial()->mutable_metadata())[absl::StrCat("k", i)] = "";
         }
       })},
      // Any other repeated field: the default.
      {"trial.job.gpus", api::kMaxRepeated,
       Req<v1::CreateTrialRequest>([](int64_t n, v1::CreateTrialRequest& r) {
         for (int64_t i = 0; i < n; ++i)
           r.mutable_trial()->mutable_job()->add_gpus(0);
       })},
  });
}

// One top-level parameter with n - 1 conditional children: n in total.
TEST(RequestLimitsTest, ParametersPerStudyCountConditionalOnes) {
  RunCases(
      {{"study.spec.parameters[0].conditional_parameter_specs[999]."
        "parameter_spec",
        api::kMaxParametersPerStudy, Study([](int64_t n, v1::Study& s) {
          auto* p = s.mutable_spec()->mutable_parameters(0);
          for (int64_t i = 1; i < n; ++i) {
            p->add_conditional_parameter_specs()
                ->mutable_parameter_spec()
                ->set_parameter_id(absl::StrCat("c", i));
          }
        })}});
}

TEST(RequestLimitsTest, IntegerRanges) {
  struct Range {
    std::string field;
    int64_t min, max;
    Make make;
  };
  const std::vector<Range> ranges = {
      {"suggestion_count", 0, api::kMaxSuggestionCount,
       Req<v1::SuggestTrialsRequest>(
           [](int64_t n, v1::SuggestTrialsRequest& r) {
             r.set_suggestion_count(static_cast<int32_t>(n));
           })},
      {"page_size", 0, api::kMaxListStudiesPageSize,
       Req<v1::ListStudiesRequest>([](int64_t n, v1::ListStudiesRequest& r) {
         r.set_page_size(static_cast<int32_t>(n));
       })},
      {"page_size", 0, api::kMaxListTrialsPageSize,
       Req<v1::ListTrialsRequest>([](int64_t n, v1::ListTrialsRequest& r) {
         r.set_page_size(static_cast<int32_t>(n));
       })},
      {"page_size", 0, api::kMaxHistoryPageSize,
       Req<v1::GetMetricHistoryRequest>(
           [](int64_t n, v1::GetMetricHistoryRequest& r) {
             r.set_page_size(static_cast<int32_t>(n));
           })},
      {"max_points", 0, api::kMaxHistoryPageSize,
       Req<v1::GetMetricHistoryRequest>(
           [](int64_t n, v1::GetMetricHistoryRequest& r) {
             r.set_max_points(static_cast<int32_t>(n));
           })},
      {"max_bytes", 0, api::kMaxReadLogBytes,
       Req<v1::ReadTrialLogsRequest>(
           [](int64_t n, v1::ReadTrialLogsRequest& r) {
             r.set_max_bytes(static_cast<int32_t>(n));
           })},
  };
  for (const Range& r : ranges) {
    SCOPED_TRACE(r.field);
    EXPECT_TRUE(api::CheckRequestLimits(*r.make(r.min)).ok());
    EXPECT_TRUE(api::CheckRequestLimits(*r.make(r.max)).ok());
    ExpectRefusal(api::CheckRequestLimits(*r.make(r.max + 1)), r.field, r.max);
    ExpectRefusal(api::CheckRequestLimits(*r.make(r.min - 1)), r.field, r.min);
  }
  v1::ReadTrialLogsRequest logs;
  logs.set_offset(-1);
  ExpectRefusal(api::CheckRequestLimits(logs), "offset", 0);
}

// Durations and timestamps anywhere in a request stay within the ranges of
// their definitions: a stored one outside them could not be printed as JSON
// (GetTrial over REST, `cairn trial list --json`) ever after.
TEST(RequestLimitsTest, DurationsAndTimestampsInRange) {
  auto elapsed = [](int64_t seconds, int32_t nanos) {
    v1::CompleteTrialRequest r;
    google::protobuf::Duration* d =
        r.mutable_final_measurement()->mutable_elapsed_duration();
    d->set_seconds(seconds);
    d->set_nanos(nanos);
    return r;
  };
  const int64_t max_seconds = 315576000000;  // 10,000 years
  for (const auto& [seconds, nanos] :
       std::vector<std::pair<int64_t, int32_t>>{{max_seconds, 999999999},
                                                {-max_seconds, -999999999},
                                                {0, -5},
                                                {3, 0}}) {
    EXPECT_TRUE(api::CheckRequestLimits(elapsed(seconds, nanos)).ok())
        << seconds << "s " << nanos;
  }
  for (const auto& [seconds, nanos] :
       std::vector<std::pair<int64_t, int32_t>>{{max_seconds + 1, 0},
                                                {-max_seconds - 1, 0},
                                                {0, 1000000000},
                                                {0, -1000000000},
                                                {1, -1},
                                                {-1, 1}}) {
    const absl::Status s = api::CheckRequestLimits(elapsed(seconds, nanos));
    ExpectRefusal(s, "final_measurement.elapsed_duration", max_seconds);
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("nanos ", nanos))) << s;
  }

  auto started_at = [](int64_t seconds, int32_t nanos) {
    v1::CreateTrialRequest r;
    google::protobuf::Timestamp* t = r.mutable_trial()->mutable_start_time();
    t->set_seconds(seconds);
    t->set_nanos(nanos);
    return r;
  };
  EXPECT_TRUE(
      api::CheckRequestLimits(started_at(253402300799, 999999999)).ok());
  EXPECT_TRUE(api::CheckRequestLimits(started_at(-62135596800, 0)).ok());
  for (const auto& [seconds, nanos] : std::vector<std::pair<int64_t, int32_t>>{
           {253402300800, 0}, {-62135596801, 0}, {0, -1}, {0, 1000000000}}) {
    ExpectRefusal(api::CheckRequestLimits(started_at(seconds, nanos)),
                  "trial.start_time", 9999);
  }
}

// The measurement hot path's check answers as the walk does, case by case.
TEST(RequestLimitsTest, MeasurementCheckAgreesWithTheWalk) {
  std::vector<v1::Measurement> cases;
  auto with_ids = [](std::vector<std::string> ids) {
    v1::Measurement m;
    m.set_step_count(3);
    for (const std::string& id : ids) {
      v1::Metric* metric = m.add_metrics();
      metric->set_metric_id(id);
      metric->set_value(0.5);
    }
    return m;
  };
  cases.push_back(with_ids({}));
  cases.push_back(with_ids({"loss", "val/loss", "acc_1"}));
  cases.push_back(with_ids({"loss", std::string(129, 'q')}));
  cases.push_back(with_ids({"loss", std::string(128, 'q')}));
  cases.push_back(with_ids({"val loss"}));
  cases.push_back(with_ids({"", "9lives"}));
  std::vector<std::string> many;
  for (int i = 0; i <= api::kMaxMetrics; ++i)
    many.push_back(absl::StrCat("m", i));
  cases.push_back(with_ids(many));
  many.pop_back();
  cases.push_back(with_ids(many));
  v1::Measurement late = with_ids({"loss"});
  late.mutable_elapsed_duration()->set_nanos(1999999999);
  cases.push_back(late);
  late.mutable_elapsed_duration()->set_nanos(5);
  cases.push_back(late);
  v1::Measurement both = with_ids({"bad id", "x"});  // The walk's first.
  both.mutable_elapsed_duration()->set_seconds(-1);
  both.mutable_elapsed_duration()->set_nanos(5);
  cases.push_back(both);
  int refused = 0;
  for (const v1::Measurement& m : cases) {
    const absl::Status walk = api::CheckRequestLimits(m, "measurement");
    EXPECT_EQ(api::CheckMeasurementLimits(m, "measurement"), walk)
        << m.DebugString();
    refused += walk.ok() ? 0 : 1;
  }
  EXPECT_EQ(refused, 6);
}

// A study whose parameter x has conditional children nested `depth` deep.
v1::CreateStudyRequest Nested(int depth) {
  v1::CreateStudyRequest r;
  v1::ParameterSpec* p = r.mutable_study()->mutable_spec()->add_parameters();
  p->set_parameter_id("x");
  for (int d = 1; d <= depth; ++d) {
    p = p->add_conditional_parameter_specs()->mutable_parameter_spec();
    p->set_parameter_id(absl::StrCat("x", d));
  }
  return r;
}

TEST(RequestLimitsTest, ConditionalNestingDepth) {
  EXPECT_TRUE(api::CheckRequestLimits(Nested(api::kMaxConditionalDepth)).ok());
  std::string path = "study.spec.parameters[0]";
  for (int d = 0; d <= api::kMaxConditionalDepth; ++d) {
    if (d > 0) absl::StrAppend(&path, ".parameter_spec");
    absl::StrAppend(&path, ".conditional_parameter_specs[0]");
  }
  ExpectRefusal(api::CheckRequestLimits(Nested(api::kMaxConditionalDepth + 1)),
                path, api::kMaxConditionalDepth);
  // Far deeper than protobuf's own parser allows: no recursion, same error.
  const absl::Status deep = api::CheckRequestLimits(Nested(5000));
  ExpectRefusal(deep, path, api::kMaxConditionalDepth);
}

TEST(RequestLimitsTest, MessageDepthOfValueLists) {
  v1::CreateTrialRequest r;
  v1::Parameter* p = r.mutable_trial()->add_parameters();
  p->set_parameter_id("x");
  google::protobuf::Value* v = p->mutable_value();
  for (int i = 0; i < 200; ++i) {
    v = v->mutable_list_value()->add_values();
  }
  v->set_number_value(1);
  const absl::Status s = api::CheckRequestLimits(r);
  // The path names the Value where the check stopped.
  ExpectRefusal(s, "list_value.values[0]", api::kMaxMessageDepth);
  EXPECT_THAT(std::string(s.message()),
              ::testing::StartsWith("trial.parameters[0].value."));
}

TEST(RequestLimitsTest, CharacterSets) {
  struct Chars {
    std::string value;
    bool ok;
  };
  auto param = [](const std::string& id) {
    v1::CreateStudyRequest r;
    r.mutable_study()->mutable_spec()->add_parameters()->set_parameter_id(id);
    return api::CheckRequestLimits(r);
  };
  for (const Chars& c : std::vector<Chars>{{"learning_rate", true},
                                           {"_x.y-z9", true},
                                           {"A", true},
                                           {"1x", false},
                                           {"-x", false},
                                           {"a=b", false},
                                           {"a b", false},
                                           {"val/loss", false},
                                           {"job-dir", false},
                                           {"job_dir", false},
                                           {"JOB_DIR", false},
                                           {"job_dirs", true}}) {
    SCOPED_TRACE(c.value);
    const absl::Status s = param(c.value);
    EXPECT_EQ(s.ok(), c.ok) << s;
    if (!c.ok) {
      EXPECT_THAT(s.message(),
                  HasSubstr("study.spec.parameters[0].parameter_id: "));
    }
  }
  auto metric = [](const std::string& id) {
    v1::AddTrialMeasurementRequest r;
    r.mutable_measurement()->add_metrics()->set_metric_id(id);
    return api::CheckRequestLimits(r);
  };
  EXPECT_TRUE(metric("val/loss").ok());
  EXPECT_TRUE(metric("accuracy_top-1.5").ok());
  EXPECT_FALSE(metric("val loss").ok());
  EXPECT_FALSE(metric("/loss").ok());
  auto display = [](const std::string& name) {
    v1::CreateStudyRequest r;
    r.mutable_study()->set_display_name(name);
    return api::CheckRequestLimits(r);
  };
  EXPECT_TRUE(display("Résumé tuning (run 2)").ok());
  EXPECT_THAT(display("a/b").message(),
              HasSubstr("study.display_name: \"a/b\" is not allowed"));
  EXPECT_FALSE(display("a\nb").ok());
  EXPECT_FALSE(display(std::string("a\x7f", 2)).ok());
  v1::SuggestTrialsRequest suggest;
  suggest.set_client_id("worker\x01");
  EXPECT_THAT(api::CheckRequestLimits(suggest).message(),
              HasSubstr("client_id: \"worker\\x01\""));
  v1::CreateStudyRequest labels;
  (*labels.mutable_study()->mutable_spec()->mutable_labels())["a\tb"] = "";
  EXPECT_FALSE(api::CheckRequestLimits(labels).ok());
}

TEST(RequestLimitsTest, PathPrefixAndFieldOrder) {
  v1::Study study;
  study.set_display_name(std::string(300, 'q'));
  study.mutable_spec()->add_parameters()->set_parameter_id("1x");
  // display_name (field 2) comes before spec (field 3).
  EXPECT_THAT(api::CheckRequestLimits(study, "study").message(),
              HasSubstr("study.display_name: 300 characters"));
}

TEST(QuoteForErrorTest, AtMost64CharactersEscaped) {
  EXPECT_EQ(util::QuoteForError("lr"), "\"lr\"");
  EXPECT_EQ(util::QuoteForError("a\nb"), "\"a\\nb\"");
  EXPECT_EQ(util::QuoteForError(std::string(1 << 20, 'q')),
            absl::StrCat("\"", Q(64), "\"... (1048576 bytes)"));
  EXPECT_LT(util::QuoteForError(std::string(1000, '\x01')).size(), 300u);
  EXPECT_EQ(util::ShortenForError("abcdefghijklmnopqrstuvwxyz", 11),
            "ab...uvwxyz");
  EXPECT_EQ(util::ShortenForError("short", 11), "short");
}

}  // namespace
}  // namespace cairn
