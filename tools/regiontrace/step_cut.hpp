// `summary --by-step` splits a span that crosses a step boundary: its time in
// step N is its overlap with step N's span (`ProfilerStep#N`), and it counts
// as one call in each step it overlaps. Rather than a second set of nesting
// and self-time rules, the trace is rewritten with every span cut at its
// process's step boundaries and summarised again by the same code
// (trace_summary.hpp): a child's piece then lies in its parent's piece, so
// self time per step follows the usual rule.
#pragma once

#include <optional>
#include <string>

#include "chrome_trace_reader.hpp"

namespace regiontrace::cli {

// A Chrome trace (text) holding the step spans and every CPU span (ph X, and
// B/E pairs as X) of the threads that have region spans, with only what
// summarize_trace reads of them. On a process with step spans, a span that
// overlaps some is written once per step span it overlaps, clipped to it,
// with args.step set to that step; what lies outside every step span is left
// out. Other spans are written whole, args.step kept. nullopt when the trace
// has no step spans, or every region span lies within the step span of its
// args.step (if any): summarize_trace's own rule then gives the same steps.
std::optional<std::string> cut_spans_at_steps(const ChromeTrace& trace);

}  // namespace regiontrace::cli
