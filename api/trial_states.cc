// Trial state predicates: see trial_states.h.
#include "api/trial_states.h"

namespace cairn::api {

using cairn::v1::Trial;

bool IsPendingState(Trial::State state) {
  return state == Trial::REQUESTED || state == Trial::ACTIVE ||
         state == Trial::STOPPING;
}

}  // namespace cairn::api
