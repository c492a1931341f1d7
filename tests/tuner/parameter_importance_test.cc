// Tests of the random forest and of fANOVA parameter importance on
// synthetic studies whose answer is known.
#include "tuner/parameter_importance.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tuner/random_forest.h"

namespace cairn::tuner {
namespace {

using cairn::v1::StudySpec;
using cairn::v1::Trial;
using ::testing::DoubleNear;
using ::testing::HasSubstr;

StudySpec Spec() {
  StudySpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters { parameter_id: "x" type: DOUBLE min_value: 0 max_value: 1 }
        parameters {
          parameter_id: "noise"
          type: DOUBLE
          min_value: 0
          max_value: 1
        }
        parameters {
          parameter_id: "lr"
          type: DOUBLE
          min_value: 1e-5
          max_value: 1
          scale_type: UNIT_LOG_SCALE
        }
        parameters {
          parameter_id: "opt"
          type: CATEGORICAL
          categorical_values: [ "sgd", "adam" ]
        }
        metrics { metric_id: "loss" goal: MINIMIZE }
        metrics { metric_id: "acc" goal: MAXIMIZE }
      )pb",
      &spec));
  return spec;
}

Trial MakeTrial(int id, double x, double noise, double lr, bool adam,
                double loss) {
  Trial t;
  t.set_id(id);
  t.set_state(Trial::SUCCEEDED);
  auto add = [&](const std::string& name, double v) {
    auto* p = t.add_parameters();
    p->set_parameter_id(name);
    p->mutable_value()->set_number_value(v);
  };
  add("x", x);
  add("noise", noise);
  add("lr", lr);
  auto* opt = t.add_parameters();
  opt->set_parameter_id("opt");
  opt->mutable_value()->set_string_value(adam ? "adam" : "sgd");
  auto* m = t.mutable_final_measurement()->add_metrics();
  m->set_metric_id("loss");
  m->set_value(loss);
  return t;
}

// Trials with random parameters whose loss is `f(x, noise, lr, adam)`.
template <typename F>
std::vector<Trial> Study(int n, F f) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Trial> trials;
  for (int i = 0; i < n; ++i) {
    const double x = u(rng), noise = u(rng), lr = std::pow(10, -5 * u(rng));
    const bool adam = u(rng) < 0.5;
    trials.push_back(
        MakeTrial(i + 1, x, noise, lr, adam, f(x, noise, lr, adam)));
  }
  return trials;
}

double Importance(const ImportanceReport& r, const std::string& id) {
  for (const auto& p : r.parameters) {
    if (p.parameter_id == id) return p.importance;
  }
  ADD_FAILURE() << "no parameter " << id;
  return -1;
}

TEST(ParameterImportanceTest, TheParameterThatMattersDominates) {
  std::vector<Trial> trials = Study(200, [](double x, double, double, bool) {
    return 10 * (x - 0.3) * (x - 0.3);
  });
  absl::StatusOr<ImportanceReport> r =
      ComputeParameterImportance(Spec(), trials, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->metric_id, "loss");
  EXPECT_EQ(r->trial_count, 200);
  ASSERT_EQ(r->parameters.size(), 4u);
  EXPECT_GT(Importance(*r, "x"), 0.8);
  EXPECT_LT(Importance(*r, "noise"), 0.05);
  EXPECT_LT(Importance(*r, "lr"), 0.05);
  EXPECT_LT(Importance(*r, "opt"), 0.05);
}

TEST(ParameterImportanceTest, LogAndCategoricalParametersAreSeen) {
  // The loss is linear in log10(lr), plus 1 for sgd.
  std::vector<Trial> trials =
      Study(300, [](double, double, double lr, bool adam) {
        return -std::log10(lr) / 5 + (adam ? 0.0 : 1.0);
      });
  absl::StatusOr<ImportanceReport> r =
      ComputeParameterImportance(Spec(), trials, "loss");
  ASSERT_TRUE(r.ok()) << r.status();
  // Uniform in log10(lr) over 5 decades: variance 1/12; sgd/adam: 1/4.
  EXPECT_THAT(Importance(*r, "lr"), DoubleNear(0.25, 0.1));
  EXPECT_THAT(Importance(*r, "opt"), DoubleNear(0.75, 0.1));
  EXPECT_LT(Importance(*r, "x"), 0.05);
}

