// Tests of the random, quasi-random and grid designers and of CreateDesigner:
// determinism, validity of every suggestion, scale handling, space coverage,
// grid exhaustion, duplicate avoidance and continuation after a restart.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"
#include "tuner/designer.h"
#include "tuner/grid_designer.h"
#include "tuner/search_space.h"
#include "tuner/spec_validation.h"

namespace cairn::tuner {
namespace {

using cairn::v1::StudySpec;
using cairn::v1::Trial;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

StudySpec ParseSpec(const std::string& text) {
  StudySpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec))
      << text;
  EXPECT_TRUE(ValidateStudySpec(spec).ok()) << ValidateStudySpec(spec);
  return spec;
}

StudySpec MixedSpec(StudySpec::Algorithm algorithm, int64_t seed) {
  StudySpec spec = testing::MixedSpaceSpec();
  EXPECT_TRUE(ValidateStudySpec(spec).ok()) << ValidateStudySpec(spec);
  spec.set_algorithm(algorithm);
  spec.set_seed(seed);
  return spec;
}

std::unique_ptr<Designer> MustCreate(const StudySpec& spec) {
  absl::StatusOr<std::unique_ptr<Designer>> d = CreateDesigner(spec);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : nullptr;
}

// The trials of one study, as cairnd would hold them.
class Study {
 public:
  explicit Study(StudySpec spec) : spec_(std::move(spec)) {}

  // Adds a trial with the next id (ids start at 1).
  void Add(const std::vector<cairn::v1::Parameter>& params,
           Trial::State state = Trial::ACTIVE) {
    Trial& t = trials_.emplace_back();
    t.set_id(static_cast<int64_t>(trials_.size()));
    t.set_state(state);
    for (const auto& p : params) *t.add_parameters() = p;
    if (state == Trial::SUCCEEDED) {
      auto* m = t.mutable_final_measurement()->add_metrics();
      m->set_metric_id("loss");
      m->set_value(1.0);
    }
  }
  void AddAll(const std::vector<Suggestion>& suggestions,
              Trial::State state = Trial::ACTIVE) {
    for (const Suggestion& s : suggestions) Add(s.parameters, state);
  }

  DesignerContext Context() const {
    DesignerContext c;
    c.spec = &spec_;
    for (const Trial& t : trials_) c.trials.push_back(&t);
    c.pending = PendingAmong(c.trials);
    return c;
  }

  std::vector<Suggestion> Suggest(Designer& designer, int count) const {
    absl::StatusOr<std::vector<Suggestion>> s =
        designer.Suggest(Context(), count);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : std::vector<Suggestion>{};
  }

  const StudySpec& spec() const { return spec_; }

 private:
  const StudySpec spec_;
  std::deque<Trial> trials_;  // Stable addresses.
};

std::vector<std::string> Keys(const std::vector<Suggestion>& suggestions) {
  std::vector<std::string> keys;
  for (const Suggestion& s : suggestions) {
    keys.push_back(SearchSpace::CanonicalKey(s.parameters));
  }
  return keys;
}

// Value of parameter `id` in a suggestion, or NaN if absent.
double Number(const Suggestion& s, const std::string& id) {
  for (const auto& p : s.parameters) {
    if (p.parameter_id() == id) return p.value().number_value();
  }
  return std::nan("");
}

std::string String(const Suggestion& s, const std::string& id) {
  for (const auto& p : s.parameters) {
    if (p.parameter_id() == id) return p.value().string_value();
  }
  return "";
}

// --- CreateDesigner ---

TEST(CreateDesignerTest, CreatesEveryAvailableAlgorithm) {
  for (auto algorithm :
       {StudySpec::ALGORITHM_UNSPECIFIED, StudySpec::RANDOM_SEARCH,
        StudySpec::QUASI_RANDOM_SEARCH, StudySpec::GRID_SEARCH,
        StudySpec::GP_BANDIT}) {
    absl::StatusOr<std::unique_ptr<Designer>> d =
        CreateDesigner(MixedSpec(algorithm, 1));
    EXPECT_TRUE(d.ok()) << algorithm << ": " << d.status();
  }
}

