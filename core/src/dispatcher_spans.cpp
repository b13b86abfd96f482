// Dispatcher, spans: regions of kInterestSpans sinks are appended to the
// thread's SpanBuffer when they end, with no call into the sink, and handed
// over in batches: when the buffer fills and when the thread exits (by the
// thread), and when the host stops (by the stopping thread, with the spans
// still open). A sink thus pays per batch, not per region.
#include <algorithm>
#include <vector>

#include "dispatcher.hpp"
#include "span_buffer.hpp"
#include "thread_stack.hpp"

namespace regiontrace::detail {
namespace {

// The spans of start-up `t` open on `stack` (its frames with span sinks),
// as open spans ending at `now_ns`, innermost first as finished spans come:
// a reader that nests spans by their order of ending sees the open ones end
// in that order too. Read while the owner runs on (see Frame): a frame it
// pushes meanwhile may read torn, and is then at worst one clipped span
// with another region's begin.
void open_spans(const ThreadStack& stack, const RoutingTable& t, std::uint64_t open_to,
                std::int64_t now_ns, std::int64_t step, std::vector<Span>& out_spans,
                std::vector<std::uint64_t>& out_sinks) {
  const std::uint32_t depth = __atomic_load_n(&stack.open, __ATOMIC_ACQUIRE);
  for (std::uint32_t d = std::min(depth, RegionStack::kMaxDepth); d-- > 0;) {
    const Frame& f = stack.frames[d];
    const std::int64_t begin = __atomic_load_n(&f.begin_ns, __ATOMIC_RELAXED);
    const std::uint64_t sinks = __atomic_load_n(&f.delivered, __ATOMIC_RELAXED) & open_to;
    if (begin == 0 || sinks == 0 ||
        __atomic_load_n(&f.generation, __ATOMIC_RELAXED) != t.generation()) {
      continue;
    }
    Span s;
    s.id = __atomic_load_n(&f.id, __ATOMIC_RELAXED);
    s.depth = static_cast<std::uint16_t>(d);
    s.open = 1;
    s.step = step;
    s.begin_ns = begin;
    s.end_ns = now_ns > begin ? now_ns : begin;
    out_spans.push_back(s);
    out_sinks.push_back(sinks);
  }
}

}  // namespace

void Dispatcher::make_span_buffer(ThreadStack& stack, const RoutingTable& table) {
  SpanBuffer& b = stack.make_spans(table.generation());
  b.step = &step_;
  std::lock_guard<std::mutex> lock(span_threads_mutex_);
  span_threads_.push_back(&stack);
}

void Dispatcher::end_span(ThreadStack& stack, const RoutingTable& table, RegionId id,
                          std::int64_t begin_ns, std::uint64_t sinks, std::int64_t end_ns,
                          bool unwinding) {
  SpanBuffer* b = stack.spans();
  if (__builtin_expect(b == nullptr, 0)) {
    make_span_buffer(stack, table);
    b = stack.spans();
  }
  // Handing over: a sink opened this region in on_spans; no begin: the
  // frame was re-opened while no sink ran. Not recorded, but counted.
  if (__builtin_expect(b->handing_over || begin_ns == 0, 0)) {
    b->count_dropped(sinks);
    return;
  }
  if (__builtin_expect(b->generation() != table.generation(), 0)) {
    // What the buffer holds is an earlier start-up's, left after its sinks
    // were collected: dropped.
    std::lock_guard<std::mutex> lock(b->lock());
    b->reset(table.generation());
  }
  Span s;
  s.id = id;
  s.depth = static_cast<std::uint16_t>(stack.depth() - 1);
  s.unwinding = unwinding ? 1 : 0;
  s.step = step_.load(std::memory_order_relaxed);
  s.begin_ns = begin_ns;
  s.end_ns = end_ns;
  if (__builtin_expect(!b->append(s, sinks), 0)) {
    hand_over_spans(*b, &table, false);
    b->append(s, sinks);
  }
}

// The owner's hand-over: everything not yet handed over, then empty.
void Dispatcher::hand_over_spans(SpanBuffer& b, const RoutingTable* t, bool last) {
  std::lock_guard<std::mutex> lock(b.lock());
  b.handing_over = true;
  b.key = SpanRing::kClosedKey;  // reset() opens it again
  const SpanBuffer::Pending p = b.pending();
  if (t != nullptr && b.generation() == t->generation() && (p.count > 0 || last)) {
    deliver_spans(*t, enabled_.load(std::memory_order_relaxed), b, p.spans, p.sinks, p.count, last);
  }
  b.reset(t != nullptr ? t->generation() : b.generation());
  b.handing_over = false;
}

void Dispatcher::deliver_spans(const RoutingTable& t, std::uint64_t enabled, SpanBuffer& b,
                               const Span* spans, const std::uint64_t* sinks, std::size_t count,
                               bool last) {
  std::uint64_t any = 0;
  std::uint64_t every = ~std::uint64_t{0};
  if ((t.span_mask & (t.span_mask - 1)) == 0) {
    // One span sink: every span is its own (a span has some span sink).
    any = count > 0 ? t.span_mask : 0;
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      any |= sinks[i];
      every &= sinks[i];
    }
  }
  // A last batch goes to every span sink, empty or not: it says the thread
  // is gone. A sink with drops to report gets a batch too.
  const std::uint64_t dropping = b.dropped_sinks(t.span_mask);
  std::uint64_t mask = (last ? t.span_mask : any | dropping) & enabled;
  std::vector<Span> subset;
  while (mask != 0) {
    const std::uint64_t bit = mask & (~mask + 1);
    mask &= mask - 1;
    if (t.slots()[static_cast<std::size_t>(__builtin_ctzll(bit))]->failed.load()) continue;
    const int index = __builtin_ctzll(bit);
    SpanBatch batch{b.thread(), b.os_tid(),     spans,
                    count,      last ? 1u : 0u, (dropping & bit) != 0 ? b.take_dropped(index) : 0u};
    if ((every & bit) == 0) {
      // Spans other sinks selected too: this sink gets its own only.
      subset.clear();
      for (std::size_t i = 0; i < count; ++i) {
        if ((sinks[i] & bit) != 0) subset.push_back(spans[i]);
      }
      batch.spans = subset.data();
      batch.count = subset.size();
      if (batch.count == 0 && batch.dropped == 0 && !last) continue;
    }
    deliver(t, bit, "on_spans", [&](Sink& s) { s.on_spans(batch); });
  }
}

