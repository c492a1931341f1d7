// See batch.h.
#include "http/batch.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "http/rest_json.h"

namespace cairn::http {
namespace {

// Header names in lower case; a repeated header keeps its first value.
using Headers = std::map<std::string, std::string>;

// What is shown of a value the client sent, in errors.
std::string Shown(absl::string_view value) {
  return std::string(value.substr(0, 100));
}

absl::Status BadBatch(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("batch request: ", what));
}

// The boundary parameter of a multipart/mixed Content-Type.
absl::StatusOr<std::string> Boundary(absl::string_view content_type) {
  std::vector<absl::string_view> params = absl::StrSplit(content_type, ';');
  if (!absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(params[0]),
                              "multipart/mixed")) {
    return BadBatch(absl::StrCat("Content-Type '", Shown(content_type),
                                 "' is not multipart/mixed"));
  }
  for (size_t i = 1; i < params.size(); ++i) {
    absl::string_view param = absl::StripAsciiWhitespace(params[i]);
    if (!absl::StartsWithIgnoreCase(param, "boundary=")) continue;
    param.remove_prefix(9);
    if (param.size() >= 2 && param.front() == '"' && param.back() == '"') {
      param = param.substr(1, param.size() - 2);
    }
    if (!param.empty() && param.size() <= 70) return std::string(param);
  }
  return BadBatch(absl::StrCat("Content-Type '", Shown(content_type),
                               "' has no boundary of 1 to 70 characters"));
}

// Removes the line break ("\r\n" or "\n") at the end of `text`, if any.
absl::string_view WithoutLineBreak(absl::string_view text) {
  if (absl::ConsumeSuffix(&text, "\n")) absl::ConsumeSuffix(&text, "\r");
  return text;
}

// The parts of a multipart body (RFC 2046): the text between delimiter
// lines "--boundary", without the line break before each delimiter.
absl::StatusOr<std::vector<absl::string_view>> SplitParts(
    absl::string_view body, const std::string& boundary) {
  const std::string delimiter = "--" + boundary;
  size_t at =
      absl::StartsWith(body, delimiter) ? 0 : body.find("\n" + delimiter);
  if (at == absl::string_view::npos) {
    return BadBatch("the body holds no part delimiter of its boundary");
  }
  std::vector<absl::string_view> parts;
  while (true) {
    at = body.find(delimiter, at) + delimiter.size();
    if (body.substr(at, 2) == "--") return parts;  // The close delimiter.
    const size_t start = body.find('\n', at);
    const size_t next = start == absl::string_view::npos
                            ? start
                            : body.find("\n" + delimiter, start);
    if (next == absl::string_view::npos) {
      return BadBatch("the body ends before its close delimiter");
    }
    if (parts.size() == kMaxBatchParts) {
      return BadBatch(absl::StrCat("more than ", kMaxBatchParts, " parts"));
    }
    parts.push_back(
        WithoutLineBreak(body.substr(start + 1, next + 1 - (start + 1))));
    at = next + 1;
  }
}

// Splits a header block and what follows the blank line after it; header
// lines may end in "\r\n" or "\n", and a line starting with a space or tab
// continues the one before (RFC 5322 folding).
std::pair<Headers, absl::string_view> SplitHeaders(absl::string_view text) {
  Headers headers;
  std::string* last = nullptr;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    absl::string_view line = text.substr(0, end);
    text = end == absl::string_view::npos ? "" : text.substr(end + 1);
    absl::ConsumeSuffix(&line, "\r");
    if (line.empty()) break;
    if ((line[0] == ' ' || line[0] == '\t') && last != nullptr) {
      absl::StrAppend(last, " ", absl::StripAsciiWhitespace(line));
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    auto [it, added] = headers.emplace(
        absl::AsciiStrToLower(line.substr(0, colon)),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
    last = added ? &it->second : nullptr;
  }
  return {std::move(headers), text};
}

std::string HeaderOr(const Headers& headers, const std::string& name,
                     const std::string& fallback) {
  auto it = headers.find(name);
  return it == headers.end() ? fallback : it->second;
}

// The body of a request: Content-Length bytes when it says how many (and
// they are there), else everything after the headers.
absl::string_view RequestBody(const Headers& headers, absl::string_view rest) {
  size_t length = 0;
  auto it = headers.find("content-length");
  if (it != headers.end() && absl::SimpleAtoi(it->second, &length) &&
      length <= rest.size()) {
    return rest.substr(0, length);
  }
  return rest;
}

// The HTTP request in one part, with the batch's peer, host and TLS and its
// Authorization unless the part has one.
absl::StatusOr<HttpRequest> PartRequest(const HttpRequest& batch, int index,
                                        absl::string_view content) {
  const size_t end = content.find('\n');
  absl::string_view line = content.substr(0, end);
  absl::ConsumeSuffix(&line, "\r");
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  if (words.size() != 3 || !absl::StartsWith(words[2], "HTTP/") ||
      !absl::StartsWith(words[1], "/")) {
    return BadBatch(absl::StrCat("part ", index + 1, ": '", Shown(line),
                                 "' is not an HTTP request line"));
  }
  auto [headers, rest] = SplitHeaders(
      end == absl::string_view::npos ? "" : content.substr(end + 1));
  HttpRequest request;
  request.method = std::string(words[0]);
  std::vector<absl::string_view> target =
      absl::StrSplit(words[1], absl::MaxSplits('?', 1));
  request.path = UrlDecode(target[0], /*plus_is_space=*/false);
  if (target.size() > 1) request.query = std::string(target[1]);
  request.body = std::string(RequestBody(headers, rest));
  request.authorization =
      HeaderOr(headers, "authorization", batch.authorization);
  request.content_type = HeaderOr(headers, "content-type", "");
  request.peer = batch.peer;
  request.host = batch.host;
  request.https = batch.https;
  return request;
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Payload Too Large";
    case 429:
      return "Too Many Requests";
    case 499:
      return "Client Closed Request";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return status < 400 ? "OK" : "Error";
  }
}

