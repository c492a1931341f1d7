// Virtual boundary slopes: the GP bandit's remedy for boundary
// over-exploration (after Siivola, Vehtari, Vanhatalo, Gonzalez, Andersen,
// "Correcting boundary over-exploration deficiencies in Bayesian
// optimization with virtual derivative sign observations", IEEE MLSP 2018,
// arXiv:1704.00963).
//
// Why the acquisition favours bounds: a stationary GP on a box reverts to
// its prior away from the data, and it does so last at the faces and
// corners, which have data on one side only. Its variance is highest there,
// and where the data show a trend (with the long length scales a smooth
// objective gets, the posterior mean is nearly linear over the box) the mean
// keeps rising up to the face, so the argmax of mean + beta * sd lands on
// the face in every dimension with a trend at once: a corner. In
// hyperparameter tuning the box is drawn conservatively and the optimum is
// rarely on it, and a corner is an extreme configuration (learning rate,
// dropout), often a diverging run.
//
// The remedy: when the acquisition's argmax lies on faces of the box, the
// models are conditioned on a virtual observation of the slope at the
// argmax's projection onto each such face, saying that the objective falls
// towards the face (by about one prior standard deviation of the slope,
// give or take as much), and the acquisition is maximized again, up to a
// few rounds. The observation is soft: data that rise right up to the face
// (a bowl centred outside the box) outweigh it, and the search still goes
// there; a trend extrapolated from the interior does not. Where the
// acquisition never reaches a face nothing changes.
#ifndef CAIRN_TUNER_GP_BOUNDARY_SLOPES_H_
#define CAIRN_TUNER_GP_BOUNDARY_SLOPES_H_

#include <vector>

#include "Eigen/Core"
#include "tuner/gp/gaussian_process.h"
#include "tuner/gp/mixed_space.h"

namespace cairn::gp {

// A face of the unit cube: dimension `dim` at 0 (upper = false) or 1.
struct Face {
  int dim = 0;
  bool upper = false;
};

// The faces `x` lies on, within `margin` (unit-cube units), among the
// dimensions where a face is an extreme value: continuous ones and grids of
// more than kMinBoundaryGrid values (a grid of a few integers, such as a
// number of layers, has ordinary choices at its ends).
inline constexpr int kMinBoundaryGrid = 10;
std::vector<Face> BoundaryFaces(const MixedSpace& space,
                                const Eigen::VectorXd& x, double margin);

// The virtual observations for a model with hyperparameters `h` (outputs
// maximized): at x projected onto each face, the derivative along the face's
// dimension is +sd (lower face) or -sd (upper face), sd the slope's prior
// standard deviation (derivative_kernel.h), with noise variance sd^2.
SlopeObservations BoundarySlopes(const GpHyperparameters& h,
                                 const Eigen::VectorXd& x,
                                 const std::vector<Face>& faces);

}  // namespace cairn::gp

#endif  // CAIRN_TUNER_GP_BOUNDARY_SLOPES_H_
