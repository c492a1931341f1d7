// A child process whose stdout and stderr go to files, for tests that watch
// a binary while it runs (signals, restarts, partial output).
#ifndef CAIRN_TESTS_TESTING_CHILD_PROCESS_H_
#define CAIRN_TESTS_TESTING_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace cairn::testing {

// Runs `binary` with `args` (no shell) as a child, its stdout in
// `out_prefix`.out and its stderr in `out_prefix`.err (both truncated),
// with `env` ("NAME=value" entries) added to the environment. The
// destructor SIGKILLs and reaps the child if it was not waited for.
// Not thread-safe.
class ChildProcess {
 public:
  ChildProcess(const std::string& binary, const std::vector<std::string>& args,
               const std::string& out_prefix,
               const std::vector<std::string>& env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits for the child; returns its exit code, or 128 + signal (-1 if it
  // was already waited for).
  int Wait();
  // As Wait(), but returns -1 if still running after `limit`.
  int Wait(std::chrono::milliseconds limit);
  // Sends `sig` to the child, unless it was already waited for.
  void Kill(int sig);
  std::string Stdout() const;
  std::string Stderr() const;

 private:
  pid_t pid_ = -1;
  std::string out_;
  std::string err_;
};

}  // namespace cairn::testing

#endif  // CAIRN_TESTS_TESTING_CHILD_PROCESS_H_
