// Thin gRPC adapter over aiplatform::JobManager.
#include "server/job_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/resource_names.h"
#include "jobs/tf_config.h"
#include "server/authorize_call.h"
#include "server/check_limits.h"
#include "server/read_logs.h"
#include "server/status_util.h"

namespace cairn {
absl::StatusOr<auth::Principal> JobServiceImpl::Authorize(
    grpc::ServerContext* context, absl::string_view method) const {
  return AuthorizeCall(authorizer_, context,
                       absl::StrCat("/cairn.v1.JobService/", method), "");
}

grpc::Status JobServiceImpl::SubmitTrainingJob(
    grpc::ServerContext* context,
    const cairn::v1::SubmitTrainingJobRequest* request,
    cairn::v1::Job* response) {
  absl::StatusOr<auth::Principal> caller =
      Authorize(context, "SubmitTrainingJob");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(
      jobs_->Submit(request->job(), request->package_files(), caller->name),
      response);
}

grpc::Status JobServiceImpl::GetJob(grpc::ServerContext* context,
                                    const cairn::v1::GetJobRequest* request,
                                    cairn::v1::Job* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "GetJob");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(jobs_->Get(request->job_id()), response);
}

grpc::Status JobServiceImpl::ListJobs(grpc::ServerContext* context,
                                      const cairn::v1::ListJobsRequest* request,
                                      cairn::v1::ListJobsResponse* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "ListJobs");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  absl::StatusOr<aiplatform::JobFilter> filter =
      aiplatform::JobFilter::Parse(request->filter(), "filter");
  if (!filter.ok()) return ToGrpcStatus(filter.status());
  filter->RequireState(request->state());
  absl::StatusOr<aiplatform::JobManager::JobPage> page =
      jobs_->List(*filter, request->page_size(), request->page_token());
  if (!page.ok()) return ToGrpcStatus(page.status());
  for (cairn::v1::Job& job : page->jobs) *response->add_jobs() = std::move(job);
  response->set_next_page_token(page->next_page_token);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::CancelJob(
    grpc::ServerContext* context, const cairn::v1::CancelJobRequest* request,
    cairn::v1::Job* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "CancelJob");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  return Reply(jobs_->Cancel(request->job_id()), response);
}

grpc::Status JobServiceImpl::ReadJobLogs(
    grpc::ServerContext* context, const cairn::v1::ReadJobLogsRequest* request,
    cairn::v1::ReadJobLogsResponse* response) {
  absl::StatusOr<auth::Principal> caller = Authorize(context, "ReadJobLogs");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  if (grpc::Status s = CheckLimits(*request); !s.ok()) return s;
  absl::StatusOr<aiplatform::JobManager::Trials> trials =
      jobs_->JobTrials(request->job_id());
  if (!trials.ok()) return ToGrpcStatus(trials.status());
  for (int64_t id : trials->trial_ids) response->add_trial_ids(id);
  response->set_state(trials->state);
  if (trials->job_template.replicas_size() > 0) {
    for (const jobs::ReplicaTask& task :
         jobs::ExpandReplicas(trials->job_template)) {
      response->add_replicas(task.Name());
    }
  }
  if (request->trial_id() == 0) return grpc::Status::OK;
  absl::StatusOr<int64_t> study_id =
      api::ParseStudyName(trials->study_name, "study");
  if (!study_id.ok()) return ToGrpcStatus(study_id.status());
  return ReadLogChunk(
      runner_, api::TrialResourceName(*study_id, request->trial_id()),
      request->offset(), request->max_bytes(), request->replica(), response);
}

}  // namespace cairn
