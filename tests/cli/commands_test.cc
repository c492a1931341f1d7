// The cairn command line run in-process: help, usage errors, and the errors
// detected before or instead of talking to a server (none runs here).
#include "cli/commands.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result RunCairn(std::vector<std::string> args) {
  args.insert(args.begin(), "cairn");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = RunCli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

// A loopback port nobody listens on: bound once by the kernel's choice and
// released, so connecting is refused at once.
std::string ClosedServer() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

// The error contract: exactly one line on stderr, nothing on stdout.
void ExpectOneErrorLine(const Result& r, const std::string& fragment) {
  EXPECT_EQ(r.code, kExitError);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("cairn: error: "));
  EXPECT_THAT(r.err, HasSubstr(fragment));
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(RunCliTest, HelpForEveryCommandExitsZero) {
  const std::vector<std::vector<std::string>> commands = {
      {},
      {"study"},
      {"study", "create"},
      {"study", "list"},
      {"study", "get"},
      {"study", "delete"},
      {"study", "best"},
      {"study", "set-state"},
      {"trial"},
      {"trial", "suggest"},
      {"trial", "report"},
      {"trial", "complete"},
      {"trial", "list"},
      {"trial", "get"},
      {"trial", "stop"},
      {"trial", "history"}};
  for (auto args : commands) {
    args.push_back("--help");
    const Result r = RunCairn(args);
    EXPECT_EQ(r.code, kExitOk) << args[0];
    EXPECT_THAT(r.out, HasSubstr("Usage: cairn"));
  }
  EXPECT_THAT(RunCairn({"--help"}).out, HasSubstr("--server"));
  EXPECT_THAT(RunCairn({"trial", "suggest", "--help"}).out,
              HasSubstr("--count"));
  EXPECT_THAT(RunCairn({"trial", "report", "--help"}).out, HasSubstr("--step"));
}

TEST(RunCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunCairn({}).code, kExitUsage);
  EXPECT_EQ(RunCairn({"frobnicate"}).code, kExitUsage);
  EXPECT_EQ(RunCairn({"study"}).code, kExitUsage);
  EXPECT_EQ(RunCairn({"study", "create"}).code,
            kExitUsage);  // --config missing
  EXPECT_EQ(RunCairn({"trial", "report", "1", "2", "loss=1"}).code, kExitUsage);
  EXPECT_EQ(RunCairn({"trial", "suggest", "1", "--count", "0"}).code,
            kExitUsage);
  EXPECT_EQ(RunCairn({"trial", "suggest", "1", "--count", "x"}).code,
            kExitUsage);
  // cairnd allows 1 to 1000 suggestions per call; the CLI says so first.
  const Result too_many =
      RunCairn({"trial", "suggest", "1", "--count", "1001"});
  EXPECT_EQ(too_many.code, kExitUsage);
  EXPECT_THAT(too_many.err, HasSubstr("--count"));
  EXPECT_EQ(
      RunCairn({"trial", "complete", "1", "2", "loss=1", "--infeasible", "nan"})
          .code,
      kExitUsage);
  EXPECT_EQ(RunCairn({"--timeout", "-1", "study", "list"}).code, kExitUsage);
}

// Files that cannot be a token, a PEM file or a config (here endless) are
// refused after a bounded read: CAIRN_TOKEN_FILE=/dev/zero made cairn read
// 7 GB, --config /dev/zero 5 GB.
TEST(RunCliTest, EndlessTokenPemAndConfigFilesAreRefused) {
  const std::string server = ClosedServer();
  const Result token = RunCairn(
      {"--server", server, "--token-file", "/dev/zero", "study", "list"});
  EXPECT_NE(token.code, 0);
  EXPECT_THAT(token.err,
              HasSubstr("--token-file: no token: '/dev/zero' is over 4096 "
                        "bytes"));
  const Result pem =
      RunCairn({"--server", server, "--tls-ca", "/dev/zero", "study", "list"});
  EXPECT_NE(pem.code, 0);
  EXPECT_THAT(pem.err, HasSubstr("--tls-ca: cannot read a PEM file: "
                                 "'/dev/zero' is over 1048576 bytes"));
  const Result config = RunCairn(
      {"--server", server, "study", "create", "--config", "/dev/zero"});
  EXPECT_NE(config.code, 0);
  EXPECT_THAT(config.err, HasSubstr("the study config file: '/dev/zero' is "
                                    "over 16777216 bytes"));
}

TEST(RunCliTest, BadMetricTokenFailsBeforeAnyRpc) {
  // The server is unreachable: an RPC would fail with UNAVAILABLE instead.
  const std::string server = ClosedServer();
  ExpectOneErrorLine(RunCairn({"trial", "report", "1", "2", "--step", "3",
                               "loss", "--server", server}),
                     "INVALID_ARGUMENT: bad metric \"loss\"");
  ExpectOneErrorLine(RunCairn({"--server", server, "trial", "complete", "1",
                               "2", "loss=1", "acc=fast"}),
                     "bad metric \"acc=fast\"");
}

