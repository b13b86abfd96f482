// Puts per-rank Chrome traces on one timeline (`regiontrace merge`).
//
// - Each rank's processes get new pids that no other rank uses, and a process
//   track named "rank N" ("rank N: <original name>" when the rank's trace has
//   several processes, as Kineto's host + GPU traces do). Thread names and all
//   other metadata events are kept; the original process names are kept as
//   process labels and in the output's "regiontrace_merge" section.
// - Flow and async ids are made unique per rank (a flow never joins ranks).
// - Instant events with global scope become process-scoped, so each marker
//   stays on its rank's track.
// - Timestamps: traces with "baseTimeNanoseconds" (newer Kineto: ts relative
//   to it) are brought to one base; otherwise ts are kept, which is right for
//   ranks on one host or with synchronised clocks. align_starts shifts every
//   rank so its first event starts where the earliest rank's does.
// - Top-level keys that every input has with the same value are kept at the
//   top level; the others are kept per rank under "regiontrace_merge".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace regiontrace::cli {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;               // `.gz` suffix: gzip
  std::vector<std::int64_t> ranks;  // explicit rank per input, or empty
  bool align_starts = false;
};

struct MergedRank {
  std::int64_t rank = 0;
  std::string source;
  // "--ranks", "regiontrace" (the torch_profiler sink's metadata),
  // "distributedInfo" (Kineto's), "file name" or "position"
  std::string rank_from;
  std::size_t events = 0;
  std::vector<std::pair<std::string, std::int64_t>> pids;  // original pid (as JSON) -> new
};

struct MergeSummary {
  std::vector<MergedRank> ranks;  // in rank order
  std::size_t events_written = 0;
};

// Throws std::runtime_error on unreadable input, duplicate ranks, or a
// failed write.
MergeSummary merge_traces(const MergeOptions& options);

// The rank a trace file's name states (`..._rank3...`, `rank-3`, `rank_3`),
// if any: the last such mention in the file name (not the folders).
std::optional<std::int64_t> rank_from_file_name(const std::string& path);

}  // namespace regiontrace::cli
