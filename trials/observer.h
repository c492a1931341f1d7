// Hooks through which the study controller reports what it does, so that
// monitoring can count it without the controller knowing about Prometheus.
#ifndef CAIRN_TRIALS_OBSERVER_H_
#define CAIRN_TRIALS_OBSERVER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace cairn {

// The study an event is about, with both of its names, so that an observer
// can label what it records without looking the study up. The views are
// valid for the duration of the hook call only.
struct ObservedStudy {
  std::string_view name;          // Resource name, "studies/7".
  std::string_view display_name;  // Unique and human-readable.
};

// Implementations must be thread-safe and cheap: hooks run on request paths.
// Every hook has a no-op default.
class StudyObserver {
 public:
  virtual ~StudyObserver() = default;
  // A designer produced `count` trials in `seconds`.
  virtual void OnSuggest(const std::string& /*algorithm*/, double /*seconds*/,
                         int /*count*/) {}
  // `count` of those trials came from the designer's quasi-random fallback
  // because it missed its deadline (suggestion_kind
  // "quasi_random_deadline").
  virtual void OnDeadlineFallbacks(const std::string& /*algorithm*/,
                                   int /*count*/) {}
  // A trial of `study` reached a final state; outcome is "succeeded",
  // "infeasible", "failed", "stopped_early" or "cancelled".
  virtual void OnTrialFinished(const ObservedStudy& /*study*/,
                               const std::string& /*outcome*/) {}
  // A durable store write took `seconds`.
  virtual void OnStoreWrite(double /*seconds*/) {}
  // `count` measurements were durably written.
  virtual void OnMeasurementsWritten(int64_t /*count*/) {}
  // An early-stopping rule ("median" or "asha") judged a trial of `study`.
  virtual void OnEarlyStoppingDecision(const ObservedStudy& /*study*/,
                                       const std::string& /*rule*/,
                                       bool /*stop*/) {}
  // A failed training job of `study` was restarted.
  virtual void OnJobRestart(const ObservedStudy& /*study*/) {}
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_OBSERVER_H_
