// Recovery of studies from the store: a restart reads each study's record and
// its trial summary (O(studies)), and a study's trials only when the study is
// first used. Internal to trials/.
#ifndef CAIRN_TRIALS_STUDY_LOADING_H_
#define CAIRN_TRIALS_STUDY_LOADING_H_

#include <functional>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/store.h"
#include "trials/study_state.h"

namespace cairn {

// A study as LoadStudies returned it, with its designer, unloaded; an
// ALGORITHM_UNSPECIFIED of an older store reads as the algorithm that runs
// (api::EffectiveAlgorithm). A study
// without a summary record (an older store) is loaded at once instead, so
// that its summary can be computed (the caller may write it and Unload).
// FailedPrecondition when `create_designer` makes no designer for the stored
// spec.
absl::StatusOr<std::shared_ptr<StudyState>> StudyFromStore(
    StudyDataStore* store, StoredStudy stored,
    const std::function<absl::StatusOr<std::unique_ptr<tuner::Designer>>(
        const cairn::v1::StudySpec&)>& create_designer);

// Reads the study's trials (and the measurements a study keeps in memory:
// the last one of each pending trial, every one for early-stopping curves)
// from the store, unless loaded or deleted. Its summary is recomputed from
// the trials. No trial write of the study can be queued meanwhile: every
// write path loads the study first.
absl::Status EnsureLoaded(StudyDataStore* store, StudyState& st)
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(st.mu);

}  // namespace cairn

#endif  // CAIRN_TRIALS_STUDY_LOADING_H_
