// Early-stopping rules for running trials: the median stopping rule and
// asynchronous successive halving (ASHA). Pure functions of the curves, so
// the same decision is reached by the job runner and by
// CheckTrialEarlyStoppingState, and again after a restart.
#ifndef CAIRN_TUNER_EARLY_STOPPING_H_
#define CAIRN_TUNER_EARLY_STOPPING_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cairn/v1/study.pb.h"

namespace cairn::tuner {

// One trial's learning curve for the objective metric: (step, value) in
// report order.
struct Curve {
  int64_t trial_id = 0;
  bool completed = false;  // SUCCEEDED (a finished curve).
  std::vector<std::pair<int64_t, double>> points;
};

struct StopDecision {
  bool stop = false;
  std::string reason;  // Why, naming the rule and the numbers compared.
};

// Decides whether `trial` should stop given every other trial's curve.
// The objective is spec.metrics(0) with its goal. A spec without an
// early_stopping rule never stops anything.
//
// Median rule: at the trial's latest step s >= min_steps, stop when its best
// value so far is worse than the median, over completed trials with points
// up to s (at least min_completed_trials of them, default 3), of their
// running averages up to s.
//
// ASHA: rungs at r, r*eta, r*eta^2, ... (<= max_resource when set). For the
// highest rung the trial has reached, its best value up to that rung is
// compared with the values of every trial (any state) that reached the rung;
// with at least eta of them, it stops unless it is within the best 1/eta.
// `others` may include `trial` itself (matched by trial_id): it is skipped.
StopDecision ShouldStop(const cairn::v1::StudySpec& spec, const Curve& trial,
                        const std::vector<const Curve*>& others);
// The same over copies.
StopDecision ShouldStop(const cairn::v1::StudySpec& spec, const Curve& trial,
                        const std::vector<Curve>& others);

}  // namespace cairn::tuner

#endif  // CAIRN_TUNER_EARLY_STOPPING_H_
