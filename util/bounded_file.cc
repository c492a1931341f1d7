// See bounded_file.h.
#include "util/bounded_file.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace cairn::util {

absl::StatusOr<std::string> ReadFileAtMost(const std::string& path,
                                           size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot open '", path.substr(0, 256), "'"));
  }
  std::string contents(max_bytes + 1, '\0');
  in.read(contents.data(), static_cast<std::streamsize>(max_bytes + 1));
  if (in.bad()) {
    return absl::NotFoundError(
        absl::StrCat("cannot read '", path.substr(0, 256), "'"));
  }
  contents.resize(static_cast<size_t>(in.gcount()));
  if (contents.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", path.substr(0, 256), "' is over ", max_bytes, " bytes"));
  }
  return contents;
}

}  // namespace cairn::util
