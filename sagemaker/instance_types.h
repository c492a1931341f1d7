// SageMaker instance types as local resource limits: what a training job's
// ResourceConfig.InstanceType gives each of its containers (CPUs, memory,
// GPUs), from AWS's published sizes. docs/sagemaker.md shows the table.
#ifndef CAIRN_SAGEMAKER_INSTANCE_TYPES_H_
#define CAIRN_SAGEMAKER_INSTANCE_TYPES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cairn::sagemaker {

struct InstanceType {
  const char* name;  // "ml.m5.xlarge"
  int cpus;
  int memory_gib;
  int gpus;
};

// Every type Cairn maps, in table order.
const std::vector<InstanceType>& InstanceTypes();

// The limits of `name`; InvalidArgument naming ResourceConfig.InstanceType,
// the value and a few known types for one that is not in the table.
absl::StatusOr<InstanceType> LookUpInstanceType(absl::string_view name);

}  // namespace cairn::sagemaker

#endif  // CAIRN_SAGEMAKER_INSTANCE_TYPES_H_
