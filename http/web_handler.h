// WebHandler: everything cairnd serves over HTTP on --http-listen: the REST
// API under /v1/ (rest_api.h), AI Platform's under /v1/projects/ with its
// discovery document (aiplatform_api.h), batches of those calls at /batch
// (batch.h), SageMaker's (POST / with X-Amz-Target SageMaker.*) and
// CloudWatch Logs' (Logs_20140328.*) JSON APIs, and the web UI: its pages (one
// embedded single-page app, http/ui/, for /, /login, /studies/...), its scripts
// under /static/, Chart.js read from Debian's libjs-chart.js, and
// /static/limits.js: the server's limits the UI shows
// (CAIRN_LIMITS.importanceMinTrials is tuner::kMinImportanceTrials), so the UI
// keeps no copy of them.
//
// The UI's files and the discovery document need no token (they hold no
// data); every /v1/ call does, as over gRPC.
#ifndef CAIRN_HTTP_WEB_HANDLER_H_
#define CAIRN_HTTP_WEB_HANDLER_H_

#include <memory>
#include <string>

#include "http/aiplatform_api.h"
#include "http/cloudwatch_logs_api.h"
#include "http/http_server.h"
#include "http/rest_api.h"
#include "http/sagemaker_api.h"

namespace cairn::http {

// Where Debian's libjs-chart.js installs Chart.js.
inline constexpr char kDefaultChartJsPath[] =
    "/usr/share/javascript/chart.js/chart.min.js";

// Thread-safe.
class WebHandler {
 public:
  // `chart_js_path` is read once here; when it is missing the UI's pages
  // still load and say that charts need libjs-chart.js.
  WebHandler(std::unique_ptr<RestApi> api,
             std::unique_ptr<AiPlatformApi> aiplatform,
             const std::string& chart_js_path);

  // Serves SageMaker's API (POST / with X-Amz-Target) with `sagemaker`;
  // without one such requests get 404. Call before serving.
  void set_sagemaker(std::unique_ptr<SageMakerApi> sagemaker) {
    sagemaker_ = std::move(sagemaker);
  }

  // Serves CloudWatch Logs' read API (X-Amz-Target Logs_20140328.*) with
  // `logs`; without one such requests go to SageMaker's API, which refuses
  // them. Call before serving.
  void set_cloudwatch_logs(std::unique_ptr<CloudWatchLogsApi> logs) {
    logs_ = std::move(logs);
  }

  HttpResponse Handle(const HttpRequest& request) const;

 private:
  HttpResponse Static(const std::string& name) const;
  const std::unique_ptr<RestApi> api_;
  const std::unique_ptr<AiPlatformApi> aiplatform_;
  std::unique_ptr<SageMakerApi> sagemaker_;
  std::unique_ptr<CloudWatchLogsApi> logs_;
  std::string chart_js_;  // Empty when the file could not be read.
};

}  // namespace cairn::http

#endif  // CAIRN_HTTP_WEB_HANDLER_H_
