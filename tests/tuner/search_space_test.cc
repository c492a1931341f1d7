// Tests of SearchSpace: flattening, unit mapping per scale and type,
// conditional activity, parsing and canonical keys.
#include "tuner/search_space.h"

#include <cmath>
#include <map>
#include <string>

#include "cairn/v1/study.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace cairn::tuner {
namespace {

using cairn::v1::Parameter;
using cairn::v1::ParameterSpec;
using cairn::v1::StudySpec;
using ::testing::ElementsAre;

StudySpec ParseSpec(const std::string& text) {
  StudySpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec))
      << text;
  return spec;
}

SearchSpace MakeSpace(const std::string& text) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(ParseSpec(text));
  EXPECT_TRUE(space.ok()) << space.status();
  return *std::move(space);
}

// A single parameter space.
SearchSpace OneParam(const std::string& param_text) {
  return MakeSpace("parameters { parameter_id: \"x\" " + param_text + " }");
}

// opt (CATEGORICAL): sgd -> momentum (DOUBLE), sgd -> nest (CATEGORICAL)
// -> damp (INTEGER, when nest is "yes"), adam -> beta1 (DISCRETE); then lr
// (log DOUBLE).
constexpr char kConditional[] = R"pb(
  parameters {
    parameter_id: "opt"
    type: CATEGORICAL
    categorical_values: [ "sgd", "adam" ]
    conditional_parameter_specs {
      parameter_spec {
        parameter_id: "momentum"
        type: DOUBLE
        min_value: 0
        max_value: 0.99
      }
      parent_categorical_values: "sgd"
    }
    conditional_parameter_specs {
      parameter_spec {
        parameter_id: "nest"
        type: CATEGORICAL
        categorical_values: [ "no", "yes" ]
        conditional_parameter_specs {
          parameter_spec {
            parameter_id: "damp"
            type: INTEGER
            min_value: 0
            max_value: 3
          }
          parent_categorical_values: "yes"
        }
      }
      parent_categorical_values: "sgd"
    }
    conditional_parameter_specs {
      parameter_spec {
        parameter_id: "beta1"
        type: DISCRETE
        discrete_values: [ 0.8, 0.9 ]
      }
      parent_categorical_values: "adam"
    }
  }
  parameters {
    parameter_id: "lr"
    type: DOUBLE
    min_value: 1e-5
    max_value: 1
    scale_type: UNIT_LOG_SCALE
  }
)pb";

