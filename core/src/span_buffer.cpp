#include "span_buffer.hpp"

namespace regiontrace::detail {

void SpanBuffer::open_spans(std::uint32_t generation, std::int64_t now_ns, std::int64_t step,
                            std::vector<Span>& out_spans,
                            std::vector<std::uint64_t>& out_sinks) const {
  // Innermost first, as finished spans come: a reader that nests spans by
  // their order of ending sees the open ones end in that order too.
  for (std::uint32_t d = RegionStack::kMaxDepth; d-- > 0;) {
    const OpenSpan& o = open[d];
    const std::int64_t begin = o.begin_ns.load(std::memory_order_acquire);
    if (begin == 0 || o.generation.load(std::memory_order_relaxed) != generation) continue;
    Span s;
    s.id = o.id.load(std::memory_order_relaxed);
    s.depth = static_cast<std::uint16_t>(d);
    s.open = 1;
    s.step = step;
    s.begin_ns = begin;
    s.end_ns = now_ns > begin ? now_ns : begin;
    out_spans.push_back(s);
    out_sinks.push_back(o.sinks.load(std::memory_order_relaxed));
  }
}

}  // namespace regiontrace::detail
