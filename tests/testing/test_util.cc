// Implementation of the shared test helpers.
#include "tests/testing/test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/str_replace.h"
#include "auth/client_token.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"

namespace cairn::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base ? base : "/tmp") + "/cairn-test-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  path_ = mkdtemp(buf.data());
  // mkdtemp makes it 0700; trial jobs run as the job user (nobody, when the
  // tests run as root) and must reach the jobs root inside it.
  chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string BinDir() {
  const char* dir = std::getenv("CAIRN_BIN_DIR");
  return dir ? dir : "build/bin";
}

CairndProcess::CairndProcess(std::string data_dir,
                             std::vector<std::string> extra_args,
                             std::string binary)
    : data_dir_(std::move(data_dir)),
      extra_args_(std::move(extra_args)),
      binary_(binary.empty() ? BinDir() + "/cairnd" : std::move(binary)) {}

CairndProcess::~CairndProcess() { Kill9(); }

bool CairndProcess::Start(std::string* error) {
  const std::string port_file = data_dir_ + "/cairnd.port";
  std::filesystem::create_directories(data_dir_);
  std::filesystem::remove(port_file);
  std::vector<std::string> args = {binary_, "--data-dir", data_dir_,
                                   "--port-file", port_file};
  // Loopback unless the test chose the address.
  bool listen_given = false;
  for (const auto& a : extra_args_) listen_given |= a == "--listen";
  if (!listen_given) {
    args.push_back("--listen");
    args.push_back("127.0.0.1:" + std::to_string(listen_port_));
  }
  // Metrics on a free port unless the test chose (parallel tests never
  // collide on the default 9464).
  bool metrics_given = false;
  for (const auto& a : extra_args_) metrics_given |= a == "--metrics-listen";
  if (!metrics_given) {
    args.push_back("--metrics-listen");
    args.push_back("127.0.0.1:0");
  }
  // The REST API and web UI on a free port too, unless the test chose.
  bool http_given = false;
  for (const auto& a : extra_args_) http_given |= a == "--http-listen";
  if (!http_given) {
    args.push_back("--http-listen");
    args.push_back("127.0.0.1:0");
  }
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      *error = "cairnd exited during start: " + Log();
      return false;
    }
    std::ifstream in(port_file);
    if (in >> port_ && port_ > 0) {
      ReadAdminToken();
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *error = "cairnd did not write its port file within 20 s";
  return false;
}

bool CairndProcess::RestartOnSamePort(std::string* error) {
  listen_port_ = port_;
  return Start(error);
}

void CairndProcess::Kill9() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

int CairndProcess::Terminate() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

int CairndProcess::Terminate(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return status;
}

std::string CairndProcess::Log(size_t max_chars) const {
  std::ifstream in(log_path());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return text.size() > max_chars ? text.substr(text.size() - max_chars) : text;
}

std::string CairndProcess::address() const {
  return "127.0.0.1:" + std::to_string(port_);
}

std::unique_ptr<cairn::v1::StudyService::Stub> CairndProcess::NewStub() const {
  return cairn::v1::StudyService::NewStub(NewChannel());
}

std::shared_ptr<grpc::Channel> CairndProcess::NewChannel() const {
  return cairn::auth::NewAuthChannel(address(), token_);
}

void CairndProcess::ReadAdminToken() {
  std::ifstream in(data_dir_ + "/admin.token");
  std::string token;
  if (!(in >> token)) return;  // --auth=none, or a restored backup.
  token_ = token;
  ::setenv("CAIRN_TOKEN", token_.c_str(), 1);
}

SuiteCairnd::SuiteCairnd(std::string binary)
    : server_(dir_.path() + "/data", {"--metrics-listen", ""},
              std::move(binary)) {
  server_.Start(&start_error_);
}

SuiteCairnd::~SuiteCairnd() { server_.Terminate(std::chrono::seconds(5)); }

double Branin(double x1, double x2) {
  const double pi = 3.14159265358979323846;
  const double b = 5.1 / (4 * pi * pi), c = 5 / pi, t = 1 / (8 * pi);
  const double a = x2 - b * x1 * x1 + c * x1 - 6;
  return a * a + 10 * (1 - t) * std::cos(x1) + 10;
}

cairn::v1::StudySpec BraninSpec() {
  cairn::v1::StudySpec spec;
  auto* x1 = spec.add_parameters();
  x1->set_parameter_id("x1");
  x1->set_type(cairn::v1::ParameterSpec::DOUBLE);
  x1->set_min_value(-5);
  x1->set_max_value(10);
  auto* x2 = spec.add_parameters();
  x2->set_parameter_id("x2");
  x2->set_type(cairn::v1::ParameterSpec::DOUBLE);
  x2->set_min_value(0);
  x2->set_max_value(15);
  auto* metric = spec.add_metrics();
  metric->set_metric_id("loss");
  metric->set_goal(cairn::v1::MetricSpec::MINIMIZE);
  return spec;
}

