// A multi-replica trial inside one Slurm job. See slurm_launch.h.
#include "jobs/slurm_launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "jobs/job_files.h"
#include "jobs/slurm_commands.h"
#include "jobs/slurm_container.h"
#include "jobs/subprocess.h"
#include "jobs/tf_config.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace cairn::jobs {
namespace {

constexpr char kMasterExit[] = "master.exit";

// The last SIGTERM/SIGINT/SIGHUP received, to forward.
volatile sig_atomic_t g_signal = 0;

void OnSignal(int sig) { g_signal = sig; }

void CatchSignals() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
}

// How a process ended: an exit code, or the signal that killed it.
struct Ending {
  bool signaled = false;
  int value = 0;
  int ExitCode() const { return signaled ? 128 + value : value; }
  bool ok() const { return !signaled && value == 0; }
  std::string ToString() const {
    return signaled ? absl::StrCat("killed by signal ", value)
                    : absl::StrCat("exit code ", value);
  }
};

Ending FromWaitStatus(int ws) {
  if (WIFSIGNALED(ws)) return {true, WTERMSIG(ws)};
  return {false, WEXITSTATUS(ws)};
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `text` to `path` whole or not at all (rename), for readers on
// other nodes.
bool WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!(out << text)) return false;
  }
  return rename(tmp.c_str(), path.c_str()) == 0;
}

// This run of the job (a requeued job runs again with a new restart count).
std::string RunDir(const SlurmGroup& group) {
  const std::string restarts = Env("SLURM_RESTART_COUNT");
  return absl::StrCat(group.run_root, "/", Env("SLURM_JOB_ID"), ".",
                      restarts.empty() ? "0" : restarts);
}

absl::StatusOr<SlurmGroup> LoadGroup(const std::string& file) {
  std::optional<std::string> text = ReadFile(file);
  if (!text.has_value()) {
    return absl::NotFoundError(absl::StrCat("cannot read ", file));
  }
  return ParseSlurmGroup(*text);
}

// A TCP port free on every address of this node right now.
absl::StatusOr<int> PickNodePort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof(addr);
  const bool ok =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (!ok) return absl::UnavailableError("no free TCP port on this node");
  return ntohs(addr.sin_port);
}

// The address other nodes reach this one at: Slurm's NodeAddr for it.
std::string NodeAddress(const SlurmGroup& group, const std::string& node) {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin"};
  if (!Env("SLURM_CONF").empty())
    env.push_back("SLURM_CONF=" + Env("SLURM_CONF"));
  absl::StatusOr<ProgramOutput> out =
      RunProgram({group.scontrol, "-o", "show", "node", node}, env);
  if (out.ok() && out->exit_code == 0) {
    const std::string addr = ParseNodeAddr(out->out);
    if (!addr.empty()) return addr;
  }
  return node;
}

struct Peer {
  std::string address;
  int port = 0;
  std::string node;
};

