// Keeping a study's TrialSummary current: see trial_summary.h.
#include "trials/trial_summary.h"

#include <map>
#include <string>
#include <utility>

#include "api/trial_states.h"
#include "trials/optimal.h"

namespace cairn {
namespace {

using cairn::v1::MetricSpec;
using cairn::v1::StudySpec;
using cairn::v1::Trial;

// Counts `trial` in `summary` (delta 1) or takes it out (-1).
void AddCount(const Trial& trial, int64_t delta, TrialSummary* summary) {
  int64_t& n = summary->count_by_state[trial.state()];
  n += delta;
  if (n == 0) summary->count_by_state.erase(trial.state());
  if (!api::IsPendingState(trial.state()) && api::HasLiveJob(trial)) {
    summary->live_jobs_of_ended += delta;
  }
}

// Merges the final values of SUCCEEDED `trial` into `best` by each metric's
// goal (the same rule as BestFinalValues, one trial at a time).
void MergeBest(const StudySpec& spec, const Trial& trial,
               std::map<std::string, double>* best) {
  for (const auto& [metric, value] : BestFinalValues(spec, {&trial})) {
    auto [it, inserted] = best->try_emplace(metric, value);
    if (inserted) continue;
    for (const MetricSpec& m : spec.metrics()) {
      if (m.metric_id() != metric) continue;
      const bool better = m.goal() == MetricSpec::MAXIMIZE ? value > it->second
                                                           : value < it->second;
      if (better) it->second = value;
      break;
    }
  }
}

bool SameFinal(const Trial& a, const Trial& b) {
  return a.final_measurement().SerializeAsString() ==
         b.final_measurement().SerializeAsString();
}

}  // namespace

TrialSummary SummarizeTrials(const StudySpec& spec, const TrialTable& trials) {
  TrialSummary summary;
  for (const auto& [id, t] : trials) AddCount(t, 1, &summary);
  summary.best_by_metric = BestFinalValues(spec, trials.InIdOrder());
  return summary;
}

TrialSummary SummaryAfterPut(const StudySpec& spec, const TrialTable& trials,
                             TrialSummary current,
                             const std::vector<Trial>& changed) {
  bool recompute_best = false;
  std::map<int64_t, const Trial*> latest;  // A batch may repeat an id.
  for (const Trial& t : changed) latest[t.id()] = &t;
  for (const auto& [id, t] : latest) {
    auto old = trials.find(id);
    if (old != trials.end()) {
      AddCount(old->second, -1, &current);
      if (old->second.state() == Trial::SUCCEEDED &&
          (t->state() != Trial::SUCCEEDED || !SameFinal(old->second, *t))) {
        recompute_best = true;
      }
    }
    AddCount(*t, 1, &current);
    if (t->state() == Trial::SUCCEEDED) {
      MergeBest(spec, *t, &current.best_by_metric);
    }
  }
  if (!recompute_best) return current;
  std::vector<const Trial*> after;
  after.reserve(trials.size() + latest.size());
  for (const Trial* t : trials.InIdOrder()) {
    if (latest.count(t->id()) == 0) after.push_back(t);
  }
  for (const auto& [id, t] : latest) after.push_back(t);
  current.best_by_metric = BestFinalValues(spec, after);
  return current;
}

TrialSummary SummaryAfterErase(const StudySpec& spec, const TrialTable& trials,
                               TrialSummary current, int64_t trial_id) {
  auto old = trials.find(trial_id);
  if (old == trials.end()) return current;
  AddCount(old->second, -1, &current);
  if (old->second.state() != Trial::SUCCEEDED) return current;
  std::vector<const Trial*> after;
  after.reserve(trials.size());
  for (const Trial* t : trials.InIdOrder()) {
    if (t->id() != trial_id) after.push_back(t);
  }
  current.best_by_metric = BestFinalValues(spec, after);
  return current;
}

}  // namespace cairn
