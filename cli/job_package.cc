// See job_package.h.
#include "cli/job_package.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cairn::cli {
namespace {

namespace fs = std::filesystem;

absl::Status AddTree(const fs::path& root, const std::string& prefix,
                     PackageFileList& out) {
  std::error_code ec;
  auto options = fs::directory_options::follow_directory_symlink;
  for (auto it = fs::recursive_directory_iterator(root, options, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || p.extension() == ".pyc") continue;
    std::ifstream in(p, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    if (!in) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot read package file '", p.string(), "'"));
    }
    cairn::v1::PackageFile f;
    std::string rel = fs::relative(p, root).generic_string();
    f.set_path(prefix.empty() ? rel : prefix + "/" + rel);
    f.set_content(content.str());
    f.set_executable((fs::status(p).permissions() & fs::perms::owner_exec) !=
                     fs::perms::none);
    out.push_back(std::move(f));
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read '", root.string(), "': ", ec.message()));
  }
  return absl::OkStatus();
}

// Runs tar -xf archive -C dir (no shell).
absl::Status Untar(const std::string& archive, const std::string& dir) {
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    execlp("tar", "tar", "-xf", archive.c_str(), "-C", dir.c_str(),
           "--no-same-owner", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--packages: '", archive, "' is not a tar archive tar can unpack"));
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
  if (absl::Status s = AddTree(path, path.filename().string(), out); !s.ok()) {
    return s;
  }
  return out;
}

absl::StatusOr<PackageFileList> ReadPackageArchives(
    const std::vector<std::string>& archives, const std::string& module) {
  PackageFileList out;
  for (const std::string& archive : archives) {
    if (!fs::is_regular_file(archive)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--packages: '", archive, "' is not a file"));
    }
    std::string tmpl =
        (fs::temp_directory_path() / "cairn-pkg-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return absl::InternalError("cannot make a temporary directory");
    }
    absl::Status s = Untar(archive, tmpl);
    if (s.ok()) s = AddTree(ArchiveRoot(tmpl, module), "", out);
    std::error_code ec;
    fs::remove_all(tmpl, ec);
    if (!s.ok()) return s;
  }
  return out;
}

}  // namespace cairn::cli
