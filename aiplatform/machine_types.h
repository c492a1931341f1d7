// What a Compute Engine machine type gives a replica's container: AI
// Platform's masterType/workerType/... as --cpus and --memory
// (docs/containers.md has the table).
#ifndef CAIRN_AIPLATFORM_MACHINE_TYPES_H_
#define CAIRN_AIPLATFORM_MACHINE_TYPES_H_

#include <cstdint>
#include <string>

namespace cairn::aiplatform {

// 0 means unlimited.
struct MachineLimits {
  double cpus = 0;
  int64_t memory_bytes = 0;
};

// n1-standard-N: N vCPUs and 3.75 GB each; n1-highmem-N: 6.5 GB each;
// n1-highcpu-N: 0.9 GB each (GB as Compute Engine counts them: 2^30 bytes).
// Legacy tiers (standard, large_model, complex_model_m, ...) and any other
// name: unlimited.
MachineLimits MachineTypeLimits(const std::string& machine_type);

}  // namespace cairn::aiplatform

#endif  // CAIRN_AIPLATFORM_MACHINE_TYPES_H_
