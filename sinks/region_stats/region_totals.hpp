// Plain aggregates of one region path: what readers copy out of the live
// per-thread state and merge across threads (and into per-step rows).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace regiontrace::region_stats {

struct RegionTotals {
  std::uint64_t count = 0;
  std::int64_t total_ns = 0;
  std::int64_t self_ns = 0;
  std::int64_t min_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ns = 0;

  void add(std::int64_t duration_ns, std::int64_t self) {
    ++count;
    total_ns += duration_ns;
    self_ns += self;
    min_ns = std::min(min_ns, duration_ns);
    max_ns = std::max(max_ns, duration_ns);
  }
  void merge(const RegionTotals& o) {
    count += o.count;
    total_ns += o.total_ns;
    self_ns += o.self_ns;
    min_ns = std::min(min_ns, o.min_ns);
    max_ns = std::max(max_ns, o.max_ns);
  }
  std::int64_t min_or_zero() const { return count == 0 ? 0 : min_ns; }
  std::int64_t mean_ns() const {
    return count == 0 ? 0 : total_ns / static_cast<std::int64_t>(count);
  }
};

}  // namespace regiontrace::region_stats
