// Where jobs import the Python SDK from: cairnd puts the directory holding
// the `cairn` package first on every job's PYTHONPATH and names it in
// CAIRN_PYTHON_SDK (container executors mount it read-only), so `import
// cairn.job` works in any job with no packaging by its user.
#ifndef CAIRN_JOBS_PYTHON_SDK_H_
#define CAIRN_JOBS_PYTHON_SDK_H_

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"

namespace cairn::jobs {

// The SDK directory next to the binary `exe`: <dir of exe>/../lib/cairn/python
// (the build tree's layout, made by python/CMakeLists.txt, and the .deb's
// /usr/lib/cairn/python beside /usr/bin/cairnd), normalized; "" when it holds
// no cairn/__init__.py.
std::string PythonSdkBeside(const std::filesystem::path& exe);

// The SDK directory cairnd gives jobs: `flag` (--python-sdk) when set, else
// PythonSdkBeside(`exe`), "" when there is none (jobs then get no SDK).
// InvalidArgument naming --python-sdk when `flag` is set but is not an
// absolute directory holding cairn/__init__.py.
absl::StatusOr<std::string> ResolvePythonSdk(const std::string& flag,
                                             const std::filesystem::path& exe);

}  // namespace cairn::jobs

#endif  // CAIRN_JOBS_PYTHON_SDK_H_
