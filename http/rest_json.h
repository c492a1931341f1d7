// The JSON side of the REST API: protobuf messages in the protobuf JSON
// mapping (printed by api/formats/json_mapping.h, parsed by
// google::protobuf::util), query strings into request messages,
// and errors in Google's JSON error shape, {"error": {"code", "status",
// "message"}}: the gRPC code mapped to an HTTP status, which is also "code",
// and the gRPC code's name as "status" (as Google's APIs answer).
#ifndef CAIRN_HTTP_REST_JSON_H_
#define CAIRN_HTTP_REST_JSON_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/status.h"
#include "http/http_server.h"

namespace cairn::http {

// The HTTP status of a gRPC status code (OK 200, INVALID_ARGUMENT 400,
// UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404, ...).
int HttpStatusOf(grpc::StatusCode code);

// An error response for `status` (not OK).
HttpResponse ErrorResponse(const grpc::Status& status);
HttpResponse ErrorResponse(const absl::Status& status);

// A 200 response holding `message` in the protobuf JSON mapping (field
// names in lowerCamelCase, enums by name).
HttpResponse JsonResponse(const google::protobuf::Message& message);

// The same in AI Platform's shape (fields at their defaults left out), for
// AI Platform's REST routes.
HttpResponse AiPlatformJsonResponse(const google::protobuf::Message& message);

// Merges a JSON body into `message`. An empty body leaves it unchanged.
// InvalidArgument naming the problem for malformed JSON or unknown fields.
absl::Status ParseJsonBody(absl::string_view body,
                           google::protobuf::Message* message);

// Merges `query` ("a=1&b=x", URL-encoded) into `message`: each key is a
// field name (proto or lowerCamel name; "format" is skipped). Values of
// "true"/"false" are booleans, anything else a JSON string (the JSON
// mapping accepts strings for integers). InvalidArgument naming the key
// and value that do not fit.
absl::Status ParseQuery(absl::string_view query,
                        google::protobuf::Message* message);

// Decodes %XX escapes (a malformed one stays as it is); '+' becomes a space
// when `plus_is_space` (query strings) and stays '+' otherwise (paths).
std::string UrlDecode(absl::string_view in, bool plus_is_space);

// The value of `key` in `query` (URL-decoded), "" if absent.
std::string QueryValue(absl::string_view query, absl::string_view key);

// Prepares the gRPC call a REST request makes: the caller's Authorization
// header and address (audit::kHttpPeerMetadata, for the audit log) as the
// call's metadata, and a deadline.
void PrepareCall(const HttpRequest& request, grpc::ClientContext* context);

// A REST request's call of the in-process gRPC `method` of `stub` with
// `req` (PrepareCall's metadata and deadline): the response printed by
// `print` (JsonResponse, AiPlatformJsonResponse, ...), or the error.
template <typename Stub, typename Req, typename Resp>
HttpResponse CallRpc(
    Stub* stub, const HttpRequest& http,
    grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
    const Req& req,
    HttpResponse (*print)(const google::protobuf::Message&) = &JsonResponse) {
  grpc::ClientContext context;
  PrepareCall(http, &context);
  Resp resp;
  const grpc::Status status = (stub->*method)(&context, req, &resp);
  if (!status.ok()) return ErrorResponse(status);
  return print(resp);
}

// 404 for a path (or method) no REST route serves.
HttpResponse RouteNotFound(const HttpRequest& request);

// Splits a path part "id:verb" into ("id", "verb"); no ':' gives ("id", "").
std::pair<std::string, std::string> SplitVerb(const std::string& part);

}  // namespace cairn::http

#endif  // CAIRN_HTTP_REST_JSON_H_
