// See manifest.h.
#include "sagemaker/manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "sagemaker/training_job_request.h"

namespace cairn::sagemaker {
namespace {

constexpr char kField[] = "S3DataSource.S3Uri";

absl::Status Bad(absl::string_view uri, absl::string_view why) {
  return InvalidField(kField, uri, absl::StrCat("manifest: ", why));
}

// Entry `index` (1 is the first key, after the prefix) is refused.
absl::Status BadEntry(absl::string_view uri, size_t index,
                      absl::string_view key, absl::string_view why) {
  return Bad(uri, absl::StrCat("entry ", index, " '",
                               absl::CHexEscape(key.substr(0, 100)),
                               key.size() > 100 ? "...'" : "'", " ", why));
}

// Why `key` is no relative object key, or "" when it is one.
absl::string_view KeyProblem(absl::string_view key) {
  if (key.empty()) return "is empty";
  if (key.size() > 1024) return "is longer than 1024 bytes";
  if (key.front() == '/') return "must be relative, not absolute";
  for (char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f || c == ',' || c == '\\') {
      return "holds a control character, ',' or a backslash";
    }
  }
  for (absl::string_view part : absl::StrSplit(key, '/')) {
    if (part.empty() || part == "." || part == "..") {
      return "must not hold an empty, '.' or '..' segment";
    }
  }
  return "";
}

// Checks that `keys` name distinct files, none also a directory of another.
absl::Status CheckDistinct(absl::string_view uri,
                           const std::vector<std::string>& keys) {
  std::set<absl::string_view> files, dirs;
  for (size_t i = 0; i < keys.size(); ++i) {
    const absl::string_view key = keys[i];
    if (files.count(key) > 0)
      return BadEntry(uri, i + 1, key, "is listed twice");
    bool clash = dirs.count(key) > 0;
    for (size_t slash = key.find('/'); slash != absl::string_view::npos;
         slash = key.find('/', slash + 1)) {
      clash = clash || files.count(key.substr(0, slash)) > 0;
      dirs.insert(key.substr(0, slash));
    }
    if (clash) {
      return BadEntry(uri, i + 1, key,
                      "is both a file and the directory of another entry");
    }
    files.insert(key);
  }
  return absl::OkStatus();
}

// The prefix of the manifest's first element, {"prefix": "s3://..."}.
absl::StatusOr<std::string> PrefixOf(absl::string_view uri,
                                     const nlohmann::json& first) {
  if (!first.is_object() || first.size() != 1 || !first.contains("prefix") ||
      !first["prefix"].is_string()) {
    return Bad(uri, "the first element must be {\"prefix\": \"s3://...\"}");
  }
  std::string prefix = first["prefix"].get<std::string>();
  absl::StatusOr<S3Location> loc = ParseS3Uri("prefix", prefix);
  if (!loc.ok()) return Bad(uri, loc.status().message());
  return prefix;
}

absl::Status TooLarge(absl::string_view uri) {
  return Bad(uri, absl::StrCat("is larger than ", kMaxManifestBytes, " bytes"));
}

// The manifest at `path` (no link followed; a regular file of at most
// kMaxManifestBytes).
absl::StatusOr<std::string> ReadManifest(absl::string_view uri,
                                         const std::string& path) {
  const int fd =
      open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    return Bad(uri, absl::StrCat("cannot open it (", strerror(errno),
                                 "; links are not followed)"));
  }
  absl::Cleanup closer = [fd] { close(fd); };
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Bad(uri, "is not a regular file");
  }
  if (static_cast<size_t>(st.st_size) > kMaxManifestBytes) {
    return TooLarge(uri);
  }
  std::string text(kMaxManifestBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return Bad(uri, absl::StrCat("cannot read it: ", strerror(errno)));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxManifestBytes) {
    return TooLarge(uri);
  }
  text.resize(got);
  return text;
}

}  // namespace

absl::StatusOr<Manifest> ParseManifest(absl::string_view uri,
                                       absl::string_view text) {
  // Values nested deeper than the prefix object's are dropped while
  // parsing (no deep tree is ever built) and the manifest refused.
  int deepest = 0;
  const nlohmann::json j = nlohmann::json::parse(
      text.begin(), text.end(),
      [&deepest](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        deepest = std::max(deepest, depth);
        return depth <= 2;
      },
      /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad(uri, "is not JSON");
  if (!j.is_array() || j.size() < 2 || deepest > 2) {
    return Bad(uri,
               "must be a JSON array: {\"prefix\": \"s3://BUCKET/PREFIX/\"} "
               "and then one or more relative keys");
  }
  if (j.size() - 1 > kMaxManifestEntries) {
    return Bad(uri, absl::StrCat("lists ", j.size() - 1, " keys; at most ",
                                 kMaxManifestEntries));
  }
  Manifest out;
  absl::StatusOr<std::string> prefix = PrefixOf(uri, j[0]);
  if (!prefix.ok()) return prefix.status();
  out.prefix = *std::move(prefix);
  for (size_t i = 1; i < j.size(); ++i) {
    if (!j[i].is_string()) {
      return BadEntry(
          uri, i,
          j[i].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
          "is not a string");
    }
    std::string key = j[i].get<std::string>();
    if (absl::string_view why = KeyProblem(key); !why.empty()) {
      return BadEntry(uri, i, key, why);
    }
    out.keys.push_back(std::move(key));
  }
  if (absl::Status s = CheckDistinct(uri, out.keys); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<ManifestObject>> ResolveManifest(
    const ObjectRoot& objects, absl::string_view uri) {
  absl::StatusOr<std::string> path = objects.Resolve(kField, uri);
  if (!path.ok()) return path.status();
  absl::StatusOr<std::string> text = ReadManifest(uri, *path);
  if (!text.ok()) return text.status();
  absl::StatusOr<Manifest> manifest = ParseManifest(uri, *text);
  if (!manifest.ok()) return manifest.status();
  if (absl::Status s = objects.Resolve("prefix", manifest->prefix).status();
      !s.ok()) {
    return Bad(uri, s.message());
  }
  std::vector<ManifestObject> out;
  for (size_t i = 0; i < manifest->keys.size(); ++i) {
    const std::string& key = manifest->keys[i];
    absl::StatusOr<std::string> object =
        objects.Resolve("its object", absl::StrCat(manifest->prefix, key));
    if (!object.ok())
      return BadEntry(uri, i + 1, key, object.status().message());
    struct stat st;
    if (stat(object->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return BadEntry(uri, i + 1, key,
                      "is not a regular file in the object root");
    }
    out.push_back({*std::move(object), key});
  }
  return out;
}

}  // namespace cairn::sagemaker
