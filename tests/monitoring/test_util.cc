// Loopback HTTP, ports and subprocess helpers for the monitoring tests.
#include "tests/monitoring/test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cairn::monitoring::testing {

absl::StatusOr<HttpResponse> HttpGet(int port, const std::string& target) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::UnavailableError("socket() failed");
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect 127.0.0.1:", port));
  }
  std::string request =
      absl::StrCat("GET ", target, " HTTP/1.0\r\nHost: 127.0.0.1:", port,
                   "\r\nConnection: close\r\n\r\n");
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    close(fd);
    return absl::UnavailableError("send failed");
  }
  std::string raw;
  char buffer[16384];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) raw.append(buffer, n);
  close(fd);
  size_t header_end = raw.find("\r\n\r\n");
  if (raw.compare(0, 5, "HTTP/") != 0 || header_end == std::string::npos) {
    return absl::UnavailableError(
        absl::StrCat("malformed HTTP response from port ", port));
  }
  HttpResponse response;
  size_t space = raw.find(' ');
  if (!absl::SimpleAtoi(raw.substr(space + 1, 3), &response.status)) {
    return absl::UnavailableError("malformed HTTP status line");
  }
  response.body = raw.substr(header_end + 4);
  return response;
}

std::map<std::string, double> ParseSamples(const std::string& text) {
  std::map<std::string, double> samples;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t name_end = line.find_first_of("{ ");
    if (name_end == std::string::npos) continue;
    std::string name = line.substr(0, name_end);
    std::map<std::string, std::string> labels;
    size_t pos = name_end;
    if (line[pos] == '{') {
      ++pos;
      while (pos < line.size() && line[pos] != '}') {
        size_t eq = line.find('=', pos);
        std::string key = line.substr(pos, eq - pos);
        std::string value;
        pos = eq + 2;  // skip ="
        while (pos < line.size() && line[pos] != '"') {
          if (line[pos] == '\\' && pos + 1 < line.size()) {
            char next = line[++pos];
            value.push_back(next == 'n' ? '\n' : next);
          } else {
            value.push_back(line[pos]);
          }
          ++pos;
        }
        ++pos;  // closing quote
        if (pos < line.size() && line[pos] == ',') ++pos;
        labels[key] = value;
      }
      ++pos;  // '}'
    }
    std::istringstream rest(line.substr(pos));
    std::string value_text;
    rest >> value_text;
    double value = 0;
    if (value_text == "+Inf") {
      value = HUGE_VAL;
    } else if (value_text == "-Inf") {
      value = -HUGE_VAL;
    } else if (value_text == "NaN") {
      value = NAN;
    } else if (!absl::SimpleAtod(value_text, &value)) {
      continue;
    }
    std::string key = name;
    if (!labels.empty()) {
      key += "{";
      bool first = true;
      for (const auto& [label, label_value] : labels) {
        if (!first) key += ",";
        first = false;
        key += label + "=\"" + label_value + "\"";
      }
      key += "}";
    }
    samples[key] = value;
  }
  return samples;
}

std::optional<double> Sample(const std::string& text, const std::string& name,
                             const std::map<std::string, std::string>& labels) {
  std::string key = name;
  if (!labels.empty()) {
    key += "{";
    bool first = true;
    for (const auto& [label, value] : labels) {
      if (!first) key += ",";
      first = false;
      key += label + "=\"" + value + "\"";
    }
    key += "}";
  }
  std::map<std::string, double> samples = ParseSamples(text);
  auto it = samples.find(key);
  if (it == samples.end()) return std::nullopt;
  return it->second;
}

std::string UrlEncode(const std::string& value) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin_port);
  close(fd);
  return port;
}

CommandResult RunCommand(const std::string& command, const std::string& input) {
  std::string dir = MakeTempDir("cairn-cmd");
  std::string in_path = dir + "/stdin";
  std::string out_path = dir + "/output";
  {
    std::ofstream in(in_path);
    in << input;
  }
  std::string full =
      absl::StrCat("(", command, ") <", in_path, " >", out_path, " 2>&1");
  int status = std::system(full.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(out_path);
  std::stringstream buffer;
  buffer << out.rdbuf();
  result.output = buffer.str();
  RemoveTree(dir);
  return result;
}

std::string FindExecutable(const std::string& name) {
  std::string path = getenv("PATH") ? getenv("PATH") : "";
  path += ":/usr/bin:/usr/local/bin";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string SourceDir() {
  if (const char* dir = getenv("CAIRN_SOURCE_DIR"); dir && *dir) return dir;
  return CAIRN_SOURCE_DIR_DEFAULT;
}

std::string MakeTempDir(const std::string& prefix) {
  std::string base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  std::string pattern = base + "/" + prefix + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) return "";
  // 0755, not mkdtemp's 0700: a root cairnd's jobs (run as nobody) must
  // reach the jobs root of a data dir inside it, or cairnd refuses to start.
  chmod(buffer.data(), 0755);
  return buffer.data();
}

void RemoveTree(const std::string& path) {
  std::error_code ignored;
  if (!path.empty()) std::filesystem::remove_all(path, ignored);
}

}  // namespace cairn::monitoring::testing
