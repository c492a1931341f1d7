// Row helpers of the GP bandit.
#include "tuner/gp/rows.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "tuner/gp/mixed_space.h"

namespace cairn::gp {

std::vector<int> SelectRows(const Eigen::VectorXd& score, int cap,
                            double best_fraction, uint64_t seed) {
  const int n = static_cast<int>(score.size());
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  if (n <= cap) return all;
  std::stable_sort(all.begin(), all.end(),
                   [&](int a, int b) { return score[a] > score[b]; });
  const int num_best = static_cast<int>(best_fraction * cap);
  std::vector<int> chosen(all.begin(), all.begin() + num_best);
  std::vector<int> rest(all.begin() + num_best, all.end());
  Rng rng(seed);
  for (int i = 0; i < cap - num_best; ++i) {  // Partial Fisher-Yates.
    const int j = i + rng.UniformInt(static_cast<int>(rest.size()) - i);
    std::swap(rest[i], rest[j]);
    chosen.push_back(rest[i]);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

Eigen::MatrixXd Rows(const Eigen::MatrixXd& m, const std::vector<int>& rows) {
  Eigen::MatrixXd out(rows.size(), m.cols());
  for (size_t i = 0; i < rows.size(); ++i) out.row(i) = m.row(rows[i]);
  return out;
}

void AppendRow(Eigen::MatrixXd& m, const Eigen::VectorXd& x) {
  m.conservativeResize(m.rows() + 1, x.size());
  m.row(m.rows() - 1) = x.transpose();
}

}  // namespace cairn::gp
