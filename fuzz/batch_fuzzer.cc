// Feeds arbitrary bytes to ServeBatch as the body of a POST /batch (the
// first line of the input, up to 200 bytes, is its Content-Type), with a
// handler that answers every part. Checks that it returns (no crash, no
// sanitizer report), that an accepted batch answers multipart/mixed with a
// close delimiter, and that no part reaches the handler outside /v1/.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "http/batch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  cairn::http::HttpRequest batch;
  batch.method = "POST";
  batch.path = cairn::http::kBatchPath;
  batch.content_type = input.substr(0, std::min<size_t>(newline, 200));
  if (newline != std::string::npos) batch.body = input.substr(newline + 1);
  const cairn::http::HttpResponse response = cairn::http::ServeBatch(
      batch, [](const cairn::http::HttpRequest& request) {
        if (!absl::StartsWith(request.path, "/v1/")) abort();
        cairn::http::HttpResponse out;
        out.body = request.body;
        return out;
      });
  if (response.status == 200 &&
      (!absl::StartsWith(response.content_type, "multipart/mixed") ||
       !absl::EndsWith(response.body, "--\r\n"))) {
    abort();
  }
  return 0;
}
