// Resource names: formatting, parsing, and the errors naming field and value.
#include "api/resource_names.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cairn {
namespace {

using ::testing::HasSubstr;

TEST(ResourceNamesTest, FormatsAndParsesBack) {
  EXPECT_EQ(api::StudyName(7), "studies/7");
  EXPECT_EQ(api::TrialResourceName(7, 12), "studies/7/trials/12");
  EXPECT_EQ(*api::ParseStudyName("studies/7", "name"), 7);
  absl::StatusOr<api::TrialName> t =
      api::ParseTrialName("studies/7/trials/12", "name");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->study_id, 7);
  EXPECT_EQ(t->trial_id, 12);
}

TEST(ResourceNamesTest, RejectsMalformedStudyNames) {
  for (const char* bad :
       {"", "studies/", "studies/0", "studies/-3", "studies/x", "studies/7/",
        "study/7", "studies/+7", "studies/99999999999999999999",
        "studies/7/trials/1"}) {
    absl::StatusOr<int64_t> id = api::ParseStudyName(bad, "parent");
    ASSERT_FALSE(id.ok()) << bad;
    EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(id.status().message(), HasSubstr("parent: \""));
    EXPECT_THAT(id.status().message(), HasSubstr(bad));
  }
}

TEST(ResourceNamesTest, RejectsMalformedTrialNames) {
  for (const char* bad :
       {"studies/7", "studies/7/trials/", "studies/7/trials/0",
        "studies/x/trials/1", "studies/7/trial/1", "studies/7/trials/1/x"}) {
    absl::StatusOr<api::TrialName> t = api::ParseTrialName(bad, "name");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_THAT(t.status().message(), HasSubstr("is not a trial name"));
  }
}

TEST(ResourceNamesTest, EchoesAtMost64CharactersOfAName) {
  const std::string huge = "studies/" + std::string(1 << 20, '7') + "x";
  absl::StatusOr<api::TrialName> t = api::ParseTrialName(huge, "name");
  ASSERT_FALSE(t.ok());
  EXPECT_LT(t.status().message().size(), 200u);
  EXPECT_THAT(t.status().message(), HasSubstr("(1048585 bytes)"));
}

}  // namespace
}  // namespace cairn
