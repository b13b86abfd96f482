// The trace folder as FastVideo's profiler leaves it (layout: fastvideo):
// the trace named as torch.profiler.tensorboard_trace_handler(dir,
// use_gzip=True) names it, "<host>_<pid>.<ns>.pt.trace.json.gz", and beside
// it summary_rank<r>.txt and summary_rank<r>.json, the JSON being what
// FastVideo dumps from key_averages(group_by_input_shape=True): a list of
// {name, shapes, self_device_us, device_us, count}. FastVideo's own tests
// read the folder that way.
#pragma once

#include <string>

#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

// "<dir>/<host>_<pid>.<ns>" with the wall clock's ns now, plus `attempt`
// (the caller's retry when that name is taken).
std::string fastvideo_trace_base(const std::string& dir, long pid, int attempt);

// "<dir>/summary_rank<r>": FastVideo's stem for both summaries.
std::string fastvideo_summary_stem(const std::string& dir, int rank);

// Whether `file_name` is a trace this process wrote in this layout
// ("<host>_<pid>.<digits>.pt.trace.json[.gz]"): keep_last counts only
// those, since the names carry no rank to tell this rank's earlier runs by.
bool is_own_fastvideo_trace(const std::string& file_name, long pid);

// One row per op name and input shapes ("[]" without record_shapes), and
// per region span name, in order of first appearance: calls, and device
// time in microseconds, its own (the kernels it launched) and in all
// (its callees' too). Spans and ops nest by time on their thread.
std::string fastvideo_summary_json(const TraceData& data);

}  // namespace regiontrace::torch_profiler
