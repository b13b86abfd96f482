// `summary --by-step` splits a span that crosses a step boundary: its time in
// step N is its overlap with step N's span (`ProfilerStep#N`), and it counts
// as one call in each step it overlaps. Rather than a second set of nesting
// and self-time rules, every span of the threads with region spans is cut at
// its process's step boundaries and the pieces are nested again by the same
// rule (trace_spans.hpp): a child's piece then lies in its parent's piece, so
// self time per step follows the usual rule.
#pragma once

#include <optional>
#include <vector>

#include "trace_spans.hpp"

namespace regiontrace::cli {

// Per thread of `trace` (empty for threads without region spans): on a
// process with step spans, a span that overlaps some becomes one piece per
// step span it overlaps, clipped to it, with its step set to that step;
// other spans stay whole. Self times are those of the pieces. nullopt when
// the trace has no step spans, or every region span lies within the step
// span of its args.step (if any): step_of's own rule then gives the same
// steps.
std::optional<std::vector<std::vector<Span>>> cut_spans_at_steps(const TraceSpans& trace);

}  // namespace regiontrace::cli
