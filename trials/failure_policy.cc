// The failure policy of a study: see failure_policy.h.
#include "trials/failure_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/job_studies.h"

namespace cairn {
namespace {

using cairn::v1::StudySpec;
using cairn::v1::Trial;

using api::IsJobStudy;

bool FirstTrialsAllFailed(const TrialTable& trials) {
  if (static_cast<int64_t>(trials.size()) < kDefaultFailedFirstTrials) {
    return false;
  }
  int seen = 0;
  for (auto it = trials.begin();
       it != trials.end() && seen < kDefaultFailedFirstTrials; ++it, ++seen) {
    if (it->second.state() != Trial::FAILED) return false;
  }
  return true;
}

}  // namespace

bool FailureLimitReached(const StudySpec& spec, const TrialTable& trials,
                         std::string* reason) {
  const int64_t failed = trials.count(Trial::FAILED);
  if (spec.max_failed_trials() > 0) {
    if (failed < spec.max_failed_trials()) return false;
    *reason = absl::StrCat("max_failed_trials (", spec.max_failed_trials(),
                           ") reached");
    return true;
  }
  if (!IsJobStudy(spec)) return false;
  if (FirstTrialsAllFailed(trials)) {
    *reason = absl::StrCat("the first ", kDefaultFailedFirstTrials,
                           " trials all failed (default failure policy)");
    return true;
  }
  const int64_t limit =
      std::max<int64_t>(kDefaultMinFailedTrials, spec.max_trials() / 4);
  if (failed < limit) return false;
  *reason =
      absl::StrCat(failed, " trials failed (default failure policy: ", limit,
                   " = max(", kDefaultMinFailedTrials, ", max_trials/4))");
  return true;
}

}  // namespace cairn
