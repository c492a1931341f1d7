// StudyManager::UpdateStudyLabels: a study's labels after its creation.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/limits.h"
#include "trials/study_manager.h"
#include "trials/study_manager_internal.h"
#include "trials/study_state.h"

namespace cairn {

using cairn::v1::Study;
using study_manager_internal::Finish;

namespace {

using Labels = google::protobuf::Map<std::string, std::string>;

// The labels `current` becomes, or InvalidArgument naming the key.
absl::StatusOr<Labels> UpdatedLabels(const Labels& current, const Labels& set,
                                     const std::vector<std::string>& remove) {
  Labels out = current;
  for (const std::string& key : remove) {
    if (set.contains(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("remove_keys: '", key.substr(0, 64),
                       "' is also among the labels to set"));
    }
    out.erase(key);
  }
  for (const auto& [key, value] : set) {
    if (key.empty()) {
      return absl::InvalidArgumentError("labels: a key is empty");
    }
    out[key] = value;
  }
  if (out.size() > static_cast<size_t>(api::kMaxLabels)) {
    return absl::InvalidArgumentError(
        absl::StrCat("labels: the study would have ", out.size(),
                     " labels; at most ", api::kMaxLabels));
  }
  return out;
}

}  // namespace

absl::StatusOr<Study> StudyManager::UpdateStudyLabels(
    const std::string& name, const Labels& labels,
    const std::vector<std::string>& remove_keys) {
  if (absl::Status s = CheckWritable(); !s.ok()) return s;
  auto state = PeekStudyByName(name, "name");
  if (!state.ok()) return state.status();
  StudyState& st = **state;
  WriteScope scope;
  absl::StatusOr<Study> result;
  {
    LockedStudy lock(st, &scope);
    absl::StatusOr<Labels> updated =
        UpdatedLabels(st.study.spec().labels(), labels, remove_keys);
    if (!updated.ok()) return updated.status();
    Study study = st.study;
    *study.mutable_spec()->mutable_labels() = *std::move(updated);
    absl::Status s = Queued(store_->EnqueueUpdateStudy(st.id, study),
                            &st.last_write, &scope);
    if (s.ok()) {
      st.study = std::move(study);
      result = st.View();
    } else {
      result = s;
    }
  }
  return Finish(AwaitScope(scope), std::move(result));
}

}  // namespace cairn
