// See python_sdk.h.
#include "jobs/python_sdk.h"

#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cairn::jobs {
namespace {

namespace fs = std::filesystem;

bool HoldsSdk(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "cairn" / "__init__.py", ec);
}

}  // namespace

std::string PythonSdkBeside(const fs::path& exe) {
  const fs::path dir = (exe.parent_path() / ".." / "lib" / "cairn" / "python")
                           .lexically_normal();
  return HoldsSdk(dir) ? dir.string() : "";
}

absl::StatusOr<std::string> ResolvePythonSdk(const std::string& flag,
                                             const fs::path& exe) {
  if (flag.empty()) return PythonSdkBeside(exe);
  fs::path dir = fs::path(flag).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // A trailing '/'.
  if (!dir.is_absolute() || !HoldsSdk(dir)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--python-sdk: '", flag.substr(0, 200),
                     "' is not an absolute directory holding the cairn package "
                     "(cairn/__init__.py)"));
  }
  return dir.string();
}

}  // namespace cairn::jobs
