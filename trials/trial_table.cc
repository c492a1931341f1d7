// TrialTable: see trial_table.h.
#include "trials/trial_table.h"

#include <algorithm>
#include <utility>

namespace cairn {

using cairn::v1::Trial;

void TrialTable::Put(Trial trial) {
  const int64_t id = trial.id();
  auto it = trials_.find(id);
  if (it != trials_.end()) {
    Unindex(it->second);
    it->second = std::move(trial);  // The node, and so the pointer, stays.
    Index(it->second);
    return;
  }
  it = trials_.emplace(id, std::move(trial)).first;
  const Trial* p = &it->second;
  // Ids only grow, so this is nearly always an append.
  if (ordered_.empty() || ordered_.back()->id() < id) {
    ordered_.push_back(p);
  } else {
    ordered_.insert(
        std::lower_bound(ordered_.begin(), ordered_.end(), id,
                         [](const Trial* t, int64_t v) { return t->id() < v; }),
        p);
  }
  Index(*p);
}

bool TrialTable::Erase(int64_t id) {
  auto it = trials_.find(id);
  if (it == trials_.end()) return false;
  Unindex(it->second);
  auto pos =
      std::lower_bound(ordered_.begin(), ordered_.end(), id,
                       [](const Trial* t, int64_t v) { return t->id() < v; });
  if (pos != ordered_.end() && *pos == &it->second) ordered_.erase(pos);
  trials_.erase(it);
  return true;
}

int64_t TrialTable::count(Trial::State state) const {
  auto it = state_counts_.find(state);
  return it == state_counts_.end() ? 0 : it->second;
}

std::vector<const Trial*> TrialTable::Pending() const {
  std::vector<const Trial*> out;
  out.reserve(pending_.size());
  for (int64_t id : pending_) out.push_back(&trials_.at(id));
  return out;
}

std::vector<const Trial*> TrialTable::PendingOf(
    const std::string& client_id) const {
  std::vector<const Trial*> out;
  auto it = pending_by_client_.find(client_id);
  if (it == pending_by_client_.end()) return out;
  for (int64_t id : it->second) out.push_back(&trials_.at(id));
  return out;
}

void TrialTable::Index(const Trial& t) {
  ++state_counts_[t.state()];
  if (!api::IsPendingState(t.state())) return;
  pending_.insert(t.id());
  if (!t.client_id().empty()) pending_by_client_[t.client_id()].insert(t.id());
}

void TrialTable::Unindex(const Trial& t) {
  if (--state_counts_[t.state()] == 0) state_counts_.erase(t.state());
  if (!api::IsPendingState(t.state())) return;
  pending_.erase(t.id());
  if (t.client_id().empty()) return;
  auto it = pending_by_client_.find(t.client_id());
  if (it == pending_by_client_.end()) return;
  it->second.erase(t.id());
  if (it->second.empty()) pending_by_client_.erase(it);
}

}  // namespace cairn
