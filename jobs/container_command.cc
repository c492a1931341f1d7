// The podman command line of a container job. See container_command.h.
#include "jobs/container_command.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/container_image.h"
#include "nlohmann/json.hpp"
#include "util/number_text.h"

namespace cairn::jobs {
namespace {

std::string Label(const ContainerJob& job, const std::string& key) {
  auto it = job.labels.find(key);
  return it == job.labels.end() ? "" : it->second;
}

// `s` with every character outside [A-Za-z0-9_.-] replaced by '-'.
std::string NamePart(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok) c = '-';
  }
  return out;
}

// "type=bind,source=HOST,destination=CONTAINER[,ro=true]", or an error
// naming the path when ',' or '\n' would change the option's meaning.
absl::StatusOr<std::string> BindMount(const std::string& host,
                                      const std::string& container,
                                      bool read_only) {
  for (const std::string* p : {&host, &container}) {
    if (p->empty() || (*p)[0] != '/' ||
        p->find_first_of(",\n") != std::string::npos) {
      return absl::FailedPreconditionError(
          absl::StrCat("container mount: path '", p->substr(0, 200),
                       "' must be absolute and hold no ',' or newline"));
    }
  }
  return absl::StrCat("type=bind,source=", host, ",destination=", container,
                      read_only ? ",ro=true" : "");
}

std::string EnvValue(const JobSpec& spec, const std::string& key) {
  auto it = spec.env.find(key);
  return it == spec.env.end() ? "" : it->second;
}

// The bind mounts of a job: its job dir, its hypertune file at the default
// in-container path, the Python SDK read-only, then the spec's own.
absl::StatusOr<std::vector<std::string>> Mounts(const JobSpec& spec) {
  std::vector<ContainerMount> mounts;
  const std::string job_dir = EnvValue(spec, "CAIRN_JOB_DIR");
  if (!job_dir.empty()) mounts.push_back({job_dir, job_dir, false});
  const std::string metrics = EnvValue(spec, "CLOUD_ML_HP_METRIC_FILE");
  if (!metrics.empty()) {
    mounts.push_back({metrics, kContainerHypertunePath, false});
  }
  const std::string sdk = EnvValue(spec, "CAIRN_PYTHON_SDK");
  if (!sdk.empty()) mounts.push_back({sdk, sdk, true});
  mounts.insert(mounts.end(), spec.container->mounts.begin(),
                spec.container->mounts.end());
  std::vector<std::string> args;
  for (const ContainerMount& m : mounts) {
    absl::StatusOr<std::string> mount =
        BindMount(m.host_path, m.container_path, m.read_only);
    if (!mount.ok()) return mount.status();
    args.push_back("--mount");
    args.push_back(*std::move(mount));
  }
  return args;
}

// --cpus, --memory, --pids-limit and --device for the limits that are set.
void AddLimits(const ContainerJob& c, int host_cpus,
               std::vector<std::string>& argv) {
  const double cpus =
      host_cpus > 0 ? std::min<double>(c.cpus, host_cpus) : c.cpus;
  if (cpus > 0) {
    argv.push_back(
        absl::StrCat("--cpus=", util::ShortestRoundTripNumber(cpus)));
  }
  if (c.memory_bytes > 0) {
    argv.push_back(absl::StrCat("--memory=", c.memory_bytes, "b"));
  }
  if (c.pids_limit > 0) {
    argv.push_back(absl::StrCat("--pids-limit=", c.pids_limit));
  }
  for (const std::string& d : c.devices) argv.push_back("--device=" + d);
}