TEST(ParameterImportanceTest, RefusesTooFewTrialsAndUnknownMetrics) {
  std::vector<Trial> trials =
      Study(3, [](double x, double, double, bool) { return x; });
  absl::StatusOr<ImportanceReport> r =
      ComputeParameterImportance(Spec(), trials, "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("at least 4 SUCCEEDED"));
  // A trial that is not SUCCEEDED does not count.
  trials = Study(6, [](double x, double, double, bool) { return x; });
  for (int i = 0; i < 3; ++i) trials[i].set_state(Trial::FAILED);
  EXPECT_EQ(ComputeParameterImportance(Spec(), trials, "").status().code(),
            absl::StatusCode::kFailedPrecondition);
  r = ComputeParameterImportance(Spec(), trials, "<b>nope</b>");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("metric_id \"<b>nope</b>\" is not a metric of the "
                        "study (loss, acc)"));
}

TEST(ParameterImportanceTest, FitsOnlyTheLastTrialsWithinTheBudget) {
  std::vector<Trial> trials =
      Study(50, [](double x, double, double, bool) { return x; });
  ImportanceOptions options;
  options.max_coordinates = 40;  // 4 parameters: 10 trials.
  absl::StatusOr<ImportanceReport> r =
      ComputeParameterImportance(Spec(), trials, "", options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->trial_count, 10);
  options.max_trials = 6;
  EXPECT_EQ(
      ComputeParameterImportance(Spec(), trials, "", options)->trial_count, 6);
  options.max_coordinates = 1;  // Never below the minimum.
  EXPECT_EQ(
      ComputeParameterImportance(Spec(), trials, "", options)->trial_count,
      kMinImportanceTrials);
  // The last trials: the first 40 are made constant, which would give no
  // importance at all if they were the ones fitted.
  for (int i = 0; i < 40; ++i) {
    trials[i].mutable_final_measurement()->mutable_metrics(0)->set_value(0);
  }
  r = ComputeParameterImportance(Spec(), trials, "", ImportanceOptions{{}, 10});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(Importance(*r, "x"), 0.5);
}

TEST(TreeMainEffectsTest, SplitsVarianceIntoMainEffects) {
  // x0 < 0.5 -> 0, else 1: all variance is x0's.
  Tree step = {{0, 0.5, 1, 2, 0.5}, {-1, 0, -1, -1, 0.0}, {-1, 0, -1, -1, 1.0}};
  EXPECT_THAT(TreeMainEffects(step, 2), ::testing::ElementsAre(1.0, 0.0));
  // XOR of x0 and x1: no main effect at all, only interaction.
  Tree xor_tree = {{0, 0.5, 1, 4, 0.5},  {1, 0.5, 2, 3, 0.5},
                   {-1, 0, -1, -1, 0.0}, {-1, 0, -1, -1, 1.0},
                   {1, 0.5, 5, 6, 0.5},  {-1, 0, -1, -1, 1.0},
                   {-1, 0, -1, -1, 0.0}};
  for (double s : TreeMainEffects(xor_tree, 2)) EXPECT_NEAR(s, 0.0, 1e-12);
  Tree constant = {{-1, 0, -1, -1, 3.0}};
  EXPECT_THAT(TreeMainEffects(constant, 2), ::testing::ElementsAre(0.0, 0.0));
}

TEST(RandomForestTest, FitsAStepAndRefusesBadInput) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (int i = 0; i < 40; ++i) {
    x.push_back({i / 40.0});
    y.push_back(i < 20 ? 0.0 : 1.0);
  }
  absl::StatusOr<RandomForest> f = RandomForest::Fit(x, y, 1);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_LT(f->Predict({0.1}), 0.2);
  EXPECT_GT(f->Predict({0.9}), 0.8);
  EXPECT_EQ(RandomForest::Fit(x, {1.0}, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  x[3] = {0.1, 0.2};
  EXPECT_THAT(RandomForest::Fit(x, y, 1).status().message(),
              HasSubstr("sample 3 has 2 coordinates"));
  x[3] = {NAN};
  EXPECT_EQ(RandomForest::Fit(x, y, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cairn::tuner
