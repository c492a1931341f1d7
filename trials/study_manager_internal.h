// Helpers shared by the study_manager*.cc files: page tokens, timing of
// store writes, and the last step of every call. Internal to trials/.
#ifndef CAIRN_TRIALS_STUDY_MANAGER_INTERNAL_H_
#define CAIRN_TRIALS_STUDY_MANAGER_INTERNAL_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "store/store.h"
#include "trials/observer.h"
#include "util/clock.h"

namespace cairn::study_manager_internal {

// The id after which a page starts: 0 for an empty token, else the decimal
// id a previous page returned. InvalidArgument naming page_token otherwise.
absl::StatusOr<int64_t> ParsePageToken(const std::string& token);

// InvalidArgument unless page_size >= 0.
absl::Status CheckPageSize(int page_size);

// Times a store write for the observer (may be null: then it times nothing).
class WriteTimer {
 public:
  explicit WriteTimer(StudyObserver* observer)
      : observer_(observer), start_(std::chrono::steady_clock::now()) {}
  ~WriteTimer();
  WriteTimer(const WriteTimer&) = delete;
  WriteTimer& operator=(const WriteTimer&) = delete;

 private:
  StudyObserver* observer_;
  std::chrono::steady_clock::time_point start_;
};

// What a step run under a study's lock needs from the manager (not owned).
struct Deps {
  StudyDataStore* store;
  util::Clock* clock;
  StudyObserver* observer;  // May be null.
  // Non-OK when new trials must be refused (below the disk reserve).
  absl::Status new_trials = absl::OkStatus();
};

// `result`, unless awaiting the call's writes failed.
template <typename T>
T Finish(const absl::Status& awaited, T result) {
  if (!awaited.ok()) return awaited;
  return result;
}

}  // namespace cairn::study_manager_internal

#endif  // CAIRN_TRIALS_STUDY_MANAGER_INTERNAL_H_
