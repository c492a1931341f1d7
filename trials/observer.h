// Hooks through which the study controller reports what it does, so that
// monitoring can count it without the controller knowing about Prometheus.
#ifndef CAIRN_TRIALS_OBSERVER_H_
#define CAIRN_TRIALS_OBSERVER_H_

#include <cstdint>
#include <string>

namespace cairn {

// Implementations must be thread-safe and cheap: hooks run on request paths.
// Every hook has a no-op default.
class StudyObserver {
 public:
  virtual ~StudyObserver() = default;
  // A designer produced `count` trials in `seconds`.
  virtual void OnSuggest(const std::string& algorithm, double seconds,
                         int count) {}
  // A trial reached a final state; outcome is "succeeded", "infeasible",
  // "failed" or "stopped_early".
  virtual void OnTrialFinished(const std::string& study,
                               const std::string& outcome) {}
  // A durable store write took `seconds`.
  virtual void OnStoreWrite(double seconds) {}
  // `count` measurements were durably written.
  virtual void OnMeasurementsWritten(int64_t count) {}
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_OBSERVER_H_