TEST(RunCliTest, BadConfigFileNamesFileAndField) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cairn_cli_cmd_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "typo.yaml").string();
  std::ofstream(path) << "parameters:\n  - parameter_id: x\n    kind: DOUBLE\n";
  const std::string server = ClosedServer();
  ExpectOneErrorLine(
      RunCairn({"--server", server, "study", "create", "--config", path}),
      path + ": unknown field \"kind\" in parameters[0]");
  ExpectOneErrorLine(RunCairn({"--server", server, "study", "create",
                               "--config", (dir / "missing.yaml").string()}),
                     "NOT_FOUND: ");
  std::filesystem::remove_all(dir);
}

TEST(RunCliTest, UnreachableServerIsOneLineNamingTheAddress) {
  const std::string server = ClosedServer();
  ExpectOneErrorLine(RunCairn({"study", "list", "--server", server}),
                     "UNAVAILABLE: cairnd at " + server);
  // $CAIRN_SERVER is used when --server is absent.
  ::setenv("CAIRN_SERVER", server.c_str(), 1);
  ExpectOneErrorLine(RunCairn({"trial", "list", "branin", "--json"}),
                     "cairnd at " + server);
  ::unsetenv("CAIRN_SERVER");
}

TEST(RunCliTest, ServerWithoutPortIsAClearError) {
  ExpectOneErrorLine(RunCairn({"--server", "localhost", "study", "list"}),
                     "--server (or $CAIRN_SERVER) 'localhost' is not "
                     "HOST:PORT");
  ExpectOneErrorLine(RunCairn({"--server", "localhost:99999", "study", "list"}),
                     "'localhost:99999' is not HOST:PORT");
}

TEST(RunCliTest, DurationsWorkWhereSecondsDo) {
  const std::string server = ClosedServer();
  // 5m and 90s parse (the call then fails on the closed port, not on them).
  ExpectOneErrorLine(
      RunCairn({"--server", server, "--timeout", "5m", "study", "list"}),
      "UNAVAILABLE: cairnd at " + server);
  ExpectOneErrorLine(
      RunCairn({"--server", server, "study", "wait", "1", "--interval", "90s",
                "--reconnect-timeout", "1ms"}),
      "cairnd at " + server);
  const Result bad = RunCairn({"--timeout", "5x", "study", "list"});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("--timeout"));
  EXPECT_THAT(bad.err, HasSubstr("\"5x\" is not a positive number of "
                                 "seconds or a duration"));
}

// Numbers on the command line are decimal and within range before anything
// is sent: CLI11 alone stored --step 010 as 8 and 99999999999999999999 as
// INT64_MAX, and let --elapsed nan through.
TEST(RunCliTest, NumbersAreDecimalAndInRange) {
  const std::string server = ClosedServer();
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"trial", "report", "1", "1", "loss=1", "--step", "0x10"},
       "--step: \"0x10\" is not a decimal integer from 0 to "
       "9223372036854775807"},
      {{"trial", "report", "1", "1", "loss=1", "--step",
        "99999999999999999999"},
       "--step: \"99999999999999999999\" is not a decimal integer"},
      {{"trial", "report", "1", "1", "loss=1", "--step", "1", "--elapsed",
        "nan"},
       "--elapsed: \"nan\" is not a number of seconds or a duration"},
      {{"trial", "complete", "1", "1", "loss=1", "--elapsed", "1e300"},
       "--elapsed: \"1e300\" is not a number of seconds"},
      {{"trial", "suggest", "1", "--count", "1001"},
       "--count: \"1001\" is not a decimal integer from 1 to 1000"},
      {{"trial", "history", "1", "1", "loss", "--start-step", "-1"},
       "--start-step: \"-1\" is not a decimal integer"},
      {{"--timeout", "1e300", "study", "list"},
       "--timeout: \"1e300\" is not a positive number of seconds"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--server", server});
    const Result r = RunCairn(args);
    EXPECT_EQ(r.code, kExitUsage) << c.error;
    EXPECT_THAT(r.err, HasSubstr(c.error));
  }
  // "010" is ten, not octal eight: accepted here (the call then fails on the
  // closed port); the value sent is checked by cli_integration_test.
  ExpectOneErrorLine(RunCairn({"--server", server, "trial", "report", "1", "1",
                               "loss=1", "--step", "010", "--elapsed", "90m"}),
                     "UNAVAILABLE: cairnd at " + server);
}

TEST(RunCliTest, BadStudyOrTrialArgument) {
  const std::string server = ClosedServer();
  ExpectOneErrorLine(
      RunCairn({"--server", server, "trial", "stop", "1", "two"}),
      "INVALID_ARGUMENT: bad trial \"two\"");
  ExpectOneErrorLine(RunCairn({"--server", server, "trial", "stop", "1",
                               "studies/2/trials/3"}),
                     "does not belong to study studies/1");
  ExpectOneErrorLine(
      RunCairn({"--server", server, "study", "get", "studies/x"}),
      "bad study name \"studies/x\"");
  ExpectOneErrorLine(
      RunCairn({"--server", server, "study", "set-state", "1", "paused"}),
      "bad study state \"paused\"");
}

}  // namespace
}  // namespace cairn::cli
