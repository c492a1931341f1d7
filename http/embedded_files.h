// Files compiled in by cmake/embed_files.cmake: the web UI's (http/ui/) and
// the discovery documents (http/discovery/).
#ifndef CAIRN_HTTP_EMBEDDED_FILES_H_
#define CAIRN_HTTP_EMBEDDED_FILES_H_

#include "absl/strings/string_view.h"

namespace cairn::http {

struct EmbeddedFile {
  const char* name;  // File name, e.g. "app.js"; "" ends the table.
  absl::string_view data;
};

extern const EmbeddedFile kEmbeddedFiles[];   // http/ui/
extern const EmbeddedFile kDiscoveryFiles[];  // http/discovery/

}  // namespace cairn::http

#endif  // CAIRN_HTTP_EMBEDDED_FILES_H_
