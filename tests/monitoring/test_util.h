// Helpers for the monitoring tests: loopback HTTP GET, free ports, running
// commands, finding Prometheus binaries.
#ifndef CAIRN_TESTS_MONITORING_TEST_UTIL_H_
#define CAIRN_TESTS_MONITORING_TEST_UTIL_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace cairn::monitoring::testing {

struct HttpResponse {
  int status = 0;
  std::string body;
};

// GET http://127.0.0.1:port/target (HTTP/1.0, no keep-alive). Unavailable if
// the connection fails.
absl::StatusOr<HttpResponse> HttpGet(int port, const std::string& target);

// Samples of a text exposition: "name{a=\"1\",b=\"2\"}" (labels sorted by
// name, no braces when there are none) -> value. Comments are skipped.
std::map<std::string, double> ParseSamples(const std::string& text);

// The value of one sample, e.g. Sample(text, "cairn_jobs", {{"state",
// "queued"}}), or nullopt when absent.
std::optional<double> Sample(const std::string& text, const std::string& name,
                             const std::map<std::string, std::string>& labels);

// Percent-encodes a query-string value.
std::string UrlEncode(const std::string& value);

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` through /bin/sh with stdin from `input` (may be empty).
CommandResult RunCommand(const std::string& command,
                         const std::string& input = "");

// Absolute path of an executable found in PATH or /usr/bin, or "".
std::string FindExecutable(const std::string& name);

// The repository root: $CAIRN_SOURCE_DIR, else CAIRN_SOURCE_DIR_DEFAULT.
std::string SourceDir();

// A fresh temporary directory (removed by RemoveTree).
std::string MakeTempDir(const std::string& prefix);
void RemoveTree(const std::string& path);

}  // namespace cairn::monitoring::testing

#endif  // CAIRN_TESTS_MONITORING_TEST_UTIL_H_
