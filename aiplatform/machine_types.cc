// Compute Engine machine types as container limits. See machine_types.h.
#include "aiplatform/machine_types.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace cairn::aiplatform {
namespace {

struct Family {
  const char* prefix;
  double gib_per_cpu;
};

constexpr Family kFamilies[] = {
    {"n1-standard-", 3.75}, {"n1-highmem-", 6.5}, {"n1-highcpu-", 0.9}};

}  // namespace

MachineLimits MachineTypeLimits(const std::string& machine_type) {
  for (const Family& f : kFamilies) {
    int cpus = 0;
    if (!absl::StartsWith(machine_type, f.prefix) ||
        !absl::SimpleAtoi(machine_type.substr(std::string(f.prefix).size()),
                          &cpus) ||
        cpus <= 0 || cpus > 416) {
      continue;
    }
    return {static_cast<double>(cpus),
            static_cast<int64_t>(std::llround(cpus * f.gib_per_cpu *
                                              static_cast<double>(1 << 30)))};
  }
  return {};
}

}  // namespace cairn::aiplatform
