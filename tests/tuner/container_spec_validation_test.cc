// job_template.container on its own (tuner::ValidateStudySpec): every bad
// field gets InvalidArgument naming it and its value.
#include <string>

#include "cairn/v1/study.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testing/test_util.h"
#include "tuner/spec_validation.h"

namespace cairn::tuner {
namespace {

using cairn::v1::StudySpec;
using ::testing::HasSubstr;

// A valid space with the container template `text` (text format).
StudySpec WithContainer(const std::string& text) {
  StudySpec spec = testing::MixedSpaceSpec();
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      text, spec.mutable_job_template()->mutable_container()));
  return spec;
}

void ExpectInvalid(const StudySpec& spec, const std::string& field,
                   const std::string& value) {
  const absl::Status s = ValidateStudySpec(spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(field));
  EXPECT_THAT(std::string(s.message()), HasSubstr(value));
  EXPECT_LT(s.message().size(), 1024u);
}

TEST(ContainerSpecValidationTest, ImageWithoutCommandPasses) {
  StudySpec spec = WithContainer(
      R"pb(image: "localhost/trainer:1"
           command: "python3"
           args: "-m"
           mounts { host_path: "/data" container_path: "/in" read_only: true }
           cpus: 2
           memory_bytes: 1073741824
           pids_limit: 512)pb");
  EXPECT_TRUE(ValidateStudySpec(spec).ok()) << ValidateStudySpec(spec);
}

TEST(ContainerSpecValidationTest, CommandBesideAnImageIsRefused) {
  StudySpec spec = WithContainer(R"pb(image: "localhost/t:1")pb");
  spec.mutable_job_template()->add_command("train");
  ExpectInvalid(spec, "job_template.command", "container.command");
}

TEST(ContainerSpecValidationTest, ImagesThatReadAsFlagsAreRefused) {
  ExpectInvalid(WithContainer(R"pb(image: "--privileged")pb"),
                "job_template.container.image", "--privileged");
  ExpectInvalid(WithContainer(R"pb(image: "a b")pb"),
                "job_template.container.image", "a b");
  ExpectInvalid(WithContainer(R"pb(cpus: 1)pb"), "job_template.container.image",
                "empty");
  ExpectInvalid(WithContainer("image: '" + std::string(300, 'a') + "'"),
                "job_template.container.image", "255");
}

TEST(ContainerSpecValidationTest, MountPathsAreAbsoluteWithoutCommas) {
  ExpectInvalid(WithContainer(R"pb(image: "t"
                                   mounts {
                                     host_path: "data"
                                     container_path: "/in"
                                   })pb"),
                "job_template.container.mounts.host_path", "data");
  ExpectInvalid(WithContainer(R"pb(image: "t"
                                   mounts {
                                     host_path: "/data"
                                     container_path: "/in,ro=false"
                                   })pb"),
                "job_template.container.mounts.container_path", "/in,ro=false");
}

TEST(ContainerSpecValidationTest, LimitsAreNotNegative) {
  ExpectInvalid(WithContainer(R"pb(image: "t" cpus: -1)pb"),
                "job_template.container.cpus", "-1");
  ExpectInvalid(WithContainer(R"pb(image: "t" memory_bytes: -5)pb"),
                "job_template.container.memory_bytes", "-5");
  ExpectInvalid(WithContainer(R"pb(image: "t" pids_limit: -2)pb"),
                "job_template.container.pids_limit", "-2");
}

}  // namespace
}  // namespace cairn::tuner
