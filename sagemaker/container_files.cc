// See container_files.h.
#include "sagemaker/container_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace cairn::sagemaker {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxFailureReasonBytes = 1024;

absl::Status WriteFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", path.string()));
  }
  return absl::OkStatus();
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string HostName(int index) { return absl::StrCat("algo-", index + 1); }

std::string HyperParametersJson(const std::map<std::string, std::string>& hps) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : hps) j[k] = v;
  return Dump(j);
}

std::string ResourceConfigJson(int index, int count) {
  nlohmann::json hosts = nlohmann::json::array();
  for (int i = 0; i < count; ++i) hosts.push_back(HostName(i));
  return Dump({{"current_host", HostName(index)},
               {"hosts", hosts},
               {"network_interface_name", "eth0"}});
}

std::string InputDataConfigJson(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& c : request.input_data_config()) {
    nlohmann::json channel = {
        {"TrainingInputMode",
         c.input_mode().empty()
             ? request.algorithm_specification().training_input_mode()
             : c.input_mode()},
        {"S3DistributionType", "FullyReplicated"},
        {"RecordWrapperType",
         c.record_wrapper_type().empty() ? "None" : c.record_wrapper_type()}};
    if (!c.content_type().empty()) channel["ContentType"] = c.content_type();
    j[c.channel_name()] = channel;
  }
  return Dump(j);
}

std::string TrainingJobArn(absl::string_view name) {
  return absl::StrCat("arn:aws:sagemaker:local:000000000000:training-job/",
                      name);
}

std::map<std::string, std::string> ContainerEnvironment(
    const cairn::v1::SageMakerCreateTrainingJobRequest& request) {
  std::map<std::string, std::string> env(request.environment().begin(),
                                         request.environment().end());
  env["TRAINING_JOB_NAME"] = request.training_job_name();
  env["TRAINING_JOB_ARN"] = TrainingJobArn(request.training_job_name());
  return env;
}

absl::Status PrepareHostDir(
    const std::string& dir,
    const cairn::v1::SageMakerCreateTrainingJobRequest& request, int index) {
  const fs::path root(dir);
  std::error_code ec;
  for (const char* sub :
       {"input/config", "input/data", "model", "output/data", "checkpoints"}) {
    fs::create_directories(root / sub, ec);
    if (ec) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cannot create ", (root / sub).string(), ": ", ec.message()));
    }
  }
  const fs::path config = root / "input/config";
  const std::map<std::string, std::string> hps(
      request.hyper_parameters().begin(), request.hyper_parameters().end());
  absl::Status s =
      WriteFile(config / "hyperparameters.json", HyperParametersJson(hps));
  if (s.ok()) {
    s = WriteFile(
        config / "resourceconfig.json",
        ResourceConfigJson(index, request.resource_config().instance_count()));
  }
  if (s.ok()) {
    s = WriteFile(config / "inputdataconfig.json",
                  InputDataConfigJson(request));
  }
  return s;
}

std::string ReadFailureReason(const std::string& dir) {
  const std::string path = (fs::path(dir) / "output/failure").string();
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  char buf[kMaxFailureReasonBytes];
  size_t got = 0;
  while (got < sizeof(buf)) {
    const ssize_t n = read(fd, buf + got, sizeof(buf) - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  // Cut a UTF-8 sequence the limit split.
  size_t end = got;
  if (got == sizeof(buf)) {
    while (end > 0 &&
           (static_cast<unsigned char>(buf[end - 1]) & 0xC0) == 0x80) {
      --end;
    }
    if (end > 0 && (static_cast<unsigned char>(buf[end - 1]) & 0x80) != 0)
      --end;
  }
  return std::string(buf, end);
}

}  // namespace cairn::sagemaker
