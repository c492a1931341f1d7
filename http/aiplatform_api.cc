// See aiplatform_api.h.
#include "http/aiplatform_api.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "aiplatform/job_config.h"
#include "aiplatform/job_rest.h"
#include "http/embedded_files.h"
#include "http/rest_json.h"
#include "nlohmann/json.hpp"

namespace cairn::http {
namespace {

using cairn::v1::JobService;

// AI Platform's answer to cancel: an Empty, {}.
HttpResponse EmptyObject(const google::protobuf::Message&) {
  HttpResponse out;
  out.body = "{}";
  return out;
}

// A Host header as a URL's authority: a name or address and a port, no
// user info, path or spaces; "" when it is not one.
std::string Authority(const std::string& host) {
  if (host.empty() || host.size() > 255) return "";
  for (char c : host) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '-' && c != ':' &&
        c != '[' && c != ']') {
      return "";
    }
  }
  return host;
}

const EmbeddedFile* DiscoveryFile() {
  for (const EmbeddedFile* f = kDiscoveryFiles; f->name[0] != '\0'; ++f) {
    if (absl::string_view(f->name) == "ml_v1.json") return f;
  }
  return nullptr;
}

}  // namespace

bool AiPlatformApi::IsDiscovery(const HttpRequest& request) {
  if (request.method != "GET") return false;
  if (request.path == "/discovery/v1/apis/ml/v1/rest") return true;
  if (request.path != "/$discovery/rest") return false;
  const std::string version = QueryValue(request.query, "version");
  return version.empty() || version == "v1";
}

HttpResponse AiPlatformApi::Discovery(const HttpRequest& request) const {
  const std::string authority = Authority(request.host);
  if (authority.empty()) {
    return ErrorResponse(absl::InvalidArgumentError(
        "the discovery document needs the Host header of the request (a "
        "host and port)"));
  }
  const EmbeddedFile* file = DiscoveryFile();
  nlohmann::json doc = nlohmann::json::parse(
      file != nullptr ? file->data : absl::string_view("{}"), nullptr, false);
  if (file == nullptr || doc.is_discarded()) {
    return ErrorResponse(
        absl::InternalError("the embedded discovery document is not JSON"));
  }
  const std::string root =
      absl::StrCat(request.https ? "https://" : "http://", authority, "/");
  doc["rootUrl"] = root;
  doc["baseUrl"] = root;
  doc["mtlsRootUrl"] = root;
  HttpResponse out;
  out.body = doc.dump();
  return out;
}

HttpResponse AiPlatformApi::Handle(const HttpRequest& r) const {
  // "/v1/projects/{p}/jobs[/{j}[:verb]]"
  std::vector<std::string> parts = absl::StrSplit(
      absl::string_view(r.path).substr(4), '/', absl::SkipEmpty());
  if (parts.size() < 3 || parts.size() > 5 || parts[0] != "projects" ||
      parts[2] != "jobs") {
    return RouteNotFound(r);
  }
  if (parts.size() == 5) {
    if (parts[4] != "logs" || r.method != "GET") return RouteNotFound(r);
    return Logs(r, parts[3]);
  }
  if (parts.size() == 4) {
    const auto [id, verb] = SplitVerb(parts[3]);
    return OneJob(r, id, verb);
  }
  if (r.method == "POST") return Create(r, parts[1]);
  if (r.method == "GET") return List(r);
  return RouteNotFound(r);
}

HttpResponse AiPlatformApi::Create(const HttpRequest& r,
                                   const std::string& project) const {
  if (r.body.empty()) {
    return ErrorResponse(absl::InvalidArgumentError(
        "request body: give a Job (jobId, trainingInput)"));
  }
  absl::StatusOr<aiplatform::JobConfig> config =
      aiplatform::ParseJobConfig(r.body);
  if (!config.ok()) {
    return ErrorResponse(absl::Status(
        config.status().code(),
        absl::StrCat("request body: ", config.status().message())));
  }
  cairn::v1::SubmitTrainingJobRequest req;
  *req.mutable_job() = std::move(config->job);
  if (absl::Status s = aiplatform::SetJobProject(project, *req.mutable_job());
      !s.ok()) {
    return ErrorResponse(s);
  }
  return CallRpc(stub_.get(), r, &JobService::StubInterface::SubmitTrainingJob,
                 req, &AiPlatformJsonResponse);
}

HttpResponse AiPlatformApi::List(const HttpRequest& r) const {
  absl::StatusOr<int> page_size =
      aiplatform::ParseListPageSize(QueryValue(r.query, "pageSize"));
  if (!page_size.ok()) return ErrorResponse(page_size.status());
  cairn::v1::ListJobsRequest req;
  req.set_filter(QueryValue(r.query, "filter"));
  req.set_page_size(*page_size);
  req.set_page_token(QueryValue(r.query, "pageToken"));
  return CallRpc(stub_.get(), r, &JobService::StubInterface::ListJobs, req,
                 &AiPlatformJsonResponse);
}

HttpResponse AiPlatformApi::Logs(const HttpRequest& r,
                                 const std::string& id) const {
  cairn::v1::ReadJobLogsRequest req;
  if (absl::Status s = ParseQuery(r.query, &req); !s.ok()) {
    return ErrorResponse(s);
  }
  req.set_job_id(id);
  return CallRpc(stub_.get(), r, &JobService::StubInterface::ReadJobLogs, req);
}

HttpResponse AiPlatformApi::OneJob(const HttpRequest& r, const std::string& id,
                                   const std::string& verb) const {
  if (r.method == "GET" && verb.empty()) {
    cairn::v1::GetJobRequest req;
    req.set_job_id(id);
    return CallRpc(stub_.get(), r, &JobService::StubInterface::GetJob, req,
                   &AiPlatformJsonResponse);
  }
  if (r.method == "POST" && verb == "cancel") {
    cairn::v1::CancelJobRequest req;
    req.set_job_id(id);
    return CallRpc(stub_.get(), r, &JobService::StubInterface::CancelJob, req,
                   &EmptyObject);
  }
  return RouteNotFound(r);
}

}  // namespace cairn::http
