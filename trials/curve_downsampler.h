// Downsamples a learning curve whose length is known in advance, keeping its
// shape: the first and last point, and the extremes of equal runs between.
#ifndef CAIRN_TRIALS_CURVE_DOWNSAMPLER_H_
#define CAIRN_TRIALS_CURVE_DOWNSAMPLER_H_

#include <cstdint>
#include <vector>

#include "cairn/v1/study.pb.h"

namespace cairn {

// Fed the `num_points` points of a curve in order (each a Measurement with
// one metric), returns at most `max_points` of them in order: the first, the
// last, and of each of (max_points - 2) / 2 runs of consecutive points
// between them (equal lengths, to within one) the one with the smallest and
// the one with the largest value (the earliest on ties; one point if both
// are the same). With num_points <= max_points every point is kept. Memory is
// O(max_points), whatever num_points. Not thread-safe.
// REQUIRES: max_points >= 2; num_points >= 0; exactly num_points Add calls.
class CurveDownsampler {
 public:
  CurveDownsampler(int64_t num_points, int max_points);

  void Add(cairn::v1::Measurement point);
  // The kept points, in curve order. Call once, after the last Add.
  std::vector<cairn::v1::Measurement> Finish();

 private:
  struct Bucket {
    int64_t min_index = -1;
    int64_t max_index = -1;
    cairn::v1::Measurement min;
    cairn::v1::Measurement max;
  };

  static double Value(const cairn::v1::Measurement& m);
  void AddToBucket(int64_t index, cairn::v1::Measurement point);

  const int64_t num_points_;
  const bool keep_all_;
  int64_t next_index_ = 0;
  std::vector<cairn::v1::Measurement> kept_;  // keep_all_, or first and last.
  std::vector<Bucket> buckets_;
};

}  // namespace cairn

#endif  // CAIRN_TRIALS_CURVE_DOWNSAMPLER_H_
