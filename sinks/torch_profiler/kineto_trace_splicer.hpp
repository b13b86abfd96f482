// Puts the sink's own events into a trace libtorch wrote itself
// (ProfilerResult::save(), Kineto builds): the file is streamed into `out`
// with the events inserted at the start of its `traceEvents` array, so a
// multi-GB trace is never parsed or held in memory.
#pragma once

#include <cstdint>
#include <string>

#include "output_file.hpp"

namespace regiontrace::torch_profiler {

// The trace's `baseTimeNanoseconds` (its `ts` are microseconds after it), or 0
// when the trace has none (older Kineto: `ts` are microseconds since the epoch).
std::int64_t read_base_time_ns(const std::string& path);

// `events`: comma-separated JSON objects (may be empty). Returns false, having
// written nothing, when `in_path` has no `"traceEvents": [` in it.
bool splice_trace_events(const std::string& in_path, const std::string& events, OutputFile& out);

}  // namespace regiontrace::torch_profiler
