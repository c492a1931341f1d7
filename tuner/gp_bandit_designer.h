// GP_BANDIT (the default algorithm): Bayesian optimization with a Gaussian
// process over the study's search space. The math lives in tuner/gp/ (see
// tuner/gp/gp_bandit.h for the algorithm and its cost controls); this class
// maps trials to the unit cube and back.
#ifndef CAIRN_TUNER_GP_BANDIT_DESIGNER_H_
#define CAIRN_TUNER_GP_BANDIT_DESIGNER_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"
#include "tuner/designer.h"
#include "tuner/gp/gp_bandit.h"
#include "tuner/search_space.h"

namespace cairn::tuner {

// Encoding: DOUBLE parameters are continuous unit coordinates (after their
// scale); INTEGER (up to 10,000 values, or any that has children) and
// DISCRETE parameters are unit coordinates snapped to their values;
// CATEGORICAL parameters are categorical dimensions (overlap kernel).
// Inactive conditional children take a fixed value, so they never add
// distance between trials.
//
// Trials: SUCCEEDED trials are observations (every metric without a
// safety_threshold is an objective, oriented by its goal; a SUCCEEDED trial
// missing an objective or violating a safety threshold counts as infeasible);
// INFEASIBLE trials are infeasible observations; REQUESTED, ACTIVE and
// STOPPING trials are pending; FAILED trials and trials whose parameters do
// not fit the space are ignored. Suggestions never equal a pending trial.
//
// Metadata on each suggestion: "suggestion_seconds" (wall time of the
// Suggest call divided by the number of suggestions it returned) and
// "suggestion_kind" ("quasi_random", "ucb", "restart", "pure_exploration",
// or "quasi_random_deadline" when the options' suggest_deadline_seconds ran
// out).
//
// Deterministic for (spec.seed, trials) without a suggestion deadline; with
// one, which suggestions fall back depends on timing. Not thread-safe (see
// Designer).
class GpBanditDesigner final : public Designer {
 public:
  // Returns InvalidArgument for an invalid search space.
  static absl::StatusOr<std::unique_ptr<Designer>> Create(
      const cairn::v1::StudySpec& spec, gp::GpBanditOptions options = {});

  absl::StatusOr<std::vector<Suggestion>> Suggest(
      const DesignerContext& context, int count) override;

 private:
  struct Objective {
    std::string metric_id;
    double sign;  // +1 to maximize, -1 to minimize.
  };
  struct Safety {
    std::string metric_id;
    bool maximize;  // Safe when value >= threshold (else <= threshold).
    double threshold;
  };

  GpBanditDesigner(SearchSpace space, gp::MixedSpace mixed,
                   std::vector<Objective> objectives,
                   std::vector<Safety> safety, int64_t seed,
                   gp::GpBanditOptions options);

  // The engine point of a trial, or nullopt if it does not fit the space.
  std::optional<Eigen::VectorXd> Encode(const cairn::v1::Trial& trial) const;
  std::vector<double> Decode(const Eigen::VectorXd& x) const;

  // The engine's observations: completed (SUCCEEDED, INFEASIBLE) trials with
  // their objectives, and pending ones, of those that fit the space.
  gp::BanditData CollectData(const DesignerContext& context) const;
  // Sets *y to the objectives (maximize orientation) of a completed trial and
  // returns whether it counts as infeasible: INFEASIBLE, a missing or
  // non-finite objective, or a violated safety threshold.
  bool ObjectiveValues(const cairn::v1::Trial& trial, Eigen::VectorXd* y) const;
  // Decodes the engine's points into suggestions, replacing one whose
  // parameters collide with a pending trial or an earlier suggestion by a
  // seeded random point; appends how each was chosen to *kinds.
  std::vector<Suggestion> DecodeDistinct(
      const DesignerContext& context,
      const std::vector<Eigen::VectorXd>& points, int64_t num_trials,
      std::vector<std::string>* kinds) const;

  const SearchSpace space_;
  const std::vector<Objective> objectives_;
  const std::vector<Safety> safety_;
  const int64_t seed_;
  gp::GpBandit bandit_;
};

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_GP_BANDIT_DESIGNER_H_
