// Feeds a CSV file (plain or gzip) to cairn-train's ReadCsv: the first byte
// picks the --label value, the rest is written to a file in a per-process
// temp dir (ReadCsv only reads paths). Checks that it returns (no crash, no
// sanitizer report) and that accepted data is consistent: features hold
// rows x features cells, one label per row when there is a label column.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trainer/data.h"

namespace {

const std::string& TempPath() {
  static const std::string* path = [] {
    char dir[] = "/tmp/cairn_fuzz_csv.XXXXXX";
    if (mkdtemp(dir) == nullptr) abort();
    return new std::string(std::string(dir) + "/data.csv");
  }();
  return *path;
}

void WriteFile(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) abort();
  if (size > 0 && fwrite(data, 1, size, f) != size) abort();
  fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kLabels[] = {"", "0", "-1", "label", "1", "99"};
  const std::string label = kLabels[data[0] % 6];
  WriteFile(TempPath(), data + 1, size - 1);
  absl::StatusOr<cairn::trainer::CsvData> csv = cairn::trainer::ReadCsv(
      TempPath(), cairn::trainer::LabelFlagResolver(label));
  if (!csv.ok()) return 0;
  if (csv->features.size() != csv->rows * csv->feature_names.size()) abort();
  if (csv->label_column >= 0 && csv->labels.size() != csv->rows) abort();
  cairn::trainer::SortedClasses(csv->labels);
  return 0;
}
