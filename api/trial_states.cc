// Trial state predicates: see trial_states.h.
#include "api/trial_states.h"

namespace cairn::api {

using cairn::v1::Trial;

bool IsPendingState(Trial::State state) {
  return state == Trial::REQUESTED || state == Trial::ACTIVE ||
         state == Trial::STOPPING;
}

bool HasLiveJob(const Trial& trial) {
  return trial.job().state() == cairn::v1::TrialJob::RUNNING ||
         trial.job().state() == cairn::v1::TrialJob::STOPPING;
}

}  // namespace cairn::api
