// A StudyDataStore (what StudyManager takes) that forwards every call to
// another one: tests derive from it and override the calls they delay, count
// or fail. Thread-safe when the store it forwards to is.
#ifndef CAIRN_TESTS_TESTING_FORWARDING_STORE_H_
#define CAIRN_TESTS_TESTING_FORWARDING_STORE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/store.h"

namespace cairn::testing {

class ForwardingStore : public StudyDataStore {
 public:
  // `base` is not owned and must outlive this store.
  explicit ForwardingStore(StudyDataStore* base) : base_(base) {}

  absl::StatusOr<int64_t> CreateStudy(cairn::v1::Study study) override {
    return base_->CreateStudy(std::move(study));
  }
  absl::Status UpdateStudy(int64_t id, const cairn::v1::Study& s) override {
    return base_->UpdateStudy(id, s);
  }
  absl::Status DeleteStudy(int64_t id) override {
    return base_->DeleteStudy(id);
  }
  absl::StatusOr<std::vector<StoredStudy>> LoadAll() override {
    return base_->LoadAll();
  }
  absl::StatusOr<std::vector<StoredStudy>> LoadStudies() override {
    return base_->LoadStudies();
  }
  absl::StatusOr<StoredStudy> LoadStudy(int64_t id) override {
    return base_->LoadStudy(id);
  }
  absl::Status PutSummary(int64_t id, const TrialSummary& summary) override {
    return base_->PutSummary(id, summary);
  }
  absl::Status MarkSummariesComplete() override {
    return base_->MarkSummariesComplete();
  }
  using StudyStore::DeleteTrial;
  using StudyStore::EnqueuePutTrials;
  using StudyStore::PutTrials;
  absl::Status PutTrials(int64_t id, const std::vector<cairn::v1::Trial>& t,
                         const TrialSummary* summary) override {
    return base_->PutTrials(id, t, summary);
  }
  absl::Status DeleteTrial(int64_t id, int64_t trial_id,
                           const TrialSummary* summary) override {
    return base_->DeleteTrial(id, trial_id, summary);
  }
  absl::Status AppendMeasurements(
      const std::vector<MeasurementWrite>& m) override {
    return base_->AppendMeasurements(m);
  }
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueueUpdateStudy(
      int64_t id, const cairn::v1::Study& study) override {
    return base_->EnqueueUpdateStudy(id, study);
  }
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueuePutTrials(
      int64_t id, const std::vector<cairn::v1::Trial>& t,
      const TrialSummary* summary) override {
    return base_->EnqueuePutTrials(id, t, summary);
  }
  absl::StatusOr<std::shared_ptr<PendingWrite>> EnqueueAppendMeasurements(
      const std::vector<MeasurementWrite>& m) override {
    return base_->EnqueueAppendMeasurements(m);
  }
  absl::Status Await(const std::shared_ptr<PendingWrite>& w) override {
    return base_->Await(w);
  }
  absl::StatusOr<std::vector<cairn::v1::Measurement>> ListMeasurements(
      int64_t id, int64_t trial_id) override {
    return base_->ListMeasurements(id, trial_id);
  }
  absl::Status ScanMeasurements(int64_t id, int64_t trial_id,
                                const MeasurementScan& scan,
                                const MeasurementVisitor& visit) override {
    return base_->ScanMeasurements(id, trial_id, scan, visit);
  }
  absl::Status WriteHealth() override { return base_->WriteHealth(); }
  absl::Status Resume() override { return base_->Resume(); }
  absl::StatusOr<uint64_t> AvailableBytes() override {
    return base_->AvailableBytes();
  }

 private:
  StudyDataStore* const base_;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_FORWARDING_STORE_H_
