// Replica clusters, TF_CONFIG and PyTorch variables. See tf_config.h.
#include "jobs/tf_config.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace cairn::jobs {
namespace {

using cairn::v1::ReplicaGroup;

std::string TypeName(ReplicaGroup::Type type, bool use_chief) {
  switch (type) {
    case ReplicaGroup::MASTER:
      return use_chief ? "chief" : "master";
    case ReplicaGroup::WORKER:
      return "worker";
    case ReplicaGroup::PARAMETER_SERVER:
      return "ps";
    case ReplicaGroup::EVALUATOR:
      return "evaluator";
    default:
      return "unknown";
  }
}

// Replica groups in cluster order: master, workers, ps, evaluators.
constexpr ReplicaGroup::Type kOrder[] = {
    ReplicaGroup::MASTER, ReplicaGroup::WORKER, ReplicaGroup::PARAMETER_SERVER,
    ReplicaGroup::EVALUATOR};

std::string Address(int port) { return absl::StrCat("127.0.0.1:", port); }

}  // namespace

std::string ReplicaTask::Name() const {
  const std::string node =
      group == ReplicaGroup::MASTER ? "master" : TypeName(group, false);
  return absl::StrCat(node, "-replica-", index);
}

std::vector<ReplicaTask> ExpandReplicas(
    const cairn::v1::TrialJobTemplate& tmpl) {
  std::vector<ReplicaTask> out;
  if (tmpl.replicas().empty()) {
    out.push_back({ReplicaGroup::MASTER,
                   TypeName(ReplicaGroup::MASTER, false),
                   0,
                   0,
                   {}});
    return out;
  }
  for (ReplicaGroup::Type type : kOrder) {
    for (const ReplicaGroup& g : tmpl.replicas()) {
      if (g.type() != type) continue;
      for (int i = 0; i < g.count(); ++i) {
        out.push_back({type,
                       TypeName(type, tmpl.use_chief_in_tf_config()),
                       static_cast<int>(i),
                       0,
                       {}});
      }
    }
  }
  return out;
}

int TrialGpuCount(const cairn::v1::TrialJobTemplate& tmpl) {
  if (tmpl.replicas().empty()) return tmpl.gpus_per_trial();
  int total = 0;
  for (const ReplicaGroup& g : tmpl.replicas()) {
    total += g.count() * g.gpus_per_replica();
  }
  return total;
}

absl::Status PlaceReplicas(const cairn::v1::TrialJobTemplate& tmpl,
                           const std::vector<int>& gpus,
                           std::vector<ReplicaTask>& replicas) {
  size_t next_gpu = 0;
  int listeners = 0;
  for (ReplicaTask& r : replicas) {
    int want = static_cast<int>(gpus.size());
    if (!tmpl.replicas().empty()) {
      want = 0;
      for (const ReplicaGroup& g : tmpl.replicas()) {
        if (g.type() == r.group) want = g.gpus_per_replica();
      }
    }
    r.gpus.clear();
    for (int i = 0; i < want && next_gpu < gpus.size(); ++i) {
      r.gpus.push_back(gpus[next_gpu++]);
    }
    if (r.group != ReplicaGroup::EVALUATOR) ++listeners;
  }
  absl::StatusOr<std::vector<int>> ports = PickFreePorts(listeners);
  if (!ports.ok()) return ports.status();
  size_t next_port = 0;
  for (ReplicaTask& r : replicas) {
    r.port = r.group == ReplicaGroup::EVALUATOR ? 0 : (*ports)[next_port++];
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> PickFreePorts(int n) {
  std::vector<int> fds;
  std::vector<int> ports;
  absl::Status status;
  for (int i = 0; i < n && status.ok(); ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      status = absl::UnavailableError("replica ports: socket() failed");
      break;
    }
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      status =
          absl::UnavailableError("replica ports: no free port on 127.0.0.1");
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (int fd : fds) close(fd);
  if (!status.ok()) return status;
  return ports;
}

std::string TfConfigJson(const std::vector<ReplicaTask>& cluster,
                         const ReplicaTask& task, const std::string& trial_id,
                         const std::string& job_json) {
  nlohmann::json spec = nlohmann::json::object();
  for (const ReplicaTask& r : cluster) {
    if (r.group == ReplicaGroup::EVALUATOR) continue;
    spec[r.type].push_back(Address(r.port));
  }
  nlohmann::json job = nlohmann::json::parse(job_json, nullptr, false);
  if (!job.is_object()) job = nlohmann::json::object();
  nlohmann::json tf_config = {
      {"cluster", spec},
      {"task",
       {{"type", task.type}, {"index", task.index}, {"trial", trial_id}}},
      {"job", job},
      {"environment", "cloud"}};
  return tf_config.dump();
}

std::map<std::string, std::string> TorchEnv(
    const std::vector<ReplicaTask>& cluster, const ReplicaTask& task) {
  int world = 0;
  int master_port = 0;
  for (const ReplicaTask& r : cluster) {
    if (r.is_master()) master_port = r.port;
    if (r.is_master() || r.group == ReplicaGroup::WORKER) ++world;
  }
  std::map<std::string, std::string> env = {
      {"MASTER_ADDR", "127.0.0.1"},
      {"MASTER_PORT", absl::StrCat(master_port)},
      {"WORLD_SIZE", absl::StrCat(world)}};
  if (task.is_master()) env["RANK"] = "0";
  if (task.group == ReplicaGroup::WORKER) {
    env["RANK"] = absl::StrCat(task.index + 1);
  }
  return env;
}

std::pair<std::string, int> TfConfigTask(const std::string& tf_config) {
  const nlohmann::json j = nlohmann::json::parse(tf_config, nullptr, false);
  if (!j.is_object() || !j.contains("task") || !j["task"].is_object()) {
    return {"", -1};
  }
  const nlohmann::json& task = j["task"];
  if (!task.contains("type") || !task["type"].is_string() ||
      !task.contains("index") || !task["index"].is_number_integer()) {
    return {"", -1};
  }
  return {task["type"].get<std::string>(), task["index"].get<int>()};
}

std::string RelocateTfConfig(
    const std::string& tf_config,
    const std::map<std::pair<std::string, int>, std::string>& addresses) {
  nlohmann::json j = nlohmann::json::parse(tf_config, nullptr, false);
  if (!j.is_object() || !j.contains("cluster") || !j["cluster"].is_object()) {
    return tf_config;
  }
  for (auto& [type, list] : j["cluster"].items()) {
    if (!list.is_array()) continue;
    for (size_t i = 0; i < list.size(); ++i) {
      auto it = addresses.find({type, static_cast<int>(i)});
      if (it != addresses.end()) list[i] = it->second;
    }
  }
  return j.dump();
}

}  // namespace cairn::jobs
