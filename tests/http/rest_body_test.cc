// Request bodies on the REST port of a real cairnd, sent by curl as users
// send them: `curl -d @file` labels JSON application/x-www-form-urlencoded,
// which the HTTP library alone refuses past 8 KB with a 413 claiming the
// body is over the 4 MB limit, and it reads a chunked body without any
// bound. Any content type and transfer encoding is read up to 4 MB; past
// it 413, and multipart bodies 415. A YAML body that aliases expand
// past the bounds of util/yaml/yaml_json.h is refused.
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;

class RestBodyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<testing::CairndProcess>(
        dir_.path() + "/data",
        std::vector<std::string>{"--metrics-listen", "", "--http-listen",
                                 "127.0.0.1:0"});
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error << server_->Log();
    std::smatch m;
    const std::string log = server_->Log();
    ASSERT_TRUE(std::regex_search(
        log, m, std::regex("REST API on http://[^ ]+ \\(port ([0-9]+)\\)")))
        << log;
    base_ = absl::StrCat("http://127.0.0.1:", m[1].str(), "/v1/");
  }

  // curl POST of the file `body` to `path` with `extra` arguments: the
  // response body, then the HTTP status on its own last line.
  testing::CommandResult Post(const std::string& path, const std::string& body,
                              std::vector<std::string> extra = {}) {
    const std::string file = dir_.path() + "/body";
    std::ofstream(file, std::ios::binary) << body;
    std::vector<std::string> argv = {
        "curl",       "-sS",
        "--max-time", "30",
        "-w",         "\n%{http_code}",
        "-H",         "Authorization: Bearer " + server_->token()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--data-binary", "@" + file, base_ + path});
    return testing::RunCommand(argv);
  }

  static std::string Study(const std::string& name, size_t padding) {
    return absl::StrCat(R"({"study": {"displayName": ")", name,
                        R"(", "spec": {)", std::string(padding, ' '),
                        R"("parameters": [{"parameterId": "x", "type": "DOUBLE",
        "minValue": 0, "maxValue": 1}],
        "metrics": [{"metricId": "y", "goal": "MINIMIZE"}]}}})");
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::CairndProcess> server_;
  std::string base_;
};

TEST_F(RestBodyTest, FormLabelledJsonOver8KBIsRead) {
  const testing::CommandResult r = Post("studies", Study("big-form", 100000));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"displayName\":\"big-form\""));
  EXPECT_THAT(r.out, ::testing::EndsWith("\n200"));
  const testing::CommandResult json =
      Post("studies", Study("big-json", 100000),
           {"-H", "Content-Type: application/json"});
  EXPECT_THAT(json.out, ::testing::EndsWith("\n200"));
}

TEST_F(RestBodyTest, OverFourMegabytesIs413AndMultipart415) {
  const testing::CommandResult big = Post("studies", Study("too-big", 5 << 20));
  EXPECT_THAT(big.out, HasSubstr("request body larger than 4194304 bytes"));
  EXPECT_THAT(big.out, ::testing::EndsWith("\n413"));
  // Chunked (no Content-Length): the library alone read it all, unbounded.
  const testing::CommandResult chunked =
      Post("studies", Study("too-big-chunked", 5 << 20),
           {"-H", "Transfer-Encoding: chunked"});
  EXPECT_THAT(chunked.out, HasSubstr("request body larger than 4194304 bytes"));
  EXPECT_THAT(chunked.out, ::testing::EndsWith("\n413"));
  const testing::CommandResult small_chunked = Post(
      "studies", Study("chunked", 1000), {"-H", "Transfer-Encoding: chunked"});
  EXPECT_THAT(small_chunked.out, ::testing::EndsWith("\n200"));

  const std::string file = dir_.path() + "/part";
  std::ofstream(file) << Study("multipart", 0);
  const testing::CommandResult multipart = testing::RunCommand(
      {"curl", "-sS", "--max-time", "30", "-w", "\n%{http_code}", "-H",
       "Authorization: Bearer " + server_->token(), "-F", "study=@" + file,
       base_ + "studies"});
  EXPECT_THAT(multipart.out, HasSubstr("multipart bodies are not accepted"));
  EXPECT_THAT(multipart.out, ::testing::EndsWith("\n415"));
  // Nothing of either was stored.
  const testing::CommandResult list = testing::RunCommand(
      {"curl", "-sS", "--max-time", "30", "-H",
       "Authorization: Bearer " + server_->token(), base_ + "studies"});
  EXPECT_THAT(list.out, ::testing::Not(HasSubstr("too-big")));
  EXPECT_THAT(list.out, HasSubstr("\"chunked\""));
  EXPECT_THAT(list.out, ::testing::Not(HasSubstr("multipart")));
}

// cairnd parses the body of POST /v1/projects/{p}/jobs as YAML (JSON is
// YAML): 400 bytes of aliases standing for 10^8 values made it throw
// bad_alloc and die. Now refused with 400, and cairnd serves on.
TEST_F(RestBodyTest, YamlAliasBombIsRefusedAndCairndServesOn) {
  std::string bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n";
  const std::string names = "abcdefgh";
  for (size_t i = 1; i < names.size(); ++i) {
    absl::StrAppend(&bomb, names.substr(i, 1), ": &", names.substr(i, 1), " [");
    for (int k = 0; k < 10; ++k) {
      absl::StrAppend(&bomb, k ? "," : "", "*", names.substr(i - 1, 1));
    }
    bomb += "]\n";
  }
  bomb += "trainingInput: {args: *h}\n";
  const testing::CommandResult r = Post("projects/p/jobs", bomb);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("the YAML expands to more than 2000000 values"));
  EXPECT_THAT(r.out, ::testing::EndsWith("\n400"));
  const testing::CommandResult after = Post("studies", Study("after", 0));
  EXPECT_THAT(after.out, ::testing::EndsWith("\n200"));
}

}  // namespace
}  // namespace cairn
