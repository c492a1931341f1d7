// SageMaker's AddTags, ListTags and DeleteTags (sagemaker_api.h): a job's
// tags are labels of its study (sagemaker/tags.h), changed through
// StudyService.UpdateStudyLabels, so an editor's key may tag and a
// viewer's may only list.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "http/sagemaker_api.h"
#include "http/sagemaker_calls.h"
#include "nlohmann/json.hpp"
#include "sagemaker/tags.h"
#include "sagemaker/training_job_request.h"

namespace cairn::http {

using nlohmann::json;
using namespace sagemaker_calls;  // NOLINT: the shared calls, many of them.

namespace {

// The request body, an object of only `members` (ResourceArn among them).
absl::StatusOr<json> BodyOf(const std::string& body,
                            std::initializer_list<const char*> members) {
  json j = json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("ResourceArn") ||
      !j["ResourceArn"].is_string()) {
    return absl::InvalidArgumentError(
        "request body: give {\"ResourceArn\": ARN, ...}");
  }
  for (const auto& [key, value] : j.items()) {
    if (std::find(members.begin(), members.end(), key) == members.end()) {
      return sagemaker::InvalidField(key, "", "is not a member of this call");
    }
  }
  return j;
}

// The job that body's ResourceArn names: its study and, for a tuning
// job's training job, its trial's id (0 otherwise).
struct Tagged {
  cairn::v1::Study study;
  int64_t trial_id = 0;
};

absl::StatusOr<Tagged> TaggedJob(Stub* stub, const HttpRequest& http,
                                 const json& body) {
  auto resource =
      sagemaker::ParseResourceArn(body["ResourceArn"].get<std::string>());
  if (!resource.ok()) return resource.status();
  if (resource->tuning_job) {
    auto job = FindTuningJobNamed(stub, http, resource->name);
    if (!job.ok()) return job.status();
    return Tagged{std::move(job->study)};
  }
  auto job = FindAnyJob(stub, http, resource->name);
  if (!job.ok()) return job.status();
  return Tagged{std::move(job->study),
                job->of_tuning_job ? job->trial->id() : 0};
}

absl::StatusOr<cairn::v1::Study> UpdateLabels(
    Stub* stub, const HttpRequest& http,
    cairn::v1::UpdateStudyLabelsRequest request) {
  return Rpc(stub, http, &Stub::UpdateStudyLabels, request);
}

}  // namespace

absl::StatusOr<std::string> SageMakerApi::AddTags(const Call& call) const {
  auto body = BodyOf(call.http.body, {"ResourceArn", "Tags"});
  if (!body.ok()) return body.status();
  auto tags = sagemaker::ParseTags("Tags", body->value("Tags", json()));
  if (!tags.ok()) return tags.status();
  auto job = TaggedJob(stub_.get(), call.http, *body);
  if (!job.ok()) return job.status();
  if (absl::Status s =
          sagemaker::CheckTagRoom(job->study, *tags, job->trial_id);
      !s.ok()) {
    return s;
  }
  cairn::v1::UpdateStudyLabelsRequest request;
  request.set_name(job->study.name());
  for (const auto& [label, value] :
       sagemaker::TagLabels(*tags, job->trial_id)) {
    (*request.mutable_labels())[label] = value;
  }
  auto updated = UpdateLabels(stub_.get(), call.http, std::move(request));
  if (!updated.ok()) return updated.status();
  return json({{"Tags", sagemaker::TagsJson(*updated, job->trial_id)}}).dump();
}

absl::StatusOr<std::string> SageMakerApi::ListTags(const Call& call) const {
  auto body =
      BodyOf(call.http.body, {"ResourceArn", "NextToken", "MaxResults"});
  if (!body.ok()) return body.status();
  // At most 50 tags: one page always holds them all, so no NextToken is
  // ever given out, and none is valid.
  if (body->contains("NextToken")) {
    return sagemaker::InvalidField("NextToken", (*body)["NextToken"].dump(),
                                   "is not a token this list gave");
  }
  if (body->contains("MaxResults") &&
      (!(*body)["MaxResults"].is_number_integer() ||
       (*body)["MaxResults"].get<int64_t>() < 50)) {
    return sagemaker::InvalidField("MaxResults", (*body)["MaxResults"].dump(),
                                   "must be an integer of at least 50");
  }
  auto job = TaggedJob(stub_.get(), call.http, *body);
  if (!job.ok()) return job.status();
  return json({{"Tags", sagemaker::TagsJson(job->study, job->trial_id)}})
      .dump();
}

absl::StatusOr<std::string> SageMakerApi::DeleteTags(const Call& call) const {
  auto body = BodyOf(call.http.body, {"ResourceArn", "TagKeys"});
  if (!body.ok()) return body.status();
  const json keys = body->value("TagKeys", json());
  if (!keys.is_array() || keys.empty() ||
      keys.size() > static_cast<size_t>(sagemaker::kMaxTags)) {
    return sagemaker::InvalidField("TagKeys", "", "must list 1 to 50 tag keys");
  }
  auto job = TaggedJob(stub_.get(), call.http, *body);
  if (!job.ok()) return job.status();
  cairn::v1::UpdateStudyLabelsRequest request;
  request.set_name(job->study.name());
  for (const json& key : keys) {
    if (!key.is_string() || key.get<std::string>().empty() ||
        key.get<std::string>().size() > 128) {
      return sagemaker::InvalidField("TagKeys", key.dump(),
                                     "must be 1 to 128 characters");
    }
    const std::string text = key.get<std::string>();
    if (absl::Status s =
            sagemaker::CheckOwnTag(job->study, text, job->trial_id);
        !s.ok()) {
      return s;
    }
    request.add_remove_keys(sagemaker::TagLabelPrefix(job->trial_id) + text);
  }
  auto updated = UpdateLabels(stub_.get(), call.http, std::move(request));
  if (!updated.ok()) return updated.status();
  return std::string("{}");
}

}  // namespace cairn::http
