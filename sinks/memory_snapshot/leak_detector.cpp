#include "leak_detector.hpp"

namespace regiontrace::memory {

void HeldSeries::add(std::int64_t step, std::int64_t held_bytes) {
  if (!points_.empty() && points_.back().step == step) {
    points_.back().held_bytes = held_bytes;
    return;
  }
  points_.push_back({step, held_bytes});
  if (points_.size() > max_points_) {
    // Keep the first and the newest; thin out the rest.
    std::vector<HeldPoint> kept;
    kept.reserve(points_.size() / 2 + 2);
    for (std::size_t i = 0; i + 1 < points_.size(); i += 2) kept.push_back(points_[i]);
    kept.push_back(points_.back());
    points_.swap(kept);
  }
}

LeakVerdict evaluate_leak(const std::vector<HeldPoint>& points, const LeakCriteria& criteria) {
  LeakVerdict v;
  if (points.empty()) return v;
  v.growth_bytes = points.back().held_bytes - points.front().held_bytes;
  if (static_cast<std::int64_t>(points.size()) < criteria.min_steps) return v;
  if (v.growth_bytes < criteria.min_bytes) return v;
  std::size_t rises = 0;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (points[i].held_bytes > points[i - 1].held_bytes) ++rises;
  }
  const std::size_t changes = points.size() - 1;
  if (2 * rises < changes) return v;
  const HeldPoint& middle = points[points.size() / 2];
  if (points.back().held_bytes <= middle.held_bytes) return v;
  v.suspect = true;
  return v;
}

}  // namespace regiontrace::memory
