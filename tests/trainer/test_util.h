// Helpers shared by the cairn-train tests: small synthetic datasets and
// file text (temporary directories are cairn::testing::TempDir).
#ifndef CAIRN_TESTS_TRAINER_TEST_UTIL_H_
#define CAIRN_TESTS_TRAINER_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace cairn::trainer::testing {

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Three Gaussian blobs in `features` dimensions, label (0..2) last, with an
// optional header "x0,...,label".
inline std::string BlobsCsv(int rows, int features, uint32_t seed,
                            bool header) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.7f);
  std::ostringstream out;
  if (header) {
    for (int j = 0; j < features; ++j) out << "x" << j << ",";
    out << "label\n";
  }
  for (int i = 0; i < rows; ++i) {
    const int c = i % 3;
    for (int j = 0; j < features; ++j) {
      const float center = (j % 3 == c) ? 2.0f : -1.0f;
      out << center + noise(rng) << ",";
    }
    out << c << "\n";
  }
  return out.str();
}

}  // namespace cairn::trainer::testing

#endif  // CAIRN_TESTS_TRAINER_TEST_UTIL_H_
