// What SuggestTrials returns (StudyManager::SuggestTrials, SuggestPool).
#ifndef CAIRN_TRIALS_SUGGEST_RESULT_H_
#define CAIRN_TRIALS_SUGGEST_RESULT_H_

#include <string>
#include <vector>

#include "cairn/v1/study.pb.h"

namespace cairn {

struct SuggestResult {
  std::vector<cairn::v1::Trial> trials;
  cairn::v1::Study::State study_state = cairn::v1::Study::STATE_UNSPECIFIED;
  // Why fewer trials than asked were returned; empty otherwise.
  std::string message;
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_SUGGEST_RESULT_H_
