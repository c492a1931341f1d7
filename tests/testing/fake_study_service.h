// A StudyService that answers like cairnd without any work behind it, for
// in-process gRPC servers in tests and benches (interceptors, round trips).
#ifndef CAIRN_TESTS_TESTING_FAKE_STUDY_SERVICE_H_
#define CAIRN_TESTS_TESTING_FAKE_STUDY_SERVICE_H_

#include <atomic>
#include <cstdint>

#include "cairn/v1/study_service.grpc.pb.h"

namespace cairn::testing {

// CreateStudy echoes the study named "studies/1", except for display name
// "taken" (ALREADY_EXISTS) and "slow" (answers after 50 ms).
// SuggestTrials returns one ACTIVE trial (ids 1, 2, ...) with x = 0.5.
// CompleteTrial returns the trial SUCCEEDED with the request's final
// measurement. ReportMeasurements counts the messages and fails with
// INVALID_ARGUMENT on one with no trial_name. Other methods are
// UNIMPLEMENTED. Thread-safe.
class FakeStudyService final : public cairn::v1::StudyService::Service {
 public:
  grpc::Status CreateStudy(grpc::ServerContext* context,
                           const cairn::v1::CreateStudyRequest* request,
                           cairn::v1::Study* response) override;
  grpc::Status SuggestTrials(
      grpc::ServerContext* context,
      const cairn::v1::SuggestTrialsRequest* request,
      cairn::v1::SuggestTrialsResponse* response) override;
  grpc::Status CompleteTrial(grpc::ServerContext* context,
                             const cairn::v1::CompleteTrialRequest* request,
                             cairn::v1::Trial* response) override;
  grpc::Status ReportMeasurements(
      grpc::ServerContext* context,
      grpc::ServerReader<cairn::v1::ReportMeasurementsRequest>* reader,
      cairn::v1::ReportMeasurementsResponse* response) override;

 private:
  std::atomic<int64_t> next_id_{0};
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_FAKE_STUDY_SERVICE_H_
