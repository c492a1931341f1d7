// The acquisition step of GpBandit::Suggest: given GPs fitted on the model
// rows, chooses a batch by GP-UCB-PE (UCB for the first member, posterior
// variance inside the promising region for the others), with hypervolume
// scalarizations for several objectives, an optional feasibility model, a
// trust region, and penalties for near-duplicates and forbidden points.
#ifndef CAIRN_TUNER_GP_GP_BANDIT_ACQUISITION_H_
#define CAIRN_TUNER_GP_GP_BANDIT_ACQUISITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "tuner/gp/gaussian_process.h"
#include "tuner/gp/gp_bandit.h"
#include "tuner/gp/mixed_space.h"

namespace cairn::gp {

// The observations the models see: warped objectives of at most
// `max_points` rows (half the best by mean warped value, half a seeded
// sample of the others).
struct ModelRows {
  std::vector<int> rows;  // Indices into the data, ascending.
  Eigen::MatrixXd x;      // The selected points.
  Eigen::MatrixXd y;      // Their warped objectives.
};

// GP-UCB-PE on the fitted objective `models` (one per column of model.y):
// chooses up to `count` points of `space`, each treated as pending for the
// next, and appends how each was chosen ("ucb", "restart",
// "pure_exploration") to
// `kinds`. `first` holds the first objective's hyperparameters (the
// feasibility model starts from them). Fewer than `count` points only when
// the space is exhausted. Deterministic for a seed.
std::vector<Eigen::VectorXd> ChooseBatch(
    const GpBanditOptions& options, const MixedSpace& space,
    const CategoricalMask& categorical, const BanditData& data,
    const ModelRows& model, std::vector<GaussianProcess> models,
    const GpHyperparameters& first, int count, uint64_t seed,
    std::vector<std::string>* kinds);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_GP_BANDIT_ACQUISITION_H_
