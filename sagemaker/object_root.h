// s3:// URIs on a local object root: `cairnd --object-root DIR` keeps
// s3://BUCKET/KEY at DIR/BUCKET/KEY, a plain directory tree that any sync
// tool can fill. A URI that is not s3://, names "." or ".." in its key,
// escapes the root through a symbolic link, or names a bucket that is not
// a directory under the root is refused with InvalidArgument naming the
// field and the URI (SageMaker's ValidationException).
#ifndef CAIRN_SAGEMAKER_OBJECT_ROOT_H_
#define CAIRN_SAGEMAKER_OBJECT_ROOT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cairn/v1/sagemaker.pb.h"

namespace cairn::sagemaker {

struct S3Location {
  std::string bucket;
  std::string key;  // without a leading '/'; may be empty (the bucket)
};

// Splits "s3://BUCKET/KEY". Bucket: 3 to 63 of [a-z0-9.-], as S3 names
// them; key: no "." or ".." segment, no NUL or backslash, at most 1024
// bytes. `field` names the request field in errors.
absl::StatusOr<S3Location> ParseS3Uri(absl::string_view field,
                                      absl::string_view uri);

// Thread-compatible (immutable after construction).
class ObjectRoot {
 public:
  // `root`: an existing directory; "" means no object root (every s3:// URI
  // is then refused, saying to start cairnd with --object-root).
  explicit ObjectRoot(std::string root) : root_(std::move(root)) {}

  // The local path of `uri` (which need not exist yet), after checking that
  // the bucket exists and that the path resolves inside it.
  absl::StatusOr<std::string> Resolve(absl::string_view field,
                                      absl::string_view uri) const;

  // The real path of `dir`, a local directory that must lie inside the
  // object root (FileSystemDataSource.DirectoryPath); InvalidArgument
  // naming `field` and the path otherwise.
  absl::StatusOr<std::string> ResolveLocalDir(absl::string_view field,
                                              absl::string_view dir) const;

  // The local directory or file of a channel: its S3DataSource.S3Uri
  // (Resolve) or its FileSystemDataSource.DirectoryPath (ResolveLocalDir).
  absl::StatusOr<std::string> ResolveChannel(
      const cairn::v1::SageMakerChannel& channel) const;

  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_OBJECT_ROOT_H_
