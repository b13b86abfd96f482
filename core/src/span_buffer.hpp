// One thread's finished spans for the kInterestSpans sinks, and the spans it
// has open, kept by the host so that a recorded region costs a sink no call:
// the thread appends with no lock; the dispatcher hands the spans over in
// batches (Dispatcher::hand_over_spans) when the buffer fills, when the
// thread exits, and when the host stops, from the stopping thread.
//
// Threads: append(), open_span() and close_span() are the owner's. Handing
// over happens under lock(), by the owner or by the stopping thread; the
// owner never rewrites a span below the published count without the lock,
// so a reader under the lock sees whole spans only.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "regiontrace/detail/region_stack.hpp"
#include "regiontrace/sdk/events.hpp"

namespace regiontrace::detail {

class SpanBuffer {
 public:
  static constexpr std::uint32_t kCapacity = 1024;

  SpanBuffer(std::uint64_t thread, long os_tid, std::uint32_t generation)
      : thread_(thread), os_tid_(os_tid), generation_(generation) {}
  SpanBuffer(const SpanBuffer&) = delete;
  SpanBuffer& operator=(const SpanBuffer&) = delete;

  std::uint64_t thread() const { return thread_; }
  long os_tid() const { return os_tid_; }
  // The start-up the buffered spans belong to. Changed under lock() only.
  std::uint32_t generation() const { return generation_; }

  // Owner: false when full (hand over, then append again).
  bool append(const Span& span, std::uint64_t sinks) {
    const std::uint32_t n = count_.load(std::memory_order_relaxed);
    if (__builtin_expect(n == kCapacity, 0)) return false;
    spans_[n] = span;
    sinks_[n] = sinks;
    count_.store(n + 1, std::memory_order_release);
    return true;
  }

  // Owner: the span at `depth` is open (or no longer is), for a hand-over
  // while it is.
  void open_span(std::uint32_t depth, RegionId id, std::uint64_t sinks, std::int64_t begin_ns,
                 std::uint32_t generation) {
    OpenSpan& o = open_[depth];
    o.generation.store(generation, std::memory_order_relaxed);
    o.id.store(id, std::memory_order_relaxed);
    o.sinks.store(sinks, std::memory_order_relaxed);
    o.begin_ns.store(begin_ns, std::memory_order_release);
  }
  void close_span(std::uint32_t depth) {
    open_[depth].begin_ns.store(0, std::memory_order_relaxed);
  }

  // What a hand-over reads, under lock().
  std::mutex& lock() { return mutex_; }
  struct Pending {
    const Span* spans;
    const std::uint64_t* sinks;
    std::uint32_t count;
  };
  // The spans appended since the last hand-over; taken() marks them done.
  Pending pending() const {
    const std::uint32_t n = count_.load(std::memory_order_acquire);
    return {spans_ + taken_, sinks_ + taken_, n - taken_};
  }
  void taken(std::uint32_t count) { taken_ += count; }
  // The owner, under lock(), once everything pending was handed over (or
  // is dropped): empty again, for spans of `generation`.
  void reset(std::uint32_t generation) {
    count_.store(0, std::memory_order_relaxed);
    taken_ = 0;
    generation_ = generation;
  }
  bool full() const { return count_.load(std::memory_order_relaxed) == kCapacity; }

  // The spans of start-up `generation` open now, as open spans ending at
  // `now_ns` (for the stopping host), appended to spans/sinks.
  void open_spans(std::uint32_t generation, std::int64_t now_ns, std::int64_t step,
                  std::vector<Span>& spans, std::vector<std::uint64_t>& sinks) const;

  // A forked child's copy of the parent's buffer: the spans are the
  // parent's, and another parent thread may have held the lock.
  void forget_after_fork() {
    new (&mutex_) std::mutex();
    count_.store(0, std::memory_order_relaxed);
    taken_ = 0;
    handing_over = false;
    for (OpenSpan& o : open_) o.begin_ns.store(0, std::memory_order_relaxed);
  }

  // Owner: set while its spans are being handed over, so that a sink that
  // opens regions in on_spans cannot re-enter the hand-over.
  bool handing_over = false;

 private:
  struct OpenSpan {
    std::atomic<std::int64_t> begin_ns{0};  // 0: nothing open at this depth
    std::atomic<std::uint32_t> generation{0};
    std::atomic<RegionId> id{0};
    std::atomic<std::uint64_t> sinks{0};
  };

  const std::uint64_t thread_;
  const long os_tid_;
  std::uint32_t generation_;
  std::mutex mutex_;
  std::atomic<std::uint32_t> count_{0};
  std::uint32_t taken_ = 0;  // under mutex_
  Span spans_[kCapacity];
  std::uint64_t sinks_[kCapacity];
  OpenSpan open_[RegionStack::kMaxDepth];
};

}  // namespace regiontrace::detail
