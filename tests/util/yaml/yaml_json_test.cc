// YAML configs as JSON (util/yaml/yaml_json.h): typed or string
// scalars, keys checked, and aliases bounded (unbounded, a "billion
// laughs" of a few hundred bytes sent to POST /v1/projects/p/jobs would
// exhaust cairnd's memory).
#include "util/yaml/yaml_json.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;

TEST(YamlToJsonTest, PlainScalarsBecomeTypedQuotedStayStrings) {
  auto j = util::yaml::YamlToJson(R"(
int: 42
neg: -7
plus: +3
float: 1.5
exp: 1e-3
dot: .5
big: 12345678901234567890
t: true
f: False
n: null
tilde: ~
empty:
quoted_int: "42"
single_quoted_bool: 'true'
str: adam
inf: .inf
ninf: -.inf
nan: .nan
version: 1.2.3
list: [1, two, "3"]
nested: {a: [{b: 2.0}]}
)");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_TRUE((*j)["int"].is_number_integer());
  EXPECT_EQ((*j)["int"].get<int64_t>(), 42);
  EXPECT_EQ((*j)["neg"].get<int64_t>(), -7);
  EXPECT_EQ((*j)["plus"].get<int64_t>(), 3);
  EXPECT_TRUE((*j)["float"].is_number_float());
  EXPECT_DOUBLE_EQ((*j)["float"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ((*j)["exp"].get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ((*j)["dot"].get<double>(), 0.5);
  EXPECT_TRUE((*j)["big"].is_number_unsigned());
  EXPECT_EQ((*j)["t"], true);
  EXPECT_EQ((*j)["f"], false);
  EXPECT_TRUE((*j)["n"].is_null());
  EXPECT_TRUE((*j)["tilde"].is_null());
  EXPECT_TRUE((*j)["empty"].is_null());
  EXPECT_EQ((*j)["quoted_int"], "42");
  EXPECT_EQ((*j)["single_quoted_bool"], "true");
  EXPECT_EQ((*j)["str"], "adam");
  EXPECT_EQ((*j)["inf"], "Infinity");
  EXPECT_EQ((*j)["ninf"], "-Infinity");
  EXPECT_EQ((*j)["nan"], "NaN");
  EXPECT_EQ((*j)["version"], "1.2.3");
  EXPECT_EQ((*j)["list"].dump(), R"([1,"two","3"])");
  EXPECT_EQ((*j)["nested"].dump(), R"({"a":[{"b":2.0}]})");
}

TEST(YamlToJsonTest, DuplicateKeyNamesKeyAndPath) {
  auto j = util::yaml::YamlToJson("parameters:\n  - a: 1\n    a: 2\n");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(j.status().message(), HasSubstr("\"a\""));
  EXPECT_THAT(j.status().message(), HasSubstr("parameters[0]"));
}

TEST(YamlToJsonTest, StringScalarsAndDroppedNulls) {
  util::yaml::YamlJsonOptions options;
  options.scalars_as_strings = true;
  options.drop_null_values = true;
  auto j = util::yaml::YamlToJson("a: 1\nb: true\nc:\nd: [1, ~]\n", options);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->dump(), R"({"a":"1","b":"true","d":["1",null]})");
}

TEST(YamlToJsonTest, SyntaxErrorsNameLineAndColumn) {
  auto j = util::yaml::YamlToJson("a: [1, 2\nb: 3\n");
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.status().message(), HasSubstr("YAML syntax error at line"));
}

// Ten times ten times ... aliases: 10^8 values from a few hundred bytes.
std::string AliasBomb(const std::string& leaf) {
  std::string text = absl::StrCat("a: &a [", leaf, ",", leaf, ",", leaf, ",",
                                  leaf, ",", leaf, ",", leaf, ",", leaf, ",",
                                  leaf, ",", leaf, ",", leaf, "]\n");
  const std::string names = "abcdefgh";
  for (size_t i = 1; i < names.size(); ++i) {
    const std::string prev(1, names[i - 1]);
    absl::StrAppend(&text, std::string(1, names[i]), ": &",
                    std::string(1, names[i]), " [");
    for (int k = 0; k < 10; ++k)
      absl::StrAppend(&text, k ? "," : "", "*", prev);
    text += "]\n";
  }
  return text;
}

TEST(YamlToJsonTest, AliasesThatExpandPastTheBoundsAreRefused) {
  const std::string bomb = AliasBomb("x");
  ASSERT_LT(bomb.size(), 600u);
  EXPECT_EQ(util::yaml::kMaxYamlJsonNodes,
            2000000);  // cairnd's bound: rest_body_test.
  for (bool strings : {false, true}) {
    util::yaml::YamlJsonOptions options;
    options.scalars_as_strings = strings;
    options.max_values = 20000;  // The same path as 2,000,000, quicker.
    auto j = util::yaml::YamlToJson(bomb, options);
    ASSERT_FALSE(j.ok());
    EXPECT_EQ(j.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(j.status().message(),
                HasSubstr("the YAML expands to more than 20000 values"));
  }
  // Few values, each a long string repeated: bounded by bytes instead.
  std::string bytes_bomb =
      absl::StrCat("a: &a \"", std::string(1 << 16, 'q'), "\"\nb: [");
  for (int k = 0; k < 100; ++k)
    absl::StrAppend(&bytes_bomb, k ? "," : "", "*a");
  bytes_bomb += "]\n";
  util::yaml::YamlJsonOptions small;
  small.max_scalar_bytes = 1 << 20;
  auto j = util::yaml::YamlToJson(bytes_bomb, small);
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.status().message(),
              HasSubstr("the YAML expands to more than 1048576 bytes"));
  EXPECT_TRUE(
      util::yaml::YamlToJson(bytes_bomb).ok());  // 6.6 MB: within the default.
  // An alias used a few times stays fine.
  auto fine = util::yaml::YamlToJson("a: &a [1, 2]\nb: *a\nc: *a\n");
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(fine->dump(), R"({"a":[1,2],"b":[1,2],"c":[1,2]})");
}

TEST(YamlToJsonTest, ErrorsStayShortForHugeKeys) {
  const std::string key(100000, 'k');
  // Explicit keys ("? KEY"): YAML limits implicit ones to 1024 characters.
  auto j = util::yaml::YamlToJson(
      absl::StrCat("? ", key, "\n: 1\n? ", key, "\n: 2\n"));
  ASSERT_FALSE(j.ok());
  EXPECT_THAT(j.status().message(), HasSubstr("duplicate key"));
  EXPECT_LT(j.status().message().size(), 1024u);
}

}  // namespace
}  // namespace cairn
