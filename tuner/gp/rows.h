// Row helpers of the GP bandit: choosing, gathering, finding and appending
// rows of Eigen matrices (points are rows).
#ifndef CAIRN_TUNER_GP_ROWS_H_
#define CAIRN_TUNER_GP_ROWS_H_

#include <cstdint>
#include <vector>

#include "Eigen/Core"

namespace cairn::gp {

// At most `cap` row indices (ascending): the best `best_fraction` by score,
// the rest a seeded random sample of the others.
std::vector<int> SelectRows(const Eigen::VectorXd& score, int cap,
                            double best_fraction, uint64_t seed);

// The rows `rows` of m, in that order.
Eigen::MatrixXd Rows(const Eigen::MatrixXd& m, const std::vector<int>& rows);

// Whether `set` has a row within 1e-12 (max norm) of `row` (a row vector).
template <typename Row>
bool ContainsRow(const Eigen::MatrixXd& set, const Row& row) {
  for (Eigen::Index i = 0; i < set.rows(); ++i) {
    if ((set.row(i) - row).cwiseAbs().maxCoeff() <= 1e-12) return true;
  }
  return false;
}

// Appends x as a new last row of m (m.cols() becomes x.size()).
void AppendRow(Eigen::MatrixXd& m, const Eigen::VectorXd& x);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_ROWS_H_
