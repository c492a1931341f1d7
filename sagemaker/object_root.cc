// See object_root.h.
#include "sagemaker/object_root.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;

absl::Status Bad(absl::string_view field, absl::string_view uri,
                 absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, " '", absl::CHexEscape(uri.substr(0, 200)),
                   uri.size() > 200 ? "...'" : "'", ": ", why));
}

bool ValidBucket(absl::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '.' &&
        c != '-') {
      return false;
    }
  }
  return bucket != ".." && !absl::StrContains(bucket, "..");
}

// Whether `path` is `base` or below it (both canonical).
bool Within(const fs::path& path, const fs::path& base) {
  auto [b, p] =
      std::mismatch(base.begin(), base.end(), path.begin(), path.end());
  return b == base.end();
}

}  // namespace

absl::StatusOr<S3Location> ParseS3Uri(absl::string_view field,
                                      absl::string_view uri) {
  absl::string_view rest = uri;
  if (!absl::ConsumePrefix(&rest, "s3://")) {
    return Bad(field, uri, "only s3://BUCKET/KEY URIs are served");
  }
  S3Location out;
  const size_t slash = rest.find('/');
  out.bucket = std::string(rest.substr(0, slash));
  if (!ValidBucket(out.bucket)) {
    return Bad(field, uri, "the bucket must be 3 to 63 of [a-z0-9.-]");
  }
  if (slash != absl::string_view::npos) {
    out.key = std::string(rest.substr(slash + 1));
  }
  if (out.key.size() > 1024) return Bad(field, uri, "the key is too long");
  if (absl::StrContains(out.key, '\0') || absl::StrContains(out.key, '\\')) {
    return Bad(field, uri, "the key holds a NUL or a backslash");
  }
  for (absl::string_view part : absl::StrSplit(out.key, '/')) {
    if (part == "." || part == "..") {
      return Bad(field, uri, "'.' and '..' are not allowed in the key");
    }
  }
  return out;
}

absl::StatusOr<std::string> ObjectRoot::Resolve(absl::string_view field,
                                                absl::string_view uri) const {
  absl::StatusOr<S3Location> loc = ParseS3Uri(field, uri);
  if (!loc.ok()) return loc.status();
  if (root_.empty()) {
    return Bad(field, uri,
               "cairnd serves no object root; start it with --object-root DIR "
               "to map s3://BUCKET/KEY to DIR/BUCKET/KEY");
  }
  std::error_code ec;
  const fs::path bucket = fs::canonical(fs::path(root_) / loc->bucket, ec);
  if (ec || !fs::is_directory(bucket)) {
    return Bad(field, uri,
               absl::StrCat("bucket '", loc->bucket,
                            "' does not exist in the object root"));
  }
  const fs::path root = fs::canonical(root_, ec);
  const fs::path path = fs::weakly_canonical(bucket / loc->key, ec);
  if (ec || !Within(bucket, root) || !Within(path, bucket)) {
    return Bad(field, uri, "the path leads outside the object root");
  }
  std::string out = path.string();
  // Keep a trailing '/' (an S3 prefix naming a directory).
  if (absl::EndsWith(uri, "/") && !absl::EndsWith(out, "/")) out += "/";
  return out;
}

absl::StatusOr<std::string> ObjectRoot::ResolveLocalDir(
    absl::string_view field, absl::string_view dir) const {
  if (root_.empty()) {
    return Bad(field, dir,
               "cairnd serves no object root; start it with --object-root DIR "
               "(local channels must lie inside it)");
  }
  std::error_code ec;
  const fs::path root = fs::canonical(root_, ec);
  const fs::path path = fs::canonical(fs::path(std::string(dir)), ec);
  if (ec || !fs::is_directory(path)) {
    return Bad(field, dir, "is not a directory on cairnd's machine");
  }
  if (!Within(path, root)) {
    return Bad(field, dir, "lies outside the object root");
  }
  return path.string();
}

absl::StatusOr<std::string> ObjectRoot::ResolveChannel(
    const cairn::v1::SageMakerChannel& channel) const {
  const auto& src = channel.data_source();
  if (src.has_s3_data_source()) {
    return Resolve("S3DataSource.S3Uri", src.s3_data_source().s3_uri());
  }
  return ResolveLocalDir("FileSystemDataSource.DirectoryPath",
                         src.file_system_data_source().directory_path());
}

}  // namespace cairn::sagemaker
