// See package_staging.h.
#include "aiplatform/package_staging.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace cairn::aiplatform {
namespace {

namespace fs = std::filesystem;

absl::Status CheckPath(const std::string& path) {
  auto bad = [&path](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "package file '", absl::CHexEscape(path.substr(0, 200)), "': ", why));
  };
  if (path.empty()) return bad("empty path");
  if (path[0] == '/') return bad("absolute path");
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") {
      return bad("empty, '.' or '..' path component");
    }
    if (part.find('\0') != absl::string_view::npos) return bad("NUL byte");
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const fs::path& path, const cairn::v1::PackageFile& f) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return absl::InternalError(absl::StrCat(
        "cannot create '", path.parent_path().string(), "': ", ec.message()));
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(f.content().data(),
              static_cast<std::streamsize>(f.content().size()));
    if (!out) {
      return absl::InternalError(
          absl::StrCat("cannot write '", path.string(), "'"));
    }
  }
  chmod(path.c_str(), f.executable() ? 0755 : 0644);
  return absl::OkStatus();
}

// Directories from the umask may be 0700: open them to the job user.
void OpenDirs(const fs::path& dir) {
  chmod(dir.c_str(), 0755);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) chmod(it->path().c_str(), 0755);
  }
}

}  // namespace

absl::Status CheckPackage(const PackageFiles& files,
                          const std::string& python_module) {
  if (files.empty()) {
    return absl::InvalidArgumentError(
        "no training package: give --package-path DIR or --packages TAR "
        "(trainingInput.packageUris over REST)");
  }
  absl::flat_hash_set<std::string> paths;
  for (const cairn::v1::PackageFile& f : files) {
    if (absl::Status s = CheckPath(f.path()); !s.ok()) return s;
    if (!paths.insert(f.path()).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "package file '", absl::CHexEscape(f.path()), "' is given twice"));
    }
  }
  const std::string base = absl::StrReplaceAll(python_module, {{".", "/"}});
  const std::string as_file = base + ".py";
  const std::string as_main = base + "/__main__.py";
  if (!paths.contains(as_file) && !paths.contains(as_main)) {
    return absl::InvalidArgumentError(
        absl::StrCat("module '", absl::CHexEscape(python_module.substr(0, 200)),
                     "' is not in the training package (looked for ", as_file,
                     " and ", as_main, " among its ", files.size(), " files)"));
  }
  return absl::OkStatus();
}

absl::Status StagePackage(const PackageFiles& files, const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return absl::AlreadyExistsError(
        absl::StrCat("staging dir '", dir, "' already exists"));
  }
  for (const cairn::v1::PackageFile& f : files) {
    if (absl::Status s = WriteFile(fs::path(dir) / f.path(), f); !s.ok()) {
      fs::remove_all(dir, ec);
      return s;
    }
  }
  OpenDirs(dir);
  return absl::OkStatus();
}

}  // namespace cairn::aiplatform
