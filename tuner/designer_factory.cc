// CreateDesigner: the one place that maps StudySpec.algorithm to a designer.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/study_defaults.h"
#include "tuner/designer.h"
#include "tuner/gp_bandit_designer.h"
#include "tuner/grid_designer.h"
#include "tuner/quasi_random_designer.h"
#include "tuner/random_designer.h"

namespace cairn::tuner {

using cairn::v1::StudySpec;

absl::StatusOr<std::unique_ptr<Designer>> CreateDesigner(
    const StudySpec& spec, const DesignerOptions& options) {
  switch (api::EffectiveAlgorithm(spec.algorithm())) {
    case StudySpec::RANDOM_SEARCH:
      return RandomDesigner::Create(spec);
    case StudySpec::QUASI_RANDOM_SEARCH:
      return QuasiRandomDesigner::Create(spec);
    case StudySpec::GRID_SEARCH: {
      absl::StatusOr<std::unique_ptr<GridDesigner>> grid =
          GridDesigner::Create(spec);
      if (!grid.ok()) return grid.status();
      return std::unique_ptr<Designer>(*std::move(grid));
    }
    case StudySpec::GP_BANDIT: {
      gp::GpBanditOptions gp_options;
      gp_options.suggest_deadline_seconds = options.gp_suggest_deadline_seconds;
      return GpBanditDesigner::Create(spec, gp_options);
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("algorithm ", static_cast<int>(spec.algorithm()),
                       " is not a known algorithm"));
  }
}

std::vector<const cairn::v1::Trial*> PendingAmong(
    const std::vector<const cairn::v1::Trial*>& trials) {
  std::vector<const cairn::v1::Trial*> out;
  for (const cairn::v1::Trial* t : trials) {
    switch (t->state()) {
      case cairn::v1::Trial::REQUESTED:
      case cairn::v1::Trial::ACTIVE:
      case cairn::v1::Trial::STOPPING:
        out.push_back(t);
        break;
      default:
        break;
    }
  }
  return out;
}

}  // namespace cairn::tuner
