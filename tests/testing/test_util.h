// Test helpers shared by the suites: temp dirs and a real cairnd child
// process on a free loopback port.
#ifndef CAIRN_TESTS_TESTING_TEST_UTIL_H_
#define CAIRN_TESTS_TESTING_TEST_UTIL_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cairn/v1/study_service.grpc.pb.h"

namespace cairn::testing {

// A fresh directory under $TMPDIR (mode 0755, so that trial jobs running as
// the job user reach a cairnd data dir inside it), removed (recursively) on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Directory holding the built binaries (env CAIRN_BIN_DIR, set by ctest).
std::string BinDir();

// A cairnd child process. Start() launches cairnd on port 0 with --port-file
// and waits until it serves; the destructor SIGKILLs it if still running.
// The /metrics endpoint goes to a free loopback port unless extra_args holds
// "--metrics-listen", "ADDRESS" (two elements; "" disables it), and so does
// the REST API and web UI (--http-listen); the gRPC
// port is 127.0.0.1:0 unless extra_args holds "--listen", "ADDRESS" (then
// RestartOnSamePort does not apply).
class CairndProcess {
 public:
  // `binary` is the cairnd executable; empty means BinDir() + "/cairnd".
  explicit CairndProcess(std::string data_dir,
                         std::vector<std::string> extra_args = {},
                         std::string binary = "");
  ~CairndProcess();

  // Returns false (with a gtest failure message in *error) if cairnd did not
  // come up within 20 s.
  bool Start(std::string* error);
  // Start() again on the port the last Start() got (after Kill9() or
  // Terminate()), so clients holding the old address find the new cairnd.
  bool RestartOnSamePort(std::string* error);
  // SIGKILL and reap.
  void Kill9();
  // SIGTERM, wait; returns the exit status (as from waitpid) or -1.
  int Terminate();
  // SIGTERM, wait up to `grace`, then SIGKILL if still running; returns the
  // exit status (as from waitpid) or -1 if not running.
  int Terminate(std::chrono::milliseconds grace);

  int port() const { return port_; }
  std::string address() const;
  pid_t pid() const { return pid_; }
  // Stubs and a channel that send token() with every call.
  std::unique_ptr<cairn::v1::StudyService::Stub> NewStub() const;
  std::shared_ptr<grpc::Channel> NewChannel() const;
  // The admin token cairnd wrote to <data_dir>/admin.token (read after each
  // Start; "" with --auth=none). Start also exports it as $CAIRN_TOKEN, so
  // the cairn CLIs a test runs use it.
  const std::string& token() const { return token_; }
  // Sends `token` instead from now on (a test of other roles).
  void set_token(std::string token) { token_ = std::move(token); }
  // cairnd's stdout and stderr, appended to across restarts.
  std::string log_path() const { return data_dir_ + "/cairnd.log"; }
  // The log's contents, or only its last `max_chars` characters.
  std::string Log(size_t max_chars = std::string::npos) const;

 private:
  std::string data_dir_;
  std::vector<std::string> extra_args_;
  std::string binary_;
  pid_t pid_ = -1;
  int port_ = 0;
  int listen_port_ = 0;  // Port Start() asks for; 0: any free port.
  std::string token_;
  void ReadAdminToken();
};

// A cairnd (metrics off) with its data under a fresh TempDir, started on
// construction and shared by the tests of a suite: new it in
// SetUpTestSuite, check start_error() in SetUp, delete it in
// TearDownTestSuite. The destructor stops cairnd (SIGTERM, 5 s grace) and
// then removes the directory.
class SuiteCairnd {
 public:
  // `binary` as for CairndProcess.
  explicit SuiteCairnd(std::string binary = "");
  ~SuiteCairnd();

  const TempDir& dir() const { return dir_; }
  CairndProcess& server() { return server_; }
  // Empty when cairnd started; else why it did not.
  const std::string& start_error() const { return start_error_; }

 private:
  TempDir dir_;
  CairndProcess server_;
  std::string start_error_;
};

// The Branin function (SFU library), minimum 0.397887.
double Branin(double x1, double x2);

// A spec over Branin's domain: DOUBLE x1 in [-5, 10], x2 in [0, 15], metric
// "loss" to MINIMIZE; algorithm and limits left for the test to set.
cairn::v1::StudySpec BraninSpec();

// A search space of every parameter kind: lr (log DOUBLE in [1e-4, 0.1]),
// layers (INTEGER 1..8), opt (CATEGORICAL: sgd -> momentum DOUBLE, adam ->
// beta1 DISCRETE), batch (log DISCRETE 16..128); metric "loss" to
// MINIMIZE. No algorithm or seed set.
cairn::v1::StudySpec MixedSpaceSpec();

// A spec whose trials run the shell `script` (`/bin/sh -c script arg0`, so
// the script sees `arg0` as $0): one DOUBLE x in [0, 1], metric "loss" to
// MINIMIZE, RANDOM_SEARCH; trial limits left for the caller to set.
cairn::v1::StudySpec ShellJobSpec(const std::string& script,
                                  const std::string& arg0);

// A measurement of metric "loss" at `step`.
cairn::v1::Measurement Loss(double value, int64_t step = 0);

// An ACTIVE trial `id` with one parameter, "lr" = `lr`.
cairn::v1::Trial MakeTrial(int64_t id, double lr);

// Runs argv as a child process (no shell), capturing stdout and stderr.
struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal.
  std::string out;
  std::string err;
};
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env = {});

// Whether /usr/bin/python3 has torch (the PyTorch examples need it).
bool HaveTorch();

// The text of the file at `path`, or "" when it cannot be read.
std::string ReadFile(const std::string& path);

// The paths of the entries of directory `dir` whose names contain `part`,
// sorted.
std::vector<std::string> FilesContaining(const std::string& dir,
                                         const std::string& part);

// `cairn study create` of examples/pytorch_gloo/study.yaml (master + 2
// workers) against cairnd at `address`, made short and runnable from any
// directory: the trainer's absolute path (the checkout: CAIRN_SOURCE_DIR,
// else "."), 30 steps, one trial; the config is written into `dir`.
CommandResult CreateGlooStudy(const std::string& address,
                              const std::string& dir);

// Expects the trial of CreateGlooStudy to have SUCCEEDED after one restart
// of its group (a replica was killed): 2 attempts, step 30 and a low loss,
// and the master's and worker 1's logs saying so.
void ExpectGlooSucceededAfterOneRestart(const cairn::v1::Trial& t);

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_TEST_UTIL_H_
