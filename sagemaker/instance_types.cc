// See instance_types.h. Sizes: AWS's instance-type pages (vCPUs, GiB of
// memory, GPUs) for the types SageMaker trains on.
#include "sagemaker/instance_types.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace cairn::sagemaker {

const std::vector<InstanceType>& InstanceTypes() {
  static const auto* const kTypes = new std::vector<InstanceType>{
      {"ml.m5.large", 2, 8, 0},         {"ml.m5.xlarge", 4, 16, 0},
      {"ml.m5.2xlarge", 8, 32, 0},      {"ml.m5.4xlarge", 16, 64, 0},
      {"ml.c5.xlarge", 4, 8, 0},        {"ml.c5.2xlarge", 8, 16, 0},
      {"ml.c5.4xlarge", 16, 32, 0},     {"ml.g4dn.xlarge", 4, 16, 1},
      {"ml.g4dn.2xlarge", 8, 32, 1},    {"ml.g5.xlarge", 4, 16, 1},
      {"ml.g5.2xlarge", 8, 32, 1},      {"ml.g5.12xlarge", 48, 192, 4},
      {"ml.p3.2xlarge", 8, 61, 1},      {"ml.p3.8xlarge", 32, 244, 4},
      {"ml.p4d.24xlarge", 96, 1152, 8},
  };
  return *kTypes;
}

absl::StatusOr<InstanceType> LookUpInstanceType(absl::string_view name) {
  for (const InstanceType& type : InstanceTypes()) {
    if (name == type.name) return type;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "ResourceConfig.InstanceType '", absl::CHexEscape(name.substr(0, 64)),
      "' is not a type Cairn maps (e.g. ml.m5.xlarge, ml.g5.xlarge, "
      "ml.p3.2xlarge; see docs/sagemaker.md)"));
}

}  // namespace cairn::sagemaker
