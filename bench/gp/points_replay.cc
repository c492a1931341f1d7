// gp_engine_bench's "points" mode (see the header).
#include "bench/gp/points_replay.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tuner/gp/gaussian_process.h"
#include "tuner/gp/output_warping.h"

namespace cairn::gp_bench {
namespace {

// The next non-comment line's tokens; false at the end of the file.
bool NextLine(std::ifstream& in, std::istringstream& line) {
  std::string s;
  while (std::getline(in, s)) {
    if (s.empty() || s[0] == '#') continue;
    line.clear();
    line.str(s);
    return true;
  }
  return false;
}

struct Points {
  std::vector<gp::Dimension> dims;
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

bool ReadPoints(const std::string& path, Points* p) {
  std::ifstream in(path);
  std::istringstream line;
  std::string word;
  int d = 0, n = 0;
  if (!in || !NextLine(in, line) || !(line >> word >> d) || word != "dims" ||
      d < 1 || d > 1000) {
    std::fprintf(stderr, "%s: expected 'dims D' first\n", path.c_str());
    return false;
  }
  p->dims.resize(d);
  for (int i = 0; i < d; ++i) {
    int k = 0;
    if (!NextLine(in, line) || !(line >> word >> k) || word != "grid" ||
        k < 0) {
      std::fprintf(stderr, "%s: dimension %d: expected 'grid K ...'\n",
                   path.c_str(), i);
      return false;
    }
    p->dims[i].grid.resize(k);
    for (double& g : p->dims[i].grid) line >> g;
  }
  if (absl::Status s = gp::MixedSpace::Validate(p->dims); !s.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), s.ToString().c_str());
    return false;
  }
  if (!NextLine(in, line) || !(line >> word >> n) || word != "rows" || n < 1) {
    std::fprintf(stderr, "%s: expected 'rows N'\n", path.c_str());
    return false;
  }
  p->x.resize(n, d);
  p->y.resize(n);
  for (int r = 0; r < n; ++r) {
    if (!NextLine(in, line)) {
      std::fprintf(stderr, "%s: only %d of %d rows\n", path.c_str(), r, n);
      return false;
    }
    for (int i = 0; i < d; ++i) line >> p->x(r, i);
    line >> p->y[r];
    if (!line) {
      std::fprintf(stderr, "%s: row %d: expected %d numbers\n", path.c_str(), r,
                   d + 1);
      return false;
    }
  }
  return true;
}

// Coordinates of x within 2% of a bound.
int NearBounds(const Eigen::VectorXd& x) {
  int near = 0;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    near += x[i] <= 0.02 || x[i] >= 0.98;
  }
  return near;
}

// One Suggest on the first n rows and its diagnosis.
void DiagnoseSuggestion(const Points& p, int n, int seed,
                        const gp::GpBanditOptions& options) {
  gp::GpBandit bandit(gp::MixedSpace(p.dims), options);
  gp::BanditData data;
  data.x = p.x.topRows(n);
  data.y = p.y.head(n);
  data.infeasible.assign(n, false);
  data.num_trials = n;
  auto sug = bandit.Suggest(data, 1, seed);
  if (!sug.ok() || sug->empty()) {
    std::printf("n %d: no suggestion\n", n);
    return;
  }
  const Eigen::VectorXd& s = (*sug)[0];
  Eigen::Index best;
  data.y.col(0).maxCoeff(&best);
  double nearest = INFINITY;
  for (int r = 0; r < n; ++r) {
    nearest = std::min(nearest,
                       (data.x.row(r) - s.transpose()).cwiseAbs().maxCoeff());
  }
  std::printf("n %3d %-16s near-bound %d nearest %.3f", n,
              bandit.last_kinds()[0].c_str(), NearBounds(s), nearest);
  if (!bandit.last_hyperparameters().empty()) {
    const gp::GpHyperparameters& h = bandit.last_hyperparameters()[0];
    const Eigen::VectorXd yw =
        gp::WarpObjective(data.y.col(0), data.infeasible, h.output_power_warp);
    auto gp = gp::GaussianProcess::Create(gp::CategoricalMask(p.dims.size()),
                                          data.x, yw, h);
    if (gp.ok()) {
      Eigen::MatrixXd q(2, s.size());
      q.row(0) = s.transpose();
      q.row(1) = data.x.row(best);
      Eigen::VectorXd mu, var;
      gp->Predict(q, &mu, &var);
      std::printf(" | sug mu %.2f sd %.2f | inc mu %.2f sd %.2f y %.2f", mu[0],
                  std::sqrt(var[0]), mu[1], std::sqrt(var[1]), yw[best]);
    }
    std::printf(" | ls");
    for (double l : h.log_length_scales) std::printf(" %.2f", std::exp(l));
    std::printf(" sig %.2f noise %.3g%s", std::exp(h.log_signal_variance),
                std::exp(h.log_noise_variance),
                h.output_power_warp ? " warped" : "");
  }
  std::printf(" | x");
  for (double v : s) std::printf(" %.2f", v);
  std::printf("\n");
}

}  // namespace

bool ReplayPoints(const std::string& path, int first, int step, int seed,
                  const gp::GpBanditOptions& options) {
  Points p;
  if (!ReadPoints(path, &p)) return false;
  const int rows = static_cast<int>(p.x.rows());
  for (int n = std::max(1, first); n <= rows; n += std::max(1, step)) {
    DiagnoseSuggestion(p, n, seed, options);
  }
  return true;
}

}  // namespace cairn::gp_bench
