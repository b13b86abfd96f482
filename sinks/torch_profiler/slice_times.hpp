// Where the trace shows every slice of a window, and the self times that
// follow: one computation for the trace writer and the op summary, so the
// trace, its .summary.* and `regiontrace summary` of the written file agree.
//
// Per track (a thread, or a device stream), region spans and ops are nested
// by the rule of regiontrace/sdk/span_nesting.hpp: children clamped into
// their parents (libtorch 1.x's whole-microsecond stamps put a child up to
// 1 us past its parent's end, an op up to 1 us before its region). Then a
// slice left with no duration gets one nanosecond (inside its parent, 1 ns
// after the empty siblings stamped at the same time):
// viewers that turn each slice into a begin and an end event (speedscope)
// sort an empty slice's end before its begin when another slice begins at
// the same time, and then leave its parent open to the end of the trace.
// No two slices of a track share a boundary where one of them ends: a child
// that ends with its parent, or a slice that ends where its next sibling
// begins, is written to end 1 ns earlier. Viewers subtract the track's first
// ts and add ts and dur in doubles, so two sums that should be equal can
// differ by an ulp, and a child then ends after its parent (speedscope: the
// parent stays open to the end). The rule is applied once more to the
// result, which is what a reader of the written file computes, and that is
// what is written.
#pragma once

#include <cstdint>
#include <vector>

#include "trace_model.hpp"

namespace regiontrace::torch_profiler {

struct SliceTimes {
  // By RegionSpan index.
  std::vector<std::int64_t> span_start, span_end;
  // By OpRecord index; [memory] instants keep their stamp (start == end,
  // self 0).
  std::vector<std::int64_t> op_start, op_end, op_self;
};

SliceTimes slice_times(const TraceData& data);

}  // namespace regiontrace::torch_profiler
