// Puts per-rank Chrome traces on one timeline (`regiontrace merge`), streaming:
// each input is read one event at a time (TraceEventStream) and copied to the
// output with a few members rewritten, so memory stays bounded whatever the
// inputs' size.
//
// - Ranks: each rank's processes get new pids that no other rank uses, named
//   "rank R (pid P)". Traces of the same rank written by different sinks
//   (torch_profiler, timeline, memory_snapshot) share the rank's process;
//   the second and later ones get their threads on tracks of their own (tid
//   + 1e8 per place, thread name suffixed " (<sink>)"; up to 9 per rank), so their spans never
//   overlap another sink's spans on one track. Thread names and other metadata are kept.
// - Flow and async ids are made unique per input (a flow never joins traces).
// - Instant events with global scope become process-scoped.
// - Time: when every input carries "regiontrace":{"clockSync":...} (or has
//   wall-clock ts), ranks are placed on the wall clock (CLOCK_REALTIME, which
//   hosts keep in step to a few ms); otherwise inputs with
//   "baseTimeNanoseconds" are brought to one base and the rest are kept. One
//   shift per input: slices on a track keep their nesting.
// - Alignment on top of that, per rank: align_on_mark shifts every rank so
//   the Nth occurrence of a mark lines up with the lowest rank's; align_starts
//   lines up the ranks' first events.
// - Top-level keys that every input has with the same value are kept at the
//   top level; the others are kept per input under "regiontrace_merge".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_identity.hpp"

namespace regiontrace::cli {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;               // `.gz` suffix: gzip
  std::vector<std::int64_t> ranks;  // explicit rank per input, or empty
  bool align_starts = false;
  std::string align_on_mark;  // mark name, or empty
  int align_occurrence = 1;   // 1-based
};

struct MergedInput {
  std::string source;
  std::string kind;  // the sink that wrote it, or "" when unknown
  std::size_t events = 0;
  double ts_offset_us = 0;  // added to every ts of this input
};

struct MergedRank {
  std::int64_t rank = 0;
  // "--ranks", "regiontrace" (regiontrace's metadata), "distributedInfo"
  // (Kineto's), "otherData", "file name" or "position"
  std::string rank_from;
  std::vector<MergedInput> inputs;
  std::vector<std::pair<std::string, std::int64_t>> pids;  // original pid (as JSON) -> new
  double align_shift_us = 0;                               // what --align-on / --align-starts added
};

struct MergeSummary {
  std::vector<MergedRank> ranks;  // in rank order
  std::size_t events_written = 0;
  std::string clock;  // "realtime" (wall clock) or "per-trace base"
};

// Throws std::runtime_error on unreadable input, duplicate ranks, a missing
// alignment mark, or a failed write; the message names the file.
MergeSummary merge_traces(const MergeOptions& options);

}  // namespace regiontrace::cli