// Writes this task's address and waits for every task's. Nullopt on a
// signal or the timeout (`why` says which).
std::optional<std::vector<Peer>> Rendezvous(const SlurmGroup& group,
                                            const std::string& run_dir,
                                            int procid, const Peer& self,
                                            std::string& why) {
  const std::string line =
      absl::StrCat(self.address, " ", self.port, " ", self.node, "\n");
  if (!WriteFileAtomically(absl::StrCat(run_dir, "/task-", procid), line)) {
    why = absl::StrCat("cannot write to ", run_dir);
    return std::nullopt;
  }
  const absl::Time deadline = absl::Now() + group.rendezvous_timeout;
  std::vector<Peer> peers(group.replicas.size());
  size_t known = 0;
  while (known < peers.size()) {
    std::optional<std::string> text =
        ReadFile(absl::StrCat(run_dir, "/task-", known));
    std::vector<std::string> f;
    if (text.has_value()) {
      f = absl::StrSplit(absl::StripAsciiWhitespace(*text), ' ');
    }
    if (f.size() == 3 && absl::SimpleAtoi(f[1], &peers[known].port)) {
      peers[known].address = f[0];
      peers[known].node = f[2];
      ++known;
      continue;
    }
    if (g_signal != 0) {
      why = absl::StrCat("signal ", static_cast<int>(g_signal));
      return std::nullopt;
    }
    if (absl::Now() > deadline) {
      why = absl::StrCat("task ", known, " did not report its address within ",
                         absl::FormatDuration(group.rendezvous_timeout));
      return std::nullopt;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return peers;
}

// The replica's own variables (without CUDA_VISIBLE_DEVICES: Slurm sets
// it) with its cluster moved onto `peers`.
std::map<std::string, std::string> ReplicaJobEnv(
    const SlurmGroup& group, const SlurmReplica& replica,
    const std::vector<Peer>& peers) {
  std::map<std::string, std::string> env = replica.env;
  env.erase("CUDA_VISIBLE_DEVICES");
  std::map<std::pair<std::string, int>, std::string> addresses;
  for (size_t i = 0; i < peers.size(); ++i) {
    auto it = group.replicas[i].env.find("TF_CONFIG");
    if (it == group.replicas[i].env.end()) continue;
    addresses[TfConfigTask(it->second)] =
        absl::StrCat(peers[i].address, ":", peers[i].port);
  }
  if (env.count("TF_CONFIG") > 0) {
    env["TF_CONFIG"] = RelocateTfConfig(env["TF_CONFIG"], addresses);
  }
  if (env.count("MASTER_ADDR") > 0) env["MASTER_ADDR"] = peers[0].address;
  if (env.count("MASTER_PORT") > 0) {
    env["MASTER_PORT"] = absl::StrCat(peers[0].port);
  }
  return env;
}

// A process replica's whole environment: the task's own (sbatch's clean
// base and Slurm's variables) with `job_env` over it.
std::vector<std::string> ProcessEnv(
    const std::map<std::string, std::string>& job_env) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : job_env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

// Starts `argv` with `env`, output to `log_fd`, in its own process group.
// Returns its pid, or -1 (the reason written to the log).
pid_t Spawn(const std::vector<std::string>& argv,
            const std::vector<std::string>& env, const std::string& dir,
            int log_fd) {
  std::string path;
  for (const std::string& kv : env) {
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  }
  const std::string program = argv[0].find('/') != std::string::npos
                                  ? argv[0]
                                  : FindProgram(argv[0], path);
  if (program.empty()) {
    dprintf(log_fd, "cairn: %s not found in PATH=%s\n", argv[0].c_str(),
            path.c_str());
    return -1;
  }
  std::vector<char*> c_argv, c_env;
  for (const std::string& a : argv)
    c_argv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : env)
    c_env.push_back(const_cast<char*>(e.c_str()));
  c_argv.push_back(nullptr);
  c_env.push_back(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  setpgid(0, 0);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  dup2(log_fd, 1);
  dup2(log_fd, 2);
  if (!dir.empty() && chdir(dir.c_str()) != 0) {
    dprintf(2, "cairn: cannot enter %s\n", dir.c_str());
    _exit(127);
  }
  execve(program.c_str(), c_argv.data(), c_env.data());
  dprintf(2, "cairn: cannot execute %s: errno %d\n", program.c_str(), errno);
  _exit(127);
}

// Waits for the replica, forwarding signals to its process group; a
// non-master stops it (SIGTERM, SIGKILL after the grace period) once
// `stop_when` exists. `stopped` tells whether that happened, `signaled`
// whether a signal came from outside (Slurm stopping the step or the job).
// `on_stop` (if set) runs once, at the first signal or stop.
Ending WaitReplica(pid_t pid, const std::string& stop_when,
                   absl::Duration grace, bool& stopped, bool& signaled,
                   const std::function<void()>& on_stop = nullptr) {
  stopped = false;
  signaled = false;
  absl::Time kill_at = absl::InfiniteFuture();
  bool on_stop_done = false;
  for (;;) {
    int ws = 0;
    const pid_t r = waitpid(pid, &ws, WNOHANG);
    if (r == pid) return FromWaitStatus(ws);
    if (r < 0 && errno != EINTR) return {false, 1};
    if (const int sig = g_signal; sig != 0) {
      g_signal = 0;
      signaled = true;
      kill(-pid, sig);
    }
    struct stat st;
    if (!stopped && !stop_when.empty() && stat(stop_when.c_str(), &st) == 0) {
      stopped = true;
      kill(-pid, SIGTERM);
      kill_at = absl::Now() + grace;
    }
    if (absl::Now() >= kill_at) {
      kill(-pid, SIGKILL);
      kill_at = absl::InfiniteFuture();
    }
    if ((stopped || signaled) && on_stop && !on_stop_done) {
      on_stop();
      on_stop_done = true;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

// Starts replica `procid` with its `job_env`: its argv as a process, or
// podman running its image (then `container` is set). Returns the pid, or
// -1 (the reason written to the log).
pid_t StartReplica(const SlurmGroup& group, int procid,
                   const std::map<std::string, std::string>& job_env,
                   const std::string& run_dir, int log_fd,
                   std::optional<SlurmContainer>& container) {
  const SlurmReplica& replica = group.replicas[procid];
  if (!replica.container) {
    return Spawn(replica.argv, ProcessEnv(job_env), replica.working_dir,
                 log_fd);
  }
  absl::StatusOr<SlurmContainer> c = PrepareSlurmContainer(
      group.containers, *replica.container, job_env,
      Env("CUDA_VISIBLE_DEVICES"), absl::StrCat(run_dir, "/env-", procid),
      Env("SLURM_JOB_ID"));
  if (!c.ok()) {
    dprintf(log_fd, "cairn: %s: %s\n", replica.name.c_str(),
            std::string(c.status().message()).c_str());
    return -1;
  }
  container = *std::move(c);
  std::vector<std::string> argv = container->argv;
  argv.insert(argv.end(), replica.argv.begin(), replica.argv.end());
  return Spawn(argv, ProcessEnv({}), "", log_fd);
}

int RunReplica(const SlurmGroup& group, int procid, int log_fd) {
  const SlurmReplica& replica = group.replicas[procid];
  const std::string run_dir = RunDir(group);
  if (mkdir(run_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    dprintf(log_fd, "cairn: cannot create %s\n", run_dir.c_str());
    return 1;
  }
  absl::StatusOr<int> port = PickNodePort();
  if (!port.ok()) {
    dprintf(log_fd, "cairn: %s\n", port.status().ToString().c_str());
    return 1;
  }
  const std::string node = Env("SLURMD_NODENAME");
  const Peer self{NodeAddress(group, node), *port, node};
  dprintf(log_fd, "cairn: %s is Slurm task %d of job %s on node %s (%s:%d)\n",
          replica.name.c_str(), procid, Env("SLURM_JOB_ID").c_str(),
          node.c_str(), self.address.c_str(), self.port);
  std::string why;
  std::optional<std::vector<Peer>> peers =
      Rendezvous(group, run_dir, procid, self, why);
  if (!peers.has_value()) {
    dprintf(log_fd, "cairn: %s: rendezvous failed: %s\n", replica.name.c_str(),
            why.c_str());
    return 1;
  }
  std::optional<SlurmContainer> container;
  const pid_t pid =
      StartReplica(group, procid, ReplicaJobEnv(group, replica, *peers),
                   run_dir, log_fd, container);
  if (pid < 0) return 127;
  dprintf(log_fd, "cairn: %s started (pid %d)\n", replica.name.c_str(),
          static_cast<int>(pid));
  const bool master = procid == 0;
  const std::string master_exit = absl::StrCat(run_dir, "/", kMasterExit);
  bool stopped = false, signaled = false;
  std::function<void()> stop_container;
  if (container) {
    stop_container = [&] { StopSlurmContainer(*container, group.grace); };
  }
  const Ending end = WaitReplica(pid, master ? "" : master_exit, group.grace,
                                 stopped, signaled, stop_container);
  if (container) CleanUpSlurmContainer(*container, group.grace);
  if (master) {
    // A master Slurm stopped (another replica failed, the job was
    // cancelled) did not decide the outcome.
    if (!signaled) {
      WriteFileAtomically(
          master_exit,
          absl::StrCat(end.signaled ? "signal " : "exit ", end.value, "\n"));
    }
    return end.ExitCode();
  }
  if (stopped) return 0;  // The master is done: so is the group.
  if (!end.ok()) {
    dprintf(log_fd, "cairn: %s %s: the group stops and restarts\n",
            replica.name.c_str(), end.ToString().c_str());
  }
  return end.ExitCode();
}

// Removes a run's rendezvous files (the job dir keeps nothing of it).
void RemoveRunDir(const std::string& run_dir, size_t tasks) {
  for (size_t i = 0; i < tasks; ++i) {
    unlink(absl::StrCat(run_dir, "/task-", i).c_str());
    unlink(absl::StrCat(run_dir, "/env-", i).c_str());
  }
  unlink(absl::StrCat(run_dir, "/", kMasterExit).c_str());
  rmdir(run_dir.c_str());
}

}  // namespace

std::string SlurmGroupJson(const SlurmGroup& group) {
  nlohmann::json replicas = nlohmann::json::array();
  for (const SlurmReplica& r : group.replicas) {
    replicas.push_back({{"name", r.name},
                        {"argv", r.argv},
                        {"env", r.env},
                        {"working_dir", r.working_dir},
                        {"log_path", r.log_path}});
    if (r.container)
      replicas.back()["container"] = ContainerJobJson(*r.container);
  }
  return nlohmann::json{{"srun", group.srun},
                        {"scontrol", group.scontrol},
                        {"launcher", group.launcher},
                        {"run_root", group.run_root},
                        {"grace_ms", absl::ToInt64Milliseconds(group.grace)},
                        {"rendezvous_timeout_ms",
                         absl::ToInt64Milliseconds(group.rendezvous_timeout)},
                        {"container_runtime", group.containers.runtime},
                        {"image_pull", group.containers.pull},
                        {"data_dir", group.containers.data_dir},
                        {"replicas", replicas}}
      .dump();
}

absl::StatusOr<SlurmGroup> ParseSlurmGroup(const std::string& json) {
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  SlurmGroup g;
  try {
    g.srun = j.at("srun").get<std::string>();
    g.scontrol = j.at("scontrol").get<std::string>();
    g.launcher = j.at("launcher").get<std::string>();
    g.run_root = j.at("run_root").get<std::string>();
    g.grace = absl::Milliseconds(j.at("grace_ms").get<int64_t>());
    g.rendezvous_timeout =
        absl::Milliseconds(j.at("rendezvous_timeout_ms").get<int64_t>());
    g.containers.runtime = j.value("container_runtime", "");
    g.containers.pull = j.value("image_pull", "never");
    g.containers.data_dir = j.value("data_dir", "");
    for (const nlohmann::json& r : j.at("replicas")) {
      SlurmReplica replica;
      replica.name = r.at("name").get<std::string>();
      replica.argv = r.at("argv").get<std::vector<std::string>>();
      replica.env = r.at("env").get<std::map<std::string, std::string>>();
      replica.working_dir = r.at("working_dir").get<std::string>();
      replica.log_path = r.at("log_path").get<std::string>();
      if (r.contains("container")) {
        absl::StatusOr<ContainerJob> c = ParseContainerJob(r["container"]);
        if (!c.ok()) return c.status();
        replica.container = *std::move(c);
      }
      if (replica.argv.empty() && !replica.container) {
        return absl::InvalidArgumentError(
            absl::StrCat("group file: replica ", replica.name, " has no argv"));
      }
      g.replicas.push_back(std::move(replica));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed group file: ", e.what()));
  }
  if (g.replicas.empty()) {
    return absl::InvalidArgumentError("group file: no replicas");
  }
  return g;
}

std::string ParseNodeAddr(const std::string& scontrol_out) {
  for (absl::string_view field : absl::StrSplit(
           scontrol_out, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&field, "NodeAddr=")) return std::string(field);
  }
  return "";
}

int RunSlurmBatch(const std::string& group_file) {
  absl::StatusOr<SlurmGroup> group = LoadGroup(group_file);
  if (!group.ok()) {
    std::fprintf(stderr, "cairn: %s\n", group.status().ToString().c_str());
    return 1;
  }
  CatchSignals();
  const std::vector<std::string> argv =
      SrunArgv(group->srun, static_cast<int>(group->replicas.size()),
               {group->launcher, "--slurm-replica", group_file});
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  // srun in the batch's process group: the batch forwards signals to it.
  const pid_t pid = Spawn(argv, env, "", 2);
  if (pid < 0) return 1;
  bool stopped = false, signaled = false;
  const std::string runtime = group->containers.runtime;
  std::function<void()> stop_containers;
  if (!runtime.empty()) {
    stop_containers = [&] {
      RemoveSlurmJobContainers(runtime, Env("SLURM_JOB_ID"), group->grace,
                               /*detached=*/true);
    };
  }
  const Ending srun =
      WaitReplica(pid, "", group->grace, stopped, signaled, stop_containers);
  const std::string run_dir = RunDir(*group);
  if (!runtime.empty() && !signaled) {
    RemoveSlurmJobContainers(runtime, Env("SLURM_JOB_ID"), group->grace,
                             /*detached=*/false);
  }
  std::optional<std::string> master =
      ReadFile(absl::StrCat(run_dir, "/", kMasterExit));
  RemoveRunDir(run_dir, group->replicas.size());
  // The group file holds the replicas' environments (the master's token
  // among them): a group that ran to its end removes it, so none is left
  // when the cairnd that wrote it restarted meanwhile (and no longer knows
  // it). A batch stopped by a signal keeps it: Slurm may requeue the job,
  // which runs this program again on the same file.
  if (!signaled) unlink(group_file.c_str());
  std::vector<std::string> f;
  int value = 0;
  if (master.has_value()) {
    f = absl::StrSplit(absl::StripAsciiWhitespace(*master), ' ');
  }
  if (f.size() != 2 || !absl::SimpleAtoi(f[1], &value)) {
    std::fprintf(stderr,
                 "cairn: the replica group ended before its master did "
                 "(srun %s)\n",
                 srun.ToString().c_str());
    return srun.ok() ? 1 : srun.ExitCode();
  }
  if (f[0] == "signal") {
    signal(value, SIG_DFL);
    raise(value);
  }
  return value;
}

int RunSlurmReplica(const std::string& group_file) {
  absl::StatusOr<SlurmGroup> group = LoadGroup(group_file);
  int procid = -1;
  if (!group.ok() || !absl::SimpleAtoi(Env("SLURM_PROCID"), &procid) ||
      procid < 0 || procid >= static_cast<int>(group->replicas.size())) {
    std::fprintf(
        stderr, "cairn: --slurm-replica: %s (SLURM_PROCID %s)\n",
        group.ok() ? "no such replica" : group.status().ToString().c_str(),
        Env("SLURM_PROCID").c_str());
    return 1;
  }
  CatchSignals();
  const SlurmReplica& replica = group->replicas[procid];
  absl::StatusOr<ScopedFd> log =
      OpenJobFile(replica.log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (!log.ok()) {
    std::fprintf(stderr, "cairn: %s\n", log.status().ToString().c_str());
    return 1;
  }
  return RunReplica(*group, procid, log->get());
}

}  // namespace cairn::jobs
