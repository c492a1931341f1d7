// TrialSummary and its c/ record encoding: see summary_record.h.
#include "store/summary_record.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/trial_states.h"

namespace cairn {

int64_t TrialSummary::total() const {
  int64_t n = 0;
  for (const auto& [state, count] : count_by_state) n += count;
  return n;
}

int64_t TrialSummary::pending() const {
  int64_t n = 0;
  for (const auto& [state, count] : count_by_state) {
    if (api::IsPendingState(static_cast<cairn::v1::Trial::State>(state))) {
      n += count;
    }
  }
  return n;
}

int64_t TrialSummary::count(cairn::v1::Trial::State state) const {
  auto it = count_by_state.find(state);
  return it == count_by_state.end() ? 0 : it->second;
}

namespace store_keys {
namespace {

bool DecodeLine(absl::string_view line, TrialSummary* summary) {
  std::vector<absl::string_view> f =
      absl::StrSplit(line, absl::MaxSplits(' ', 2));
  if (f.size() != 3) return false;
  if (f[0] == "s") {
    int state = 0;
    int64_t count = 0;
    if (!absl::SimpleAtoi(f[1], &state) || !absl::SimpleAtoi(f[2], &count) ||
        !cairn::v1::Trial::State_IsValid(state) || count < 0) {
      return false;
    }
    summary->count_by_state[state] = count;
    return true;
  }
  if (f[0] == "j") {
    int64_t count = 0;
    if (f[2] != "live_jobs_of_ended" || !absl::SimpleAtoi(f[1], &count) ||
        count < 0) {
      return false;
    }
    summary->live_jobs_of_ended = count;
    return true;
  }
  if (f[0] == "b") {
    double value = 0;
    std::string metric;
    if (!absl::SimpleAtod(f[1], &value) || !absl::CUnescape(f[2], &metric)) {
      return false;
    }
    summary->best_by_metric[metric] = value;
    return true;
  }
  return false;
}

}  // namespace

std::string EncodeSummary(const TrialSummary& summary) {
  std::string out;
  for (const auto& [state, count] : summary.count_by_state) {
    if (count != 0) absl::StrAppend(&out, "s ", state, " ", count, "\n");
  }
  if (summary.live_jobs_of_ended != 0) {
    absl::StrAppend(&out, "j ", summary.live_jobs_of_ended,
                    " live_jobs_of_ended\n");
  }
  for (const auto& [metric, value] : summary.best_by_metric) {
    absl::StrAppend(&out, "b ", absl::StrFormat("%.17g", value), " ",
                    absl::CEscape(metric), "\n");
  }
  return out;
}

bool DecodeSummary(absl::string_view value, TrialSummary* summary) {
  *summary = TrialSummary();
  for (absl::string_view line : absl::StrSplit(value, '\n')) {
    if (line.empty()) continue;
    if (!DecodeLine(line, summary)) return false;
  }
  return true;
}

}  // namespace store_keys
}  // namespace cairn