TEST(SearchSpaceTest, CreateRejectsInvalidSpace) {
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(StudySpec());
  EXPECT_EQ(space.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SearchSpaceTest, FlattensInPreOrder) {
  const SearchSpace space = MakeSpace(kConditional);
  ASSERT_EQ(space.size(), 6);
  std::vector<std::string> ids;
  for (const FlatParameter& f : space.parameters()) ids.push_back(f.id);
  EXPECT_THAT(ids,
              ElementsAre("opt", "momentum", "nest", "damp", "beta1", "lr"));
  EXPECT_TRUE(space.is_conditional());
  EXPECT_EQ(space.parameter(0).parent, -1);
  EXPECT_THAT(space.parameter(0).children, ElementsAre(1, 2, 4));
  EXPECT_EQ(space.parameter(3).parent, 2);
  EXPECT_EQ(space.parameter(3).depth, 2);
  EXPECT_THAT(space.parameter(3).parent_values, ElementsAre(1.0));  // "yes"
  EXPECT_THAT(space.parameter(4).parent_values, ElementsAre(1.0));  // "adam"
  EXPECT_EQ(space.parameter(5).scale, ParameterSpec::UNIT_LOG_SCALE);
  EXPECT_EQ(space.IndexOf("damp"), 3);
  EXPECT_EQ(space.IndexOf("nope"), -1);
  EXPECT_FALSE(OneParam("type: DOUBLE max_value: 1").is_conditional());
}

TEST(SearchSpaceTest, LinearDoubleMapping) {
  const SearchSpace s = OneParam("type: DOUBLE min_value: -2 max_value: 6");
  EXPECT_EQ(s.FromUnit(0, 0.0), -2.0);
  EXPECT_EQ(s.FromUnit(0, 1.0), 6.0);
  EXPECT_DOUBLE_EQ(s.FromUnit(0, 0.25), 0.0);
  EXPECT_DOUBLE_EQ(s.ToUnit(0, 4.0), 0.75);
  EXPECT_EQ(s.FromUnit(0, -3.0), -2.0);  // Clamped.
  EXPECT_EQ(s.FromUnit(0, 7.0), 6.0);
  for (double u = 0; u <= 1.0; u += 1.0 / 64) {
    EXPECT_NEAR(s.ToUnit(0, s.FromUnit(0, u)), u, 1e-12);
  }
}

TEST(SearchSpaceTest, LogDoubleMapping) {
  const SearchSpace s = OneParam(
      "type: DOUBLE min_value: 1e-4 max_value: 1 scale_type: UNIT_LOG_SCALE");
  EXPECT_EQ(s.FromUnit(0, 0.0), 1e-4);
  EXPECT_EQ(s.FromUnit(0, 1.0), 1.0);
  // Equal steps in the unit interval are equal ratios.
  EXPECT_NEAR(s.FromUnit(0, 0.5), 1e-2, 1e-15);
  EXPECT_NEAR(s.FromUnit(0, 0.25), 1e-3, 1e-16);
  EXPECT_NEAR(s.ToUnit(0, 1e-1), 0.75, 1e-12);
  for (double x : {1e-4, 3e-4, 0.01, 0.5, 1.0}) {
    EXPECT_NEAR(s.FromUnit(0, s.ToUnit(0, x)), x, x * 1e-12);
  }
}

TEST(SearchSpaceTest, ReverseLogDoubleMapping) {
  const SearchSpace s = OneParam(
      "type: DOUBLE min_value: 1 max_value: 100 scale_type: "
      "UNIT_REVERSE_LOG_SCALE");
  EXPECT_EQ(s.FromUnit(0, 0.0), 1.0);
  EXPECT_EQ(s.FromUnit(0, 1.0), 100.0);
  // Mirror of the log scale: the midpoint is min + max - geometric mean.
  EXPECT_NEAR(s.FromUnit(0, 0.5), 101.0 - 10.0, 1e-9);
  // Dense near max: the last tenth of the unit interval covers far less
  // than a tenth of the range, the first tenth far more.
  EXPECT_LT(100.0 - s.FromUnit(0, 0.9), 9.9);
  EXPECT_GT(s.FromUnit(0, 0.1) - 1.0, 9.9);
  for (double x : {1.0, 2.0, 50.0, 99.0, 99.99, 100.0}) {
    EXPECT_NEAR(s.FromUnit(0, s.ToUnit(0, x)), x, 1e-9);
  }
  for (double u = 0; u <= 1.0; u += 1.0 / 32) {
    EXPECT_NEAR(s.ToUnit(0, s.FromUnit(0, u)), u, 1e-9);
  }
}

TEST(SearchSpaceTest, IntegerMappingGivesEqualShares) {
  const SearchSpace s = OneParam("type: INTEGER min_value: -1 max_value: 2");
  std::map<double, int> hits;
  const int n = 4000;
  for (int k = 0; k < n; ++k) hits[s.FromUnit(0, (k + 0.5) / n)]++;
  ASSERT_EQ(hits.size(), 4u);
  for (const auto& [value, count] : hits) {
    EXPECT_EQ(value, std::floor(value));
    EXPECT_NEAR(count, n / 4, 2) << value;
  }
  for (double x = -1; x <= 2; ++x) EXPECT_EQ(s.FromUnit(0, s.ToUnit(0, x)), x);
  EXPECT_EQ(s.FromUnit(0, 0.0), -1.0);
  EXPECT_EQ(s.FromUnit(0, 1.0), 2.0);
}

TEST(SearchSpaceTest, LogIntegerRoundTrip) {
  for (const char* scale : {"UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE"}) {
    const SearchSpace s = OneParam(
        std::string("type: INTEGER min_value: 1 max_value: 1000 scale_type: ") +
        scale);
    for (double x = 1; x <= 1000; ++x) {
      ASSERT_EQ(s.FromUnit(0, s.ToUnit(0, x)), x) << scale;
    }
    EXPECT_EQ(s.FromUnit(0, 0.0), 1.0);
    EXPECT_EQ(s.FromUnit(0, 1.0), 1000.0);
  }
  const SearchSpace log = OneParam(
      "type: INTEGER min_value: 1 max_value: 1000 scale_type: UNIT_LOG_SCALE");
  // Log scale: small integers own far more of the unit interval.
  EXPECT_GT(log.ToUnit(0, 2) - log.ToUnit(0, 1), 0.05);
  EXPECT_LT(log.ToUnit(0, 1000) - log.ToUnit(0, 999), 0.001);
}

TEST(SearchSpaceTest, DiscreteMappingFollowsScale) {
  const SearchSpace linear =
      OneParam("type: DISCRETE discrete_values: [ 1, 2, 5, 11 ]");
  EXPECT_DOUBLE_EQ(linear.ToUnit(0, 1), 0.0);
  EXPECT_DOUBLE_EQ(linear.ToUnit(0, 2), 0.1);
  EXPECT_DOUBLE_EQ(linear.ToUnit(0, 5), 0.4);
  EXPECT_DOUBLE_EQ(linear.ToUnit(0, 11), 1.0);
  EXPECT_EQ(linear.FromUnit(0, 0.04), 1.0);
  EXPECT_EQ(linear.FromUnit(0, 0.06), 2.0);
  EXPECT_EQ(linear.FromUnit(0, 0.69), 5.0);
  EXPECT_EQ(linear.FromUnit(0, 0.71), 11.0);

  const SearchSpace log = OneParam(
      "type: DISCRETE discrete_values: [ 1e-4, 1e-3, 1e-2, 1e-1 ] "
      "scale_type: UNIT_LOG_SCALE");
  for (int k = 0; k < 4; ++k) {
    const double v = std::pow(10.0, k - 4);
    EXPECT_NEAR(log.ToUnit(0, log.parameter(0).discrete_values[k]), k / 3.0,
                1e-12);
    EXPECT_EQ(log.FromUnit(0, log.ToUnit(0, v)),
              log.parameter(0).discrete_values[k]);
  }
  // Evenly spaced positions: the end values own 1/6 of [0, 1] each, the
  // middle values 1/3 each.
  EXPECT_EQ(log.FromUnit(0, 0.16), 1e-4);
  EXPECT_EQ(log.FromUnit(0, 0.18), 1e-3);
  EXPECT_EQ(OneParam("type: DISCRETE discrete_values: 7").ToUnit(0, 7), 0.5);
  EXPECT_EQ(OneParam("type: DISCRETE discrete_values: 7").FromUnit(0, 0.9),
            7.0);
}

TEST(SearchSpaceTest, CategoricalCells) {
  const SearchSpace s =
      OneParam("type: CATEGORICAL categorical_values: [ \"a\", \"b\", \"c\" ]");
  EXPECT_EQ(s.parameter(0).scale, ParameterSpec::SCALE_TYPE_UNSPECIFIED);
  EXPECT_EQ(s.parameter(0).NumValues(), 3);
  EXPECT_DOUBLE_EQ(s.ToUnit(0, 0), 1.0 / 6);
  EXPECT_DOUBLE_EQ(s.ToUnit(0, 2), 5.0 / 6);
  EXPECT_EQ(s.FromUnit(0, 0.0), 0);
  EXPECT_EQ(s.FromUnit(0, 0.34), 1);
  EXPECT_EQ(s.FromUnit(0, 1.0), 2);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(s.FromUnit(0, s.ToUnit(0, k)), k);
}

TEST(SearchSpaceTest, SingleValuedRanges) {
  const SearchSpace d = OneParam("type: DOUBLE min_value: 3 max_value: 3");
  EXPECT_EQ(d.ToUnit(0, 3), 0.5);
  EXPECT_EQ(d.FromUnit(0, 0.1), 3.0);
  const SearchSpace i = OneParam("type: INTEGER min_value: 5 max_value: 5");
  EXPECT_EQ(i.FromUnit(0, 0.0), 5.0);
  EXPECT_EQ(i.FromUnit(0, 1.0), 5.0);
  EXPECT_EQ(i.ToUnit(0, 5), 0.5);
}

TEST(SearchSpaceTest, ActivityFollowsParentValues) {
  const SearchSpace space = MakeSpace(kConditional);
  // opt = sgd (u < 0.5), nest = yes (u >= 0.5).
  Assignment a = space.AssignmentFromUnit({0.1, 0.5, 0.9, 0.6, 0.3, 0.5});
  EXPECT_THAT(a.active, ElementsAre(true, true, true, true, false, true));
  EXPECT_EQ(a.values[3], 2.0);  // damp: 0.6 of [-0.5, 3.5] -> 1.9 -> 2.
  EXPECT_TRUE(space.IsActive(3, a));
  a.values[2] = 0;  // nest = no deactivates damp.
  EXPECT_FALSE(space.IsActive(3, a));
  a.values[0] = 1;  // opt = adam: momentum and nest off, beta1 on.
  EXPECT_FALSE(space.IsActive(1, a));
  EXPECT_TRUE(space.IsActive(4, a));
  a.active[2] = false;  // An inactive parent deactivates its children.
  a.values[2] = 1;
  EXPECT_FALSE(space.IsActive(3, a));

  const Assignment adam =
      space.AssignmentFromUnit({0.7, 0.5, 0.9, 0.6, 0.3, 0.5});
  EXPECT_THAT(adam.active, ElementsAre(true, false, false, false, true, true));
}

TEST(SearchSpaceTest, ToParametersListsActiveOnly) {
  const SearchSpace space = MakeSpace(kConditional);
  const Suggestion s = space.SuggestionFromUnit({0.1, 0.5, 0.9, 0.6, 0.3, 0.5});
  ASSERT_EQ(s.parameters.size(), 5u);
  EXPECT_EQ(s.parameters[0].parameter_id(), "opt");
  EXPECT_EQ(s.parameters[0].value().string_value(), "sgd");
  EXPECT_EQ(s.parameters[3].parameter_id(), "damp");
  EXPECT_EQ(s.parameters[3].value().number_value(), 2.0);
  EXPECT_EQ(s.parameters[4].parameter_id(), "lr");
  EXPECT_NEAR(s.parameters[4].value().number_value(), std::pow(10, -2.5),
              1e-15);
  const Suggestion adam =
      space.SuggestionFromUnit({0.7, 0.5, 0.9, 0.6, 0.3, 0.5});
  ASSERT_EQ(adam.parameters.size(), 3u);
  EXPECT_EQ(adam.parameters[1].parameter_id(), "beta1");
  EXPECT_EQ(adam.parameters[1].value().number_value(), 0.8);
}

TEST(SearchSpaceTest, TrialToUnitPointRoundTrip) {
  const SearchSpace space = MakeSpace(kConditional);
  const std::vector<double> unit = {0.2, 0.25, 0.3, 0.9, 0.7, 0.125};
  const Suggestion s = space.SuggestionFromUnit(unit);
  cairn::v1::Trial trial;
  // Reversed order: parsing does not depend on it.
  for (auto it = s.parameters.rbegin(); it != s.parameters.rend(); ++it) {
    *trial.add_parameters() = *it;
  }
  absl::StatusOr<UnitPoint> p = space.TrialToUnitPoint(trial);
  ASSERT_TRUE(p.ok()) << p.status();
  // opt = sgd, nest = no: damp and beta1 inactive, encoded as 0.5.
  EXPECT_THAT(p->active, ElementsAre(true, true, true, false, false, true));
  EXPECT_DOUBLE_EQ(p->unit[0], 0.25);  // Cell center of "sgd".
  EXPECT_NEAR(p->unit[1], 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(p->unit[2], 0.25);  // Cell center of "no".
  EXPECT_EQ(p->unit[3], 0.5);
  EXPECT_EQ(p->unit[4], 0.5);
  EXPECT_NEAR(p->unit[5], 0.125, 1e-12);
  // Decoding the encoded point gives the same parameters back.
  const Suggestion again = space.SuggestionFromUnit(p->unit);
  EXPECT_EQ(SearchSpace::CanonicalKey(again.parameters),
            SearchSpace::CanonicalKey(trial.parameters()));

  trial.mutable_parameters(0)->mutable_value()->set_number_value(5.0);  // lr
  EXPECT_EQ(space.TrialToUnitPoint(trial).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SearchSpaceTest, ParseParametersGivesNativeValues) {
  const SearchSpace space = MakeSpace(kConditional);
  std::vector<Parameter> params(3);
  params[0].set_parameter_id("lr");
  params[0].mutable_value()->set_number_value(0.001);
  params[1].set_parameter_id("opt");
  params[1].mutable_value()->set_string_value("adam");
  params[2].set_parameter_id("beta1");
  params[2].mutable_value()->set_number_value(0.9);
  absl::StatusOr<Assignment> a = space.ParseParameters(params);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->active, ElementsAre(true, false, false, false, true, true));
  EXPECT_EQ(a->values[0], 1.0);
  EXPECT_EQ(a->values[4], 0.9);
  EXPECT_EQ(a->values[5], 0.001);
  EXPECT_EQ(space.Key(*a), SearchSpace::CanonicalKey(params));
}

TEST(SearchSpaceTest, CanonicalKeyIgnoresOrderAndSeparatesValues) {
  std::vector<Parameter> a(2);
  a[0].set_parameter_id("x");
  a[0].mutable_value()->set_number_value(0.1);
  a[1].set_parameter_id("y");
  a[1].mutable_value()->set_string_value("b");
  std::vector<Parameter> b = {a[1], a[0]};
  EXPECT_EQ(SearchSpace::CanonicalKey(a), SearchSpace::CanonicalKey(b));

  b[1].mutable_value()->set_number_value(std::nextafter(0.1, 1.0));
  EXPECT_NE(SearchSpace::CanonicalKey(a), SearchSpace::CanonicalKey(b));
  b[1].mutable_value()->set_number_value(0.1);
  b[0].mutable_value()->set_string_value("0.1");  // String vs number.
  EXPECT_NE(SearchSpace::CanonicalKey(a), SearchSpace::CanonicalKey(b));
  b[0].mutable_value()->set_number_value(0.1);
  EXPECT_NE(SearchSpace::CanonicalKey(a), SearchSpace::CanonicalKey(b));

  std::vector<Parameter> zero(1), minus_zero(1);
  zero[0].set_parameter_id("x");
  zero[0].mutable_value()->set_number_value(0.0);
  minus_zero[0].set_parameter_id("x");
  minus_zero[0].mutable_value()->set_number_value(-0.0);
  EXPECT_EQ(SearchSpace::CanonicalKey(zero),
            SearchSpace::CanonicalKey(minus_zero));
  // A subset is a different point.
  EXPECT_NE(SearchSpace::CanonicalKey(a),
            SearchSpace::CanonicalKey(std::vector<Parameter>{a[0]}));
}

}  // namespace
}  // namespace cairn::tuner
