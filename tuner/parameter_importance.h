// Parameter importance: how much of the objective's variation each
// parameter explains on its own, as fANOVA computes it (Hutter, Hoos and
// Leyton-Brown, "An Efficient Approach for Assessing Hyperparameter
// Importance", ICML 2014): a random forest (random_forest.h) is fitted to
// the study's succeeded trials in the search space's unit cube (log
// parameters on their log scale, as the designers see them), and for each
// tree the variance of its prediction over the uniform cube is split into
// the main effect of each coordinate. A parameter's importance is its main
// effect's share of the variance, averaged over the trees: a number in
// [0, 1]; the shares add up to at most 1 (the rest is interactions).
//
// A forest rather than the GP's length scales: it needs no GP study (any
// algorithm's trials work), handles categorical and conditional parameters
// (an inactive one at its 0.5 encoding) and gives a share of variance,
// which reads as "how much", where a length scale only ranks.
#ifndef CAIRN_TUNER_PARAMETER_IMPORTANCE_H_
#define CAIRN_TUNER_PARAMETER_IMPORTANCE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "tuner/random_forest.h"

namespace cairn::tuner {

// Fewer succeeded trials than this give no importance.
inline constexpr int kMinImportanceTrials = 4;

struct ImportanceOptions {
  ForestOptions forest;
  // Only the last this many usable trials (in the order given) are fitted,
  // which bounds the time of a call on a large study...
  int max_trials = 2000;
  // ...and at most this many trials x parameters (but at least
  // kMinImportanceTrials trials), which bounds it on a study with many
  // parameters (up to kMaxParametersPerStudy): the fit's time grows with
  // trials x parameters.
  int max_coordinates = 20000;
};

struct ParameterImportance {
  std::string parameter_id;
  double importance = 0.0;  // Share of variance in [0, 1].
};

struct ImportanceReport {
  std::string metric_id;  // The metric explained.
  int trial_count = 0;    // Trials fitted.
  // One per parameter of the flattened search space, in its order.
  std::vector<ParameterImportance> parameters;
};

// The importance of each parameter of `spec` for metric `metric_id` ("":
// the first metric), from the SUCCEEDED trials of `trials` that have a
// finite final value of it and parameters that fit the space.
// InvalidArgument when metric_id names no metric of the spec or the spec's
// search space is invalid; FailedPrecondition when the spec has no
// parameters or fewer than kMinImportanceTrials trials are usable.
absl::StatusOr<ImportanceReport> ComputeParameterImportance(
    const cairn::v1::StudySpec& spec,
    const std::vector<cairn::v1::Trial>& trials, std::string_view metric_id,
    const ImportanceOptions& options = {});

// The main-effect share of each of `dims` coordinates in one tree, over
// the uniform unit cube; all zero when the tree is constant.
std::vector<double> TreeMainEffects(const Tree& tree, int dims);

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_PARAMETER_IMPORTANCE_H_
