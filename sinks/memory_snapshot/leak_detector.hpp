// Growth detection: for each region path, the bytes it still holds at its
// last exit in every step; at shutdown, the paths whose held bytes keep
// growing across steps are leak suspects.
//
// A path is a suspect when it ran in at least `min_steps` steps, it holds at
// least `min_bytes` more at the end of its last step than at the end of its
// first, its held bytes rose in at least half of the step-to-step changes,
// and it still grew over the second half of the run (a warm-up that levels
// off, like optimizer state created in the first steps, is not a leak).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace regiontrace::memory {

struct HeldPoint {
  std::int64_t step = 0;
  std::int64_t held_bytes = 0;
};

// Per path, one point per step (the last exit in that step wins). Bounded:
// past `max_points`, every other older point is dropped, so a long run keeps
// its shape at a coarser grain.
class HeldSeries {
 public:
  explicit HeldSeries(std::size_t max_points = 2048) : max_points_(max_points) {}
  void add(std::int64_t step, std::int64_t held_bytes);
  const std::vector<HeldPoint>& points() const { return points_; }

 private:
  std::size_t max_points_;
  std::vector<HeldPoint> points_;
};

struct LeakCriteria {
  std::int64_t min_steps = 3;
  std::int64_t min_bytes = 1 << 20;
};

struct LeakVerdict {
  bool suspect = false;
  std::int64_t growth_bytes = 0;  // last point minus first
};

LeakVerdict evaluate_leak(const std::vector<HeldPoint>& points, const LeakCriteria& criteria);

}  // namespace regiontrace::memory
