// SageMaker tags as study labels: ARNs, SageMaker's limits, the labels
// they become, ListTags' view and the 50-tag room.
#include "sagemaker/tags.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace cairn::sagemaker {
namespace {

using cairn::v1::SageMakerTag;
using nlohmann::json;

constexpr char kPrefix[] = "arn:aws:sagemaker:local:000000000000:";

TEST(TagsTest, ResourceArnNamesATrainingOrTuningJob) {
  auto training = ParseResourceArn(std::string(kPrefix) + "training-job/xgb-1");
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_FALSE(training->tuning_job);
  EXPECT_EQ(training->name, "xgb-1");
  auto tuning = ParseResourceArn(std::string(kPrefix) +
                                 "hyper-parameter-tuning-job/tune-1");
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  EXPECT_TRUE(tuning->tuning_job);
  EXPECT_EQ(tuning->name, "tune-1");
  for (std::string bad :
       {std::string("arn:aws:s3:::bucket"), std::string(kPrefix) + "model/m",
        std::string(kPrefix) + "training-job/bad_name",
        std::string(kPrefix) + "hyper-parameter-tuning-job/" +
            std::string(33, 'a')}) {
    auto parsed = ParseResourceArn(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << bad;
    EXPECT_NE(parsed.status().message().find("ResourceArn"), std::string::npos);
  }
}

TEST(TagsTest, ParseTagsKeepsSageMakersLimits) {
  auto tags = ParseTags("Tags", json::parse(R"([{"Key": "team", "Value":
      "ml"}, {"Key": "a b_.:/=+-@", "Value": ""}, {"Key": "é"}])"));
  ASSERT_TRUE(tags.ok()) << tags.status();
  ASSERT_EQ(tags->size(), 3u);
  EXPECT_EQ((*tags)[2].value(), "");
  struct Case {
    std::string tags;
    std::string words;
  } cases[] = {
      {R"([{"Key": "aws:x", "Value": "1"}])", "Tags.Key 'aws:x'"},
      {R"([{"Key": "", "Value": "1"}])", "Tags.Key ''"},
      {R"([{"Key": "k", "Value": "no!"}])", "Tags.Value 'no!'"},
      {R"([{"Key": "k"}, {"Key": "k"}])", "given twice"},
      {R"([{"Key": 1}])", "each tag"},
      {R"([])", "1 or more"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseTags("Tags", json::parse(c.tags));
    ASSERT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument)
        << c.tags;
    EXPECT_NE(parsed.status().message().find(c.words), std::string::npos)
        << parsed.status().message();
  }
  json many = json::array();
  for (int i = 0; i < 51; ++i) many.push_back({{"Key", std::to_string(i)}});
  EXPECT_EQ(ParseTags("Tags", many).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseTags("Tags", json::array({{{"Key", std::string(129, 'k')}}}))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TagsTest, TagsAreLabelsApartFromCairnsOwn) {
  std::vector<SageMakerTag> tags(2);
  tags[0].set_key("team");
  tags[0].set_value("ml");
  tags[1].set_key("sagemaker");
  tags[1].set_value("mine");
  cairn::v1::Study study;
  auto& labels = *study.mutable_spec()->mutable_labels();
  labels["sagemaker"] = "training-job";
  for (const auto& [k, v] : TagLabels(tags)) labels[k] = v;
  EXPECT_EQ(labels.at("sagemaker"), "training-job");
  EXPECT_EQ(labels.at("aws-tag:sagemaker"), "mine");
  EXPECT_EQ(TagsJson(study), json::parse(R"([{"Key": "sagemaker", "Value":
      "mine"}, {"Key": "team", "Value": "ml"}])"));
}

TEST(TagsTest, AtMostFiftyTagsPerResource) {
  cairn::v1::Study study;
  std::vector<SageMakerTag> tags(49);
  for (int i = 0; i < 49; ++i) tags[i].set_key("k" + std::to_string(i));
  for (const auto& [k, v] : TagLabels(tags)) {
    (*study.mutable_spec()->mutable_labels())[k] = v;
  }
  std::vector<SageMakerTag> more(2);
  more[0].set_key("k0");  // replaces one: still 49 + 1
  more[1].set_key("new");
  EXPECT_TRUE(CheckTagRoom(study, more).ok());
  more[0].set_key("other");
  EXPECT_EQ(CheckTagRoom(study, more).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(TagsTest, ATuningJobsTrainingJobInheritsAndOwns) {
  cairn::v1::Study study;
  study.set_display_name("tune");
  std::vector<SageMakerTag> tuning(1), own(2);
  tuning[0].set_key("team");
  tuning[0].set_value("ml");
  own[0].set_key("team");
  own[0].set_value("mine");  // its own wins
  own[1].set_key("run");
  auto& labels = *study.mutable_spec()->mutable_labels();
  for (const auto& [k, v] : TagLabels(tuning)) labels[k] = v;
  for (const auto& [k, v] : TagLabels(own, 7)) labels[k] = v;
  EXPECT_EQ(labels.at("aws-trial-tag:7:run"), "");
  EXPECT_EQ(TagsJson(study, 7), json::parse(R"([{"Key": "run", "Value": ""},
      {"Key": "team", "Value": "mine"}])"));
  EXPECT_EQ(TagsJson(study, 8), json::parse(R"([{"Key": "team",
      "Value": "ml"}])"));
  EXPECT_EQ(TagsJson(study), TagsJson(study, 8));  // the tuning job's own
  EXPECT_TRUE(CheckOwnTag(study, "run", 7).ok());
  EXPECT_TRUE(CheckOwnTag(study, "team", 7).ok());  // its own copy
  const absl::Status inherited = CheckOwnTag(study, "team", 8);
  EXPECT_EQ(inherited.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(inherited.message().find("TagKeys 'team'"), std::string::npos);
  EXPECT_TRUE(CheckOwnTag(study, "team", 0).ok());  // the tuning job's
}

}  // namespace
}  // namespace cairn::sagemaker