// On the stopping thread, before the stopped sinks close: what every thread
// still holds, and the spans open on it. On the flush thread (or a flush()
// call) while threads run: open spans only to the flight recorders, which
// take them as provisional.
void Dispatcher::collect_spans(const RoutingTable& t, std::uint64_t enabled,
                               std::uint64_t open_to) {
  const std::int64_t now = now_ns();
  const std::int64_t step = step_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> threads_lock(span_threads_mutex_);
  std::vector<Span> spans;
  std::vector<std::uint64_t> sinks;
  for (ThreadStack* stack : span_threads_) {
    SpanBuffer& b = *stack->spans();
    std::lock_guard<std::mutex> lock(b.lock());
    spans.clear();
    sinks.clear();
    const SpanBuffer::Pending p = b.pending();
    if (b.generation() == t.generation()) {
      spans.assign(p.spans, p.spans + p.count);
      sinks.assign(p.sinks, p.sinks + p.count);
    }
    b.taken(p.count);
    if (open_to != 0) open_spans(*stack, t, open_to, now, step, spans, sinks);
    if (!spans.empty() || b.dropped_sinks(t.span_mask) != 0) {
      deliver_spans(t, enabled, b, spans.data(), sinks.data(), spans.size(), false);
    }
  }
}

// The exiting thread, after its open regions were ended: its last batch,
// and its buffer leaves the list before the stack is freed.
void Dispatcher::close_thread_spans(ThreadStack& stack) {
  SpanBuffer* b = stack.spans();
  if (b == nullptr) return;
  hand_over_spans(*b, table_.load(std::memory_order_acquire), true);
  std::lock_guard<std::mutex> lock(span_threads_mutex_);
  span_threads_.erase(std::remove(span_threads_.begin(), span_threads_.end(), &stack),
                      span_threads_.end());
}

// Only this thread survives a fork; the others' stacks are gone with them.
void Dispatcher::forget_spans_after_fork() {
  new (&span_threads_mutex_) std::mutex();
  ThreadStack* self = static_cast<ThreadStack*>(t_region_stack);
  span_threads_.clear();
  if (self != nullptr && self->spans() != nullptr) {
    self->spans()->forget_after_fork();
    span_threads_.push_back(self);
  }
}

}  // namespace regiontrace::detail
