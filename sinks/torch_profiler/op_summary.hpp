// What dominates a trace, without opening it: per op name the calls, self
// time (its own time, without the ops it called), total time and FLOPs,
// sorted by self time; per op and input shapes when shapes were recorded;
// per region the count and time. Written as a text table and as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

struct OpStats {
  std::string name;
  std::string input_shapes;  // "[[64, 64], [64, 64]]" in the per-shape table
  std::int64_t calls = 0;
  std::int64_t self_ns = 0;
  std::int64_t total_ns = 0;
  std::uint64_t flops = 0;
};

struct RegionStats {
  std::string name;
  std::int64_t count = 0;
  std::int64_t total_ns = 0;
};

struct OpSummary {
  std::vector<OpStats> by_op;     // by self time, largest first
  std::vector<OpStats> by_shape;  // the same per input shapes; empty without record_shapes
  std::vector<OpStats> device;    // GPU kernels and other device activity, by time
  std::vector<RegionStats> regions;
  std::int64_t op_calls = 0;
  std::int64_t self_ns = 0;  // sum of self times: the CPU time spent in ops
};

OpSummary summarize(const TraceData& data);

// "[[64, 64], []]": an op's input shapes as Python prints torch's
// input_shapes (an empty list for an input that is not a tensor).
std::string input_shapes_text(const OpRecord& op);

// `trace_file`: the trace the summary describes, named in both outputs.
// The text table shows at most `max_rows` rows per table; the JSON has all.
std::string summary_text(const OpSummary& summary, const TraceData& data,
                         const std::string& trace_file, std::size_t max_rows = 60);
std::string summary_json(const OpSummary& summary, const TraceData& data,
                         const std::string& trace_file);

}  // namespace regiontrace::torch_profiler
