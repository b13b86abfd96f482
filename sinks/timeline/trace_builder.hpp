// Formats what the threads recorded as one Chrome/Perfetto trace, at
// close(): region spans (`ph:"X"`) per thread, marks (`ph:"i"`), step spans
// on each process's "steps" track, thread and process names, and the
// top-level members every regiontrace trace carries.
//
// Region records arrive in the order their regions ended. Read backwards,
// every region comes before the regions it encloses, so a stack by depth
// gives each span its path without any per-region state recorded on the
// application thread. A region whose enclosing region was not recorded
// (not selected, or dropped) gets the path of the enclosing ones that were.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "regiontrace/sdk/background_gzip_writer.hpp"
#include "regiontrace/sdk/clock_sync.hpp"
#include "regiontrace/sdk/sink_context.hpp"
#include "timeline_records.hpp"

namespace regiontrace::timeline {

class SpillFile;

struct StepMark {
  std::int64_t time_ns = 0;
  std::int64_t step = 0;
  long os_tid = 0;
};

struct OpenSpan {
  int depth = 0;
  std::uint32_t region = 0;
  std::int64_t begin_ns = 0;
  std::int64_t step = 0;
};

// Records of one thread, in the order they were written: spill-file pieces
// first, then memory (the chunk it was still filling).
struct ThreadRecords {
  long os_tid = 0;
  std::string name;
  struct Piece {
    std::uint64_t spill_offset = 0;
    const unsigned char* memory = nullptr;  // when not in the spill file
    std::size_t bytes = 0;
    PieceExtent extent;  // lets a cut leave the piece out unread
  };
  std::vector<Piece> pieces;
  std::vector<OpenSpan> open;  // closed at end_ns with args.open_at_end
};

struct TraceTotals {
  std::uint64_t regions = 0;
  std::uint64_t marks = 0;
  std::uint64_t steps = 0;
  std::uint64_t open_at_end = 0;
  std::uint64_t cut = 0;  // records after the cut (TraceInput::cut), not written
};

struct TraceInput {
  const SinkContext* context = nullptr;
  std::string span_prefix;
  std::vector<std::string> region_names;  // by RegionId
  std::int64_t base_ns = 0;               // ts 0
  std::int64_t end_ns = 0;                // when open spans and the last step end
  // The disk could not hold the whole run: only what happened up to end_ns
  // is written; a span still running then ends there, open_at_end.
  bool cut = false;
  sdk::clock_sync::Pair start_pair;
  sdk::clock_sync::Pair end_pair;
  // The `"timeline":{...}` member's object, written after the events so
  // that it can count what the cut left out.
  std::function<std::string(const TraceTotals&)> statistics;
  const SpillFile* spill = nullptr;
  std::vector<ThreadRecords> threads;
  std::vector<StepMark> steps;
};

// Writes the whole trace into `out` (not committed), counting in `totals`
// as it goes: after a failed write they say how far it got.
void write_trace(const TraceInput& in, sdk::BackgroundGzipWriter& out, TraceTotals& totals);

}  // namespace regiontrace::timeline
