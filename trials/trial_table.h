// TrialTable: the trials of one study in memory, by id, with the counts and
// indexes the study controller asks for on every call kept up to date as
// trials change, so SuggestTrials and CompleteTrial cost the same with ten
// trials or a hundred thousand.
//
// Every change goes through Put() or Erase(); readers get const access only.
// Pointers handed out (InIdOrder(), Pending(), PendingOf()) stay valid until
// that trial is Put again or erased.
//
// Not thread-safe: the caller serializes access (StudyManager holds the
// study's mutex).
#ifndef CAIRN_TRIALS_TRIAL_TABLE_H_
#define CAIRN_TRIALS_TRIAL_TABLE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "api/trial_states.h"  // api::IsPendingState, for existing users.
#include "cairn/v1/study.pb.h"

namespace cairn {

class TrialTable {
 public:
  using Map = std::map<int64_t, cairn::v1::Trial>;
  using const_iterator = Map::const_iterator;

  TrialTable() = default;
  TrialTable(const TrialTable&) = delete;
  TrialTable& operator=(const TrialTable&) = delete;
  // Moving keeps the map's nodes, so the ordered pointers stay valid.
  TrialTable(TrialTable&&) = default;
  TrialTable& operator=(TrialTable&&) = default;

  const_iterator begin() const { return trials_.begin(); }
  const_iterator end() const { return trials_.end(); }
  const_iterator find(int64_t id) const { return trials_.find(id); }
  // The first trial with id > `id`.
  const_iterator upper_bound(int64_t id) const {
    return trials_.upper_bound(id);
  }
  size_t size() const { return trials_.size(); }
  bool contains(int64_t id) const { return trials_.count(id) != 0; }

  // Inserts `trial`, or replaces the stored trial with the same id.
  void Put(cairn::v1::Trial trial);
  // Removes trial `id`; returns whether it was there.
  bool Erase(int64_t id);

  // How many trials are in `state`; pending() counts REQUESTED, ACTIVE and
  // STOPPING together.
  int64_t count(cairn::v1::Trial::State state) const;
  int64_t pending() const { return static_cast<int64_t>(pending_.size()); }

  // Every trial in id order.
  const std::vector<const cairn::v1::Trial*>& InIdOrder() const {
    return ordered_;
  }
  // The pending trials, in id order.
  std::vector<const cairn::v1::Trial*> Pending() const;
  // The pending trials whose client_id is `client_id` (non-empty), in id
  // order.
  std::vector<const cairn::v1::Trial*> PendingOf(
      const std::string& client_id) const;

 private:
  void Index(const cairn::v1::Trial& t);
  void Unindex(const cairn::v1::Trial& t);

  Map trials_;
  std::vector<const cairn::v1::Trial*> ordered_;
  std::map<int, int64_t> state_counts_;
  std::set<int64_t> pending_;
  absl::flat_hash_map<std::string, std::set<int64_t>> pending_by_client_;
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_TRIAL_TABLE_H_
