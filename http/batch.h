// Google's batch protocol for REST APIs, served at the discovery document's
// batchPath ("batch"): what googleapiclient's new_batch_http_request()
// sends. The body is multipart/mixed; each part (Content-Type:
// application/http) holds one HTTP request ("GET /v1/... HTTP/1.1", its
// headers, a blank line, its body). The answer is multipart/mixed with one
// part per request, in order, each holding that request's HTTP response,
// with the Content-ID "<response-" + the request part's Content-ID without
// its '<', as Google's servers answer and googleapiclient expects.
//
// Each request of a batch is served as if it had been sent alone, with its
// own Authorization header (the batch's when it has none): tokens, roles,
// input limits and the audit log see every call.
#ifndef CAIRN_HTTP_BATCH_H_
#define CAIRN_HTTP_BATCH_H_

#include "http/http_server.h"

namespace cairn::http {

inline constexpr char kBatchPath[] = "/batch";
// The most requests in one batch (Google's APIs have the same limit).
inline constexpr int kMaxBatchParts = 1000;

// Serves `batch`, a POST to kBatchPath, by calling `serve` on the request of
// each part. Only API paths (under /v1/) are served inside a batch: any
// other path, a nested batch included, gets a 404 in its part, and a part
// holding no HTTP request line a 400 in its part; the other parts are
// served. The whole batch gets a 400 naming the problem (under 1 KB) when
// its Content-Type is not multipart/mixed with a boundary, its body is not
// delimited by that boundary, or it has no part or more than
// kMaxBatchParts; a 404 when it is not a POST. Thread-safe when `serve` is.
HttpResponse ServeBatch(const HttpRequest& batch, const HttpHandler& serve);

}  // namespace cairn::http

#endif  // CAIRN_HTTP_BATCH_H_
