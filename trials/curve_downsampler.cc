// Min/max-per-run downsampling of a learning curve (see the header).
#include "trials/curve_downsampler.h"

#include <utility>

namespace cairn {

using cairn::v1::Measurement;

CurveDownsampler::CurveDownsampler(int64_t num_points, int max_points)
    : num_points_(num_points), keep_all_(num_points <= max_points) {
  if (!keep_all_) buckets_.resize((max_points - 2) / 2);
}

double CurveDownsampler::Value(const Measurement& m) {
  return m.metrics(0).value();
}

void CurveDownsampler::Add(Measurement point) {
  const int64_t index = next_index_++;
  if (keep_all_ || index == 0 || index == num_points_ - 1) {
    kept_.push_back(std::move(point));
  } else if (!buckets_.empty()) {
    AddToBucket(index, std::move(point));
  }
}

void CurveDownsampler::AddToBucket(int64_t index, Measurement point) {
  // Points 1 .. num_points_ - 2 spread over the buckets by position.
  const int64_t interior = num_points_ - 2;
  const int64_t b =
      (index - 1) * static_cast<int64_t>(buckets_.size()) / interior;
  Bucket& bucket = buckets_[b];
  const bool is_min = bucket.min_index < 0 || Value(point) < Value(bucket.min);
  const bool is_max = bucket.max_index < 0 || Value(point) > Value(bucket.max);
  if (is_min) {
    bucket.min_index = index;
    bucket.min = point;
  }
  if (is_max) {
    bucket.max_index = index;
    bucket.max = std::move(point);
  }
}

std::vector<Measurement> CurveDownsampler::Finish() {
  if (keep_all_ || kept_.empty()) return std::move(kept_);
  std::vector<Measurement> out;
  out.reserve(2 + 2 * buckets_.size());
  out.push_back(std::move(kept_.front()));
  for (Bucket& b : buckets_) {
    if (b.min_index < 0) continue;  // More buckets than interior points.
    if (b.min_index == b.max_index) {
      out.push_back(std::move(b.min));
    } else if (b.min_index < b.max_index) {
      out.push_back(std::move(b.min));
      out.push_back(std::move(b.max));
    } else {
      out.push_back(std::move(b.max));
      out.push_back(std::move(b.min));
    }
  }
  if (kept_.size() > 1) out.push_back(std::move(kept_.back()));
  return out;
}

}  // namespace cairn
