// Virtual boundary slopes (see the header).
#include "tuner/gp/boundary_slopes.h"

#include "tuner/gp/derivative_kernel.h"

namespace cairn::gp {

std::vector<Face> BoundaryFaces(const MixedSpace& space,
                                const Eigen::VectorXd& x, double margin) {
  std::vector<Face> faces;
  for (int d = 0; d < space.size(); ++d) {
    const Dimension& dim = space.dim(d);
    if (space.IsCategorical(d) || !space.IsActive(x, d)) continue;
    if (!dim.grid.empty() &&
        static_cast<int>(dim.grid.size()) <= kMinBoundaryGrid) {
      continue;
    }
    if (x[d] <= margin) faces.push_back({d, false});
    if (x[d] >= 1.0 - margin) faces.push_back({d, true});
  }
  return faces;
}

SlopeObservations BoundarySlopes(const GpHyperparameters& h,
                                 const Eigen::VectorXd& x,
                                 const std::vector<Face>& faces) {
  SlopeObservations slopes;
  for (const Face& face : faces) {
    SlopePoint p{x, face.dim};
    p.x[face.dim] = face.upper ? 1.0 : 0.0;
    const double sd = SlopePriorSd(h, face.dim);
    slopes.points.push_back(std::move(p));
    slopes.values.push_back(face.upper ? -sd : sd);
    slopes.noise_variances.push_back(sd * sd);
  }
  return slopes;
}

}  // namespace cairn::gp
