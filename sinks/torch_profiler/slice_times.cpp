#include "slice_times.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "regiontrace/sdk/span_nesting.hpp"

namespace regiontrace::torch_profiler {
namespace {

struct Track {
  std::vector<nesting::Span> spans;
  std::vector<std::pair<bool, std::size_t>> source;  // (region span?, index)
};

}  // namespace

SliceTimes slice_times(const TraceData& data) {
  SliceTimes out;
  // Region spans first, then ops, each in recorded order: the order among
  // equal keys that the written file has too.
  std::map<std::uint64_t, Track> tracks;
  out.span_start.resize(data.spans.size());
  out.span_end.resize(data.spans.size());
  for (std::size_t i = 0; i < data.spans.size(); ++i) {
    const RegionSpan& s = data.spans[i];
    Track& t = tracks[s.thread];
    t.spans.push_back({s.start_ns, std::max(s.start_ns, s.end_ns), true});
    t.source.emplace_back(true, i);
  }
  out.op_start.resize(data.ops.size());
  out.op_end.resize(data.ops.size());
  out.op_self.assign(data.ops.size(), 0);
  for (std::size_t i = 0; i < data.ops.size(); ++i) {
    const OpRecord& op = data.ops[i];
    out.op_start[i] = out.op_end[i] = op.start_ns;
    if (op.kind == OpRecord::Kind::kMemory) continue;
    Track& t = tracks[op.thread];
    t.spans.push_back(
        {op.start_ns, op.start_ns + std::max<std::int64_t>(0, op.duration_ns), false});
    t.source.emplace_back(false, i);
  }
  for (auto& [tid, t] : tracks) {
    const nesting::Nested first = nesting::nest(t.spans);
    // Empty slices of one parent stamped at one time ran one after another:
    // the j-th of them gets [t + 2j, t + 2j + 1) ns, so they stay siblings,
    // 1 ns apart (a viewer adding ts and dur in doubles must not see one
    // end after the next begins). An empty slice has no children (the rule
    // closes it before the next span starts), so it only needs room in its
    // parent.
    std::map<std::pair<std::size_t, std::int64_t>, std::int64_t> empties_at;
    for (std::size_t k = 0; k < t.spans.size(); ++k) {
      t.spans[k].start = first.clamped_start[k];
      t.spans[k].end = first.clamped_end[k];
      if (t.spans[k].end != t.spans[k].start) continue;
      const std::size_t p = first.parent[k];
      const std::int64_t at = t.spans[k].start;
      std::int64_t start = at + 2 * empties_at[{p, at}]++;
      if (p != nesting::Nested::kNoParent) {
        if (first.clamped_end[p] <= at) continue;  // at its parent's very end: no room
        start = std::min(start, first.clamped_end[p] - 1);
      }
      t.spans[k].start = start;
      t.spans[k].end = start + 1;
    }
    // No two slices of a track share a boundary where one ends: a child that
    // ends with its parent, or a slice that ends where its next sibling
    // begins, ends 1 ns earlier (parents first). Viewers subtract the
    // track's first ts and add ts and dur in doubles, so two sums that
    // should be equal can differ by an ulp, and a child then ends after its
    // parent, or a slice after its sibling began.
    const nesting::Nested second = nesting::nest(t.spans);
    std::map<std::size_t, std::vector<std::size_t>> children;  // kNoParent: roots
    std::vector<std::pair<int, std::size_t>> by_depth;
    for (std::size_t k = 0; k < t.spans.size(); ++k) {
      int depth = 0;
      for (std::size_t p = second.parent[k]; p != nesting::Nested::kNoParent; p = second.parent[p])
        ++depth;
      by_depth.emplace_back(depth, k);
      children[second.parent[k]].push_back(k);
      t.spans[k].start = second.clamped_start[k];
      t.spans[k].end = second.clamped_end[k];
    }
    for (auto& [parent, list] : children) {
      std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
        return t.spans[a].start < t.spans[b].start;
      });
    }
    std::vector<std::int64_t> limit(t.spans.size(), std::numeric_limits<std::int64_t>::max());
    for (const auto& [parent, list] : children) {
      for (std::size_t c = 0; c + 1 < list.size(); ++c) {
        limit[list[c]] = t.spans[list[c + 1]].start;
      }
    }
    std::sort(by_depth.begin(), by_depth.end());
    for (const auto& [depth, k] : by_depth) {
      const std::size_t p = second.parent[k];
      std::int64_t bound = limit[k];
      if (p != nesting::Nested::kNoParent) bound = std::min(bound, t.spans[p].end);
      if (t.spans[k].end >= bound && bound - 1 > t.spans[k].start) t.spans[k].end = bound - 1;
    }
    const nesting::Nested n = nesting::nest(t.spans);
    for (std::size_t k = 0; k < t.spans.size(); ++k) {
      const auto [region, i] = t.source[k];
      if (region) {
        out.span_start[i] = n.clamped_start[k];
        out.span_end[i] = n.clamped_end[k];
      } else {
        out.op_start[i] = n.clamped_start[k];
        out.op_end[i] = n.clamped_end[k];
        out.op_self[i] = n.self[k];
      }
    }
  }
  return out;
}

}  // namespace regiontrace::torch_profiler