TEST(CreateDesignerTest, UnspecifiedIsGpBandit) {
  Study unspecified(MixedSpec(StudySpec::ALGORITHM_UNSPECIFIED, 5));
  Study quasi(MixedSpec(StudySpec::GP_BANDIT, 5));
  auto a = MustCreate(unspecified.spec());
  auto b = MustCreate(quasi.spec());
  EXPECT_EQ(Keys(unspecified.Suggest(*a, 8)), Keys(quasi.Suggest(*b, 8)));
}

TEST(CreateDesignerTest, UnknownAlgorithm) {
  StudySpec spec = MixedSpec(StudySpec::RANDOM_SEARCH, 1);
  spec.set_algorithm(static_cast<StudySpec::Algorithm>(99));
  absl::StatusOr<std::unique_ptr<Designer>> d = CreateDesigner(spec);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("99"));
}

TEST(CreateDesignerTest, InvalidSpaceIsRejected) {
  StudySpec spec = MixedSpec(StudySpec::RANDOM_SEARCH, 1);
  spec.mutable_parameters(1)->set_min_value(100);
  EXPECT_EQ(CreateDesigner(spec).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// --- Random and quasi-random designers ---

class SequenceDesignerTest
    : public ::testing::TestWithParam<StudySpec::Algorithm> {};

TEST_P(SequenceDesignerTest, RejectsNonPositiveCount) {
  Study study(MixedSpec(GetParam(), 1));
  auto d = MustCreate(study.spec());
  EXPECT_EQ(d->Suggest(study.Context(), 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(SequenceDesignerTest, DeterministicPerSeed) {
  Study a(MixedSpec(GetParam(), 7)), b(MixedSpec(GetParam(), 7));
  Study c(MixedSpec(GetParam(), 8));
  auto da = MustCreate(a.spec()), db = MustCreate(b.spec()),
       dc = MustCreate(c.spec());
  const auto ka = Keys(a.Suggest(*da, 10));
  EXPECT_EQ(ka, Keys(b.Suggest(*db, 10)));
  const auto kc = Keys(c.Suggest(*dc, 10));
  EXPECT_NE(ka, kc);
  // Not just a permutation of each other either.
  EXPECT_NE(std::set<std::string>(ka.begin(), ka.end()),
            std::set<std::string>(kc.begin(), kc.end()));
  EXPECT_EQ(std::set<std::string>(ka.begin(), ka.end()).size(), 10u);
}

TEST_P(SequenceDesignerTest, EverySuggestionIsValidAndCoversTheSpace) {
  Study study(MixedSpec(GetParam(), 3));
  auto d = MustCreate(study.spec());
  std::vector<Suggestion> all;
  for (int batch = 0; batch < 12; ++batch) {
    std::vector<Suggestion> s = study.Suggest(*d, 50);
    ASSERT_EQ(s.size(), 50u);
    study.AddAll(s, batch % 2 ? Trial::SUCCEEDED : Trial::ACTIVE);
    all.insert(all.end(), s.begin(), s.end());
  }
  std::map<std::string, int> opts;
  std::set<double> layers, batch_sizes, betas;
  int sgd = 0;
  for (const Suggestion& s : all) {
    // Types, bounds, sets and conditional activity in one check.
    ASSERT_TRUE(ValidateTrialParameters(study.spec(), s.parameters).ok())
        << ValidateTrialParameters(study.spec(), s.parameters);
    const std::string opt = String(s, "opt");
    opts[opt]++;
    if (opt == "sgd") {
      ++sgd;
      EXPECT_FALSE(std::isnan(Number(s, "momentum")));
      EXPECT_TRUE(std::isnan(Number(s, "beta1")));
    } else {
      EXPECT_TRUE(std::isnan(Number(s, "momentum")));
      betas.insert(Number(s, "beta1"));
    }
    layers.insert(Number(s, "layers"));
    batch_sizes.insert(Number(s, "batch"));
  }
  EXPECT_EQ(opts.size(), 2u);
  EXPECT_NEAR(sgd, 300, 45);
  EXPECT_EQ(layers.size(), 8u);
  EXPECT_EQ(*layers.begin(), 1.0);
  EXPECT_EQ(*layers.rbegin(), 8.0);
  EXPECT_EQ(batch_sizes.size(), 4u);
  EXPECT_EQ(betas.size(), 3u);
}

TEST_P(SequenceDesignerTest, LogScaleIsLogUniform) {
  Study study(MixedSpec(GetParam(), 11));
  auto d = MustCreate(study.spec());
  const std::vector<Suggestion> s = study.Suggest(*d, 1000);
  ASSERT_EQ(s.size(), 1000u);
  std::vector<double> log_lr;
  int below_1e3 = 0;
  for (const Suggestion& x : s) {
    log_lr.push_back(std::log10(Number(x, "lr")));
    if (Number(x, "lr") < 1e-3) ++below_1e3;
  }
  std::nth_element(log_lr.begin(), log_lr.begin() + 500, log_lr.end());
  // Median near the geometric mean 10^-2.5 of [1e-4, 1e-1]; a linear scale
  // would put it near 0.05 (log10 = -1.3).
  EXPECT_NEAR(log_lr[500], -2.5, 0.15);
  // A third of the log range lies below 1e-3.
  EXPECT_NEAR(below_1e3, 333, 60);
}

TEST_P(SequenceDesignerTest, ContinuesAfterRestart) {
  const StudySpec spec = MixedSpec(GetParam(), 21);
  Study uninterrupted(spec);
  const auto expected = Keys(uninterrupted.Suggest(*MustCreate(spec), 12));

  // A cairnd that handed out 5 trials, restarted, and is asked for 7 more.
  Study restarted(spec);
  auto first = MustCreate(spec);
  const std::vector<Suggestion> head = restarted.Suggest(*first, 5);
  restarted.AddAll({head.begin(), head.begin() + 2}, Trial::SUCCEEDED);
  restarted.AddAll({head.begin() + 2, head.end()}, Trial::ACTIVE);
  first.reset();
  auto second = MustCreate(spec);
  std::vector<std::string> got = Keys(head);
  for (const std::string& k : Keys(restarted.Suggest(*second, 7))) {
    got.push_back(k);
  }
  EXPECT_EQ(got, expected);

  // One at a time gives the same sequence as one batch.
  Study single(spec);
  auto d = MustCreate(spec);
  std::vector<std::string> one_by_one;
  for (int i = 0; i < 12; ++i) {
    const std::vector<Suggestion> s = single.Suggest(*d, 1);
    ASSERT_EQ(s.size(), 1u);
    one_by_one.push_back(Keys(s)[0]);
    single.AddAll(s);
  }
  EXPECT_EQ(one_by_one, expected);
}

TEST_P(SequenceDesignerTest, AvoidsPendingTrials) {
  StudySpec spec = ParseSpec(R"pb(
    parameters {
      parameter_id: "c"
      type: CATEGORICAL
      categorical_values: [ "a", "b", "c" ]
    }
    metrics { metric_id: "loss" goal: MINIMIZE }
  )pb");
  spec.set_algorithm(GetParam());
  auto d = MustCreate(spec);
  Study study(spec);
  // A batch of 3 over 3 values: all distinct.
  const std::vector<Suggestion> three = study.Suggest(*d, 5);
  ASSERT_EQ(three.size(), 3u);
  const auto keys = Keys(three);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 3u);

  // The first value finished, the other two pending: only the finished one
  // may be proposed again.
  study.Add(three[0].parameters, Trial::SUCCEEDED);
  study.Add(three[1].parameters, Trial::ACTIVE);
  study.Add(three[2].parameters, Trial::REQUESTED);
  const std::vector<Suggestion> again = study.Suggest(*d, 2);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(String(again[0], "c"), String(three[0], "c"));
  // Every value pending now: nothing left to propose.
  study.Add(again[0].parameters, Trial::STOPPING);
  EXPECT_TRUE(study.Suggest(*d, 1).empty());
}

INSTANTIATE_TEST_SUITE_P(Algorithms, SequenceDesignerTest,
                         ::testing::Values(StudySpec::RANDOM_SEARCH,
                                           StudySpec::QUASI_RANDOM_SEARCH),
                         [](const auto& info) {
                           return StudySpec::Algorithm_Name(info.param);
                         });

// L2-star discrepancy of points in [0, 1]^d (Warnock's formula).
double L2StarDiscrepancy(const std::vector<std::vector<double>>& x) {
  const size_t n = x.size(), d = x[0].size();
  double sum1 = 0, sum2 = 0;
  for (size_t i = 0; i < n; ++i) {
    double p = 1;
    for (size_t k = 0; k < d; ++k) p *= 1 - x[i][k] * x[i][k];
    sum1 += p;
    for (size_t j = 0; j < n; ++j) {
      double q = 1;
      for (size_t k = 0; k < d; ++k) q *= 1 - std::max(x[i][k], x[j][k]);
      sum2 += q;
    }
  }
  const double dd = static_cast<double>(d);
  return std::sqrt(std::pow(3.0, -dd) -
                   std::pow(2.0, 1 - dd) / static_cast<double>(n) * sum1 +
                   sum2 / static_cast<double>(n * n));
}

double MeanDiscrepancy(StudySpec::Algorithm algorithm, int dims, int n) {
  std::string text;
  for (int k = 0; k < dims; ++k) {
    text += "parameters { parameter_id: \"x" + std::to_string(k) +
            "\" type: DOUBLE max_value: 1 } ";
  }
  text += "metrics { metric_id: \"y\" goal: MAXIMIZE }";
  double total = 0;
  const int seeds = 4;
  for (int seed = 1; seed <= seeds; ++seed) {
    StudySpec spec = ParseSpec(text);
    spec.set_algorithm(algorithm);
    spec.set_seed(seed);
    Study study(spec);
    const std::vector<Suggestion> s = study.Suggest(*MustCreate(spec), n);
    std::vector<std::vector<double>> points;
    for (const Suggestion& p : s) {
      std::vector<double>& x = points.emplace_back();
      for (int k = 0; k < dims; ++k) {
        x.push_back(Number(p, "x" + std::to_string(k)));
      }
    }
    total += L2StarDiscrepancy(points);
  }
  return total / seeds;
}

TEST(QuasiRandomDesignerTest, CoversTheSpaceBetterThanRandom) {
  // Halton's advantage grows with n / (log n)^d: 5 dimensions need more
  // points than 2 for the same margin (about 0.4x at these sizes).
  for (auto [dims, n] : {std::pair<int, int>{2, 256}, {5, 1024}}) {
    const double quasi =
        MeanDiscrepancy(StudySpec::QUASI_RANDOM_SEARCH, dims, n);
    const double random = MeanDiscrepancy(StudySpec::RANDOM_SEARCH, dims, n);
    EXPECT_LT(quasi, 0.5 * random)
        << dims << " dims: quasi " << quasi << " random " << random;
  }
}

// --- Grid designer ---

std::unique_ptr<GridDesigner> MustCreateGrid(const StudySpec& spec) {
  absl::StatusOr<std::unique_ptr<GridDesigner>> g = GridDesigner::Create(spec);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : nullptr;
}

StudySpec GridSpec(const std::string& params) {
  StudySpec spec = ParseSpec(params + " metrics { metric_id: \"loss\" " +
                             "goal: MINIMIZE } algorithm: GRID_SEARCH");
  return spec;
}

constexpr char kSmallGrid[] = R"pb(
  parameters {
    parameter_id: "x"
    type: DOUBLE
    min_value: 0
    max_value: 1
    grid_resolution: 3
  }
  parameters { parameter_id: "n" type: INTEGER min_value: 1 max_value: 4 }
  parameters {
    parameter_id: "c"
    type: CATEGORICAL
    categorical_values: [ "a", "b" ]
  }
)pb";

TEST(GridDesignerTest, VisitsEveryPointOnceThenStops) {
  const StudySpec spec = GridSpec(kSmallGrid);
  auto grid = MustCreateGrid(spec);
  EXPECT_EQ(grid->size(), 24u);
  EXPECT_THAT(grid->values(0), ElementsAre(0.0, 0.5, 1.0));
  Study study(spec);
  std::set<std::string> seen;
  for (int call = 0; call < 5; ++call) {
    const std::vector<Suggestion> s = study.Suggest(*grid, 5);
    EXPECT_EQ(s.size(), call < 4 ? 5u : 4u);
    for (const Suggestion& p : s) {
      EXPECT_TRUE(ValidateTrialParameters(spec, p.parameters).ok());
      EXPECT_TRUE(seen.insert(SearchSpace::CanonicalKey(p.parameters)).second);
    }
    study.AddAll(s, call % 2 ? Trial::FAILED : Trial::SUCCEEDED);
  }
  EXPECT_EQ(seen.size(), 24u);
  EXPECT_TRUE(study.Suggest(*grid, 1).empty());
  EXPECT_TRUE(study.Suggest(*MustCreate(spec), 3).empty());
}

TEST(GridDesignerTest, LexicographicOrder) {
  const StudySpec spec = GridSpec(kSmallGrid);
  Study study(spec);
  const std::vector<Suggestion> s = study.Suggest(*MustCreateGrid(spec), 24);
  ASSERT_EQ(s.size(), 24u);
  // The last parameter varies fastest.
  EXPECT_EQ(String(s[0], "c"), "a");
  EXPECT_EQ(String(s[1], "c"), "b");
  EXPECT_EQ(Number(s[1], "n"), 1);
  EXPECT_EQ(Number(s[2], "n"), 2);
  EXPECT_EQ(Number(s[7], "n"), 4);
  EXPECT_EQ(Number(s[7], "x"), 0);
  EXPECT_EQ(Number(s[8], "x"), 0.5);
  EXPECT_EQ(Number(s[8], "n"), 1);
  EXPECT_EQ(Number(s[23], "x"), 1);
}

TEST(GridDesignerTest, ConditionalGridHasOnlyValidCombinations) {
  const StudySpec spec = GridSpec(R"pb(
    parameters {
      parameter_id: "opt"
      type: CATEGORICAL
      categorical_values: [ "sgd", "adam" ]
      conditional_parameter_specs {
        parameter_spec {
          parameter_id: "momentum"
          type: DOUBLE
          min_value: 0
          max_value: 0.9
          grid_resolution: 3
        }
        parent_categorical_values: "sgd"
      }
      conditional_parameter_specs {
        parameter_spec {
          parameter_id: "beta1"
          type: DISCRETE
          discrete_values: [ 0.9, 0.99 ]
        }
        parent_categorical_values: "adam"
      }
    }
    parameters {
      parameter_id: "lr"
      type: DOUBLE
      min_value: 1e-3
      max_value: 1e-1
      scale_type: UNIT_LOG_SCALE
      grid_resolution: 3
    }
  )pb");
  auto grid = MustCreateGrid(spec);
  // (3 momentum values + 2 beta1 values) * 3 lr values.
  EXPECT_EQ(grid->size(), 15u);
  ASSERT_EQ(grid->values(3).size(), 3u);
  EXPECT_EQ(grid->values(3)[0], 1e-3);
  EXPECT_NEAR(grid->values(3)[1], 1e-2, 1e-15);  // Log-spaced.
  EXPECT_EQ(grid->values(3)[2], 1e-1);
  Study study(spec);
  const std::vector<Suggestion> s = study.Suggest(*grid, 100);
  ASSERT_EQ(s.size(), 15u);
  const auto keys = Keys(s);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 15u);
  int with_momentum = 0, with_beta = 0;
  for (const Suggestion& p : s) {
    EXPECT_TRUE(ValidateTrialParameters(spec, p.parameters).ok())
        << ValidateTrialParameters(spec, p.parameters);
    with_momentum += !std::isnan(Number(p, "momentum"));
    with_beta += !std::isnan(Number(p, "beta1"));
  }
  EXPECT_EQ(with_momentum, 9);
  EXPECT_EQ(with_beta, 6);
}

TEST(GridDesignerTest, NeverRepeatsAnExistingTrial) {
  const StudySpec spec = GridSpec(kSmallGrid);
  auto grid = MustCreateGrid(spec);
  Study study(spec);
  const SearchSpace space = *SearchSpace::Create(spec);
  // A failed trial at grid point 3 and a manual trial off the grid.
  study.Add(space.ToParameters(grid->PointAt(3)), Trial::FAILED);
  std::vector<cairn::v1::Parameter> off_grid =
      space.ToParameters(grid->PointAt(0));
  off_grid[0].mutable_value()->set_number_value(0.25);
  study.Add(off_grid, Trial::SUCCEEDED);
  const std::vector<Suggestion> s = study.Suggest(*grid, 100);
  EXPECT_EQ(s.size(), 23u);
  const std::string skipped =
      SearchSpace::CanonicalKey(space.ToParameters(grid->PointAt(3)));
  for (const std::string& k : Keys(s)) EXPECT_NE(k, skipped);
}

TEST(GridDesignerTest, ContinuesAfterRestart) {
  const StudySpec spec = GridSpec(kSmallGrid);
  Study uninterrupted(spec);
  const auto expected = Keys(uninterrupted.Suggest(*MustCreate(spec), 10));
  Study restarted(spec);
  const std::vector<Suggestion> head = restarted.Suggest(*MustCreate(spec), 4);
  restarted.AddAll(head, Trial::ACTIVE);
  std::vector<std::string> got = Keys(head);
  for (const auto& k : Keys(restarted.Suggest(*MustCreate(spec), 6))) {
    got.push_back(k);
  }
  EXPECT_EQ(got, expected);
}

TEST(GridDesignerTest, IntegerGridChoices) {
  // Small range, default resolution: every integer.
  EXPECT_EQ(MustCreateGrid(GridSpec(R"pb(parameters {
                                           parameter_id: "k"
                                           type: INTEGER
                                           min_value: 0
                                           max_value: 999
                                         })pb"))
                ->size(),
            1000u);
  // Large range: 10 evenly spaced (log-scaled) points including the bounds,
  // plus the parent values that activate a child.
  auto big = MustCreateGrid(GridSpec(R"pb(
    parameters {
      parameter_id: "k"
      type: INTEGER
      min_value: 1
      max_value: 100000
      scale_type: UNIT_LOG_SCALE
      conditional_parameter_specs {
        parameter_spec {
          parameter_id: "extra"
          type: CATEGORICAL
          categorical_values: [ "u", "v" ]
        }
        parent_int_values: 777
      }
    }
  )pb"));
  const std::vector<double>& v = big->values(0);
  ASSERT_EQ(v.size(), 11u);
  EXPECT_EQ(v.front(), 1);
  EXPECT_EQ(v.back(), 100000);
  EXPECT_NE(std::find(v.begin(), v.end(), 777.0), v.end());
  EXPECT_LT(v[3], 100);         // Log spacing: most points at the low end.
  EXPECT_EQ(big->size(), 12u);  // 777 contributes 2 points.
  // An explicit resolution at least the range size: every integer.
  EXPECT_EQ(MustCreateGrid(GridSpec(R"pb(parameters {
                                           parameter_id: "k"
                                           type: INTEGER
                                           min_value: 1
                                           max_value: 5
                                           grid_resolution: 7
                                         })pb"))
                ->size(),
            5u);
  // An explicit smaller resolution caps a small range too.
  EXPECT_EQ(MustCreateGrid(GridSpec(R"pb(parameters {
                                           parameter_id: "k"
                                           type: INTEGER
                                           min_value: 1
                                           max_value: 100
                                           grid_resolution: 4
                                         })pb"))
                ->size(),
            4u);
}

TEST(GridDesignerTest, HugeGridStillSuggests) {
  std::string text;
  for (int k = 0; k < 25; ++k) {
    text += "parameters { parameter_id: \"x" + std::to_string(k) +
            "\" type: DOUBLE max_value: 1 } ";
  }
  const StudySpec spec = GridSpec(text);
  auto grid = MustCreateGrid(spec);
  EXPECT_EQ(grid->size(), UINT64_MAX);  // 10^25 points saturate.
  Study study(spec);
  const std::vector<Suggestion> s = study.Suggest(*grid, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(Number(s[1], "x24"), 1.0 / 9);
  EXPECT_EQ(Number(s[1], "x23"), 0.0);
}

}  // namespace
}  // namespace cairn::tuner
