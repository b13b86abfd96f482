// Writes a TraceData as a Chrome trace ("JSON object format"), the format
// Perfetto UI and chrome://tracing open: `traceEvents` with `ph: X` spans for
// ops and regions, `ph: i` instants for collection markers and allocations,
// `ph: M` process and thread names, `ProfilerStep#<n>` spans on a steps
// track. Like Kineto's traces, `ts` is in microseconds relative to the
// top-level `baseTimeNanoseconds`, here CLOCK_MONOTONIC like every trace
// regiontrace writes, with the "regiontrace" member's clockSync pairs to put
// it on the wall clock. Slices are written clamped into their parents (the
// rule of span_nesting.hpp), so each track nests as viewers require.
#pragma once

#include <cstdint>
#include <string>

#include "trace_file.hpp"
#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

struct TraceLimits {
  std::int64_t max_events = 0;  // 0: no limit; counts every event but the ph:M names
  std::uint64_t max_bytes = 0;  // 0: no limit; the uncompressed size of the whole file
};

struct TraceWriteStats {
  std::int64_t events_written = 0;
  std::int64_t events_cut = 0;  // the latest events, left out by a limit
  std::int64_t cut_at_ns = 0;   // start of the first event left out (epoch ns)
  std::string cut_reason;       // "max_events" or "max_trace_mb", empty when nothing was cut
  std::uint64_t bytes = 0;
};

// Writes everything in time order until a limit is reached; what does not fit
// is counted in the result and in the trace's own `regiontrace.cut` record.
TraceWriteStats write_chrome_trace(const TraceData& data, const TraceLimits& limits,
                                   TraceFile& out);

}  // namespace regiontrace::torch_profiler