cairn::v1::StudySpec MixedSpaceSpec() {
  cairn::v1::StudySpec spec;
  const bool parsed = google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters {
          parameter_id: "lr"
          type: DOUBLE
          min_value: 1e-4
          max_value: 0.1
          scale_type: UNIT_LOG_SCALE
        }
        parameters {
          parameter_id: "layers"
          type: INTEGER
          min_value: 1
          max_value: 8
        }
        parameters {
          parameter_id: "opt"
          type: CATEGORICAL
          categorical_values: [ "sgd", "adam" ]
          conditional_parameter_specs {
            parameter_spec {
              parameter_id: "momentum"
              type: DOUBLE
              min_value: 0
              max_value: 0.99
            }
            parent_categorical_values: "sgd"
          }
          conditional_parameter_specs {
            parameter_spec {
              parameter_id: "beta1"
              type: DISCRETE
              discrete_values: [ 0.8, 0.9, 0.99 ]
            }
            parent_categorical_values: "adam"
          }
        }
        parameters {
          parameter_id: "batch"
          type: DISCRETE
          discrete_values: [ 16, 32, 64, 128 ]
          scale_type: UNIT_LOG_SCALE
        }
        metrics { metric_id: "loss" goal: MINIMIZE }
      )pb",
      &spec);
  EXPECT_TRUE(parsed) << "MixedSpaceSpec text does not parse";
  return spec;
}

cairn::v1::StudySpec ShellJobSpec(const std::string& script,
                                  const std::string& arg0) {
  cairn::v1::StudySpec spec;
  google::protobuf::TextFormat::ParseFromString(
      R"pb(
        parameters { parameter_id: "x" type: DOUBLE min_value: 0 max_value: 1 }
        metrics { metric_id: "loss" goal: MINIMIZE }
        algorithm: RANDOM_SEARCH
        job_template { command: "/bin/sh" command: "-c" }
      )pb",
      &spec);
  spec.mutable_job_template()->add_command(script);
  spec.mutable_job_template()->add_command(arg0);
  return spec;
}

cairn::v1::Measurement Loss(double value, int64_t step) {
  cairn::v1::Measurement m;
  m.set_step_count(step);
  auto* metric = m.add_metrics();
  metric->set_metric_id("loss");
  metric->set_value(value);
  return m;
}

cairn::v1::Trial MakeTrial(int64_t id, double lr) {
  cairn::v1::Trial trial;
  trial.set_id(id);
  trial.set_state(cairn::v1::Trial::ACTIVE);
  cairn::v1::Parameter* p = trial.add_parameters();
  p->set_parameter_id("lr");
  p->mutable_value()->set_number_value(lr);
  return trial;
}

namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, n);
  return out;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv_in,
                         const std::vector<std::string>& extra_env) {
  CommandResult result;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) return result;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    for (const auto& kv : extra_env) putenv(strdup(kv.c_str()));
    std::vector<std::string> args = argv_in;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::thread err_reader([&] { result.err = ReadAll(err_pipe[0]); });
  result.out = ReadAll(out_pipe[0]);
  err_reader.join();
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool HaveTorch() {
  // find_spec only locates the package: importing torch takes seconds.
  return RunCommand({"/usr/bin/python3", "-c",
                     "import importlib.util, sys; "
                     "sys.exit(importlib.util.find_spec('torch') is None)"})
             .exit_code == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> FilesContaining(const std::string& dir,
                                         const std::string& part) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().find(part) != std::string::npos) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

CommandResult CreateGlooStudy(const std::string& address,
                              const std::string& dir) {
  const char* env = std::getenv("CAIRN_SOURCE_DIR");
  const std::string src = env != nullptr ? env : ".";
  const std::string yaml = absl::StrReplaceAll(
      ReadFile(src + "/examples/pytorch_gloo/study.yaml"),
      {{"python3, train.py,",
        "python3, " + src + "/examples/pytorch_gloo/train.py,"},
       {"--steps=40", "--steps=30"},
       {"max_trials: 2", "max_trials: 1"}});
  EXPECT_NE(yaml.find("replicas:"), std::string::npos) << "not the example";
  const std::string config = dir + "/pytorch-gloo.yaml";
  std::ofstream(config) << yaml;
  return RunCommand({BinDir() + "/cairn", "--server", address, "study",
                     "create", "--config", config});
}

void ExpectGlooSucceededAfterOneRestart(const cairn::v1::Trial& t) {
  ASSERT_EQ(t.state(), cairn::v1::Trial::SUCCEEDED) << t.ShortDebugString();
  EXPECT_EQ(t.job().restarts(), 1) << "one restart for the whole group";
  EXPECT_EQ(t.job().attempts(), 2);
  EXPECT_EQ(t.final_measurement().step_count(), 30);
  ASSERT_EQ(t.final_measurement().metrics_size(), 1);
  EXPECT_EQ(t.final_measurement().metrics(0).metric_id(), "loss");
  EXPECT_LT(t.final_measurement().metrics(0).value(), 5.0);
  const std::string job_dir = t.job().job_dir();
  const std::string master_log = ReadFile(job_dir + "/job.log");
  for (const char* line : {"rank 0/3: task master 0, trial 1",
                           "rank 0: resumed from step ", "done: y = "}) {
    EXPECT_NE(master_log.find(line), std::string::npos) << line << "\n"
                                                        << master_log;
  }
  EXPECT_NE(ReadFile(job_dir + "/worker-replica-1.log")
                .find("rank 2/3: task worker 1, trial 1"),
            std::string::npos);
}

}  // namespace cairn::testing
