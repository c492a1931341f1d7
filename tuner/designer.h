// Designers propose new trials for a study. One interface, one factory; the
// algorithms live in their own files (random, grid, quasi-random, GP bandit).
#ifndef CAIRN_TUNER_DESIGNER_H_
#define CAIRN_TUNER_DESIGNER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cairn/v1/study.pb.h"

namespace cairn::tuner {

// One proposed parameter assignment, in the API's representation: numbers as
// number_value (integral for INTEGER), categories as string_value; only the
// parameters active under the chosen parent values are present.
struct Suggestion {
  std::vector<cairn::v1::Parameter> parameters;
  // Designer metadata stored on the trial (e.g. "suggestion_seconds").
  std::map<std::string, std::string> metadata;
};

// Everything a designer may look at.
struct DesignerContext {
  // The study's spec; already validated by ValidateStudySpec. Not owned.
  const cairn::v1::StudySpec* spec = nullptr;
  // Every trial of the study, in id order and any state: REQUESTED, ACTIVE
  // and STOPPING are pending (no result yet), SUCCEEDED carry a
  // final_measurement, INFEASIBLE and FAILED have no usable value. Not owned.
  std::vector<const cairn::v1::Trial*> trials;
  // The pending trials among `trials` (REQUESTED, ACTIVE, STOPPING), in id
  // order. The study controller keeps them indexed, so designers that only
  // avoid pending points never scan every trial; other callers fill it with
  // PendingAmong(trials).
  std::vector<const cairn::v1::Trial*> pending;
  // How many trials the study has, and the largest id among them: set by
  // the study controller, which leaves `trials` empty for a designer whose
  // reads() is kPending. Callers that fill `trials` may leave them 0.
  int64_t trial_count = 0;
  int64_t last_trial_id = 0;
};

// The pending trials (REQUESTED, ACTIVE, STOPPING) among `trials`, same order.
std::vector<const cairn::v1::Trial*> PendingAmong(
    const std::vector<const cairn::v1::Trial*>& trials);

// A Designer is a pure function of (spec, seed, trials): after a restart the
// same context yields the same suggestions, so no designer state needs to be
// persisted. Implementations may cache work between calls (e.g. a GP fit) as
// long as results do not depend on the cache.
// A Designer is not thread-safe; the caller serializes calls per study.
class Designer {
 public:
  // What a designer reads of the study, so that the controller hands it no
  // more than that.
  enum class Reads {
    // context.pending and the counts only (context.trials left empty): a
    // suggestion costs the same in a study of ten trials or a million.
    kPending,
    // Every trial in context.trials.
    kAllTrials,
  };

  virtual ~Designer() = default;

  // What Suggest reads. Default: kAllTrials.
  virtual Reads reads() const { return Reads::kAllTrials; }
  // Whether Suggest is quick (no model to fit: microseconds per point and
  // per trial it reads), so that the controller may run it under the
  // study's lock on the study as it is, instead of on a copy made for a
  // long computation. Default: false.
  virtual bool quick() const { return false; }

  // Proposes up to `count` (>= 1) new assignments that differ from the
  // pending trials. Returning fewer (possibly none) means the search space is
  // exhausted (e.g. GRID_SEARCH visited every point).
  virtual absl::StatusOr<std::vector<Suggestion>> Suggest(
      const DesignerContext& context, int count) = 0;
};

// Server-wide designer settings (not part of a study's spec).
struct DesignerOptions {
  // GP_BANDIT: seconds one suggestion may compute before quasi-random
  // points answer instead (gp::GpBanditOptions::suggest_deadline_seconds;
  // trials get suggestion_kind "quasi_random_deadline"). 0 (the default
  // here; cairnd's --gp-suggest-deadline sets it): no deadline.
  double gp_suggest_deadline_seconds = 0;
};

// Creates the designer the spec's algorithm names. ALGORITHM_UNSPECIFIED maps
// to the default designer. REQUIRES: spec passed ValidateStudySpec.
// Returns InvalidArgument for an algorithm this build does not implement.
absl::StatusOr<std::unique_ptr<Designer>> CreateDesigner(
    const cairn::v1::StudySpec& spec, const DesignerOptions& options = {});

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_DESIGNER_H_
