#include "http/rest_json.h"

#include <chrono>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/formats/json_mapping.h"
#include "audit/call_peer.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace cairn::http {
namespace {

const char* CodeName(grpc::StatusCode code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i <= 16 ? kNames[i] : "UNKNOWN";
}

}  // namespace

std::string UrlDecode(absl::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+' && plus_is_space) {
      out.push_back(' ');
    } else if (in[i] == '%' && i + 2 < in.size()) {
      int value = 0;
      if (absl::SimpleHexAtoi(in.substr(i + 1, 2), &value)) {
        out.push_back(static_cast<char>(value));
        i += 2;
      } else {
        out.push_back('%');
      }
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

int HttpStatusOf(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

HttpResponse ErrorResponse(const grpc::Status& status) {
  HttpResponse response;
  response.status = HttpStatusOf(status.error_code());
  nlohmann::json error = {{"code", response.status},
                          {"status", CodeName(status.error_code())},
                          {"message", status.error_message()}};
  response.body = nlohmann::json{{"error", error}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (response.status == 401) {
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
  }
  return response;
}

HttpResponse ErrorResponse(const absl::Status& status) {
  return ErrorResponse(
      grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                   std::string(status.message())));
}

namespace {

HttpResponse PrintedResponse(
    const google::protobuf::Message& message,
    absl::Status (*print)(const google::protobuf::Message&, std::string*)) {
  HttpResponse response;
  const absl::Status s = print(message, &response.body);
  if (!s.ok()) {
    return ErrorResponse(
        absl::InternalError(absl::StrCat("cannot write JSON: ", s.message())));
  }
  return response;
}

}  // namespace

HttpResponse JsonResponse(const google::protobuf::Message& message) {
  return PrintedResponse(message, &api::formats::AppendApiJson);
}

HttpResponse AiPlatformJsonResponse(const google::protobuf::Message& message) {
  return PrintedResponse(message, &api::formats::AppendAiPlatformJson);
}

absl::Status ParseJsonBody(absl::string_view body,
                           google::protobuf::Message* message) {
  if (body.empty()) return absl::OkStatus();
  const auto s = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(body.data(), body.size()), message);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("request body: not a JSON ", message->GetTypeName(), ": ",
                     s.message().substr(0, 300).as_string()));
  }
  return absl::OkStatus();
}

std::string QueryValue(absl::string_view query, absl::string_view key) {
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (UrlDecode(kv[0], true) == key)
      return kv.size() > 1 ? UrlDecode(kv[1], true) : "";
  }
  return "";
}

absl::Status ParseQuery(absl::string_view query,
                        google::protobuf::Message* message) {
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    const std::string key = UrlDecode(kv[0], true);
    const std::string value = kv.size() > 1 ? UrlDecode(kv[1], true) : "";
    if (key == "format" || key == "alt") continue;
    nlohmann::json field;
    if (value == "true" || value == "false") {
      field[key] = value == "true";
    } else {
      field[key] = value;
    }
    const std::string json =
        field.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::unique_ptr<google::protobuf::Message> one(message->New());
    const auto s = google::protobuf::util::JsonStringToMessage(json, one.get());
    if (s.ok()) message->MergeFrom(*one);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "query parameter ", key.substr(0, 100), "=\"", value.substr(0, 100),
          "\": ", s.message().substr(0, 200).as_string()));
    }
  }
  return absl::OkStatus();
}

void PrepareCall(const HttpRequest& request, grpc::ClientContext* context) {
  if (!request.authorization.empty()) {
    context->AddMetadata("authorization", request.authorization);
  }
  context->AddMetadata(audit::kHttpPeerMetadata, request.peer);
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(120));
}

HttpResponse RouteNotFound(const HttpRequest& request) {
  return ErrorResponse(absl::NotFoundError(absl::StrCat(
      "no REST route ", request.method, " ", request.path.substr(0, 200))));
}

std::pair<std::string, std::string> SplitVerb(const std::string& part) {
  std::pair<std::string, std::string> out =
      absl::StrSplit(part, absl::MaxSplits(':', 1));
  return out;
}

}  // namespace cairn::http
