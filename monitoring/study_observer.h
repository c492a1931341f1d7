// Adapts the study controller's StudyObserver hooks (trials/observer.h) to
// Metrics, so cairnd wires monitoring into the controller with one object.
#ifndef CAIRN_MONITORING_STUDY_OBSERVER_H_
#define CAIRN_MONITORING_STUDY_OBSERVER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "monitoring/metrics.h"
#include "trials/observer.h"

namespace cairn::monitoring {

// Forwards each hook to the matching Metrics::Record* call. Algorithm names
// are exported in lower case ("GP_BANDIT" -> "gp_bandit"); each study series
// is recorded under the display name the event carries; an unknown outcome
// string is ignored. `metrics` is not owned and must outlive the observer.
// Thread-safe.
class MetricsStudyObserver final : public StudyObserver {
 public:
  explicit MetricsStudyObserver(Metrics* metrics) : metrics_(metrics) {}

  void OnSuggest(const std::string& algorithm, double seconds,
                 int count) override;
  void OnDeadlineFallbacks(const std::string& algorithm, int count) override;
  void OnTrialFinished(const ObservedStudy& study,
                       const std::string& outcome) override;
  void OnStoreWrite(double seconds) override;
  void OnMeasurementsWritten(int64_t count) override;
  void OnEarlyStoppingDecision(const ObservedStudy& study,
                               const std::string& rule, bool stop) override;
  void OnJobRestart(const ObservedStudy& study) override;
  void OnCallPhase(std::string_view call, std::string_view phase,
                   double seconds) override;

 private:
  Metrics* const metrics_;
};

}  // namespace cairn::monitoring

#endif  // CAIRN_MONITORING_STUDY_OBSERVER_H_
