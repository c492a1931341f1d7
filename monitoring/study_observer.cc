// StudyObserver -> Metrics forwarding.
#include "monitoring/study_observer.h"

#include "absl/strings/ascii.h"

namespace cairn::monitoring {

void MetricsStudyObserver::OnSuggest(const std::string& algorithm,
                                     double seconds, int count) {
  metrics_->RecordSuggestion(absl::AsciiStrToLower(algorithm), seconds, count);
}

void MetricsStudyObserver::OnDeadlineFallbacks(const std::string& algorithm,
                                               int count) {
  metrics_->RecordDeadlineFallbacks(absl::AsciiStrToLower(algorithm), count);
}

void MetricsStudyObserver::OnTrialFinished(const ObservedStudy& study,
                                           const std::string& outcome) {
  std::optional<TrialOutcome> parsed =
      TrialOutcomeFromLabel(absl::AsciiStrToLower(outcome));
  if (parsed.has_value()) {
    metrics_->RecordTrialFinished(study.display_name, *parsed);
  }
}

void MetricsStudyObserver::OnStoreWrite(double seconds) {
  metrics_->RecordStoreWrite(seconds);
}

void MetricsStudyObserver::OnMeasurementsWritten(int64_t count) {
  metrics_->RecordMeasurementsWritten(count);
}

void MetricsStudyObserver::OnEarlyStoppingDecision(const ObservedStudy& study,
                                                   const std::string& rule,
                                                   bool stop) {
  metrics_->RecordEarlyStoppingDecision(study.display_name,
                                        absl::AsciiStrToLower(rule), stop);
}

void MetricsStudyObserver::OnJobRestart(const ObservedStudy& study) {
  metrics_->RecordJobRestart(study.display_name);
}

void MetricsStudyObserver::OnCallPhase(std::string_view call,
                                       std::string_view phase, double seconds) {
  metrics_->RecordCallPhase(call, phase, seconds);
}

}  // namespace cairn::monitoring