// One part of the answer: `response` as application/http.
void AppendPart(const std::string& boundary, const std::string& content_id,
                const HttpResponse& response, std::string* out) {
  absl::StrAppend(out, "--", boundary,
                  "\r\nContent-Type: application/http\r\n");
  if (!content_id.empty()) {
    absl::string_view id = content_id;
    absl::ConsumePrefix(&id, "<");
    absl::StrAppend(out, "Content-ID: <response-", id, "\r\n");
  }
  absl::StrAppend(out, "\r\nHTTP/1.1 ", response.status, " ",
                  Reason(response.status),
                  "\r\nContent-Type: ", response.content_type, "\r\n");
  for (const auto& [name, value] : response.headers) {
    absl::StrAppend(out, name, ": ", value, "\r\n");
  }
  absl::StrAppend(out, "Content-Length: ", response.body.size(), "\r\n\r\n",
                  response.body, "\r\n");
}

std::string NewBoundary() {
  absl::BitGen gen;
  return absl::StrFormat("batch_cairn_%016x%016x", absl::Uniform<uint64_t>(gen),
                         absl::Uniform<uint64_t>(gen));
}

// The response to one part: its request served, or the error in it.
HttpResponse ServePart(const HttpRequest& batch, int index,
                       absl::string_view content, const HttpHandler& serve) {
  absl::StatusOr<HttpRequest> request = PartRequest(batch, index, content);
  if (!request.ok()) return ErrorResponse(request.status());
  if (!absl::StartsWith(request->path, "/v1/")) {
    return ErrorResponse(absl::NotFoundError(absl::StrCat(
        "batch request part ", index + 1, ": no route ", Shown(request->method),
        " ", Shown(request->path), " in a batch (only API calls under /v1/)")));
  }
  return serve(*request);
}

}  // namespace

HttpResponse ServeBatch(const HttpRequest& batch, const HttpHandler& serve) {
  if (batch.method != "POST") {
    return ErrorResponse(absl::NotFoundError(
        absl::StrCat("no route ", Shown(batch.method), " ", kBatchPath)));
  }
  absl::StatusOr<std::string> boundary = Boundary(batch.content_type);
  if (!boundary.ok()) return ErrorResponse(boundary.status());
  absl::StatusOr<std::vector<absl::string_view>> parts =
      SplitParts(batch.body, *boundary);
  if (!parts.ok()) return ErrorResponse(parts.status());
  if (parts->empty()) return ErrorResponse(BadBatch("it holds no part"));
  HttpResponse out;
  const std::string answer_boundary = NewBoundary();
  out.content_type =
      absl::StrCat("multipart/mixed; boundary=", answer_boundary);
  for (size_t i = 0; i < parts->size(); ++i) {
    auto [headers, content] = SplitHeaders((*parts)[i]);
    const HttpResponse response =
        ServePart(batch, static_cast<int>(i), content, serve);
    AppendPart(answer_boundary, HeaderOr(headers, "content-id", ""), response,
               &out.body);
  }
  absl::StrAppend(&out.body, "--", answer_boundary, "--\r\n");
  return out;
}

}  // namespace cairn::http
