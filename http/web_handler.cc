#include "http/web_handler.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "http/batch.h"
#include "http/embedded_files.h"
#include "http/rest_json.h"

namespace cairn::http {
namespace {

// The UI runs only its own scripts; no inline script, no other origin.
constexpr char kContentSecurityPolicy[] =
    "default-src 'self'; img-src 'self' data:; style-src 'self' "
    "'unsafe-inline'; frame-ancestors 'none'";

absl::string_view ContentType(absl::string_view name) {
  if (absl::EndsWith(name, ".js")) return "text/javascript; charset=utf-8";
  if (absl::EndsWith(name, ".css")) return "text/css; charset=utf-8";
  return "text/html; charset=utf-8";
}

const EmbeddedFile* Find(absl::string_view name) {
  for (const EmbeddedFile* f = kEmbeddedFiles; f->name[0] != '\0'; ++f) {
    if (name == f->name) return f;
  }
  return nullptr;
}

}  // namespace

WebHandler::WebHandler(std::unique_ptr<RestApi> api,
                       std::unique_ptr<AiPlatformApi> aiplatform,
                       const std::string& chart_js_path)
    : api_(std::move(api)), aiplatform_(std::move(aiplatform)) {
  std::ifstream in(chart_js_path, std::ios::binary);
  std::ostringstream data;
  if (in) data << in.rdbuf();
  chart_js_ = data.str();
}

HttpResponse WebHandler::Static(const std::string& name) const {
  HttpResponse response;
  response.content_type = std::string(ContentType(name));
  response.headers.emplace_back("Content-Security-Policy",
                                kContentSecurityPolicy);
  response.headers.emplace_back("Cache-Control", "no-cache");
  if (name == "chart.min.js") {
    if (chart_js_.empty()) {
      response.status = 404;
      response.body = "// Chart.js not found: install libjs-chart.js\n";
      return response;
    }
    response.body = chart_js_;
    return response;
  }
  const EmbeddedFile* file = Find(name);
  if (file == nullptr) {
    response.status = 404;
    response.content_type = "text/plain; charset=utf-8";
    response.body = "not found\n";
    return response;
  }
  response.body = std::string(file->data);
  return response;
}

HttpResponse WebHandler::Handle(const HttpRequest& request) const {
  if (sagemaker_ != nullptr && SageMakerApi::Matches(request)) {
    return sagemaker_->Handle(request);
  }
  if (absl::StartsWith(request.path, "/v1/projects/")) {
    return aiplatform_->Handle(request);
  }
  if (absl::StartsWith(request.path, "/v1/")) return api_->Handle(request);
  if (request.path == kBatchPath) {
    return ServeBatch(request,
                      [this](const HttpRequest& r) { return Handle(r); });
  }
  if (AiPlatformApi::IsDiscovery(request)) {
    return aiplatform_->Discovery(request);
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return ErrorResponse(absl::NotFoundError(absl::StrCat(
        "no route ", request.method, " ", request.path.substr(0, 200))));
  }
  if (absl::StartsWith(request.path, "/static/")) {
    return Static(request.path.substr(8));
  }
  // Every other path is a page of the single-page app, which routes on
  // location.pathname itself.
  return Static("index.html");
}

}  // namespace cairn::http
