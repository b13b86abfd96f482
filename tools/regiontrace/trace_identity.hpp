// What a trace's top-level members say about it: which rank and which sink
// wrote it, and where its timestamps sit on the clocks. Read from the members
// TraceEventStream returns (header and trailer), by convention rather than by
// sink name:
//   "regiontrace": {"sink", "rank", "pid", "clockSync": {"start": {...}}}
//     (every regiontrace trace), Kineto's "distributedInfo": {"rank"},
//   "baseTimeNanoseconds": monotonic ns of ts 0 (regiontrace, newer Kineto),
//   "otherData": {"clock": "CLOCK_REALTIME", "producer", "rank"} (the
//     memory_snapshot sink's counter trace, whose ts are wall-clock µs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace regiontrace::cli {

struct TraceIdentity {
  std::optional<std::int64_t> rank;
  std::string rank_from;                // "regiontrace", "distributedInfo", "otherData"
  std::string sink;                     // "torch_profiler", "timeline", "memory_snapshot", or ""
  std::optional<std::int64_t> base_ns;  // baseTimeNanoseconds
  // CLOCK_REALTIME minus CLOCK_MONOTONIC, from the clockSync start pair.
  std::optional<std::int64_t> realtime_minus_monotonic_ns;
  bool ts_is_realtime = false;  // ts are wall-clock µs since the epoch
  std::optional<std::int64_t> pid;
  std::string host;  // "regiontrace": {"host"}, "" when not written
  std::string cpus;  // the CPUs the process could run on: "0-3,8"
  // "regiontrace": {"incomplete": true, "written_until_ns": N}: a flight
  // recorder's file whose process never closed it (killed, or ended by
  // os._exit()); it holds what was recorded until N (CLOCK_MONOTONIC ns).
  bool incomplete = false;
  std::optional<std::int64_t> written_until_ns;

  // Whether a wall-clock time can be given to every ts.
  bool knows_wall_clock() const {
    return ts_is_realtime || (base_ns && realtime_minus_monotonic_ns);
  }
  // Nanoseconds to add to ts (in ns) for wall-clock time, when known_wall_clock().
  std::int64_t wall_offset_ns() const {
    if (ts_is_realtime) return 0;
    return *base_ns + *realtime_minus_monotonic_ns;
  }
};

// Throws std::runtime_error naming `path` and the member when a member that
// must be an object or integer is malformed.
TraceIdentity identify_trace(const std::string& path,
                             const std::vector<std::pair<std::string, std::string>>& members);

// For an incomplete trace: "<path>: incomplete: rank R (pid P) ended
// without closing regiontrace ...: it holds what was recorded until S s
// after its start"; empty for a finished one.
std::string unfinished_note(const std::string& path, const TraceIdentity& id);

// The rank a trace file's name states (`..._rank3...`, `rank-3`, `rank_3`),
// if any: the last such mention in the file name (not the folders).
std::optional<std::int64_t> rank_from_file_name(const std::string& path);

}  // namespace regiontrace::cli
