// Per-path totals of finished threads: what is left of a thread's
// statistics once it ended and is no longer reported on its own. Counts,
// times, histograms and Prometheus buckets add up exactly; per-step rows
// keep the max_steps highest steps, as a live thread's do.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "thread_stats.hpp"

namespace regiontrace::region_stats {

// The thread_id of a folded record: no host thread number is this high.
inline constexpr std::uint64_t kFoldedThreads = ~std::uint64_t{0};

class FoldedPaths {
 public:
  explicit FoldedPaths(std::size_t max_steps) : max_steps_(max_steps) {}

  // One finished thread's records.
  void fold(const std::vector<PathRecord>& thread);
  // One record per path, thread_id kFoldedThreads.
  void append_to(std::vector<PathRecord>& out) const;
  std::uint64_t threads() const { return threads_; }

 private:
  std::size_t max_steps_;
  std::map<std::string, PathRecord> by_path_;
  std::uint64_t threads_ = 0;
};

}  // namespace regiontrace::region_stats
