// How the spans of one thread nest, and the self time that follows: one rule
// for every reader of a trace, so that the torch_profiler sink's op summary
// and `regiontrace summary` report the same numbers for the same trace.
// Header-only and independent of everything else here: the sink uses it
// through the SDK, the CLI (which reads the SDK's JSON helpers already) too.
//
// The rule, for spans [start, end) in integer nanoseconds on one thread:
// - Order: by start, region spans first among equal starts, then the longer
//   first, then input order (the trace's file order).
//   A region span sorts as if it began kRegionLead earlier: libtorch 1.x
//   stamps op starts in whole microseconds, rounded down, so an op that ran
//   inside a region can appear to start up to 1 us before the region did.
//   (The price: an op that ended less than 1 us before a region began nests
//   in it with no time.)
// - A span that starts before the innermost open span ends is its child;
//   open spans that ended first are closed.
// - A child is clamped into its (clamped) parent: whole-microsecond stamps
//   put a child up to 1 us past its parent's end, and a child cannot outlast
//   the call that made it.
// - Self time: the clamped duration minus the children's clamped durations.
//   The self times of a tree add up to its root's duration.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace regiontrace::nesting {

inline constexpr std::int64_t kRegionLead = 1000;  // ns

struct Span {
  std::int64_t start = 0;
  std::int64_t end = 0;  // >= start
  bool region = false;
};

struct Nested {
  static constexpr std::size_t kNoParent = static_cast<std::size_t>(-1);
  std::vector<std::int64_t> self;   // by input index
  std::vector<std::size_t> parent;  // by input index; kNoParent for roots
  std::vector<std::int64_t> clamped_start;
  std::vector<std::int64_t> clamped_end;
};

// `spans`: one thread's spans, in file order.
inline Nested nest(const std::vector<Span>& spans) {
  const std::size_t n = spans.size();
  Nested out;
  out.self.assign(n, 0);
  out.parent.assign(n, Nested::kNoParent);
  out.clamped_start.resize(n);
  out.clamped_end.resize(n);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto key = [&](std::size_t i) { return spans[i].start - (spans[i].region ? kRegionLead : 0); };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (key(a) != key(b)) return key(a) < key(b);
    if (spans[a].region != spans[b].region) return spans[a].region;
    const std::int64_t da = spans[a].end - spans[a].start;
    const std::int64_t db = spans[b].end - spans[b].start;
    if (da != db) return da > db;
    return a < b;
  });
  std::vector<std::int64_t> children(n, 0);
  std::vector<std::size_t> stack;
  for (const std::size_t i : order) {
    const Span& s = spans[i];
    while (!stack.empty() && out.clamped_end[stack.back()] <= s.start) stack.pop_back();
    std::int64_t begin = s.start;
    std::int64_t end = std::max(s.start, s.end);
    if (!stack.empty()) {
      const std::size_t p = stack.back();
      out.parent[i] = p;
      begin = std::min(std::max(begin, out.clamped_start[p]), out.clamped_end[p]);
      end = std::max(begin, std::min(end, out.clamped_end[p]));
      children[p] += end - begin;
    }
    out.clamped_start[i] = begin;
    out.clamped_end[i] = end;
    stack.push_back(i);
  }
  for (std::size_t i = 0; i < n; ++i) {
    out.self[i] =
        std::max<std::int64_t>(0, out.clamped_end[i] - out.clamped_start[i] - children[i]);
  }
  return out;
}

}  // namespace regiontrace::nesting
