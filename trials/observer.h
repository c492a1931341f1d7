// Hooks through which the study controller (and the service and audit log
// around it, for the parts of a call) report what they do, so that
// monitoring can count it without them knowing about Prometheus.
#ifndef CAIRN_TRIALS_OBSERVER_H_
#define CAIRN_TRIALS_OBSERVER_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace cairn {

// The parts of a call OnCallPhase reports, in the order they run.
namespace call_phase {
inline constexpr char kAuth[] = "auth";      // the token and its role
inline constexpr char kLimits[] = "limits";  // the request's input limits
// Waiting for the study's lock (and a GP suggestion's gate).
inline constexpr char kStudyLock[] = "study_lock";
inline constexpr char kDesigner[] = "designer";  // the designer's Suggest
// Queueing the call's store writes (building the batch).
inline constexpr char kAppend[] = "append";
// Waiting for them to be durable: the group commit's WAL write and sync.
inline constexpr char kSync[] = "sync";
inline constexpr char kAudit[] = "audit";  // recording the audit event
}  // namespace call_phase

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
  // A suggestion of `algorithm` handed its designer `trials` trials, copied
  // into a snapshot or read in place: the pending ones for a designer that
  // reads only those (random, quasi-random), every one for the others.
  // The part of a suggestion's work that grows with the study.
  virtual void OnSuggestionHistory(const std::string& /*algorithm*/,
                                   int64_t /*trials*/) {}
  // One part of a call took `seconds`: `call` is the RPC's method name
  // ("SuggestTrials", "CompleteTrial") and `phase` one of the CallPhase
  // names below. Reported once per call and phase that ran.
  virtual void OnCallPhase(std::string_view /*call*/,
                           std::string_view /*phase*/, double /*seconds*/) {}
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

// Times consecutive parts of one call for an observer's OnCallPhase:
//
//   PhaseClock clock(observer, "SuggestTrials");  // observer may be null
//   ... authorize ...
//   clock.Lap(call_phase::kAuth);   // the time since the clock started
//   ... check limits ...
//   clock.Lap(call_phase::kLimits); // the time since the last lap
//
// Not thread-safe (one call's thread uses it).
class PhaseClock {
 public:
  PhaseClock(StudyObserver* observer, std::string_view call)
      : observer_(observer),
        call_(call),
        last_(std::chrono::steady_clock::now()) {}

  // Reports the time since the start or the last Lap as `phase`.
  void Lap(std::string_view phase) {
    if (observer_ == nullptr) return;
    const auto now = std::chrono::steady_clock::now();
    observer_->OnCallPhase(call_, phase,
                           std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }

 private:
  StudyObserver* const observer_;
  const std::string_view call_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_OBSERVER_H_
