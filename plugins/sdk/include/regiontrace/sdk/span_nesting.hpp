// How the spans of one thread nest, and the self time that follows: one rule
// for every reader of a trace, so that the torch_profiler sink's op summary
// and `regiontrace summary` report the same numbers for the same trace.
// Header-only and independent of everything else here: the sink uses it
// through the SDK, the CLI (which reads the SDK's JSON helpers already) too.
//
// The rule, for spans [start, end) in integer nanoseconds on one thread:
// - Crossings first: an op and a region of one thread cannot overlap in part
//   as the program ran (both are scopes of that thread), but libtorch stamps
//   ops on its own clock (a TSC converter), tens of nanoseconds off
//   regiontrace's: an op that ended just before a region began is stamped
//   ending inside it, one that began just after, beginning before it. An op
//   that crosses one boundary of a region (the region's other boundary
//   outside the op) is cut at that boundary, on the side where less of it
//   lies. The region keeps its own stamps: its duration is never changed by
//   an op. A region wholly inside an op is its child (user code under an
//   autograd node, say).
// - Order: by start, region spans first among equal starts, then the longer
//   first, then input order (the trace's file order).
// - A span that starts before the innermost open span ends is its child;
//   open spans that ended first are closed.
// - A child is clamped into its (clamped) parent: a child cannot outlast
//   the call that made it (two ops, or two regions, stamped on one clock
//   cross only by rounding).
// - Self time: the clamped duration minus the children's clamped durations.
//   The self times of a tree add up to its root's duration.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace regiontrace::nesting {

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

// The crossings rule above: the op spans of `spans` cut where they cross a
// region's boundary. Regions are left as they are.
inline std::vector<Span> without_crossings(std::vector<Span> spans) {
  struct Boundary {
    std::int64_t time;
    std::size_t region;
    bool start;
  };
  std::vector<Boundary> bounds;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!spans[i].region) continue;
    bounds.push_back({spans[i].start, i, true});
    bounds.push_back({std::max(spans[i].start, spans[i].end), i, false});
  }
  if (bounds.empty()) return spans;
  std::sort(bounds.begin(), bounds.end(),
            [](const Boundary& a, const Boundary& b) { return a.time < b.time; });
  auto after = [&](std::int64_t t) {
    return std::upper_bound(bounds.begin(), bounds.end(), t,
                            [](std::int64_t v, const Boundary& b) { return v < b.time; });
  };
  for (Span& op : spans) {
    if (op.region) continue;
    op.end = std::max(op.start, op.end);
    // Each cut moves a boundary out of (start, end): at most one per boundary.
    for (bool cut = true; cut && op.end - op.start > 1;) {
      cut = false;
      const auto first = after(op.start);
      const auto last =
          std::lower_bound(first, bounds.end(), op.end,
                           [](const Boundary& b, std::int64_t v) { return b.time < v; });
      for (auto b = first; b != last; ++b) {
        const Span& r = spans[b->region];
        const std::int64_t other = b->start ? std::max(r.start, r.end) : r.start;
        if (other > op.start && other < op.end) continue;  // the region is inside the op
        const std::int64_t before = b->time - op.start;
        const std::int64_t beyond = op.end - b->time;
        // At a region's start the op ran before it or inside it; at its end,
        // inside it or after it: the larger part of the op says which, and
        // the smaller one, the clocks' disagreement, goes.
        if (before >= beyond) {
          op.end = b->time;
        } else if (b->start) {
          op.start = b->time;
        } else {
          // After the region: 1 ns later, so that the region, not the op,
          // keeps the boundary (a slice that ends where the next begins is
          // written 1 ns shorter: slice_times.hpp).
          op.start = std::min(b->time + 1, op.end);
        }
        cut = true;
        break;
      }
    }
  }
  return spans;
}

// `input`: one thread's spans, in file order.
inline Nested nest(const std::vector<Span>& input) {
  const std::vector<Span> spans = without_crossings(input);
  const std::size_t n = spans.size();
  Nested out;
  out.self.assign(n, 0);
  out.parent.assign(n, Nested::kNoParent);
  out.clamped_start.resize(n);
  out.clamped_end.resize(n);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (spans[a].start != spans[b].start) return spans[a].start < spans[b].start;
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
