// The gRPC StudyService: converts requests to StudyManager calls and results
// back. No business logic lives here (see trials/study_manager.h). Every
// handler first asks the Authorizer (server/authorize_call.h).
#ifndef CAIRN_SERVER_STUDY_SERVICE_H_
#define CAIRN_SERVER_STUDY_SERVICE_H_

#include "absl/status/statusor.h"
#include "auth/authorizer.h"
#include "cairn/v1/study_service.grpc.pb.h"
#include "jobs/job_runner.h"
#include "trials/observer.h"
#include "trials/study_manager.h"

namespace cairn {

// Thread-safe: all state lives in the StudyManager.
class StudyServiceImpl final : public cairn::v1::StudyService::Service {
 public:
  // `manager` is not owned and must outlive the service.
  explicit StudyServiceImpl(StudyManager* manager) : manager_(manager) {}
  // Enables ReadTrialLogs. Not owned; call before serving.
  void set_job_runner(jobs::JobRunner* runner) { runner_ = runner; }
  // Checks every call (auth/authorizer.h). Not owned; call before serving.
  // Without one, every call is refused.
  void set_authorizer(const auth::Authorizer* authorizer) {
    authorizer_ = authorizer;
  }
  // Receives the auth and limits phases of SuggestTrials and CompleteTrial
  // (trials/observer.h). Not owned; optional; call before serving.
  void set_observer(StudyObserver* observer) { observer_ = observer; }

  grpc::Status CreateStudy(grpc::ServerContext*,
                           const cairn::v1::CreateStudyRequest* request,
                           cairn::v1::Study* response) override;
  grpc::Status GetStudy(grpc::ServerContext*,
                        const cairn::v1::GetStudyRequest* request,
                        cairn::v1::Study* response) override;
  grpc::Status ListStudies(grpc::ServerContext*,
                           const cairn::v1::ListStudiesRequest* request,
                           cairn::v1::ListStudiesResponse* response) override;
  grpc::Status LookupStudy(grpc::ServerContext*,
                           const cairn::v1::LookupStudyRequest* request,
                           cairn::v1::Study* response) override;
  grpc::Status DeleteStudy(grpc::ServerContext*,
                           const cairn::v1::DeleteStudyRequest* request,
                           google::protobuf::Empty* response) override;
  grpc::Status UpdateStudyLabels(
      grpc::ServerContext*, const cairn::v1::UpdateStudyLabelsRequest* request,
      cairn::v1::Study* response) override;
  grpc::Status SetStudyState(grpc::ServerContext*,
                             const cairn::v1::SetStudyStateRequest* request,
                             cairn::v1::Study* response) override;
  grpc::Status SuggestTrials(
      grpc::ServerContext*, const cairn::v1::SuggestTrialsRequest* request,
      cairn::v1::SuggestTrialsResponse* response) override;
  grpc::Status CreateTrial(grpc::ServerContext*,
                           const cairn::v1::CreateTrialRequest* request,
                           cairn::v1::Trial* response) override;
  grpc::Status GetTrial(grpc::ServerContext*,
                        const cairn::v1::GetTrialRequest* request,
                        cairn::v1::Trial* response) override;
  grpc::Status ListTrials(grpc::ServerContext*,
                          const cairn::v1::ListTrialsRequest* request,
                          cairn::v1::ListTrialsResponse* response) override;
  grpc::Status DeleteTrial(grpc::ServerContext*,
                           const cairn::v1::DeleteTrialRequest* request,
                           google::protobuf::Empty* response) override;
  grpc::Status AddTrialMeasurement(
      grpc::ServerContext*,
      const cairn::v1::AddTrialMeasurementRequest* request,
      cairn::v1::Trial* response) override;
  grpc::Status ReportMeasurements(
      grpc::ServerContext*,
      grpc::ServerReader<cairn::v1::ReportMeasurementsRequest>* reader,
      cairn::v1::ReportMeasurementsResponse* response) override;
  grpc::Status CompleteTrial(grpc::ServerContext*,
                             const cairn::v1::CompleteTrialRequest* request,
                             cairn::v1::Trial* response) override;
  grpc::Status StopTrial(grpc::ServerContext*,
                         const cairn::v1::StopTrialRequest* request,
                         cairn::v1::Trial* response) override;
  grpc::Status CheckTrialEarlyStoppingState(
      grpc::ServerContext*,
      const cairn::v1::CheckTrialEarlyStoppingStateRequest* request,
      cairn::v1::CheckTrialEarlyStoppingStateResponse* response) override;
  grpc::Status ListOptimalTrials(
      grpc::ServerContext*, const cairn::v1::ListOptimalTrialsRequest* request,
      cairn::v1::ListOptimalTrialsResponse* response) override;
  grpc::Status GetMetricHistory(
      grpc::ServerContext*, const cairn::v1::GetMetricHistoryRequest* request,
      cairn::v1::GetMetricHistoryResponse* response) override;
  grpc::Status ReadTrialLogs(
      grpc::ServerContext*, const cairn::v1::ReadTrialLogsRequest* request,
      cairn::v1::ReadTrialLogsResponse* response) override;

 private:
  StudyManager* const manager_;
  // The caller of `method` (a StudyService method's short name) acting on
  // `resource` (see AuthorizeCall).
  absl::StatusOr<auth::Principal> Authorize(grpc::ServerContext* context,
                                            absl::string_view method,
                                            absl::string_view resource) const;

  // auth::CheckMayDelete for `what` in study `study_name` (which it reads).
  absl::Status CheckMayDelete(const auth::Principal& caller,
                              absl::string_view what,
                              absl::string_view study_name) const;

  jobs::JobRunner* runner_ = nullptr;
  const auth::Authorizer* authorizer_ = nullptr;
  StudyObserver* observer_ = nullptr;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_STUDY_SERVICE_H_
