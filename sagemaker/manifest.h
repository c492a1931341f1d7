// SageMaker's ManifestFile channels on the object root: S3Uri names a JSON
// manifest, an array whose first element is {"prefix": "s3://BUCKET/P"}
// and whose other elements are keys appended to that prefix; the channel
// is exactly those objects, each presented at <channel dir>/<key>.
//
// The manifest is hostile input. It is resolved like any object (a link
// must stay inside the root), opened without following a link and read
// only as a regular file of at most kMaxManifestBytes. It is refused
// (InvalidArgument naming S3Uri, the manifest's URI and the bad entry,
// under 1 KB) unless it holds 1 to kMaxManifestEntries distinct keys, each
// relative (no leading '/', no empty, "." or ".." segment, no control
// character, ',' or backslash; not both a file and the directory of
// another key), its prefix lies in an existing bucket of the object root,
// and every listed object is an existing regular file inside the root.
#ifndef CAIRN_SAGEMAKER_MANIFEST_H_
#define CAIRN_SAGEMAKER_MANIFEST_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sagemaker/object_root.h"

namespace cairn::sagemaker {

inline constexpr size_t kMaxManifestBytes = size_t{1} << 20;
inline constexpr size_t kMaxManifestEntries = 1000;

struct Manifest {
  std::string prefix;             // "s3://BUCKET/P", as written
  std::vector<std::string> keys;  // relative keys, in manifest order
};

// Parses and checks `text`, the manifest at `uri` (named in errors). Checks
// the prefix's syntax only; ResolveManifest checks it against a root.
absl::StatusOr<Manifest> ParseManifest(absl::string_view uri,
                                       absl::string_view text);

// One object of a manifest channel.
struct ManifestObject {
  std::string path;  // its real path in the object root
  std::string key;   // its relative key: where the channel presents it
};

// Reads the manifest at `uri` from `objects` and resolves every key (see
// the file comment); the objects in manifest order.
absl::StatusOr<std::vector<ManifestObject>> ResolveManifest(
    const ObjectRoot& objects, absl::string_view uri);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_MANIFEST_H_
