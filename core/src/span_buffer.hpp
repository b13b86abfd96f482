// One thread's finished spans for the kInterestSpans sinks, kept by the host
// so that a recorded region costs a sink no call: the thread appends with no
// lock; the dispatcher hands the spans over in batches
// (Dispatcher::hand_over_spans) when the buffer fills, when the thread
// exits, and when the host stops, from the stopping thread. (The spans a
// thread has open are its frames: regiontrace/detail/region_stack.hpp.)
//
// Threads: append() (SpanRing's; the inline code of region_stack.hpp
// appends too) is the owner's. Handing over happens under lock(), by the
// owner or by the stopping thread; the owner never rewrites a span below the
// published count without the lock, so a reader under the lock sees whole
// spans only.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>

#include "regiontrace/detail/region_stack.hpp"

namespace regiontrace::detail {

class SpanBuffer : public SpanRing {
 public:
  SpanBuffer(std::uint64_t thread, long os_tid, std::uint32_t generation)
      : thread_(thread), os_tid_(os_tid) {
    SpanRing::generation = generation;
    key = generation;
  }
  SpanBuffer(const SpanBuffer&) = delete;
  SpanBuffer& operator=(const SpanBuffer&) = delete;

  std::uint64_t thread() const { return thread_; }
  long os_tid() const { return os_tid_; }
  // The start-up the buffered spans belong to. Changed under lock() only.
  std::uint32_t generation() const { return SpanRing::generation; }

  // What a hand-over reads, under lock().
  std::mutex& lock() { return mutex_; }
  struct Pending {
    const Span* spans;
    const std::uint64_t* sinks;
    std::uint32_t count;
  };
  // The spans appended since the last hand-over; taken() marks them done.
  Pending pending() const {
    const std::uint32_t n = count.load(std::memory_order_acquire);
    return {spans + taken_, sinks + taken_, n - taken_};
  }
  void taken(std::uint32_t n) { taken_ += n; }
  // The owner, under lock(), once everything pending was handed over (or
  // is dropped): empty again, for spans of `generation`.
  void reset(std::uint32_t gen) {
    count.store(0, std::memory_order_relaxed);
    taken_ = 0;
    SpanRing::generation = gen;
    key = gen;
  }

  // A forked child's copy of the parent's buffer: the spans are the
  // parent's, and another parent thread may have held the lock.
  void forget_after_fork() {
    new (&mutex_) std::mutex();
    count.store(0, std::memory_order_relaxed);
    taken_ = 0;
    handing_over = false;
    key = SpanRing::generation;
    for (auto& d : dropped_) d.store(0, std::memory_order_relaxed);
  }

  // Spans that could not be kept, counted for the sinks in `sinks` until a
  // batch reports them. The owner counts (possibly while it holds lock(),
  // from a sink's on_spans); the batch's deliverer takes them.
  void count_dropped(std::uint64_t sinks) {
    for (; sinks != 0; sinks &= sinks - 1) {
      dropped_[__builtin_ctzll(sinks)].fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Those of `sinks` with drops counted.
  std::uint64_t dropped_sinks(std::uint64_t sinks) const {
    std::uint64_t out = 0;
    for (; sinks != 0; sinks &= sinks - 1) {
      const int i = __builtin_ctzll(sinks);
      if (dropped_[i].load(std::memory_order_relaxed) != 0) out |= std::uint64_t{1} << i;
    }
    return out;
  }
  std::uint32_t take_dropped(int sink_index) {
    return dropped_[sink_index].exchange(0, std::memory_order_relaxed);
  }

 private:
  const std::uint64_t thread_;
  const long os_tid_;
  std::mutex mutex_;
  std::uint32_t taken_ = 0;  // under mutex_
  std::atomic<std::uint32_t> dropped_[64] = {};
};

}  // namespace regiontrace::detail