// True when a CDI spec in `dirs` names NVIDIA GPUs (kind nvidia.com/gpu).
bool HasNvidiaCdiSpec(const std::vector<std::string>& dirs) {
  std::error_code ec;
  for (const std::string& dir : dirs) {
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      std::ifstream in(e.path());
      std::string text((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
      if (text.find("nvidia.com/gpu") != std::string::npos) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> ContainerGpuDevices(const std::string& visible,
                                             const GpuDeviceRoots& roots) {
  std::vector<std::string> gpus =
      absl::StrSplit(visible, ',', absl::SkipWhitespace());
  if (gpus.empty()) return {};
  std::vector<std::string> out;
  if (HasNvidiaCdiSpec(roots.cdi)) {
    for (const std::string& g : gpus) out.push_back("nvidia.com/gpu=" + g);
    return out;
  }
  std::error_code ec;
  for (const std::string& g : gpus) {
    const std::string node = roots.dev + "/nvidia" + g;
    if (std::filesystem::exists(node, ec)) out.push_back(node);
  }
  if (out.empty()) return {};
  for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}) {
    const std::string node = roots.dev + "/" + name;
    if (std::filesystem::exists(node, ec)) out.push_back(node);
  }
  return out;
}

std::vector<ContainerMount> ContainerGpuDriverMounts(
    const GpuDeviceRoots& roots) {
  std::vector<std::string> files;
  for (const std::string& dir : roots.lib_dirs) {
    for (const char* lib : {"libcuda.so.1", "libnvidia-ml.so.1",
                            "libnvidia-ptxjitcompiler.so.1"}) {
      files.push_back(dir + "/" + lib);
    }
  }
  files.push_back(roots.bin_dir + "/nvidia-smi");
  std::vector<ContainerMount> out;
  std::error_code ec;
  for (const std::string& f : files) {
    if (std::filesystem::exists(f, ec)) out.push_back({f, f, true});
  }
  return out;
}

bool AddContainerGpus(const std::string& visible, ContainerJob& job,
                      const GpuDeviceRoots& roots) {
  if (visible.empty()) return true;
  const std::vector<std::string> devices = ContainerGpuDevices(visible, roots);
  if (devices.empty()) return false;
  job.devices.insert(job.devices.end(), devices.begin(), devices.end());
  if (devices[0].rfind(roots.dev + "/", 0) == 0) {  // Not CDI.
    for (const ContainerMount& m : ContainerGpuDriverMounts(roots)) {
      job.mounts.push_back(m);
    }
  }
  return true;
}

std::string ContainerName(const std::string& data_dir,
                          const ContainerJob& job) {
  const size_t hash = std::hash<std::string>{}(data_dir);
  return NamePart(absl::StrFormat(
      "cairn-%08x-%s-t%s-a%s-%s", static_cast<uint32_t>(hash),
      Label(job, "cairn.study"), Label(job, "cairn.trial"),
      Label(job, "cairn.attempt"), Label(job, "cairn.replica")));
}

absl::StatusOr<std::string> ContainerEnvFile(const JobSpec& spec) {
  std::map<std::string, std::string> env = {
      {"LANG", "C.UTF-8"}, {"HOME", EnvValue(spec, "CAIRN_JOB_DIR")}};
  if (env["HOME"].empty()) env["HOME"] = "/";
  for (const auto& [k, v] : spec.env) env[k] = v;
  std::string out;
  for (const auto& [k, v] : env) {
    if (k.empty() || k.find_first_of("=\n") != std::string::npos ||
        v.find('\n') != std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("env: variable '", k.substr(0, 100),
                       "' cannot be passed to a container (a newline in its "
                       "name or value, or '=' in its name)"));
    }
    absl::StrAppend(&out, k, "=", v, "\n");
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> PodmanRunArgv(
    const ContainerOptions& options, const JobUser& user, const JobSpec& spec,
    const std::string& name, const std::string& env_file) {
  const ContainerJob& c = *spec.container;
  if (std::string why = api::ImageReferenceProblem(c.image); !why.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("container image '", c.image.substr(0, 100), "' ", why));
  }
  std::vector<std::string> argv = {
      options.runtime,
      "run",
      "--rm",
      "--pull=" + options.pull,
      "--name=" + name,
      "--init",
      "--network=host",
      absl::StrCat("--user=", user.uid, ":", user.gid),
      "--log-driver=passthrough",
      absl::StrCat("--stop-timeout=",
                   absl::ToInt64Seconds(
                       absl::Ceil(options.grace_period, absl::Seconds(1)))),
      "--label=cairn.data_dir=" + options.data_dir,
      "--env-file=" + env_file};
  // Rootless podman maps the caller to root inside; keep-id keeps its uid.
  if (geteuid() != 0) argv.push_back("--userns=keep-id");
  for (const auto& [k, v] : c.labels) argv.push_back("--label=" + k + "=" + v);
  const std::string job_dir = EnvValue(spec, "CAIRN_JOB_DIR");
  if (!job_dir.empty()) argv.push_back("--workdir=" + job_dir);
  absl::StatusOr<std::vector<std::string>> mounts = Mounts(spec);
  if (!mounts.ok()) return mounts.status();
  argv.insert(argv.end(), mounts->begin(), mounts->end());
  AddLimits(c, options.host_cpus, argv);
  if (!c.entrypoint.empty()) {
    argv.push_back("--entrypoint=" + nlohmann::json(c.entrypoint).dump());
  }
  argv.push_back(c.image);
  argv.insert(argv.end(), spec.argv.begin(), spec.argv.end());
  return argv;
}

}  // namespace cairn::jobs
