// See package_read.h.
#include "aiplatform/package_read.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/limits.h"

extern char** environ;

namespace cairn::aiplatform {
namespace {

namespace fs = std::filesystem;

// How a tree is read: whether symbolic links are followed, and what errors
// name.
struct TreeRules {
  bool follow_links = true;
  absl::string_view what;
};

absl::Status CheckSize(const fs::path& p, const TreeRules& rules,
                       const PackageFileList& out) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(p, ec);
  if (!ec && size > static_cast<uintmax_t>(cairn::api::kMaxPackageFileBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        rules.what, ": package file '", p.filename().string(),
        "' is larger than ", cairn::api::kMaxPackageFileBytes, " bytes"));
  }
  if (out.size() >= static_cast<size_t>(cairn::api::kMaxPackageFiles)) {
    return absl::InvalidArgumentError(
        absl::StrCat(rules.what, ": the package has more than ",
                     cairn::api::kMaxPackageFiles, " files"));
  }
  return absl::OkStatus();
}

absl::Status AddFile(const fs::path& p, const std::string& rel,
                     PackageFileList& out) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  if (!in) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot read package file '", p.string(), "'"));
  }
  cairn::v1::PackageFile f;
  f.set_path(rel);
  f.set_content(content.str());
  f.set_executable((fs::status(p).permissions() & fs::perms::owner_exec) !=
                   fs::perms::none);
  out.push_back(std::move(f));
  return absl::OkStatus();
}

absl::Status AddTree(const fs::path& root, const std::string& prefix,
                     const TreeRules& rules, PackageFileList& out) {
  std::error_code ec;
  auto options = rules.follow_links
                     ? fs::directory_options::follow_directory_symlink
                     : fs::directory_options::none;
  for (auto it = fs::recursive_directory_iterator(root, options, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (!rules.follow_links && it->is_symlink(ec)) continue;
    if (!it->is_regular_file(ec) || p.extension() == ".pyc") continue;
    if (absl::Status s = CheckSize(p, rules, out); !s.ok()) return s;
    const std::string rel = fs::relative(p, root).generic_string();
    if (absl::Status s =
            AddFile(p, prefix.empty() ? rel : prefix + "/" + rel, out);
        !s.ok()) {
      return s;
    }
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read '", root.string(), "': ", ec.message()));
  }
  return absl::OkStatus();
}

// An archive opened for reading (closed when it goes out of scope).
struct OpenArchive {
  int fd = -1;
  struct stat st = {};
  ~OpenArchive() {
    if (fd >= 0) close(fd);
  }
};

// Opens `archive`; InvalidArgument (starting with `what`) unless it is a
// regular file.
absl::Status Open(const std::string& archive, absl::string_view what,
                  OpenArchive& out) {
  out.fd = open(archive.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (out.fd < 0 || fstat(out.fd, &out.st) != 0 || !S_ISREG(out.st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": '", archive, "' is not a file"));
  }
  return absl::OkStatus();
}

// Unpacks the open archive into `dir` with tar (no shell; tar reads the
// descriptor as its stdin, so the file checked is the file unpacked).
absl::Status Untar(const OpenArchive& archive, const std::string& name,
                   const std::string& dir, absl::string_view what) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  absl::Cleanup destroy = [&] { posix_spawn_file_actions_destroy(&actions); };
  posix_spawn_file_actions_adddup2(&actions, archive.fd, STDIN_FILENO);
  // /dev/stdin rather than "-": GNU tar detects compression only in files.
  const char* argv[] = {"tar",
                        "-xf",
                        "/dev/stdin",
                        "-C",
                        dir.c_str(),
                        "--no-same-owner",
                        "--no-same-permissions",
                        nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "tar", &actions, nullptr,
                   const_cast<char* const*>(argv), environ) != 0) {
    return absl::InternalError("cannot run tar");
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": '", name, "' is not a tar archive tar can unpack"));
  }
  return absl::OkStatus();
}

// The archive's package root under `top`.
fs::path ArchiveRoot(const fs::path& top, const std::string& module) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(top, ec)) entries.push_back(e);
  if (entries.size() != 1 || !fs::is_directory(entries[0])) return top;
  const std::string first = std::string(*absl::StrSplit(module, '.').begin());
  if (fs::exists(entries[0] / "setup.py") || fs::exists(entries[0] / first) ||
      fs::exists(entries[0] / (first + ".py"))) {
    return entries[0];
  }
  return top;
}

// Adds the files of the open archive to `out`.
absl::Status AddArchive(const OpenArchive& archive, const std::string& name,
                        const std::string& module, absl::string_view what,
                        PackageFileList& out) {
  std::string tmpl = (fs::temp_directory_path() / "cairn-pkg-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError("cannot make a temporary directory");
  }
  absl::Cleanup remove = [&] {
    std::error_code ec;
    fs::remove_all(tmpl, ec);
  };
  if (absl::Status s = Untar(archive, name, tmpl, what); !s.ok()) return s;
  return AddTree(ArchiveRoot(tmpl, module), "", {false, what}, out);
}

// The local path of a packageUris entry: an absolute path or a file:// URI.
absl::StatusOr<std::string> LocalPath(const std::string& uri,
                                      const std::string& what) {
  const std::string path =
      absl::StartsWith(uri, "file://") ? uri.substr(7) : uri;
  if (absl::StartsWith(path, "/")) return path;
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": '", uri.substr(0, 200),
      "' is not an absolute local path or file:// URI (cairnd reads "
      "packages from its own machine)"));
}

}  // namespace

absl::StatusOr<PackageFileList> ReadPackageDir(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--package-path: '", dir, "' is not a directory"));
  }
  fs::path path = fs::canonical(dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("--package-path: '", dir, "': ", ec.message()));
  }
  PackageFileList out;
  if (absl::Status s = AddTree(path, path.filename().string(),
                               {true, "--package-path"}, out);
      !s.ok()) {
    return s;
  }
  return out;
}

absl::StatusOr<PackageFileList> ReadPackageArchives(
    const std::vector<std::string>& archives, const std::string& module,
    absl::string_view what) {
  PackageFileList out;
  for (const std::string& name : archives) {
    OpenArchive archive;
    if (absl::Status s = Open(name, what, archive); !s.ok()) return s;
    if (absl::Status s = AddArchive(archive, name, module, what, out);
        !s.ok()) {
      return s;
    }
  }
  return out;
}

absl::StatusOr<PackageFileList> ReadPackageUris(
    const cairn::v1::TrainingInput& input) {
  PackageFileList out;
  for (int i = 0; i < input.package_uris_size(); ++i) {
    const std::string what = absl::StrCat("trainingInput.packageUris[", i, "]");
    absl::StatusOr<std::string> path = LocalPath(input.package_uris(i), what);
    if (!path.ok()) return path.status();
    OpenArchive archive;
    if (absl::Status s = Open(*path, what, archive); !s.ok()) return s;
    if ((archive.st.st_mode & S_IROTH) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": '", path->substr(0, 200),
          "' is not readable by everyone (chmod o+r): cairnd reads only "
          "packages that every user may read"));
    }
    if (absl::Status s =
            AddArchive(archive, *path, input.python_module(), what, out);
        !s.ok()) {
      return s;
    }
  }
  return out;
}

}  // namespace cairn::aiplatform
