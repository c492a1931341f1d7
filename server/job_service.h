// The gRPC JobService: AI Platform Training jobs. Converts requests to
// aiplatform::JobManager calls and results back; every handler first asks
// the Authorizer (editor to submit and cancel, viewer to read) and checks
// the request's limits.
#ifndef CAIRN_SERVER_JOB_SERVICE_H_
#define CAIRN_SERVER_JOB_SERVICE_H_

#include "aiplatform/job_manager.h"
#include "auth/authorizer.h"
#include "cairn/v1/job_service.grpc.pb.h"
#include "jobs/job_runner.h"

namespace cairn {

// Thread-safe: all state lives in the JobManager.
class JobServiceImpl final : public cairn::v1::JobService::Service {
 public:
  // `jobs` is not owned and must outlive the service.
  explicit JobServiceImpl(aiplatform::JobManager* jobs) : jobs_(jobs) {}
  // Enables ReadJobLogs. Not owned; call before serving.
  void set_job_runner(jobs::JobRunner* runner) { runner_ = runner; }
  // Not owned; call before serving. Without one, every call is refused.
  void set_authorizer(const auth::Authorizer* authorizer) {
    authorizer_ = authorizer;
  }

  grpc::Status SubmitTrainingJob(
      grpc::ServerContext* context,
      const cairn::v1::SubmitTrainingJobRequest* request,
      cairn::v1::Job* response) override;
  grpc::Status GetJob(grpc::ServerContext* context,
                      const cairn::v1::GetJobRequest* request,
                      cairn::v1::Job* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context,
                        const cairn::v1::ListJobsRequest* request,
                        cairn::v1::ListJobsResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext* context,
                         const cairn::v1::CancelJobRequest* request,
                         cairn::v1::Job* response) override;
  grpc::Status ReadJobLogs(grpc::ServerContext* context,
                           const cairn::v1::ReadJobLogsRequest* request,
                           cairn::v1::ReadJobLogsResponse* response) override;

 private:
  absl::StatusOr<auth::Principal> Authorize(grpc::ServerContext* context,
                                            absl::string_view method) const;

  aiplatform::JobManager* const jobs_;
  jobs::JobRunner* runner_ = nullptr;
  const auth::Authorizer* authorizer_ = nullptr;
};

}  // namespace cairn

#endif  // CAIRN_SERVER_JOB_SERVICE_H_
