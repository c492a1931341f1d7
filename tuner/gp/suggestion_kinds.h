// Names of how a GP_BANDIT suggestion was chosen that other components act
// on (the trial's "suggestion_kind" metadata; monitoring counts them).
#ifndef CAIRN_TUNER_GP_SUGGESTION_KINDS_H_
#define CAIRN_TUNER_GP_SUGGESTION_KINDS_H_

namespace cairn::gp {

// A quasi-random point returned because the model-based suggestion missed
// GpBanditOptions::suggest_deadline_seconds.
inline constexpr char kDeadlineKind[] = "quasi_random_deadline";

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_SUGGESTION_KINDS_H_
