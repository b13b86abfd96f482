// The torch_profiler sink's keys: declared once here (the schema feeds the
// validator, REGIONTRACE_TORCH_PROFILER_<KEY>, `regiontrace check` and the
// docs) and read into plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profiler_session.hpp"
#include "regiontrace/sdk/config_schema.hpp"
#include "regiontrace/sdk/sink_context.hpp"
#include "step_schedule.hpp"

namespace regiontrace::torch_profiler {

// What the output folder holds beside each trace (docs/profiling.md, Output
// layouts).
enum class Layout {
  kRegiontrace,  // torch_trace_rank<r>_pid<p>[.<step>].pt.trace.json.gz, and in summaries/
                 // their .summary.txt/.json (regiontrace_layout.hpp)
  kFastVideo,    // <host>_<pid>.<ns>.pt.trace.json.gz + summary_rank<r>.txt/.json, as FastVideo
  kTraces,       // the regiontrace-named traces alone, no summaries
};

struct TorchProfilerSettings {
  ProfilerOptions profiler;
  bool shapes_for_flops = false;  // record_shapes was off and with_flops turned it on
  bool gzip = true;
  ScheduleSpec schedule;
  std::vector<long long> steps;  // the common `steps` filter
  // Without a schedule: each stretch of collection (a selected region opening
  // while no thread is in one, to the last one closing) is its own trace.
  bool trace_per_window = false;
  std::int64_t max_events = 0;
  double max_trace_mb = 0;
  std::int64_t keep_last = 0;
  std::string prefix = "regiontrace";
  Layout layout = Layout::kRegiontrace;

  static SinkSchema schema();
  // `notes`: settings that were accepted but mean less than they say.
  static TorchProfilerSettings read(const SinkContext& ctx, std::vector<std::string>* notes);

  // How many op calls a window may record before collection stops for good:
  // max_events, or max_trace_mb divided by an estimate of an event's size.
  // 0: no limit. The written trace enforces both limits exactly.
  std::int64_t op_budget() const;
  std::uint64_t max_trace_bytes() const;
};

}  // namespace regiontrace::torch_profiler
