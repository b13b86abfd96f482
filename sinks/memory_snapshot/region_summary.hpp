// What the run looked like per region path, built on the writer thread from
// the records: calls, time, the largest growth (exit minus entry) and the
// highest peak per device with the step they happened in, and the held-bytes
// series that leak detection reads. At shutdown it becomes
// memory_summary_rank<r>_pid<p>.json and a table in the log.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "leak_detector.hpp"
#include "memory_records.hpp"
#include "region_paths.hpp"

namespace regiontrace::json {
class Writer;
}  // namespace regiontrace::json

namespace regiontrace::memory {

struct SnapshotNote {
  std::string file;
  std::string trigger;
  std::string reason;
  std::int64_t step = kNoStep;
};

// Figures the summary reports that the writer thread does not see itself.
struct RunTotals {
  int rank = 0;
  long pid = 0;
  int world_size = 1;
  TrackingStats tracking;
  std::int64_t dropped_records = 0;
  std::int64_t snapshots_skipped = 0;
  ResidentMemory resident;  // /proc/self/status at shutdown
  std::uint32_t devices = 0;
  std::int64_t allocated[kMaxDevices] = {};
  bool paths_overflowed = false;
  std::string stood_aside_why;  // who held libtorch's slot, when the sink stood aside
};

class RegionSummary {
 public:
  void add(const RegionRecord& r);
  void add_snapshot(SnapshotNote note) { snapshots_.push_back(std::move(note)); }
  std::int64_t records() const { return records_; }

  struct Suspect {
    int path = 0;
    LeakVerdict verdict;
  };
  std::vector<Suspect> leak_suspects(const LeakCriteria& criteria) const;

  std::string to_json(const RegionPaths& paths, const RunTotals& totals,
                      const LeakCriteria& criteria, bool tracked) const;
  // A fixed-width table for the log, largest peak first. A path measured
  // only while the sink stood aside shows why instead of figures.
  std::string to_table(const RegionPaths& paths, const LeakCriteria& criteria,
                       const std::string& stood_aside_why) const;

 private:
  struct Extreme {
    bool set = false;
    std::int64_t bytes = 0;
    std::int64_t step = kNoStep;
  };
  struct PathStats {
    std::int64_t calls = 0;
    std::int64_t total_ns = 0;
    std::int64_t unwound = 0;
    std::int64_t stood_aside = 0;  // calls whose figures miss what a profiler took
    std::int64_t unmeasured = 0;   // calls a profiler took from entry to exit
    std::int64_t held_bytes = 0;   // at the last exit
    std::uint32_t devices = 0;
    Extreme growth[kMaxDevices];      // exit minus entry: what a call left allocated
    Extreme added_peak[kMaxDevices];  // peak minus entry: what a call added at its height
    Extreme peak[kMaxDevices];        // the level at the peak, everything allocated before too
    HeldSeries held;
  };
  // to_json's members: the snapshots written, one object per region path
  // that ran, the leak suspects with their per-step series.
  void append_snapshots(json::Writer& w, std::int64_t skipped) const;
  void append_regions(json::Writer& w, const RegionPaths& paths, const RunTotals& totals) const;
  void append_suspects(json::Writer& w, const RegionPaths& paths,
                       const LeakCriteria& criteria) const;

  std::vector<PathStats> paths_;
  std::vector<SnapshotNote> snapshots_;
  std::int64_t records_ = 0;
  std::int64_t stood_aside_ = 0;
};

// "1.5 MiB", "-512 B": for the log table.
std::string human_bytes(std::int64_t bytes);

}  // namespace regiontrace::memory
