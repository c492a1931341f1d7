// See job_timeline.h.
#include "sagemaker/job_timeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {
namespace {

using nlohmann::json;

constexpr char kFile[] = "timeline.json";
constexpr size_t kMaxBytes = 4096;

// JOB_DIR/ml opened without following a link, if it is cairnd's own
// directory; -1 otherwise.
int OpenOwnDir(const std::string& job_dir) {
  const std::string dir = job_dir + "/ml";
  const int fd =
      open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
    close(fd);
    return -1;
  }
  return fd;
}

json ReadFile(int dir) {
  const int fd = openat(dir, kFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return json::object();
  std::string text(kMaxBytes, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(got);
  json j = json::parse(text, nullptr, false);
  return j.is_object() ? j : json::object();
}

std::optional<double> TimeOf(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

absl::Status Errno(const std::string& what, const std::string& job_dir) {
  return absl::FailedPreconditionError(
      absl::StrCat("sagemaker: cannot ", what, " ", job_dir, "/ml/", kFile,
                   ": ", std::strerror(errno)));
}

}  // namespace

absl::Status RecordTimeline(const std::string& job_dir, TimelineEvent event,
                            double now) {
  const int dir = OpenOwnDir(job_dir);
  if (dir < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sagemaker: ", job_dir, "/ml is not a directory of cairnd's user"));
  }
  absl::Cleanup close_dir = [dir] { close(dir); };
  json j = ReadFile(dir);
  switch (event) {
    case TimelineEvent::kStarted:
      if (!TimeOf(j, "training_start")) j["training_start"] = now;
      j.erase("exited");
      j.erase("packed");
      break;
    case TimelineEvent::kExited:
      j["exited"] = now;
      j.erase("packed");
      break;
    case TimelineEvent::kPacked:
      j["packed"] = now;
      break;
  }
  const std::string text = j.dump();
  const std::string tmp = absl::StrCat(kFile, ".tmp");
  const int fd =
      openat(dir, tmp.c_str(),
             O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("write", job_dir);
  const bool written =
      write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = close(fd) == 0;
  if (!written || !closed) return Errno("write", job_dir);
  if (renameat(dir, tmp.c_str(), dir, kFile) != 0) {
    return Errno("replace", job_dir);
  }
  return absl::OkStatus();
}

JobTimeline ReadTimeline(const std::string& job_dir) {
  if (job_dir.empty()) return {};
  const int dir = OpenOwnDir(job_dir);
  if (dir < 0) return {};
  const json j = ReadFile(dir);
  close(dir);
  return {TimeOf(j, "training_start"), TimeOf(j, "exited"),
          TimeOf(j, "packed")};
}

}  // namespace cairn::sagemaker
