#include "step_cut.hpp"

#include <map>
#include <string>

#include "step_overlap.hpp"

namespace regiontrace::cli {
namespace {

using StepsByPid = std::map<std::string, StepIntervals>;

bool has_region_span(const std::vector<Span>& spans) {
  for (const Span& s : spans) {
    if (s.region) return true;
  }
  return false;
}

// Whether a region span is not where step_of's own rule puts it: it crosses
// a step boundary, or lies in a step span other than its args.step's.
bool misplaced(const Span& s, StepIntervals& steps) {
  // B/E pairs are rare in these traces: cut rather than place them here.
  if (s.paired) return true;
  const std::int64_t end = s.ts_ns + s.dur_ns;
  std::size_t inside = 0;
  const std::size_t overlaps =
      steps.for_each_overlap(s.ts_ns, end, [&](std::int64_t step, std::int64_t a, std::int64_t b) {
        if (a == s.ts_ns && b == end && (s.step == kNoStep || s.step == step)) ++inside;
      });
  return overlaps > 1 || (overlaps == 1 && inside == 0);
}

bool any_misplaced(const TraceSpans& trace, StepsByPid& steps) {
  for (std::size_t t = 0; t < trace.threads.size(); ++t) {
    auto found = steps.find(trace.thread_pid[t]);
    if (found == steps.end()) continue;
    for (const Span& s : trace.threads[t]) {
      if (s.region && misplaced(s, found->second)) return true;
    }
  }
  return false;
}

std::vector<Span> cut_thread(const std::vector<Span>& spans, StepIntervals* steps) {
  std::vector<Span> out;
  out.reserve(spans.size());
  for (const Span& s : spans) {
    const std::size_t pieces =
        steps == nullptr
            ? 0
            : steps->for_each_overlap(s.ts_ns, s.ts_ns + s.dur_ns,
                                      [&](std::int64_t step, std::int64_t a, std::int64_t b) {
                                        Span piece = s;
                                        piece.ts_ns = a;
                                        piece.dur_ns = b - a;
                                        piece.step = step;
                                        out.push_back(piece);
                                      });
    if (pieces == 0) out.push_back(s);
  }
  nest_spans(out);
  return out;
}

}  // namespace

std::optional<std::vector<std::vector<Span>>> cut_spans_at_steps(const TraceSpans& trace) {
  StepsByPid steps;
  for (const auto& [pid, list] : trace.step_spans) {
    for (const StepSpan& st : list) steps[pid].add(st.ts_ns, st.end_ns, st.step);
  }
  if (steps.empty() || !any_misplaced(trace, steps)) return std::nullopt;
  std::vector<std::vector<Span>> out(trace.threads.size());
  for (std::size_t t = 0; t < trace.threads.size(); ++t) {
    if (!has_region_span(trace.threads[t])) continue;
    auto found = steps.find(trace.thread_pid[t]);
    out[t] = cut_thread(trace.threads[t], found == steps.end() ? nullptr : &found->second);
  }
  return out;
}

}  // namespace regiontrace::cli
