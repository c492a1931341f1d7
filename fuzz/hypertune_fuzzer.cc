// Feeds arbitrary bytes to ParseHypertune, the reader of the cloudml-hypertune
// metric file a training job writes. Checks that it returns (no crash, no
// sanitizer report) and that every entry it returns has metrics.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "jobs/hypertune.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<cairn::jobs::HypertuneEntry> entries =
      cairn::jobs::ParseHypertune(text);
  for (const cairn::jobs::HypertuneEntry& e : entries) {
    if (e.metrics.empty()) abort();
  }
  return 0;
}
